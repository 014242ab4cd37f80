// Decoding mode and scheduling parameters (config file "engine" section, CLI flags).
#pragma once
#include <cstdint>
#include <string>

namespace exspec {

// nonspec, eqspec and exspec are the paper's modes (the baselines); inplace keeps every sequence
// in its own slot of a KV store per model (model/kv_store.h): no realignment, continuous batching.
enum class Mode { NonSpec, EqSpec, ExSpec, InPlace };
Mode parse_mode(const std::string& name);  // nonspec | eqspec | exspec | inplace
const char* mode_name(Mode m);

// Where the server's drafts come from (actors/scheduler/proposer.h): the draft model, or prompt lookup
// (in place, no draft model). A request's `prediction` is proposed whatever this is.
enum class Speculate { Model, Ngram };
Speculate parse_speculate(const std::string& name);  // model | ngram
const char* speculate_name(Speculate s);

// A size in bytes: "512M", "4G", "1.5GiB", "65536" (K, M, G, T: powers of 1024). Throws
// std::invalid_argument for anything else.
int64_t parse_bytes(const std::string& text);

// An engine switch whose default depends on the device: auto | on | off.
enum class Toggle { Auto, On, Off };
Toggle parse_toggle(const std::string& key, const std::string& value);
const char* toggle_name(Toggle t);

// A count written as digits alone ("16"; not "", "16x", "-1" or "1e3"); -1 for anything else.
int64_t parse_count(const std::string& text);

struct EngineConfig;
// draft_tokens as configured: "auto" or a number >= 1.
void parse_draft_tokens(const std::string& value, EngineConfig& c);
std::string draft_tokens_name(const EngineConfig& c);
// Throws std::invalid_argument naming the setting that is out of range.
void validate(const EngineConfig& c);
// Whether steps may draft: a speculative mode with a draft model, or in place with prompt
// lookup (else every step is plain, K = 0, unless a request brings a prediction).
bool drafts(const EngineConfig& c);
// Whether steps may verify drafts that no draft model made: prompt lookup or predictions (in
// place only; the paper's modes draft with the model alone).
bool proposes_without_model(const EngineConfig& c);
// The largest K a step of this configuration may draft (0 when it never drafts): what the
// caches and the in-place slots must hold beyond a sequence's tokens.
int64_t largest_k(const EngineConfig& c);

// B where none is set, in the paper's modes (the server's in-place default is every slot:
// config/engine_options.cpp).
inline constexpr int64_t kPaperBatch = 8;

struct EngineConfig;
// How many sequences are active at once: the window (exspec), or in place the slots.
int64_t live_sequences(const EngineConfig& c);

struct EngineConfig {
  Mode mode = Mode::InPlace;    // the default everywhere (serve, generate, bench's subject)
  bool draft = true;            // a draft model is loaded. Without one, in place runs plain steps
                                // (K = 0) or prompt lookup; the paper's speculative modes refuse
                                // to start. Set where the models are (Engine::start, SequentialDriver).
  Speculate speculate = Speculate::Model;  // ngram: prompt lookup (in place, no draft model)
  int64_t draft_tokens = 3;     // K when fixed
  bool adaptive_k = true;       // draft_tokens "auto": K chosen per step (actors/scheduler/draft_length.h)
  int64_t min_draft_tokens = 0, max_draft_tokens = 8;  // bounds of auto
  int64_t batch_size = kPaperBatch;  // B
  int64_t window = 2 * kPaperBatch;  // W (exspec): active sequences batches are formed from; >= B
  int64_t slots = 2 * kPaperBatch;   // inplace: the KV slots of each store (live sequences at most); >= B
  bool sort_by_length = false;  // exspec: admit waiting sequences shortest prompt first
  double min_group_fill = 0.5;  // exspec: smallest same-length group worth running, as a share of B
  int64_t max_wait = 8;         // exspec: steps a sequence may wait before it is taken first
  int64_t context = 0;          // inplace: the longest sequence (0: the target's max_position_embeddings,
                                // capped by the budget: fit_store, actors/jobs/model_pair.h)
  int64_t prefill_chunk = 256;  // inplace: prompt tokens per prefill forward (padding not counted)
  int64_t kv_cache_bytes = 0;   // inplace: what both models' stores may take together (0: no
                                // budget: each slot's row holds a whole context)
  int64_t block_size = 16;      // inplace: positions per KV block (actors/scheduler/block_pool.h)
  int64_t slot_positions = 0;   // inplace: positions of each slot's own row of blocks; set with
                                // context by fit_store (actors/jobs/model_pair.h)
  bool prefix_cache = true;     // inplace: full blocks a sequence leaves are cached; a newcomer
                                // takes the longest cached prefix of its prompt (actors/scheduler/block_pool.h)
  bool slot_moves = true;       // inplace: a step's scattered rows move into consecutive slots
                                // (actors/scheduler/slot_moves.h)
  Toggle row_buckets = Toggle::Auto;  // inplace: forwards padded to fixed row counts (model/step_runner.h);
                                      // auto: on a CUDA device
  Toggle cuda_graphs = Toggle::Auto;  // inplace: the bucketed forwards' parts as CUDA graphs; auto: with
                                      // row buckets on a CUDA device, in a CUDA build
  Toggle plan_ahead = Toggle::Auto;   // inplace: step N + 1 chosen while step N runs
                                      // (actors/scheduler/plan_ahead.h); auto: on
};

}  // namespace exspec
