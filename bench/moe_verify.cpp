// What a verification costs a target with layers of experts (issue 72): one forward of K + 1
// tokens for each of B rows, after a prompt of --context tokens each, at every B and K asked for,
// against the distinct experts it read (Decoder::expert_reads) and the bytes those take. A dense
// verify reads each weight once for all its rows; an expert verify reads the experts its
// B (K + 1) rows choose, so its cost grows with K where a dense one's hardly does.
//
//   build/moe_verify --model DIR|FILE.gguf [--dtype int8] [--batches 1,4,8,16] [--ks 0,1,2,3,5,7]
//                    [--context 64] [--rounds 7] [--threads 2]
//
// Prints, per (B, K): the median ms of the verify forward over the rounds (min-max), the distinct
// experts read a layer, the bytes read (the dense part once, the experts read, the head), the
// same over the active floor of one token (the dense part and top_k experts), and the cost model's
// prediction shape: the distinct experts that independent uniform choices would read.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "actors/scheduler/cost_model.h"
#include "model/decoder.h"
#include "model/runtime.h"

using namespace exspec;

namespace {

std::vector<int64_t> int_list(const std::string& s) {
  std::vector<int64_t> out;
  size_t at = 0;
  while (at < s.size()) {
    const size_t comma = s.find(',', at);
    out.push_back(std::stoll(s.substr(at, comma - at)));
    at = comma == std::string::npos ? s.size() : comma + 1;
  }
  return out;
}

struct Args {
  std::string model, dtype = "int8";
  std::vector<int64_t> batches{1, 4, 8, 16}, ks{0, 1, 2, 3, 5, 7};
  int64_t context = 64, rounds = 7;
  int threads = 2;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--model") a.model = v;
    else if (k == "--dtype") a.dtype = v;
    else if (k == "--batches") a.batches = int_list(v);
    else if (k == "--ks") a.ks = int_list(v);
    else if (k == "--context") a.context = std::stoll(v);
    else if (k == "--rounds") a.rounds = std::stoll(v);
    else if (k == "--threads") a.threads = std::stoi(v);
    else throw std::invalid_argument("moe_verify: unknown flag " + k);
  }
  if (a.model.empty()) throw std::invalid_argument("moe_verify: --model DIR|FILE.gguf");
  return a;
}

at::ScalarType dtype_of(const std::string& d) {
  if (d == "int8") return at::kChar;
  if (d == "bfloat16") return at::kBFloat16;
  if (d == "float32") return at::kFloat;
  throw std::invalid_argument("moe_verify: --dtype int8|bfloat16|float32");
}

struct Sample {
  double ms = 0;
  double experts = 0;  // distinct experts read a layer
};

// One verify forward of B rows of K + 1 tokens after `context` tokens each: its time and experts.
Sample verify_once(const Decoder& m, int64_t B, int64_t K, int64_t context, uint64_t seed) {
  const int64_t V = m.config().vocab_size, T = K + 1;
  KVStore store = m.new_store(B, (context + T + 15) / 16 * 16, 16);  // blocks of 16, as the engine's default
  at::Tensor prompt = at::randint(V, {B, context}, at::TensorOptions().dtype(at::kLong));
  std::vector<SlotSpan> rows, next;
  for (int64_t b = 0; b < B; ++b) rows.push_back({b, 0, context, {}}), next.push_back({b, context, T, {}});
  m.forward_slots(prompt, rows, store, Decoder::Logits::None);
  at::manual_seed(seed);
  const at::Tensor ids = at::randint(V, {B, T}, at::TensorOptions().dtype(at::kLong));
  const Decoder::ExpertReads before = m.expert_reads();
  const auto t0 = std::chrono::steady_clock::now();
  m.forward_slots(ids, next, store, Decoder::Logits::All);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const Decoder::ExpertReads after = m.expert_reads();
  const int64_t runs = after.layer_runs - before.layer_runs;
  return {ms, runs ? static_cast<double>(after.experts - before.experts) / static_cast<double>(runs) : 0.0};
}

}  // namespace

int main(int argc, char** argv) try {
  c10::NoGradGuard no_grad;
  const Args a = parse(argc, argv);
  configure_threads(a.threads, a.threads);  // as the server sets them (model/runtime.h)
  auto m = Decoder::load(a.model, {dtype_of(a.dtype)});
  const ExpertsConfig& e = m->config().experts;
  if (e.num_experts == 0) throw std::invalid_argument("moe_verify: " + a.model + " has no layers of experts");
  const int64_t layers = m->config().num_layers - static_cast<int64_t>(e.dense_layers.size());
  // The active floor of one token: product_bytes() counts top_k experts a layer of experts.
  const double active = static_cast<double>(m->product_bytes());
  const double expert = static_cast<double>(m->weight_bytes() - m->product_bytes()) /
                        static_cast<double>(layers * (e.num_experts - e.top_k));  // one expert, as held
  const ExpertsShape shape{e.num_experts, e.top_k};
  std::printf("model %s (%s): %lld experts, %lld a token, on %lld layers; one expert %.0f bytes; one token's active bytes %.0f\n",
              a.model.c_str(), a.dtype.c_str(), static_cast<long long>(e.num_experts), static_cast<long long>(e.top_k),
              static_cast<long long>(layers), expert, active);
  std::printf("| B | K | rows | verify ms median (min-max) | experts read a layer | uniform choice would read | bytes read / one token's active |\n");
  std::printf("|--:|--:|--:|--:|--:|--:|--:|\n");
  for (int64_t B : a.batches)
    for (int64_t K : a.ks) {
      std::vector<double> ms;
      double experts = 0;
      for (int64_t r = 0; r < a.rounds; ++r) {
        const Sample s = verify_once(*m, B, K, a.context, static_cast<uint64_t>(r * 1000 + B * 10 + K));
        ms.push_back(s.ms);
        experts += s.experts / static_cast<double>(a.rounds);
      }
      std::sort(ms.begin(), ms.end());
      const double bytes = active + (experts - static_cast<double>(e.top_k)) * expert * static_cast<double>(layers);
      std::printf("| %lld | %lld | %lld | %.3f (%.3f-%.3f) | %.1f | %.1f | %.2f |\n", static_cast<long long>(B),
                  static_cast<long long>(K), static_cast<long long>(B * (K + 1)), ms[ms.size() / 2], ms.front(), ms.back(),
                  experts, shape.expected_experts(B * (K + 1)), bytes / active);
    }
  return 0;
} catch (const std::exception& ex) {
  std::fprintf(stderr, "%s\n", ex.what());
  return 1;
}
