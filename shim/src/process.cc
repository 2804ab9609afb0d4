#include "trialshim/shim/process.h"

#include <fcntl.h>
#include <poll.h>
#include <re2/re2.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace trialshim::shim {

using hypertune::HypertuneReporter;
namespace {

constexpr int kForwarded[] = {SIGTERM, SIGINT,  SIGHUP,
                              SIGQUIT, SIGUSR1, SIGUSR2};
// A line longer than this is matched in pieces rather than buffered forever.
constexpr size_t kMaxLine = 1 << 20;
constexpr size_t kMaxWarnings = 20;

// What the program must start with whatever trialshim inherited or changed:
// nothing blocked, and the signals a trainer relies on at their defaults.
void ResetSignalsForProgram() {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  for (int sig : kForwarded) sigaction(sig, &dfl, nullptr);
  sigaction(SIGPIPE, &dfl, nullptr);
  sigaction(SIGCHLD, &dfl, nullptr);
}

std::vector<char*> CArgv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const std::string& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

void WriteFully(int fd, const char* data, size_t n, bool* broken) {
  while (n > 0 && !*broken) {
    ssize_t w = write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        struct pollfd p = {fd, POLLOUT, 0};
        poll(&p, 1, 100);
        continue;
      }
      *broken = true;  // our own stdout/stderr is gone; keep the child going
      return;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
}

// One of the child's output streams in scrape mode.
struct Stream {
  int read_fd = -1;
  int write_to = -1;  // 1 or 2
  bool broken = false;
  std::string partial;
};

class Scraper {
 public:
  Scraper(const RE2& re, const std::string& tag, HypertuneReporter* reporter,
          RunResult* result)
      : re_(re), tag_(tag), reporter_(reporter), result_(result) {}

  void Feed(Stream& s, const char* data, size_t n) {
    s.partial.append(data, n);
    size_t start = 0;
    for (size_t i = 0; i < s.partial.size(); ++i) {
      char c = s.partial[i];
      if (c == '\n' || c == '\r') {  // '\r' ends progress-bar lines
        Match(std::string_view(s.partial).substr(start, i - start));
        start = i + 1;
      }
    }
    s.partial.erase(0, start);
    if (s.partial.size() > kMaxLine) {
      Match(s.partial);
      s.partial.clear();
    }
  }

  void Flush(Stream& s) {
    if (!s.partial.empty()) Match(s.partial);
    s.partial.clear();
  }

 private:
  void Warn(std::string w) {
    if (result_->warnings.size() < kMaxWarnings)
      result_->warnings.push_back(std::move(w));
  }

  void Match(std::string_view line) {
    if (line.empty()) return;
    std::string value;
    std::string step;
    bool matched = re_.NumberOfCapturingGroups() >= 2
                       ? RE2::PartialMatch(line, re_, &value, &step)
                       : RE2::PartialMatch(line, re_, &value);
    if (!matched) return;
    // float() in Python accepts surrounding whitespace; so do we.
    const char* begin = value.c_str();
    char* end = nullptr;
    double v = std::strtod(begin, &end);
    while (end != nullptr && *end != '\0' &&
           std::isspace(static_cast<unsigned char>(*end)))
      ++end;
    if (end == begin || *end != '\0') {
      Warn("metric regex matched '" + value + "', which is not a number");
      return;
    }
    int64_t global_step = 0;
    if (!step.empty()) {
      char* step_end = nullptr;
      double s = std::strtod(step.c_str(), &step_end);
      if (step_end != step.c_str() && std::isfinite(s))
        global_step = static_cast<int64_t>(s);
    }
    Status st = reporter_->Report(tag_, v, global_step);
    if (!st.ok()) {
      Warn("could not report metric: " + st.message());
      return;
    }
    ++result_->metrics_reported;
  }

  const RE2& re_;
  const std::string& tag_;
  HypertuneReporter* reporter_;
  RunResult* result_;
};

// When the supervised program's process group has ended, and what it takes
// to end it. The program (the group's leader) ends the trial: after it has
// exited, what is left of its group is waited for, since that is the trainer
// still writing its checkpoint when a shell in front of it died of a
// forwarded SIGTERM. Left-overs of a program that exited by itself (a
// background job) get SIGTERM. SIGKILL follows `kill_after` after either,
// when set; a left-over of a normal exit gets it after kStragglerGrace.
class GroupEnd {
 public:
  static constexpr std::chrono::seconds kStragglerGrace{10};

  GroupEnd(pid_t leader, std::chrono::milliseconds kill_after)
      : leader_(leader), kill_after_(kill_after) {}

  bool done() const { return done_; }
  int child_status() const { return child_status_; }

  void Forward(int sig) {
    kill(-leader_, sig);
    bool terminating = sig != SIGUSR1 && sig != SIGUSR2;
    if (terminating) {
      terminating_ = true;
      if (kill_after_.count() > 0) Arm(kill_after_);
    }
  }

  // Reaps every child that has ended: the leader, and as subreaper (or
  // PID 1) the orphans of its group and of anything else.
  void Reap() {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      if (pid == leader_) {
        leader_done_ = true;
        child_status_ = status;
      }
    }
  }

  // Decides what the group's state asks for now.
  void Tick() {
    if (leader_done_) {
      if (kill(-leader_, 0) != 0 && errno == ESRCH) {
        done_ = true;
        return;
      }
      if (!terminating_) {  // left-overs of a normal exit
        terminating_ = true;
        kill(-leader_, SIGTERM);
        Arm(kill_after_.count() > 0 ? kill_after_ : kStragglerGrace);
      }
    }
    if (Clock::now() >= kill_at_) {
      kill(-leader_, SIGKILL);
      kill_at_ = Clock::time_point::max();
    }
  }

  // How long poll may sleep: until SIGKILL is due; briefly while waiting
  // for a group whose last member may have been reaped by another member.
  int PollTimeoutMs() const {
    int64_t ms = -1;
    if (kill_at_ != Clock::time_point::max()) {
      ms = std::max<int64_t>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(
                 kill_at_ - Clock::now())
                     .count() +
                 1);
    }
    if (leader_done_) ms = ms < 0 ? 100 : std::min<int64_t>(ms, 100);
    return static_cast<int>(ms);
  }

 private:
  using Clock = std::chrono::steady_clock;

  void Arm(std::chrono::milliseconds after) {
    kill_at_ = std::min(kill_at_, Clock::now() + after);
  }

  pid_t leader_;
  std::chrono::milliseconds kill_after_;
  bool leader_done_ = false;
  bool terminating_ = false;
  bool done_ = false;
  int child_status_ = 0;
  Clock::time_point kill_at_ = Clock::time_point::max();
};

RunResult Supervise(const std::vector<std::string>& argv,
                    const RunOptions& options, const RE2* re) {
  RunResult result;
  sigset_t handled;
  sigemptyset(&handled);
  for (int sig : kForwarded) sigaddset(&handled, sig);
  sigaddset(&handled, SIGCHLD);
  sigset_t old_mask;
  // Blocked signals are queued, even for PID 1, and read from the signalfd.
  sigprocmask(SIG_BLOCK, &handled, &old_mask);
  int sfd = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) {
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    return {1, std::string("signalfd: ") + std::strerror(errno), {}, 0};
  }
  signal(SIGPIPE, SIG_IGN);  // a closed stdout must not kill the supervisor

  bool scrape = re != nullptr;
  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  int exec_pipe[2] = {-1, -1};  // carries execvp's errno; closes on success
  if (pipe2(exec_pipe, O_CLOEXEC) != 0 ||
      (scrape &&
       (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0))) {
    return {1, std::string("pipe: ") + std::strerror(errno), {}, 0};
  }
  std::vector<char*> cargv = CArgv(argv);
  // Orphans of the trainer's group come to us (as they do to PID 1), so we
  // see the group end even when a shell in front of the trainer dies first.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  pid_t parent = getpid();
  pid_t child = fork();
  if (child < 0) {
    return {1, std::string("fork: ") + std::strerror(errno), {}, 0};
  }
  if (child == 0) {
    if (scrape) {
      dup2(out_pipe[1], STDOUT_FILENO);
      dup2(err_pipe[1], STDERR_FILENO);
      // Python block-buffers a pipe; lines must arrive as they are printed.
      setenv("PYTHONUNBUFFERED", "1", 0);
    }
    // Its own process group, so a forwarded signal reaches the trainer
    // behind a shell (`bash -c "python train.py; gsutil cp ..."`), as with
    // `tini -g`. On a terminal the group takes the foreground, so ^C and
    // reads from the terminal still reach it.
    setpgid(0, 0);
    if (isatty(STDIN_FILENO)) {
      signal(SIGTTOU, SIG_IGN);  // tcsetpgrp from a background group
      tcsetpgrp(STDIN_FILENO, getpgrp());
      signal(SIGTTOU, SIG_DFL);
    }
    ResetSignalsForProgram();
    // If trialshim itself is killed, the trainer must not run on unseen.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    execvp(cargv[0], cargv.data());
    int err = errno;
    ssize_t ignored = write(exec_pipe[1], &err, sizeof(err));
    (void)ignored;
    _exit(LaunchErrorExitCode(err));
  }
  close(exec_pipe[1]);
  if (scrape) {
    close(out_pipe[1]);
    close(err_pipe[1]);
  }
  int exec_errno = 0;
  ssize_t got;
  do {
    got = read(exec_pipe[0], &exec_errno, sizeof(exec_errno));
  } while (got < 0 && errno == EINTR);
  close(exec_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof(exec_errno))) {
    int status;
    waitpid(child, &status, 0);
    if (scrape) {
      close(out_pipe[0]);
      close(err_pipe[0]);
    }
    close(sfd);
    return {LaunchErrorExitCode(exec_errno),
            LaunchErrorMessage(argv[0], exec_errno),
            {},
            0};
  }

  std::unique_ptr<HypertuneReporter> own_reporter;
  HypertuneReporter* reporter = options.reporter;
  if (reporter == nullptr) {
    own_reporter = std::make_unique<HypertuneReporter>(
        HypertuneReporter::FromEnvironment());
    reporter = own_reporter.get();
  }
  Stream streams[2];
  streams[0].read_fd = out_pipe[0];
  streams[0].write_to = STDOUT_FILENO;
  streams[1].read_fd = err_pipe[0];
  streams[1].write_to = STDERR_FILENO;
  std::unique_ptr<Scraper> scraper;
  if (scrape) {
    scraper =
        std::make_unique<Scraper>(*re, options.metric_tag, reporter, &result);
    for (Stream& s : streams) fcntl(s.read_fd, F_SETFL, O_NONBLOCK);
  }

  char buf[64 * 1024];
  // Reads what is available now; returns false at EOF or on error.
  auto pump = [&](Stream& s) {
    for (;;) {
      ssize_t n = read(s.read_fd, buf, sizeof(buf));
      if (n > 0) {
        WriteFully(s.write_to, buf, static_cast<size_t>(n), &s.broken);
        scraper->Feed(s, buf, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return true;
      scraper->Flush(s);
      close(s.read_fd);
      s.read_fd = -1;
      return false;
    }
  };

  GroupEnd end(child, options.kill_after);
  while (!end.done()) {
    struct pollfd fds[3];
    nfds_t nfds = 0;
    fds[nfds++] = {sfd, POLLIN, 0};
    int stream_index[3] = {-1, -1, -1};
    for (int i = 0; scrape && i < 2; ++i) {
      if (streams[i].read_fd >= 0) {
        stream_index[nfds] = i;
        fds[nfds++] = {streams[i].read_fd, POLLIN, 0};
      }
    }
    if (poll(fds, nfds, end.PollTimeoutMs()) < 0) {
      if (errno == EINTR) continue;
      result.error = std::string("poll: ") + std::strerror(errno);
      kill(-child, SIGKILL);
      break;
    }
    for (nfds_t i = 1; i < nfds; ++i) {
      if (fds[i].revents != 0) pump(streams[stream_index[i]]);
    }
    struct signalfd_siginfo info;
    while (read(sfd, &info, sizeof(info)) ==
           static_cast<ssize_t>(sizeof(info))) {
      if (info.ssi_signo == SIGCHLD) continue;  // reaped below
      // To the whole group: the child's group is not the terminal's
      // foreground one unless it took it, so nothing arrives twice.
      end.Forward(static_cast<int>(info.ssi_signo));
    }
    end.Reap();
    end.Tick();
  }
  if (scrape) {
    // What the trainer wrote before exiting is still in the pipes; a
    // grandchild holding them open must not keep us waiting.
    for (Stream& s : streams) {
      if (s.read_fd >= 0) {
        pump(s);
        if (s.read_fd >= 0) {
          scraper->Flush(s);
          close(s.read_fd);
        }
      }
    }
  }
  close(sfd);
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  if (!result.error.empty()) {
    result.exit_code = 1;
    return result;
  }
  result.exit_code = ExitCodeOf(end.child_status());
  return result;
}

}  // namespace

std::string LaunchErrorMessage(const std::string& program, int err) {
  if (program.find('/') == std::string::npos && err == ENOENT) {
    const char* path = std::getenv("PATH");
    return "cannot run '" + program + "': not found in PATH (" +
           (path ? path : "") + "): " + std::strerror(err);
  }
  return "cannot run '" + program + "': " + std::strerror(err);
}

int LaunchErrorExitCode(int err) {
  return (err == ENOENT || err == ENOTDIR) ? kExitNotFound : kExitNotExecutable;
}

RunResult RunProgram(const std::vector<std::string>& argv,
                     const RunOptions& options) {
  if (argv.empty()) return {2, "no program to run", {}, 0};
  std::unique_ptr<RE2> re;
  if (!options.metric_regex.empty()) {
    RE2::Options re_options;
    re_options.set_log_errors(false);
    re = std::make_unique<RE2>(options.metric_regex, re_options);
    if (!re->ok()) {
      return {2,
              "--metric-regex '" + options.metric_regex + "': " + re->error(),
              {},
              0};
    }
    if (re->NumberOfCapturingGroups() < 1) {
      return {2,
              "--metric-regex '" + options.metric_regex +
                  "': needs a capture group around the value, e.g. "
                  "'val_loss=([0-9.eE+-]+)'",
              {},
              0};
    }
  }
  if (re != nullptr || options.force_supervise || getpid() == 1) {
    return Supervise(argv, options, re.get());
  }
  std::vector<char*> cargv = CArgv(argv);
  ResetSignalsForProgram();
  execvp(cargv[0], cargv.data());
  int err = errno;
  return {LaunchErrorExitCode(err), LaunchErrorMessage(argv[0], err), {}, 0};
}

}  // namespace trialshim::shim
