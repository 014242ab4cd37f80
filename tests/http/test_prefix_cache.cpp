// The prefix cache behind the API (issue 30): a second turn that resends the first turn's prompt
// and answer finds them in the blocks the first turn left, prefills only the rest, and answers
// exactly as plain decoding does.
#include <chrono>
#include <future>
#include <thread>

#include <catch2/catch.hpp>

#include "tests/http/support.h"

using namespace exspec::httptest;

TEST_CASE("prefix cache: a second turn reuses the first turn's blocks and answers as the oracle") {
  const int port = shared_server().port();
  const char* queried = "exspec_prefix_cache_queries_total";
  const char* hits = "exspec_prefix_cache_hits_total";
  std::vector<int64_t> prompt = bytes_of("A long conversation starts here, and it goes on for a while.");
  for (int turn = 0; turn < 3; ++turn) {
    CAPTURE(turn);
    const auto before = metrics(port, {queried, hits});
    HttpResult r = post(port, "/v1/completions", {{"prompt", prompt}, {"max_tokens", 12}, {"return_token_ids", true}});
    REQUIRE(r.status == 200);
    const auto ids = r.json_body()["choices"][0]["token_ids"].get<std::vector<int64_t>>();
    CHECK(ids == oracle({prompt}, 12).at(0).ids);
    const auto after = metrics(port, {queried, hits});
    CHECK(after[0] - before[0] == static_cast<double>(prompt.size() - 1));  // every position but pending
    // The history of the turn before (its prompt and most of its answer) was not prefilled
    // again: all of it but the new message, the answer's last token and the partial last block
    // (whole blocks of 16 positions are cached).
    if (turn > 0) CHECK(after[1] - before[1] >= static_cast<double>(prompt.size()) - 24 - 15);
    prompt.insert(prompt.end(), ids.begin(), ids.end());
    for (int64_t b : bytes_of(" And then?")) prompt.push_back(b);
  }
}

TEST_CASE("prefix cache: --no-prefix-cache prefills every prompt whole, with the same answers") {
  ServerProcess s({"--no-prefix-cache"});
  const auto prompt = bytes_of("Same prompt twice");
  for (int i = 0; i < 2; ++i) {
    HttpResult r = post(s.port(), "/v1/completions", {{"prompt", prompt}, {"max_tokens", 8}, {"return_token_ids", true}});
    REQUIRE(r.status == 200);
    CHECK(r.json_body()["choices"][0]["token_ids"].get<std::vector<int64_t>>() == oracle({prompt}, 8).at(0).ids);
  }
  CHECK(metric(s.port(), "exspec_prefix_cache_hits_total") == 0);
  CHECK(metric(s.port(), "exspec_prefix_cache_queries_total") == static_cast<double>(2 * (prompt.size() - 1)));
}

TEST_CASE("prefix cache: a shared prefix held by a running request is copied into a newcomer's own blocks") {
  ServerProcess s;
  const std::string system = "You are a helpful assistant. Answer briefly and exactly, please. ";  // 4 blocks of 16
  auto ask = [&](const std::string& user, int64_t max_tokens) {
    return post(s.port(), "/v1/completions",
                {{"prompt", bytes_of(system + user)}, {"max_tokens", max_tokens}, {"return_token_ids", true}}, 120);
  };
  REQUIRE(ask("First?", 4).status == 200);  // its blocks are cached when it ends
  // A long one takes the slot whose blocks hold the system prompt; while it runs, another
  // finds them there and has them copied into a free slot's blocks.
  auto running = std::async(std::launch::async, [&] { return ask("Tell me a long story.", 300); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline && metric(s.port(), "exspec_kv_slots_used") < 1)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  HttpResult b = ask("Second?", 12);
  REQUIRE(b.status == 200);
  CHECK(b.json_body()["choices"][0]["token_ids"].get<std::vector<int64_t>>() ==
        oracle({bytes_of(system + "Second?")}, 12).at(0).ids);
  HttpResult a = running.get();
  REQUIRE(a.status == 200);
  CHECK(a.json_body()["choices"][0]["token_ids"].get<std::vector<int64_t>>() ==
        oracle({bytes_of(system + "Tell me a long story.")}, 300).at(0).ids);
  CHECK(metric(s.port(), "exspec_prefix_cache_copied_blocks_total") >= 4);
  CHECK(metric(s.port(), "exspec_prefix_cache_hits_total") >= 2 * 64);
}
