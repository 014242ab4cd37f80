// One line of an `exspec script` file, read as a shell would read a simple command: words split
// at blanks, quoted with '...' (literal) or "..." (\" and \\ escaped), a backslash escaping the
// next character outside quotes, and the redirections `> FILE`, `>> FILE`, `2> FILE` and
// `2>> FILE` (also written without the space), and `2>&1`. Nothing else of a shell: no variables, globs,
// pipes or $'...' (bash's printf %q writes those only for control characters).
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace exspec {

struct ScriptRedirect {
  std::string path;
  bool append = false;
};

struct ScriptLine {
  std::vector<std::string> words;  // the command and its flags, as argv[1..]
  std::optional<ScriptRedirect> out, err;
  bool err_to_out = false;  // 2>&1: stderr goes where stdout goes (after stdout's redirection)
};

// Splits `line`; a blank line or a comment ('#' first) gives no words. Throws
// std::invalid_argument for an unclosed quote, a trailing backslash, a redirection without its
// file, a second redirection of the same stream, or `2>&1` before `> FILE` (which a shell reads
// otherwise than "both into FILE").
ScriptLine parse_script_line(const std::string& line);

}  // namespace exspec
