// Test helper: run a real program through the base Subprocess, read what it
// prints, send it signals, and collect how it ended. Every suite that runs
// a program ("run this argv with this environment, give me the exit code,
// the signal and the output") uses this; a test forks by hand only when the
// child must run library code itself (say why beside the fork).
#ifndef TRIALSHIM_TESTS_TESTUTIL_SUBPROCESS_H_
#define TRIALSHIM_TESTS_TESTUTIL_SUBPROCESS_H_

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "trialshim/base/subprocess.h"

namespace trialshim::testing {

struct Finished {
  int exit_code = -1;  // -1 when it died of a signal
  int term_signal = 0;
  std::string out;
  std::string err;
  bool timed_out = false;  // still running after Wait's limit: killed

  // As a shell reports it: the exit code, or 128+N for signal N.
  int code() const { return term_signal != 0 ? 128 + term_signal : exit_code; }
};

// Our environment without the variables in `unset`, plus `set`
// ("NAME=value" entries).
inline std::vector<std::string> TestEnvironment(
    const std::vector<std::string>& set,
    const std::vector<std::string>& unset = {}) {
  std::vector<std::string> drop = unset;
  for (const std::string& e : set) drop.push_back(e.substr(0, e.find('=')));
  std::vector<std::string> out;
  for (std::string& e : EnvironmentWith({})) {
    std::string name = e.substr(0, e.find('='));
    if (std::find(drop.begin(), drop.end(), name) == drop.end())
      out.push_back(std::move(e));
  }
  out.insert(out.end(), set.begin(), set.end());
  return out;
}

class Child {
 public:
  // How tests run a program unless they say otherwise: our environment plus
  // `env`, stdout and stderr on pipes, in our process group.
  static SubprocessOptions Options(const std::vector<std::string>& env = {}) {
    SubprocessOptions o;
    o.env = TestEnvironment(env);
    o.out = Stdio::Pipe();
    o.err = Stdio::Pipe();
    o.new_process_group = false;
    return o;
  }

  // Starts argv[0] (PATH lookup) with argv. A program that cannot be
  // started "ends" with the shell's 127/126 and the reason on err.
  explicit Child(const std::vector<std::string>& argv,
                 const std::vector<std::string>& env = {})
      : Child(argv, Options(env)) {}
  Child(const std::vector<std::string>& argv,
        const SubprocessOptions& options) {
    start_ = proc_.Start(argv, options);
    in_fd_ = proc_.TakeStdin();
    out_fd_ = proc_.TakeStdout();
    err_fd_ = proc_.TakeStderr();
  }
  ~Child() {
    CloseStdin();  // a child that reads it to its end may go on its own
    if (proc_.running()) {
      proc_.Kill(SIGKILL, false).IgnoreError();
      Wait();
    }
    if (out_fd_ >= 0) close(out_fd_);
    if (err_fd_ >= 0) close(err_fd_);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return proc_.pid(); }
  bool started() const { return start_.ok(); }
  void Signal(int sig) const { proc_.Kill(sig, false).IgnoreError(); }
  // Ends a piped stdin (Options().in = Stdio::Pipe()): the child reads EOF.
  void CloseStdin() {
    if (in_fd_ >= 0) close(in_fd_);
    in_fd_ = -1;
  }
  // What stdout (a pipe) has shown so far.
  const std::string& out() const { return out_; }

  // Reads stdout until `needle` has appeared or `timeout` passed; what was
  // read is kept for Wait(). True if it appeared.
  bool WaitForOutput(
      const std::string& needle,
      std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (out_.find(needle) == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || out_fd_ < 0) return false;
      struct pollfd p = {out_fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      Drain(p, &out_fd_, &out_);
    }
    return true;
  }

  // Reads the pipes to EOF, then reaps the process. A process whose pipes
  // are still open after `limit` is killed (SIGKILL) and timed_out set: a
  // hang is a failure, not a stuck test.
  Finished Wait(std::chrono::milliseconds limit = std::chrono::hours(1)) {
    using Clock = std::chrono::steady_clock;
    Clock::time_point deadline = Clock::now() + limit;
    bool timed_out = false;
    while (out_fd_ >= 0 || err_fd_ >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - Clock::now());
      if (left.count() <= 0) {
        if (timed_out) break;  // a grandchild still holds a pipe
        timed_out = true;
        Signal(SIGKILL);
        deadline = Clock::now() + std::chrono::seconds(5);
        continue;
      }
      struct pollfd p[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
      if (poll(p, 2, static_cast<int>(left.count())) < 0) break;
      Drain(p[0], &out_fd_, &out_);
      Drain(p[1], &err_fd_, &err_);
    }
    Finished f;
    f.timed_out = timed_out;
    f.out = out_;
    f.err = err_;
    if (!start_.ok()) {
      f.exit_code = proc_.start_failure_exit_code();
      f.err += start_.message() + "\n";
      return f;
    }
    if (!proc_.Wait().ok()) return f;
    f.term_signal = proc_.term_signal();
    if (f.term_signal == 0) f.exit_code = proc_.exit_code();
    return f;
  }

 private:
  static void Drain(const struct pollfd& p, int* fd, std::string* into) {
    if (*fd < 0 || p.revents == 0) return;
    char buf[4096];
    ssize_t n = read(*fd, buf, sizeof(buf));
    if (n > 0) {
      into->append(buf, static_cast<size_t>(n));
    } else {
      close(*fd);
      *fd = -1;
    }
  }

  Subprocess proc_;
  Status start_;
  int in_fd_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::string out_;
  std::string err_;
};

inline Finished RunToEnd(const std::vector<std::string>& argv,
                         const std::vector<std::string>& env = {}) {
  return Child(argv, env).Wait();
}

// Named apart from RunToEnd: a braced list of one string literal would
// convert to either.
inline Finished RunToEndWith(const std::vector<std::string>& argv,
                             const SubprocessOptions& options) {
  return Child(argv, options).Wait();
}

// Whether process `pid` runs (not our child, or not yet reaped): a zombie
// counts as gone.
inline bool ProcessRuns(pid_t pid) {
  if (pid <= 0) return false;
  std::string stat;
  std::getline(std::ifstream("/proc/" + std::to_string(pid) + "/stat"), stat);
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() &&
         stat[paren + 2] != 'Z';
}

// True once process `pid` has ended (a zombie counts), within `timeout`.
// Waits on the process itself (a pidfd turns readable when it ends), not
// on a poll: the pid need not be our child.
inline bool EndsWithin(pid_t pid, std::chrono::milliseconds timeout) {
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH || !ProcessRuns(pid);  // gone already
  struct pollfd p = {fd, POLLIN, 0};
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int n;
  do {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    n = poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
  } while (n < 0 && errno == EINTR);
  close(fd);
  return n > 0 || !ProcessRuns(pid);
}

// Whether this build runs under AddressSanitizer.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAsan = true;
#else
inline constexpr bool kAsan = false;
#endif
#else
inline constexpr bool kAsan = false;
#endif

// `argv` run with its memory capped at `megabytes`, so a program that would
// eat all memory fails fast instead of taking the machine down: an
// address-space limit (inherited by its children), or under
// AddressSanitizer (which reserves terabytes of address space) its RSS cap.
inline std::vector<std::string> WithMemoryCap(std::vector<std::string> argv,
                                              int megabytes = 2000) {
  std::string mb = std::to_string(megabytes);
  std::vector<std::string> out = {
      "/bin/sh", "-c",
      kAsan ? "ASAN_OPTIONS=hard_rss_limit_mb=" + mb + " exec \"$@\""
            : "ulimit -v " + mb + "000; exec \"$@\"",
      "sh"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

inline std::string TrialshimBinary() {
  return std::string(TRIALSHIM_BIN_DIR) + "/trialshim";
}

// True once `ready(path)` holds, within `timeout`. Woken by inotify on the
// nearest existing directory above `path` (whatever is created, renamed,
// written or closed there), re-checked after each event: no sleeping poll.
template <typename Ready>
bool WaitForFileEvent(const std::string& path,
                      std::chrono::milliseconds timeout, Ready ready) {
  int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd < 0) return ready(path);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool ok = false;
  while (true) {
    // Watch first, then look: an event between the two is not lost.
    std::string dir = path;
    do {
      size_t slash = dir.rfind('/');
      dir = slash == std::string::npos ? "."
            : slash == 0               ? "/"
                                       : dir.substr(0, slash);
    } while (dir != "/" && dir != "." && access(dir.c_str(), F_OK) != 0);
    inotify_add_watch(
        fd, dir.c_str(),
        IN_CREATE | IN_MOVED_TO | IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB);
    if ((ok = ready(path))) break;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) > 0) {
      char events[4096];
      while (read(fd, events, sizeof(events)) > 0) {
      }
    }
  }
  close(fd);
  return ok;
}

// True once `path` exists, within `timeout`.
inline bool WaitForFile(
    const std::string& path,
    std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  return WaitForFileEvent(path, timeout, [](const std::string& p) {
    return access(p.c_str(), F_OK) == 0;
  });
}

// True once file `path` holds every one of `texts`, within `timeout`.
inline bool WaitForFileText(
    const std::string& path, const std::vector<std::string>& texts,
    std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  return WaitForFileEvent(path, timeout, [&texts](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    for (const std::string& t : texts) {
      if (text.find(t) == std::string::npos) return false;
    }
    return true;
  });
}

// Waits until every file in `paths` exists, all within `timeout`.
inline bool WaitForFiles(
    const std::vector<std::string>& paths,
    std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const std::string& path : paths) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (!WaitForFile(path, std::max(left, std::chrono::milliseconds(0)))) {
      return false;
    }
  }
  return true;
}

}  // namespace trialshim::testing

#endif  // TRIALSHIM_TESTS_TESTUTIL_SUBPROCESS_H_
