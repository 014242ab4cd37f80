// A GLM-4 pair behind the server: the chat template comes from the model's tokenizer_config.json,
// the prompt is GLM-4's special tokens, and the answer is the float64 oracle's, ending where the
// model starts the next turn (<|user|> or <|observation|>).
#include <fstream>

#include <catch2/catch.hpp>

#include "tests/http/support.h"

using namespace exspec::httptest;

namespace {

// Greedy float64 ids of `model` (its own EOS ids) for one prompt.
OracleOut glm_oracle(const std::string& model, const std::vector<int64_t>& prompt, int64_t max_tokens) {
  const std::string file = scratch() + "/glm-oracle.jsonl";
  std::ofstream(file) << json{{"prompt_ids", prompt}}.dump() << "\n";
  int st = 0;
  const std::string cmd = std::string(EXSPEC_BIN) + " generate --model " + model +
                          " --dtype float64 --oracle --threads 1 --max-tokens " + std::to_string(max_tokens) +
                          " --prompts-file " + file + " 2>/dev/null";
  const json j = json::parse(run_capture(cmd, &st));
  REQUIRE(st == 0);
  return {j["token_ids"].get<std::vector<int64_t>>(), j["finish_reason"].get<std::string>()};
}

}  // namespace

TEST_CASE("GLM-4 chat: template from tokenizer_config.json, oracle tokens, <|user|> ends the answer") {
  const std::string target = scratch() + "/glm4-target", draft = scratch() + "/glm4-draft";
  int st = 0;
  run_capture(std::string(EXSPEC_BIN) + " make-model --arch glm4 --preset tiny --seed 5 --out " + target + " 2>&1", &st);
  REQUIRE(st == 0);
  run_capture(std::string(EXSPEC_BIN) + " make-model --draft-of " + target + " --layers 1 --out " + draft + " 2>&1", &st);
  REQUIRE(st == 0);
  // Only </s> stays an EOS id of the model: <|user|> and <|observation|> must end the answer
  // because the chat template says so (a GLM checkpoint whose generation_config lacks them).
  for (const std::string& dir : {target, draft})
    std::ofstream(dir + "/generation_config.json") << R"({"bos_token_id": 256, "eos_token_id": 257})";
  ServerProcess s({"--model", target, "--draft", draft, "--served-model-name", "glm4"});

  // [gMASK] <sop> <|system|> <|user|> <|assistant|> <|observation|> are ids 258..263.
  const int64_t gmask = 258, sop = 259, system = 260, user = 261, assistant = 262, observation = 263;
  int stopped = 0;
  // With seed 5, "What is GLM?" and "Why?" reach <|user|> or <|observation|> within 40 tokens.
  for (const char* question : {"Hi there", "What is GLM?", "Why?", "Tell me more."}) {
    std::vector<int64_t> prompt{gmask, sop, system, '\n'};
    for (unsigned char ch : std::string("Be brief.")) prompt.push_back(ch);
    prompt.insert(prompt.end(), {user, '\n'});
    for (unsigned char ch : std::string(question)) prompt.push_back(ch);
    prompt.push_back(assistant);
    auto want = glm_oracle(target, prompt, 40);  // stops on </s> only
    bool turn_ended = false;
    for (size_t k = 0; k < want.ids.size() && !turn_ended; ++k)
      if (want.ids[k] == user || want.ids[k] == observation) {
        want.ids.resize(k + 1);
        want.finish = "stop";
        turn_ended = true;
      }
    HttpResult r = post(s.port(), "/v1/chat/completions",
                        {{"model", "glm4"},
                         {"messages", json::array({{{"role", "system"}, {"content", "Be brief."}},
                                                   {{"role", "user"}, {"content", question}}})},
                         {"max_tokens", 40},
                         {"return_token_ids", true}});
    INFO(question << ": " << r.body);
    REQUIRE(r.status == 200);
    const json body = r.json_body();
    const json& c = body["choices"][0];
    CHECK(c["prompt_token_ids"].get<std::vector<int64_t>>() == prompt);
    CHECK(c["token_ids"].get<std::vector<int64_t>>() == want.ids);
    CHECK(c["finish_reason"] == want.finish);
    if (turn_ended) {
      ++stopped;
      const std::string content = c["message"]["content"];
      CHECK(content.find("<|user|>") == std::string::npos);
      CHECK(content.find("<|observation|>") == std::string::npos);
    }
  }
  CHECK(stopped > 0);  // some answer really ended on <|user|> or <|observation|>
}
