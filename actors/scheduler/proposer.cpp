#include "actors/scheduler/proposer.h"

#include <algorithm>
#include <cstdlib>

namespace exspec {

const char* proposer_name(Proposer p) {
  switch (p) {
    case Proposer::Model: return "model";
    case Proposer::Lookup: return "ngram";
    case Proposer::Prediction: return "prediction";
    case Proposer::Grammar: return "grammar";
  }
  return "?";
}

namespace {

// Whether hay[at, at + n) equals the last n tokens of needle.
bool matches_suffix(const std::vector<int64_t>& hay, size_t at, const std::vector<int64_t>& needle, size_t n) {
  return std::equal(needle.end() - static_cast<std::ptrdiff_t>(n), needle.end(), hay.begin() + static_cast<std::ptrdiff_t>(at));
}

std::vector<int64_t> following(const std::vector<int64_t>& hay, size_t from, int64_t k) {
  const size_t end = std::min(hay.size(), from + static_cast<size_t>(std::max<int64_t>(0, k)));
  return std::vector<int64_t>(hay.begin() + static_cast<std::ptrdiff_t>(from), hay.begin() + static_cast<std::ptrdiff_t>(end));
}

}  // namespace

std::vector<int64_t> propose_lookup(const std::vector<int64_t>& tokens, int64_t k, LookupSettings s) {
  const size_t len = tokens.size();
  if (k <= 0) return {};
  for (int64_t n = s.max_n; n >= std::max<int64_t>(1, s.min_n); --n) {
    const size_t un = static_cast<size_t>(n);
    if (len < un + 1) continue;
    // Occurrences that end before the suffix itself, most recent first.
    for (size_t i = len - un; i-- > 0;)
      if (matches_suffix(tokens, i, tokens, un)) return following(tokens, i + un, k);
  }
  return {};
}

std::vector<int64_t> propose_prediction(const std::vector<int64_t>& prediction, const std::vector<int64_t>& generated,
                                        int64_t k, LookupSettings s) {
  if (k <= 0 || prediction.empty()) return {};
  if (generated.empty()) return following(prediction, 0, k);
  const size_t m = generated.size();
  for (int64_t n = s.max_n; n >= std::max<int64_t>(1, s.min_n); --n) {
    const size_t un = static_cast<size_t>(n);
    if (m < un || prediction.size() < un + 1) continue;
    size_t best = 0;
    bool found = false;
    // Where the match ends: nearest to m, where it ends when nothing was rejected.
    for (size_t i = 0; i + un < prediction.size(); ++i) {
      if (!matches_suffix(prediction, i, generated, un)) continue;
      const size_t end = i + un;
      if (!found || std::llabs(static_cast<long long>(end) - static_cast<long long>(m)) <
                        std::llabs(static_cast<long long>(best) - static_cast<long long>(m)))
        best = end, found = true;
    }
    if (found) return following(prediction, best, k);
  }
  return {};
}

}  // namespace exspec
