// Python's case mappings and character classes. Unicode's tables come from ICU (libicuuc), not
// from tables of our own: Python's str.upper/lower are Unicode's full mappings (SpecialCasing's
// unconditional ones, Final_Sigma in lower), which ICU's root locale implements, and ICU is a
// maintained library on every Linux distribution. PCRE2, already a dependency, has Unicode
// tables too but no API that maps case. Without ICU (EXSPEC_JINJA_ICU undefined: a build host
// without its headers) only ASCII letters change case.
#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>

#include "chat/jinja/pystr.h"

#ifdef EXSPEC_JINJA_ICU
#include <unicode/uchar.h>
#include <unicode/ucasemap.h>
#endif

namespace exspec::jinja::pystr {
namespace {

#ifdef EXSPEC_JINJA_ICU
using MapFn = int32_t (*)(const UCaseMap*, char*, int32_t, const char*, int32_t, UErrorCode*);

const UCaseMap* case_map(uint32_t options) {
  UErrorCode err = U_ZERO_ERROR;
  UCaseMap* m = ucasemap_open("", options, &err);  // the root locale: no Turkish or Greek rules
  if (U_FAILURE(err)) throw std::runtime_error(std::string("ICU: ucasemap_open: ") + u_errorName(err));
  return m;  // one per options value, for the process's life
}

std::string map_utf8(std::string_view s, uint32_t options, MapFn fn) {
  thread_local const UCaseMap* plain = case_map(0);
  thread_local const UCaseMap* whole = case_map(U_TITLECASE_WHOLE_STRING | U_TITLECASE_NO_BREAK_ADJUSTMENT);
  const UCaseMap* m = options ? whole : plain;
  std::string out(s.size() * 3 + 4, '\0');  // a code point maps to at most 3, each as long
  UErrorCode err = U_ZERO_ERROR;
  const int32_t n = fn(m, out.data(), int32_t(out.size()), s.data(), int32_t(s.size()), &err);
  if (U_FAILURE(err)) throw std::runtime_error(std::string("ICU case mapping: ") + u_errorName(err));
  out.resize(size_t(n));
  return out;
}

int32_t to_title(const UCaseMap* m, char* d, int32_t cap, const char* s, int32_t n, UErrorCode* e) {
  return ucasemap_utf8ToTitle(const_cast<UCaseMap*>(m), d, cap, s, n, e);
}

bool is_cased(char32_t c) { return u_hasBinaryProperty(UChar32(c), UCHAR_CASED); }
bool is_lower(char32_t c) { return u_hasBinaryProperty(UChar32(c), UCHAR_LOWERCASE); }
bool is_upper(char32_t c) { return u_hasBinaryProperty(UChar32(c), UCHAR_UPPERCASE); }
bool is_title(char32_t c) { return u_charType(UChar32(c)) == U_TITLECASE_LETTER; }
bool is_alpha(char32_t c) { return u_isalpha(UChar32(c)); }
int numeric_type(char32_t c) { return u_getIntPropertyValue(UChar32(c), UCHAR_NUMERIC_TYPE); }
bool is_digit(char32_t c) { return numeric_type(c) == U_NT_DECIMAL || numeric_type(c) == U_NT_DIGIT; }
bool is_numeric(char32_t c) { return numeric_type(c) != U_NT_NONE; }
#else
bool is_lower(char32_t c) { return c >= 'a' && c <= 'z'; }
bool is_upper(char32_t c) { return c >= 'A' && c <= 'Z'; }
bool is_cased(char32_t c) { return is_lower(c) || is_upper(c); }
bool is_title(char32_t) { return false; }
bool is_alpha(char32_t c) { return is_cased(c); }
bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }
bool is_numeric(char32_t c) { return is_digit(c); }

std::string ascii(std::string_view s, bool up) {
  std::string out(s);
  for (char& c : out)
    if (up ? is_lower(c) : is_upper(c)) c = char(c ^ 32);
  return out;
}
#endif

bool all_of(std::string_view s, const std::function<bool(char32_t)>& pred) {
  const std::u32string u = decode(s);
  return !u.empty() && std::all_of(u.begin(), u.end(), pred);
}

}  // namespace

bool unicode_case() {
#ifdef EXSPEC_JINJA_ICU
  return true;
#else
  return false;
#endif
}

std::string upper(std::string_view s) {
#ifdef EXSPEC_JINJA_ICU
  return map_utf8(s, 0, ucasemap_utf8ToUpper);
#else
  return ascii(s, true);
#endif
}

std::string lower(std::string_view s) {
#ifdef EXSPEC_JINJA_ICU
  return map_utf8(s, 0, ucasemap_utf8ToLower);
#else
  return ascii(s, false);
#endif
}

std::string capitalize(std::string_view s) {
#ifdef EXSPEC_JINJA_ICU
  // The whole string as one word, its first code point title-cased wherever it is cased or not:
  // Python 3.8's capitalize.
  return map_utf8(s, 1, to_title);
#else
  std::string out = lower(s);
  if (!out.empty() && is_lower(out[0])) out[0] = char(out[0] ^ 32);
  return out;
#endif
}

// Python's title: a code point after a cased one is lowered, any other title-cased. So each run
// that starts after an uncased code point and goes on while its code points are cased is
// capitalized as a whole.
std::string title(std::string_view s) {
  const std::u32string u = decode(s);
  std::string out;
  size_t i = 0;
  while (i < u.size()) {
    size_t j = i + 1;
    while (j < u.size() && is_cased(u[j - 1])) ++j;
    out += capitalize(encode(std::u32string_view(u).substr(i, j - i)));
    i = j;
  }
  return out;
}

bool islower(std::string_view s) {
  bool cased = false;
  for (char32_t c : decode(s)) {
    if (is_upper(c) || is_title(c)) return false;
    cased = cased || is_lower(c);
  }
  return cased;
}

bool isupper(std::string_view s) {
  bool cased = false;
  for (char32_t c : decode(s)) {
    if (is_lower(c) || is_title(c)) return false;
    cased = cased || is_upper(c);
  }
  return cased;
}

bool isalpha(std::string_view s) { return all_of(s, is_alpha); }
bool isdigit(std::string_view s) { return all_of(s, is_digit); }
bool isalnum(std::string_view s) { return all_of(s, [](char32_t c) { return is_alpha(c) || is_numeric(c); }); }
bool is_word(char32_t c) { return c == '_' || is_alpha(c) || is_numeric(c); }

}  // namespace exspec::jinja::pystr
