#include "http/line_start.h"

#include <chrono>

#include "http/json_body.h"
#include "http/openai_request.h"

namespace exspec::http {

LineStart start_line(const BatchLine& line, bool chat, const ModelFacts& facts, GenerationEnv env,
                     std::shared_ptr<GenerationOutput> out) {
  LineStart s;
  GenRequest g;
  try {
    g = chat ? parse_chat_request(line.body, facts) : parse_completion_request(line.body, facts);
  } catch (const ApiError& e) {
    // A grammar compile refused for now (a full pool, a stopping server) is no fault of the line.
    if (e.status() == 429 || e.status() == 503) s.busy = true;
    else s.refused = e;  // a 400 in the error file, as the endpoint answers it
    return s;
  } catch (const nlohmann::json::exception& e) {
    s.refused = json_value_error(e);  // as route_request answers it
    return s;
  }
  auto gen = std::make_shared<Generation>(std::move(g), std::move(env), std::move(out), std::chrono::steady_clock::now());
  try {
    gen->start();
  } catch (const ApiError& e) {
    if (e.status() == 429 || e.status() == 503) s.busy = true;
    else s.refused = e;
    return s;
  }
  s.gen = std::move(gen);
  return s;
}

}  // namespace exspec::http
