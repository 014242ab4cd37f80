// exspec check: the first thing to run on a new checkpoint. Decodes a few prompts along every
// serving path's tensor code and compares each token with the argmax of one forward over the
// whole sequence (model/tools/consistency.h); names the first path, prompt and position that differ.
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include "app/args.h"
#include "app/commands.h"
#include "model/tools/consistency.h"
#include "model/decoder.h"
#include "model/generation_defaults.h"
#include "model/gguf_config.h"
#include "model/gguf/gguf_file.h"
#include "model/io_util.h"
#include "model/kernels/isa.h"
#include "model/runtime.h"
#include "model/tokenizer/tokenizer.h"

namespace exspec {
namespace {

// Four prompts of lengths 1, 4, 9 and 17 spread over the vocabulary: a padded batch of them
// pads every row but one, and a chunk of 3 splits all but the first.
std::vector<std::vector<int64_t>> default_prompts(int64_t vocab) {
  std::vector<std::vector<int64_t>> out;
  int64_t x = 1;
  for (int64_t len : {1, 4, 9, 17}) {
    std::vector<int64_t> p;
    for (int64_t t = 0; t < len; ++t) p.push_back((x = (x * 48271 + 11) % 2147483647) % vocab);
    out.push_back(p);
  }
  return out;
}

std::string describe(const ModelConfig& c) {
  std::ostringstream s;
  s << arch_name(c.arch) << ", " << c.num_layers << " layers, " << c.num_heads << " heads / " << c.num_kv_heads
    << " kv heads, head_dim " << c.head_dim;
  if (c.rope_interleaved || c.rotary_dim() < c.head_dim) s << ", rotary " << c.partial_rotary_factor;
  if (c.sliding_window > 0) {
    int64_t sliding = 0;
    for (int64_t i = 0; i < c.num_layers; ++i) sliding += c.layer_kind(i).window == AttentionWindow::Sliding;
    s << ", sliding window " << c.sliding_window << " on " << sliding << " of " << c.num_layers << " layers";
    if (c.rope_local_theta > 0) s << " (their rope base " << c.rope_local_theta << ")";
  }
  if (const RopeScaling& r = c.rope_scaling; r.type == "longrope")
    s << ", longrope: " << (r.long_context ? "long" : "short") << " factors, attention factor " << r.attention_factor
      << ", context " << c.max_position_embeddings << " (original " << r.original_max_position_embeddings << ")";
  if (c.activation == Activation::GeluTanh) s << ", GELU-tanh";
  if (c.architecture_row().norm == NormForm::Gemma) s << ", (1 + w) norms";
  if (c.query_pre_attn_scalar > 0) s << ", query_pre_attn_scalar " << c.query_pre_attn_scalar;
  if (c.embedding_scale() != 1.0) s << ", embeddings times " << c.embedding_scale();
  if (c.attn_logit_softcapping > 0) s << ", scores capped at " << c.attn_logit_softcapping;
  if (c.final_logit_softcapping > 0) s << ", logits capped at " << c.final_logit_softcapping;
  if (const ExpertsConfig& e = c.experts; e.num_experts > 0) {
    const int64_t dense = static_cast<int64_t>(e.dense_layers.size());
    s << ", " << e.num_experts << " experts of " << e.intermediate_size << ", " << e.top_k << " a token"
      << (e.norm_topk_prob ? " (weights renormalised)" : "") << " on " << c.num_layers - dense << " of " << c.num_layers << " layers";
  }
  return s.str();
}

void usage() {
  std::cout << "exspec check --model DIR|FILE.gguf [--dtype float64|float32|bfloat16|float16|int8] [--device cpu|cuda]\n"
               "             [--longrope short|long] [--max-tokens N] [--prefill-chunk N] [--verify-width N]\n"
               "             [--prompt \"text\" ... | --prompt-ids \"1,2,3\" ... | --prompts-file F.jsonl]\n"
               "Decodes the prompts greedily along each serving path's tensor code (KV cache at batch 1 and\n"
               "padded; the in-place slots, one row and rows together, chunked prefill; verification-shaped\n"
               "forwards of --verify-width positions) and checks every token against the argmax of one forward\n"
               "over the whole sequence without a cache. Exit 0: every path agrees; 1: the first difference\n"
               "is printed (path, prompt, token, both ids, the full forward's margin). float64 (the default)\n"
               "is exact; in lower precisions a difference with a tiny margin can be rounding.\n"
               "Default prompts: four of 1, 4, 9 and 17 ids; EOS does not stop a prompt (default 24 tokens).\n"
               "A .gguf file (exspec check FILE.gguf, or --model FILE.gguf) is described first: architecture,\n"
               "tensor types by count, tokenizer, chat template, and the bytes its weights take once loaded.\n"
               "See docs/models.md.\n";
}

}  // namespace

int cmd_check(int argc, char** argv, int first) {
  // `exspec check FILE.gguf`: the file may come first, without --model.
  std::vector<char*> args(argv, argv + argc);
  std::string positional;
  if (first < argc && gguf::is_gguf_path(argv[first])) positional = argv[first], args.erase(args.begin() + first);
  argc = static_cast<int>(args.size()), argv = args.data();
  Args a(argc, argv, first,
         {"model", "dtype", "device", "longrope", "max-tokens", "prefill-chunk", "verify-width", "prompt", "prompt-ids",
          "prompts-file", "threads", "torch-threads"},
         {"help"});
  if (a.has("help")) {
    usage();
    return 0;
  }
  configure_threads(static_cast<int>(a.get_int("torch-threads", 1)), static_cast<int>(a.get_int("threads", 0)));
  LoadOptions lo;
  lo.dtype = parse_dtype(a.get("dtype", "float64"));
  lo.device = parse_device(a.get("device", "cpu"));
  lo.long_context = parse_longrope(a.get("longrope", "short"));
  const std::string dir = positional.empty() ? a.need("model") : positional;
  if (gguf::is_gguf_path(dir))
    for (const std::string& line : gguf::describe_file(*gguf::GgufFile::open(dir))) std::cout << "gguf: " << line << "\n";
  auto model = Decoder::load(dir, lo);
  if (gguf::is_gguf_path(dir))
    std::cout << "gguf: weights in memory: " << model->weight_bytes() << " bytes as " << dtype_name(lo.dtype) << "\n";
  std::vector<std::vector<int64_t>> prompts;
  if (!a.all("prompt").empty()) {
    if (!Tokenizer::available(dir)) throw std::invalid_argument("--prompt needs " + dir + "/tokenizer.json");
    Tokenizer tok = Tokenizer::load(dir);
    for (const auto& text : a.all("prompt")) prompts.push_back(tok.encode(text));
  }
  for (auto& p : read_prompt_ids(a.all("prompt-ids"), a.all("prompts-file"))) prompts.push_back(std::move(p));
  if (prompts.empty()) prompts = default_prompts(model->config().vocab_size);
  ConsistencyOptions o;
  o.max_tokens = a.get_int("max-tokens", o.max_tokens);
  o.chunk = a.get_int("prefill-chunk", o.chunk);
  o.verify_width = a.get_int("verify-width", o.verify_width);

  std::cout << "check: " << dir << " (" << describe(model->config()) << "), " << dtype_name(lo.dtype) << " on "
            << lo.device.str() << ", " << prompts.size() << " prompts x " << o.max_tokens << " tokens\n";
  if (lo.device.is_cpu()) std::cout << "check: CPU kernels: " << isa::describe() << "\n";
  // What serve, batch and generate take for the sampling fields a request leaves out (their
  // --generation-config auto); a value no request could send fails here, before serving.
  const std::string defaults = read_generation_defaults(dir).describe();
  std::cout << "check: sampling defaults (" << (gguf::is_gguf_path(dir) ? "general.sampling.*" : "generation_config.json")
            << "): " << defaults << "\n";
  std::optional<std::string> failed;
  int64_t checked = 0;
  for (const PathRun& run : run_paths(*model, prompts, o)) {
    std::cout << "  " << std::left << std::setw(58) << run.name;
    const std::optional<Divergence> d = first_divergence(*model, prompts, run);
    if (!d) {
      for (const auto& p : run.predicted) checked += static_cast<int64_t>(p.size());
      std::cout << "ok\n";
      continue;
    }
    std::cout << "DIFFERS at prompt " << d->prompt << ", token " << d->token << " (position " << d->position
              << "): this path " << d->path_id << ", full forward " << d->full_id << " (full forward's margin "
              << std::setprecision(3) << d->margin << ", " << d->gap << " above this path's token)\n";
    if (!failed) failed = run.name;
  }
  if (failed) {
    std::cout << "check: FAILED: \"" << *failed << "\" is the first path that differs from the full forward\n";
    return 1;
  }
  std::cout << "check: passed: every path equals the full forward at all " << checked << " tokens\n";
  return 0;
}

}  // namespace exspec
