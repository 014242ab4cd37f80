#include "model/tokenizer/decoders.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/tokenizer/byte_level.h"
#include "model/tokenizer/json_util.h"
#include "model/tokenizer/utf8.h"

namespace exspec::tok {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

[[noreturn]] void unsupported(const std::string& what) {
  throw std::runtime_error("tokenizer: unsupported decoder: " + what);
}

}  // namespace

DecoderPipeline DecoderPipeline::from_json(const nlohmann::json& j, bool vocab_raw_bytes) {
  DecoderPipeline d;
  d.raw_bytes_ = vocab_raw_bytes;
  if (j.is_null()) {
    d.none_ = true;
    return d;
  }
  bool fused = false;
  d.add(j, fused);
  return d;
}

void DecoderPipeline::add(const nlohmann::json& j, bool& fused) {
  const std::string type = json_type(j, "decoder");
  if (type == "Sequence") {
    for (const auto& sub : json_array(j, "decoders", "decoder Sequence")) add(sub, fused);
    return;
  }
  if (type == "Fuse") { fused = true; return; }
  if (type == "Strip") {
    if (!fused) unsupported("Strip must follow Fuse");
    if (strip_) unsupported("more than one Strip");
    strip_ = true;
    strip_content_ = json_string(j, "content", "decoder Strip");
    if (!utf8_is_valid(strip_content_) || strip_content_.empty() ||
        utf8_char_len(static_cast<unsigned char>(strip_content_[0])) != strip_content_.size())
      unsupported("Strip content must be one character");
    strip_start_ = j.value("start", size_t(0));
    strip_stop_ = j.value("stop", size_t(0));
    return;
  }
  if (fused || strip_) unsupported("'" + type + "' after Fuse/Strip");
  Step s{};
  if (type == "Replace") {
    s.kind = Kind::kReplace;
    s.pattern = json_pattern(j, "decoder Replace");
    s.content = json_string(j, "content", "decoder Replace");
  } else if (type == "Metaspace") {
    s.kind = Kind::kMetaspace;
    s.content = j.value("replacement", std::string("\xE2\x96\x81"));
    if (j.contains("prepend_scheme") && j["prepend_scheme"].is_string())
      s.strip_first = j["prepend_scheme"].get<std::string>() != "never";
    else
      s.strip_first = j.value("add_prefix_space", true);
  } else if (type == "ByteFallback") {
    s.kind = Kind::kByteFallback;
  } else if (type == "ByteLevel") {
    s.kind = Kind::kByteLevel;
  } else {
    unsupported("type '" + type +
                "' (supported: Sequence, ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace)");
  }
  if (s.kind == Kind::kReplace || s.kind == Kind::kMetaspace) {
    for (const Step& prev : steps_)
      if (prev.kind == Kind::kByteFallback || prev.kind == Kind::kByteLevel)
        unsupported("'" + type + "' after ByteFallback/ByteLevel");
  }
  steps_.push_back(std::move(s));
}

void DecoderPipeline::push(State& st, std::string_view token, bool added, std::string& out) const {
  if (none_) {
    if (st.tokens) st.pending.push_back(' ');
    st.pending.append(token);
  } else {
    // Model tokens of a byte-level vocabulary are raw bytes; text steps need the GPT-2 form.
    bool bytes_form = raw_bytes_ && !added;
    std::string t(token);
    for (const Step& s : steps_) {
      switch (s.kind) {
        case Kind::kReplace:
          if (bytes_form) { t = byte_level_encode(t); bytes_form = false; }
          t = replace_all(t, s.pattern, s.content);
          break;
        case Kind::kMetaspace: {
          if (bytes_form) { t = byte_level_encode(t); bytes_form = false; }
          Pattern p;
          p.literal = s.content;
          t = replace_all(t, p, " ");
          if (st.tokens == 0 && s.strip_first && !t.empty() && t[0] == ' ') t.erase(0, 1);
          break;
        }
        case Kind::kByteFallback:
          if (bytes_form) { t = byte_level_encode(t); bytes_form = false; }
          if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>') {
            const int hi = hex_digit(t[3]), lo = hex_digit(t[4]);
            if (hi >= 0 && lo >= 0) { t.assign(1, static_cast<char>(hi * 16 + lo)); bytes_form = true; }
          }
          break;
        case Kind::kByteLevel:
          if (!added && !bytes_form) {
            std::string b;
            if (utf8_is_valid(t) && byte_level_decode(t, b)) t.swap(b);
            bytes_form = true;
          }
          break;
      }
    }
    st.pending += t;
  }
  ++st.tokens;
  const size_t k = utf8_stable_prefix(st.pending);
  if (k == 0) return;
  std::string text;
  utf8_append_lossy(text, std::string_view(st.pending).substr(0, k));
  st.pending.erase(0, k);
  release(st, text, out);
}

void DecoderPipeline::flush(State& st, std::string& out) const {
  std::string text;
  utf8_append_lossy(text, st.pending);
  st.pending.clear();
  release(st, text, out);
  st.held.clear();  // trailing Strip characters of the whole text are dropped
}

void DecoderPipeline::release(State& st, std::string& text, std::string& out) const {
  if (!strip_) { out += text; return; }
  const std::string& c = strip_content_;
  size_t b = 0;
  if (!st.started) {
    while (b < text.size()) {
      if (st.strip_left > 0 && text.compare(b, c.size(), c) == 0) {
        b += c.size();
        --st.strip_left;
      } else {
        st.started = true;
        break;
      }
    }
  }
  if (b >= text.size()) return;
  std::string s = st.held + text.substr(b);
  st.held.clear();
  // Hold back up to strip_stop_ trailing content characters: they are stripped if the text ends.
  size_t e = s.size(), n = 0;
  while (n < strip_stop_ && e >= c.size() && s.compare(e - c.size(), c.size(), c) == 0) {
    e -= c.size();
    ++n;
  }
  st.held = s.substr(e);
  out.append(s, 0, e);
}

}  // namespace exspec::tok
