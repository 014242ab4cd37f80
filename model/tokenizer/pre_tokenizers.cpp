#include "model/tokenizer/pre_tokenizers.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/tokenizer/json_util.h"

namespace exspec::tok {
namespace {

// GPT-2's split regex, used by ByteLevel with use_regex = true.
constexpr const char* kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

Pattern regex_pattern(const char* re) {
  Pattern p;
  p.regex = std::make_shared<Regex>(re);
  return p;
}

}  // namespace

std::unique_ptr<PreTokenizer> PreTokenizer::from_json(const nlohmann::json& j) {
  if (j.is_null()) return nullptr;
  auto p = std::make_unique<PreTokenizer>();
  p->add_steps(j);
  return p;
}

void PreTokenizer::add_steps(const nlohmann::json& j) {
  const std::string type = json_type(j, "pre_tokenizer");
  if (type == "Sequence") {
    for (const auto& sub : json_array(j, "pretokenizers", "pre_tokenizer Sequence")) add_steps(sub);
    return;
  }
  Step s{};
  if (type == "Split") {
    s.kind = Kind::kSplit;
    s.pattern = json_pattern(j, "pre_tokenizer Split");
    s.behavior = json_behavior(j, "pre_tokenizer Split");
    s.invert = j.value("invert", false);
    s.use_pattern = true;
  } else if (type == "ByteLevel") {
    s.kind = Kind::kByteLevel;
    s.add_prefix_space = j.value("add_prefix_space", true);
    s.use_pattern = j.value("use_regex", true);
    if (s.use_pattern) s.pattern = regex_pattern(kGpt2Regex);
    byte_level_ = true;
  } else if (type == "Metaspace") {
    s.kind = Kind::kMetaspace;
    s.replacement = j.value("replacement", std::string("\xE2\x96\x81"));
    if (j.contains("prepend_scheme") && j["prepend_scheme"].is_string()) {
      const std::string ps = j["prepend_scheme"].get<std::string>();
      if (ps == "always") s.prepend = 2;
      else if (ps == "first") s.prepend = 1;
      else if (ps == "never") s.prepend = 0;
      else throw std::runtime_error("tokenizer: pre_tokenizer Metaspace: unknown prepend_scheme '" + ps + "'");
    } else {
      s.prepend = j.value("add_prefix_space", true) ? 2 : 0;
    }
    s.split = j.value("split", true);
    s.pattern.literal = s.replacement;
  } else if (type == "Digits") {
    s.kind = Kind::kSplit;
    s.pattern = regex_pattern(j.value("individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)");
    s.use_pattern = true;
  } else if (type == "WhitespaceSplit") {
    s.kind = Kind::kSplit;
    s.pattern = regex_pattern(R"(\s+)");
    s.behavior = SplitBehavior::kRemoved;
    s.use_pattern = true;
  } else if (type == "Whitespace") {
    s.kind = Kind::kSplit;
    s.pattern = regex_pattern(R"(\w+|[^\w\s]+)");
    s.behavior = SplitBehavior::kRemoved;
    s.invert = true;
    s.use_pattern = true;
  } else {
    throw std::runtime_error(
        "tokenizer: unsupported pre_tokenizer type '" + type +
        "' (supported: Sequence, Split, ByteLevel, Metaspace, Digits, Whitespace, WhitespaceSplit)");
  }
  steps_.push_back(std::move(s));
}

void PreTokenizer::split(std::string_view s, bool at_start, std::vector<std::string_view>& words,
                         std::deque<std::string>& arena) const {
  std::vector<std::string_view> cur{s}, next;
  for (const Step& st : steps_) {
    next.clear();
    for (size_t i = 0; i < cur.size(); ++i) {
      std::string_view piece = cur[i];
      const bool piece_at_start = at_start && i == 0 && piece.data() == s.data();
      switch (st.kind) {
        case Kind::kSplit:
          split_pieces(piece, st.pattern, st.behavior, st.invert, next);
          break;
        case Kind::kByteLevel:
          if (st.add_prefix_space && (piece.empty() || piece[0] != ' ')) {
            arena.push_back(" " + std::string(piece));
            piece = arena.back();
          }
          if (st.use_pattern) split_pieces(piece, st.pattern, SplitBehavior::kIsolated, false, next);
          else if (!piece.empty()) next.push_back(piece);
          break;
        case Kind::kMetaspace: {
          std::string t;
          t.reserve(piece.size() + 3);
          for (char c : piece) {
            if (c == ' ') t += st.replacement;
            else t.push_back(c);
          }
          const bool starts = t.compare(0, st.replacement.size(), st.replacement) == 0;
          if (!starts && (st.prepend == 2 || (st.prepend == 1 && piece_at_start)))
            t.insert(0, st.replacement);
          arena.push_back(std::move(t));
          const std::string& owned = arena.back();
          if (st.split) split_pieces(owned, st.pattern, SplitBehavior::kMergedWithNext, false, next);
          else if (!owned.empty()) next.push_back(owned);
          break;
        }
      }
    }
    cur.swap(next);
  }
  for (std::string_view w : cur)
    if (!w.empty()) words.push_back(w);
}

}  // namespace exspec::tok
