// Stable storage for the model's objects: one flat array per kind,
// addressed by 32-bit ids, reserved once in virtual memory and committed
// as it grows, so it never moves: a reader can follow an id while the
// writer allocates more, and an access is a single load.

#ifndef PATHWARDEN_SRC_BASE_ARENA_H_
#define PATHWARDEN_SRC_BASE_ARENA_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <vector>

namespace pathwarden::internal {

// ReservedRegion
//
// `capacity` bytes of address space reserved at construction (PROT_NONE,
// so nothing is committed or counted against the machine's memory), made
// readable and writable in steps as Commit() asks. The base never moves.
// Throws std::bad_alloc when the reservation or a commit fails.
class ReservedRegion {
 public:
  explicit ReservedRegion(size_t capacity);
  ~ReservedRegion();
  ReservedRegion(const ReservedRegion&) = delete;
  ReservedRegion& operator=(const ReservedRegion&) = delete;

  char* base() const noexcept { return base_; }
  size_t capacity() const noexcept { return capacity_; }
  size_t committed() const noexcept { return committed_; }

  // Commit()
  //
  // Makes the first `bytes` bytes usable (zero-filled when new).
  void Commit(size_t bytes) {
    if (bytes > committed_) Grow(bytes);
  }

 private:
  void Grow(size_t bytes);

  char* base_ = nullptr;
  size_t capacity_ = 0;
  size_t committed_ = 0;
};

// StableArena<T>
//
// Id 0 is allocated at construction and never handed out, so it can mean
// "none" in a field and still be dereferenced safely by a racing reader.
// Allocation and freeing are for the single writer; operator[] is safe for
// readers at any time on any id the writer has published. Freed slots are
// reused (LIFO); the caller resets a freed object's fields.
//
// end() is the one count readers load (as the bound of a walk a racing
// rename could turn into a cycle): the writer publishes it with release
// after constructing the new slot, so a reader that loads it with acquire
// sees every slot below it constructed. Both are plain moves on x86.
template <typename T>
class StableArena {
 public:
  static constexpr uint32_t kMaxIds = 1u << 26;

  StableArena() : region_(size_t{kMaxIds} * sizeof(T)) {
    base_ = reinterpret_cast<T*>(region_.base());
    (void)Alloc();
  }
  ~StableArena() {
    if constexpr (!std::is_trivially_destructible_v<T>)
      for (uint32_t id = 0, n = end(); id < n; ++id) base_[id].~T();
  }
  StableArena(const StableArena&) = delete;
  StableArena& operator=(const StableArena&) = delete;

  T& operator[](uint32_t id) noexcept { return base_[id]; }
  const T& operator[](uint32_t id) const noexcept { return base_[id]; }

  // Cursor
  //
  // Reads objects by id through a local copy of the base: a loop that
  // reads many (a walk up a path) keeps it in a register, where the
  // arena's own field would be reloaded after every acquire load.
  class Cursor {
   public:
    explicit Cursor(const StableArena& a) : base_(a.base_) {}
    const T& operator()(uint32_t id) const noexcept { return base_[id]; }

   private:
    const T* base_;
  };

  // Alloc()
  //
  // A fresh or reused id. Throws std::bad_alloc when kMaxIds are in use
  // or memory runs out: the model refuses to grow past what it can
  // address rather than corrupt itself.
  uint32_t Alloc() {
    if (!free_.empty()) {
      uint32_t id = free_.back();
      free_.pop_back();
      ++live_;
      return id;
    }
    // Only this (the writer's) thread stores next_: its own load is relaxed.
    const uint32_t id = next_.load(std::memory_order_relaxed);
    if (id == kMaxIds) throw std::bad_alloc();
    region_.Commit(size_t{id + 1} * sizeof(T));
    new (&base_[id]) T();
    ++live_;
    next_.store(id + 1, std::memory_order_release);
    return id;
  }

  // Free()
  //
  // Returns `id` for reuse. The caller resets the object's fields first.
  void Free(uint32_t id) {
    free_.push_back(id);
    --live_;
  }

  // High water mark: every id below it has been allocated at least once.
  // Safe for readers at any time (see the class comment).
  uint32_t end() const noexcept { return next_.load(std::memory_order_acquire); }
  // For the writer (statistics): readers must not load it.
  uint32_t live() const noexcept { return live_; }
  size_t bytes() const noexcept {
    return region_.committed() + free_.capacity() * sizeof(uint32_t);
  }

 private:
  ReservedRegion region_;
  T* base_ = nullptr;
  std::vector<uint32_t> free_;
  std::atomic<uint32_t> next_{0};
  uint32_t live_ = 0;
};

}  // namespace pathwarden::internal

#endif  // PATHWARDEN_SRC_BASE_ARENA_H_
