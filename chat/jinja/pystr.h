// Python's str operations on UTF-8 text, counted in code points as Python counts them: length,
// slices, strip/split with Python's whitespace, case changes and character classes (Unicode's,
// through ICU: pystr_case.cpp), escapes for repr() and json.dumps. Torch-free.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exspec::jinja::pystr {

std::u32string decode(std::string_view s);  // ill-formed bytes become U+FFFD
std::string encode(std::u32string_view s);
void append_utf8(std::string& out, char32_t c);
size_t length(std::string_view s);  // code points

bool is_space(char32_t c);  // str.isspace()
// str.strip / lstrip / rstrip; chars nullopt: whitespace.
std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right);
// str.split(sep, maxsplit) / rsplit; sep nullopt: runs of whitespace, empty pieces dropped.
std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit,
                               bool from_right = false);
// str.splitlines(keepends): at \n, \r, \r\n, \v, \f, \x1c-\x1e, \x85, U+2028, U+2029.
std::vector<std::string> splitlines(std::string_view s, bool keepends);
std::string replace(std::string_view s, std::string_view old, std::string_view with, int64_t count = -1);
// str.upper / lower / capitalize / title with Unicode's full case mappings (ß -> SS, final sigma),
// as Python has them; ASCII letters only where exspec was built without ICU (unicode_case()).
std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string capitalize(std::string_view s);  // the first code point title-cased, the rest lower
std::string title(std::string_view s);       // title-cased after an uncased code point, else lower
bool unicode_case();
// str.islower / isupper / isalpha / isdigit / isalnum (empty: false).
bool islower(std::string_view s);
bool isupper(std::string_view s);
bool isalpha(std::string_view s);
bool isdigit(std::string_view s);
bool isalnum(std::string_view s);
bool is_word(char32_t c);  // re's \w: alphanumeric or '_'
// Python's slice s[start:stop:step] on code points (indices already optional).
std::string slice(std::string_view s, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step);
// Resolves Python slice bounds for a sequence of length n: the indices it visits.
std::vector<int64_t> slice_indices(int64_t n, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step);
// repr('...'): quotes as Python chooses them.
std::string quote(std::string_view s);
// json.dumps(s, ensure_ascii=False) of a str.
std::string json_quote(std::string_view s, bool ensure_ascii = false);

}  // namespace exspec::jinja::pystr
