// model/lru_cache.h: at most `capacity` entries, the least recently used forgotten first, and a
// value still held by a caller outlives its eviction.
#include <catch2/catch.hpp>

#include <string>

#include "model/lru_cache.h"

using exspec::LruCache;

CATCH_TEST_CASE("an LRU cache keeps the entries used last, at most its capacity", "[lru]") {
  LruCache<int, std::string> c(3);
  int made = 0;
  auto get = [&](int k) { return *c.get(k, [&] { ++made; return std::to_string(k); }); };
  for (int k : {1, 2, 3}) CATCH_CHECK(get(k) == std::to_string(k));
  CATCH_CHECK(made == 3);
  CATCH_CHECK(get(1) == "1");  // a hit: 1 is now the most recent, 2 the least
  CATCH_CHECK(made == 3);
  get(4);  // evicts 2
  CATCH_CHECK(c.stats().size == 3);
  get(1), get(3), get(4);
  CATCH_CHECK(made == 4);
  get(2);  // made again
  CATCH_CHECK(made == 5);
  const auto s = c.stats();
  CATCH_CHECK(s.size == 3);
  CATCH_CHECK(s.capacity == 3);
  CATCH_CHECK(s.hits == 4);
  CATCH_CHECK(s.misses == 5);
  for (int k = 100; k < 1000; ++k) get(k);  // many distinct keys: the size stays bounded
  CATCH_CHECK(c.stats().size == 3);
}

CATCH_TEST_CASE("a value evicted while held lives until its holder lets go", "[lru]") {
  LruCache<int, std::string> c(1);
  auto held = c.get(1, [] { return std::string("one"); });
  c.get(2, [] { return std::string("two"); });  // evicts 1 from the cache
  CATCH_CHECK(*held == "one");
  CATCH_CHECK(held.use_count() == 1);  // the cache no longer shares it
}
