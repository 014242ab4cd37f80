#include "model/tokenizer/regex_split.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <stdexcept>

namespace exspec::tok {
namespace {

// Per-thread matching state: compiled patterns are shared, match data and JIT stack are not.
struct ThreadState {
  pcre2_match_data* md = nullptr;
  pcre2_jit_stack* stack = nullptr;
  pcre2_match_context* ctx = nullptr;
  ThreadState() {
    md = pcre2_match_data_create(1, nullptr);
    ctx = pcre2_match_context_create(nullptr);
    stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, nullptr);
    if (stack && ctx) pcre2_jit_stack_assign(ctx, nullptr, stack);
  }
  ~ThreadState() {
    pcre2_match_data_free(md);
    pcre2_match_context_free(ctx);
    pcre2_jit_stack_free(stack);
  }
};

ThreadState& thread_state() {
  thread_local ThreadState st;
  return st;
}

struct Piece {
  size_t begin, end;
  bool is_match;
};

}  // namespace

Regex::Regex(const std::string& pattern) : pattern_(pattern) {
  int err = 0;
  PCRE2_SIZE off = 0;
  pcre2_code* code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                    PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &err, &off, nullptr);
  if (!code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof(msg));
    throw std::runtime_error("tokenizer: cannot compile regex '" + pattern + "' at offset " +
                             std::to_string(off) + ": " + reinterpret_cast<char*>(msg));
  }
  jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  code_ = std::shared_ptr<void>(code, [](void* c) { pcre2_code_free(static_cast<pcre2_code*>(c)); });
}

bool Regex::find(std::string_view subject, size_t start, size_t& begin, size_t& end) const {
  ThreadState& st = thread_state();
  auto* code = static_cast<pcre2_code*>(code_.get());
  const auto* subj = reinterpret_cast<PCRE2_SPTR>(subject.data());
  const int rc = jit_ ? pcre2_jit_match(code, subj, subject.size(), start, 0, st.md, st.ctx)
                      : pcre2_match(code, subj, subject.size(), start, PCRE2_NO_UTF_CHECK, st.md,
                                    st.ctx);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc < 0) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(rc, msg, sizeof(msg));
    throw std::runtime_error("tokenizer: regex '" + pattern_ +
                             "' failed to match: " + reinterpret_cast<char*>(msg));
  }
  const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(st.md);
  begin = ov[0];
  end = ov[1];
  return true;
}

bool Pattern::find(std::string_view s, size_t start, size_t& begin, size_t& end) const {
  if (regex) return regex->find(s, start, begin, end);
  if (literal.empty()) return false;
  const size_t at = s.find(literal, start);
  if (at == std::string_view::npos) return false;
  begin = at;
  end = at + literal.size();
  return true;
}

namespace {

// Covers s with alternating gaps and non-empty matches.
void find_matches(std::string_view s, const Pattern& p, std::vector<Piece>& out) {
  size_t pos = 0, prev = 0, b = 0, e = 0;
  while (pos <= s.size() && p.find(s, pos, b, e)) {
    if (e == b) {  // empty match: step over one character
      if (b >= s.size()) break;
      pos = b + 1;
      while (pos < s.size() && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) ++pos;
      continue;
    }
    if (b > prev) out.push_back({prev, b, false});
    out.push_back({b, e, true});
    prev = pos = e;
  }
  if (prev < s.size()) out.push_back({prev, s.size(), false});
}

}  // namespace

void split_pieces(std::string_view s, const Pattern& p, SplitBehavior behavior, bool invert,
                  std::vector<std::string_view>& out) {
  if (s.empty()) return;
  std::vector<Piece> m;
  find_matches(s, p, m);
  if (invert)
    for (Piece& x : m) x.is_match = !x.is_match;
  std::vector<Piece> r;
  r.reserve(m.size());
  switch (behavior) {
    case SplitBehavior::kRemoved:
      for (const Piece& x : m)
        if (!x.is_match) r.push_back(x);
      break;
    case SplitBehavior::kIsolated:
      r = m;
      break;
    case SplitBehavior::kContiguous: {
      bool prev_match = false;
      for (const Piece& x : m) {
        if (x.is_match == prev_match && !r.empty()) r.back().end = x.end;
        else r.push_back(x);
        prev_match = x.is_match;
      }
      break;
    }
    case SplitBehavior::kMergedWithPrevious: {
      bool prev_match = false;
      for (const Piece& x : m) {
        if (x.is_match && !prev_match && !r.empty()) r.back().end = x.end;
        else r.push_back(x);
        prev_match = x.is_match;
      }
      break;
    }
    case SplitBehavior::kMergedWithNext: {
      bool next_match = false;
      for (size_t i = m.size(); i-- > 0;) {
        const Piece& x = m[i];
        if (x.is_match && !next_match && !r.empty()) r.back().begin = x.begin;
        else r.push_back(x);
        next_match = x.is_match;
      }
      std::reverse(r.begin(), r.end());
      break;
    }
  }
  for (const Piece& x : r)
    if (x.end > x.begin) out.push_back(s.substr(x.begin, x.end - x.begin));
}

std::string replace_all(std::string_view s, const Pattern& p, std::string_view content) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0, prev = 0, b = 0, e = 0;
  while (pos <= s.size() && p.find(s, pos, b, e)) {
    if (e == b) {
      if (b >= s.size()) break;
      pos = b + 1;
      while (pos < s.size() && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) ++pos;
      continue;
    }
    out.append(s.data() + prev, b - prev);
    out.append(content);
    prev = pos = e;
  }
  out.append(s.data() + prev, s.size() - prev);
  return out;
}

}  // namespace exspec::tok
