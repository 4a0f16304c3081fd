// Interned, immutable strings: names of dentries, symlink bodies, file
// contents. Written once by the writer, read by anyone through an id.

#ifndef PATHWARDEN_SRC_BASE_STRING_POOL_H_
#define PATHWARDEN_SRC_BASE_STRING_POOL_H_

#include <cstdint>
#include <cstring>
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

// NamesEqual()
//
// Whether the n bytes at a and b are equal, a word at a time (names are
// short: a call to memcmp() costs more than the comparison).
inline bool NamesEqual(const char* a, const char* b, size_t n) noexcept {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    if (LoadWord(a + i) != LoadWord(b + i)) return false;
  return i == n || LoadPartial(a + i, n - i) == LoadPartial(b + i, n - i);
}

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

// HeadOf()
//
// The first eight bytes of a name, zero-padded: names of up to eight bytes
// with the same size and head are the same name.
inline uint64_t HeadOf(std::string_view s) noexcept {
  return s.size() >= 8 ? LoadWord(s.data()) : LoadPartial(s.data(), s.size());
}

// NameKey()
//
// A name's size and first bytes in one word, from its HeadOf(): for names
// of up to seven bytes, equal keys are equal names; longer names share the
// marker 0xff in the top byte and need their bytes compared.
inline uint64_t NameKey(uint64_t head, size_t size) noexcept {
  constexpr uint64_t kLow7 = 0x00ffffffffffffffull;
  return (head & kLow7) | (static_cast<uint64_t>(size <= 7 ? size : 0xff) << 56);
}

// HashComponent()
//
// The component of `path` that starts at `start` and ends before the next
// '/' or at the end: its length, its HashName() in *hash and its HeadOf()
// in *head.
inline size_t HashComponent(std::string_view path, size_t start, uint32_t* hash,
                            uint64_t* head) noexcept {
  const char* p = path.data() + start;
  const size_t avail = path.size() - start;
  uint64_t h = kHashSeed;
  size_t len = 0;
  *head = 0;
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
      if (k) {
        const uint64_t last = w & (~0ull >> (64 - 8 * k));
        h = HashMix(h, last);
        if (len == 0) *head = last;
      }
      len += k;
      *hash = HashFinish(h, len);
      return len;
    }
    if (len == 0) *head = w;
    h = HashMix(h, w);
    len += 8;
  }
}

using StrId = uint32_t;

// StringPool
//
// Id 0 is the empty string. Identical strings share one id, so the pool
// grows only with distinct strings and ids can be compared for equality.
// The strings live in one reserved region, each as an 8-byte header (size,
// hash) and its bytes: an id is the string's offset in 8-byte units, so
// reading a name is one load away from its id, with its header in the
// same cache line.
class StringPool {
 public:
  StringPool();
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;

  // Intern()
  //
  // Writer only. Throws std::bad_alloc past 4 GiB of distinct strings.
  StrId Intern(std::string_view s);

  // Get()
  //
  // Safe for readers on any id published to them.
  std::string_view Get(StrId id) const noexcept {
    const char* p = region_.base() + size_t{id} * kAlign;
    uint32_t size;
    std::memcpy(&size, p, sizeof size);
    return {p + kHeader, size};
  }
  // Equals()
  //
  // Whether string `id` is `s`, whose HeadOf() is `head`: for names of up
  // to eight bytes, two words compared. (Every string is stored with at
  // least eight bytes after its header, zero past its end.)
  bool Equals(StrId id, std::string_view s, uint64_t head) const noexcept {
    const char* p = region_.base() + size_t{id} * kAlign;
    uint32_t size;
    std::memcpy(&size, p, sizeof size);
    if (size != s.size() || LoadWord(p + kHeader) != head) return false;
    return size <= 8 || NamesEqual(p + kHeader + 8, s.data() + 8, size - 8);
  }
  uint32_t Hash(StrId id) const noexcept {
    uint32_t hash;
    std::memcpy(&hash, region_.base() + size_t{id} * kAlign + 4, sizeof hash);
    return hash;
  }

  size_t bytes() const noexcept;

 private:
  static constexpr size_t kAlign = 8;
  static constexpr size_t kHeader = 8;

  ReservedRegion region_;
  size_t used_ = 0;  // bytes of the region holding strings
  std::unordered_map<std::string_view, StrId> index_;
};

}  // namespace pathwarden::internal

#endif  // PATHWARDEN_SRC_BASE_STRING_POOL_H_
