// GGUF's value and tensor type tables and the typed metadata getters.
#include <cmath>
#include <limits>
#include <stdexcept>

#include "model/gguf/gguf_file.h"

namespace exspec::gguf {

const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::U8: return "u8";
    case ValueType::I8: return "i8";
    case ValueType::U16: return "u16";
    case ValueType::I16: return "i16";
    case ValueType::U32: return "u32";
    case ValueType::I32: return "i32";
    case ValueType::F32: return "f32";
    case ValueType::Bool: return "bool";
    case ValueType::String: return "string";
    case ValueType::Array: return "array";
    case ValueType::U64: return "u64";
    case ValueType::I64: return "i64";
    case ValueType::F64: return "f64";
  }
  return "?";
}

bool Value::is_integer() const {
  switch (type) {
    case ValueType::U8: case ValueType::I8: case ValueType::U16: case ValueType::I16: case ValueType::U32:
    case ValueType::I32: case ValueType::U64: case ValueType::I64: return true;
    default: return false;
  }
}

std::string Value::describe() const {
  switch (type) {
    case ValueType::String: return "string \"" + (s.size() > 40 ? s.substr(0, 40) + "..." : s) + "\"";
    case ValueType::Array:
      return "array of " + std::to_string(items.size()) + " " + value_type_name(elem);
    case ValueType::Bool: return i ? "bool true" : "bool false";
    case ValueType::F32: case ValueType::F64: return std::string(value_type_name(type)) + " " + std::to_string(f);
    case ValueType::U8: case ValueType::U16: case ValueType::U32: case ValueType::U64:
      return std::string(value_type_name(type)) + " " + std::to_string(u);
    default: return std::string(value_type_name(type)) + " " + std::to_string(i);
  }
}

int64_t TensorInfo::elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<int64_t> TensorInfo::shape() const { return std::vector<int64_t>(dims.rbegin(), dims.rend()); }

const Value* GgufFile::find(const std::string& key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

const TensorInfo* GgufFile::tensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

void GgufFile::fail(const std::string& what) const { throw std::runtime_error(path_ + ": " + what); }

const Value& GgufFile::need(const std::string& key, const char* what) const {
  const Value* v = find(key);
  if (!v) fail("no metadata key \"" + key + "\" (" + what + " expected)");
  return *v;
}

namespace {

int64_t as_int(const Value& v, bool* ok) {
  *ok = v.is_integer();
  if (!*ok) return 0;
  switch (v.type) {
    case ValueType::U8: case ValueType::U16: case ValueType::U32: case ValueType::U64:
      *ok = v.u <= uint64_t(std::numeric_limits<int64_t>::max());
      return int64_t(v.u);
    default: return v.i;
  }
}

}  // namespace

std::string GgufFile::get_string(const std::string& key) const {
  const Value& v = need(key, "a string");
  if (v.type != ValueType::String) fail("metadata \"" + key + "\" is " + v.describe() + ", a string expected");
  return v.s;
}

int64_t GgufFile::get_int(const std::string& key) const {
  const Value& v = need(key, "an integer");
  bool ok = false;
  int64_t n = as_int(v, &ok);
  if (!ok) fail("metadata \"" + key + "\" is " + v.describe() + ", an integer expected");
  return n;
}

double GgufFile::get_float(const std::string& key) const {
  const Value& v = need(key, "a number");
  if (v.type == ValueType::F32 || v.type == ValueType::F64) return v.f;
  bool ok = false;
  int64_t n = as_int(v, &ok);
  if (!ok) fail("metadata \"" + key + "\" is " + v.describe() + ", a number expected");
  return double(n);
}

bool GgufFile::get_bool(const std::string& key) const {
  const Value& v = need(key, "a bool");
  if (v.type != ValueType::Bool) fail("metadata \"" + key + "\" is " + v.describe() + ", a bool expected");
  return v.i != 0;
}

std::vector<std::string> GgufFile::get_strings(const std::string& key) const {
  const Value& v = need(key, "an array of strings");
  if (v.type != ValueType::Array || v.elem != ValueType::String)
    fail("metadata \"" + key + "\" is " + v.describe() + ", an array of strings expected");
  std::vector<std::string> out;
  out.reserve(v.items.size());
  for (const Value& e : v.items) out.push_back(e.s);
  return out;
}

std::vector<int64_t> GgufFile::get_ints(const std::string& key) const {
  const Value& v = need(key, "an array of integers");
  std::vector<int64_t> out;
  bool ok = v.type == ValueType::Array;
  for (size_t k = 0; ok && k < v.items.size(); ++k) out.push_back(as_int(v.items[k], &ok));
  if (!ok) fail("metadata \"" + key + "\" is " + v.describe() + ", an array of integers expected");
  return out;
}

std::vector<double> GgufFile::get_floats(const std::string& key) const {
  const Value& v = need(key, "an array of numbers");
  if (v.type != ValueType::Array || (v.elem != ValueType::F32 && v.elem != ValueType::F64))
    fail("metadata \"" + key + "\" is " + v.describe() + ", an array of floats expected");
  std::vector<double> out;
  for (const Value& e : v.items) out.push_back(e.f);
  return out;
}

std::optional<std::string> GgufFile::string_or(const std::string& key) const {
  return find(key) ? std::optional<std::string>(get_string(key)) : std::nullopt;
}
std::optional<int64_t> GgufFile::int_or(const std::string& key) const {
  return find(key) ? std::optional<int64_t>(get_int(key)) : std::nullopt;
}
std::optional<double> GgufFile::float_or(const std::string& key) const {
  return find(key) ? std::optional<double>(get_float(key)) : std::nullopt;
}
std::optional<bool> GgufFile::bool_or(const std::string& key) const {
  return find(key) ? std::optional<bool>(get_bool(key)) : std::nullopt;
}

bool is_gguf_path(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".gguf") == 0;
}

}  // namespace exspec::gguf
