// What every file of the C API shares: the per-thread message of
// pathwarden_last_error(), the API's own errors as -errno, the guard that
// turns an exception into one, and the checks of handles, strings and
// flags done before anything is touched.

#ifndef PATHWARDEN_SRC_CAPI_CAPI_UTIL_H_
#define PATHWARDEN_SRC_CAPI_CAPI_UTIL_H_

#include <cerrno>
#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace pathwarden::capi {

// The message pathwarden_last_error() returns: the calling thread's own.
inline thread_local std::string tls_error;

// Fail()
//
// The API's own error: the message for pathwarden_last_error(), -err.
inline int Fail(int err, std::string message) {
  tls_error = std::move(message);
  return -err;
}

// Guard()
//
// Runs one API call: the message cleared first, an exception (memory, or
// a library error that cannot happen) turned into -errno.
template <typename F>
int Guard(F&& f) noexcept {
  tls_error.clear();
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return Fail(ENOMEM, "out of memory");
  } catch (const std::exception& e) {
    return Fail(EIO, std::string("internal error: ") + e.what());
  }
}

// CheckFlags()
//
// 0 for flags 0, the only ones any call takes today.
inline int CheckFlags(uint32_t flags) {
  return flags == 0 ? 0 : Fail(EINVAL, fmt::format("flags must be 0 (got {:#x})", flags));
}

// Live()
//
// 0 for a live handle of kind T (each handle starts with its own magic,
// checked on every call: a pointer to another kind of handle is -EBADF,
// not undefined behaviour); -EINVAL for NULL.
template <typename T>
int Live(const T* h, const char* what) {
  if (h == nullptr) return Fail(EINVAL, fmt::format("{} is NULL", what));
  if (h->magic != T::kMagic) return Fail(EBADF, fmt::format("{} is not a live {} handle", what, what));
  return 0;
}

// NeedString()
//
// 0 for a string given; -EINVAL for NULL.
inline int NeedString(const char* s, const char* what) {
  return s != nullptr ? 0 : Fail(EINVAL, fmt::format("{} is NULL", what));
}

}  // namespace pathwarden::capi

#endif  // PATHWARDEN_SRC_CAPI_CAPI_UTIL_H_
