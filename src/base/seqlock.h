// Concurrency primitives of the model: a sequence counter and atomic
// fields, as the kernel's RCU path walk uses (seqcount_t, READ_ONCE).
//
// Design: one writer thread changes the world in place; any number of reader
// threads evaluate requests without locks. Every field a reader may load
// while the writer stores is an atomic, stored with release and loaded with
// acquire (plain moves on x86), so there is no data race and ReadRetry()
// cannot be ordered before the loads it validates. A reader samples the world's SeqCount
// before and after its evaluation and retries when a write happened in
// between, so no answer ever mixes the state before a change with the state
// after it. Readers never write shared memory, so they never block or slow
// each other.

#ifndef PATHWARDEN_SRC_BASE_SEQLOCK_H_
#define PATHWARDEN_SRC_BASE_SEQLOCK_H_

#include <atomic>
#include <cstdint>

namespace pathwarden::internal {

// SeqField<T>
//
// A field that readers load while the single writer may store it. Loads
// are acquire, so a reader's final load of the SeqCount cannot move before
// them; stores are release.
template <typename T>
class SeqField {
 public:
  constexpr SeqField() noexcept : v_(T{}) {}
  constexpr SeqField(T v) noexcept : v_(v) {}  // NOLINT: implicit by design
  SeqField(const SeqField& o) noexcept : v_(o.get()) {}
  SeqField& operator=(const SeqField& o) noexcept {
    set(o.get());
    return *this;
  }
  SeqField& operator=(T v) noexcept {
    set(v);
    return *this;
  }
  T get() const noexcept { return v_.load(std::memory_order_acquire); }
  void set(T v) noexcept { v_.store(v, std::memory_order_release); }
  operator T() const noexcept { return get(); }  // NOLINT: implicit by design

 private:
  std::atomic<T> v_;
};

// Published<T>
//
// A field that points at data written before it (an interned string, an
// ACL): a SeqField, whose release store and acquire load make a reader that
// sees the new value see the data it names too. The name says what the
// field is for.
template <typename T>
using Published = SeqField<T>;

// SeqCount
//
// Odd while the writer is inside a change. Readers call ReadBegin() and, at
// the end, ReadRetry(); writers bracket a change with WriteBegin()/WriteEnd().
// Linux: include/linux/seqlock.h (seqcount_t); the C++ form follows Boehm,
// "Can Seqlocks Get Along With Programming Language Memory Models?", with
// acquire field loads and read-modify-writes in place of fences.
class SeqCount {
 public:
  uint64_t ReadBegin() const noexcept {
    for (;;) {
      uint64_t s = seq_.load(std::memory_order_acquire);
      if ((s & 1) == 0) return s;
      Pause();
    }
  }
  // The fields read since ReadBegin() were loaded with acquire: this load
  // cannot move before any of them.
  bool ReadRetry(uint64_t start) const noexcept {
    return seq_.load(std::memory_order_acquire) != start;
  }
  // acq_rel: the field stores of the change cannot move before it.
  void WriteBegin() noexcept { seq_.fetch_add(1, std::memory_order_acq_rel); }
  void WriteEnd() noexcept { seq_.fetch_add(1, std::memory_order_release); }
  uint64_t Current() const noexcept {
    return seq_.load(std::memory_order_acquire);
  }

 private:
  static void Pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  std::atomic<uint64_t> seq_{0};
};

}  // namespace pathwarden::internal

#endif  // PATHWARDEN_SRC_BASE_SEQLOCK_H_
