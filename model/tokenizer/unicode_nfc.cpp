#include "model/tokenizer/unicode_nfc.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/tokenizer/utf8.h"

namespace exspec::tok {
namespace {

struct CccRange { uint32_t first, last; int ccc; };
struct Decomp { uint32_t cp, a, b; int composes; };
#include "model/tokenizer/nfc_tables.inc"

constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr uint32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount,
                   kSCount = kLCount * kNCount;

struct Tables {
  std::unordered_map<uint32_t, const Decomp*> decomp;
  std::unordered_map<uint64_t, uint32_t> compose;
  std::vector<uint32_t> quick_no;  // sorted code points that make the quick check fail
  Tables() {
    for (const Decomp& d : kDecomps) {
      decomp.emplace(d.cp, &d);
      if (d.composes) compose.emplace((uint64_t(d.a) << 32) | d.b, d.cp);
    }
    for (const Decomp& d : kDecomps)
      if (!d.composes) quick_no.push_back(d.cp);
    for (uint32_t c : kComposeSeconds) quick_no.push_back(c);
    std::sort(quick_no.begin(), quick_no.end());
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

int ccc_of(uint32_t cp) {
  if (cp < 0x300) return 0;
  const CccRange* begin = kCccRanges;
  const CccRange* end = kCccRanges + sizeof(kCccRanges) / sizeof(kCccRanges[0]);
  const CccRange* it = std::upper_bound(begin, end, cp,
                                        [](uint32_t c, const CccRange& r) { return c < r.first; });
  if (it == begin) return 0;
  --it;
  return cp <= it->last ? it->ccc : 0;
}

void decompose(uint32_t cp, std::vector<uint32_t>& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const uint32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount) out.push_back(kTBase + s % kTCount);
    return;
  }
  const auto& t = tables();
  auto it = t.decomp.find(cp);
  if (it == t.decomp.end()) { out.push_back(cp); return; }
  decompose(it->second->a, out);
  if (it->second->b) decompose(it->second->b, out);
}

// Canonical decomposition followed by canonical ordering.
std::vector<uint32_t> nfd_code_points(std::string_view s) {
  std::vector<uint32_t> cps;
  cps.reserve(s.size());
  for (size_t i = 0; i < s.size();) decompose(utf8_next(s, i), cps);
  // Stable sort of each run of non-starters by combining class.
  for (size_t i = 0; i < cps.size();) {
    if (ccc_of(cps[i]) == 0) { ++i; continue; }
    size_t j = i;
    while (j < cps.size() && ccc_of(cps[j]) != 0) ++j;
    std::stable_sort(cps.begin() + i, cps.begin() + j,
                     [](uint32_t a, uint32_t b) { return ccc_of(a) < ccc_of(b); });
    i = j;
  }
  return cps;
}

uint32_t compose_pair(uint32_t a, uint32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase &&
      b < kTBase + kTCount)
    return a + (b - kTBase);
  const auto& c = tables().compose;
  auto it = c.find((uint64_t(a) << 32) | b);
  return it == c.end() ? 0 : it->second;
}

// True when the text may change under normalization (conservative).
bool needs_work(std::string_view s, bool for_nfd) {
  const auto& q = tables().quick_no;
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) { ++i; continue; }
    const uint32_t cp = utf8_next(s, i);
    if (cp < 0xC0) continue;
    if (ccc_of(cp) != 0) return true;
    if (for_nfd) {
      if ((cp >= kSBase && cp < kSBase + kSCount) || tables().decomp.count(cp)) return true;
    } else {
      if ((cp >= kVBase && cp < kVBase + kVCount) || (cp > kTBase && cp < kTBase + kTCount))
        return true;
      if (std::binary_search(q.begin(), q.end(), cp)) return true;
    }
  }
  return false;
}

}  // namespace

std::string nfd(std::string_view s) {
  if (!needs_work(s, true)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (uint32_t cp : nfd_code_points(s)) utf8_append(out, cp);
  return out;
}

std::string nfc(std::string_view s) {
  if (!needs_work(s, false)) return std::string(s);
  std::vector<uint32_t> cps = nfd_code_points(s);
  // Canonical composition (the UAX #15 reference algorithm): a character combines with the last
  // starter unless a character in between has the same or a higher combining class.
  if (cps.empty()) return std::string();
  size_t starter = 0;
  int last_class = ccc_of(cps[0]) ? 256 : 0;
  size_t w = 1;
  for (size_t r = 1; r < cps.size(); ++r) {
    const uint32_t c = cps[r];
    const int cc = ccc_of(c);
    const uint32_t comp = compose_pair(cps[starter], c);
    if (comp && (last_class < cc || last_class == 0)) {
      cps[starter] = comp;
      continue;
    }
    if (cc == 0) starter = w;
    last_class = cc;
    cps[w++] = c;
  }
  cps.resize(w);
  std::string out;
  out.reserve(s.size());
  for (uint32_t cp : cps) utf8_append(out, cp);
  return out;
}

}  // namespace exspec::tok
