#include "http/prediction_request.h"

#include <string>

#include "http/api_error.h"
#include "http/json_body.h"
#include "model/tokenizer/tokenizer.h"

namespace exspec::http {
namespace {

using nlohmann::ordered_json;

ApiError bad(const std::string& what, const char* code = "invalid_value") {
  return bad_param("prediction", what, code);
}

std::vector<int64_t> text_ids(const std::string& text, const ModelFacts& m) {
  if (!m.tokenizer) throw bad("this model has no tokenizer.json: send the prediction's content as token ids", "unsupported_value");
  return m.tokenizer->encode(text, /*add_special_tokens=*/false, /*allow_special=*/false);
}

std::vector<int64_t> content_ids(const ordered_json& c, const ModelFacts& m) {
  if (c.is_string()) return text_ids(c.get<std::string>(), m);
  if (!c.is_array()) throw bad("'prediction.content' must be a string or an array", "invalid_type");
  // token ids (an exspec extension)
  if (!c.empty() && c[0].is_number()) return token_ids(c, m, "prediction", "'prediction.content' as token ids");
  std::string text;
  for (const auto& part : c) {
    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") || !part["text"].is_string())
      throw bad("each part of 'prediction.content' must be {\"type\": \"text\", \"text\": \"...\"}", "invalid_type");
    text += part["text"].get<std::string>();
  }
  return text_ids(text, m);
}

}  // namespace

std::vector<int64_t> parse_prediction(const ordered_json& body, const ModelFacts& m) {
  const ordered_json* p = field(body, "prediction");
  if (!p) return {};
  if (!p->is_object()) throw bad("'prediction' must be an object", "invalid_type");
  for (auto it = p->begin(); it != p->end(); ++it)
    if (it.key() != "type" && it.key() != "content")
      throw bad("Unrecognized prediction field: " + it.key(), "unknown_parameter");
  if (!p->contains("type") || (*p)["type"] != "content") throw bad("'prediction.type' must be \"content\"");
  if (!p->contains("content")) throw bad("'prediction.content' is required", "missing_required_parameter");
  std::vector<int64_t> ids = content_ids((*p)["content"], m);
  if (static_cast<int64_t>(ids.size()) > m.context)
    throw bad("the prediction (" + std::to_string(ids.size()) + " tokens) is longer than the model's context (" +
              std::to_string(m.context) + " tokens)");
  return ids;
}

}  // namespace exspec::http
