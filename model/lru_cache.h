// A map of at most `capacity` entries that forgets the least recently used one to make room.
// Values are handed out as shared_ptr: one evicted while a caller still uses it lives until that
// caller lets go. Thread-safe.
#pragma once
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

namespace exspec {

template <class Key, class Value>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  // The value for `key`, made by make() (under the cache's lock) when it is not held.
  template <class Make>
  std::shared_ptr<const Value> get(const Key& key, Make make) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      ++hits_;
      order_.splice(order_.begin(), order_, it->second);  // now the most recent
      return it->second->second;
    }
    ++misses_;
    auto value = std::make_shared<const Value>(make());
    order_.emplace_front(key, value);
    index_[key] = order_.begin();
    if (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return value;
  }

  struct Stats {
    size_t size = 0, capacity = 0;
    int64_t hits = 0, misses = 0;
  };
  Stats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return {order_.size(), capacity_, hits_, misses_};
  }

 private:
  using Entry = std::pair<Key, std::shared_ptr<const Value>>;
  mutable std::mutex mu_;
  size_t capacity_;
  std::list<Entry> order_;  // most recently used first
  std::map<Key, typename std::list<Entry>::iterator> index_;
  int64_t hits_ = 0, misses_ = 0;
};

}  // namespace exspec
