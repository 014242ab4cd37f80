#include "jobs/files.h"

#include <iostream>
#include <vector>

#include "jobs/multipart.h"
#include "jobs/request_error.h"

namespace exspec::jobs {
using nlohmann::ordered_json;

ordered_json file_json(const FileRec& f) {
  return ordered_json{{"id", f.id},           {"object", "file"},       {"bytes", f.bytes},
                      {"created_at", f.created_at}, {"filename", f.filename}, {"purpose", f.purpose},
                      {"status", "processed"}, {"expires_at", nullptr}, {"status_details", nullptr}};
}

FileRec need_file(JobStore& js, const std::string& id) {
  auto f = js.file(id);
  if (!f) throw RequestError(404, "No such File object: " + id, "id", "not_found");
  return *f;
}

ordered_json upload_file(JobStore& js, const std::string& content_type, std::string_view body,
                         uint64_t max_file_bytes) {
  const auto boundary = multipart_boundary(content_type);
  if (!boundary)
    throw RequestError(400, "POST /v1/files takes multipart/form-data with the fields 'file' and 'purpose'", "",
                       "invalid_request");
  std::vector<FormPart> parts;
  try {
    parts = parse_multipart(body, *boundary);
  } catch (const std::invalid_argument& e) {
    throw RequestError(400, std::string("malformed multipart body: ") + e.what(), "", "invalid_request");
  }
  const FormPart* file = nullptr;
  std::string purpose;
  bool has_purpose = false;
  for (const auto& p : parts) {
    if (p.name == "file") file = &p;
    if (p.name == "purpose") {
      purpose = std::string(p.data);
      has_purpose = true;
    }
  }
  if (!has_purpose) throw bad_field("purpose", "missing required parameter: 'purpose'", "missing_required_parameter");
  if (purpose != "batch")
    throw bad_field("purpose", "purpose '" + purpose + "' is not supported: exspec stores files for the Batch API only "
                               "(purpose=batch)", "unsupported_value");
  if (!file) throw bad_field("file", "missing required parameter: 'file'", "missing_required_parameter");
  if (file->data.size() > max_file_bytes)
    throw RequestError(413, "the file is " + std::to_string(file->data.size()) + " bytes; the limit is " +
                                std::to_string(max_file_bytes) + " (limits.max_file_bytes)",
                       "file", "file_too_large");
  const std::string name = file->filename.empty() ? "upload.jsonl" : file->filename;
  return file_json(js.add_file(purpose, name, std::string(file->data)));
}

ordered_json list_files(JobStore& js) {
  ordered_json data = ordered_json::array();
  for (const auto& f : js.files()) data.push_back(file_json(f));
  ordered_json out{{"object", "list"}, {"data", data}, {"has_more", false}};
  out["first_id"] = data.empty() ? ordered_json(nullptr) : data.front()["id"];
  out["last_id"] = data.empty() ? ordered_json(nullptr) : data.back()["id"];
  return out;
}

std::string file_content(JobStore& js, const FileRec& f) {
  try {
    return js.read_content(f);
  } catch (const ContentMissing& e) {
    // The server lost what it had accepted: a server error (500), not the client's. The id is
    // all a client learns; the path goes to the log.
    std::cerr << "exspec serve: " << e.what() << " (looked for " << e.where() << ")" << std::endl;
    throw RequestError(500, std::string(e.what()) + "; an operator must restore it (the server log says where)", "",
                       "file_content_missing");
  }
}

ordered_json delete_file(JobStore& js, const std::string& id) {
  need_file(js, id);
  js.delete_file(id);
  return ordered_json{{"id", id}, {"object", "file"}, {"deleted", true}};
}

}  // namespace exspec::jobs
