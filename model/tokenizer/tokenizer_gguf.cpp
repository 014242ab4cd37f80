// A GGUF file's tokenizer (tokenizer.ggml.*) as the tokenizer.json and tokenizer_config.json it
// stands for, built by the same code as the Hugging Face path: the same ids for the same
// vocabulary, merges and pre-tokenizer.
//
// tokenizer.ggml.pre names llama.cpp's pre-tokenizer; each name served here is the Hugging Face
// pre-tokenizer, normalizer and merge rule of the tokenizers that llama.cpp gives that name.
// A SentencePiece vocabulary ("llama") becomes Llama 2's tokenizer.json, merges from its scores,
// or Gemma's where tokenizer.ggml.add_space_prefix is false.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "model/gguf/gguf_file.h"
#include "model/tokenizer/tokenizer_impl.h"

namespace exspec::tok {
namespace {

using nlohmann::json;

// The regexes of Llama 3 and Qwen2's tokenizer.json (Split, Isolated).
const char* kLlama3Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
    "\\s+(?!\\S)|\\s+";
const char* kQwen2Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
    "\\s+(?!\\S)|\\s+";

json split_then_bytes(const char* regex) {
  return json{{"type", "Sequence"},
              {"pretokenizers",
               json::array({json{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}},
                            json{{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}})}};
}

struct PreTokenizerSpec {
  json pre_tokenizer, normalizer;
  bool ignore_merges = false;
  bool add_bos = false;  // when tokenizer.ggml.add_bos_token is absent
};

// llama.cpp's names (tokenizer.ggml.pre) served, and what each stands for.
std::map<std::string, PreTokenizerSpec> pre_tokenizers() {
  std::map<std::string, PreTokenizerSpec> m;
  m["gpt-2"] = {json{{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", true}},
                json(), false, false};
  m["llama-bpe"] = {split_then_bytes(kLlama3Regex), json(), true, true};    // Llama 3: merges ignored for whole words
  m["qwen2"] = {split_then_bytes(kQwen2Regex), json{{"type", "NFC"}}, false, false};  // Qwen's tokenizer.json normalises NFC
  return m;
}

std::string known_names() {
  std::string s;
  for (const auto& [name, spec] : pre_tokenizers()) s += (s.empty() ? "" : ", ") + name;
  return s;
}

// token types (llama.cpp's llama_token_type)
constexpr int64_t kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5;

}  // namespace

// SentencePiece's merges, from its pieces' scores as llama.cpp's tokenizer reads them: a piece is
// made from any two pieces that spell it, the best-scored piece first; among the ways to spell one
// piece, by the left then the right piece's id (as tokenizers' SentencePieceExtractor orders them).
json spm_merges(const std::vector<std::string>& tokens, const std::vector<double>& scores, const std::vector<int64_t>& types,
                const std::map<std::string, int64_t>& ids) {
  struct Merge {
    double score;
    int64_t left, right;
    size_t split;
    int64_t piece;
  };
  // Hashed views of the pieces: Gemma's 262144 pieces are split 1.1 million ways.
  std::unordered_map<std::string_view, int64_t> by_text(ids.size() * 2);
  for (const auto& [text, id] : ids) by_text.emplace(text, id);
  std::vector<Merge> merges;
  for (size_t id = 0; id < tokens.size(); ++id) {
    if (types[id] != 1) continue;  // normal pieces only: bytes, controls and unknown are never made
    const std::string_view t = tokens[id];
    for (size_t k = 1; k < t.size(); ++k) {
      if ((static_cast<unsigned char>(t[k]) & 0xC0) == 0x80) continue;  // inside a UTF-8 character
      auto l = by_text.find(t.substr(0, k));
      if (l == by_text.end()) continue;
      auto r = by_text.find(t.substr(k));
      if (r != by_text.end()) merges.push_back({scores[id], l->second, r->second, k, int64_t(id)});
    }
  }
  std::stable_sort(merges.begin(), merges.end(), [](const Merge& a, const Merge& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.piece != b.piece) return a.piece < b.piece;
    return a.left != b.left ? a.left < b.left : a.right < b.right;
  });
  json out = json::array();
  for (const Merge& m : merges) out.push_back(tokens[m.piece].substr(0, m.split) + " " + tokens[m.piece].substr(m.split));
  return out;
}

// Llama 2's tokenizer.json, less its vocabulary: "▁" for spaces, no pre-tokenizer, bytes for
// characters without a piece; with add_space_prefix (llama.cpp's default for SentencePiece) also
// "▁" before the text and its strip on the way out. Gemma's files say add_space_prefix false:
// its tokenizer.json replaces spaces and prepends nothing.
void spm_components(json& tok, bool add_space_prefix) {
  json norm = json::array(), dec = json::array();
  if (add_space_prefix) norm.push_back({{"type", "Prepend"}, {"prepend", "\xe2\x96\x81"}});
  norm.push_back({{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xe2\x96\x81"}});
  dec.push_back({{"type", "Replace"}, {"pattern", {{"String", "\xe2\x96\x81"}}}, {"content", " "}});
  dec.push_back({{"type", "ByteFallback"}});
  dec.push_back({{"type", "Fuse"}});
  if (add_space_prefix) dec.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
  tok["normalizer"] = {{"type", "Sequence"}, {"normalizers", std::move(norm)}};
  tok["pre_tokenizer"] = json();
  tok["decoder"] = {{"type", "Sequence"}, {"decoders", std::move(dec)}};
}

std::shared_ptr<const TokenizerImpl> load_tokenizer_gguf(const std::string& path) {
  auto f = gguf::GgufFile::open(path);
  auto fail = [&](const std::string& what) -> void { throw std::runtime_error("tokenizer: " + path + ": " + what); };
  const std::string model = f->get_string("tokenizer.ggml.model");
  if (model != "gpt2" && model != "llama")
    fail("tokenizer.ggml.model \"" + model + "\" is not read (\"gpt2\", byte-level BPE, and \"llama\", SentencePiece, are)");
  const bool spm = model == "llama";
  const std::string pre = spm ? "gpt-2" : f->string_or("tokenizer.ggml.pre").value_or("default");
  const auto specs = pre_tokenizers();
  auto spec = specs.find(pre);
  if (spec == specs.end()) fail("pre-tokenizer \"" + pre + "\" is not known (known: " + known_names() + ")");

  const std::vector<std::string> tokens = f->get_strings("tokenizer.ggml.tokens");
  std::vector<int64_t> types(tokens.size(), 1);
  if (f->find("tokenizer.ggml.token_type")) types = f->get_ints("tokenizer.ggml.token_type");
  if (types.size() != tokens.size())
    fail(std::to_string(types.size()) + " token types for " + std::to_string(tokens.size()) + " tokens");
  json vocab = json::object(), added = json::array();
  std::map<std::string, int64_t> ids;
  for (size_t id = 0; id < tokens.size(); ++id) {
    if (types[id] == kUnused) continue;  // the converter's [PAD] fillers: no text maps to them
    // Control and unknown tokens are special (as llama.cpp matches them), user-defined ones not.
    const bool in_added = types[id] == kControl || types[id] == kUserDefined || types[id] == kUnknown;
    if (in_added)
      added.push_back({{"id", id}, {"content", tokens[id]}, {"special", types[id] != kUserDefined}, {"normalized", false},
                       {"lstrip", false}, {"rstrip", false}, {"single_word", false}});
    // SentencePiece's vocabulary holds its control pieces too (Llama 2's <s> is id 1 of both).
    if (in_added && !spm) continue;
    if (!vocab.emplace(tokens[id], id).second) fail("token \"" + tokens[id] + "\" appears twice in tokenizer.ggml.tokens");
    ids.emplace(tokens[id], int64_t(id));
  }
  json merges = json::array();
  if (spm) {
    const std::vector<double> scores = f->get_floats("tokenizer.ggml.scores");
    if (scores.size() != tokens.size()) fail(std::to_string(scores.size()) + " scores for " + std::to_string(tokens.size()) + " tokens");
    merges = spm_merges(tokens, scores, types, ids);
  } else if (f->find("tokenizer.ggml.merges")) {
    for (auto& m : f->get_strings("tokenizer.ggml.merges")) merges.push_back(std::move(m));
  }
  json tok{{"model", {{"type", "BPE"}, {"vocab", std::move(vocab)}, {"merges", std::move(merges)},
                      {"ignore_merges", spec->second.ignore_merges}, {"byte_fallback", spm}, {"fuse_unk", spm}}},
           {"pre_tokenizer", spec->second.pre_tokenizer},
           {"normalizer", spec->second.normalizer},
           {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}},
           {"added_tokens", std::move(added)}};
  if (spm) {
    spm_components(tok, f->bool_or("tokenizer.ggml.add_space_prefix").value_or(true));
    if (auto unk = f->int_or("tokenizer.ggml.unknown_token_id"); unk && *unk >= 0 && *unk < int64_t(tokens.size()))
      tok["model"]["unk_token"] = tokens[*unk];
  }

  json cfg = json::object();
  auto token_of = [&](const char* key) -> std::optional<std::string> {
    auto id = f->int_or(std::string("tokenizer.ggml.") + key);
    if (!id) return std::nullopt;
    if (*id < 0 || *id >= int64_t(tokens.size())) fail(std::string("tokenizer.ggml.") + key + " " + std::to_string(*id) + " is not a token id");
    return tokens[*id];
  };
  for (auto [key, field] : {std::pair{"bos_token_id", "bos_token"}, {"eos_token_id", "eos_token"},
                            {"unknown_token_id", "unk_token"}, {"padding_token_id", "pad_token"}})
    if (auto t = token_of(key)) cfg[field] = *t;
  cfg["add_bos_token"] = f->bool_or("tokenizer.ggml.add_bos_token").value_or(spm || spec->second.add_bos);
  cfg["add_eos_token"] = f->bool_or("tokenizer.ggml.add_eos_token").value_or(false);
  if (auto t = f->string_or("tokenizer.chat_template")) cfg["chat_template"] = *t;
  try {
    auto t = build_tokenizer(tok, cfg);
    if (auto eot = f->int_or("tokenizer.ggml.eot_token_id"); eot && std::find(t->eos.begin(), t->eos.end(), *eot) == t->eos.end())
      t->eos.push_back(*eot);
    return t;
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string(e.what()) + " [in " + path + "]");
  }
}

}  // namespace exspec::tok
