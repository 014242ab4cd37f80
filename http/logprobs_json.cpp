#include "http/logprobs_json.h"

#include <string>

#include "model/tokenizer/tokenizer.h"

namespace exspec::http {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

std::string token_text(const Tokenizer* tok, int64_t id) { return tok ? tok->decode({id}) : std::to_string(id); }

// The UTF-8 bytes of a token's text (chat's "bytes": clients rebuild multi-byte characters that
// span tokens from them).
json bytes_of(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(static_cast<int>(c));
  return b;
}

}  // namespace

ordered_json logprobs_json(const std::vector<TokenLogprob>& lps, size_t from, size_t to, bool chat,
                           const Tokenizer* tok, size_t& offset) {
  to = std::min(to, lps.size());
  if (chat) {
    ordered_json content = ordered_json::array();
    for (size_t i = from; i < to; ++i) {
      const std::string t = token_text(tok, lps[i].token);
      ordered_json top = ordered_json::array();
      for (const auto& [id, lp] : lps[i].top) {
        const std::string s = token_text(tok, id);
        top.push_back(ordered_json{{"token", s}, {"logprob", lp}, {"bytes", bytes_of(s)}});
      }
      content.push_back(ordered_json{{"token", t}, {"logprob", lps[i].logprob}, {"bytes", bytes_of(t)}, {"top_logprobs", top}});
    }
    return ordered_json{{"content", content}};
  }
  ordered_json tokens = ordered_json::array(), values = ordered_json::array(), tops = ordered_json::array(),
               offsets = ordered_json::array();
  for (size_t i = from; i < to; ++i) {
    const std::string t = token_text(tok, lps[i].token);
    tokens.push_back(t);
    values.push_back(lps[i].logprob);
    ordered_json top = ordered_json::object();
    for (const auto& [id, lp] : lps[i].top) top[token_text(tok, id)] = lp;
    tops.push_back(top);
    offsets.push_back(offset);
    offset += t.size();
  }
  return ordered_json{{"tokens", tokens}, {"token_logprobs", values}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

}  // namespace exspec::http
