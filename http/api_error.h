// Errors in the OpenAI shape: {"error": {"message", "type", "param", "code"}} with an HTTP status,
// or, on the Anthropic Messages routes, Anthropic's: {"type": "error", "error": {"type", "message"}}.
// Request handling throws ApiError; the server turns it into the response.
#pragma once
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace exspec::http {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string message, std::string param = "", std::string code = "", std::string type = "")
      : std::runtime_error(message), status_(status), param_(std::move(param)), code_(std::move(code)),
        type_(type.empty() ? default_type(status) : std::move(type)) {}

  int status() const { return status_; }
  const std::string& param() const { return param_; }
  const std::string& code() const { return code_; }
  const std::string& type() const { return type_; }

  nlohmann::json to_json() const {
    nlohmann::json e{{"message", what()}, {"type", type_}, {"param", nullptr}, {"code", nullptr}};
    if (!param_.empty()) e["param"] = param_;
    if (!code_.empty()) e["code"] = code_;
    return nlohmann::json{{"error", e}};
  }

  // Anthropic's shape: its type follows the status as Anthropic's own errors do.
  nlohmann::json to_anthropic_json() const {
    return nlohmann::json{{"type", "error"}, {"error", {{"type", anthropic_type(status_)}, {"message", what()}}}};
  }

  static std::string anthropic_type(int status) {
    switch (status) {
      case 401: return "authentication_error";
      case 403: return "permission_error";
      case 404: return "not_found_error";
      case 413: return "request_too_large";
      case 429: return "rate_limit_error";
      case 503: case 529: return "overloaded_error";
      default: return status >= 500 ? "api_error" : "invalid_request_error";
    }
  }

  static std::string default_type(int status) {
    switch (status) {
      case 401: return "authentication_error";
      case 403: return "permission_error";
      case 404: return "not_found_error";
      case 429: return "rate_limit_error";
      case 503: return "service_unavailable_error";
      default: return status >= 500 ? "server_error" : "invalid_request_error";
    }
  }

 private:
  int status_;
  std::string param_, code_, type_;
};

// A 400 for a request field: message names the field, param is set.
inline ApiError bad_param(const std::string& param, const std::string& message,
                          const std::string& code = "invalid_value") {
  return ApiError(400, message, param, code);
}

}  // namespace exspec::http
