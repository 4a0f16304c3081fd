// Interned strings.

#include "src/base/string_pool.h"

#include <cstring>

namespace pathwarden::internal {

StringPool::StringPool() {
  // Id 0 (allocated by the arena) is the empty string.
  entries_[0] = Entry{"", 0, HashName("")};
  index_.emplace(std::string_view(), 0);
}

const char* StringPool::Store(std::string_view s) {
  if (s.size() > kBlock / 4) {
    // Large strings (file contents) get a block of their own.
    blocks_.emplace_back(new char[s.size()]);
    std::memcpy(blocks_.back().get(), s.data(), s.size());
    stored_bytes_ += s.size();
    return blocks_.back().get();
  }
  if (block_used_ + s.size() > kBlock) {
    blocks_.emplace_back(new char[kBlock]);
    current_block_ = blocks_.back().get();
    block_used_ = 0;
    stored_bytes_ += kBlock;
  }
  char* p = current_block_ + block_used_;
  std::memcpy(p, s.data(), s.size());
  block_used_ += s.size();
  return p;
}

StrId StringPool::Intern(std::string_view s) {
  if (auto it = index_.find(s); it != index_.end()) return it->second;
  const char* p = Store(s);
  StrId id = entries_.Alloc();
  entries_[id] = Entry{p, static_cast<uint32_t>(s.size()), HashName(s)};
  index_.emplace(std::string_view(p, s.size()), id);
  return id;
}

size_t StringPool::bytes() const noexcept {
  return entries_.bytes() + stored_bytes_ +
         index_.size() * (sizeof(std::string_view) + sizeof(StrId) + 16);
}

}  // namespace pathwarden::internal
