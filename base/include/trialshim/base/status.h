// Status and StatusOr<T>: how every trialshim library reports failure.
//
// Library code never prints, never exits and never lets an exception escape:
// a function that can fail returns a Status (or a StatusOr<T> holding either
// a value or a non-OK Status). Only a program's main() turns a Status into a
// message on stderr and an exit code (see ExitCodeFor). An OK status carries
// no message. Both types are cheap to move and safe to use from any thread as
// long as one object is not mutated concurrently.
#ifndef TRIALSHIM_BASE_STATUS_H_
#define TRIALSHIM_BASE_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace trialshim {

enum class StatusCode {
  kOk = 0,
  // The caller asked for something malformed: a bad flag, a bad override, a
  // config that does not parse or compose. Exit code 2.
  kInvalidArgument,
  // A named thing (file, key, group option) does not exist. Exit code 2.
  kNotFound,
  // Reading or writing a file, or starting a process, failed. Exit code 1.
  kIOError,
  // Data that should be well formed is not (a truncated checkpoint). Exit 1.
  kDataLoss,
  // The operation was stopped from outside (SIGTERM). Exit code 1.
  kCancelled,
  // A bug or an unexpected state. Exit code 1.
  kInternal,
  // Something another run holds (a locked directory). Exit code 1.
  kUnavailable,
};

// [[nodiscard]]: a Status dropped on the floor is an error nobody saw; a
// deliberate drop says so with (void) or IgnoreError().
class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return Status(StatusCode::kInvalidArgument, std::move(msg));
  }
  static Status NotFound(std::string msg) {
    return Status(StatusCode::kNotFound, std::move(msg));
  }
  static Status IOError(std::string msg) {
    return Status(StatusCode::kIOError, std::move(msg));
  }
  static Status DataLoss(std::string msg) {
    return Status(StatusCode::kDataLoss, std::move(msg));
  }
  static Status Cancelled(std::string msg) {
    return Status(StatusCode::kCancelled, std::move(msg));
  }
  static Status Internal(std::string msg) {
    return Status(StatusCode::kInternal, std::move(msg));
  }
  static Status Unavailable(std::string msg) {
    return Status(StatusCode::kUnavailable, std::move(msg));
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // For the rare caller that has nothing to do with a failure (a best-effort
  // clean-up whose outcome cannot change what happens next).
  void IgnoreError() const {}

  // "INVALID_ARGUMENT: message", for test failures and logs.
  std::string ToString() const;

  // Returns a status with the same code and "prefix: message".
  Status WithPrefix(const std::string& prefix) const {
    if (ok()) return *this;
    return Status(code_, prefix + ": " + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline std::string Status::ToString() const {
  static const char* const kNames[] = {"OK",        "INVALID_ARGUMENT",
                                       "NOT_FOUND", "IO_ERROR",
                                       "DATA_LOSS", "CANCELLED",
                                       "INTERNAL",  "UNAVAILABLE"};
  std::string out = kNames[static_cast<int>(code_)];
  if (!ok()) out += ": " + message_;
  return out;
}

// The process exit code main() uses for a failed status: 2 for usage and
// configuration errors, 1 for runtime failures, 0 for OK.
inline int ExitCodeFor(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk:
      return 0;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
      return 2;
    default:
      return 1;
  }
}

namespace internal {
// What value() of an errored StatusOr does, in every build type: print
// "StatusOr::value() of an error: <status>" to stderr and abort(), as absl
// does. It is a bug in the caller, which should have checked ok().
[[noreturn]] void DieOnValueOfError(const Status& status);
}  // namespace internal

// Either a T or a non-OK Status. Accessing value() (or * or ->) of an
// error is a bug that stops the process (internal::DieOnValueOfError), so
// callers check ok() first.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const T& value) : value_(value) {}  // NOLINT: implicit by design
  StatusOr(T&& value) : value_(std::move(value)) {}  // NOLINT
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok() && "StatusOr built from an OK status");
    if (status_.ok()) status_ = Status::Internal("StatusOr built from OK");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  const T& value() const& {
    if (!ok()) internal::DieOnValueOfError(status_);
    return *value_;
  }
  T& value() & {
    if (!ok()) internal::DieOnValueOfError(status_);
    return *value_;
  }
  T&& value() && {
    if (!ok()) internal::DieOnValueOfError(status_);
    return std::move(*value_);
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace trialshim

// Returns early from the enclosing function if `expr` is a non-OK Status.
#define TRIALSHIM_RETURN_IF_ERROR(expr)         \
  do {                                          \
    ::trialshim::Status _st = (expr);           \
    if (!_st.ok()) return _st;                  \
  } while (0)

#define TRIALSHIM_CONCAT_INNER_(a, b) a##b
#define TRIALSHIM_CONCAT_(a, b) TRIALSHIM_CONCAT_INNER_(a, b)
// `lhs` = value of the StatusOr `expr`, or return its status.
#define TRIALSHIM_ASSIGN_OR_RETURN(lhs, expr)                              \
  auto TRIALSHIM_CONCAT_(_sor_, __LINE__) = (expr);                        \
  if (!TRIALSHIM_CONCAT_(_sor_, __LINE__).ok())                            \
    return TRIALSHIM_CONCAT_(_sor_, __LINE__).status();                    \
  lhs = std::move(TRIALSHIM_CONCAT_(_sor_, __LINE__)).value()

#endif  // TRIALSHIM_BASE_STATUS_H_
