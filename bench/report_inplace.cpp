// The in-place and trained sweeps' parts of the report: tokens/s by batch size for nonspec, exspec
// at the configured K, inplace at that K and inplace auto, measured in the same run, with their
// ratios and each mode's alignment share of its step time.
#include <map>
#include <sstream>

#include "bench/report.h"

namespace exspec {
using json = nlohmann::ordered_json;

namespace {

// The table of one sweep: a row per batch size, a column per mode.
std::string modes_table(const json& res, const std::string& sweep) {
  std::map<int64_t, std::map<std::string, const json*>> rows;  // B -> column -> run
  for (const auto& r : res["runs"]) {
    if (r["sweep"] != sweep) continue;
    const std::string col = r["mode"].get<std::string>() + (r.value("adaptive", false) ? " auto" : "");
    rows[r["batch_size"].get<int64_t>()][col] = &r;
  }
  if (rows.empty()) return "";
  auto tps = [](const json* r) { return r ? (*r)["tokens_per_s"].get<double>() : 0.0; };
  auto cell = [&](const json* r) {
    return r ? fixed_point(tps(r)) + " (" + fixed_point(100 * (*r)["spread"].get<double>(), 0) + " %)" : std::string("-");
  };
  auto ratio = [&](const json* a, const json* b) { return a && b && tps(b) > 0 ? fixed_point(same_run_ratio(*a, *b), 2) : "-"; };
  auto align = [](const json* r) { return r ? fixed_point(100 * (*r)["overhead_share"].get<double>(), 1) + " %" : "-"; };
  auto accept = [](const json* r) { return r ? fixed_point(100 * (*r)["acceptance_rate"].get<double>(), 0) + " %" : "-"; };
  auto exact = [](const json* r) { return r ? fixed_point(100 * (*r)["exact_match"].get<double>(), 0) + " %" : "-"; };
  const std::string K = std::to_string(res["config"]["draft_tokens"].get<int64_t>());
  std::ostringstream o;
  o << "| B | nonspec | exspec K=" << K << " | inplace K=" << K << " | inplace auto | inplace/exspec (K=" << K
    << ") | inplace auto/nonspec | align exspec | align inplace | accepted (inplace auto) | exact (inplace auto) |\n"
       "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const auto& [B, c] : rows) {
    auto get = [&](const char* k) { auto it = c.find(k); return it == c.end() ? nullptr : it->second; };
    const json *ns = get("nonspec"), *ex = get("exspec"), *ip = get("inplace"), *ia = get("inplace auto");
    o << "| " << B << " | " << cell(ns) << " | " << cell(ex) << " | " << cell(ip) << " | " << cell(ia) << " | "
      << ratio(ip, ex) << " | " << ratio(ia, ns) << " | " << align(ex) << " | " << align(ip) << " | " << accept(ia)
      << " | " << exact(ia) << " |\n";
  }
  return o.str();
}

}  // namespace

std::string inplace_markdown(const json& res) {
  std::ostringstream o;
  if (res.contains("gap")) {
    o << "\n## A long prompt joining decoding sequences (issue 18)\n\n"
         "8 sequences decode; a long prompt arrives. Their longest gap between two token deliveries, median of "
         "the repeats, without and with it, against the target's forward of the prompt's last chunk (the dearest: it "
         "attends over the most positions) and of the whole prompt.\n\n"
         "| mode | prompt | chunk | longest gap without (ms) | with (ms) | rise (ms) | last chunk's forward (ms) | whole prompt's forward (ms) |\n"
         "|---|--:|--:|--:|--:|--:|--:|--:|\n";
    for (const auto& g : res["gap"])
      o << "| " << g["mode"].get<std::string>() << " | " << g["long_prompt"] << " | " << g["prefill_chunk"] << " | "
        << fixed_point(1000 * g["longest_gap_s_without"].get<double>()) << " | "
        << fixed_point(1000 * g["longest_gap_s_with"].get<double>()) << " | " << fixed_point(1000 * g["rise_s"].get<double>())
        << " | " << fixed_point(1000 * g["chunk_forward_s"].get<double>()) << " | "
        << fixed_point(1000 * g["whole_prompt_forward_s"].get<double>()) << " |\n";
  }
  const std::string table = modes_table(res, "inplace");
  if (!table.empty())
    o << "\n## In place: KV slots, continuous batching (issue 18)\n\n"
         "tokens/s (median; spread in parentheses), same run, the settings of a row taking their passes in turn; "
         "ratios are medians of the per-round ratios. align: the alignment share of step time (realignment and "
         "batch assembly; 0 by construction in place).\n\n"
      << table;
  const std::string trained = modes_table(res, "trained");
  if (!trained.empty())
    o << "\n## The trained demo pair (demo/README.md)\n\n"
         "The same modes on the trained pair, whose draft's acceptance is learned: `"
      << res["config"]["trained_model"].get<std::string>() << "` and `" << res["config"]["trained_draft"].get<std::string>()
      << "`, English prompts, " << res["config"]["trained_max_tokens"] << " new tokens each. exact: against batch-1 "
         "nonspec in the same dtype.\n\n"
      << trained;
  return o.str();
}

}  // namespace exspec
