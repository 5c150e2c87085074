// Result<T>: a value or an Error (errno + message).  libo2lnd reports every
// failure this way; it throws nothing.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace o2lnd {

// A failure: a positive errno value and a human-readable message that says
// what failed (the message does not repeat strerror(errnum) unless useful).
struct Error {
  int errnum = 0;
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  // Implicit on purpose: `return value;` and `return Error{...};` both work.
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}      // NOLINT(*-explicit-*)
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT(*-explicit-*)

  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // Precondition: ok().  (std::get throws std::bad_variant_access otherwise.)
  [[nodiscard]] T& value() & { return std::get<0>(v_); }
  [[nodiscard]] const T& value() const& { return std::get<0>(v_); }
  [[nodiscard]] T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // Precondition: !ok().
  [[nodiscard]] const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace o2lnd
