// A GGUF file's tokenizer (tokenizer.ggml.*) as the tokenizer.json and tokenizer_config.json it
// stands for, built by the same code as the Hugging Face path: the same ids for the same
// vocabulary, merges and pre-tokenizer.
//
// tokenizer.ggml.pre names llama.cpp's pre-tokenizer; each name served here is the Hugging Face
// pre-tokenizer, normalizer and merge rule of the tokenizers that llama.cpp gives that name.
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

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
constexpr int64_t kControl = 3, kUserDefined = 4, kUnused = 5;

}  // namespace

std::shared_ptr<const TokenizerImpl> load_tokenizer_gguf(const std::string& path) {
  auto f = gguf::GgufFile::open(path);
  auto fail = [&](const std::string& what) -> void { throw std::runtime_error("tokenizer: " + path + ": " + what); };
  const std::string model = f->get_string("tokenizer.ggml.model");
  if (model != "gpt2")
    fail("tokenizer.ggml.model \"" + model + "\" is not read yet (\"gpt2\", byte-level BPE, is; SentencePiece \"llama\" is to come)");
  const std::string pre = f->string_or("tokenizer.ggml.pre").value_or("default");
  const auto specs = pre_tokenizers();
  auto spec = specs.find(pre);
  if (spec == specs.end()) fail("pre-tokenizer \"" + pre + "\" is not known (known: " + known_names() + ")");

  const std::vector<std::string> tokens = f->get_strings("tokenizer.ggml.tokens");
  std::vector<int64_t> types(tokens.size(), 1);
  if (f->find("tokenizer.ggml.token_type")) types = f->get_ints("tokenizer.ggml.token_type");
  if (types.size() != tokens.size())
    fail(std::to_string(types.size()) + " token types for " + std::to_string(tokens.size()) + " tokens");
  json vocab = json::object(), added = json::array();
  for (size_t id = 0; id < tokens.size(); ++id) {
    if (types[id] == kUnused) continue;  // the converter's [PAD] fillers: no text maps to them
    if (types[id] == kControl || types[id] == kUserDefined)
      added.push_back({{"id", id}, {"content", tokens[id]}, {"special", types[id] == kControl}, {"normalized", false},
                       {"lstrip", false}, {"rstrip", false}, {"single_word", false}});
    else if (!vocab.emplace(tokens[id], id).second)
      fail("token \"" + tokens[id] + "\" appears twice in tokenizer.ggml.tokens");
  }
  json merges = json::array();
  if (f->find("tokenizer.ggml.merges"))
    for (auto& m : f->get_strings("tokenizer.ggml.merges")) merges.push_back(std::move(m));
  json tok{{"model", {{"type", "BPE"}, {"vocab", std::move(vocab)}, {"merges", std::move(merges)},
                      {"ignore_merges", spec->second.ignore_merges}, {"byte_fallback", false}}},
           {"pre_tokenizer", spec->second.pre_tokenizer},
           {"normalizer", spec->second.normalizer},
           {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}},
           {"added_tokens", std::move(added)}};

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
  cfg["add_bos_token"] = f->bool_or("tokenizer.ggml.add_bos_token").value_or(spec->second.add_bos);
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
