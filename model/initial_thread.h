// A forward pass that runs alone gets the whole machine only on the process's initial thread.
// libgomp counts a thread team's master among its threads when any other thread starts the team,
// and once its threads outnumber the cores it stops spinning at barriers after a few hundred
// spins and sleeps in futexes instead, at each of a forward's hundreds of parallel regions. On 2
// cores a 2-thread forward on an actor's thread takes far longer than on the initial thread
// (bench/decoder_bench's "thread" row; the figures: docs/performance.md#figures-that-were-in-code-comments). So the command's main loop
// parks its initial thread here, and the drafter and the verifier hand it their phases: every
// forward runs there, one at a time, with every core. (Two forwards side by side on one thread
// each, as the two roles ran them before, were slower at every batch size measured.)
#pragma once
#include <functional>

namespace exspec {

// Runs fn on the parked initial thread and waits for it (its exception is rethrown here); runs
// it on the calling thread, with that thread's torch settings, when the initial thread is not
// parked (the tests). While an InitialThreadPark is alive and the initial thread has not parked
// yet, another thread's call waits for it to park.
// threads > 0: the initial thread runs it with that OpenMP count (a model whose products run on
// OpenBLAS wants 1: OpenMP workers spinning beside OpenBLAS's threads slow it down;
// docs/performance.md#threads).
void run_on_initial_thread(const std::function<void()>& fn, int threads = 0);

// Sets the initial thread's OpenMP thread count only (not torch's default for other threads); a
// call from any other thread does nothing. Called before the models load, their packed weights
// and matmul plans are made for the count that later runs them.
void set_initial_thread_threads(int threads);

// Whether the caller is the initial thread while it is not parked: generate and bench start the
// engine there and park it afterwards, so every forward handed over later runs on it, one at a
// time.
bool on_unparked_initial_thread();

// Announces, on the initial thread, that it will park (serve_on_initial_thread) before its work
// needs it: made before the engine can hand out jobs, and kept until after it parked. Without it
// the first job could reach the verifier before the command parks, run on the verifier's thread,
// and leave every later forward 2-2.5x slower (one run in four to ten did: the extra team makes
// libgomp throttle). Should the command fail before it parks, the destructor hands the waiting
// callers their work back.
class InitialThreadPark {
 public:
  InitialThreadPark();
  ~InitialThreadPark();
  InitialThreadPark(const InitialThreadPark&) = delete;
  InitialThreadPark& operator=(const InitialThreadPark&) = delete;
};

// Called by the initial thread: runs what run_on_initial_thread hands over, with `threads` torch
// threads, until done() (asked every 10 ms and after each job); then runs what is still queued
// and stops taking more.
void serve_on_initial_thread(const std::function<bool()>& done, int threads);

}  // namespace exspec
