#include "grammar/refine.h"

#include <unordered_map>

#include "grammar/budget.h"

namespace exspec::grammar {

std::vector<uint32_t> refine_partition(std::vector<uint32_t> cls, const Signature& signature, size_t max_rounds) {
  const size_t n = cls.size();
  std::vector<uint32_t> keys, key, offset(n + 1), next(n);
  size_t count = 0;
  {
    std::unordered_map<uint32_t, uint32_t> ids;
    for (uint32_t& c : cls) c = ids.emplace(c, static_cast<uint32_t>(ids.size())).first->second;
    count = ids.size();
  }
  for (size_t round = 0; round < max_rounds; ++round) {
    keys.clear();
    for (uint32_t s = 0; s < n; ++s) {
      check_budget();  // Moore's rounds are quadratic on long chains: the costliest loop of a compile
      offset[s] = static_cast<uint32_t>(keys.size());
      key.clear();
      signature(s, cls, key);
      keys.insert(keys.end(), key.begin(), key.end());
    }
    offset[n] = static_cast<uint32_t>(keys.size());
    auto same = [&](uint32_t a, uint32_t b) {
      const uint32_t la = offset[a + 1] - offset[a];
      if (la != offset[b + 1] - offset[b]) return false;
      for (uint32_t k = 0; k < la; ++k)
        if (keys[offset[a] + k] != keys[offset[b] + k]) return false;
      return true;
    };
    std::unordered_map<uint64_t, std::vector<std::pair<uint32_t, uint32_t>>> seen;  // hash -> (state, class)
    uint32_t fresh = 0;
    for (uint32_t s = 0; s < n; ++s) {
      uint64_t h = 1469598103934665603ull;
      for (uint32_t k = offset[s]; k < offset[s + 1]; ++k) h = (h ^ keys[k]) * 1099511628211ull;
      auto& bucket = seen[h];
      uint32_t id = UINT32_MAX;
      for (const auto& [rep, c] : bucket)
        if (same(rep, s)) id = c;
      if (id == UINT32_MAX) bucket.emplace_back(s, id = fresh++);
      next[s] = id;
    }
    cls.swap(next);
    if (fresh == count) break;
    count = fresh;
  }
  return cls;
}

}  // namespace exspec::grammar
