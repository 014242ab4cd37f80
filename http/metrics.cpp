#include "http/metrics.h"

#include "http/metric_rows.h"
#include "model/constrained.h"

namespace exspec::http {

void write_histogram(std::string& out, const Histogram& h, const std::string& name, const std::string& labels) {
  h.write(out, name, labels);
}

void Histogram::observe(double v) {
  for (size_t i = 0; i < kBounds.size(); ++i)
    if (v <= kBounds[i]) ++counts_[i];
  ++count_;
  sum_ += v;
}

void Histogram::write(std::string& out, const std::string& name, const std::string& labels) const {
  const std::string sep = labels.empty() ? "" : ",";
  for (size_t i = 0; i < kBounds.size(); ++i)
    out += name + "_bucket{" + labels + sep + "le=\"" + metric_number(kBounds[i]) + "\"} " + std::to_string(counts_[i]) + "\n";
  out += name + "_bucket{" + labels + sep + "le=\"+Inf\"} " + std::to_string(count_) + "\n";
  out += name + "_sum" + (labels.empty() ? "" : "{" + labels + "}") + " " + metric_number(sum_) + "\n";
  out += name + "_count" + (labels.empty() ? "" : "{" + labels + "}") + " " + std::to_string(count_) + "\n";
}

void Metrics::request_done(const std::string& endpoint, int status, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++c_.requests[{endpoint, status}];
  c_.latency[endpoint].observe(seconds);
}

void Metrics::generation_done(int64_t prompt_tokens, int64_t completion_tokens, double ttft_s, double engine_s,
                              double overhead_s) {
  std::lock_guard<std::mutex> lock(mu_);
  c_.prompt_tokens += prompt_tokens;
  c_.completion_tokens += completion_tokens;
  if (ttft_s > 0) c_.ttft.observe(ttft_s);
  c_.engine_time.observe(engine_s);
  c_.overhead.observe(overhead_s);
}

void Metrics::client_disconnected() {
  std::lock_guard<std::mutex> lock(mu_);
  ++c_.disconnects;
}

void Metrics::connection_refused() {
  std::lock_guard<std::mutex> lock(mu_);
  ++c_.refused;
}

void Metrics::request_work(double cpu_seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  c_.request_cpu_s += cpu_seconds;
}

void Metrics::request_work_refused() {
  std::lock_guard<std::mutex> lock(mu_);
  ++c_.request_refused;
}

std::string model_label(const std::string& dir) {
  std::string name = dir;
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  return name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
}

void Metrics::batch_lines_claimed(int64_t lines, int64_t reclaimed, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  c_.claimed += lines;
  c_.reclaimed += reclaimed;
  c_.claim_time.observe(seconds);
}

std::string with_label(const std::string& text, const std::string& label, const std::string& value) {
  std::string escaped;
  for (char c : value) {
    if (c == '\\' || c == '"') escaped += '\\';
    if (c == '\n') escaped += "\\n";
    else escaped += c;
  }
  const std::string pair = label + "=\"" + escaped + "\"";
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty() || line[0] == '#') {
      out += line + "\n";
      continue;
    }
    const size_t brace = line.find('{'), space = line.find(' ');
    if (brace != std::string::npos && brace < space)  // name{a="b"} v -> name{replica="r",a="b"} v
      out += line.substr(0, brace + 1) + pair + "," + line.substr(brace + 1) + "\n";
    else  // name v -> name{replica="r"} v
      out += line.substr(0, space) + "{" + pair + "}" + line.substr(space) + "\n";
  }
  return out;
}


namespace {

using Row = MetricRow<ServerView>;
using Rows = std::vector<Row>;

template <class F>
Row server(std::string name, const char* type, const char* help, F f) {
  return scalar<ServerView>(std::move(name), type, help, [f](const ServerView& v) { return f(v.c); });
}

Row one_histogram(std::string name, const char* help, const Histogram Metrics::Counters::*h) {
  return histogram<ServerView>(std::move(name), help, [h](const ServerView& v) { return Histograms{{"", &(v.c.*h)}}; });
}

Rows server_rows() {
  using C = Metrics::Counters;
  return {
      labelled<ServerView>("exspec_http_requests_total", "counter", "HTTP requests by endpoint and status code.",
                           [](const ServerView& v) {
                             Samples s;
                             for (const auto& [k, n] : v.c.requests)
                               s.emplace_back("endpoint=\"" + k.first + "\",code=\"" + std::to_string(k.second) + "\"",
                                              static_cast<double>(n));
                             return s;
                           }),
      histogram<ServerView>("exspec_http_request_duration_seconds", "Time from request to the end of the response.",
                            [](const ServerView& v) {
                              Histograms hs;
                              for (const auto& [ep, h] : v.c.latency) hs.emplace_back("endpoint=\"" + ep + "\"", &h);
                              return hs;
                            }),
      one_histogram("exspec_time_to_first_token_seconds", "Time from request to the first generated token.", &C::ttft),
      one_histogram("exspec_engine_time_seconds", "Per generation request: first submit to last sequence end.", &C::engine_time),
      one_histogram("exspec_server_overhead_seconds",
                    "Per generation request: time outside the engine (parsing, tokenizing, detokenizing, JSON).", &C::overhead),
      server("exspec_prompt_tokens_total", "counter", "Prompt tokens of completed generation requests.",
             [](const C& c) { return c.prompt_tokens; }),
      server("exspec_generation_tokens_total", "counter", "Tokens generated for completed requests.",
             [](const C& c) { return c.completion_tokens; }),
      server("exspec_client_disconnects_total", "counter", "Requests whose client went away (sequences cancelled).",
             [](const C& c) { return c.disconnects; }),
      server("exspec_http_connections_refused_total", "counter",
             "Connections answered 503 at once because the server was at limits.max_connections.",
             [](const C& c) { return c.refused; }),
      server("exspec_request_cpu_seconds_total", "counter",
             "CPU seconds of request work: reading bodies, validating, chat templates, tokenizing (compiles: grammar).",
             [](const C& c) { return c.request_cpu_s; }),
      server("exspec_requests_refused_for_budget_total", "counter",
             "Requests answered 429 because the low-priority request-work queue was full (limits.max_request_queue).",
             [](const C& c) { return c.request_refused; }),
      server("exspec_batch_lines_claimed_total", "counter",
             "Batch lines this replica claimed from the shared job store (PostgreSQL).", [](const C& c) { return c.claimed; }),
      server("exspec_batch_lines_reclaimed_total", "counter",
             "Claimed batch lines whose previous holder's lease had expired (a replica died or stalled).",
             [](const C& c) { return c.reclaimed; }),
      one_histogram("exspec_batch_claim_seconds", "Time of one claim of batch lines in the shared job store.", &C::claim_time),
  };
}

// The names and help of Prometheus clients' process collector.
template <class F>
Row process(std::string name, const char* type, const char* help, F f) {
  return scalar<ServerView>(std::move(name), type, help, [f](const ServerView& v) { return f(v.p); })
      .when([](const ServerView& v) { return v.p.known; });
}

Rows process_rows() {
  using P = ProcessStats;
  return {
      process("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
              [](const P& p) { return p.cpu_seconds; }),
      process("process_open_fds", "gauge", "Number of open file descriptors.", [](const P& p) { return p.open_fds; }),
      process("process_max_fds", "gauge", "Maximum number of open file descriptors.", [](const P& p) { return p.max_fds; }),
      process("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
              [](const P& p) { return p.virtual_bytes; }),
      process("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
              [](const P& p) { return p.resident_bytes; }),
      process("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
              [](const P& p) { return p.start_time_seconds; }),
      scalar<ServerView>("exspec_requests_in_flight", "gauge", "Generation requests being served.",
                         [](const ServerView& v) { return v.inflight; }),
      scalar<ServerView>("exspec_ready", "gauge", "1 when the models are loaded and requests are served.",
                         [](const ServerView& v) { return v.e ? 1 : 0; }),
  };
}

// Grammar compiles (the service's pool and cache) and the grammar's work in the step
// (model/constrained.h, process-wide).
struct GrammarView {
  const grammar::GrammarService::Stats& all;
  const GrammarStepStats& g;
};

template <class F>
MetricRow<GrammarView> grammar(std::string name, const char* type, const char* help, F f) {
  return scalar<GrammarView>(std::move(name), type, help, f);
}

std::vector<MetricRow<GrammarView>> grammar_rows() {
  using V = GrammarView;
  return {
      grammar("exspec_grammar_cache_hits_total", "counter", "Constrained requests whose grammar was already compiled.",
              [](const V& v) { return v.all.cache.hits; }),
      grammar("exspec_grammar_compiles_total", "counter", "Grammars compiled (JSON schemas, regexes, tool-call syntaxes).",
              [](const V& v) { return v.all.cache.misses; }),
      grammar("exspec_grammar_compile_seconds_total", "counter", "Time spent compiling grammars.",
              [](const V& v) { return v.all.cache.compile_seconds; }),
      grammar("exspec_grammar_cache_entries", "gauge", "Compiled grammars kept.", [](const V& v) { return v.all.cache.entries; }),
      grammar("exspec_grammar_cache_bytes", "gauge", "Memory of the kept grammars, as compiled.",
              [](const V& v) { return v.all.cache.bytes; }),
      grammar("exspec_grammar_compile_cpu_seconds_total", "counter",
              "CPU seconds of the grammar pool: bounding, compiling and refusing schemas, regexes and grammars.",
              [](const V& v) { return v.all.cpu_seconds; }),
      grammar("exspec_grammar_compiles_cancelled_total", "counter",
              "Grammar compiles stopped because their client went away or the server stopped (nothing cached).",
              [](const V& v) { return v.all.cancelled; }),
      grammar("exspec_grammar_compiles_over_budget_total", "counter",
              "Grammar compiles stopped at their CPU budget (--grammar-compile-budget; answered 400, nothing cached).",
              [](const V& v) { return v.all.over_budget; }),
      grammar("exspec_grammar_compiles_refused_total", "counter",
              "Grammar compiles refused because the compile queue was full (429).", [](const V& v) { return v.all.refused; }),
      grammar("exspec_grammar_compiles_running", "gauge", "Grammar compiles running on the compile pool.",
              [](const V& v) { return v.all.running; }),
      grammar("exspec_grammar_compiles_waiting", "gauge", "Grammar compiles waiting for the compile pool.",
              [](const V& v) { return v.all.waiting; }),
      grammar("exspec_grammar_masks_total", "counter",
              "Token masks computed (one per verified or plain-decoded position of a constrained sequence).",
              [](const V& v) { return v.g.masks.load(); }),
      grammar("exspec_grammar_mask_seconds_total", "counter", "Time spent computing and applying token masks.",
              [](const V& v) { return static_cast<double>(v.g.mask_ns.load()) * 1e-9; }),
      grammar("exspec_grammar_forced_tokens_total", "counter",
              "Tokens the grammar forced, proposed as drafts without a model forward.",
              [](const V& v) { return v.g.forced_proposed.load(); }),
      grammar("exspec_grammar_drafts_cut_total", "counter",
              "Draft tokens cut because the grammar refuses them (or a token before them).",
              [](const V& v) { return v.g.drafts_cut.load(); }),
  };
}

}  // namespace

std::string grammar_cache_metrics(const grammar::GrammarService::Stats& all) {
  static const std::vector<MetricRow<GrammarView>> rows = grammar_rows();
  std::string out;
  render_rows(out, rows, GrammarView{all, grammar_step_stats()});
  return out;
}

std::string Metrics::render(const EngineStats* e, const ModelInfo* info, const std::string& served_name,
                            const std::string& mode, const std::string& draft_tokens, int64_t inflight) const {
  static const Rows rows = [] {
    Rows all = server_rows();
    for (Rows part : {process_rows(), engine_rows(), speculation_rows()})
      all.insert(all.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    return all;
  }();
  Counters c;
  {
    std::lock_guard<std::mutex> lock(mu_);
    c = c_;
  }
  const ProcessStats p = read_process_stats();
  std::string out;
  render_rows(out, rows, ServerView{c, p, inflight, e, info, served_name, mode, draft_tokens});
  return out;
}

}  // namespace exspec::http
