#include "model/shortlist_file.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "model/io_util.h"

namespace exspec {

RankedTokens rank_tokens(const std::vector<std::vector<int64_t>>& outputs, const std::vector<int64_t>& first,
                         int64_t vocab_size) {
  std::map<int64_t, int64_t> count;
  auto check = [&](int64_t t) {
    if (t < 0 || t >= vocab_size)
      throw std::invalid_argument("token " + std::to_string(t) + " is outside a vocabulary of " + std::to_string(vocab_size));
  };
  for (const auto& o : outputs)
    for (int64_t t : o) check(t), ++count[t];
  RankedTokens r;
  r.vocab_size = vocab_size;
  for (int64_t t : first) {
    check(t);
    if (std::find(r.tokens.begin(), r.tokens.end(), t) != r.tokens.end()) continue;
    r.tokens.push_back(t);
    r.counts.push_back(count.count(t) ? count[t] : 0);
  }
  std::vector<std::pair<int64_t, int64_t>> rest;  // (count, id)
  for (const auto& [t, n] : count)
    if (std::find(first.begin(), first.end(), t) == first.end()) rest.emplace_back(n, t);
  std::stable_sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [n, t] : rest) r.tokens.push_back(t), r.counts.push_back(n);
  return r;
}

void write_ranked_tokens(const std::string& path, const RankedTokens& r) {
  nlohmann::ordered_json j{{"format", "exspec-shortlist"}, {"vocab_size", r.vocab_size}, {"source", r.source},
                           {"tokens", r.tokens}, {"counts", r.counts}};
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << j.dump() << "\n";
  if (!f) throw std::runtime_error("cannot write " + path);
}

RankedTokens read_ranked_tokens(const std::string& path) {
  RankedTokens r;
  try {
    const nlohmann::json j = nlohmann::json::parse(read_text_file(path));
    if (j.value("format", std::string()) != "exspec-shortlist") throw std::invalid_argument("not an exspec-shortlist file");
    r.vocab_size = j.at("vocab_size").get<int64_t>();
    r.source = j.value("source", std::string());
    r.tokens = j.at("tokens").get<std::vector<int64_t>>();
    r.counts = j.value("counts", std::vector<int64_t>());
  } catch (const std::exception& e) {
    throw std::invalid_argument("draft shortlist " + path + ": " + e.what());
  }
  return r;
}

std::vector<int64_t> read_shortlist(const std::string& path, int64_t size, int64_t vocab_size) {
  const RankedTokens r = read_ranked_tokens(path);
  if (r.vocab_size != vocab_size)
    throw std::invalid_argument("draft shortlist " + path + " was counted over a vocabulary of " + std::to_string(r.vocab_size) +
                                " tokens, the draft has " + std::to_string(vocab_size));
  if (r.tokens.empty()) throw std::invalid_argument("draft shortlist " + path + " holds no token");
  if (size < 0) throw std::invalid_argument("draft shortlist size " + std::to_string(size) + " is negative");
  const size_t n = size == 0 ? r.tokens.size() : std::min(r.tokens.size(), static_cast<size_t>(size));
  std::vector<int64_t> ids(r.tokens.begin(), r.tokens.begin() + static_cast<std::ptrdiff_t>(n));
  std::sort(ids.begin(), ids.end());
  if (std::adjacent_find(ids.begin(), ids.end()) != ids.end())
    throw std::invalid_argument("draft shortlist " + path + " names a token twice");
  return ids;
}

double shortlist_coverage(const std::vector<std::vector<int64_t>>& outputs, const std::vector<int64_t>& shortlist) {
  int64_t in = 0, all = 0;
  for (const auto& o : outputs)
    for (int64_t t : o) in += std::binary_search(shortlist.begin(), shortlist.end(), t), ++all;
  return all ? static_cast<double>(in) / static_cast<double>(all) : 0.0;
}

}  // namespace exspec
