// Reserved address space, committed as it grows.

#include "src/base/arena.h"

#include <sys/mman.h>

#include <new>

namespace pathwarden::internal {
namespace {

// Commits grow by at least this much, so a growing arena calls mprotect()
// rarely; untouched committed pages cost no memory.
constexpr size_t kCommitStep = 64 * 1024;

// As operator new fails: the new-handler first (the CLI's reports the
// memory budget and exits), else std::bad_alloc.
[[noreturn]] void OutOfMemory() {
  if (std::new_handler h = std::get_new_handler()) h();
  throw std::bad_alloc();
}

}  // namespace

ReservedRegion::ReservedRegion(size_t capacity) {
  capacity_ = (capacity + kCommitStep - 1) / kCommitStep * kCommitStep;
  void* p = mmap(nullptr, capacity_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) OutOfMemory();
  base_ = static_cast<char*>(p);
}

ReservedRegion::~ReservedRegion() { munmap(base_, capacity_); }

void ReservedRegion::Grow(size_t bytes) {
  if (bytes > capacity_) OutOfMemory();
  size_t want = committed_ + kCommitStep > bytes ? committed_ + kCommitStep : bytes;
  want = (want + kCommitStep - 1) / kCommitStep * kCommitStep;
  if (want > capacity_) want = capacity_;
  if (mprotect(base_ + committed_, want - committed_, PROT_READ | PROT_WRITE) != 0)
    OutOfMemory();
  committed_ = want;
}

}  // namespace pathwarden::internal
