// A grow-only buffer aligned for AVX-512 loads (oneDNN and our kernels want 64-byte rows).
#ifndef MTSERVE_MODEL_OPS_ALIGNED_BUFFER_H_
#define MTSERVE_MODEL_OPS_ALIGNED_BUFFER_H_

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace mtserve {

template <typename T>
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size) { Reserve(size); }

  // Ensures room for `size` elements. Contents are NOT preserved when the buffer grows: this is
  // scratch space, sized before each use.
  T* Reserve(size_t size) {
    if (size > capacity_) {
      void* p = std::aligned_alloc(kAlignment, AllocationBytes(size));
      if (p == nullptr) throw std::bad_alloc();
      data_.reset(static_cast<T*>(p));
      capacity_ = size;
    }
    return data_.get();
  }
  // Like Reserve, but also gives memory back when the buffer holds far more than `size` needs
  // (four times, and a megabyte more): for buffers sized anew at each step, so that one large
  // step does not pin its peak for the life of a worker.
  T* Fit(size_t size) {
    constexpr size_t kSlack = (size_t{1} << 20) / sizeof(T);
    if (capacity_ > 4 * size && capacity_ - size >= kSlack) Release();
    return Reserve(size);
  }
  // Frees the memory.
  void Release() {
    data_.reset();
    capacity_ = 0;
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  size_t capacity() const { return capacity_; }
  size_t bytes() const { return capacity_ * sizeof(T); }
  // What the allocation holds: bytes() rounded up to the alignment (0 when empty).
  size_t allocated_bytes() const { return AllocationBytes(capacity_); }

 private:
  static constexpr size_t kAlignment = 64;
  // aligned_alloc wants a multiple of the alignment.
  static size_t AllocationBytes(size_t size) {
    return (size * sizeof(T) + kAlignment - 1) / kAlignment * kAlignment;
  }
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T[], Free> data_;
  size_t capacity_ = 0;
};

using FloatBuffer = AlignedBuffer<float>;

}  // namespace mtserve

#endif  // MTSERVE_MODEL_OPS_ALIGNED_BUFFER_H_
