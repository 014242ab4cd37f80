// What the request converters of the other APIs (http/messages_request.cpp,
// http/responses_request.cpp) share: a 400 whose message starts with the field it names, a walk
// over a list of objects with each one's path, and text given as a string or as text parts.
// Torch-free.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "http/api_error.h"
#include "http/json_body.h"

namespace exspec::http {

[[noreturn]] inline void refuse(const std::string& at, const std::string& message, const char* code = "invalid_value") {
  throw bad_param(at, at + ": " + message, code);
}

// `list` must be an array (`what` says of what) of objects: fn(element, its path) for each, the
// path name.0 when `dotted` (Anthropic's way), else name[0] (OpenAI's).
template <class Fn>
void each_object(const nlohmann::ordered_json& list, const std::string& name, bool dotted, const char* what, Fn fn) {
  if (!list.is_array()) refuse(name, std::string("must be ") + what, "invalid_type");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = dotted ? name + "." + std::to_string(i) : name + "[" + std::to_string(i) + "]";
    if (!list[i].is_object()) refuse(at, "must be an object", "invalid_type");
    fn(list[i], at);
  }
}

// A string, or an array of text parts joined: objects of one of `types`, each with a string
// "text" and no fields but `fields`.
inline std::string joined_text(const nlohmann::ordered_json& v, const std::string& at, bool dotted,
                               std::initializer_list<const char*> types, std::initializer_list<const char*> fields) {
  if (v.is_string()) return v.get<std::string>();
  std::string text;
  each_object(v, at, dotted, "a string or an array of text parts", [&](const nlohmann::ordered_json& p, const std::string& pj) {
    const nlohmann::ordered_json& type = need_field(p, "type", pj, &nlohmann::ordered_json::is_string, "a string");
    bool known = false;
    std::string names;
    for (const char* t : types) known = known || type == t, names += (names.empty() ? "" : ", ") + std::string(t);
    if (!known) refuse(pj + ".type", "parts of type " + type.dump() + " are not supported here (" + names + ")", "unsupported_value");
    only_fields(p, pj, fields);
    text += need_field(p, "text", pj, &nlohmann::ordered_json::is_string, "a string").get<std::string>();
  });
  return text;
}

}  // namespace exspec::http
