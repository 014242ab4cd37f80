// A fixed-size array on 64-byte boundaries (a cache line, an AVX-512 register): the packed
// weights of the CPU kernels are read in whole lines. Torch-free.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include <sys/mman.h>

namespace exspec {

template <class T>
class AlignedArray {
 public:
  AlignedArray() = default;
  // n zeroed elements.
  explicit AlignedArray(size_t n) : size_(n) {
    if (n == 0) return;
    const size_t bytes = (n * sizeof(T) + 63) / 64 * 64;
    // Large arrays on 2 MiB boundaries, as transparent huge pages where the kernel allows them
    // (madvise mode): a product streams its weights, and with 4 KiB pages every page was a TLB
    // miss and a new start for the prefetcher.
    // Only whole huge pages inside the array are advised: the tail stays in 4 KiB pages, so an
    // array is never resident beyond its own bytes.
    const bool huge = bytes >= kHuge;
    void* p = nullptr;
    if (::posix_memalign(&p, huge ? kHuge : 64, bytes) != 0) throw std::bad_alloc();
    data_.reset(static_cast<T*>(p));
    if (huge) ::madvise(data_.get(), bytes / kHuge * kHuge, MADV_HUGEPAGE);
    std::memset(static_cast<void*>(data_.get()), 0, bytes);
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(T); }
  T& operator[](size_t i) { return data_.get()[i]; }
  const T& operator[](size_t i) const { return data_.get()[i]; }

 private:
  static constexpr size_t kHuge = size_t{2} << 20;
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  size_t size_ = 0;
};

}  // namespace exspec
