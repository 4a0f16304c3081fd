// Interned strings.

#include "src/base/string_pool.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace pathwarden::internal {
namespace {

// 4 GiB of strings: ids (offsets in 8-byte units) stay well inside 32 bits.
constexpr size_t kCapacity = size_t{1} << 32;

}  // namespace

StringPool::StringPool() : region_(kCapacity) {
  // Id 0, at offset 0: the empty string.
  const StrId empty = Intern("");
  (void)empty;
}

StrId StringPool::Intern(std::string_view s) {
  if (auto it = index_.find(s); it != index_.end()) return it->second;
  if (s.size() > UINT32_MAX) throw std::bad_alloc();
  const size_t at = used_;
  // At least eight bytes of name, zero-padded (Equals() reads a word).
  const size_t end = at + kHeader + (std::max<size_t>(s.size(), 8) + kAlign - 1) / kAlign * kAlign;
  region_.Commit(end);  // throws past the capacity
  char* p = region_.base() + at;
  const uint32_t size = static_cast<uint32_t>(s.size());
  const uint32_t hash = HashName(s);
  std::memcpy(p, &size, sizeof size);
  std::memcpy(p + 4, &hash, sizeof hash);
  if (!s.empty()) std::memcpy(p + kHeader, s.data(), s.size());
  used_ = end;
  const StrId id = static_cast<StrId>(at / kAlign);
  index_.emplace(Get(id), id);
  return id;
}

Component ScanLongComponent(std::string_view path, size_t start, uint64_t w0) noexcept {
  return ScanLongComponentInline(path, start, w0);
}

size_t StringPool::bytes() const noexcept {
  return used_ + index_.size() * (sizeof(std::string_view) + sizeof(StrId) + 16) +
         index_.bucket_count() * sizeof(void*);
}

}  // namespace pathwarden::internal
