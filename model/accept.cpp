#include "model/accept.h"

#include <ATen/ATen.h>

#include <stdexcept>

namespace exspec {
namespace {

bool needs_host(const std::vector<RowSampling>& rows) {
  for (const auto& r : rows)
    if (!r.params.plain_greedy() || r.params.logprobs >= 0) return true;
  return false;
}

// Row b's logits [K+1, V] in float64 on the host: sampling is per row, on the CPU, so that it
// does not depend on the batch or the device.
at::Tensor host_row(const at::Tensor& logits, int64_t b) { return logits[b].to(at::kCPU, at::kDouble).contiguous(); }

// Replaces a sampled row's predictions by the samples of plain decoding, column by column, up
// to the first one that differs from its draft (later columns are never committed).
void sample_row(const at::Tensor& row, const RowSampling& rs, const int64_t* drafts, int64_t K, int64_t length,
                int64_t* pred) {
  const int64_t V = row.size(1);
  const double* x = row.data_ptr<double>();
  for (int64_t j = 0; j <= K; ++j) {
    pred[j] = sample_token(x + j * V, V, rs.params, rs.history(drafts, static_cast<size_t>(j)), length + j);
    if (j < K && pred[j] != drafts[j]) return;
  }
}

}  // namespace

VerifyResult accept(const at::Tensor& logits, const at::Tensor& drafts, const at::Tensor& lengths,
                    const std::vector<RowSampling>& rows) {
  const int64_t B = logits.size(0), K = drafts.size(1);
  // The target's tokens and the drafts come to the host together: drafts that stayed on the
  // device (in place) cost no transfer of their own, so the step waits for the device once.
  at::Tensor pred, d;                                                                // [B, K+1], [B, K]
  if (K > 0 && !logits.device().is_cpu() && drafts.device() == logits.device()) {
    at::Tensor both = at::cat({logits.argmax(-1), drafts.to(at::kLong)}, 1).to(at::kCPU);
    pred = both.narrow(1, 0, K + 1).contiguous();
    d = both.narrow(1, K + 1, K).contiguous();
  } else {
    pred = logits.argmax(-1).to(at::kCPU).contiguous();
    d = drafts.to(at::kCPU, at::kLong).contiguous();
  }
  if (!rows.empty() && static_cast<int64_t>(rows.size()) != B) throw std::invalid_argument("verify: one RowSampling per row");
  const bool host = needs_host(rows);
  std::vector<at::Tensor> host_rows(host ? B : 0);
  if (host) {
    for (int64_t r = 0; r < B; ++r) {
      if (rows[r].params.plain_greedy() && rows[r].params.logprobs < 0) continue;
      host_rows[r] = host_row(logits, r);
      if (!rows[r].params.plain_greedy())
        sample_row(host_rows[r], rows[r], d.data_ptr<int64_t>() + r * K, K, lengths[r].item<int64_t>(),
                   pred.data_ptr<int64_t>() + r * (K + 1));
    }
  }
  VerifyResult v;
  // Vectorised first mismatch: the count of leading matches is the accepted prefix length.
  at::Tensor matches = pred.narrow(1, 0, K).eq(d);
  v.accepted = matches.to(at::kLong).cumprod(1).sum(1);                              // [B]
  v.bonus = pred.gather(1, v.accepted.view({B, 1})).view({B});                       // the TARGET's token
  v.tokens = at::cat({d, at::zeros({B, 1}, at::kLong)}, 1);
  v.tokens.scatter_(1, v.accepted.view({B, 1}), v.bonus.view({B, 1}));
  if (host) {
    v.logprobs.resize(B);
    for (int64_t r = 0; r < B; ++r) {
      if (rows[r].params.logprobs < 0) continue;
      const int64_t V = host_rows[r].size(1), a = v.accepted[r].item<int64_t>();
      for (int64_t j = 0; j <= a; ++j)
        v.logprobs[r].push_back(token_logprob(host_rows[r].data_ptr<double>() + j * V, V, v.tokens[r][j].item<int64_t>(),
                                              rows[r].params.logprobs));
    }
  }
  return v;
}

}  // namespace exspec
