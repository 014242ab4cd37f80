// What one compile may cost: the CPU seconds of the thread that compiles it and a flag that
// cancels it (its client went away, the server is stopping). The compiler's loops (the front
// ends' expansion, NFA and DFA construction, minimisation, the token sets computed at compile
// time) call check_budget(), so that a hostile grammar costs at most its budget and a cancelled
// compile stops within one loop step. A thread-local scope carries the budget, so that the many
// internal functions between the cache and those loops need no extra parameter; token sets
// computed later, at a mask (the engine's thread, no scope), are never cut short.
#pragma once
#include <atomic>
#include <cstddef>
#include <memory>
#include <stdexcept>

namespace exspec::grammar {

// DFA states of one rule (NFA states: 4x): about a string of maxLength 500. The same bound every
// count of a grammar is checked against before it is expanded (nfa_states_at_least).
constexpr size_t kMaxRuleStates = 20000;

// Thrown by check_budget() once the compile's flag is set: nobody wants the grammar any more.
// Not a GrammarError: it is no fault of the grammar, and it answers nobody.
class CompileCancelled : public std::runtime_error {
 public:
  CompileCancelled() : std::runtime_error("the grammar compile was cancelled") {}
};

struct CompileBudget {
  double cpu_seconds = 0;                             // of the compiling thread; <= 0: unbounded
  std::shared_ptr<const std::atomic<bool>> cancelled;  // set: stop (null: never)
};

// Puts `budget` on this thread's compiles while it lives; the CPU time counts from here.
class BudgetScope {
 public:
  explicit BudgetScope(const CompileBudget& budget);
  ~BudgetScope();
  BudgetScope(const BudgetScope&) = delete;
  BudgetScope& operator=(const BudgetScope&) = delete;

 private:
  void* previous_;
};

// Throws CompileCancelled when the flag is set, GrammarError("budget") past the CPU seconds;
// nothing outside a BudgetScope. Cheap: the flag on every call, the clock every 16th.
void check_budget();
// Whether this thread's compile has been cancelled (waiting loops poll it without throwing).
bool budget_cancelled();
// The CPU seconds this thread has used.
double thread_cpu_seconds();
// Lowers the calling thread's scheduling priority by `nice` (Linux: nice is per thread): the
// grammar pool's and the request-work pool's (http/request_work.h) threads, below decoding's.
// Raising one's nice value needs no privilege; a failure leaves the thread as it was.
void lower_thread_priority(int nice);

}  // namespace exspec::grammar
