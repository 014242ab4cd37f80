// A draft's shortlist as a file (issue 62): the tokens a target emits, most frequent first, as
// counted by `exspec shortlist` over a set of prompts. The server takes the first N
// (--draft-shortlist FILE, --draft-shortlist-size N) and the draft's head multiplies only those
// rows (model/shortlist_head.h). Plain C++: no torch.
//
// The file is JSON: {"format": "exspec-shortlist", "vocab_size": V, "source": "...",
//                    "tokens": [id, ...], "counts": [n, ...]} (tokens ranked, counts beside them).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace exspec {

struct RankedTokens {
  std::vector<int64_t> tokens;  // most frequent first; ties by ascending id
  std::vector<int64_t> counts;  // beside tokens: how often each was emitted (`first` ones: their count too)
  int64_t vocab_size = 0;
  std::string source;  // what was counted, for the reader
};

// Ranks every token that occurs in `outputs` by count; the `first` ids (the end-of-sequence
// tokens, say) lead whatever their count. Ids must be in [0, vocab_size).
RankedTokens rank_tokens(const std::vector<std::vector<int64_t>>& outputs, const std::vector<int64_t>& first,
                         int64_t vocab_size);

void write_ranked_tokens(const std::string& path, const RankedTokens& r);
RankedTokens read_ranked_tokens(const std::string& path);  // std::invalid_argument naming the file

// The first `size` tokens of the file (0: all of them), ascending, for a draft of `vocab_size`:
// refused, naming the file, when the file was counted over another vocabulary size or has none.
std::vector<int64_t> read_shortlist(const std::string& path, int64_t size, int64_t vocab_size);

// The share of `outputs`' tokens that are in the ascending `shortlist`: how often the target's
// own choice is a token the draft can propose at all (the acceptance's ceiling).
double shortlist_coverage(const std::vector<std::vector<int64_t>>& outputs, const std::vector<int64_t>& shortlist);

}  // namespace exspec
