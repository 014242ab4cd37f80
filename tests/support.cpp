#include "tests/support.h"

#include "model/decoder.h"
#include "model/shortlist_file.h"
#include "model/oracle/dense_forward.h"
#include "model/oracle/plain_decode.h"
#include "model/kernels/isa.h"
#include "model/int8_matmul.h"
#include "model/runtime.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <cstdio>
#include <ftw.h>
#include <unistd.h>

namespace exspec::test {
namespace fs = std::filesystem;

namespace {
// Under EXSPEC_ISA (tests/CMakeLists.txt runs the invariance and oracle tests again under each
// cap) libtorch's dispatch is capped alike, before main and any tensor operation.
[[maybe_unused]] const bool kLibrariesCapped = (isa::cap_libraries(), true);

struct Scratch {
  std::string path;
  Scratch() {
    std::string tmpl = (fs::temp_directory_path() / "exspec-test-XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~Scratch() { remove_tree(path); }
};
}  // namespace

void remove_tree(const std::string& path) {
  auto remove_one = [](const char* p, const struct stat*, int, struct FTW*) {
    ::remove(p);
    return 0;  // go on past what cannot be removed
  };
  nftw(path.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

const std::string& device_name() {
  static const std::string name = [] {
    const char* e = std::getenv("EXSPEC_TEST_DEVICE");
    return std::string(e && *e ? e : "cpu");
  }();
  return name;
}

at::Device device() {
  static const at::Device d = parse_device(device_name());  // throws when this libtorch lacks CUDA
  return d;
}

std::string scratch_dir() {
  static Scratch s;
  return s.path;
}

std::string python() {
  const char* p = std::getenv("EXSPEC_TEST_PYTHON");
  return p && *p ? p : "/usr/bin/python3";
}

std::string model_dir(const MakeModelOptions& o) {
  static std::mutex mu;
  static std::map<std::string, std::string> made;
  const std::string key = o.arch + "-" + o.preset + "-s" + std::to_string(o.seed) + "-" + o.dtype + "-x" +
                          std::to_string(o.shards) + "-d" + std::to_string(o.damp_from) + "-" +
                          std::to_string(o.damp_std) + (o.attention_bias ? "-bias" : "") + (o.longrope ? "-longrope" : "");
  std::lock_guard<std::mutex> lock(mu);
  auto it = made.find(key);
  if (it != made.end()) return it->second;
  MakeModelOptions opts = o;
  opts.out = scratch_dir() + "/" + key;
  make_model(opts);
  made[key] = opts.out;
  return opts.out;
}

std::string model_dir(const std::string& arch, const std::string& preset, uint64_t seed) {
  MakeModelOptions o;
  o.arch = arch;
  o.preset = preset;
  o.seed = seed;
  return model_dir(o);
}

std::vector<std::vector<int64_t>> mixed_prompts(int n, int min_len, int max_len, int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> len(min_len, max_len);
  std::uniform_int_distribution<int64_t> tok(0, vocab - 1);
  std::vector<std::vector<int64_t>> out(n);
  for (auto& p : out) {
    p.resize(len(rng));
    for (auto& t : p) t = tok(rng);
  }
  return out;
}

std::shared_ptr<const Decoder> load64(const std::string& dir) { return Decoder::load(dir, {at::kDouble, device()}); }

std::vector<at::ScalarType> invariant_dtypes() {
  if (!device().is_cpu()) return {};
  return {at::kFloat, at::kChar, at::kBFloat16};
}

std::shared_ptr<const Decoder> load_as(const std::string& dir, at::ScalarType dtype) {
  return Decoder::load(dir, {dtype, at::kCPU});
}

std::shared_ptr<const Decoder> load_shortlisted(const std::string& dir, at::ScalarType dtype, at::Device device,
                                                std::vector<int64_t> shortlist) {
  LoadOptions lo{dtype, device};
  lo.head_shortlist = std::move(shortlist);
  return Decoder::load(dir, lo);
}

std::shared_ptr<const Decoder> load_screened(const std::string& dir, int64_t candidates) {
  LoadOptions lo{at::kChar, at::kCPU};
  lo.head_screen = candidates;
  return Decoder::load(dir, lo);
}

std::vector<int64_t> frequent_tokens(const std::vector<SeqResult>& results, double share, int64_t vocab) {
  std::vector<std::vector<int64_t>> outputs;
  for (const SeqResult& r : results) outputs.push_back(r.tokens);
  RankedTokens ranked = rank_tokens(outputs, {}, vocab);
  const auto n = static_cast<size_t>(std::ceil(share * static_cast<double>(ranked.tokens.size())));
  std::vector<int64_t> ids(ranked.tokens.begin(), ranked.tokens.begin() + static_cast<std::ptrdiff_t>(n));
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::string truncated_draft(const std::string& arch) {
  static std::mutex mu;
  static std::map<std::string, std::string> made;
  std::lock_guard<std::mutex> lock(mu);
  auto& dir = made[arch];
  if (dir.empty()) {
    dir = scratch_dir() + "/" + arch + "-tiny-draft1";
    make_draft(model_dir(arch), 1, dir);
  }
  return dir;
}

std::string kquant_gguf(const std::string& type, bool draft, const std::string& arch) {
  static std::mutex mu;
  static std::map<std::string, std::string> made;
  std::lock_guard<std::mutex> lock(mu);
  const std::string key = arch + "-kquant-" + type + (draft ? "-draft" : "");
  auto& out = made[key];
  if (out.empty()) {
    std::string dir = model_dir(arch, "kquant", 1);
    if (draft) {
      const std::string d = scratch_dir() + "/" + arch + "-kquant-draft1";
      if (!std::filesystem::exists(d)) make_draft(dir, 1, d);
      dir = d;
    }
    const std::string path = scratch_dir() + "/" + key + ".gguf";
    const std::string cmd = python() + " " EXSPEC_GGUF_TOOLS "/write_gguf.py " + dir + " " + path + " --type " + type;
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("failed: " + cmd);
    out = path;
  }
  return out;
}

at::Tensor alone_logits(const Decoder& m, const std::vector<int64_t>& tokens) {
  const int64_t T = static_cast<int64_t>(tokens.size());
  KVCache c = new_dense_cache(m, 1);
  return dense_forward(m, at::tensor(tokens, at::kLong).view({1, T}), at::arange(T, at::kLong).view({1, T}),
                       at::ones({1, T}, at::kLong), c)[0];
}

std::vector<at::Tensor> alone_kv(const Decoder& m, const std::vector<int64_t>& tokens) {
  const int64_t T = static_cast<int64_t>(tokens.size());
  KVCache c = new_dense_cache(m, 1);
  if (T > 0)
    dense_forward(m, at::tensor(tokens, at::kLong).view({1, T}), at::arange(T, at::kLong).view({1, T}),
                  at::ones({1, T}, at::kLong), c, 0);
  std::vector<at::Tensor> out;
  for (int64_t l = 0; l < c.num_layers(); ++l) out.push_back(at::cat({c.keys(l)[0], c.values(l)[0]}, -1).to(at::kCPU));
  return out;
}

StoppingCase stopping_requests(const Decoder& target) {
  const auto prompts = mixed_prompts(16, 1, 20, target.config().vocab_size, 23);
  std::vector<SeqRequest> plain;
  for (const auto& p : prompts) plain.push_back(SeqRequest{p, 24, {}});
  const int64_t eos = plain_decode(target, plain, 1)[1].tokens.at(3);
  StoppingCase c;
  for (size_t i = 0; i < prompts.size(); ++i)
    c.requests.push_back(SeqRequest{prompts[i], 6 + static_cast<int64_t>(i * 7 % 19), {eos}});
  c.want = plain_decode(target, c.requests, 1);
  size_t stops = 0;
  for (const auto& w : c.want) stops += w.finish == FinishReason::Stop;
  if (stops == 0 || stops == c.want.size()) throw std::logic_error("stopping_requests: every sequence ends the same way");
  return c;
}

std::string config_error(const std::string& json_text) {
  try {
    ModelConfig::parse(json_text, "config.json");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  auto pos = s.find(from);
  if (pos == std::string::npos) throw std::logic_error("test setup: '" + from + "' not found");
  return s.replace(pos, from.size(), to);
}

}  // namespace exspec::test
