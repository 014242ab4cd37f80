// Command-line flags of the exspec subcommands: --name value, --name=value, and bare flags.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace exspec {

class Args {
 public:
  // argv[first..] are parsed; `switches` are the flags that take no value. An unknown flag
  // (not in `valued` or `switches`) is an error that names it.
  Args(int argc, char** argv, int first, const std::set<std::string>& valued, const std::set<std::string>& switches = {});

  bool has(const std::string& name) const;
  std::string get(const std::string& name, const std::string& dflt) const;
  std::string need(const std::string& name) const;  // throws "missing --name"
  int64_t get_int(const std::string& name, int64_t dflt) const;
  std::vector<std::string> all(const std::string& name) const;  // repeatable flags, in order

 private:
  std::vector<std::pair<std::string, std::string>> values_;
};

std::vector<int64_t> parse_id_list(const std::string& text);  // "1,2,3" (spaces allowed)

// Prompts from --prompt-ids (repeatable: `id_lists`) and --prompts-file (`files`, JSONL with
// "prompt_ids"), in that order.
std::vector<std::vector<int64_t>> read_prompt_ids(const std::vector<std::string>& id_lists,
                                                  const std::vector<std::string>& files);

}  // namespace exspec
