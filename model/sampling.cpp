#include "model/sampling.h"

#include <ATen/core/PhiloxRNGEngine.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace exspec {
namespace {

// Larger value first; equal values: the lower token id first (a fixed, batch-independent order).
struct ByValueDesc {
  const double* v;
  bool operator()(int64_t a, int64_t b) const { return v[a] > v[b] || (v[a] == v[b] && a < b); }
};

// logit_bias, then the penalties (vLLM's order and rules): repetition over every token seen
// (prompt + generated) divides positive logits and multiplies negative ones; frequency and
// presence subtract count * f + (count > 0) * p over the generated tokens only.
std::vector<double> adjusted_logits(const double* logits, int64_t vocab, const SamplingParams& p,
                                    const TokenHistory& h) {
  std::vector<double> x(logits, logits + vocab);
  for (const auto& [id, bias] : p.logit_bias)
    if (id >= 0 && id < vocab) x[id] += bias;
  if (p.masks_stops() && static_cast<int64_t>(h.generated_len + h.extra_len) < p.min_tokens)
    for (int64_t id : p.min_tokens_masked)
      if (id >= 0 && id < vocab) x[id] = -INFINITY;
  if (!p.penalized()) return x;
  std::vector<int64_t> gen(h.generated, h.generated + h.generated_len);
  gen.insert(gen.end(), h.extra, h.extra + h.extra_len);
  std::sort(gen.begin(), gen.end());
  if (p.repetition_penalty != 1) {
    std::vector<int64_t> seen(h.prompt, h.prompt + h.prompt_len);
    seen.insert(seen.end(), gen.begin(), gen.end());
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (int64_t id : seen)
      if (id >= 0 && id < vocab) x[id] = x[id] > 0 ? x[id] / p.repetition_penalty : x[id] * p.repetition_penalty;
  }
  for (size_t i = 0; i < gen.size();) {
    size_t j = i;
    while (j < gen.size() && gen[j] == gen[i]) ++j;
    const int64_t id = gen[i];
    if (id >= 0 && id < vocab)
      x[id] -= p.frequency_penalty * static_cast<double>(j - i) + p.presence_penalty;
    i = j;
  }
  return x;
}

int64_t first_argmax(const std::vector<double>& x) {
  return static_cast<int64_t>(std::max_element(x.begin(), x.end()) - x.begin());  // first of equal maxima
}

}  // namespace

double sampling_uniform(uint64_t seed, uint64_t choice, int64_t t) {
  at::philox_engine engine(seed, choice, static_cast<uint64_t>(t));
  const uint64_t hi = engine() >> 5, lo = engine() >> 6;  // 27 + 26 bits, as std::generate_canonical
  return static_cast<double>((hi << 26) | lo) * (1.0 / 9007199254740992.0);
}

namespace {

// The processed distribution before normalisation: the kept token ids in ascending order, each
// token's unnormalised probability (indexed by token) and the kept mass.
struct Kept {
  std::vector<int64_t> ids;
  std::vector<double> prob;
  double total = 0;
};

// top-p: the smallest set of most likely tokens whose mass reaches top_p (at least one). Only the
// head of the order is needed: select and sort the m most likely (m growing) until they hold
// top_p of the mass. The head is the same as a full sort's (a strict order), at a fraction of its
// cost over a real vocabulary.
void top_p_cut(std::vector<int64_t>& kept, const std::vector<double>& prob, double top_p) {
  const ByValueDesc order{prob.data()};
  size_t m = std::min<size_t>(64, kept.size());
  while (true) {
    std::nth_element(kept.begin(), kept.begin() + (m - 1), kept.end(), order);
    std::sort(kept.begin(), kept.begin() + m, order);
    double head = 0;
    for (size_t i = 0; i < m; ++i) head += prob[kept[i]];
    if (head >= top_p || m == kept.size()) break;
    m = std::min(kept.size(), 4 * m);
  }
  double mass = 0;
  size_t n = 0;
  while (n < m && (n == 0 || mass < top_p)) mass += prob[kept[n++]];
  kept.resize(n);
}

Kept truncated(const double* logits, int64_t vocab, const SamplingParams& p, const TokenHistory& h) {
  if (!(p.temperature > 0)) throw std::invalid_argument("processed_distribution: temperature must be > 0");
  std::vector<double> x = adjusted_logits(logits, vocab, p, h);
  for (double& v : x) v /= p.temperature;
  Kept k;
  k.ids.resize(static_cast<size_t>(vocab));
  for (int64_t i = 0; i < vocab; ++i) k.ids[i] = i;
  // top-k: the k largest scaled logits (ties: lower ids first).
  const bool top_k = p.top_k > 0 && p.top_k < vocab;
  if (top_k) {
    std::nth_element(k.ids.begin(), k.ids.begin() + p.top_k, k.ids.end(), ByValueDesc{x.data()});
    k.ids.resize(static_cast<size_t>(p.top_k));
  }
  double mx = -INFINITY;
  for (int64_t id : k.ids) mx = std::max(mx, x[id]);
  k.prob.assign(static_cast<size_t>(vocab), 0.0);
  double sum = 0;
  for (int64_t id : k.ids) sum += k.prob[id] = std::exp(x[id] - mx);
  for (int64_t id : k.ids) k.prob[id] /= sum;
  if (p.top_p < 1) top_p_cut(k.ids, k.prob, p.top_p);
  if (p.min_p > 0) {  // relative to the most likely token
    double top = 0;
    for (int64_t id : k.ids) top = std::max(top, k.prob[id]);
    k.ids.erase(std::remove_if(k.ids.begin(), k.ids.end(), [&](int64_t id) { return k.prob[id] < p.min_p * top; }),
                k.ids.end());
  }
  if (top_k || p.top_p < 1) std::sort(k.ids.begin(), k.ids.end());  // else still the identity order
  for (int64_t id : k.ids) k.total += k.prob[id];
  return k;
}

}  // namespace

std::vector<std::pair<int64_t, double>> processed_distribution(const double* logits, int64_t vocab,
                                                               const SamplingParams& p, const TokenHistory& h) {
  const Kept k = truncated(logits, vocab, p, h);
  std::vector<std::pair<int64_t, double>> out;
  out.reserve(k.ids.size());
  for (int64_t id : k.ids) out.emplace_back(id, k.prob[id] / k.total);
  return out;
}

int64_t sample_token(const double* logits, int64_t vocab, const SamplingParams& p, const TokenHistory& h, int64_t t) {
  if (p.temperature == 0) return first_argmax(adjusted_logits(logits, vocab, p, h));
  const Kept k = truncated(logits, vocab, p, h);
  // Inverse CDF in ascending token order: the first token whose cumulative mass exceeds u.
  const double u = sampling_uniform(p.seed, p.choice, t);
  double cum = 0;
  for (int64_t id : k.ids) {
    cum += k.prob[id] / k.total;
    if (u < cum) return id;
  }
  return k.ids.back();  // u within rounding of 1
}

RowSampling row_sampling(const SamplingParams& p, const std::vector<int64_t>& prompt,
                         const std::vector<int64_t>& generated) {
  RowSampling r;
  r.params = p;
  if (p.needs_history()) {
    r.prompt = prompt;
    r.generated = generated;
  }
  return r;
}

TokenLogprob token_logprob(const double* logits, int64_t vocab, int64_t token, int64_t top) {
  double mx = -INFINITY;
  for (int64_t i = 0; i < vocab; ++i) mx = std::max(mx, logits[i]);
  double sum = 0;
  for (int64_t i = 0; i < vocab; ++i) sum += std::exp(logits[i] - mx);
  const double lse = mx + std::log(sum);
  TokenLogprob out;
  out.token = token;
  out.logprob = logits[token] - lse;
  top = std::min(top, vocab);
  if (top > 0) {
    std::vector<int64_t> ids(static_cast<size_t>(vocab));
    for (int64_t i = 0; i < vocab; ++i) ids[i] = i;
    std::partial_sort(ids.begin(), ids.begin() + top, ids.end(), ByValueDesc{logits});
    for (int64_t i = 0; i < top; ++i) out.top.emplace_back(ids[i], logits[ids[i]] - lse);
  }
  return out;
}

}  // namespace exspec
