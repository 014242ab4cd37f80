#include "model/tokenizer/tokenizer.h"

#include "model/gguf/gguf_file.h"
#include "model/io_util.h"

#include <deque>

#include "model/tokenizer/tokenizer_impl.h"
#include "model/tokenizer/utf8.h"

namespace exspec {
namespace tok {

void TokenizerImpl::encode_text(std::string_view text, bool allow_special, std::vector<int64_t>& out) const {
  std::vector<Segment> segments, sub;
  std::vector<std::string_view> words;
  std::deque<std::string> arena;
  added.split(text, false, allow_special, segments);
  auto encode_words = [&](std::string_view s, bool at_start) {
    if (!pre_tokenizer) {
      model->encode_word(s, out);
      return;
    }
    words.clear();
    arena.clear();
    pre_tokenizer->split(s, at_start, words, arena);
    for (std::string_view w : words) model->encode_word(w, out);
  };
  for (const Segment& seg : segments) {
    if (seg.token) {
      out.push_back(seg.token->id);
      continue;
    }
    const bool at_start = seg.text.data() == text.data();
    std::string norm;
    std::string_view v = seg.text;
    if (normalizer) {
      norm = normalizer->normalize(v);
      v = norm;
    }
    if (!added.has_normalized()) {
      encode_words(v, at_start);
      continue;
    }
    sub.clear();
    added.split(v, true, allow_special, sub);
    for (const Segment& s : sub) {
      if (s.token) out.push_back(s.token->id);
      else encode_words(s.text, at_start && s.text.data() == v.data());
    }
  }
}

void TokenizerImpl::decode_token(DecoderPipeline::State& st, int64_t id, bool skip_special,
                                 std::string& out) const {
  if (const AddedToken* a = added.by_id(id)) {
    if (skip_special && a->special) return;
    decoder.push(st, a->content, true, out);
    return;
  }
  if (const std::string* t = model->id_to_token(id)) decoder.push(st, *t, false, out);
}

std::optional<int64_t> TokenizerImpl::token_to_id(std::string_view token) const {
  if (const AddedToken* a = added.by_content(token)) return a->id;
  return model->token_to_id(token);
}

}  // namespace tok

Tokenizer Tokenizer::load(const std::string& path_or_dir) { return Tokenizer(tok::load_tokenizer(path_or_dir)); }

bool Tokenizer::available(const std::string& model) {
  if (gguf::is_gguf_path(model)) return file_exists(model);
  return file_exists(model + "/tokenizer.json");
}

std::vector<int64_t> Tokenizer::encode(std::string_view text, bool add_special_tokens, bool allow_special) const {
  std::string fixed;
  if (!tok::utf8_is_valid(text)) {
    fixed = tok::utf8_lossy(text);
    text = fixed;
  }
  std::vector<int64_t> ids;
  ids.reserve(text.size() / 3 + 4);
  if (add_special_tokens) ids = impl_->prefix;
  impl_->encode_text(text, allow_special, ids);
  if (add_special_tokens) ids.insert(ids.end(), impl_->suffix.begin(), impl_->suffix.end());
  return ids;
}

std::string Tokenizer::decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const {
  tok::DecoderPipeline::State st = impl_->decoder.start();
  std::string out;
  for (int64_t id : ids) impl_->decode_token(st, id, skip_special_tokens, out);
  impl_->decoder.flush(st, out);
  return out;
}

int64_t Tokenizer::vocab_size() const { return impl_->vocab_size; }
std::optional<int64_t> Tokenizer::bos_id() const { return impl_->bos; }
std::vector<int64_t> Tokenizer::eos_ids() const { return impl_->eos; }
const std::string& Tokenizer::chat_template() const { return impl_->chat_template; }
const std::vector<std::pair<std::string, std::string>>& Tokenizer::chat_templates() const {
  return impl_->chat_templates;
}
const std::vector<std::pair<std::string, std::string>>& Tokenizer::special_tokens_map() const {
  return impl_->special_tokens_map;
}
std::optional<int64_t> Tokenizer::model_max_length() const { return impl_->model_max_length; }

bool Tokenizer::is_special(int64_t id) const {
  const tok::AddedToken* a = impl_->added.by_id(id);
  return a && a->special;
}

std::optional<int64_t> Tokenizer::token_to_id(std::string_view token) const { return impl_->token_to_id(token); }

std::optional<std::string> Tokenizer::id_to_token(int64_t id) const {
  if (const tok::AddedToken* a = impl_->added.by_id(id)) return a->content;
  return impl_->model->token_text(id);
}

struct IncrementalDecoder::State {
  tok::DecoderPipeline::State st;
};

IncrementalDecoder::IncrementalDecoder(const Tokenizer& tokenizer, bool skip_special_tokens)
    : impl_(tokenizer.impl_), skip_special_(skip_special_tokens),
      state_(std::make_unique<State>(State{impl_->decoder.start()})) {}
IncrementalDecoder::~IncrementalDecoder() = default;
IncrementalDecoder::IncrementalDecoder(IncrementalDecoder&&) noexcept = default;
IncrementalDecoder& IncrementalDecoder::operator=(IncrementalDecoder&&) noexcept = default;

std::string IncrementalDecoder::push(int64_t id) {
  std::string out;
  impl_->decode_token(state_->st, id, skip_special_, out);
  return out;
}

std::string IncrementalDecoder::flush() {
  std::string out;
  impl_->decoder.flush(state_->st, out);
  state_->st = impl_->decoder.start();
  return out;
}

}  // namespace exspec
