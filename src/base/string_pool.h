// Interned, immutable strings: names of dentries, symlink bodies, file
// contents. Written once by the writer, read by anyone through an id.

#ifndef PATHWARDEN_SRC_BASE_STRING_POOL_H_
#define PATHWARDEN_SRC_BASE_STRING_POOL_H_

#include <cstdint>
#include <cstring>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/base/arena.h"

namespace pathwarden::internal {

// Word-at-a-time name hashing, as the kernel's hash_name() does it: a
// component is read eight bytes at a time, its end found with a byte
// compare, and its hash built from whole words, in one pass. HashName()
// over a name and ScanComponent() over a path give the same hash.

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

// The size is not mixed in: a lookup compares sizes (in the name key), and
// names of different sizes, holding no NUL byte, mix different words.
inline uint32_t HashFinish(uint64_t h) noexcept { return static_cast<uint32_t>(h ^ (h >> 32)); }

// Zero: the first word's mix is then a multiply and a rotation.
inline constexpr uint64_t kHashSeed = 0;

// kLowBytes[k]: the low k bytes of a word.
inline constexpr uint64_t kLowBytes[8] = {0,
                                          0xff,
                                          0xffff,
                                          0xffffff,
                                          0xffffffffull,
                                          0xffffffffffull,
                                          0xffffffffffffull,
                                          0xffffffffffffffull};

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

// PaddedNamesEqual()
//
// NamesEqual() where `padded` is a pooled string's bytes, which the pool
// stores in whole words, zero past their end: its last part word is read
// whole, and only that of `b` in part.
inline bool PaddedNamesEqual(const char* padded, const char* b, size_t n) noexcept {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    if (LoadWord(padded + i) != LoadWord(b + i)) return false;
  return i == n || LoadWord(padded + i) == LoadPartial(b + i, n - i);
}

// HashName()
//
// The hash of a path component, as the dentry hash table keys it: every
// whole word mixed in, then the last part word (zero-padded, empty for a
// multiple of eight bytes).
inline uint32_t HashName(std::string_view s) noexcept {
  uint64_t h = kHashSeed;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) h = HashMix(h, LoadWord(s.data() + i));
  h = HashMix(h, LoadPartial(s.data() + i, s.size() - i));
  return HashFinish(h);
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

// SlashMask()
//
// Bit k set for every '/' among the eight bytes of w (byte k counted from
// the least significant).
inline uint32_t SlashMask(uint64_t w) noexcept {
#ifdef __SSE2__
  const __m128i v = _mm_cvtsi64_si128(static_cast<long long>(w));
  return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('/'))));
#else
  // Without SSE2, byte by byte.
  uint32_t m = 0;
  for (int k = 0; k < 8; ++k) m |= static_cast<uint32_t>(((w >> (8 * k)) & 0xff) == '/') << k;
  return m;
#endif
}

// Component
//
// A path component as the walk needs it: its length, HashName(), HeadOf()
// and NameKey().
struct Component {
  size_t len;
  uint32_t hash;
  uint64_t head;
  uint64_t key;
};

// The bytes of `path` from p (rem < 8 of them, to its end), zero-padded:
// the top of the path's last word when it has one (shifted twice: a shift
// by 64, for rem == 0, would be undefined).
inline uint64_t LoadPathTail(std::string_view path, const char* p, size_t rem) noexcept {
  if (path.size() >= 8) return (LoadWord(path.data() + path.size() - 8) >> 1) >> (63 - 8 * rem);
  return LoadPartial(p, rem);
}

// ScanLongComponent()
//
// ScanComponent() of a component of eight bytes or more, whose first word
// `w0` has been read: inline for a loop that must call nothing, and out of
// line.
[[gnu::always_inline]] inline Component ScanLongComponentInline(std::string_view path, size_t start,
                                                                uint64_t w0) noexcept {
  const char* const p = path.data() + start;
  const size_t avail = path.size() - start;
  uint64_t h = HashMix(kHashSeed, w0);
  size_t len = 8;
  uint64_t w;
  uint32_t stops;
  for (;;) {
    const size_t rem = avail - len;
    if (rem >= 8) {
      w = LoadWord(p + len);
      stops = SlashMask(w);
    } else {
      w = LoadPathTail(path, p + len, rem);
      stops = SlashMask(w) | 1u << rem;
    }
    if (stops) break;
    h = HashMix(h, w);
    len += 8;
  }
  const unsigned k = static_cast<unsigned>(__builtin_ctz(stops));
  len += k;
  return {len, HashFinish(HashMix(h, w & kLowBytes[k])), w0, NameKey(w0, len)};
}
Component ScanLongComponent(std::string_view path, size_t start, uint64_t w0) noexcept;

// ScanShortComponent()
//
// The component of `path` that starts at `start` and ends before the next
// '/' or at the end, if it is shorter than a word (most are): found and
// hashed without a loop or a call. False for a longer one, which
// ScanComponent() takes.
[[gnu::always_inline]] inline bool ScanShortComponent(std::string_view path, size_t start,
                                                      Component* c, uint64_t* w0) noexcept {
  const char* const p = path.data() + start;
  const size_t rem = path.size() - start;
  uint64_t w;
  uint32_t stops;
  if (rem >= 8) {
    w = LoadWord(p);
    stops = SlashMask(w);
  } else {
    w = LoadPathTail(path, p, rem);
    stops = SlashMask(w) | 1u << rem;
  }
  *w0 = w;
  if (stops == 0) return false;
  const unsigned k = static_cast<unsigned>(__builtin_ctz(stops));
  const uint64_t last = w & kLowBytes[k];
  *c = {k, HashFinish(HashMix(kHashSeed, last)), last, last | static_cast<uint64_t>(k) << 56};
  return true;
}

// ScanComponent()
//
// The component of `path` that starts at `start` and ends before the next
// '/' or at the end, in one pass (the kernel's hash_name()). Every word is
// read whole: the last bytes of a path of eight bytes or more are read as
// the top of its last word.
[[gnu::always_inline]] inline Component ScanComponent(std::string_view path,
                                                      size_t start) noexcept {
  Component c;
  uint64_t w0;
  if (ScanShortComponent(path, start, &c, &w0)) [[likely]]
    return c;
  return ScanLongComponent(path, start, w0);
}

// HashComponent()
//
// ScanComponent()'s length, with the hash in *hash and the head in *head.
[[gnu::always_inline]] inline size_t HashComponent(std::string_view path, size_t start,
                                                   uint32_t* hash, uint64_t* head) noexcept {
  const Component c = ScanComponent(path, start);
  *hash = c.hash;
  *head = c.head;
  return c.len;
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
  // least eight bytes after its header, zero past its end to a whole word.)
  bool Equals(StrId id, std::string_view s, uint64_t head) const noexcept {
    const char* p = region_.base() + size_t{id} * kAlign;
    uint32_t size;
    std::memcpy(&size, p, sizeof size);
    if (size != s.size() || LoadWord(p + kHeader) != head) return false;
    return size <= 8 || TailEquals(p + kHeader + 8, s.data() + 8, size - 8);
  }
  // EqualsInline()
  //
  // Equals() calling nothing, for a caller that is itself out of line
  // (the dentry hash's compare of a long name): one call a compare, not
  // two.
  bool EqualsInline(StrId id, std::string_view s, uint64_t head) const noexcept {
    const char* p = region_.base() + size_t{id} * kAlign;
    uint32_t size;
    std::memcpy(&size, p, sizeof size);
    if (size != s.size() || LoadWord(p + kHeader) != head) return false;
    return size <= 8 || PaddedNamesEqual(p + kHeader + 8, s.data() + 8, size - 8);
  }
  uint32_t Hash(StrId id) const noexcept {
    uint32_t hash;
    std::memcpy(&hash, region_.base() + size_t{id} * kAlign + 4, sizeof hash);
    return hash;
  }

  size_t bytes() const noexcept;

 private:
  // PaddedNamesEqual() out of line: a lookup inlines Equals(), and most
  // names end within their head. `a`: the pooled bytes.
  [[gnu::noinline]] static bool TailEquals(const char* a, const char* b, size_t n) noexcept {
    return PaddedNamesEqual(a, b, n);
  }

  static constexpr size_t kAlign = 8;
  static constexpr size_t kHeader = 8;

  ReservedRegion region_;
  size_t used_ = 0;  // bytes of the region holding strings
  std::unordered_map<std::string_view, StrId> index_;
};

}  // namespace pathwarden::internal

#endif  // PATHWARDEN_SRC_BASE_STRING_POOL_H_
