// File: pathwarden/result.h
//
// Result<T, E>: a value or the error that prevented it, in the shape of
// C++23's std::expected (which libstdc++ 12 gives clang no version of), so
// that the project builds as C++20 with GCC 12 and clang 14 alike. Only
// what the project uses: construction from a value or from Unexpected(e),
// has_value()/operator bool, operator*, operator->, value(), value_or(),
// error().
// Reading the value of an error (or the error of a value) is a programming
// error: it aborts, whatever the build.
//
// Example:
//   Result<int> ParsePort(std::string_view s) {
//     if (s.empty()) return Unexpected(std::string("empty port"));
//     return 80;
//   }
//   auto port = ParsePort(text);
//   if (!port) { std::cerr << port.error() << "\n"; return 2; }
//   Use(*port);

#ifndef PATHWARDEN_RESULT_H_
#define PATHWARDEN_RESULT_H_

#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include "pathwarden/export.h"

PATHWARDEN_API_BEGIN
namespace pathwarden {

// Unexpected
//
// An error on its way into a Result (std::unexpected).
template <typename E>
class Unexpected {
 public:
  explicit Unexpected(E e) : error_(std::move(e)) {}
  E& error() & { return error_; }
  E&& error() && { return std::move(error_); }
  const E& error() const& { return error_; }

 private:
  E error_;
};
template <typename E>
Unexpected(E) -> Unexpected<E>;
Unexpected(const char*)->Unexpected<std::string>;

namespace internal {
[[noreturn]] inline void ResultMisuse() { std::abort(); }
}  // namespace internal

// Result
//
// A T, or an E saying why there is none.
template <typename T, typename E = std::string>
class [[nodiscard]] Result {
 public:
  Result() requires std::is_default_constructible_v<T> : v_(std::in_place_index<0>) {}
  template <typename U = T>
  requires std::is_constructible_v<T, U&&> &&
      (!std::is_same_v<std::remove_cvref_t<U>, Result>)Result(U&& value)
      : v_(std::in_place_index<0>, std::forward<U>(value)) {}  // NOLINT
  template <typename G>
  requires std::is_constructible_v<E, G&&> Result(Unexpected<G> u)
      : v_(std::in_place_index<1>, std::move(u).error()) {}  // NOLINT

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    return has_value() ? std::get<0>(v_) : (internal::ResultMisuse(), std::get<0>(v_));
  }
  const T& value() const& {
    return has_value() ? std::get<0>(v_) : (internal::ResultMisuse(), std::get<0>(v_));
  }
  T&& value() && { return std::move(value()); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(value()); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  template <typename U>
  T value_or(U&& other) const& {
    return has_value() ? std::get<0>(v_) : static_cast<T>(std::forward<U>(other));
  }

  E& error() & {
    return has_value() ? (internal::ResultMisuse(), std::get<1>(v_)) : std::get<1>(v_);
  }
  const E& error() const& {
    return has_value() ? (internal::ResultMisuse(), std::get<1>(v_)) : std::get<1>(v_);
  }
  E&& error() && { return std::move(error()); }

 private:
  std::variant<T, E> v_;
};

// Result<void, E>: success, or an E.
template <typename E>
class [[nodiscard]] Result<void, E> {
 public:
  Result() = default;
  template <typename G>
  requires std::is_constructible_v<E, G&&> Result(Unexpected<G> u)
      : ok_(false), error_(std::move(u).error()) {}  // NOLINT

  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  void value() const {
    if (!ok_) internal::ResultMisuse();
  }
  E& error() & { return ok_ ? (internal::ResultMisuse(), error_) : error_; }
  const E& error() const& { return ok_ ? (internal::ResultMisuse(), error_) : error_; }
  E&& error() && { return std::move(error()); }

 private:
  bool ok_ = true;
  E error_{};
};

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_RESULT_H_
