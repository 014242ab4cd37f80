// A request the Files or Batches API (jobs/files.h, jobs/batches.h) refuses, as the client is
// told: OpenAI's status for it, the message, the field (param) and the code. http/ answers it as
// its ApiError; jobs/ knows nothing of HTTP but the status number. Torch-free.
#pragma once
#include <stdexcept>
#include <string>

namespace exspec::jobs {

class RequestError : public std::runtime_error {
 public:
  RequestError(int status, const std::string& message, std::string param = "", std::string code = "")
      : std::runtime_error(message), status(status), param(std::move(param)), code(std::move(code)) {}
  int status;
  std::string param, code;
};

// A 400 for a request field.
inline RequestError bad_field(const std::string& param, const std::string& message,
                              const std::string& code = "invalid_value") {
  return RequestError(400, message, param, code);
}

}  // namespace exspec::jobs
