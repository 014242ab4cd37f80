#include "jobs/multipart.h"

#include <cctype>
#include <stdexcept>

namespace exspec::jobs {
namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The value of `key=` in a header's parameters ("form-data; name="file"; filename="a.jsonl"").
std::optional<std::string> param(std::string_view header, const std::string& key) {
  size_t pos = 0;
  while (pos < header.size()) {
    size_t semi = header.find(';', pos);
    // a quoted value may hold ';': skip over quotes when looking for the end
    size_t q = header.find('"', pos);
    if (q != std::string_view::npos && q < semi) {
      const size_t q2 = header.find('"', q + 1);
      if (q2 == std::string_view::npos) break;
      semi = header.find(';', q2);
    }
    const std::string_view item = trim(header.substr(pos, semi == std::string_view::npos ? semi : semi - pos));
    const size_t eq = item.find('=');
    if (eq != std::string_view::npos && lower(trim(item.substr(0, eq))) == key) {
      std::string_view v = trim(item.substr(eq + 1));
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
      std::string out;
      for (size_t i = 0; i < v.size(); ++i) {  // quoted-pair: \" and \\ (what browsers and clients send)
        if (v[i] == '\\' && i + 1 < v.size()) ++i;
        out += v[i];
      }
      return out;
    }
    if (semi == std::string_view::npos) break;
    pos = semi + 1;
  }
  return std::nullopt;
}

// The next "\r\n--boundary" that really is a delimiter: followed by CRLF or "--" (content may
// contain the boundary text followed by anything else, RFC 2046 5.1.1).
size_t find_delimiter(std::string_view body, const std::string& delim, size_t from) {
  while (true) {
    const size_t at = body.find(delim, from);
    if (at == std::string_view::npos) return at;
    const std::string_view after = body.substr(at + delim.size(), 2);
    if (after == "\r\n" || after == "--") return at;
    from = at + 1;
  }
}

}  // namespace

std::optional<std::string> multipart_boundary(std::string_view ct) {
  const size_t semi = ct.find(';');
  if (lower(trim(ct.substr(0, semi))) != "multipart/form-data" || semi == std::string_view::npos) return std::nullopt;
  auto b = param(ct.substr(semi + 1), "boundary");
  if (!b || b->empty() || b->size() > 200) return std::nullopt;
  return b;
}

std::vector<FormPart> parse_multipart(std::string_view body, const std::string& boundary) {
  const std::string delim = "--" + boundary;
  std::vector<FormPart> parts;
  size_t pos = body.rfind(delim, 0) == 0 ? 0 : find_delimiter(body, "\r\n" + delim, 0);
  if (pos != 0 && pos != std::string_view::npos) pos += 2;
  if (pos == std::string_view::npos) throw std::invalid_argument("the multipart body has no boundary line");
  pos += delim.size();
  while (true) {
    if (body.substr(pos, 2) == "--") return parts;  // the closing delimiter
    if (body.substr(pos, 2) != "\r\n") throw std::invalid_argument("malformed multipart boundary line");
    pos += 2;
    FormPart part;
    // headers, up to an empty line
    while (true) {
      const size_t eol = body.find("\r\n", pos);
      if (eol == std::string_view::npos) throw std::invalid_argument("a multipart part ends inside its headers");
      const std::string_view line = body.substr(pos, eol - pos);
      pos = eol + 2;
      if (line.empty()) break;
      const size_t colon = line.find(':');
      if (colon == std::string_view::npos) throw std::invalid_argument("malformed multipart part header");
      const std::string name = lower(trim(line.substr(0, colon)));
      const std::string_view value = trim(line.substr(colon + 1));
      if (name == "content-disposition") {
        part.name = param(value, "name").value_or("");
        part.filename = param(value, "filename").value_or("");
      } else if (name == "content-type") {
        part.content_type = std::string(value);
      }
    }
    const size_t end = find_delimiter(body, "\r\n" + delim, pos);
    if (end == std::string_view::npos) throw std::invalid_argument("the multipart body has no closing boundary");
    part.data = body.substr(pos, end - pos);
    parts.push_back(part);
    pos = end + 2 + delim.size();
  }
}

}  // namespace exspec::jobs
