// Errors as values (after leveldb's Status and absl::StatusOr).
//
// pipette reports every failure the user can cause or meet (bad input, a crashed runtime, a full
// disk) as an `Error` carrying one line of text that names the thing and what to do. Functions
// that can fail return `Result<T>`; nothing throws across a component boundary, and never across
// the driver-process boundary, where the protocol carries errors as data.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace pipette {

// One-line, user-facing description of a failure. `stage` names where a measurement failed
// (DESIGN.md 4.2 step 7: "resolve", "load", "prefill", "decode", "generate", "memory",
// "validate", "store", ...); it is empty for failures outside a measurement.
struct Error {
  std::string message;
  std::string stage;

  // Returns a copy whose message is "<context>: <message>", keeping the stage.
  Error Wrap(const std::string& context) const { return {context + ": " + message, stage}; }
};

inline Error MakeError(std::string message, std::string stage = {}) {
  return Error{std::move(message), std::move(stage)};
}

// Holds either a T or an Error. REQUIRES: check ok() before value(); value() on an error and
// error() on a value are programming errors (they throw std::bad_variant_access).
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}      // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  const Error& error() const { return std::get<Error>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Success-or-error for functions without a value.
class Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design
  static Status Ok() { return Status(); }
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace pipette
