// Internal: the assembled tokenizer pipeline shared by Tokenizer and IncrementalDecoder.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/tokenizer/added_tokens.h"
#include "model/tokenizer/bpe_model.h"
#include "model/tokenizer/decoders.h"
#include "model/tokenizer/normalizers.h"
#include "model/tokenizer/pre_tokenizers.h"

namespace exspec::tok {

struct TokenizerImpl {
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  std::unique_ptr<BpeModel> model;
  AddedTokens added;
  DecoderPipeline decoder;
  std::vector<int64_t> prefix, suffix;  // add_special_tokens
  std::optional<int64_t> bos, model_max_length;
  std::vector<int64_t> eos;
  std::string chat_template;
  // tokenizer_config.json's named templates ([{"name", "template"}]: "default", "tool_use", ...).
  std::vector<std::pair<std::string, std::string>> chat_templates;
  // tokenizer_config.json's special tokens by name (bos_token, eos_token, unk_token, ...): what
  // transformers' special_tokens_map gives a chat template.
  std::vector<std::pair<std::string, std::string>> special_tokens_map;
  int64_t vocab_size = 0;

  // Appends the ids of text (valid UTF-8), without BOS/EOS.
  void encode_text(std::string_view text, bool allow_special, std::vector<int64_t>& out) const;
  void decode_token(DecoderPipeline::State& st, int64_t id, bool skip_special, std::string& out) const;
  std::optional<int64_t> token_to_id(std::string_view token) const;
};

// Reads tokenizer.json (+ tokenizer_config.json etc.). Throws std::runtime_error.
std::shared_ptr<const TokenizerImpl> load_tokenizer(const std::string& path_or_dir);
// From a tokenizer.json's JSON and a tokenizer_config.json's (an empty object when none): what
// load_tokenizer reads from files, and what a GGUF file's metadata is turned into.
std::shared_ptr<TokenizerImpl> build_tokenizer(const nlohmann::json& tokenizer_json, const nlohmann::json& config);
// A .gguf file's tokenizer.ggml.* metadata (model/tokenizer/tokenizer_gguf.cpp).
std::shared_ptr<const TokenizerImpl> load_tokenizer_gguf(const std::string& path);

}  // namespace exspec::tok
