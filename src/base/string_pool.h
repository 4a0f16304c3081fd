// Interned, immutable strings: names of dentries, symlink bodies, file
// contents. Written once by the writer, read by anyone through an id.

#ifndef PATHWARDEN_SRC_BASE_STRING_POOL_H_
#define PATHWARDEN_SRC_BASE_STRING_POOL_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/base/arena.h"

namespace pathwarden::internal {

// Word-at-a-time name hashing, as the kernel's hash_name() does it: a
// component is read eight bytes at a time, its end found with bit tricks,
// and its hash built from whole words, in one pass. HashName() over a
// name and HashComponent() over a path give the same hash.

inline constexpr uint64_t kOnes = 0x0101010101010101ull;
inline constexpr uint64_t kHighs = 0x8080808080808080ull;
inline constexpr uint64_t kSlashes = kOnes * '/';

// LoadPartial()
//
// The n bytes at p (n < 8) as a little-endian word, zero-padded, without
// reading past p + n.
inline uint64_t LoadPartial(const char* p, size_t n) noexcept {
  if (n >= 4) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + n - 4, 4);
    return lo | (static_cast<uint64_t>(hi) << (8 * (n - 4)));
  }
  if (n == 0) return 0;
  const auto b = [p](size_t i) { return static_cast<uint64_t>(static_cast<unsigned char>(p[i])); };
  return b(0) | (b(n / 2) << (8 * (n / 2))) | (b(n - 1) << (8 * (n - 1)));
}

inline uint64_t LoadWord(const char* p) noexcept {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

inline uint64_t HashMix(uint64_t h, uint64_t word) noexcept {
  h = (h ^ word) * 0x9e3779b97f4a7c15ull;
  return (h << 31) | (h >> 33);
}

inline uint32_t HashFinish(uint64_t h, size_t len) noexcept {
  h ^= len;
  h *= 0xff51afd7ed558ccdull;
  return static_cast<uint32_t>(h ^ (h >> 32));
}

inline constexpr uint64_t kHashSeed = 0x243f6a8885a308d3ull;

// HashName()
//
// The hash of a path component, as the dentry hash table keys it.
inline uint32_t HashName(std::string_view s) noexcept {
  uint64_t h = kHashSeed;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) h = HashMix(h, LoadWord(s.data() + i));
  if (i < s.size()) h = HashMix(h, LoadPartial(s.data() + i, s.size() - i));
  return HashFinish(h, s.size());
}

// HashComponent()
//
// The component of `path` that starts at `start` and ends before the next
// '/' or at the end: its length, and its HashName() in *hash.
inline size_t HashComponent(std::string_view path, size_t start, uint32_t* hash) noexcept {
  const char* p = path.data() + start;
  const size_t avail = path.size() - start;
  uint64_t h = kHashSeed;
  size_t len = 0;
  for (;;) {
    const size_t rem = avail - len;
    const uint64_t w = rem >= 8 ? LoadWord(p + len) : LoadPartial(p + len, rem);
    const uint64_t x = w ^ kSlashes;
    // A high bit for every '/' byte (the lowest one is exact), and one for
    // the end of the path.
    uint64_t stops = (x - kOnes) & ~x & kHighs;
    if (rem < 8) stops |= 0x80ull << (8 * rem);
    if (stops) {
      const unsigned k = static_cast<unsigned>(__builtin_ctzll(stops)) / 8;
      if (k) h = HashMix(h, w & (~0ull >> (64 - 8 * k)));
      len += k;
      *hash = HashFinish(h, len);
      return len;
    }
    h = HashMix(h, w);
    len += 8;
  }
}

using StrId = uint32_t;

// StringPool
//
// Id 0 is the empty string. Identical strings share one id, so the pool
// grows only with distinct strings and ids can be compared for equality.
class StringPool {
 public:
  StringPool();
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;

  // Intern()
  //
  // Writer only.
  StrId Intern(std::string_view s);

  // Get()
  //
  // Safe for readers on any id published to them.
  std::string_view Get(StrId id) const noexcept {
    const Entry& e = entries_[id];
    return {e.data, e.size};
  }
  uint32_t Hash(StrId id) const noexcept { return entries_[id].hash; }

  size_t bytes() const noexcept;

 private:
  struct Entry {
    const char* data = nullptr;
    uint32_t size = 0;
    uint32_t hash = 0;
  };
  static constexpr size_t kBlock = 64 * 1024;

  const char* Store(std::string_view s);

  StableArena<Entry> entries_;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* current_block_ = nullptr;
  size_t block_used_ = kBlock;
  size_t stored_bytes_ = 0;
  std::unordered_map<std::string_view, StrId> index_;
};

}  // namespace pathwarden::internal

#endif  // PATHWARDEN_SRC_BASE_STRING_POOL_H_
