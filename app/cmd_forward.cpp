#include <ATen/ATen.h>

#include <iostream>

#include "app/args.h"
#include "app/commands.h"
#include "model/decoder.h"
#include "model/oracle/dense_forward.h"
#include "model/oracle/plain_decode.h"
#include "model/oracle/padding.h"
#include "model/runtime.h"
#include "model/safetensors.h"

namespace exspec {

// One batched, left-padded prefill of all prompts; each row's logits at its content positions
// are written as "logits.{i}" [T_i, vocab] float64, for comparison with an independent reference.
int cmd_forward(int argc, char** argv, int first) {
  Args a(argc, argv, first, {"model", "dtype", "device", "longrope", "prompt-ids", "prompts-file", "out", "threads", "torch-threads"}, {"help"});
  if (a.has("help")) {
    std::cout << "exspec forward --model DIR --out LOGITS.safetensors [--dtype float64|float32|...]\n"
                 "               (--prompt-ids \"1,2,3\" ... | --prompts-file F.jsonl) [--longrope short|long]\n"
                 "One left-padded prefill; logits.{i} [T_i, vocab] per prompt, for the reference tests\n"
                 "(docs/testing.md). To check a checkpoint's decoding, run exspec check (docs/models.md).\n";
    return 0;
  }
  configure_threads(static_cast<int>(a.get_int("torch-threads", 1)), static_cast<int>(a.get_int("threads", 0)));
  LoadOptions lo;
  lo.dtype = parse_dtype(a.get("dtype", "float64"));
  lo.device = parse_device(a.get("device", "cpu"));
  lo.long_context = parse_longrope(a.get("longrope", "short"));
  const auto prompts = read_prompt_ids(a.all("prompt-ids"), a.all("prompts-file"));
  if (prompts.empty()) throw std::invalid_argument("no prompts: give --prompt-ids or --prompts-file");
  const std::string out = a.need("out");
  auto model = Decoder::load(a.need("model"), lo);
  for (const auto& p : prompts) validate_request(model->config(), SeqRequest{p, 0, {}});

  PaddedBatch pb = left_pad(prompts, 0, model->device());
  KVCache cache = new_dense_cache(*model, static_cast<int64_t>(prompts.size()));
  at::Tensor logits = dense_forward(*model, pb.ids, pb.positions, pb.mask, cache).to(at::kCPU, at::kDouble);
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  const int64_t T = pb.ids.size(1);
  for (size_t i = 0; i < prompts.size(); ++i) {
    const int64_t n = static_cast<int64_t>(prompts[i].size());
    tensors.emplace_back("logits." + std::to_string(i), logits[static_cast<int64_t>(i)].narrow(0, T - n, n).contiguous());
  }
  write_safetensors(out, tensors);
  std::cerr << "wrote logits of " << prompts.size() << " prompts to " << out << "\n";
  return 0;
}

}  // namespace exspec
