// The engine front: what producers (HTTP handlers, batch jobs, the CLI) see. Submit a sequence
// with a sink for its tokens; cancel; read stats. No tensors and no CAF types here: the actor
// pipeline (pool-manager, realigner, drafter, verifier) lives behind it (actors/engine.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "actors/scheduler/draft_length.h"
#include "actors/scheduler/engine_config.h"
#include "actors/sink.h"
#include "model/head_screen.h"
#include "model/seq_request.h"

namespace exspec {

struct EngineOptions {
  std::string model_dir, draft_dir;  // draft_dir empty: no draft (in place then runs plain steps)
  // The draft's head over the first draft_shortlist_size tokens (0: all) of this file
  // (model/shortlist_file.h, made by `exspec shortlist`); empty: its whole vocabulary.
  std::string draft_shortlist;
  int64_t draft_shortlist_size = 0;
  // The draft's head read in 4 bits, its best N candidates scored again in int8
  // (model/screened_head.h); 0: its whole int8 head; kScreenAuto (model/head_screen.h): where it pays.
  int64_t draft_screen = 0;
  std::string dtype = "float32";
  std::string device = "cpu";
  std::string longrope = "short";  // short | long (LoadOptions::long_context)
  EngineConfig decoding;
  bool overlap = true;         // draft batch t+1 while batch t is verified
  size_t max_queue = 1024;     // sequences waiting for the window; beyond it submit() fails fast
  int scheduler_threads = 2;   // CAF workers (pool-manager, realigner); drafter and verifier have their own
  int torch_threads = 1;       // intra-op (OpenMP), on each actor's thread (forwards when nothing parks the initial one)
  int initial_threads = 0;     // on the initial thread, which runs every forward when parked (0: every core)
  int blas_threads = 0;        // OpenBLAS (0 = all cores)
  // Replaces the draft-length policy built from `decoding` (tests drive K sequences with it).
  std::shared_ptr<DraftLengthPolicy> policy;
};
// The initial thread's OpenMP thread count, for the forwards it runs: `setting` (EngineOptions::
// initial_threads) when > 0, else every core.
int initial_threads(int setting);

enum class SubmitStatus { Ok, Invalid, Overloaded, ShuttingDown };

struct SubmitResult {
  SubmitStatus status = SubmitStatus::Ok;
  SeqId id = 0;
  std::string message;  // why, when not Ok
};

struct ModelInfo {
  std::string model_dir, draft_dir, architecture, dtype, device;
  int64_t vocab_size = 0, max_position_embeddings = 0, num_parameters = 0, draft_parameters = 0;
  // A longrope model on its short factors: the context --longrope long would give (0: none).
  int64_t longrope_positions = 0;
  std::vector<int64_t> eos_ids;
};

class Engine {
 public:
  // Loads the models and starts the actors. Throws std::runtime_error / invalid_argument.
  static std::unique_ptr<Engine> start(const EngineOptions& opts);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Validates and queues. Empty eos_ids in the request means the model's own.
  // priority: higher first (1 = interactive, 0 = batch work).
  SubmitResult submit(SeqRequest request, int priority, std::shared_ptr<TokenSink> sink);
  // Submits many sequences in one message, so that the pool-manager sees them all before it
  // forms a batch (fixed nonspec/eqspec batches are full from the first step). All or nothing:
  // if any request is invalid or the queue cannot take them all, none is queued.
  std::vector<SubmitResult> submit_many(std::vector<SeqRequest> requests, int priority,
                                        std::shared_ptr<TokenSink> sink);
  // Ends a sequence at the next step boundary; its sink gets on_finish(None) (or `reason` when
  // given, e.g. Stop for a stop string the producer detected). Unknown or finished ids: no-op.
  void cancel(SeqId id, FinishReason reason = FinishReason::None);
  EngineStats stats() const;
  const ModelInfo& info() const;
  // As started: decoding.draft says whether a draft was loaded.
  const EngineOptions& options() const;
  // Stops admitting; drain = finish everything in flight and queued, else cancel it all.
  // Returns when every sink has been told; idempotent. The destructor calls shutdown(false).
  void shutdown(bool drain);

  struct Impl;

 private:
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace exspec
