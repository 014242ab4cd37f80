#include "model/tokenizer/grammar_vocab.h"

#include <algorithm>

#include "grammar/charset.h"
#include "model/tokenizer/byte_level.h"

namespace exspec::grammar {
namespace {

enum class Scheme { ByteLevel, SentencePiece };

bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    try {
      utf8_next(s, i);
    } catch (const std::exception&) {
      return false;
    }
  }
  return true;
}

std::string bytes_of(const std::string& token, Scheme scheme) {
  if (scheme == Scheme::ByteLevel) {
    std::string out;
    return tok::byte_level_decode(token, out) ? out : token;
  }
  if (token.size() == 6 && token.compare(0, 3, "<0x") == 0 && token[5] == '>' && hex_digit(token[3]) >= 0 && hex_digit(token[4]) >= 0)
    return std::string(1, static_cast<char>(hex_digit(token[3]) * 16 + hex_digit(token[4])));
  std::string out;
  static const std::string meta = "\xE2\x96\x81";  // ▁
  for (size_t i = 0; i < token.size();) {
    if (token.compare(i, meta.size(), meta) == 0) out += ' ', i += meta.size();
    else out += token[i++];
  }
  return out;
}

// Which reading of the token strings reproduces the tokenizer's decode on more tokens.
Scheme detect(const Tokenizer& t) {
  int votes[2] = {0, 0};
  const int64_t n = t.vocab_size();
  for (int64_t id = 0; id < n; id += std::max<int64_t>(1, n / 2000)) {
    const std::optional<std::string> s = t.id_to_token(id);
    if (!s || t.is_special(id)) continue;
    const std::string decoded = t.decode({id});
    for (Scheme k : {Scheme::ByteLevel, Scheme::SentencePiece}) {
      const std::string b = bytes_of(*s, k);
      if (!b.empty() && b[0] != ' ' && valid_utf8(b) && b == decoded) ++votes[static_cast<int>(k)];
    }
  }
  return votes[0] >= votes[1] ? Scheme::ByteLevel : Scheme::SentencePiece;
}

}  // namespace

std::shared_ptr<const Vocabulary> tokenizer_vocabulary(const Tokenizer& t, const std::vector<int64_t>& extra_end_ids) {
  const Scheme scheme = detect(t);
  const auto n = static_cast<size_t>(t.vocab_size());
  std::vector<std::string> bytes(n);
  std::vector<TokenKind> kinds(n, TokenKind::Special);
  for (size_t id = 0; id < n; ++id) {
    const std::optional<std::string> s = t.id_to_token(static_cast<int64_t>(id));
    if (!s) continue;  // a gap in the ids: never allowed
    if (t.is_special(static_cast<int64_t>(id))) {
      bytes[id] = *s;
      continue;
    }
    bytes[id] = bytes_of(*s, scheme);
    kinds[id] = TokenKind::Text;
  }
  std::vector<int64_t> ends = t.eos_ids();
  ends.insert(ends.end(), extra_end_ids.begin(), extra_end_ids.end());
  for (int64_t e : ends)
    if (e >= 0 && static_cast<size_t>(e) < n) kinds[static_cast<size_t>(e)] = TokenKind::End;
  VocabularyOptions o;
  // Does the decoder drop the first leading space? Find a text token " x" and decode it alone.
  for (size_t id = 0; id < n && scheme == Scheme::SentencePiece; ++id)
    if (kinds[id] == TokenKind::Text && bytes[id].size() >= 2 && bytes[id][0] == ' ' && bytes[id][1] != ' ' && valid_utf8(bytes[id])) {
      o.strip_first_space = t.decode({static_cast<int64_t>(id)}) == bytes[id].substr(1);
      break;
    }
  o.encode = [t](std::string_view text) {
    std::vector<int32_t> out;
    for (int64_t id : t.encode(text, false, false)) out.push_back(static_cast<int32_t>(id));
    return out;
  };
  return std::make_shared<Vocabulary>(std::move(bytes), std::move(kinds), std::move(o));
}

std::vector<int64_t> vocabulary_mismatches(const Tokenizer& t, const Vocabulary& v) {
  std::vector<int64_t> bad;
  std::optional<int64_t> first;
  for (size_t id = 0; id < v.size() && !first; ++id)
    if (v.kind(static_cast<int32_t>(id)) == TokenKind::Text && v.bytes(static_cast<int32_t>(id)) == "a") first = static_cast<int64_t>(id);
  if (!first) return {-1};
  const std::string head = t.decode({*first});
  for (size_t id = 0; id < v.size(); ++id) {
    const auto i = static_cast<int32_t>(id);
    // Tokens without bytes are never allowed (a 0xFF byte's: vocabulary.h); the rest must agree.
    if (v.kind(i) != TokenKind::Text || v.bytes(i).empty() || !valid_utf8(v.bytes(i))) continue;
    if (t.decode({*first, static_cast<int64_t>(id)}) != head + v.bytes(i)) bad.push_back(static_cast<int64_t>(id));
  }
  return bad;
}

}  // namespace exspec::grammar
