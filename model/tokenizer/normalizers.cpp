#include "model/tokenizer/normalizers.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/tokenizer/json_util.h"
#include "model/tokenizer/unicode_nfc.h"
#include "model/tokenizer/utf8.h"

namespace exspec::tok {

std::unique_ptr<Normalizer> Normalizer::from_json(const nlohmann::json& j) {
  if (j.is_null()) return nullptr;
  auto n = std::make_unique<Normalizer>();
  add_steps(j, n->steps_);
  return n;
}

void Normalizer::add_steps(const nlohmann::json& j, std::vector<Step>& steps) {
  const std::string type = json_type(j, "normalizer");
  if (type == "Sequence") {
    for (const auto& sub : json_array(j, "normalizers", "normalizer Sequence"))
      add_steps(sub, steps);
    return;
  }
  Step s{};
  if (type == "NFC") {
    s.kind = Kind::kNfc;
  } else if (type == "NFD") {
    s.kind = Kind::kNfd;
  } else if (type == "Prepend") {
    s.kind = Kind::kPrepend;
    s.text = json_string(j, "prepend", "normalizer Prepend");
  } else if (type == "Replace") {
    s.kind = Kind::kReplace;
    s.pattern = json_pattern(j, "normalizer Replace");
    s.text = json_string(j, "content", "normalizer Replace");
  } else if (type == "Strip") {
    s.kind = Kind::kStrip;
    s.left = j.value("strip_left", true);
    s.right = j.value("strip_right", true);
  } else {
    throw std::runtime_error("tokenizer: unsupported normalizer type '" + type +
                             "' (supported: Sequence, NFC, NFD, Prepend, Replace, Strip)");
  }
  steps.push_back(std::move(s));
}

std::string Normalizer::normalize(std::string_view in) const {
  std::string s(in);
  for (const Step& st : steps_) {
    switch (st.kind) {
      case Kind::kNfc: s = nfc(s); break;
      case Kind::kNfd: s = nfd(s); break;
      case Kind::kPrepend:
        // Like the Rust implementation: nothing is prepended to an empty string.
        if (!s.empty()) s.insert(0, st.text);
        break;
      case Kind::kReplace: s = replace_all(s, st.pattern, st.text); break;
      case Kind::kStrip: {
        size_t b = 0, e = s.size();
        if (st.left) {
          while (b < e) {
            size_t i = b;
            if (!is_unicode_whitespace(utf8_next(s, i))) break;
            b = i;
          }
        }
        if (st.right) {
          while (e > b) {
            size_t k = e - 1;
            while (k > b && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
            size_t i = k;
            if (!is_unicode_whitespace(utf8_next(s, i))) break;
            e = k;
          }
        }
        s = s.substr(b, e - b);
        break;
      }
    }
  }
  return s;
}

}  // namespace exspec::tok
