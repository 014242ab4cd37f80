#include "http/metrics.h"

#include "actors/scheduler/acceptance.h"
#include "actors/scheduler/proposer.h"
#include "http/process_stats.h"
#include "model/constrained.h"

#include <cstdio>

namespace exspec::http {
namespace {

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void head(std::string& out, const std::string& name, const char* type, const char* help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

std::string proposer_label(int p) {
  return std::string("proposer=\"") + proposer_name(static_cast<exspec::Proposer>(p)) + "\"";
}

void sample(std::string& out, const std::string& name, double v, const std::string& labels = "") {
  out += name + (labels.empty() ? "" : "{" + labels + "}") + " " + num(v) + "\n";
}

void metric(std::string& out, const std::string& name, const char* type, const char* help, double v) {
  head(out, name, type, help);
  sample(out, name, v);
}

}  // namespace

void Histogram::observe(double v) {
  for (size_t i = 0; i < kBounds.size(); ++i)
    if (v <= kBounds[i]) ++counts_[i];
  ++count_;
  sum_ += v;
}

void Histogram::write(std::string& out, const std::string& name, const std::string& labels) const {
  const std::string sep = labels.empty() ? "" : ",";
  for (size_t i = 0; i < kBounds.size(); ++i)
    out += name + "_bucket{" + labels + sep + "le=\"" + num(kBounds[i]) + "\"} " + std::to_string(counts_[i]) + "\n";
  out += name + "_bucket{" + labels + sep + "le=\"+Inf\"} " + std::to_string(count_) + "\n";
  out += name + "_sum" + (labels.empty() ? "" : "{" + labels + "}") + " " + num(sum_) + "\n";
  out += name + "_count" + (labels.empty() ? "" : "{" + labels + "}") + " " + std::to_string(count_) + "\n";
}

void Metrics::request_done(const std::string& endpoint, int status, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{endpoint, status}];
  latency_[endpoint].observe(seconds);
}

void Metrics::generation_done(int64_t prompt_tokens, int64_t completion_tokens, double ttft_s, double engine_s,
                              double overhead_s) {
  std::lock_guard<std::mutex> lock(mu_);
  prompt_tokens_ += prompt_tokens;
  completion_tokens_ += completion_tokens;
  if (ttft_s > 0) ttft_.observe(ttft_s);
  engine_time_.observe(engine_s);
  overhead_.observe(overhead_s);
}

void Metrics::client_disconnected() {
  std::lock_guard<std::mutex> lock(mu_);
  ++disconnects_;
}

void Metrics::connection_refused() {
  std::lock_guard<std::mutex> lock(mu_);
  ++refused_;
}

std::string model_label(const std::string& dir) {
  std::string name = dir;
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  return name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
}

void Metrics::batch_lines_claimed(int64_t lines, int64_t reclaimed, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  claimed_ += lines;
  reclaimed_ += reclaimed;
  claim_time_.observe(seconds);
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

std::string grammar_cache_metrics(const GrammarService::Stats& all) {
  std::string out;
  const grammar::GrammarCache::Stats& s = all.cache;
  metric(out, "exspec_grammar_cache_hits_total", "counter", "Constrained requests whose grammar was already compiled.",
         static_cast<double>(s.hits));
  metric(out, "exspec_grammar_compiles_total", "counter", "Grammars compiled (JSON schemas, regexes, tool-call syntaxes).",
         static_cast<double>(s.misses));
  metric(out, "exspec_grammar_compile_seconds_total", "counter", "Time spent compiling grammars.", s.compile_seconds);
  metric(out, "exspec_grammar_cache_entries", "gauge", "Compiled grammars kept.", static_cast<double>(s.entries));
  metric(out, "exspec_grammar_cache_bytes", "gauge", "Memory of the kept grammars, as compiled.", static_cast<double>(s.bytes));
  metric(out, "exspec_grammar_compiles_cancelled_total", "counter",
         "Grammar compiles stopped because their client went away or the server stopped (nothing cached).",
         static_cast<double>(all.cancelled));
  metric(out, "exspec_grammar_compiles_over_budget_total", "counter",
         "Grammar compiles stopped at their CPU budget (--grammar-compile-budget; answered 400, nothing cached).",
         static_cast<double>(all.over_budget));
  metric(out, "exspec_grammar_compiles_refused_total", "counter", "Grammar compiles refused because the compile queue was full (429).",
         static_cast<double>(all.refused));
  metric(out, "exspec_grammar_compiles_running", "gauge", "Grammar compiles running on the compile pool.", static_cast<double>(all.running));
  metric(out, "exspec_grammar_compiles_waiting", "gauge", "Grammar compiles waiting for the compile pool.", static_cast<double>(all.waiting));
  // The grammar's work in the step (model/constrained.h), process-wide.
  const GrammarStepStats& g = grammar_step_stats();
  metric(out, "exspec_grammar_masks_total", "counter", "Token masks computed (one per verified or plain-decoded position of a constrained sequence).",
         static_cast<double>(g.masks.load()));
  metric(out, "exspec_grammar_mask_seconds_total", "counter", "Time spent computing and applying token masks.",
         static_cast<double>(g.mask_ns.load()) * 1e-9);
  metric(out, "exspec_grammar_forced_tokens_total", "counter", "Tokens the grammar forced, proposed as drafts without a model forward.",
         static_cast<double>(g.forced_proposed.load()));
  metric(out, "exspec_grammar_drafts_cut_total", "counter", "Draft tokens cut because the grammar refuses them (or a token before them).",
         static_cast<double>(g.drafts_cut.load()));
  return out;
}

std::string Metrics::render(const EngineStats* e, const ModelInfo* info, const std::string& served_name,
                            const std::string& mode, const std::string& draft_tokens, int64_t inflight) const {
  std::string out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    head(out, "exspec_http_requests_total", "counter", "HTTP requests by endpoint and status code.");
    for (const auto& [k, n] : requests_)
      sample(out, "exspec_http_requests_total", static_cast<double>(n),
             "endpoint=\"" + k.first + "\",code=\"" + std::to_string(k.second) + "\"");
    head(out, "exspec_http_request_duration_seconds", "histogram", "Time from request to the end of the response.");
    for (const auto& [ep, h] : latency_) h.write(out, "exspec_http_request_duration_seconds", "endpoint=\"" + ep + "\"");
    head(out, "exspec_time_to_first_token_seconds", "histogram", "Time from request to the first generated token.");
    ttft_.write(out, "exspec_time_to_first_token_seconds", "");
    head(out, "exspec_engine_time_seconds", "histogram", "Per generation request: first submit to last sequence end.");
    engine_time_.write(out, "exspec_engine_time_seconds", "");
    head(out, "exspec_server_overhead_seconds", "histogram",
         "Per generation request: time outside the engine (parsing, tokenizing, detokenizing, JSON).");
    overhead_.write(out, "exspec_server_overhead_seconds", "");
    metric(out, "exspec_prompt_tokens_total", "counter", "Prompt tokens of completed generation requests.",
           static_cast<double>(prompt_tokens_));
    metric(out, "exspec_generation_tokens_total", "counter", "Tokens generated for completed requests.",
           static_cast<double>(completion_tokens_));
    metric(out, "exspec_client_disconnects_total", "counter", "Requests whose client went away (sequences cancelled).",
           static_cast<double>(disconnects_));
    metric(out, "exspec_http_connections_refused_total", "counter",
           "Connections answered 503 at once because the server was at limits.max_connections.",
           static_cast<double>(refused_));
    metric(out, "exspec_batch_lines_claimed_total", "counter",
           "Batch lines this replica claimed from the shared job store (PostgreSQL).", static_cast<double>(claimed_));
    metric(out, "exspec_batch_lines_reclaimed_total", "counter",
           "Claimed batch lines whose previous holder's lease had expired (a replica died or stalled).",
           static_cast<double>(reclaimed_));
    head(out, "exspec_batch_claim_seconds", "histogram", "Time of one claim of batch lines in the shared job store.");
    claim_time_.write(out, "exspec_batch_claim_seconds", "");
  }
  if (const ProcessStats p = read_process_stats(); p.known) {  // the names and help of Prometheus clients
    metric(out, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
           p.cpu_seconds);
    metric(out, "process_open_fds", "gauge", "Number of open file descriptors.", static_cast<double>(p.open_fds));
    metric(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.", static_cast<double>(p.max_fds));
    metric(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
           static_cast<double>(p.virtual_bytes));
    metric(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
           static_cast<double>(p.resident_bytes));
    metric(out, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
           p.start_time_seconds);
  }
  metric(out, "exspec_requests_in_flight", "gauge", "Generation requests being served.", static_cast<double>(inflight));
  metric(out, "exspec_ready", "gauge", "1 when the models are loaded and requests are served.", e ? 1 : 0);
  if (!e) return out;
  const RunStats& t = e->totals;
  if (info) {
    const std::string& model_name = served_name;
    const std::string draft_name = model_label(info->draft_dir);
    head(out, "exspec_model_info", "gauge", "The served model pair and settings.");
    sample(out, "exspec_model_info", 1,
           "model=\"" + model_name + "\",draft=\"" + draft_name + "\",architecture=\"" + info->architecture +
               "\",dtype=\"" + info->dtype + "\",device=\"" + info->device + "\",mode=\"" + mode +
               "\",draft_tokens=\"" + draft_tokens + "\"");
  }
  metric(out, "exspec_queue_depth", "gauge", "Sequences waiting for the window.", static_cast<double>(e->queued));
  metric(out, "exspec_active_sequences", "gauge", "Sequences in the window.", static_cast<double>(e->active));
  if (e->slots > 0) {  // in place: the KV stores' occupancy (a full store makes admission wait)
    metric(out, "exspec_kv_slots", "gauge", "Slots of each in-place KV store.", static_cast<double>(e->slots));
    metric(out, "exspec_kv_slots_used", "gauge", "Slots held by live sequences.", static_cast<double>(e->slots_used));
    metric(out, "exspec_kv_blocks", "gauge", "Blocks of the target's KV store.", static_cast<double>(e->blocks.total));
    metric(out, "exspec_kv_blocks_used", "gauge", "Blocks held by live sequences.", static_cast<double>(e->blocks.held));
    metric(out, "exspec_kv_blocks_free", "gauge", "Blocks no live sequence holds (cached ones included).",
           static_cast<double>(e->blocks.total - e->blocks.held));
    metric(out, "exspec_kv_blocks_cached", "gauge", "Blocks the prefix cache keeps (held or not).",
           static_cast<double>(e->blocks.cached));
  }
  metric(out, "exspec_sequences_submitted_total", "counter", "Sequences submitted.", static_cast<double>(e->submitted));
  metric(out, "exspec_sequences_finished_total", "counter", "Sequences finished.", static_cast<double>(e->finished));
  metric(out, "exspec_sequences_cancelled_total", "counter", "Sequences cancelled (stop strings, disconnects).",
         static_cast<double>(e->cancelled));
  metric(out, "exspec_steps_total", "counter", "Batches run (one verification forward each).",
         static_cast<double>(t.steps));
  metric(out, "exspec_grouped_steps_total", "counter", "Steps whose rows all had the same length (no padding).",
         static_cast<double>(t.grouped_steps));
  metric(out, "exspec_spec_decode_num_drafts_total", "counter", "Row verifications (one draft proposal per row).",
         static_cast<double>(t.row_verifications));
  metric(out, "exspec_spec_decode_num_draft_tokens_total", "counter", "Draft tokens proposed.",
         static_cast<double>(t.drafted));
  metric(out, "exspec_spec_decode_num_accepted_tokens_total", "counter", "Draft tokens accepted.",
         static_cast<double>(t.accepted));
  // Acceptance falls with temperature (a draft d is accepted with probability p(d)).
  head(out, "exspec_spec_decode_num_draft_tokens_by_temperature_total", "counter",
       "Draft tokens proposed, by temperature band.");
  for (int b = 0; b < kTemperatureBands; ++b)
    sample(out, "exspec_spec_decode_num_draft_tokens_by_temperature_total", static_cast<double>(t.band_drafted[b]),
           std::string("temperature=\"") + temperature_band_name(b) + "\"");
  head(out, "exspec_spec_decode_num_accepted_tokens_by_temperature_total", "counter",
       "Draft tokens accepted, by temperature band.");
  for (int b = 0; b < kTemperatureBands; ++b)
    sample(out, "exspec_spec_decode_num_accepted_tokens_by_temperature_total", static_cast<double>(t.band_accepted[b]),
           std::string("temperature=\"") + temperature_band_name(b) + "\"");
  head(out, "exspec_acceptance_rate_by_temperature", "gauge", "Accepted / drafted tokens since start, by temperature band.");
  for (int b = 0; b < kTemperatureBands; ++b)
    sample(out, "exspec_acceptance_rate_by_temperature",
           t.band_drafted[b] ? static_cast<double>(t.band_accepted[b]) / static_cast<double>(t.band_drafted[b]) : 0.0,
           std::string("temperature=\"") + temperature_band_name(b) + "\"");
  // By where the drafts came from (actors/scheduler/proposer.h): the draft model, prompt lookup, predictions.
  const char* by[] = {"exspec_spec_decode_num_draft_tokens_by_proposer_total",
                      "exspec_spec_decode_num_accepted_tokens_by_proposer_total", "exspec_acceptance_rate_by_proposer"};
  head(out, by[0], "counter", "Draft tokens proposed, by proposer (model, ngram, prediction).");
  for (int p = 0; p < kProposers; ++p)
    sample(out, by[0], static_cast<double>(t.proposer_drafted[p]), proposer_label(p));
  head(out, by[1], "counter", "Draft tokens accepted, by proposer.");
  for (int p = 0; p < kProposers; ++p)
    sample(out, by[1], static_cast<double>(t.proposer_accepted[p]), proposer_label(p));
  head(out, by[2], "gauge", "Accepted / drafted tokens since start, by proposer.");
  for (int p = 0; p < kProposers; ++p)
    sample(out, by[2],
           t.proposer_drafted[p] ? static_cast<double>(t.proposer_accepted[p]) / static_cast<double>(t.proposer_drafted[p]) : 0.0,
           proposer_label(p));
  metric(out, "exspec_prefix_cache_queries_total", "counter",
         "In place: prompt tokens looked up in the cached blocks.", static_cast<double>(t.prefix_queried));
  metric(out, "exspec_prefix_cache_hits_total", "counter",
         "In place: prompt tokens found there, not prefilled again.", static_cast<double>(t.prefix_hit));
  metric(out, "exspec_prefix_cache_copied_blocks_total", "counter",
         "In place: cached blocks copied into a new sequence's own blocks (read as a view after).",
         static_cast<double>(t.prefix_copied));
  metric(out, "exspec_slot_moves_total", "counter",
         "In place: rows moved to another slot so that a step's slots are consecutive.", static_cast<double>(t.slot_moves));
  metric(out, "exspec_gathered_steps_total", "counter",
         "In place: steps whose keys were not read as one view (gathered at every layer).",
         static_cast<double>(t.gathered_steps));
  metric(out, "exspec_preemptions_total", "counter",
         "In place: sequences sent back to the queue for want of KV blocks (recomputed later, exactly).",
         static_cast<double>(t.preemptions));
  metric(out, "exspec_committed_tokens_total", "counter", "Tokens appended to sequences.",
         static_cast<double>(t.committed));
  metric(out, "exspec_acceptance_rate", "gauge", "Accepted / drafted tokens since start.", t.acceptance_rate());
  metric(out, "exspec_tokens_per_verification", "gauge", "Committed tokens per row verification since start.",
         t.tokens_per_verification());
  metric(out, "exspec_grouping_rate", "gauge", "Share of steps that were same-length groups.", t.grouping_rate());
  metric(out, "exspec_alignment_overhead_share", "gauge", "align / (draft + verify + align) seconds.",
         t.overhead_share());
  metric(out, "exspec_alignment_seconds_total", "counter", "Realignment (unpad-append-repad) seconds.", t.align_s);
  metric(out, "exspec_draft_seconds_total", "counter", "Draft forward seconds.", t.draft_s);
  metric(out, "exspec_verify_seconds_total", "counter", "Verification forward seconds.", t.verify_s);
  metric(out, "exspec_prefill_seconds_total", "counter", "Prefill seconds.", t.prefill_s);
  if (!t.k_steps.empty()) {
    head(out, "exspec_draft_length_steps_total", "counter", "Steps by draft length K (K = 0: a plain target step).");
    for (size_t k = 0; k < t.k_steps.size(); ++k)
      sample(out, "exspec_draft_length_steps_total", static_cast<double>(t.k_steps[k]), "k=\"" + std::to_string(k) + "\"");
  }
  const SpeculationEstimates& s = e->speculation;
  if (s.adaptive) {
    metric(out, "exspec_adaptive_acceptance_estimate", "gauge",
           "Adaptive K: running estimate of the per-draft acceptance probability.", s.acceptance);
    head(out, "exspec_adaptive_acceptance_estimate_by_temperature", "gauge",
         "Adaptive K: the acceptance estimate a fresh sequence of each temperature band starts from.");
    for (size_t b = 0; b < s.band_acceptance.size(); ++b)
      sample(out, "exspec_adaptive_acceptance_estimate_by_temperature", s.band_acceptance[b],
             std::string("temperature=\"") + temperature_band_name(static_cast<int>(b)) + "\"");
    metric(out, "exspec_adaptive_last_draft_tokens", "gauge", "Adaptive K: the K of the last step chosen.",
           static_cast<double>(s.last_k));
    metric(out, "exspec_adaptive_predicted_step_seconds", "gauge", "Adaptive K: predicted cost of the last step chosen.",
           s.last_predicted_s);
    metric(out, "exspec_adaptive_expected_tokens", "gauge", "Adaptive K: expected committed tokens of the last step chosen.",
           s.last_expected_tokens);
    head(out, "exspec_adaptive_cost_coefficient_seconds", "gauge",
         "Adaptive K: the step cost model's coefficients (actors/scheduler/cost_model.h), seconds per unit of each term.");
    for (const auto& [name, value] : s.coefficients) {
      const auto dot = name.find('.');
      sample(out, "exspec_adaptive_cost_coefficient_seconds", value,
             "phase=\"" + name.substr(0, dot) + "\",term=\"" + name.substr(dot + 1) + "\"");
    }
  }
  return out;
}

}  // namespace exspec::http
