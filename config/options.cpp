// The option table's rows. A row is a flag, a config-file key, or both; config/README.md says more
// about each key (the tests check that it lists every key with this default).
#include "config/options.h"

#include <climits>
#include <type_traits>

namespace exspec {
namespace {

constexpr unsigned kServe = static_cast<unsigned>(Command::Serve);
constexpr unsigned kBatch = static_cast<unsigned>(Command::Batch);
constexpr unsigned kGenerate = static_cast<unsigned>(Command::Generate);
constexpr unsigned kServer = kServe | kBatch;  // what reads the config file
constexpr unsigned kAll = kServer | kGenerate;

Option row(Type type, const char* flag, const char* key, const char* metavar, Value dflt, const char* help) {
  Option o;
  o.type = type;
  o.flag = flag;
  o.key = key;
  o.metavar = metavar;
  o.dflt = std::move(dflt);
  o.help = help;
  return o;
}

Option text(const char* flag, const char* key, const char* metavar, const char* dflt, const char* help) {
  return row(Type::Text, flag, key, metavar, std::string(dflt), help);
}
Option integer(const char* flag, const char* key, const char* metavar, int64_t dflt, const char* help) {
  return row(Type::Int, flag, key, metavar, dflt, help);
}
Option real(const char* flag, const char* key, const char* metavar, double dflt, const char* help) {
  return row(Type::Real, flag, key, metavar, dflt, help);
}
Option boolean(const char* flag, const char* key, bool dflt, const char* help) {
  return row(Type::Bool, flag, key, "", dflt, help);
}
// Rows of the engine's options: the default comes from the engine's configuration (to()).
Option text(const char* flag, const char* key, const char* metavar, const char* help) {
  return row(Type::Text, flag, key, metavar, std::string(), help);
}
Option integer(const char* flag, const char* key, const char* metavar, const char* help) {
  return row(Type::Int, flag, key, metavar, int64_t{0}, help);
}
Option real(const char* flag, const char* key, const char* metavar, const char* help) {
  return row(Type::Real, flag, key, metavar, 0.0, help);
}
Option boolean(const char* flag, const char* key, const char* help) { return row(Type::Bool, flag, key, "", false, help); }
Option list(const char* flag, const char* metavar, const char* help) {
  return row(Type::List, flag, "", metavar, std::string(), help);
}

template <class T>
T from_value(const Value& v) {
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string> || std::is_same_v<T, double>) {
    return std::get<T>(v);
  } else {
    return static_cast<T>(std::get<int64_t>(v));  // the range was checked against T's (to())
  }
}

template <class T>
Value to_value(const T& x) {
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string> || std::is_same_v<T, double>) return x;
  else return static_cast<int64_t>(x);
}

// Binds a row to a member: set and get convert between the Value and the member's type, and an
// integer member narrower than int64 narrows the row's range to its own.
template <class T, class Field, class ConstField>
Option bound(Option o, Field field, ConstField const_field) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    o.max = std::min<int64_t>(o.max, static_cast<int64_t>(std::min<uint64_t>(std::numeric_limits<T>::max(), INT64_MAX)));
  o.set = [field](Settings& s, const Value& v) { field(s) = from_value<T>(v); };
  o.get = [const_field](const Settings& s) { return to_value<T>(const_field(s)); };
  return o;
}

}  // namespace

Option Option::in(unsigned command_bits) const {
  Option o = *this;
  o.commands = command_bits;
  return o;
}

Option Option::need(Command c) const {
  Option o = *this;
  o.required |= static_cast<unsigned>(c);
  return o;
}

Option Option::for_generate(Value v) const {
  Option o = *this;
  o.generate_dflt = std::move(v);
  return o;
}

Option Option::range(int64_t lo, int64_t hi) const {
  Option o = *this;
  o.min = lo;
  o.max = hi;
  return o;
}

Option Option::real_range(double lo, double hi) const {
  Option o = *this;
  o.real_min = lo;
  o.real_max = hi;
  return o;
}

template <class T>
Option Option::to(T Settings::*member) const {
  return bound<T>(*this, [member](Settings& s) -> T& { return s.*member; },
                  [member](const Settings& s) -> const T& { return s.*member; });
}

template <class T>
Option Option::to(T Limits::*member) const {
  return bound<T>(*this, [member](Settings& s) -> T& { return s.limits.*member; },
                  [member](const Settings& s) -> const T& { return s.limits.*member; });
}

template <class T>
Option Option::to(T EngineOptions::*member) const {
  Option o = bound<T>(*this, [member](Settings& s) -> T& { return s.engine.*member; },
                      [member](const Settings& s) -> const T& { return s.engine.*member; });
  o.dflt = to_value<T>(EngineOptions{}.*member);
  return o;
}

template <class T>
Option Option::to(T EngineConfig::*member) const {
  Option o = bound<T>(*this, [member](Settings& s) -> T& { return s.engine.decoding.*member; },
                      [member](const Settings& s) -> const T& { return s.engine.decoding.*member; });
  o.dflt = to_value<T>(EngineConfig{}.*member);
  return o;
}

const std::vector<Option>& option_table() {
  using S = Settings;
  using L = Limits;
  using E = EngineOptions;
  using D = EngineConfig;
  static const std::vector<Option> table{
      // What a command reads itself.
      boolean("help", "", false, "print this help and exit").in(kAll),
      text("config", "", "FILE", "", "the JSON config file, read before the flags (config/exspec.json: every key at its default)").in(kServer),
      text("input", "", "FILE", "", "the requests, JSONL: {custom_id, method, url, body} a line").in(kBatch).need(Command::Batch),
      text("output", "", "FILE", "", "the answers, appended as they come; the custom_ids already there are skipped (resume)").in(kBatch).need(Command::Batch),
      list("prompt", "TEXT", "a prompt, encoded with the model's tokenizer.json; repeatable").in(kGenerate),
      list("prompt-ids", "\"1,2,3\"", "a prompt as token ids; repeatable").in(kGenerate),
      list("prompts-file", "F.jsonl", "prompts, {\"prompt_ids\": [ints]} a line; repeatable").in(kGenerate),
      integer("max-tokens", "", "N", 32, "tokens to generate per prompt at most").in(kGenerate),
      boolean("oracle", "", false, "plain decoding by the reference loop (model/oracle/plain_decode.cpp), the definition every mode must equal; takes no --mode").in(kGenerate),
      text("stats", "", "FILE.json", "", "write the run's statistics there").in(kGenerate),
      real("temperature", "", "T", 0.0, "0: greedy; above 0 samples, prompt i with seed S + i").in(kGenerate),
      real("top-p", "", "P", 1.0, "nucleus sampling").in(kGenerate),
      integer("top-k", "", "K", 0, "the K most likely tokens; 0 or -1: off").in(kGenerate).range(-1),
      real("min-p", "", "P", 0.0, "drop tokens below P x the most likely one's probability").in(kGenerate),
      integer("seed", "", "S", 0, "the seed of prompt 0").in(kGenerate).range(INT64_MIN),
      integer("n", "", "N", 1, "choices per prompt (lines i * N + j)").in(kGenerate).range(1),
      integer("logprobs", "", "N", -1, "add the target's log-softmax, top N, to each line; -1: none").in(kGenerate).range(-1),
      real("presence-penalty", "", "P", 0.0, "subtracted once from every token generated").in(kGenerate),
      real("frequency-penalty", "", "F", 0.0, "subtracted per occurrence of every token generated").in(kGenerate),
      real("repetition-penalty", "", "R", 1.0, "divides positive logits of tokens seen (prompt or generated)").in(kGenerate),
      text("logit-bias", "", "\"ID:B,...\"", "", "added to those tokens' logits").in(kGenerate),
      boolean("ignore-eos", "", false, "EOS does not end a sequence (vLLM's stop rules)").in(kGenerate),
      integer("min-tokens", "", "N", 0, "EOS and the stop ids cannot end a sequence before N tokens").in(kGenerate),
      text("stop-token-ids", "", "\"ID,...\"", "", "token ids that end a sequence like EOS").in(kGenerate),

      // The config file's top level.
      text("host", "host", "H", "127.0.0.1", "address to listen on (0.0.0.0: every interface)").in(kServe).to(&S::host),
      integer("port", "port", "P", 8000, "TCP port; 0: any free port, printed on stderr").in(kServe).range(0, 65535).to(&S::port),
      text("model", "model", "DIR", "", "the target model (Hugging Face format); serve and batch without it: the demo pair in demo/")
          .in(kAll).need(Command::Generate).to(&S::model),
      text("draft", "draft", "DIR", "", "the draft model (same vocabulary); without it inplace runs plain steps").in(kAll).to(&S::draft),
      text("served-model-name", "served_model_name", "NAME", "", "the name clients send as \"model\"; empty: the model directory's name")
          .in(kServer).to(&S::served_model_name),
      text("cache-dir", "cache_dir", "DIR", "", "where a random demo pair is made if none is shipped; empty: $XDG_CACHE_HOME/exspec or ~/.cache/exspec")
          .in(kServer).to(&S::cache_dir),
      text("data-dir", "data_dir", "DIR", "", "turns on /v1/files and /v1/batches, kept in DIR (SQLite)").in(kServe).to(&S::data_dir),
      text("job-store", "job_store", "postgresql://...", "", "instead: the Files and Batches state in PostgreSQL, shared by replicas")
          .in(kServe).to(&S::job_store),
      text("replica", "replica", "NAME", "", "this replica's name: a label on /metrics, the owner of its batch-line leases").in(kServe).to(&S::replica),
      integer("batch-lease-ms", "batch_lease_ms", "N", 30000, "with a job store: a claimed batch line stays this replica's this long without renewal")
          .in(kServe).range(100).to(&S::batch_lease_ms),
      boolean("no-web-page", "web_page", true, "no chat page at GET / (404 there)").in(kServe).to(&S::web_page),
      text("api-key", "api_key", "KEY", "", "every /v1/* request needs 'Authorization: Bearer KEY' or 'x-api-key: KEY'; empty: no authentication").in(kServe).to(&S::api_key),
      text("chat-template", "chat_template", "auto|chatml|FILE", "auto",
           "auto: the model's own Jinja template; chatml; or a Jinja template file that overrides it")
          .in(kServer).to(&S::chat_template),
      text("tool-call-parser", "tool_call_parser", "auto|hermes|llama3_json|deepseek_v3|mistral|none", "auto",
           "how tool calls are read from answers; auto: from the template's text")
          .in(kServer).to(&S::tool_call_parser),
      text("generation-config", "generation_config", "auto|none|DIR", "auto",
           "the defaults of the sampling fields a request leaves out: auto: the model's generation_config.json "
           "(temperature, top_p, top_k, min_p, penalties, max_new_tokens); none: the API's (greedy); DIR: that one's file")
          .in(kAll).to(&S::generation_config),
      boolean("split-special-tokens", "split_special_tokens", false,
              "special-token text in prompts stays text (default: it becomes those tokens)")
          .in(kServer).to(&S::split_special_tokens),
      integer("grammar-cache", "grammar_cache", "N", 128,
              "compiled grammars kept (response_format schemas, regexes, tool-call syntaxes), least recently used out first")
          .in(kServer).range(1).to(&S::grammar_cache),
      text("grammar-cache-memory", "grammar_cache_memory", "SIZE|0", "256M",
           "what the kept grammars may take, as compiled (512M, 1G); the least recently used leave first; 0: no bound")
          .in(kServer).to(&S::grammar_cache_memory),
      real("grammar-compile-budget", "grammar_compile_budget", "SECONDS", 1.0,
           "CPU seconds one grammar compile may take; beyond it the request gets 400 and nothing is cached; 0: no bound")
          .in(kServer).real_range(0, 3600).to(&S::grammar_compile_budget),
      text("dtype", "dtype", "float32|float64|bfloat16|float16|int8",
           "float64 equals the oracle token for token; int8: Q8_0 weights quantised at load").in(kAll).to(&E::dtype),
      text("device", "device", "cpu|cuda", "cuda needs a CUDA build of libtorch").in(kAll).to(&E::device),
      text("longrope", "longrope", "short|long", "short",
           "models with longrope scaling (Phi-3.5, Phi-4-mini): short: its short factors, sequences up to the original "
           "context, as Hugging Face answers them; long: the long factors for every sequence, up to the whole context")
          .in(kAll).to(&E::longrope),

      // "engine"
      text("mode", "engine.mode", "inplace|exspec|eqspec|nonspec", "", "empty: inplace (KV slots, continuous batching); the others are the paper's baselines")
          .in(kAll).to(&S::mode),
      text("speculate", "engine.speculate", "model|ngram", "model", "drafts from the draft model, or by prompt lookup (ngram: inplace, no --draft)")
          .in(kAll).to(&S::speculate),
      row(Type::IntOrText, "draft-tokens", "engine.draft_tokens", "K|auto", std::string("auto"), "draft tokens per step, or auto: K chosen per step by the measured costs")
          .in(kAll).to(&S::draft_tokens),
      text("draft-shortlist", "engine.draft_shortlist", "FILE",
           "the draft proposes only from these tokens (a file of `exspec shortlist`): its head multiplies their rows alone; output unchanged")
          .in(kAll).to(&E::draft_shortlist),
      integer("draft-shortlist-size", "engine.draft_shortlist_size", "N", "the first N tokens of --draft-shortlist's file; 0: all of them")
          .in(kAll).range(0).to(&E::draft_shortlist_size),
      row(Type::IntOrText, "draft-screen", "engine.draft_screen", "N|auto", std::string("auto"),
          "int8: the draft's head read in 4 bits, its N best candidates scored again by the int8 head; 0: off; auto: 16 where the head "
          "is int8 and a quarter of a draft token's bytes or more; output unchanged")
          .in(kAll).to(&S::draft_screen),
      integer("min-draft-tokens", "engine.min_draft_tokens", "N", "the smallest K of auto").in(kAll).to(&D::min_draft_tokens),
      integer("max-draft-tokens", "engine.max_draft_tokens", "N", "the largest K of auto").in(kAll).to(&D::max_draft_tokens),
      integer("batch", "engine.batch", "B", 0, "sequences per step at most; 0: every slot in place, 8 in the paper's modes")
          .in(kAll).for_generate(int64_t{1}).to(&S::batch),
      integer("window", "engine.window", "W", 0, "exspec: the active sequences batches are formed from; 0: 2 x B").in(kAll).to(&S::window),
      integer("slots", "engine.slots", "N", 0, "inplace: the KV slots, so the live sequences at most; 0: 2 x B (16 when B is 0)").in(kAll).to(&S::slots),
      real("min-group-fill", "engine.min_group_fill", "F", "exspec: the smallest same-length group worth running, as a share of B")
          .in(kAll).to(&D::min_group_fill),
      integer("max-wait", "engine.max_wait", "STEPS", "exspec: steps a sequence may wait before it is taken first").in(kAll).to(&D::max_wait),
      boolean("sort-by-length", "engine.sort_by_length", "admit waiting sequences shortest prompt first").in(kAll).to(&D::sort_by_length),
      boolean("no-overlap", "engine.overlap", "one batch in flight: no drafting of batch t+1 while batch t is verified").in(kAll).to(&E::overlap),
      boolean("no-prefix-cache", "engine.prefix_cache", "inplace: no prefix cache (full KV blocks kept, keyed by their tokens)").in(kAll).to(&D::prefix_cache),
      boolean("no-slot-moves", "engine.slot_moves", "inplace: scattered rows stay where they are (no moves into consecutive slots)").in(kAll).to(&D::slot_moves),
      text("row-buckets", "engine.row_buckets", "auto|on|off", "auto",
           "inplace: each forward's rows padded to a fixed count (1, 2, 4, 8, 16, 24, 32, 48, 64), so that its products' shapes do not change with the batch; auto: on with --device cuda")
          .in(kAll).to(&S::row_buckets),
      text("cuda-graphs", "engine.cuda_graphs", "auto|on|off", "auto",
           "inplace: the bucketed forwards replayed as CUDA graphs (a CUDA build, --device cuda); auto: wherever row buckets are on there")
          .in(kAll).to(&S::cuda_graphs),
      text("plan-ahead", "engine.plan_ahead", "auto|on|off", "auto",
           "inplace: step N + 1 chosen while step N runs, kept when N's results leave it as it was; auto: on")
          .in(kAll).to(&S::plan_ahead),
      text("kv-cache-memory", "engine.kv_cache_memory", "SIZE|auto|0", "auto", "inplace: what both models' KV stores may take (512M, 4G); auto: half the memory available at start; 0: no budget")
          .in(kAll).for_generate(std::string("0")).to(&S::kv_cache_memory),
      integer("block-size", "engine.block_size", "N", "inplace: positions per KV block (1..4096)").in(kAll).to(&D::block_size),
      integer("max-queue", "engine.max_queue", "N", "sequences that may wait for a slot; beyond it a request gets 429 at once").in(kServer).to(&E::max_queue),
      integer("context", "engine.context", "N", "inplace: positions of one slot; 0: the model's (generate: the longest prompt + --max-tokens)")
          .in(kAll).to(&D::context),
      integer("prefill-chunk", "engine.prefill_chunk", "N", "inplace: prompt tokens per prefill forward").in(kAll).to(&D::prefill_chunk),

      // "threads"
      integer("http-threads", "threads.http", "N", 2, "Asio threads: connections, JSON, tokenizing").in(kServe).to(&S::http_threads),
      integer("", "threads.scheduler", "N", "CAF workers (pool-manager, realigner)").to(&E::scheduler_threads),
      integer("torch-threads", "threads.torch", "N", "torch intra-op threads; the forwards on the initial thread get every core unless this is set (serve, batch: to other than 1)")
          .in(kAll).to(&E::torch_threads),
      integer("threads", "threads.blas", "N", "OpenBLAS threads; 0: every core").in(kAll).to(&E::blas_threads),

      // "limits"
      integer("max-body-bytes", "limits.max_body_bytes", "N", 1 << 20, "larger request bodies get 413").in(kServe).to(&L::max_body_bytes),
      integer("", "limits.max_prompt_tokens", "N", 0, "the longest prompt in tokens; 0: the model's context").to(&L::max_prompt_tokens),
      integer("max-tokens", "limits.max_tokens", "N", 4096, "the largest max_tokens a request may ask for").in(kServe).to(&L::max_tokens),
      integer("", "limits.default_max_tokens", "N", 16, "completions without max_tokens").to(&L::default_max_tokens),
      integer("", "limits.max_prompts", "N", 64, "prompts in one completions request").to(&L::max_prompts),
      integer("", "limits.max_stop", "N", 4, "stop strings per request").to(&L::max_stop),
      integer("", "limits.max_grammar_bytes", "N", 65536, "the largest JSON schema, regex, GBNF grammar or choice list of a request")
          .range(1).to(&L::max_grammar_bytes),
      integer("", "limits.max_messages", "N", 256, "messages in one chat request").to(&L::max_messages),
      integer("", "limits.idle_timeout_s", "N", 60, "a connection idle (or stalled) this long is closed").to(&L::idle_timeout_s),
      integer("shutdown-drain", "limits.shutdown_timeout_s", "SECONDS", 5,
              "on SIGINT/SIGTERM, in-flight requests (and grammar compiles) get this long, then are cancelled; a second signal exits at once")
          .in(kServe).range(0).to(&L::shutdown_timeout_s),
      integer("", "limits.max_file_bytes", "N", 200 << 20, "the largest upload to POST /v1/files").to(&L::max_file_bytes),
      integer("", "limits.max_batch_lines", "N", 50000, "requests in one batch input file").to(&L::max_batch_lines),
      integer("", "limits.max_active_batches", "N", 16, "batches not yet completed, failed or cancelled").to(&L::max_active_batches),
      integer("in-flight", "limits.batch_in_flight", "N", 0, "batch lines submitted at once; 0: 2 x the live sequences").in(kBatch).to(&L::batch_in_flight),
      integer("max-connections", "limits.max_connections", "N", 0, "open connections; beyond: 503 at once; 0: the file limit less 64")
          .in(kServe).to(&L::max_connections),
      integer("", "limits.inline_body_bytes", "N", 16384,
              "request bodies up to this size are read at once on the connection's thread; larger ones on the request-work pool")
          .to(&L::inline_body_bytes),
      integer("request-threads", "limits.request_threads", "N", 1, "threads of the low-priority request-work pool")
          .in(kServe).range(1, 64).to(&L::request_threads),
      integer("request-nice", "limits.request_nice", "N", 19,
              "how far below the engine the request-work and grammar compile threads run (nice; 0: the same priority)")
          .in(kServe).range(0, 19).to(&L::request_nice),
      integer("", "limits.max_request_queue", "N", 64, "costly requests waiting for the request-work pool; beyond: 429")
          .range(1).to(&L::max_request_queue),
      integer("", "limits.batch_window_s", "N", 24 * 3600, "how long a batch's completion_window \"24h\" lasts, in seconds").range(1).to(&L::batch_window_s),
  };
  return table;
}

}  // namespace exspec
