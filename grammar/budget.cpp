#include "grammar/budget.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <string>

#include "grammar/error.h"

namespace exspec::grammar {
namespace {

struct Active {
  std::shared_ptr<const std::atomic<bool>> cancelled;
  double seconds = 0, deadline = 0;  // deadline in thread CPU seconds; 0: none
  unsigned calls = 0;
  Active* previous = nullptr;
};

thread_local Active* t_active = nullptr;

std::string seconds_text(double s) {
  std::string t = std::to_string(s);
  t.erase(t.find_last_not_of('0') + 1);
  if (!t.empty() && t.back() == '.') t.pop_back();
  return t;
}

}  // namespace

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void lower_thread_priority(int nice) {
  if (nice <= 0) return;
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  setpriority(PRIO_PROCESS, tid, std::min(19, getpriority(PRIO_PROCESS, tid) + nice));
}

BudgetScope::BudgetScope(const CompileBudget& budget) : previous_(t_active) {
  auto* a = new Active;
  a->cancelled = budget.cancelled;
  a->seconds = budget.cpu_seconds;
  a->deadline = budget.cpu_seconds > 0 ? thread_cpu_seconds() + budget.cpu_seconds : 0;
  a->previous = static_cast<Active*>(previous_);
  t_active = a;
}

BudgetScope::~BudgetScope() {
  Active* a = t_active;
  t_active = static_cast<Active*>(previous_);
  delete a;
}

bool budget_cancelled() {
  const Active* a = t_active;
  return a && a->cancelled && a->cancelled->load(std::memory_order_relaxed);
}

void check_budget() {
  Active* a = t_active;
  if (!a) return;
  if (a->cancelled && a->cancelled->load(std::memory_order_relaxed)) throw CompileCancelled();
  if (a->deadline <= 0 || (++a->calls & 15) != 0) return;
  if (thread_cpu_seconds() > a->deadline)
    throw GrammarError("budget", "", "the grammar is too costly to compile (more than " + seconds_text(a->seconds) +
                                         " s of CPU: the server's --grammar-compile-budget)");
}

}  // namespace exspec::grammar
