#include "jobs/json_text.h"

#include <vector>

namespace exspec::jobs {
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

}  // namespace exspec::jobs
