// Reserved address space, committed as it grows.

#include "src/base/arena.h"

#include <sys/mman.h>

namespace pathwarden::internal {
namespace {

// Commits grow by at least this much, so a growing arena calls mprotect()
// rarely; untouched committed pages cost no memory.
constexpr size_t kCommitStep = 64 * 1024;

}  // namespace

ReservedRegion::ReservedRegion(size_t capacity) {
  capacity_ = (capacity + kCommitStep - 1) / kCommitStep * kCommitStep;
  void* p = mmap(nullptr, capacity_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  base_ = static_cast<char*>(p);
}

ReservedRegion::~ReservedRegion() { munmap(base_, capacity_); }

void ReservedRegion::Grow(size_t bytes) {
  if (bytes > capacity_) throw std::bad_alloc();
  size_t want = committed_ + kCommitStep > bytes ? committed_ + kCommitStep : bytes;
  want = (want + kCommitStep - 1) / kCommitStep * kCommitStep;
  if (want > capacity_) want = capacity_;
  if (mprotect(base_ + committed_, want - committed_, PROT_READ | PROT_WRITE) != 0)
    throw std::bad_alloc();
  committed_ = want;
}

}  // namespace pathwarden::internal
