#include "http/token_origins.h"

#include <algorithm>

namespace exspec::http {

using nlohmann::ordered_json;

void OriginTrail::received(const TokenOrigins& o) {
  origins_.insert(origins_.end(), o.tokens.begin(), o.tokens.end());
  for (int64_t k : o.step_k) {
    k_min_ = steps_ == 0 ? k : std::min(k_min_, k);
    k_max_ = std::max(k_max_, k);
    k_sum_ += k;
    ++steps_;
  }
}

void OriginTrail::counted(size_t index, int64_t id, const std::string& piece) {
  // A token the engine sent no origin for (the last ones of a result that the deltas did not
  // carry: none, normally) is the target's.
  const TokenOrigin o = index < origins_.size() ? origins_[index] : TokenOrigin::Target;
  ++by_origin_[static_cast<size_t>(o)];
  ++counted_;
  pending_.push_back(ordered_json{{"id", id}, {"text", piece}, {"origin", origin_name(o)}});
}

void OriginTrail::flushed(const std::string& rest) {
  if (rest.empty() || pending_.empty()) return;
  pending_.back()["text"] = pending_.back()["text"].get<std::string>() + rest;
}

ordered_json OriginTrail::take(bool last) {
  ordered_json out = ordered_json::array();
  out.swap(pending_);
  if (!last && !out.empty()) {
    pending_.push_back(std::move(out.back()));
    out.erase(out.end() - 1);
  }
  return out;
}

ordered_json OriginTrail::summary(int64_t drafted, int64_t accepted) const {
  ordered_json by = ordered_json::object();
  for (size_t o = 0; o < by_origin_.size(); ++o)
    if (by_origin_[o]) by[origin_name(static_cast<TokenOrigin>(o))] = by_origin_[o];
  return ordered_json{{"tokens", counted_},
                      {"drafted", drafted},
                      {"accepted", accepted},
                      {"steps", steps_},
                      {"k_mean", steps_ ? static_cast<double>(k_sum_) / static_cast<double>(steps_) : 0.0},
                      {"k_min", k_min_},
                      {"k_max", k_max_},
                      {"by_origin", by}};
}

}  // namespace exspec::http
