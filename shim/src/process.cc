#include "trialshim/shim/process.h"

#include <fcntl.h>
#include <poll.h>
#include <re2/re2.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include "trialshim/base/subprocess.h"

namespace trialshim::shim {

using hypertune::HypertuneReporter;
namespace {

constexpr int kForwarded[] = {SIGTERM, SIGINT,  SIGHUP,
                              SIGQUIT, SIGUSR1, SIGUSR2};
// A line longer than this is matched in pieces rather than buffered forever.
constexpr size_t kMaxLine = 1 << 20;
constexpr size_t kMaxWarnings = 20;

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
      : re_(re), tag_(tag), reporter_(reporter), result_(result) {
    // By name when the pattern names groups, else by position.
    const std::map<std::string, int>& named = re.NamedCapturingGroups();
    auto group = [&](const char* name, int unnamed) {
      auto it = named.find(name);
      return it != named.end() ? it->second : named.empty() ? unnamed : 0;
    };
    value_group_ = std::max(group("value", 1), 1);
    step_group_ = group("step", re.NumberOfCapturingGroups() >= 2 ? 2 : 0);
  }

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

  // Why the run reported nothing although it tried; empty when some report
  // got through or none was attempted.
  std::string AllFailed() const {
    if (failed_ == 0 || result_->metrics_reported > 0) return "";
    return "no metric could be written to " + reporter_->path() + " (" +
           std::to_string(failed_) + (failed_ == 1 ? " attempt" : " attempts") +
           " failed), so the trial has no measurement: " + first_failure_;
  }

 private:
  void Warn(std::string w) {
    if (result_->warnings.size() < kMaxWarnings)
      result_->warnings.push_back(std::move(w));
  }

  void Match(std::string_view line) {
    if (line.empty()) return;
    const int n = re_.NumberOfCapturingGroups();
    std::vector<std::string> groups(n);
    std::vector<RE2::Arg> args(n);
    std::vector<const RE2::Arg*> arg_ptrs(n);
    for (int i = 0; i < n; ++i) {
      args[i] = &groups[i];
      arg_ptrs[i] = &args[i];
    }
    if (!RE2::PartialMatchN(line, re_, arg_ptrs.data(), n)) return;
    const std::string& value = groups[value_group_ - 1];
    const std::string step = step_group_ ? groups[step_group_ - 1] : "";
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
    Status st;
    if (step.empty()) {
      // Without a step group the matches are numbered 1, 2, ..., so early
      // stopping and LAST_MEASUREMENT see a curve.
      st = reporter_->Report(tag_, v, step_group_ ? 0 : ++numbered_);
    } else {
      // As cloudml-hypertune writes a step given as text: str(int(text)).
      st = reporter_->ReportStepText(tag_, v, step);
      if (st.code() == StatusCode::kInvalidArgument) {
        Warn("metric regex step '" + step + "': " + st.message() +
             "; reported at step 0");
        st = reporter_->Report(tag_, v, 0);
      }
    }
    if (!st.ok()) {
      if (failed_++ == 0) first_failure_ = st.message();
      Warn("could not report metric: " + st.message());
      return;
    }
    ++result_->metrics_reported;
  }

  const RE2& re_;
  const std::string& tag_;
  HypertuneReporter* reporter_;
  RunResult* result_;
  int failed_ = 0;  // reports that could not be written
  std::string first_failure_;
  int value_group_ = 1;  // 1-based
  int step_group_ = 0;   // 0: none, the matches are numbered
  int64_t numbered_ = 0;
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

  GroupEnd(Subprocess* leader, std::chrono::milliseconds kill_after)
      : leader_(leader), kill_after_(kill_after) {}

  bool done() const { return done_; }

  void Forward(int sig) {
    KillGroup(sig);
    bool terminating = sig != SIGUSR1 && sig != SIGUSR2;
    if (terminating) {
      terminating_ = true;
      if (kill_after_.count() > 0) Arm(kill_after_);
    }
  }

  // Reaps every child of ours that has ended (as PID 1: the program and
  // every orphan of the container), and learns whether the program (else
  // its supervisor's child) has ended.
  void Reap() {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      if (pid == leader_->pid()) leader_->SetReaped(status);
    }
    leader_->Poll();
  }

  // Decides what the group's state asks for now.
  void Tick() {
    if (!leader_->running()) {
      if (kill(-leader_->pid(), 0) != 0 && errno == ESRCH) {
        done_ = true;
        return;
      }
      if (!terminating_) {  // left-overs of a normal exit
        terminating_ = true;
        KillGroup(SIGTERM);
        Arm(kill_after_.count() > 0 ? kill_after_ : kStragglerGrace);
      }
    }
    if (Clock::now() >= kill_at_) {
      KillGroup(SIGKILL);
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
    if (!leader_->running()) ms = ms < 0 ? 100 : std::min<int64_t>(ms, 100);
    return static_cast<int>(ms);
  }

 private:
  using Clock = std::chrono::steady_clock;

  void KillGroup(int sig) { leader_->Kill(sig, /*group=*/true).IgnoreError(); }

  void Arm(std::chrono::milliseconds after) {
    kill_at_ = std::min(kill_at_, Clock::now() + after);
  }

  Subprocess* leader_;
  std::chrono::milliseconds kill_after_;
  bool terminating_ = false;
  bool done_ = false;
  Clock::time_point kill_at_ = Clock::time_point::max();
};

// Blocks the forwarded signals and SIGCHLD for one supervision and reads
// them from a signalfd: blocked signals are queued, even for PID 1, which
// the kernel would otherwise spare from signals it has no handler for.
class SignalFd {
 public:
  SignalFd() {
    sigemptyset(&handled_);
    for (int sig : kForwarded) sigaddset(&handled_, sig);
    sigaddset(&handled_, SIGCHLD);
  }
  ~SignalFd() {
    if (fd_ >= 0) close(fd_);
    if (blocked_) sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  SignalFd(const SignalFd&) = delete;
  SignalFd& operator=(const SignalFd&) = delete;

  Status Open() {
    sigprocmask(SIG_BLOCK, &handled_, &old_mask_);
    blocked_ = true;
    fd_ = signalfd(-1, &handled_, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd_ < 0)
      return Status::IOError(std::string("signalfd: ") + std::strerror(errno));
    return Status::Ok();
  }
  int fd() const { return fd_; }

 private:
  sigset_t handled_;
  sigset_t old_mask_;
  bool blocked_ = false;
  int fd_ = -1;
};

// Init and scrape mode: the program as a child in its own process group,
// signals forwarded to that group, output optionally scraped.
class Supervisor {
 public:
  Supervisor(const RunOptions& options, const RE2* re)
      : options_(options), re_(re) {}

  RunResult Run(const std::vector<std::string>& argv);

 private:
  Status StartProgram(const std::vector<std::string>& argv);
  void StartScraping();
  bool Pump(Stream& s);
  Status Loop(int signal_fd, GroupEnd* end);
  void DrainStreams();

  const RunOptions& options_;
  const RE2* re_;  // null: no scraping
  RunResult result_;
  Subprocess child_;
  std::unique_ptr<HypertuneReporter> own_reporter_;
  std::unique_ptr<Scraper> scraper_;
  Stream streams_[2];
  char buf_[64 * 1024];
};

RunResult Supervisor::Run(const std::vector<std::string>& argv) {
  SignalFd signals;
  Status st = signals.Open();
  if (!st.ok()) return {1, st.message(), {}, 0};
  signal(SIGPIPE, SIG_IGN);  // a closed stdout must not kill the supervisor
  // The program's orphans go to its supervisor (contain) or, as PID 1, to
  // us, so the group's end is seen even when a shell in front of the
  // trainer dies first.
  st = StartProgram(argv);
  if (!st.ok()) {
    return {child_.start_failure_exit_code(), st.message(), {}, 0};
  }
  if (re_ != nullptr) StartScraping();
  GroupEnd end(&child_, options_.kill_after);
  st = Loop(signals.fd(), &end);
  if (re_ != nullptr) DrainStreams();
  if (!st.ok()) {
    result_.error = st.message();
    result_.exit_code = 1;
    return result_;
  }
  result_.exit_code = child_.exit_code();
  // A trainer that succeeded but whose every metric was lost is a failed
  // trial to Vertex; exiting 0 would hide why. Its own failure code wins.
  if (result_.exit_code == 0 && scraper_ != nullptr) {
    result_.error = scraper_->AllFailed();
    if (!result_.error.empty()) result_.exit_code = 1;
  }
  return result_;
}

Status Supervisor::StartProgram(const std::vector<std::string>& argv) {
  SubprocessOptions o;
  // Its own process group, so a forwarded signal reaches the trainer behind
  // a shell (`bash -c "python train.py; gsutil cp ..."`), as with `tini -g`.
  // On a terminal the group takes the foreground, so ^C and reads from the
  // terminal still reach it.
  o.new_process_group = true;
  o.take_terminal = true;
  // If trialshim itself is killed, nothing of the trainer may run on
  // unseen: its whole tree (contain: what left its group too) gets SIGTERM,
  // not SIGKILL, so the trainer can write its checkpoint, then SIGKILL
  // after --kill-after (10 s without it). As PID 1 the PID namespace does
  // that: the kernel kills every process in it when PID 1 ends, and every
  // orphan is ours.
  o.contain = getpid() != 1;
  o.parent_death_signal = SIGTERM;
  o.parent_death_grace = options_.kill_after.count() > 0
                             ? options_.kill_after
                             : GroupEnd::kStragglerGrace;
  if (re_ != nullptr) {
    o.out = Stdio::Pipe();
    o.err = Stdio::Pipe();
    // Python block-buffers a pipe; lines must arrive as they are printed.
    if (std::getenv("PYTHONUNBUFFERED") == nullptr)
      o.env = EnvironmentWith({"PYTHONUNBUFFERED=1"});
  }
  return child_.Start(argv, o);
}

void Supervisor::StartScraping() {
  HypertuneReporter* reporter = options_.reporter;
  if (reporter == nullptr) {
    own_reporter_ = std::make_unique<HypertuneReporter>(
        HypertuneReporter::FromEnvironment());
    reporter = own_reporter_.get();
  }
  streams_[0].read_fd = child_.TakeStdout();
  streams_[0].write_to = STDOUT_FILENO;
  streams_[1].read_fd = child_.TakeStderr();
  streams_[1].write_to = STDERR_FILENO;
  scraper_ =
      std::make_unique<Scraper>(*re_, options_.metric_tag, reporter, &result_);
  for (Stream& s : streams_) fcntl(s.read_fd, F_SETFL, O_NONBLOCK);
}

// Reads what is available now; returns false at EOF or on error.
bool Supervisor::Pump(Stream& s) {
  for (;;) {
    ssize_t n = read(s.read_fd, buf_, sizeof(buf_));
    if (n > 0) {
      WriteFully(s.write_to, buf_, static_cast<size_t>(n), &s.broken);
      scraper_->Feed(s, buf_, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    scraper_->Flush(s);
    close(s.read_fd);
    s.read_fd = -1;
    return false;
  }
}

Status Supervisor::Loop(int signal_fd, GroupEnd* end) {
  while (!end->done()) {
    struct pollfd fds[4];
    nfds_t nfds = 0;
    fds[nfds++] = {signal_fd, POLLIN, 0};
    // The program is its supervisor's child: its end comes through this.
    fds[nfds++] = {child_.running() ? child_.event_fd() : -1, POLLIN, 0};
    int stream_index[4] = {-1, -1, -1, -1};
    for (int i = 0; re_ != nullptr && i < 2; ++i) {
      if (streams_[i].read_fd >= 0) {
        stream_index[nfds] = i;
        fds[nfds++] = {streams_[i].read_fd, POLLIN, 0};
      }
    }
    if (poll(fds, nfds, end->PollTimeoutMs()) < 0) {
      if (errno == EINTR) continue;
      Status st = Status::IOError(std::string("poll: ") + std::strerror(errno));
      child_.Kill(SIGKILL, /*group=*/true).IgnoreError();
      return st;
    }
    for (nfds_t i = 2; i < nfds; ++i) {
      if (fds[i].revents != 0) Pump(streams_[stream_index[i]]);
    }
    struct signalfd_siginfo info;
    while (read(signal_fd, &info, sizeof(info)) ==
           static_cast<ssize_t>(sizeof(info))) {
      if (info.ssi_signo == SIGCHLD) continue;  // reaped below
      // To the whole group: the child's group is not the terminal's
      // foreground one unless it took it, so nothing arrives twice.
      end->Forward(static_cast<int>(info.ssi_signo));
    }
    end->Reap();
    end->Tick();
  }
  return Status::Ok();
}

// What the trainer wrote before exiting is still in the pipes; a grandchild
// holding them open must not keep us waiting.
void Supervisor::DrainStreams() {
  for (Stream& s : streams_) {
    if (s.read_fd < 0) continue;
    Pump(s);
    if (s.read_fd >= 0) {
      scraper_->Flush(s);
      close(s.read_fd);
      s.read_fd = -1;
    }
  }
}

}  // namespace

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
  // --kill-after can act only on a program we supervise.
  if (re != nullptr || options.force_supervise ||
      options.kill_after.count() > 0 || getpid() == 1) {
    return Supervisor(options, re.get()).Run(argv);
  }
  // Exec mode: trialshim becomes the program, with the signal state a
  // Subprocess child would start with.
  std::vector<char*> cargv;
  for (const std::string& a : argv)
    cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  ResetSignalsForExec();
  execvp(cargv[0], cargv.data());
  int err = errno;
  return {ExecErrorExitCode(err), ExecErrorMessage(argv[0], err), {}, 0};
}

}  // namespace trialshim::shim
