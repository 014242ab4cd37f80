#include "http/route_match.h"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

namespace exspec::http {
namespace {

std::vector<std::string> split_pattern(const std::string& pattern) {
  std::vector<std::string> out;
  if (pattern == "/") return out;  // the root: no segments, as Boost.URL splits "/"
  for (size_t pos = 1; pos <= pattern.size();) {
    size_t slash = pattern.find('/', pos);
    if (slash == std::string::npos) slash = pattern.size();
    out.push_back(pattern.substr(pos, slash - pos));
    pos = slash + 1;
  }
  return out;
}

bool is_param(const std::string& s) { return s.size() > 2 && s.front() == '{' && s.back() == '}'; }
bool is_rest(const std::string& s) { return is_param(s) && s.size() > 5 && s.compare(s.size() - 4, 4, "...}") == 0; }

}  // namespace

std::string Target::param(const std::string& key) const {
  for (const auto& [k, v] : query)
    if (k == key) return v;
  return "";
}

std::optional<Target> parse_target(const std::string& target) {
  auto u = boost::urls::parse_origin_form(target);
  if (!u) u = boost::urls::parse_absolute_uri(target);
  if (!u) return std::nullopt;
  Target t;
  t.path = std::string(u->encoded_path());
  if (t.path.empty() || t.path.front() != '/') return std::nullopt;
  for (const auto& s : u->segments()) t.segments.push_back(s);
  for (const auto& p : u->params()) t.query.emplace_back(p.key, p.value);
  return t;
}

bool match_pattern(const std::string& pattern, const std::vector<std::string>& segments, std::vector<std::string>& params) {
  const std::vector<std::string> want = split_pattern(pattern);
  params.clear();
  for (size_t i = 0; i < want.size(); ++i) {
    if (is_rest(want[i])) {
      if (i + 1 != want.size() || i >= segments.size()) return false;
      std::string rest = segments[i];
      for (size_t j = i + 1; j < segments.size(); ++j) rest += "/" + segments[j];
      params.push_back(rest);
      return true;
    }
    if (i >= segments.size()) return false;
    if (is_param(want[i])) {
      if (segments[i].empty()) return false;
      params.push_back(segments[i]);
    } else if (want[i] != segments[i]) {
      return false;
    }
  }
  return want.size() == segments.size();
}

std::string pattern_label(const std::string& pattern) {
  std::string out = pattern;
  for (size_t at; (at = out.find("...}")) != std::string::npos;) out.erase(at, 3);
  return out;
}

}  // namespace exspec::http
