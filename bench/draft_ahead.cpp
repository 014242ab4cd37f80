// Whether drafting ahead can pay (issue 62): the drafter drafting the next step's first tokens on
// a thread of its own while the target verifies, instead of after it. Those drafts are used only
// when the step accepts every proposal and the bonus token is the draft's own next guess (a share
// p of the steps); in exchange the verify and the drafts share the cores. With v and d the verify
// and the `ahead` draft forwards as serving runs them (one after the other, each on the initial
// thread with every core) and `both` the two side by side, a step costs both - v more every time
// and saves d when its drafts are used: drafting ahead pays only where p > s = (both - v) / d.
//
//   build/draft_ahead TARGET DRAFT [--dtype int8] [--k 6] [--ahead 1] [--context 128] [--reps 15] [--threads 2]
//
// Prints v, d and both (medians of reps, min-max) and s for each split of the cores between the
// verify's team and the draft's, side by side: 2 + 2 (each asks for every core), 1 + 1, 2 + 1
// (for --threads 2).
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "model/decoder.h"
#include "model/runtime.h"
#include "model/tools/calibrate.h"

using namespace exspec;

namespace {

struct Options {
  std::string target, draft, dtype = "int8";
  int64_t k = 6, ahead = 1, context = 128;
  int reps = 15, threads = 2;
};

Options parse(int argc, char** argv) {
  if (argc < 3) throw std::invalid_argument("usage: draft_ahead TARGET DRAFT [--dtype D] [--k K] [--ahead N] ...");
  Options o;
  o.target = argv[1], o.draft = argv[2];
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--dtype") o.dtype = v;
    else if (k == "--k") o.k = std::stoll(v);
    else if (k == "--ahead") o.ahead = std::stoll(v);
    else if (k == "--context") o.context = std::stoll(v);
    else if (k == "--reps") o.reps = std::stoi(v);
    else if (k == "--threads") o.threads = std::stoi(v);
    else throw std::invalid_argument("unknown option " + k);
  }
  return o;
}

double seconds(const std::function<void()>& f) {
  const auto t = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

struct Spread {
  double median, lo, hi;
};
Spread spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

// f with n threads on the calling thread (the counts are per thread).
void with_threads(int n, const std::function<void()>& f) {
  exspec::set_thread_count(n);
  f();
}

// One stretch of work `reps` times: its median and spread.
Spread timed(int reps, const std::function<void()>& f) {
  f();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) t.push_back(seconds(f));
  return spread(t);
}

std::string ms(const Spread& s) {
  char b[64];
  std::snprintf(b, sizeof b, "%.2f (%.2f-%.2f)", s.median * 1e3, s.lo * 1e3, s.hi * 1e3);
  return b;
}

// The verify on the calling (initial) thread with tv OpenMP threads while a second thread runs
// the drafts with td: what a step costs when the drafter drafts ahead.
Spread side_by_side(const ForwardRun& verify, const ForwardRun& draft, const Options& o, int tv, int td) {
  return timed(o.reps, [&] {
    std::thread other([&] {
      with_threads(td, [&] {
        for (int64_t j = 0; j < o.ahead; ++j) draft();
      });
    });
    with_threads(tv, verify);
    other.join();
  });
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  LoadOptions lo;
  lo.dtype = parse_dtype(o.dtype);
  const auto target = Decoder::load(o.target, lo);
  const auto draft = Decoder::load(o.draft, lo);
  const ForwardRun verify = slots_forward(*target, 1, o.k + 1, o.context, false);
  const ForwardRun drafts = slots_forward(*draft, 1, 1, o.context, true);
  std::printf("verify: 1 row x %lld tokens; draft ahead: %lld token(s); context %lld; %s; medians of %d (min-max), ms\n\n",
              (long long)(o.k + 1), (long long)o.ahead, (long long)o.context, o.dtype.c_str(), o.reps);
  // Serving's way: the verify, then the drafts, each with every core on the initial thread.
  const Spread v = timed(o.reps, [&] { with_threads(o.threads, verify); });
  const Spread d = timed(o.reps, [&] {
    with_threads(o.threads, [&] {
      for (int64_t j = 0; j < o.ahead; ++j) drafts();
    });
  });
  std::printf("one after the other (serving): verify %s, drafts %s\n\n", ms(v).c_str(), ms(d).c_str());
  std::printf("| side by side, threads verify + draft | both | both - verify | s = (both - verify) / drafts |\n");
  std::printf("|--|--:|--:|--:|\n");
  for (auto [tv, td] : std::vector<std::pair<int, int>>{{o.threads, o.threads}, {1, 1}, {o.threads, 1}}) {
    const Spread b = side_by_side(verify, drafts, o, tv, td);
    std::printf("| %d + %d | %s | %.2f | %.2f |\n", tv, td, ms(b).c_str(), (b.median - v.median) * 1e3,
                (b.median - v.median) / d.median);
  }
  std::printf("\ndrafting ahead pays only where the share of steps that use the drafts exceeds s\n");
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "draft_ahead: %s\n", e.what());
  return 1;
}
