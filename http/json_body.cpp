#include "http/json_body.h"

#include <vector>

namespace exspec::http {
using nlohmann::json;

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

json parse_json_text(const std::string& text) {
  std::vector<Frame> st;
  auto track = [&st](int depth, json::parse_event_t ev, json& parsed) {
    switch (ev) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (depth >= kMaxJsonDepth)
          throw JsonBodyError("values are nested more than " + std::to_string(kMaxJsonDepth) + " deep", path_of(st));
        st.push_back(Frame{ev == json::parse_event_t::array_start, "", 0});
        break;
      case json::parse_event_t::key:
        if (!st.empty() && parsed.is_string()) st.back().key = parsed.get<std::string>();
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!st.empty()) st.pop_back();
        if (!st.empty() && st.back().array) ++st.back().index;
        break;
      case json::parse_event_t::value:
        if (!st.empty() && st.back().array) ++st.back().index;
        break;
    }
    return true;
  };
  try {
    return json::parse(text, track);
  } catch (const json::exception& e) {  // syntax errors, and numbers beyond double (out_of_range 406)
    const std::string p = path_of(st);
    throw JsonBodyError(std::string(e.what()) + (p.empty() ? "" : " (at '" + p + "')"), p);
  }
}

json parse_json_body(const std::string& body) {
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
