// exspec shortlist: the tokens a target emits on a set of prompts, most frequent first, as a
// file for --draft-shortlist (model/shortlist_file.h). The target decodes the prompts greedily
// with the reference loop (model/oracle/plain_decode.h) and every token it emits is counted.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "app/args.h"
#include "app/commands.h"
#include "model/decoder.h"
#include "model/oracle/plain_decode.h"
#include "model/runtime.h"
#include "model/shortlist_file.h"

namespace exspec {
namespace {

const char* const kHelp =
    "exspec shortlist --model DIR|FILE.gguf --out FILE (--prompts-file F.jsonl | --prompt-ids \"1,2,3\" ...)\n"
    "                 [--max-tokens N (128)] [--batch B (8)] [--dtype D (int8)] [--count-prompts]\n"
    "Decodes each prompt greedily with the target and ranks the tokens it emits by count (its\n"
    "end-of-sequence tokens first); --count-prompts counts the prompts' own tokens too. Serve with\n"
    "--draft-shortlist FILE [--draft-shortlist-size N]: the draft proposes only from the first N.\n"
    "Prints, per size, the share of the counted tokens the first N cover. See docs/speculation.md.\n";

// The share of the counted tokens that the first n of the ranking cover, for n = 256, 512, ...
void print_coverage(const RankedTokens& r) {
  int64_t all = 0;
  for (int64_t c : r.counts) all += c;
  std::fprintf(stderr, "exspec shortlist: %zu distinct tokens of %lld emitted (vocabulary %lld)\n", r.tokens.size(),
               static_cast<long long>(all), static_cast<long long>(r.vocab_size));
  int64_t covered = 0;
  size_t next = 256;
  for (size_t i = 0; i < r.counts.size(); ++i) {
    covered += r.counts[i];
    if (i + 1 == next || i + 1 == r.counts.size()) {
      std::fprintf(stderr, "  first %6zu: %6.2f %%\n", i + 1, all ? 100.0 * static_cast<double>(covered) / static_cast<double>(all) : 0.0);
      next *= 2;
    }
  }
}

}  // namespace

int cmd_shortlist(int argc, char** argv, int first) {
  Args a(argc, argv, first, {"model", "out", "prompts-file", "prompt-ids", "max-tokens", "batch", "dtype"},
         {"help", "count-prompts"});
  if (a.has("help")) {
    std::cout << kHelp;
    return 0;
  }
  const std::string model_dir = a.need("model"), out = a.need("out");
  const auto prompts = read_prompt_ids(a.all("prompt-ids"), a.all("prompts-file"));
  if (prompts.empty()) throw std::invalid_argument("no prompts: give --prompts-file or --prompt-ids");
  const int64_t max_tokens = a.get_int("max-tokens", 128), batch = a.get_int("batch", 8);
  if (max_tokens < 1 || batch < 1) throw std::invalid_argument("--max-tokens and --batch must be at least 1");
  LoadOptions lo;
  lo.dtype = parse_dtype(a.get("dtype", "int8"));
  auto model = Decoder::load(model_dir, lo);
  const ModelConfig& c = model->config();
  std::vector<SeqRequest> reqs;
  for (const auto& p : prompts) reqs.push_back(SeqRequest{p, max_tokens, c.eos_ids});
  std::vector<std::vector<int64_t>> counted;
  for (const SeqResult& r : plain_decode(*model, reqs, batch)) counted.push_back(r.tokens);
  if (a.has("count-prompts")) counted.insert(counted.end(), prompts.begin(), prompts.end());
  RankedTokens r = rank_tokens(counted, c.eos_ids, c.vocab_size);
  r.source = "greedy outputs of " + model_dir + " on " + std::to_string(prompts.size()) + " prompts, " +
             std::to_string(max_tokens) + " tokens each" + (a.has("count-prompts") ? ", and the prompts" : "");
  write_ranked_tokens(out, r);
  print_coverage(r);
  std::fprintf(stderr, "exspec shortlist: wrote %s\n", out.c_str());
  return 0;
}

}  // namespace exspec
