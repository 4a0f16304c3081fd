// Interned, immutable strings: names of dentries, symlink bodies, file
// contents. Written once by the writer, read by anyone through an id.

#ifndef PATHWARDEN_SRC_BASE_STRING_POOL_H_
#define PATHWARDEN_SRC_BASE_STRING_POOL_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/base/arena.h"

namespace pathwarden::internal {

// HashName()
//
// The hash of a path component, as the dentry hash table keys it.
// (FNV-1a; any good 32-bit hash would do.)
inline uint32_t HashName(std::string_view s) noexcept {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
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
