// GGUF's header, metadata and tensor table, read with every length and offset checked.
#include "model/gguf/gguf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace exspec::gguf {
namespace {

constexpr int kMaxDims = 4;        // GGML_MAX_DIMS
constexpr int kMaxArrayDepth = 4;  // arrays of arrays: the format allows them, no model uses deep ones
constexpr uint64_t kMaxString = uint64_t(1) << 30;

// Reads little-endian fields from [p, end), failing with the file's name and `what` it was reading.
class Cursor {
 public:
  Cursor(const std::string& path, const uint8_t* base, uint64_t size) : path_(path), base_(base), size_(size) {}
  uint64_t pos() const { return pos_; }
  uint64_t left() const { return size_ - pos_; }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(path_ + ": " + what + " (at byte " + std::to_string(pos_) + " of " +
                             std::to_string(size_) + ")");
  }
  void need(uint64_t n, const std::string& what) const {
    if (n > left()) fail("file ends inside " + what + " (" + std::to_string(n) + " bytes needed, " +
                         std::to_string(left()) + " left)");
  }
  template <class T>
  T get(const std::string& what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, base_ + pos_, sizeof(T));  // the format and every host we build for are little-endian
    pos_ += sizeof(T);
    return v;
  }
  std::string string(const std::string& what) {
    const uint64_t n = get<uint64_t>("the length of " + what);
    if (n > kMaxString) fail(what + " claims " + std::to_string(n) + " bytes");
    need(n, what);
    std::string s(reinterpret_cast<const char*>(base_ + pos_), n);
    pos_ += n;
    return s;
  }

 private:
  const std::string& path_;
  const uint8_t* base_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

uint64_t min_bytes(ValueType t) {  // the least an item of this type takes: bounds an array's count
  switch (t) {
    case ValueType::U8: case ValueType::I8: case ValueType::Bool: return 1;
    case ValueType::U16: case ValueType::I16: return 2;
    case ValueType::U32: case ValueType::I32: case ValueType::F32: return 4;
    case ValueType::Array: return 12;
    default: return 8;  // u64, i64, f64, a string's length
  }
}

bool known_type(uint32_t t) { return t <= uint32_t(ValueType::F64); }

Value read_value(Cursor& c, ValueType type, const std::string& key, int depth) {
  Value v;
  v.type = type;
  const std::string what = "the value of \"" + key + "\"";
  switch (type) {
    case ValueType::U8: v.u = c.get<uint8_t>(what); break;
    case ValueType::I8: v.i = c.get<int8_t>(what); break;
    case ValueType::U16: v.u = c.get<uint16_t>(what); break;
    case ValueType::I16: v.i = c.get<int16_t>(what); break;
    case ValueType::U32: v.u = c.get<uint32_t>(what); break;
    case ValueType::I32: v.i = c.get<int32_t>(what); break;
    case ValueType::U64: v.u = c.get<uint64_t>(what); break;
    case ValueType::I64: v.i = c.get<int64_t>(what); break;
    case ValueType::F32: v.f = c.get<float>(what); break;
    case ValueType::F64: v.f = c.get<double>(what); break;
    case ValueType::Bool: {
      const uint8_t b = c.get<uint8_t>(what);
      if (b > 1) c.fail("metadata \"" + key + "\": bool holds " + std::to_string(b));
      v.i = b;
      break;
    }
    case ValueType::String: v.s = c.string(what); break;
    case ValueType::Array: {
      if (depth >= kMaxArrayDepth) c.fail("metadata \"" + key + "\": arrays nested deeper than 4");
      const uint32_t elem = c.get<uint32_t>("the item type of \"" + key + "\"");
      if (!known_type(elem)) c.fail("metadata \"" + key + "\": unknown array item type " + std::to_string(elem));
      v.elem = ValueType(elem);
      const uint64_t n = c.get<uint64_t>("the length of \"" + key + "\"");
      if (n > c.left() / min_bytes(v.elem))
        c.fail("metadata \"" + key + "\": array of " + std::to_string(n) + " " + value_type_name(v.elem) +
               " does not fit in the file");
      v.items.reserve(n);
      for (uint64_t k = 0; k < n; ++k) v.items.push_back(read_value(c, v.elem, key, depth + 1));
      break;
    }
  }
  return v;
}

}  // namespace

void GgufFile::read() {
  Cursor c(path_, base_, size_);
  const uint32_t magic = c.get<uint32_t>("the magic");
  if (magic != 0x46554747u) fail("not a GGUF file (the first 4 bytes are not \"GGUF\")");
  version_ = c.get<uint32_t>("the version");
  if (version_ != 2 && version_ != 3)
    fail("GGUF version " + std::to_string(version_) + " is not supported (2 and 3 are)");
  const uint64_t n_tensors = c.get<uint64_t>("the tensor count");
  const uint64_t n_kv = c.get<uint64_t>("the metadata count");
  // Every entry takes at least 12 bytes (metadata) or 24 (a tensor info): a count beyond the
  // file is a lie, refused before anything is reserved for it.
  if (n_kv > c.left() / 12) c.fail("metadata count " + std::to_string(n_kv) + " does not fit in the file");
  if (n_tensors > c.left() / 24) c.fail("tensor count " + std::to_string(n_tensors) + " does not fit in the file");
  for (uint64_t k = 0; k < n_kv; ++k) {
    std::string key = c.string("metadata key " + std::to_string(k));
    const uint32_t type = c.get<uint32_t>("the type of \"" + key + "\"");
    if (!known_type(type)) c.fail("metadata \"" + key + "\": unknown value type " + std::to_string(type));
    Value v = read_value(c, ValueType(type), key, 0);
    if (!kv_index_.emplace(key, kv_.size()).second) c.fail("metadata key \"" + key + "\" appears twice");
    kv_.emplace_back(std::move(key), std::move(v));
  }
  if (const Value* a = find("general.alignment")) {
    if (a->type != ValueType::U32) fail("general.alignment is " + a->describe() + ", u32 expected");
    if (a->u == 0 || (a->u & (a->u - 1)) != 0) fail("general.alignment " + std::to_string(a->u) + " is not a power of 2");
    alignment_ = a->u;
  }
  for (uint64_t k = 0; k < n_tensors; ++k) {
    TensorInfo t;
    t.name = c.string("tensor name " + std::to_string(k));
    const std::string what = "tensor \"" + t.name + "\"";
    const uint32_t n_dims = c.get<uint32_t>("the dimension count of " + what);
    if (n_dims < 1 || n_dims > kMaxDims) c.fail(what + " has " + std::to_string(n_dims) + " dimensions (1 to 4 allowed)");
    int64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t n = c.get<uint64_t>("the dimensions of " + what);
      if (n == 0 || n > (uint64_t(1) << 40) || uint64_t(elements) > (uint64_t(1) << 50) / n)
        c.fail(what + " has dimension " + std::to_string(n) + " (too large or zero)");
      t.dims.push_back(int64_t(n));
      elements *= int64_t(n);
    }
    t.type = c.get<uint32_t>("the type of " + what);
    const WeightType* traits = weight_type(t.type);
    if (!traits) c.fail(what + " has unknown ggml type " + std::to_string(t.type));
    if (t.dims[0] % traits->block != 0)
      c.fail(what + " of type " + traits->name + " has " + std::to_string(t.dims[0]) + " elements a row, not a multiple of its block of " +
             std::to_string(traits->block));
    t.bytes = uint64_t(elements / traits->block) * uint64_t(traits->block_bytes);
    t.offset = c.get<uint64_t>("the offset of " + what);
    if (t.offset % alignment_ != 0)
      c.fail(what + " starts at data offset " + std::to_string(t.offset) + ", not a multiple of the alignment " +
             std::to_string(alignment_));
    if (!tensor_index_.emplace(t.name, tensors_.size()).second) c.fail(what + " appears twice");
    tensors_.push_back(std::move(t));
  }
  data_offset_ = (c.pos() + alignment_ - 1) / alignment_ * alignment_;
  if (n_tensors > 0 && data_offset_ > size_) fail("file ends before its data section (at byte " + std::to_string(data_offset_) + ")");
  const uint64_t data_size = size_ - std::min(data_offset_, size_);
  // Extents in bounds and disjoint: sorted by offset, each must end where the next may begin.
  std::vector<const TensorInfo*> by_offset;
  for (auto& t : tensors_) {
    if (t.offset > data_size || t.bytes > data_size - t.offset)
      fail("tensor \"" + t.name + "\" (" + std::to_string(t.bytes) + " bytes at data offset " + std::to_string(t.offset) +
           ") runs past the end of the file (data section of " + std::to_string(data_size) + " bytes)");
    t.data = base_ + data_offset_ + t.offset;
    by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  for (size_t k = 1; k < by_offset.size(); ++k)
    if (by_offset[k - 1]->offset + by_offset[k - 1]->bytes > by_offset[k]->offset)
      fail("tensors \"" + by_offset[k - 1]->name + "\" and \"" + by_offset[k]->name + "\" overlap");
}

std::shared_ptr<const GgufFile> GgufFile::open(const std::string& path) {
  std::shared_ptr<GgufFile> f(new GgufFile());
  f->path_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) f->fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    f->fail("not a regular file");
  }
  f->size_ = uint64_t(st.st_size);
  if (f->size_ > 0) {
    void* m = ::mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      ::close(fd);
      f->fail(std::string("cannot map: ") + std::strerror(errno));
    }
    f->map_ = m;
    f->base_ = static_cast<const uint8_t*>(m);
  }
  ::close(fd);  // the mapping stays valid without the descriptor
  f->read();
  return f;
}

std::shared_ptr<const GgufFile> GgufFile::parse(const std::string& name, const std::string& bytes) {
  std::shared_ptr<GgufFile> f(new GgufFile());
  f->path_ = name;
  f->owned_ = bytes;
  f->base_ = reinterpret_cast<const uint8_t*>(f->owned_.data());
  f->size_ = f->owned_.size();
  f->read();
  return f;
}

GgufFile::~GgufFile() {
  if (map_) ::munmap(map_, size_);
}

}  // namespace exspec::gguf
