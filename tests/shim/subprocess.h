// Test helper: run a real program with pipes on stdout/stderr, send it
// signals, and collect what it printed and how it ended.
#ifndef TRIALSHIM_TESTS_SHIM_SUBPROCESS_H_
#define TRIALSHIM_TESTS_SHIM_SUBPROCESS_H_

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace trialshim::testing {

struct Finished {
  int exit_code = -1;  // -1 when it died of a signal
  int term_signal = 0;
  std::string out;
  std::string err;
};

class Subprocess {
 public:
  // Starts argv[0] (PATH lookup) with the current environment plus `env`
  // ("NAME=value" entries).
  explicit Subprocess(const std::vector<std::string>& argv,
                      const std::vector<std::string>& env = {}) {
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      dup2(err[1], 2);
      for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
      std::vector<char*> args;
      for (const std::string& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execvp(args[0], args.data());
      _exit(99);
    }
    close(out[1]);
    close(err[1]);
    out_fd_ = out[0];
    err_fd_ = err[0];
  }
  ~Subprocess() {
    if (pid_ > 0 && !waited_) {
      kill(pid_, SIGKILL);
      Wait();
    }
  }
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  bool started() const { return pid_ > 0; }
  void Signal(int sig) const { kill(pid_, sig); }

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
      char buf[4096];
      ssize_t n = read(out_fd_, buf, sizeof(buf));
      if (n <= 0) {
        close(out_fd_);
        out_fd_ = -1;
        return out_.find(needle) != std::string::npos;
      }
      out_.append(buf, static_cast<size_t>(n));
    }
    return true;
  }

  // Reads both pipes to EOF, then reaps the process.
  Finished Wait() {
    while (out_fd_ >= 0 || err_fd_ >= 0) {
      struct pollfd p[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
      if (poll(p, 2, -1) < 0) break;
      Drain(p[0], &out_fd_, &out_);
      Drain(p[1], &err_fd_, &err_);
    }
    Finished f;
    int status = 0;
    if (pid_ > 0 && !waited_) {
      waitpid(pid_, &status, 0);
      waited_ = true;
      status_ = status;
    }
    if (WIFEXITED(status_)) f.exit_code = WEXITSTATUS(status_);
    if (WIFSIGNALED(status_)) f.term_signal = WTERMSIG(status_);
    f.out = out_;
    f.err = err_;
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

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  bool waited_ = false;
  int status_ = 0;
  std::string out_;
  std::string err_;
};

inline Finished RunToEnd(const std::vector<std::string>& argv,
                         const std::vector<std::string>& env = {}) {
  Subprocess p(argv, env);
  return p.Wait();
}

inline std::string TrialshimBinary() {
  return std::string(TRIALSHIM_BIN_DIR) + "/trialshim";
}

// True once `path` exists, polling until `timeout`.
inline bool WaitForFile(
    const std::string& path,
    std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (access(path.c_str(), F_OK) != 0) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace trialshim::testing

#endif  // TRIALSHIM_TESTS_SHIM_SUBPROCESS_H_
