// Attention on the CPU in one fixed order per query (torch-free; model/attention.cpp is the seam).
//
// libtorch and oneDNN pick their kernels and blockings by shape and stride, so a query's result
// moved with the batch around it: with the chunk it was prefilled in, with left padding (which
// shifts a key's lane in a vectorised sum), with keys read as a view or as a gathered copy. Here
// each query (b, head, t) is computed alone, over its visible keys only, in order:
//   s_j = (Σ_d q_d k_jd) · scale          16 fixed lanes over d, summed by a fixed tree
//   s_j = cap · tanh(s_j / cap)            Gemma 2's soft-capping, where softcap > 0 (tanhf)
//   p_j = exp(s_j - max_j s_j)            sum = Σ_j p_j in order of j (model/kernels/fast_exp.h)
//   o_d = (Σ_j p_j v_jd) / sum            in order of j
// in float32 from float32 or bfloat16 inputs, the output rounded once to the input's dtype. The
// same bits whatever the other rows, the padding, the strides, the threads, and the instruction
// set (compiled without contraction: every clone does the same multiplies and adds).
#pragma once
#include <cmath>
#include <cstdint>

#include "model/kernels/isa.h"

namespace exspec::attn {

// A [B, heads, positions, D] tensor: element (b, h, p, d) at data + b*sb + h*sh + p*sp + d.
struct View {
  void* data = nullptr;
  int64_t sb = 0, sh = 0, sp = 0;
};

struct Shape {
  int64_t B = 0, H = 0, Hkv = 0, T = 0, S = 0, D = 0;
  bool bf16 = false;  // q, k, v and out in bfloat16 (else float32)
  float scale = 1.0f;
  float softcap = 0.0f;  // > 0: each score capped, s = softcap * tanhf(s / softcap)
};

// A score's cap (Shape::softcap): one scalar tanhf, so that both paths and every clone agree.
inline float capped(float s, float cap) { return cap > 0.0f ? cap * tanhf(s / cap) : s; }

// Items [begin, end) of the B * Hkv * T in order (b, kv head, t): for each query head h of the
// kv head (h / (H / Hkv) == kv head), out (b, h, t, :) from q (b, h, t, :) and the keys and values
// of the kv head at the positions j < S that blocked[(b * T + t) * S + j] leaves open (every j
// when blocked is null). A query that sees no key gets zeros.
void attention(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked, const View& out,
               int64_t begin, int64_t end);

// Several queries of one kv head at once, one query a vector lane (model/kernels/attention_lanes.cpp;
// attention() above hands it its runs of consecutive t).
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
//
// The queries (b, kvh * G + g, t) for every g < G and t in [t0, t0 + nt): written to out as
// attention() writes them. nt * G must be at most 16.
void attention_lanes(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked, const View& out,
                     int64_t b, int64_t kvh, int64_t t0, int64_t nt);

// Which instruction set the two run on: float32's under EXSPEC_ISA (isa.h), so that a capped
// run, the tests' among them, runs the capped path. Each path does the same multiplies and adds
// (built with -ffp-contract=off), so the choice is speed only.
using Isa = isa::Isa;
Isa kernel_isa();
// The same two for one instruction set (what attention() and attention_lanes() call).
void attention_avx512(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked, const View& out,
                      int64_t begin, int64_t end);
void attention_avx2(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked, const View& out,
                    int64_t begin, int64_t end);
void attention_plain(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked, const View& out,
                     int64_t begin, int64_t end);
using LanesFn = void (*)(const Shape&, const View&, const View&, const View&, const bool*, const View&, int64_t, int64_t,
                         int64_t, int64_t);
void attention_lanes_avx512(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked,
                            const View& out, int64_t b, int64_t kvh, int64_t t0, int64_t nt);
void attention_lanes_avx2(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked,
                          const View& out, int64_t b, int64_t kvh, int64_t t0, int64_t nt);
void attention_lanes_plain(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked,
                           const View& out, int64_t b, int64_t kvh, int64_t t0, int64_t nt);
LanesFn lanes_for(Isa isa);

}  // namespace exspec::attn
