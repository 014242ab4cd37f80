#include "model/safetensors.h"

#include <ATen/ATen.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace exspec {
namespace {

using nlohmann::json;

struct DTypeInfo {
  const char* name;
  at::ScalarType type;
  size_t size;
};

const DTypeInfo kDTypes[] = {
    {"F64", at::kDouble, 8}, {"F32", at::kFloat, 4}, {"F16", at::kHalf, 2},  {"BF16", at::kBFloat16, 2},
    {"I64", at::kLong, 8},   {"I32", at::kInt, 4},   {"I16", at::kShort, 2}, {"I8", at::kChar, 1},
    {"U8", at::kByte, 1},    {"BOOL", at::kBool, 1},
};

const DTypeInfo* find_dtype(const std::string& name) {
  for (const auto& d : kDTypes)
    if (name == d.name) return &d;
  return nullptr;
}

const DTypeInfo* find_dtype(at::ScalarType t) {
  for (const auto& d : kDTypes)
    if (t == d.type) return &d;
  return nullptr;
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what);
}

std::atomic<int64_t> open_files{0};

}  // namespace

int64_t SafetensorsFile::open_count() { return open_files.load(); }

std::shared_ptr<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  std::shared_ptr<SafetensorsFile> f(new SafetensorsFile());
  ++open_files;  // the destructor counts it out, on every path from here
  f->self_ = f;
  f->path_ = path;

  const int fd = f->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(path, "cannot stat");
  f->size_ = static_cast<size_t>(st.st_size);
  if (f->size_ < 8)
    fail(path, "truncated safetensors file: " + std::to_string(f->size_) + " bytes, the 8-byte header length is missing");
  // MAP_PRIVATE + PROT_WRITE: aliasing tensors are writable copy-on-write, the file never changes.
  void* m = ::mmap(nullptr, f->size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (m == MAP_FAILED) fail(path, std::string("mmap failed: ") + std::strerror(errno));
  f->map_ = m;

  const auto* bytes = static_cast<const unsigned char*>(m);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[i];
  if (n > f->size_ - 8)
    fail(path, "truncated or corrupt safetensors file: header length " + std::to_string(n) +
                   " exceeds the file size " + std::to_string(f->size_));
  f->data_offset_ = 8 + n;
  const uint64_t data_size = f->size_ - f->data_offset_;

  json header;
  try {
    header = json::parse(reinterpret_cast<const char*>(bytes + 8), reinterpret_cast<const char*>(bytes + 8 + n));
  } catch (const json::parse_error& e) {
    fail(path, std::string("corrupt safetensors header (not JSON): ") + e.what());
  }
  if (!header.is_object()) fail(path, "corrupt safetensors header: expected a JSON object");

  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const std::string where = "tensor \"" + it.key() + "\"";
    const json& e = it.value();
    if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
      fail(path, where + ": entry needs dtype, shape and data_offsets");
    TensorEntry t;
    if (!e["dtype"].is_string()) fail(path, where + ": dtype must be a string");
    t.dtype = e["dtype"].get<std::string>();
    const DTypeInfo* d = find_dtype(t.dtype);
    if (!d) fail(path, where + ": unsupported dtype \"" + t.dtype + "\"");
    if (!e["shape"].is_array()) fail(path, where + ": shape must be an array");
    uint64_t numel = 1;
    for (const auto& s : e["shape"]) {
      if (!s.is_number_integer() || s.get<int64_t>() < 0) fail(path, where + ": shape must hold non-negative integers");
      t.shape.push_back(s.get<int64_t>());
      numel *= static_cast<uint64_t>(s.get<int64_t>());
    }
    const json& off = e["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      fail(path, where + ": data_offsets must be two non-negative integers");
    t.begin = off[0].get<uint64_t>();
    t.end = off[1].get<uint64_t>();
    if (t.begin > t.end || t.end > data_size)
      fail(path, where + ": data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                     ") out of bounds of the data section (" + std::to_string(data_size) +
                     " bytes): the file is truncated or corrupt");
    if (t.end - t.begin != numel * d->size)
      fail(path, where + ": " + std::to_string(t.end - t.begin) + " bytes do not match shape and dtype (" +
                     std::to_string(numel * d->size) + " bytes expected)");
    ranges.emplace_back(t.begin, t.end);
    f->entries_.emplace(it.key(), std::move(t));
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second && ranges[i].first != ranges[i].second)
      fail(path, "corrupt safetensors header: tensor byte ranges overlap");
  return f;
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) ::munmap(map_, size_);
  if (fd_ >= 0) ::close(fd_);
  --open_files;
}

const TensorEntry& SafetensorsFile::entry(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) fail(path_, "no tensor named \"" + name + "\"");
  return it->second;
}

at::Tensor SafetensorsFile::read(const std::string& name) const {
  const TensorEntry& t = entry(name);
  at::Tensor out = at::empty(t.shape, at::TensorOptions().dtype(find_dtype(t.dtype)->type).device(at::kCPU));
  auto* dst = static_cast<char*>(out.data_ptr());
  const uint64_t n = t.end - t.begin;
  for (uint64_t done = 0; done < n;) {
    const ssize_t got = ::pread(fd_, dst + done, n - done, static_cast<off_t>(data_offset_ + t.begin + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      fail(path_, "tensor \"" + name + "\": read failed" + (got < 0 ? std::string(": ") + std::strerror(errno) : ": the file was truncated"));
    done += static_cast<uint64_t>(got);
  }
  return out;
}

at::Tensor SafetensorsFile::tensor(const std::string& name) const {
  const TensorEntry& t = entry(name);
  const DTypeInfo* d = find_dtype(t.dtype);
  auto keep = self_.lock();  // the tensor's deleter holds the mapping
  void* ptr = static_cast<char*>(map_) + data_offset_ + t.begin;
  auto opts = at::TensorOptions().dtype(d->type).device(at::kCPU);
  if (reinterpret_cast<uintptr_t>(ptr) % d->size != 0) {
    // Unaligned data (legal in the format): copy instead of aliasing.
    at::Tensor out = at::empty(t.shape, opts);
    std::memcpy(out.data_ptr(), ptr, t.end - t.begin);
    return out;
  }
  return at::from_blob(ptr, t.shape, [keep](void*) {}, opts);
}

void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<at::Tensor> cpu;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    const DTypeInfo* d = find_dtype(t.scalar_type());
    if (!d) throw std::runtime_error(path + ": cannot write tensor \"" + name + "\" of this dtype");
    at::Tensor c = t.to(at::kCPU).contiguous();
    uint64_t nbytes = static_cast<uint64_t>(c.numel()) * d->size;
    header[name] = {{"dtype", d->name}, {"shape", c.sizes().vec()}, {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
    cpu.push_back(c);
  }
  std::string h = header.dump();
  while ((8 + h.size()) % 8 != 0) h.push_back(' ');  // keeps the data section 8-byte aligned

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(path + ": cannot create file");
  uint64_t n = h.size();
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>((n >> (8 * i)) & 0xff);
  out.write(reinterpret_cast<const char*>(len), 8);
  out.write(h.data(), static_cast<std::streamsize>(h.size()));
  for (const auto& c : cpu)
    out.write(static_cast<const char*>(c.data_ptr()), static_cast<std::streamsize>(c.numel() * c.element_size()));
  if (!out) throw std::runtime_error(path + ": write failed");
}

}  // namespace exspec
