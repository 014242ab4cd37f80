#include "app/script_line.h"

#include <cctype>

namespace exspec {
namespace {

// One word from `line` at `i` (past the blanks): its text with the quotes taken away, and how
// many of its first characters were neither quoted nor escaped (a quoted ">" is a word, not a
// redirection; >'a file' is one).
struct Word {
  std::string text;
  size_t plain = std::string::npos;
};

Word next_word(const std::string& line, size_t& i) {
  Word w;
  while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) {
    const char c = line[i++];
    if ((c == '\\' || c == '\'' || c == '"') && w.plain == std::string::npos) w.plain = w.text.size();
    if (c == '\\') {
      if (i == line.size()) throw std::invalid_argument("a backslash ends the line");
      w.text += line[i++];
    } else if (c == '\'' || c == '"') {
      for (;;) {
        if (i == line.size()) throw std::invalid_argument(std::string("an unclosed ") + c + " quote");
        const char d = line[i++];
        if (d == c) break;
        if (c == '"' && d == '\\' && i < line.size() && (line[i] == '"' || line[i] == '\\')) {
          w.text += line[i++];
          continue;
        }
        w.text += d;
      }
    } else {
      w.text += c;
    }
  }
  return w;
}

// ">", ">>", "2>", "2>>", alone or with the file's name after them: the stream (1 or 2), whether
// it appends, and how many characters the operator takes; 0 when `w` is not one.
int redirection(const Word& w, bool& append, size_t& length) {
  const std::string t = w.text.substr(0, w.plain);
  const int stream = t.rfind("2>", 0) == 0 ? 2 : t.rfind(">", 0) == 0 ? 1 : 0;
  if (!stream) return 0;
  length = stream == 2 ? 2 : 1;
  append = t.size() > length && t[length] == '>';
  if (append) ++length;
  return stream;
}

}  // namespace

ScriptLine parse_script_line(const std::string& line) {
  ScriptLine out;
  size_t i = 0;
  auto skip_blanks = [&] {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
  };
  skip_blanks();
  if (i < line.size() && line[i] == '#') return out;
  while (skip_blanks(), i < line.size()) {
    const Word w = next_word(line, i);
    if (w.plain == std::string::npos && w.text == "2>&1") {
      if (out.err || out.err_to_out) throw std::invalid_argument("stderr redirected twice");
      out.err_to_out = true;
      continue;
    }
    bool append = false;
    size_t length = 0;
    const int stream = redirection(w, append, length);
    if (!stream) {
      out.words.push_back(w.text);
      continue;
    }
    std::string path = w.text.substr(length);
    if (path.empty()) {
      skip_blanks();
      if (i == line.size()) throw std::invalid_argument("a redirection without its file");
      path = next_word(line, i).text;
    }
    // A shell sends `2>&1 > FILE`'s stderr to the stdout from before the redirection; we would
    // not, so the order a shell would read otherwise is refused rather than read another way.
    if (stream == 1 && out.err_to_out) throw std::invalid_argument("2>&1 before > FILE: write > FILE 2>&1");
    auto& target = stream == 1 ? out.out : out.err;
    if (target || (stream == 2 && out.err_to_out)) throw std::invalid_argument(stream == 1 ? "stdout redirected twice" : "stderr redirected twice");
    target = ScriptRedirect{path, append};
  }
  return out;
}

}  // namespace exspec
