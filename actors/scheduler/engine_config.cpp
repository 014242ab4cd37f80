#include "actors/scheduler/engine_config.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace exspec {

Mode parse_mode(const std::string& n) {
  if (n == "nonspec") return Mode::NonSpec;
  if (n == "eqspec") return Mode::EqSpec;
  if (n == "exspec") return Mode::ExSpec;
  if (n == "inplace") return Mode::InPlace;
  throw std::invalid_argument("unknown mode \"" + n + "\" (nonspec, eqspec, exspec, inplace)");
}

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::NonSpec: return "nonspec";
    case Mode::EqSpec: return "eqspec";
    case Mode::ExSpec: return "exspec";
    case Mode::InPlace: return "inplace";
  }
  return "?";
}

Speculate parse_speculate(const std::string& n) {
  if (n == "model") return Speculate::Model;
  if (n == "ngram") return Speculate::Ngram;
  throw std::invalid_argument("unknown speculate \"" + n + "\" (model, ngram)");
}

const char* speculate_name(Speculate s) { return s == Speculate::Ngram ? "ngram" : "model"; }

Toggle parse_toggle(const std::string& key, const std::string& v) {
  if (v == "auto") return Toggle::Auto;
  if (v == "on") return Toggle::On;
  if (v == "off") return Toggle::Off;
  throw std::invalid_argument(key + " must be auto, on or off, not \"" + v + "\"");
}

const char* toggle_name(Toggle t) { return t == Toggle::On ? "on" : t == Toggle::Off ? "off" : "auto"; }

int64_t parse_bytes(const std::string& text) {
  const std::string bad = "a size must be a number of bytes with an optional K, M, G or T suffix, not \"" + text + "\"";
  size_t used = 0;
  double n = -1;
  try {
    n = std::stod(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument(bad);
  }
  std::string unit = text.substr(used);
  for (const std::string tail : {"iB", "ib", "B", "b"})  // an optional byte mark after the prefix
    if (unit.size() >= tail.size() && unit.compare(unit.size() - tail.size(), tail.size(), tail) == 0) {
      unit.resize(unit.size() - tail.size());
      break;
    }
  double scale = 1;
  if (!unit.empty()) {
    const size_t i = unit.size() == 1 ? std::string("KMGT").find(static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0]))))
                                      : std::string::npos;
    if (i == std::string::npos) throw std::invalid_argument(bad);
    for (size_t j = 0; j <= i; ++j) scale *= 1024;
  }
  if (!(n >= 0) || n * scale > 9e18) throw std::invalid_argument(bad);
  return static_cast<int64_t>(n * scale);
}

int64_t parse_count(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return -1;
  try {
    return std::stoll(text);
  } catch (const std::out_of_range&) {
    return -1;
  }
}

void parse_draft_tokens(const std::string& v, EngineConfig& c) {
  if (v == "auto") {
    c.adaptive_k = true;
    return;
  }
  const int64_t k = parse_count(v);
  if (k < 1)
    throw std::invalid_argument("draft_tokens must be \"auto\" or a number >= 1, not \"" + v + "\"");
  c.adaptive_k = false;
  c.draft_tokens = k;
}

bool drafts(const EngineConfig& c) {
  if (c.speculate == Speculate::Ngram) return c.mode == Mode::InPlace;
  return c.mode != Mode::NonSpec && c.draft;
}

bool proposes_without_model(const EngineConfig& c) { return c.mode == Mode::InPlace; }

std::string draft_tokens_name(const EngineConfig& c) {
  if (!drafts(c)) return "0";
  return c.adaptive_k ? "auto" : std::to_string(c.draft_tokens);
}

int64_t largest_k(const EngineConfig& c) {
  if (!drafts(c) && !proposes_without_model(c)) return 0;
  if (!drafts(c)) return c.max_draft_tokens;  // a request's prediction only
  return c.adaptive_k ? std::max(c.draft_tokens, c.max_draft_tokens) : c.draft_tokens;
}

int64_t live_sequences(const EngineConfig& c) { return c.mode == Mode::InPlace ? c.slots : c.window; }

void validate(const EngineConfig& c) {
  if (c.batch_size < 1) throw std::invalid_argument("batch size must be >= 1");
  if (c.mode == Mode::ExSpec && c.window < c.batch_size) throw std::invalid_argument("window must be >= batch size");
  if (c.mode == Mode::InPlace && c.slots < c.batch_size) throw std::invalid_argument("slots must be >= batch size");
  if (c.context < 0) throw std::invalid_argument("context must be >= 0");
  if (c.prefill_chunk < 1) throw std::invalid_argument("prefill_chunk must be >= 1");
  if (c.block_size < 1 || c.block_size > 4096) throw std::invalid_argument("block_size (--block-size) must be 1..4096");
  if (c.mode != Mode::NonSpec && c.mode != Mode::InPlace && !c.draft)
    throw std::invalid_argument(std::string(mode_name(c.mode)) + " needs a draft model");
  if (c.speculate == Speculate::Ngram && c.mode != Mode::InPlace)
    throw std::invalid_argument("speculate ngram needs mode inplace");
  if (c.speculate == Speculate::Ngram && c.draft)
    throw std::invalid_argument("speculate ngram proposes without a draft model: drop --draft, or speculate model");
  if (c.cuda_graphs == Toggle::On && c.row_buckets == Toggle::Off)
    throw std::invalid_argument("cuda_graphs on (--cuda-graphs) captures the row buckets' forwards: not with row_buckets off");
  if (!drafts(c)) return;
  if (!c.adaptive_k && (c.draft_tokens < 1 || c.draft_tokens > 32))
    throw std::invalid_argument("draft_tokens must be between 1 and 32");
  if (c.adaptive_k && (c.min_draft_tokens < 0 || c.max_draft_tokens < c.min_draft_tokens || c.max_draft_tokens > 32))
    throw std::invalid_argument("draft_tokens bounds must satisfy 0 <= min_draft_tokens <= max_draft_tokens <= 32");
}

}  // namespace exspec
