#include "http/request_work.h"

#include <algorithm>

#include "grammar/budget.h"

namespace exspec::http {

RequestWork::RequestWork(Options o) : opt_(o) {
  for (int i = 0; i < std::max(1, opt_.threads); ++i) threads_.emplace_back([this] { worker(); });
}

RequestWork::~RequestWork() {
  std::deque<std::function<void()>> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    dropped.swap(waiting_);
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  // `dropped` goes last: what the work holds (a connection) is released off the lock.
}

bool RequestWork::submit(std::function<void()> work) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || waiting_.size() >= opt_.max_waiting) return false;
    waiting_.push_back(std::move(work));
  }
  cv_.notify_one();
  return true;
}

void RequestWork::worker() {
  grammar::lower_thread_priority(opt_.nice);
  for (;;) {
    std::function<void()> work;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !waiting_.empty(); });
      if (stopping_) return;
      work = std::move(waiting_.front());
      waiting_.pop_front();
      ++running_;
    }
    work();  // answers through the connection's strand; never throws (route_request catches)
    std::lock_guard<std::mutex> lock(mu_);
    --running_;
  }
}

RequestWork::Stats RequestWork::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Stats{running_, waiting_.size()};
}

}  // namespace exspec::http
