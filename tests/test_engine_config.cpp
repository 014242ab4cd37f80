// Engine settings parsed from flags and the config file (actors/scheduler/engine_config.h): plain C++.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "actors/scheduler/engine_config.h"

using namespace exspec;

CATCH_TEST_CASE("sizes: bytes, or K, M, G, T (powers of 1024), with an optional B or iB", "[policy][config]") {
  CATCH_CHECK(parse_bytes("65536") == 65536);
  CATCH_CHECK(parse_bytes("512K") == 512 * 1024);
  CATCH_CHECK(parse_bytes("512M") == 512LL * 1024 * 1024);
  CATCH_CHECK(parse_bytes("1.5G") == 3LL * 512 * 1024 * 1024);
  CATCH_CHECK(parse_bytes("4GiB") == 4LL * 1024 * 1024 * 1024);
  CATCH_CHECK(parse_bytes("2gb") == 2LL * 1024 * 1024 * 1024);
  CATCH_CHECK(parse_bytes("1T") == 1LL << 40);
  CATCH_CHECK(parse_bytes("0") == 0);
  CATCH_CHECK(parse_bytes("512B") == 512);
  for (const char* bad : {"", "lots", "12Q", "-1G", "5 G", "G", "1e30", "nan"})
    CATCH_CHECK_THROWS_AS(parse_bytes(bad), std::invalid_argument);
}

CATCH_TEST_CASE("counts: digits alone, else -1, and draft_tokens takes one >= 1", "[policy][config]") {
  CATCH_CHECK(parse_count("0") == 0);
  CATCH_CHECK(parse_count("16") == 16);
  CATCH_CHECK(parse_count("007") == 7);
  for (const char* bad : {"", "-1", "+3", " 4", "4 ", "16x", "1e3", "0x10", "99999999999999999999"})
    CATCH_CHECK(parse_count(bad) == -1);
  EngineConfig c;
  parse_draft_tokens("6", c);
  CATCH_CHECK((!c.adaptive_k && c.draft_tokens == 6));
  parse_draft_tokens("auto", c);
  CATCH_CHECK(c.adaptive_k);
  for (const char* bad : {"0", "", "-2", "3.5"}) CATCH_CHECK_THROWS_AS(parse_draft_tokens(bad, c), std::invalid_argument);
}
