#include "http/model_facts.h"

#include "http/api_error.h"

namespace exspec::http {
using nlohmann::ordered_json;

std::vector<int64_t> token_ids(const ordered_json& arr, const ModelFacts& m, const std::string& param, const std::string& what) {
  std::vector<int64_t> ids;
  ids.reserve(arr.size());
  for (const auto& v : arr) {
    if (!v.is_number_integer()) throw bad_param(param, what + " must hold integers", "invalid_type");
    const int64_t id = v.get<int64_t>();
    if (id < 0 || id >= m.vocab)
      throw bad_param(param, "token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                                 std::to_string(m.vocab) + ")");
    ids.push_back(id);
  }
  return ids;
}

}  // namespace exspec::http
