// Attention for several queries of one kv head at once, one query a vector lane (torch-free;
// used by model/kernels/attention_kernel.cpp).
//
// A verify step's K + 1 new tokens of a row, times the G query heads that share a kv head, read
// the same keys and values. The per-query path sums each score over 16 lanes of d and then
// across those lanes, a horizontal sum per (query, key) that costs more than the products; and
// it runs over every key once per query. Here up to 16 queries share each key and value row:
// lane l of every vector is query l, and each query's arithmetic is exactly the per-query
// path's, operation for operation and in the same order (attention_kernel.h):
//   - a score's 16 partial sums over d are 16 vectors (partial l of every query), summed by the
//     same tree, then scaled;
//   - the maximum, the sum of the exponentials and the weighted sum of the values run over the
//     keys in order of j, a blocked key leaving a query's lanes as they were (a select, not a
//     multiplication by 0);
//   - exp is fast_exp.h's, element for element.
// So a query's result is the same bits on either path, whatever the queries beside it: which
// path runs is a matter of speed only.
#pragma once
#include <cstdint>

#include "model/kernels/attention_kernel.h"

namespace exspec::attn {

// The queries (b, kvh * G + g, t) for every g < G and t in [t0, t0 + nt): written to out as
// attention() writes them. nt * G must be at most 16.
void attention_lanes(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked, const View& out,
                     int64_t b, int64_t kvh, int64_t t0, int64_t nt);

}  // namespace exspec::attn
