// A GGUF file (llama.cpp's model format, versions 2 and 3), mapped and checked. Torch-free.
//
// Layout (little-endian): "GGUF", u32 version, u64 tensor count, u64 metadata count; the
// metadata as (string key, u32 type, value); the tensor infos as (string name, u32 n_dims,
// u64 dims[n_dims] innermost first, u32 ggml type, u64 offset); padding to general.alignment
// (32 by default); the data section, where each tensor's offset is counted from and aligned to
// that alignment. Strings are a u64 length and that many bytes (no terminator).
//
// open() checks every length, count, type, dimension and offset against the file before it is
// used: a file that lies is refused with a std::runtime_error naming the file and what is wrong.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/gguf/ggml_types.h"

namespace exspec::gguf {

// The metadata value types, as numbered in the format.
enum class ValueType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7,
  String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12,
};
const char* value_type_name(ValueType t);

struct Value {
  ValueType type = ValueType::U8;
  ValueType elem = ValueType::U8;  // arrays: the type of every item
  // Integers and bools in i (signed types and bool) or u (unsigned types); floats in f.
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
  std::string s;
  std::vector<Value> items;  // arrays
  bool is_integer() const;
  std::string describe() const;  // short, for `check` and errors: "u32 32", "array of 151 string"
};

struct TensorInfo {
  std::string name;
  std::vector<int64_t> dims;  // as stored: innermost (contiguous) first, so [in, out] for a matrix
  uint32_t type = 0;
  uint64_t offset = 0;  // in the data section
  uint64_t bytes = 0;
  const uint8_t* data = nullptr;  // in the mapping, valid while the GgufFile lives
  int64_t elements() const;
  std::vector<int64_t> shape() const;  // outermost first, as torch and Hugging Face write it
};

class GgufFile {
 public:
  static std::shared_ptr<const GgufFile> open(const std::string& path);
  // The same checks on bytes in memory (tests); `name` stands for the path in errors. The
  // bytes are copied.
  static std::shared_ptr<const GgufFile> parse(const std::string& name, const std::string& bytes);
  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  uint64_t file_size() const { return size_; }
  // Metadata in file order, and by key.
  const std::vector<std::pair<std::string, Value>>& metadata() const { return kv_; }
  const Value* find(const std::string& key) const;
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* tensor(const std::string& name) const;

  // Typed metadata; each throws naming the file and key when the key is missing or has
  // another type. Integers of any width are accepted where they fit.
  std::string get_string(const std::string& key) const;
  int64_t get_int(const std::string& key) const;
  double get_float(const std::string& key) const;  // f32, f64 or an integer
  bool get_bool(const std::string& key) const;
  std::vector<std::string> get_strings(const std::string& key) const;
  std::vector<int64_t> get_ints(const std::string& key) const;
  std::vector<double> get_floats(const std::string& key) const;
  std::optional<std::string> string_or(const std::string& key) const;
  std::optional<int64_t> int_or(const std::string& key) const;
  std::optional<double> float_or(const std::string& key) const;
  std::optional<bool> bool_or(const std::string& key) const;

 private:
  GgufFile() = default;
  void read();  // parses and checks base_[0, size_)
  const Value& need(const std::string& key, const char* what) const;
  [[noreturn]] void fail(const std::string& what) const;
  std::string path_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, Value>> kv_;
  std::map<std::string, size_t> kv_index_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t> tensor_index_;
  const uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  void* map_ = nullptr;  // mmap'd when opened from a file
  std::string owned_;    // the bytes when parsed from memory
};

bool is_gguf_path(const std::string& path);  // names a file ending in .gguf

}  // namespace exspec::gguf
