#include "http/json_body.h"

#include <vector>

namespace exspec::http {
using nlohmann::ordered_json;

namespace {

struct Frame {
  bool array = false;
  std::string key;    // objects: the key of the value being parsed
  int64_t index = 0;  // arrays: the index of the element being parsed
};

std::string path_of(const std::vector<Frame>& st) {
  std::string p;
  for (const Frame& f : st) {
    if (f.array) p += "[" + std::to_string(f.index) + "]";
    else if (!f.key.empty()) p += (p.empty() ? "" : ".") + f.key;
  }
  return p;
}

}  // namespace

ordered_json parse_json_text(const std::string& text) {
  std::vector<Frame> st;
  auto track = [&st](int depth, ordered_json::parse_event_t ev, ordered_json& parsed) {
    switch (ev) {
      case ordered_json::parse_event_t::object_start:
      case ordered_json::parse_event_t::array_start:
        if (depth >= kMaxJsonDepth)
          throw JsonBodyError("values are nested more than " + std::to_string(kMaxJsonDepth) + " deep", path_of(st));
        st.push_back(Frame{ev == ordered_json::parse_event_t::array_start, "", 0});
        break;
      case ordered_json::parse_event_t::key:
        if (!st.empty() && parsed.is_string()) st.back().key = parsed.get<std::string>();
        break;
      case ordered_json::parse_event_t::object_end:
      case ordered_json::parse_event_t::array_end:
        if (!st.empty()) st.pop_back();
        if (!st.empty() && st.back().array) ++st.back().index;
        break;
      case ordered_json::parse_event_t::value:
        if (!st.empty() && st.back().array) ++st.back().index;
        break;
    }
    return true;
  };
  try {
    return ordered_json::parse(text, track);
  } catch (const ordered_json::exception& e) {  // syntax errors, and numbers beyond double (out_of_range 406)
    const std::string p = path_of(st);
    throw JsonBodyError(std::string(e.what()) + (p.empty() ? "" : " (at '" + p + "')"), p);
  }
}

void only_fields(const ordered_json& obj, const std::string& at, std::initializer_list<const char*> known) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (const char* k : known) ok = ok || it.key() == k;
    if (!ok) throw bad_param(at + "." + it.key(), at + "." + it.key() + " is not supported", "unknown_parameter");
  }
}

const ordered_json& need_field(const ordered_json& obj, const char* key, const std::string& at,
                               bool (ordered_json::*is)() const noexcept, const char* what) {
  const ordered_json* v = field(obj, key);
  const std::string p = at + "." + key;
  if (!v) throw bad_param(p, p + " is required", "missing_required_parameter");
  if (!(v->*is)()) throw bad_param(p, p + " must be " + what, "invalid_type");
  return *v;
}

ordered_json parse_json_body(const std::string& body) {
  try {
    return parse_json_text(body);
  } catch (const JsonBodyError& e) {
    throw ApiError(400, std::string("the request body is not valid JSON: ") + e.what(), e.path, "invalid_json");
  }
}

ApiError json_value_error(const std::exception& e) {
  return ApiError(400, std::string("a value in the request body has the wrong type or range: ") + e.what(), "",
                  "invalid_value");
}

}  // namespace exspec::http
