// The checkpoint's sampling defaults (generation_config.json, --generation-config auto): a real
// server in the default mode with a draft, on a tiny pair whose generation_config.json
// recommends sampling. A request that leaves the fields out gets them; its own values win;
// --generation-config none restores the API's (greedy); batch lines get the same. Every answer is
// compared with the float64 oracle (`exspec generate --oracle --generation-config none`) given
// the same values explicitly, token for token.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "http/api_error.h"
#include "http/sampling_request.h"
#include "model/generation_defaults.h"
#include "tests/http/support.h"

using namespace exspec::httptest;

namespace {

// What the checkpoint recommends, and the same as the oracle's explicit flags.
const json kDefaults{{"temperature", 0.9}, {"top_p", 0.8}, {"top_k", 30}, {"repetition_penalty", 1.3},
                     {"max_new_tokens", 12}};
const std::string kExplicit = "--temperature 0.9 --top-p 0.8 --top-k 30 --repetition-penalty 1.3 --max-tokens 12";

// A tiny pair (seed 3) whose target's generation_config.json keeps its EOS and adds kDefaults.
const std::string& pair_dir() {
  static const std::string dir = [] {
    const std::string d = make_pair("--arch llama --preset tiny --seed 3", "gen-defaults");
    json g = json::parse(std::ifstream(d + "/generation_config.json"));
    g.update(kDefaults);
    std::ofstream(d + "/generation_config.json") << g.dump(2);
    return d;
  }();
  return dir;
}

std::vector<std::string> pair_flags(std::vector<std::string> extra = {}) {
  std::vector<std::string> f{"--model", pair_dir(), "--draft", pair_dir() + "-draft"};
  f.insert(f.end(), extra.begin(), extra.end());
  return f;
}

// Plain decoding of the pair's target (float64, batch 1), the checkpoint's defaults off: only
// `flags` say how to sample.
std::vector<int64_t> plain(const std::vector<int64_t>& prompt, const std::string& flags) {
  const std::string file = scratch() + "/gen-defaults-prompt.jsonl";
  std::ofstream(file) << json{{"prompt_ids", prompt}}.dump() << "\n";
  int st = 0;
  const std::string cmd = std::string(EXSPEC_BIN) + " generate --model " + pair_dir() +
                          " --dtype float64 --oracle --threads 1 --generation-config none " + flags +
                          " --prompts-file " + file + " 2>/dev/null";
  const std::string out = run_capture(cmd, &st);
  INFO(cmd);
  REQUIRE(st == 0);
  return json::parse(out)["token_ids"].get<std::vector<int64_t>>();
}

json post_ok(int port, const std::string& path, const json& body) {
  HttpResult r = post(port, path, body);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json_body();
}

std::vector<int64_t> ids_of(const json& r, size_t i = 0) {
  return r["choices"][i]["token_ids"].get<std::vector<int64_t>>();
}

}  // namespace

TEST_CASE("generation defaults: read from generation_config.json and checked and used only for the fields left out") {
  const std::string dir = scratch() + "/gen-defaults-file";
  std::filesystem::create_directories(dir);
  CHECK(exspec::read_generation_defaults(dir).empty());  // no file: none
  std::ofstream(dir + "/generation_config.json") << R"({"eos_token_id": 2, "do_sample": true, "temperature": 0.6,
                                                       "top_p": 0.95, "top_k": -1, "min_p": 0.05})";
  const exspec::GenerationDefaults d = exspec::read_generation_defaults(dir);
  CHECK(d.describe() == "temperature 0.6, top_p 0.95, top_k 0, min_p 0.05");
  CHECK(exspec::generation_defaults("none", dir).empty());
  CHECK(exspec::generation_defaults("auto", dir).describe() == d.describe());
  CHECK_THROWS_WITH(exspec::generation_defaults(dir + "/nowhere", dir), Catch::Contains("neither auto, none"));

  const auto p = exspec::http::parse_sampling(json{{"top_p", 1}}, false, 100, d).params;
  CHECK(p.temperature == 0.6);
  CHECK(p.top_p == 1);  // the request's own
  CHECK(p.top_k == 0);
  CHECK(p.min_p == 0.05);
  CHECK(p.repetition_penalty == 1);  // not in the file: the API's
  CHECK(exspec::http::parse_sampling(json::object(), false, 100).params.temperature == 0);  // no defaults: greedy

  for (const char* bad : {R"({"temperature": 2.5})", R"({"top_p": "high"})", R"({"repetition_penalty": 0})",
                          R"({"max_new_tokens": 0})", "[1]"}) {
    std::ofstream(dir + "/generation_config.json") << bad;
    INFO(bad);
    CHECK_THROWS_WITH(exspec::read_generation_defaults(dir), Catch::Contains(dir + "/generation_config.json"));
  }
}

TEST_CASE("generation defaults: a request leaving the fields out samples as the checkpoint says (plain decoding "
          "with the same explicit values) and its own values win") {
  ServerProcess s(pair_flags());
  CHECK(s.log().find("sampling defaults (--generation-config auto): temperature 0.9, top_p 0.8, top_k 30, "
                     "repetition_penalty 1.3, max_new_tokens 12") != std::string::npos);
  const json card = request(s.port(), "GET", "/v1/models").json_body()["data"][0]["settings"];
  CHECK(card["generation_config"] == "auto");
  CHECK(card["generation_defaults"] == json{{"temperature", 0.9}, {"top_p", 0.8}, {"top_k", 30},
                                            {"repetition_penalty", 1.3}, {"max_tokens", 12}});

  const auto prompt = bytes_of("The checkpoint says");
  // Seeded, nothing else: the defaults, and max_tokens from max_new_tokens.
  const json r = post_ok(s.port(), "/v1/completions",
                         {{"prompt", prompt}, {"seed", 11}, {"return_token_ids", true}});
  const auto want = plain(prompt, kExplicit + " --seed 11");
  CHECK(ids_of(r, 0) == want);
  CHECK(ids_of(r, 0).size() <= 12);
  CHECK(ids_of(r, 0) != plain(prompt, "--max-tokens 12"));  // it sampled: not the greedy answer
  // Chat too (the prompt as the template renders it).
  const json c = post_ok(s.port(), "/v1/chat/completions",
                         {{"messages", json::array({{{"role", "user"}, {"content", "Hi"}}})},
                          {"seed", 4},
                          {"return_token_ids", true}});
  const auto chat_prompt = c["choices"][0]["prompt_token_ids"].get<std::vector<int64_t>>();
  const auto chat_ids = ids_of(c);
  auto chat_want = plain(chat_prompt, kExplicit + " --seed 4");
  chat_want.resize(std::min(chat_want.size(), chat_ids.size()));  // the template's stop string may end it sooner
  CHECK(chat_ids == chat_want);

  // The request's own values win, each field on its own: temperature and top_k set, the rest
  // from the checkpoint.
  const json own = post_ok(s.port(), "/v1/completions",
                           {{"prompt", prompt}, {"seed", 11}, {"temperature", 1.5}, {"top_k", 0}, {"max_tokens", 9},
                            {"return_token_ids", true}});
  CHECK(ids_of(own) == plain(prompt, "--temperature 1.5 --top-p 0.8 --repetition-penalty 1.3 --max-tokens 9 --seed 11"));
  // Greedy asked for explicitly is greedy (with the checkpoint's repetition penalty unless reset).
  const json greedy = post_ok(s.port(), "/v1/completions",
                              {{"prompt", prompt}, {"temperature", 0}, {"repetition_penalty", 1}, {"max_tokens", 10},
                               {"return_token_ids", true}});
  CHECK(ids_of(greedy) == plain(prompt, "--max-tokens 10"));
}

TEST_CASE("generation defaults: --generation-config none restores the API's defaults (greedy, 16 tokens)") {
  ServerProcess s(pair_flags({"--generation-config", "none"}));
  CHECK(s.log().find("sampling defaults (--generation-config none): none") != std::string::npos);
  const json card = request(s.port(), "GET", "/v1/models").json_body()["data"][0]["settings"];
  CHECK(card["generation_config"] == "none");
  CHECK(card["generation_defaults"] == json::object());
  const auto prompt = bytes_of("No defaults here");
  const json r = post_ok(s.port(), "/v1/completions", {{"prompt", prompt}, {"seed", 11}, {"return_token_ids", true}});
  CHECK(ids_of(r) == plain(prompt, "--max-tokens 16"));
}

TEST_CASE("generation defaults: batch lines get them, and exspec generate applies them to the flags left out") {
  const auto prompt = bytes_of("A batch line");
  const std::string in = scratch() + "/gen-defaults-in.jsonl", out = scratch() + "/gen-defaults-out.jsonl";
  std::ofstream(in) << json{{"custom_id", "a"}, {"method", "POST"}, {"url", "/v1/completions"},
                            {"body", {{"prompt", prompt}, {"seed", 7}, {"return_token_ids", true}}}}.dump()
                    << "\n";
  const std::string cmd = std::string(EXSPEC_BIN) + " batch --input " + in + " --output " + out + " --model " +
                          pair_dir() + " --draft " + pair_dir() + "-draft --dtype float64 --threads 1 2>&1";
  int st = 0;
  const std::string log = run_capture(cmd, &st);
  INFO(log);
  REQUIRE(st == 0);
  CHECK(log.find("sampling defaults (--generation-config auto): temperature 0.9") != std::string::npos);
  const json line = json::parse(std::ifstream(out));
  const auto want = plain(prompt, kExplicit + " --seed 7");
  CHECK(line["response"]["body"]["choices"][0]["token_ids"].get<std::vector<int64_t>>() == want);

  // exspec generate (the default mode, with the draft): the flags left out take the defaults.
  const std::string file = scratch() + "/gen-defaults-generate.jsonl";
  std::ofstream(file) << json{{"prompt_ids", prompt}}.dump() << "\n";
  const std::string gen = run_capture(std::string(EXSPEC_BIN) + " generate --model " + pair_dir() + " --draft " +
                                          pair_dir() + "-draft --dtype float64 --threads 1 --seed 7 --prompts-file " +
                                          file + " 2>/dev/null", &st);
  REQUIRE(st == 0);
  CHECK(json::parse(gen)["token_ids"].get<std::vector<int64_t>>() == want);
}
