// Stable storage for the model's objects: flat chunks addressed by 32-bit
// ids, never moved once allocated, so a reader can follow an id while the
// writer allocates more.

#ifndef PATHWARDEN_SRC_BASE_ARENA_H_
#define PATHWARDEN_SRC_BASE_ARENA_H_

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

namespace pathwarden::internal {

// StableArena<T>
//
// Id 0 is allocated at construction and never handed out, so it can mean
// "none" in a field and still be dereferenced safely by a racing reader.
// Allocation and freeing are for the single writer; operator[] is safe for
// readers at any time on any id the writer has published. Freed slots are
// reused (LIFO); T must be default-constructible and resettable by Reset().
template <typename T, unsigned kChunkBits = 12>
class StableArena {
 public:
  static constexpr uint32_t kChunkSize = 1u << kChunkBits;
  static constexpr uint32_t kMaxIds = 1u << 26;
  static constexpr uint32_t kMaxChunks = kMaxIds >> kChunkBits;

  StableArena() {
    for (uint32_t i = 0; i < kMaxChunks; ++i) chunks_[i].store(nullptr);
    uint32_t zero = Alloc();
    (void)zero;
  }
  ~StableArena() {
    for (uint32_t i = 0; i < kMaxChunks; ++i) delete[] chunks_[i].load();
  }
  StableArena(const StableArena&) = delete;
  StableArena& operator=(const StableArena&) = delete;

  // The chunk pointer may be loaded relaxed: a chunk is published before
  // any id inside it, and a reader only holds ids it loaded (acquire) from
  // fields stored (release) after that.
  T& operator[](uint32_t id) noexcept {
    return chunks_[(id >> kChunkBits) & (kMaxChunks - 1)].load(
        std::memory_order_relaxed)[id & (kChunkSize - 1)];
  }
  const T& operator[](uint32_t id) const noexcept {
    return chunks_[(id >> kChunkBits) & (kMaxChunks - 1)].load(
        std::memory_order_relaxed)[id & (kChunkSize - 1)];
  }

  // Cursor
  //
  // Reads objects by id, remembering the last chunk: a chain of ids
  // within one chunk (a walk up a path) then costs one load per object,
  // not two dependent ones.
  class Cursor {
   public:
    explicit Cursor(const StableArena& a) : a_(a) {}
    const T& operator()(uint32_t id) noexcept {
      const uint32_t c = (id >> kChunkBits) & (kMaxChunks - 1);
      if (c != chunk_) {
        chunk_ = c;
        base_ = a_.chunks_[c].load(std::memory_order_relaxed);
      }
      return base_[id & (kChunkSize - 1)];
    }

   private:
    const StableArena& a_;
    uint32_t chunk_ = ~0u;
    const T* base_ = nullptr;
  };

  // Alloc()
  //
  // A fresh or reused id. Aborts when kMaxIds are in use: the model refuses
  // to grow past what 32-bit ids address rather than corrupt itself.
  uint32_t Alloc() {
    if (!free_.empty()) {
      uint32_t id = free_.back();
      free_.pop_back();
      ++live_;
      return id;
    }
    if (next_ == kMaxIds) std::abort();
    uint32_t chunk = next_ >> kChunkBits;
    if (chunks_[chunk].load(std::memory_order_relaxed) == nullptr) {
      chunks_[chunk].store(new T[kChunkSize], std::memory_order_release);
      bytes_ += sizeof(T) * kChunkSize;
    }
    ++live_;
    return next_++;
  }

  // Free()
  //
  // Returns `id` for reuse. The caller resets the object's fields first.
  void Free(uint32_t id) {
    free_.push_back(id);
    --live_;
  }

  // High water mark: every id below it has been allocated at least once.
  uint32_t end() const noexcept { return next_; }
  uint32_t live() const noexcept { return live_; }
  size_t bytes() const noexcept {
    return bytes_ + free_.capacity() * sizeof(uint32_t);
  }

 private:
  // Inline, so an access is one load of the chunk pointer and one of the
  // element.
  std::atomic<T*> chunks_[kMaxChunks];
  std::vector<uint32_t> free_;
  uint32_t next_ = 0;
  uint32_t live_ = 0;
  size_t bytes_ = 0;
};

}  // namespace pathwarden::internal

#endif  // PATHWARDEN_SRC_BASE_ARENA_H_
