// The safetensors format: a memory-mapped, validated reader and a writer.
// Layout: u64 little-endian header length N, N bytes of JSON header, then the data section;
// each tensor names its dtype, shape and [begin, end) byte offsets into the data section.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace exspec {

struct TensorEntry {
  std::string dtype;  // "F32", "F16", "BF16", "F64", "I64", "I32", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // offsets into the data section
  uint64_t end = 0;
};

class SafetensorsFile {
 public:
  // Maps the file and validates its header (size, JSON, dtypes, offsets in bounds, sizes
  // consistent with shapes, no overlaps). Throws std::runtime_error naming the file and tensor.
  static std::shared_ptr<SafetensorsFile> open(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const std::map<std::string, TensorEntry>& entries() const { return entries_; }
  bool contains(const std::string& name) const { return entries_.count(name) != 0; }
  // A CPU tensor aliasing the mapped bytes (zero copy); it keeps the mapping alive, and every page
  // of it that is read stays in the process's resident memory as long as the mapping does.
  at::Tensor tensor(const std::string& name) const;
  // A CPU tensor of its own holding a copy of the bytes, read from the file (not through the
  // mapping): nothing of the file stays resident once the tensor is gone. What a model keeps.
  at::Tensor read(const std::string& name) const;

  // Files open (mapped) in this process now: a tensor() alias keeps its file open.
  static int64_t open_count();

 private:
  SafetensorsFile() = default;
  std::string path_;
  std::map<std::string, TensorEntry> entries_;
  int fd_ = -1;  // kept for read()
  void* map_ = nullptr;
  size_t size_ = 0;
  size_t data_offset_ = 0;
  std::weak_ptr<SafetensorsFile> self_;
  const TensorEntry& entry(const std::string& name) const;
};

// Writes tensors (any device/dtype among F64/F32/F16/BF16/I64/I32) in the given order.
void write_safetensors(const std::string& path,
                       const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace exspec
