#include "app/cmd_tokenize.h"

#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/tokenizer/tokenizer.h"

namespace {

const char* kUsage =
    "usage: exspec tokenize --tokenizer PATH_OR_DIR (--text TEXT | --texts-json FILE | --decode IDS) [flags]\n\n"
    "  --tokenizer PATH_OR_DIR  a tokenizer.json, or a model directory holding tokenizer.json\n"
    "                           (tokenizer_config.json next to it is read too), or a .gguf file\n"
    "  --text TEXT              print the ids of TEXT as a JSON array\n"
    "  --texts-json FILE        FILE holds a JSON array of texts: print one JSON array of their ids\n"
    "                           (one tokenizer load for many texts)\n"
    "  --decode IDS             print the text of IDS (\"1,2,3\" or \"[1, 2, 3]\")\n"
    "  --allow-special          let TEXT produce special tokens such as <|im_end|>\n"
    "  --no-add-special         do not add BOS/EOS (default: as the tokenizer config says)\n"
    "  --skip-special           --decode: leave special tokens out of the text\n"
    "  --json                   --decode: print the text as a JSON string\n"
    "See docs/models.md.\n";

std::vector<int64_t> parse_ids(const std::string& s) {
  std::vector<int64_t> ids;
  size_t i = 0;
  auto skip = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == ',' || s[i] == '[' || s[i] == ']')) ++i;
  };
  skip();
  while (i < s.size()) {
    const char* begin = s.c_str() + i;
    char* end = nullptr;
    const long long v = std::strtoll(begin, &end, 10);
    if (end == begin || v < 0) throw std::runtime_error("--decode: expected non-negative integer ids, got \"" + s + "\"");
    ids.push_back(v);
    i += size_t(end - begin);
    if (i < s.size() && !(s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == ',' || s[i] == ']'))
      throw std::runtime_error("--decode: expected ids separated by commas, got \"" + s + "\"");
    skip();
  }
  return ids;
}

}  // namespace

int cmd_tokenize(int argc, char** argv) {
  try {
    std::optional<std::string> path, text, texts, decode;
    bool allow_special = false, add_special = true, skip_special = false, as_json = false;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      std::optional<std::string> inline_value;
      if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
        inline_value = a.substr(a.find('=') + 1);
        a = a.substr(0, a.find('='));
      }
      auto value = [&]() -> std::string {
        if (inline_value) return *inline_value;
        if (i + 1 >= argc) throw std::runtime_error("missing value for " + a);
        return argv[++i];
      };
      if (a == "--help" || a == "-h") {
        std::cout << kUsage;
        return 0;
      } else if (a == "--tokenizer") {
        path = value();
      } else if (a == "--text") {
        text = value();
      } else if (a == "--texts-json") {
        texts = value();
      } else if (a == "--decode") {
        decode = value();
      } else if (a == "--allow-special") {
        allow_special = true;
      } else if (a == "--no-add-special") {
        add_special = false;
      } else if (a == "--skip-special") {
        skip_special = true;
      } else if (a == "--json") {
        as_json = true;
      } else {
        throw std::runtime_error("unknown flag \"" + a + "\" (see --help)");
      }
    }
    if (!path) throw std::runtime_error("missing --tokenizer PATH_OR_DIR");
    if (int(text.has_value()) + int(texts.has_value()) + int(decode.has_value()) != 1)
      throw std::runtime_error("give exactly one of --text, --texts-json or --decode");
    const exspec::Tokenizer tok = exspec::Tokenizer::load(*path);
    if (text) {
      std::cout << nlohmann::json(tok.encode(*text, add_special, allow_special)).dump() << "\n";
    } else if (texts) {
      std::ifstream in(*texts);
      if (!in) throw std::runtime_error("--texts-json: cannot read " + *texts);
      const nlohmann::json all = nlohmann::json::parse(in);
      if (!all.is_array()) throw std::runtime_error("--texts-json: expected a JSON array of strings");
      nlohmann::json out = nlohmann::json::array();
      for (const auto& t : all) out.push_back(tok.encode(t.get<std::string>(), add_special, allow_special));
      std::cout << out.dump() << "\n";
    } else {
      const std::vector<int64_t> ids = parse_ids(*decode);
      for (int64_t id : ids)
        if (id >= tok.vocab_size())
          throw std::runtime_error("--decode: id " + std::to_string(id) + " is outside the vocabulary (size " +
                                   std::to_string(tok.vocab_size()) + ")");
      const std::string s = tok.decode(ids, skip_special);
      // Bytes that are not UTF-8 (a token cut inside a character) become U+FFFD in the JSON string.
      std::cout << (as_json ? nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) : s) << "\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "exspec tokenize: error: " << e.what() << "\n";
    return 1;
  }
}
