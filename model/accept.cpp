#include "model/accept.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>

#include "model/constrained.h"
#include "model/kernels/row_ops.h"

namespace exspec {
namespace {

// A row whose tokens are chosen on the host: sampled, with logprobs, or under a grammar.
bool on_host(const RowSampling& r) { return !r.params.plain_greedy() || r.params.logprobs >= 0 || r.matcher; }

bool needs_host(const std::vector<RowSampling>& rows) {
  for (const auto& r : rows)
    if (on_host(r)) return true;
  return false;
}

// Row b's logits [K+1, V] in float64 on the host: sampling is per row, on the CPU, so that it
// does not depend on the batch or the device. On a GPU the copy is queued without waiting for
// it (into pinned memory): the tokens' copy after it waits for the device once, for every row's
// copy with it (one host sync a step, where each row's copy was a sync of its own).
at::Tensor host_row(const at::Tensor& logits, int64_t b) {
  return logits[b].to(at::kDouble).to(at::kCPU, /*non_blocking=*/true);
}

// Replaces a row's predictions by the choices of plain decoding (sample_token: the argmax when
// greedy), column by column, up to the first one that differs from its draft or the last column
// the grammar walked to (later columns are never committed).
void choose_row(const at::Tensor& row, const RowSampling& rs, const int64_t* drafts, int64_t last, int64_t length,
                int64_t* pred) {
  const int64_t V = row.size(1);
  const double* x = row.data_ptr<double>();
  for (int64_t j = 0; j <= last; ++j) {
    pred[j] = sample_token(x + j * V, V, rs.params, rs.history(drafts, static_cast<size_t>(j)), length + j);
    if (j < last && pred[j] != drafts[j]) return;
  }
}

}  // namespace

at::Tensor argmax_last(const at::Tensor& logits) {
  if (!logits.device().is_cpu() || logits.scalar_type() != at::kFloat || logits.numel() == 0) return logits.argmax(-1);
  const at::Tensor x = logits.contiguous();
  const int64_t V = x.size(-1);
  at::Tensor out = at::empty(x.sizes().slice(0, x.dim() - 1), x.options().dtype(at::kLong));
  rowops::argmax_rows(x.data_ptr<float>(), V, V, x.numel() / V, out.data_ptr<int64_t>());
  return out;
}

VerifyResult accept(const at::Tensor& logits, const at::Tensor& drafts, const at::Tensor& lengths,
                    const std::vector<RowSampling>& rows) {
  const int64_t B = logits.size(0), K = drafts.size(1);
  if (!rows.empty() && static_cast<int64_t>(rows.size()) != B) throw std::invalid_argument("verify: one RowSampling per row");
  const bool host = needs_host(rows);
  std::vector<at::Tensor> host_rows(host ? B : 0);
  for (int64_t r = 0; host && r < B; ++r)
    if (on_host(rows[r])) host_rows[r] = host_row(logits, r);  // before the tokens' copy, which waits for them
  // The target's tokens and the drafts come to the host together: drafts that stayed on the
  // device (in place) cost no transfer of their own, so the step waits for the device once.
  at::Tensor pred, d;                                                                // [B, K+1], [B, K]
  if (K > 0 && !logits.device().is_cpu() && drafts.device() == logits.device()) {
    at::Tensor both = at::cat({logits.argmax(-1), drafts.to(at::kLong)}, 1).to(at::kCPU);
    pred = both.narrow(1, 0, K + 1).contiguous();
    d = both.narrow(1, K + 1, K).contiguous();
  } else {
    pred = argmax_last(logits).to(at::kCPU).contiguous();
    d = drafts.to(at::kCPU, at::kLong).contiguous();
  }
  // Per row, the last column acceptance may reach: K, or where the grammar's walk over the drafts
  // stopped (model/constrained.h).
  std::vector<int64_t> walked(static_cast<size_t>(B), K);
  if (host) {
    for (int64_t r = 0; r < B; ++r) {
      const RowSampling& rs = rows[r];
      if (!on_host(rs)) continue;
      const int64_t* dr = d.data_ptr<int64_t>() + r * K;
      if (rs.matcher) walked[r] = mask_verified_row(*rs.matcher, host_rows[r].data_ptr<double>(), host_rows[r].size(1), dr, K);
      if (!rs.params.plain_greedy() || rs.matcher)
        choose_row(host_rows[r], rs, dr, walked[r], lengths[r].item<int64_t>(), pred.data_ptr<int64_t>() + r * (K + 1));
    }
  }
  // Per row on the host (both are there now; a dozen tensor ops cost more than these loops): the
  // count of leading matches is the accepted prefix length, and the TARGET's token follows it.
  VerifyResult v;
  v.accepted = at::empty({B}, at::kLong), v.bonus = at::empty({B}, at::kLong);
  v.tokens = at::zeros({B, K + 1}, at::kLong);
  const int64_t *pr = pred.data_ptr<int64_t>(), *dr = d.data_ptr<int64_t>();
  int64_t *acc = v.accepted.data_ptr<int64_t>(), *bonus = v.bonus.data_ptr<int64_t>(), *tok = v.tokens.data_ptr<int64_t>();
  for (int64_t r = 0; r < B; ++r) {
    const int64_t* p = pr + r * (K + 1);
    const int64_t* dd = dr + r * K;
    int64_t a = 0;
    while (a < walked[static_cast<size_t>(r)] && p[a] == dd[a]) ++a;
    acc[r] = a, bonus[r] = p[a];
    std::copy(dd, dd + K, tok + r * (K + 1));
    tok[r * (K + 1) + a] = p[a];
  }
  if (host) {
    v.logprobs.resize(B);
    for (int64_t r = 0; r < B; ++r) {
      const int64_t a = v.accepted[r].item<int64_t>();
      if (rows[r].matcher) settle_matcher(*rows[r].matcher, walked[r], a, v.bonus[r].item<int64_t>());
      if (rows[r].params.logprobs < 0) continue;
      const int64_t V = host_rows[r].size(1);
      for (int64_t j = 0; j <= a; ++j)
        v.logprobs[r].push_back(token_logprob(host_rows[r].data_ptr<double>() + j * V, V, v.tokens[r][j].item<int64_t>(),
                                              rows[r].params.logprobs));
    }
  }
  return v;
}

}  // namespace exspec
