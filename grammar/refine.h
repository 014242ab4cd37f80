// Moore's partition refinement: states start in the given classes; each round splits states whose
// signatures (their class and the classes of their successors, as `signature` writes them) differ,
// until nothing splits or max_rounds rounds ran. Rounds cost O(states x signature length): hashed
// signatures, full comparison only within a hash.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace exspec::grammar {

using Signature = std::function<void(uint32_t state, const std::vector<uint32_t>& cls, std::vector<uint32_t>& out)>;

// Returns each state's class, numbered by first occurrence.
std::vector<uint32_t> refine_partition(std::vector<uint32_t> cls, const Signature& signature, size_t max_rounds);

}  // namespace exspec::grammar
