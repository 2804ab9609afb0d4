#include "trialshim/base/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "tree_supervisor.h"
#include "trialshim/base/file.h"
#include "trialshim/base/strings.h"

extern char** environ;

namespace trialshim {
namespace {

std::string Errno(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

void CloseIfOpen(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

// The descriptors of one Start: what becomes the child's 0, 1, 2, our ends
// of its pipes, and the pipe exec's errno comes back through. Closes what
// is still open when Start returns.
struct Fds {
  int child[3] = {-1, -1, -1};   // -1 inherits
  int parent[3] = {-1, -1, -1};  // ours, of kPipe streams
  int report[2] = {-1, -1};      // close-on-exec: EOF means exec worked
  ~Fds() {
    CloseChildEnds();
    for (int& fd : parent) CloseIfOpen(&fd);
    CloseIfOpen(&report[0]);
  }
  void CloseChildEnds() {
    for (int& fd : child) CloseIfOpen(&fd);
    CloseIfOpen(&report[1]);
  }
};

// Everything the child needs, prepared before fork: after it, only
// async-signal-safe calls, no allocation.
struct ChildPlan {
  const char* program = nullptr;
  std::vector<char*> argv;
  std::vector<char*> envp;  // empty: inherit
  const char* cwd = nullptr;
  Fds fds;
  bool new_group = false;
  bool take_terminal = false;
  int death_signal = 0;
  pid_t parent = 0;
  const std::vector<int>* keep_ignored = nullptr;
  // contain: what the tree gets when we are gone, and the SIGKILL after.
  int tree_death_signal = 0;
  int64_t tree_death_grace_ms = 0;
  // private_overlay: its paths, and the user namespace's maps ("U U 1")
  // when we are not root.
  const PrivateOverlay* overlay = nullptr;
  bool user_namespace = false;
  std::string uid_map, gid_map;
};

// A private overlay has at most this many `keep` directories: their
// descriptors live on the child's stack.
constexpr size_t kMaxKeep = 8;

// The steps of a private overlay, as the child reports a refused one.
enum OverlayStep : int {
  kUnshare = 1,
  kSetgroups,
  kUidMap,
  kGidMap,
  kMakePrivate,
  kOpenDir,
  kOpenUpper,
  kOpenWork,
  kOpenKeep,  // + which
  kMountOverlay,
  kBindKeep,  // + which
};

// What comes back through the report pipe, one message per write (atomic
// below PIPE_BUF): exec's errno from the child, the child's pid from a
// contained child's supervisor, the step of a private overlay the kernel
// refused (with its errno).
struct Report {
  enum Kind : int { kErrno = 1, kLeader = 2, kOverlay = 3 } kind;
  int value;
  int step = 0;   // kOverlay: an OverlayStep
  int which = 0;  // kOpenKeep, kBindKeep: the index into `keep`
};

void Send(const ChildPlan& plan, Report::Kind kind, int value, int step = 0,
          int which = 0) {
  Report r{kind, value, step, which};
  (void)!write(plan.fds.report[1], &r, sizeof(r));
}

[[noreturn]] void Fail(const ChildPlan& plan) {
  int err = errno;
  Send(plan, Report::kErrno, err);
  _exit(ExecErrorExitCode(err));
}

[[noreturn]] void FailOverlay(const ChildPlan& plan, int step, int which = 0) {
  int err = errno;
  Send(plan, Report::kOverlay, err, step, which);
  _exit(1);
}

// Writes `text` to a /proc file of the user namespace. Async-signal-safe.
bool WriteProcFile(const char* path, const char* text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = static_cast<ssize_t>(std::strlen(text));
  bool ok = write(fd, text, static_cast<size_t>(n)) == n;
  int err = errno;
  close(fd);
  errno = err;
  return ok;
}

// Appends `text`, then "/proc/self/fd/<fd>" when fd >= 0, at *at in a
// buffer that ends at `end` (room checked by the caller's size).
// Async-signal-safe.
void Append(char** at, const char* end, const char* text, int fd = -1) {
  for (; *text != '\0' && *at + 1 < end; ++text) *(*at)++ = *text;
  if (fd < 0) {
    **at = '\0';
    return;
  }
  Append(at, end, "/proc/self/fd/");
  char digits[12];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + fd % 10);
    fd /= 10;
  } while (fd > 0);
  while (n > 0 && *at + 1 < end) *(*at)++ = digits[--n];
  **at = '\0';
}

// The private overlay of the top of subprocess.h, in the child. The layers
// are opened after unshare, so that their mounts are this namespace's (the
// overlay and a bind take only those), and named to the kernel as
// /proc/self/fd/N: no path needs escaping in the mount options (',', ':').
void EnterPrivateOverlay(const ChildPlan& plan) {
  const PrivateOverlay& o = *plan.overlay;
  int flags = CLONE_NEWNS | (plan.user_namespace ? CLONE_NEWUSER : 0);
  if (unshare(flags) != 0) FailOverlay(plan, kUnshare);
  if (plan.user_namespace) {
    // An unprivileged gid_map needs setgroups denied first
    // (user_namespaces(7)).
    if (!WriteProcFile("/proc/self/setgroups", "deny"))
      FailOverlay(plan, kSetgroups);
    if (!WriteProcFile("/proc/self/uid_map", plan.uid_map.c_str()))
      FailOverlay(plan, kUidMap);
    if (!WriteProcFile("/proc/self/gid_map", plan.gid_map.c_str()))
      FailOverlay(plan, kGidMap);
  }
  // Nothing mounted here may reach our namespace (shared propagation is
  // systemd's default for /).
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    FailOverlay(plan, kMakePrivate);
  const int kDir = O_PATH | O_DIRECTORY | O_CLOEXEC;
  int lower = open(o.dir.c_str(), kDir);
  if (lower < 0) FailOverlay(plan, kOpenDir);
  int upper = open(o.upper.c_str(), kDir);
  if (upper < 0) FailOverlay(plan, kOpenUpper);
  int work = open(o.work.c_str(), kDir);
  if (work < 0) FailOverlay(plan, kOpenWork);
  int keep[kMaxKeep];
  for (size_t i = 0; i < o.keep.size(); ++i) {
    keep[i] = open(o.keep[i].c_str(), kDir);
    if (keep[i] < 0) FailOverlay(plan, kOpenKeep, static_cast<int>(i));
  }
  char options[256];
  char* at = options;
  const char* end = options + sizeof options;
  Append(&at, end, "lowerdir=", lower);
  Append(&at, end, ",upperdir=", upper);
  Append(&at, end, ",workdir=", work);
  // In a user namespace the trusted.* xattrs overlayfs keeps its marks in
  // can not be written; user.* can (overlayfs(5), "userxattr").
  if (plan.user_namespace) Append(&at, end, ",userxattr");
  if (mount("overlay", o.dir.c_str(), "overlay", 0, options) != 0)
    FailOverlay(plan, kMountOverlay);
  for (size_t i = 0; i < o.keep.size(); ++i) {
    char source[32];
    char* s = source;
    Append(&s, source + sizeof source, "", keep[i]);
    if (mount(source, o.keep[i].c_str(), nullptr, MS_BIND | MS_REC,
              nullptr) != 0) {
      FailOverlay(plan, kBindKeep, static_cast<int>(i));
    }
    close(keep[i]);
  }
  close(lower);
  close(upper);
  close(work);
}

// In the child, between fork and exec. execvp(e) is async-signal-safe in
// glibc >= 2.24 (PATH is searched in a stack buffer; posix_spawnp uses it
// after vfork), which is what lets us keep the shell's PATH and ENOEXEC
// semantics here.
[[noreturn]] void RunChild(const ChildPlan& plan, pid_t parent) {
  if (plan.new_group) {
    setpgid(0, 0);
    if (plan.take_terminal && isatty(STDIN_FILENO)) {
      signal(SIGTTOU, SIG_IGN);  // tcsetpgrp from a background group
      tcsetpgrp(STDIN_FILENO, getpgrp());
    }
  }
  ResetSignalsForExec(*plan.keep_ignored);
  // Before PR_SET_PDEATHSIG: a change of credentials may clear it.
  if (plan.overlay != nullptr) EnterPrivateOverlay(plan);
  if (plan.death_signal != 0) {
    prctl(PR_SET_PDEATHSIG, plan.death_signal);
    // The parent may have died before prctl: then nobody will send it.
    if (getppid() != parent) {
      raise(plan.death_signal);
      _exit(1);
    }
  }
  for (int target = 0; target < 3; ++target) {
    // Every fd here is above 2 (see MoveAbove2), so none is overwritten
    // before it is used.
    int fd = plan.fds.child[target];
    if (fd >= 0 && dup2(fd, target) < 0) Fail(plan);
  }
  if (plan.cwd != nullptr && chdir(plan.cwd) != 0) Fail(plan);
  if (plan.envp.empty()) {
    execvp(plan.program, plan.argv.data());
  } else {
    execvpe(plan.program, plan.argv.data(), plan.envp.data());
  }
  Fail(plan);
}

// A contained child (SubprocessOptions::contain), in the fork of Start. We
// fork again and exit at once, so the supervisor is adopted by init (or the
// nearest subreaper) and never waits to be reaped by a caller that has
// dropped its Subprocess; the supervisor then forks the child and holds
// its tree (tree_supervisor.h).
[[noreturn]] void RunContained(const ChildPlan& plan, int channel) {
  pid_t supervisor = fork();
  if (supervisor < 0) Fail(plan);
  if (supervisor > 0) _exit(0);
  internal::BecomeTreeSupervisor();
  // What the child's exec would close anyway (our caller's other pipes,
  // its locks) is closed now: the supervisor outlives the exec.
  const int keep[] = {channel, plan.fds.report[1], plan.fds.child[0],
                      plan.fds.child[1], plan.fds.child[2]};
  internal::CloseDescriptorsExcept(keep, 5, /*cloexec_only=*/true);
  pid_t self = getpid();
  pid_t leader = fork();
  if (leader == 0) RunChild(plan, self);
  if (leader < 0) Fail(plan);
  setpgid(leader, leader);  // also in the child: kill(-leader) works now
  Send(plan, Report::kLeader, leader);
  internal::CloseDescriptorsExcept(&channel, 1, /*cloexec_only=*/false);
  internal::SuperviseTree({channel, leader, plan.tree_death_signal,
                           plan.tree_death_grace_ms});
}

// Moves a descriptor above 0..2, so that the child's dup2s onto 0, 1, 2 do
// not overwrite one another's sources (our own stdin may be closed).
int MoveAbove2(int fd) {
  if (fd < 0 || fd > 2) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return moved;
}

// Opens what `io` asks for as descriptor `target` of the child. *child_fd is
// what the child dup2's (-1 inherits); *parent_fd our end of a pipe.
Status OpenStdio(const Stdio& io, int target, int stdout_fd, int* child_fd,
                 int* parent_fd) {
  switch (io.kind) {
    case Stdio::Kind::kInherit:
      return Status::Ok();
    case Stdio::Kind::kNull:
      *child_fd =
          open("/dev/null", (target == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
      if (*child_fd < 0) return Status::IOError(Errno("/dev/null"));
      return Status::Ok();
    case Stdio::Kind::kFile: {
      if (io.own && target != 0) {
        TRIALSHIM_ASSIGN_OR_RETURN(
            ScopedFd fd,
            OpenOwnFile(io.path, O_WRONLY | O_CREAT | (io.append ? O_APPEND : 0)));
        if (!io.append && ftruncate(fd.get(), 0) != 0) {
          return IOErrorFor("truncate", io.path, errno);
        }
        *child_fd = fd.release();
        return Status::Ok();
      }
      int flags = target == 0
                      ? O_RDONLY
                      : O_WRONLY | O_CREAT | (io.append ? O_APPEND : O_TRUNC);
      *child_fd = open(io.path.c_str(), flags | O_CLOEXEC, 0644);
      if (*child_fd < 0) return Status::IOError(Errno(io.path));
      return Status::Ok();
    }
    case Stdio::Kind::kPipe: {
      int p[2];
      if (pipe2(p, O_CLOEXEC) != 0) return Status::IOError(Errno("pipe"));
      *child_fd = target == 0 ? p[0] : p[1];
      *parent_fd = target == 0 ? p[1] : p[0];
      return Status::Ok();
    }
    case Stdio::Kind::kStdout:
      if (target != 2) {
        return Status::InvalidArgument("Stdio::SameAsStdout is for stderr");
      }
      *child_fd =
          fcntl(stdout_fd >= 0 ? stdout_fd : STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
      if (*child_fd < 0) return Status::IOError(Errno("dup"));
      return Status::Ok();
  }
  return Status::Internal("unknown Stdio kind");
}

// Fills everything but the descriptors.
void FillPlan(const std::vector<std::string>& argv,
              const SubprocessOptions& options, const std::string& program,
              ChildPlan* plan) {
  for (const std::string& a : argv)
    plan->argv.push_back(const_cast<char*>(a.c_str()));
  plan->argv.push_back(nullptr);
  plan->program = program.c_str();
  if (options.env) {
    for (const std::string& e : *options.env)
      plan->envp.push_back(const_cast<char*>(e.c_str()));
    plan->envp.push_back(nullptr);
  }
  if (!options.cwd.empty()) plan->cwd = options.cwd.c_str();
  plan->new_group = options.new_process_group;
  plan->take_terminal = options.take_terminal;
  plan->death_signal = options.parent_death_signal;
  if (options.contain) {
    // The child dies with its supervisor; the tree gets the caller's
    // signal when the caller is gone.
    plan->death_signal = SIGKILL;
    plan->tree_death_signal = options.parent_death_signal;
    plan->tree_death_grace_ms = options.parent_death_grace.count();
  }
  plan->parent = getpid();
  plan->keep_ignored = &options.keep_ignored;
  if (options.private_overlay) {
    plan->overlay = &*options.private_overlay;
    // Root needs no user namespace (and one would map only uid 0).
    plan->user_namespace = geteuid() != 0;
    plan->uid_map = std::to_string(geteuid()) + " " +
                    std::to_string(geteuid()) + " 1\n";
    plan->gid_map = std::to_string(getegid()) + " " +
                    std::to_string(getegid()) + " 1\n";
  }
}

Status OpenDescriptors(const SubprocessOptions& options, Fds* fds) {
  const Stdio* ios[3] = {&options.in, &options.out, &options.err};
  for (int i = 0; i < 3; ++i) {
    TRIALSHIM_RETURN_IF_ERROR(
        OpenStdio(*ios[i], i, fds->child[1], &fds->child[i], &fds->parent[i]));
    fds->child[i] = MoveAbove2(fds->child[i]);
  }
  if (pipe2(fds->report, O_CLOEXEC) != 0) return Status::IOError(Errno("pipe"));
  return Status::Ok();
}

// PATH in an environment, or the default search path execvp uses when
// PATH is unset.
std::string PathOf(const std::vector<std::string>& env) {
  for (const std::string& e : env) {
    if (e.rfind("PATH=", 0) == 0) return e.substr(5);
  }
  return "/bin:/usr/bin";
}

// Reads the report pipe to its end (the child's exec, or its exit): exec's
// errno (0 when it worked) and a contained child's pid (-1 when none came).
// A refused overlay step comes back as *overlay (kind kOverlay).
void ReadReports(int fd, int* exec_errno, pid_t* leader, Report* overlay) {
  *exec_errno = 0;
  *leader = -1;
  for (;;) {
    Report r{};
    ssize_t got = read(fd, &r, sizeof(r));
    if (got < 0 && errno == EINTR) continue;
    if (got != static_cast<ssize_t>(sizeof(r))) return;
    if (r.kind == Report::kErrno) *exec_errno = r.value;
    if (r.kind == Report::kLeader) *leader = r.value;
    if (r.kind == Report::kOverlay) *overlay = r;
  }
}

// What a refused step of a private overlay did, with its paths.
std::string OverlayStepText(const PrivateOverlay& o, bool user_namespace,
                            const Report& r) {
  auto keep = [&]() -> std::string {
    return r.which >= 0 && static_cast<size_t>(r.which) < o.keep.size()
               ? o.keep[static_cast<size_t>(r.which)]
               : "?";
  };
  switch (r.step) {
    case kUnshare:
      return user_namespace ? "unshare(CLONE_NEWUSER|CLONE_NEWNS)"
                            : "unshare(CLONE_NEWNS)";
    case kSetgroups:
      return "write 'deny' to /proc/self/setgroups";
    case kUidMap:
      return "write /proc/self/uid_map";
    case kGidMap:
      return "write /proc/self/gid_map";
    case kMakePrivate:
      return "make the mounts private (mount --make-rprivate /)";
    case kOpenDir:
      return "open " + o.dir;
    case kOpenUpper:
      return "open " + o.upper;
    case kOpenWork:
      return "open " + o.work;
    case kOpenKeep:
      return "open " + keep();
    case kMountOverlay:
      return "mount overlay on " + o.dir + " (lowerdir=" + o.dir +
             ", upperdir=" + o.upper + ", workdir=" + o.work +
             (user_namespace ? ", userxattr" : "") + ")";
    case kBindKeep:
      return "bind " + keep() + " back over the overlay";
  }
  return "step " + std::to_string(r.step);
}

// Paths the child can use as they are: absolute, and few enough keeps.
Status CheckOverlay(const PrivateOverlay& o) {
  std::vector<const std::string*> paths = {&o.dir, &o.upper, &o.work};
  for (const std::string& k : o.keep) paths.push_back(&k);
  for (const std::string* p : paths) {
    if (p->empty() || (*p)[0] != '/') {
      return Status::InvalidArgument("private overlay: path '" + *p +
                                     "' is not absolute");
    }
  }
  if (o.keep.size() > kMaxKeep) {
    return Status::InvalidArgument("private overlay: more than " +
                                   std::to_string(kMaxKeep) +
                                   " directories to keep");
  }
  return Status::Ok();
}

// How a contained child ended when its supervisor died without saying:
// the child got SIGKILL with it (its parent-death signal).
constexpr int kKilledWithItsSupervisor = SIGKILL;

}  // namespace

Subprocess::~Subprocess() { Reset(); }

Subprocess::Subprocess(Subprocess&& other) noexcept {
  *this = std::move(other);
}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this == &other) return *this;
  Reset();
  pid_ = other.pid_;
  own_group_ = other.own_group_;
  reaped_ = other.reaped_;
  wait_status_ = other.wait_status_;
  start_failure_exit_code_ = other.start_failure_exit_code_;
  private_overlay_failed_ = other.private_overlay_failed_;
  in_fd_ = Take(&other.in_fd_);
  out_fd_ = Take(&other.out_fd_);
  err_fd_ = Take(&other.err_fd_);
  channel_fd_ = Take(&other.channel_fd_);
  other.pid_ = -1;
  return *this;
}

void Subprocess::Reset() {
  CloseIfOpen(&in_fd_);
  CloseIfOpen(&out_fd_);
  CloseIfOpen(&err_fd_);
  CloseIfOpen(&channel_fd_);  // a contained child's tree ends with it
}

Status Subprocess::Start(const std::vector<std::string>& argv,
                         const SubprocessOptions& options) {
  start_failure_exit_code_ = 1;
  if (argv.empty()) return Status::InvalidArgument("no program to run");
  std::string program = options.program.empty() ? argv[0] : options.program;
  // execvpe searches our PATH; the child's is the one that counts.
  if (options.env && program.find('/') == std::string::npos) {
    std::string path_var = PathOf(*options.env);
    std::string found = FindProgram(program, path_var, options.cwd);
    if (found.empty()) {
      start_failure_exit_code_ = kExitNotFound;
      return Status::NotFound("cannot run '" + program +
                              "': not found in PATH (" + path_var + ")");
    }
    program = found;
  }
  // E2BIG named before it happens: which argument, and the limit.
  start_failure_exit_code_ = kExitNotExecutable;
  TRIALSHIM_RETURN_IF_ERROR(
      CheckExecLimits(argv, options.env ? *options.env : EnvironmentWith({}),
                      program, ExecArgSpace())
          .WithPrefix("cannot run '" + program + "'"));
  start_failure_exit_code_ = 1;
  private_overlay_failed_ = false;
  if (options.private_overlay) {
    TRIALSHIM_RETURN_IF_ERROR(CheckOverlay(*options.private_overlay));
  }
  if (options.contain && !options.new_process_group) {
    return Status::InvalidArgument(
        "a contained child needs a process group of its own");
  }
  ChildPlan plan;
  FillPlan(argv, options, program, &plan);
  TRIALSHIM_RETURN_IF_ERROR(OpenDescriptors(options, &plan.fds));
  int channel[2] = {-1, -1};
  if (options.contain &&
      socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, channel) != 0) {
    return Status::IOError(Errno("socketpair"));
  }
  pid_t pid = fork();
  if (pid == 0) {
    if (options.contain) RunContained(plan, channel[1]);
    RunChild(plan, plan.parent);
  }
  if (pid < 0) {
    CloseIfOpen(&channel[0]);
    CloseIfOpen(&channel[1]);
    return Status::IOError(Errno("fork"));
  }
  plan.fds.CloseChildEnds();
  CloseIfOpen(&channel[1]);
  // Also here, so kill(-pid) works as soon as we return; EACCES once the
  // child has exec'd is fine (it did it itself).
  if (options.new_process_group && !options.contain) setpgid(pid, pid);
  int exec_errno = 0;
  pid_t leader = -1;
  Report overlay{};
  ReadReports(plan.fds.report[0], &exec_errno, &leader, &overlay);
  // The fork that exited at once to start the supervisor, or a child whose
  // exec failed.
  if (options.contain || exec_errno != 0 || overlay.step != 0) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (exec_errno == 0 && options.contain && leader <= 0) {
    exec_errno = EAGAIN;  // the supervisor could not be started
  }
  if (overlay.step != 0) {
    // The contained child's supervisor has seen it exit and ends itself.
    CloseIfOpen(&channel[0]);
    private_overlay_failed_ = true;
    return Status::IOError(
        "cannot give '" + program + "' a private overlay of " +
        options.private_overlay->dir + ": " +
        OverlayStepText(*options.private_overlay, plan.user_namespace,
                        overlay) +
        ": " + std::strerror(overlay.value));
  }
  if (exec_errno != 0) {
    CloseIfOpen(&channel[0]);
    start_failure_exit_code_ = ExecErrorExitCode(exec_errno);
    std::string message = ExecErrorMessage(program, exec_errno);
    if (exec_errno == ENOENT || exec_errno == ENOTDIR)
      return Status::NotFound(message);
    return Status::IOError(message);
  }
  // A new Start on a used object forgets the old child (the caller's).
  Reset();
  pid_ = options.contain ? leader : pid;
  own_group_ = options.new_process_group;
  channel_fd_ = channel[0];
  reaped_ = false;
  wait_status_ = 0;
  start_failure_exit_code_ = 0;
  in_fd_ = Take(&plan.fds.parent[0]);
  out_fd_ = Take(&plan.fds.parent[1]);
  err_fd_ = Take(&plan.fds.parent[2]);
  return Status::Ok();
}

// A contained child's news from its supervisor: its wait status, or the end
// of the channel (the supervisor is gone: the tree ended, or it was killed).
void Subprocess::ReadChannel(bool block) {
  int status = 0;
  ssize_t got;
  do {
    got = recv(channel_fd_, &status, sizeof status,
               block ? MSG_WAITALL : MSG_DONTWAIT);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof status)) {
    SetReaped(status);
  } else if (got == 0 && !reaped_) {
    SetReaped(kKilledWithItsSupervisor);
  }
}

Status Subprocess::Wait() {
  if (pid_ <= 0) return Status::Internal("Wait on a Subprocess never started");
  while (!reaped_ && channel_fd_ >= 0) ReadChannel(/*block=*/true);
  while (!reaped_) {
    int status = 0;
    pid_t got = waitpid(pid_, &status, 0);
    if (got == pid_) {
      SetReaped(status);
    } else if (got < 0 && errno != EINTR) {
      return Status::IOError(Errno("waitpid " + std::to_string(pid_)));
    }
  }
  return Status::Ok();
}

bool Subprocess::Poll() {
  if (pid_ <= 0) return false;
  if (reaped_) return true;
  if (channel_fd_ >= 0) {
    ReadChannel(/*block=*/false);
    return reaped_;
  }
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) SetReaped(status);
  return reaped_;
}

void Subprocess::SetReaped(int wait_status) {
  reaped_ = true;
  wait_status_ = wait_status;
}

Status Subprocess::Kill(int sig, bool group) const {
  if (pid_ <= 0) return Status::Internal("Kill on a Subprocess never started");
  if (group && !own_group_) {
    return Status::InvalidArgument("Kill: the child has no group of its own");
  }
  if (!group && reaped_) return Status::Ok();  // the pid may be reused
  // After the reap, the group's id is no longer ours to use (see the
  // header); the supervisor signals what is left of it by pid.
  bool ours = !reaped_ || (channel_fd_ < 0 && getpid() == 1);
  if (ours && kill(group ? -pid_ : pid_, sig) != 0 && errno != ESRCH) {
    return Status::IOError(Errno("kill " + std::to_string(pid_)));
  }
  if (group && channel_fd_ >= 0) {
    // The rest of the tree, through the supervisor. Gone: nothing is left.
    unsigned char request = static_cast<unsigned char>(sig);
    if (!ours) request |= internal::kTreeRequestWithGroup;
    send(channel_fd_, &request, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  return Status::Ok();
}

int Subprocess::exit_code() const { return ExitCodeOfWaitStatus(wait_status_); }

int Subprocess::term_signal() const {
  return WIFSIGNALED(wait_status_) ? WTERMSIG(wait_status_) : 0;
}

// Default disposition for every signal (but those kept ignored), then an
// empty mask: a trainer must die of SIGTERM/SIGPIPE/SIGINT even when the
// process that started it ignores or blocks them. No allocation.
void ResetSignalsForExec(const std::vector<int>& keep_ignored) {
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    if (std::find(keep_ignored.begin(), keep_ignored.end(), sig) !=
        keep_ignored.end()) {
      struct sigaction old;
      if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN)
        continue;
    }
    sigaction(sig, &dfl, nullptr);  // EINVAL for libc's reserved ones: fine
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

StatusOr<CapturedRun> RunCaptured(const std::vector<std::string>& argv,
                                  SubprocessOptions options,
                                  std::chrono::milliseconds timeout,
                                  size_t max_output) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + timeout;
  options.out = Stdio::Pipe();
  options.new_process_group = true;
  options.contain = true;
  Subprocess child;
  TRIALSHIM_RETURN_IF_ERROR(child.Start(argv, options));
  int out = child.TakeStdout();
  CapturedRun run;
  bool timed_out = false;
  for (;;) {
    // Once the child has ended, what is already in the pipe is read and
    // nothing more waited for: a grandchild may hold it open for ever.
    bool ended = child.Poll();
    if (out < 0 && ended) break;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[2] = {{out, POLLIN, 0},
                     {ended ? -1 : child.event_fd(), POLLIN, 0}};
    int wait_ms =
        ended ? 0 : static_cast<int>(std::min<int64_t>(left.count() + 1, 1 << 30));
    if (poll(fds, 2, wait_ms) < 0) {
      if (errno == EINTR) continue;
      Status st = Status::IOError(Errno("poll"));
      CloseIfOpen(&out);
      child.Kill(SIGKILL, /*group=*/true).IgnoreError();
      child.Wait().IgnoreError();
      return st;
    }
    if (out >= 0 && fds[0].revents != 0) {
      char buf[65536];
      ssize_t got = read(out, buf, sizeof buf);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) {
        CloseIfOpen(&out);
        continue;
      }
      size_t room = max_output - std::min(max_output, run.out.size());
      size_t keep = std::min(static_cast<size_t>(got), room);
      run.out.append(buf, keep);
      if (keep < static_cast<size_t>(got)) run.cut = true;
    } else if (ended) {
      CloseIfOpen(&out);  // drained
    }
  }
  CloseIfOpen(&out);
  if (timed_out) {
    child.Kill(SIGKILL, /*group=*/true).IgnoreError();
    child.Wait().IgnoreError();
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g",
                  std::chrono::duration<double>(timeout).count());
    return Status::IOError("'" + argv[0] + "' did not finish within " +
                           seconds + " s; it was killed");
  }
  run.wait_status = child.wait_status();
  run.exit_code = child.exit_code();
  return run;
}

int ExitCodeOfWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

int ExecErrorExitCode(int err) {
  return (err == ENOENT || err == ENOTDIR) ? kExitNotFound : kExitNotExecutable;
}

std::string FindProgram(const std::string& name, const std::string& path_var,
                        const std::string& cwd) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return name;
  size_t begin = 0;
  while (true) {
    size_t end = path_var.find(':', begin);
    std::string dir = path_var.substr(begin, end - begin);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    std::string at = candidate[0] == '/' || cwd.empty()
                         ? candidate
                         : cwd + "/" + candidate;
    struct stat st;
    if (stat(at.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        access(at.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (end == std::string::npos) return "";
    begin = end + 1;
  }
}

std::string ExecErrorMessage(const std::string& program, int err) {
  if (program.find('/') == std::string::npos && err == ENOENT) {
    const char* path = std::getenv("PATH");
    return "cannot run '" + Abbreviated(program) + "': not found in PATH (" +
           (path ? path : "") + "): " + std::strerror(err);
  }
  return "cannot run '" + Abbreviated(program) + "': " + std::strerror(err);
}

size_t ExecArgSpace(uint64_t stack_limit) {
  constexpr uint64_t kMost = 6 << 20;     // _STK_LIM / 4 * 3
  constexpr uint64_t kLeast = 128 << 10;  // the kernel's ARG_MAX, 32 pages
  return static_cast<size_t>(
      std::max(std::min(kMost, stack_limit / 4), kLeast));
}

size_t ExecArgSpace() {
  struct rlimit stack;
  if (getrlimit(RLIMIT_STACK, &stack) != 0) return ExecArgSpace(8 << 20);
  return ExecArgSpace(stack.rlim_cur);  // RLIM_INFINITY is the largest
}

size_t ExecArgCost(const std::vector<std::string>& argv,
                   const std::vector<std::string>& env,
                   const std::string& path) {
  size_t cost = path.size() + 1;
  for (const auto* list : {&argv, &env}) {
    for (const std::string& s : *list) cost += s.size() + 1;
  }
  return cost + (std::max<size_t>(argv.size(), 1) + env.size()) * sizeof(void*);
}

Status CheckExecLimits(const std::vector<std::string>& argv,
                       const std::vector<std::string>& env,
                       const std::string& path, size_t space) {
  const std::string most = std::to_string(kMaxArgStrlen - 1);
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i].size() >= kMaxArgStrlen) {
      return Status::InvalidArgument(
          "argument " + std::to_string(i) + " is " +
          std::to_string(argv[i].size()) + " bytes; the kernel takes at most " +
          most + " in one argument (MAX_ARG_STRLEN)");
    }
  }
  for (const std::string& e : env) {
    if (e.size() >= kMaxArgStrlen) {
      return Status::InvalidArgument(
          "environment variable " + e.substr(0, std::min<size_t>(e.find('='), 100)) +
          " is " + std::to_string(e.size()) +
          " bytes with its name; the kernel takes at most " + most +
          " in one (MAX_ARG_STRLEN)");
    }
  }
  size_t cost = ExecArgCost(argv, env, path);
  if (cost > space) {
    return Status::InvalidArgument(
        "the arguments and environment take " + std::to_string(cost) +
        " bytes (each with its NUL and an 8-byte pointer), more than the " +
        std::to_string(space) +
        " the kernel accepts (a quarter of the stack limit, ulimit -s)");
  }
  return Status::Ok();
}

std::vector<std::string> EnvironmentWith(const std::vector<std::string>& set) {
  std::set<std::string> replaced;
  for (const std::string& e : set) replaced.insert(e.substr(0, e.find('=')));
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    if (replaced.count(entry.substr(0, entry.find('='))) == 0)
      out.push_back(std::move(entry));
  }
  out.insert(out.end(), set.begin(), set.end());
  return out;
}

}  // namespace trialshim
