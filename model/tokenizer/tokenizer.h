// Hugging Face tokenizer.json tokenizer (BPE: byte-level as GPT-2 / Llama-3 / Qwen, and
// SentencePiece-style with byte fallback as Llama-2 / Mistral), plus a streaming detokenizer.
// Torch-free. Thread-safe: a Tokenizer may be shared by threads (copies share the state).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace exspec {
namespace tok {
struct TokenizerImpl;
}

class Tokenizer {
 public:
  // path_or_dir: a tokenizer.json file, or a directory holding tokenizer.json. A
  // tokenizer_config.json (and generation_config.json, chat_template.jinja) next to it is read
  // too. Throws std::runtime_error naming the file and the unsupported component / bad field.
  // A .gguf file's tokenizer.ggml.* metadata and tokenizer.chat_template are read the same way
  // (model/tokenizer/tokenizer_gguf.cpp).
  static Tokenizer load(const std::string& path_or_dir);
  // Whether a model (a directory or a .gguf file) has a tokenizer load() reads.
  static bool available(const std::string& model);

  // add_special_tokens: BOS/EOS per tokenizer_config.json add_bos_token / add_eos_token when
  // given there, otherwise per the post_processor. allow_special: text such as "<|im_end|>" may
  // become special tokens (default no, as in the OpenAI API; non-special added tokens such as
  // Qwen3's "<think>" are always matched). Ill-formed UTF-8 is read as U+FFFD.
  std::vector<int64_t> encode(std::string_view text, bool add_special_tokens = true,
                              bool allow_special = false) const;
  // Unknown ids are skipped. No clean_up_tokenization_spaces (lossy) is applied.
  std::string decode(const std::vector<int64_t>& ids, bool skip_special_tokens = false) const;

  int64_t vocab_size() const;  // largest id + 1, added tokens included
  std::optional<int64_t> bos_id() const;
  std::vector<int64_t> eos_ids() const;  // tokenizer_config eos_token, then generation_config's
  const std::string& chat_template() const;  // empty when none (the "default" of named templates)
  // Named templates (tokenizer_config.json's list form: "default", "tool_use", ...); empty when
  // the config holds one template.
  const std::vector<std::pair<std::string, std::string>>& chat_templates() const;
  // The special tokens tokenizer_config.json names (bos_token, eos_token, unk_token, sep_token,
  // pad_token, cls_token, mask_token), as transformers' special_tokens_map passes them to a template.
  const std::vector<std::pair<std::string, std::string>>& special_tokens_map() const;
  std::optional<int64_t> model_max_length() const;  // none when absent or the "infinite" 1e30
  bool is_special(int64_t id) const;
  // A token as written in tokenizer.json (added tokens first, then the model vocab).
  std::optional<int64_t> token_to_id(std::string_view token) const;
  // The token text of an id as written in tokenizer.json.
  std::optional<std::string> id_to_token(int64_t id) const;

 private:
  explicit Tokenizer(std::shared_ptr<const tok::TokenizerImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const tok::TokenizerImpl> impl_;
  friend class IncrementalDecoder;
};

// Streaming detokenizer: push() returns the text that became final with this id (complete
// UTF-8 only, SentencePiece leading-space rules applied as in a full decode); flush() returns
// the rest and starts a new stream. The concatenation of all push() + flush() results equals
// Tokenizer::decode of all ids.
class IncrementalDecoder {
 public:
  explicit IncrementalDecoder(const Tokenizer& tokenizer, bool skip_special_tokens = false);
  ~IncrementalDecoder();
  IncrementalDecoder(IncrementalDecoder&&) noexcept;
  IncrementalDecoder& operator=(IncrementalDecoder&&) noexcept;

  std::string push(int64_t id);
  std::string flush();

 private:
  struct State;
  std::shared_ptr<const tok::TokenizerImpl> impl_;
  bool skip_special_;
  std::unique_ptr<State> state_;
};

}  // namespace exspec
