// The supervisor of a contained Subprocess; see tree_supervisor.h. Only
// async-signal-safe calls: it runs in a fork of a process that may have
// had other threads.
#include "tree_supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace trialshim::internal {
namespace {

// What someone may send the supervisor itself (it is alone in its process
// group, so only by its pid): passed on to the whole tree.
constexpr int kPassedOn[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

// One process of the system: its pid, its parent, and whether it is in
// our tree. The table is mapped once, at BecomeTreeSupervisor.
struct Proc {
  pid_t pid;
  pid_t ppid;
  bool ours;
};
constexpr int kMaxProcs = 1 << 16;
Proc* g_procs = nullptr;

struct Dirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

// Calls fn(name) for each entry of the directory open at `fd`.
template <typename Fn>
void ForEachEntry(int fd, Fn fn) {
  alignas(8) char buf[4096];
  for (;;) {
    long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n <= 0) return;
    for (long at = 0; at < n;) {
      const Dirent64* e = reinterpret_cast<const Dirent64*>(buf + at);
      fn(e->d_name);
      at += e->d_reclen;
    }
  }
}

// A non-negative decimal number, or -1.
long Number(const char* s) {
  if (*s == '\0') return -1;
  long v = 0;
  for (; *s != '\0'; ++s) {
    if (*s < '0' || *s > '9' || v > 100000000) return -1;
    v = v * 10 + (*s - '0');
  }
  return v;
}

// "<prefix><n><suffix>" into `out` (at least 64 bytes).
void Path(char* out, const char* prefix, long n, const char* suffix) {
  char digits[24];
  int k = 0;
  do {
    digits[k++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n > 0);
  while (*prefix != '\0') *out++ = *prefix++;
  while (k > 0) *out++ = digits[--k];
  while (*suffix != '\0') *out++ = *suffix++;
  *out = '\0';
}

// The parent of `pid` from /proc/<pid>/stat ("pid (comm) S ppid ..."), or
// -1 when it is gone.
pid_t ParentOf(long pid) {
  char path[64];
  Path(path, "/proc/", pid, "/stat");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[512];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  const char* close_paren = nullptr;  // comm may hold ')' itself
  for (const char* p = buf; *p != '\0'; ++p) {
    if (*p == ')') close_paren = p;
  }
  if (close_paren == nullptr || close_paren[1] == '\0' ||
      close_paren[2] == '\0' || close_paren[3] != ' ') {
    return -1;
  }
  long ppid = 0;
  for (const char* p = close_paren + 4; *p >= '0' && *p <= '9'; ++p) {
    ppid = ppid * 10 + (*p - '0');
  }
  return static_cast<pid_t>(ppid);
}

// Marks our descendants in g_procs (n entries): the children of this
// process, then theirs, until nothing changes. Orphans of the tree are
// adopted by us (a subreaper), so every living descendant is reached.
int ReadTree() {
  int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return 0;
  int n = 0;
  ForEachEntry(dir, [&](const char* name) {
    long pid = Number(name);
    if (pid <= 0 || n >= kMaxProcs) return;
    pid_t ppid = ParentOf(pid);
    if (ppid >= 0) g_procs[n++] = {static_cast<pid_t>(pid), ppid, false};
  });
  close(dir);
  const pid_t self = getpid();
  for (bool grew = true; grew;) {
    grew = false;
    for (int i = 0; i < n; ++i) {
      if (g_procs[i].ours) continue;
      bool ours = g_procs[i].ppid == self;
      for (int j = 0; j < n && !ours; ++j) {
        ours = g_procs[j].ours && g_procs[j].pid == g_procs[i].ppid;
      }
      if (ours) g_procs[i].ours = grew = true;
    }
  }
  return n;
}

// Sends `sig` to every process of the tree but those in process group
// `skip_group` (0: none), which the parent has signalled itself.
void SignalTree(int sig, pid_t skip_group, pid_t leader) {
  if (g_procs == nullptr) {  // no table: the child's group at least
    kill(-leader, sig);
    return;
  }
  int n = ReadTree();
  for (int i = 0; i < n; ++i) {
    if (!g_procs[i].ours) continue;
    if (skip_group > 0 && getpgid(g_procs[i].pid) == skip_group) continue;
    kill(g_procs[i].pid, sig);
  }
}

int64_t NowMs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace

void BecomeTreeSupervisor() {
  setpgid(0, 0);  // away from the parent's job control and the child's group
  prctl(PR_SET_NAME, "trialshim-tree");
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  void* table = mmap(nullptr, kMaxProcs * sizeof(Proc), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  g_procs = table == MAP_FAILED ? nullptr : static_cast<Proc*>(table);
}

void CloseDescriptorsExcept(const int* keep, int n, bool cloexec_only) {
  auto maybe_close = [&](int fd, int dir) {
    if (fd == dir) return;
    for (int i = 0; i < n; ++i) {
      if (keep[i] == fd) return;
    }
    if (cloexec_only && (fcntl(fd, F_GETFD) & FD_CLOEXEC) == 0) return;
    close(fd);
  };
  int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ForEachEntry(dir, [&](const char* name) {
      long fd = Number(name);
      if (fd >= 0) maybe_close(static_cast<int>(fd), dir);
    });
    close(dir);
    return;
  }
  struct rlimit files;  // no /proc: every possible descriptor
  long most = getrlimit(RLIMIT_NOFILE, &files) == 0 ? files.rlim_cur : 1024;
  for (long fd = 0; fd < most && fd < (1 << 20); ++fd) {
    maybe_close(static_cast<int>(fd), -1);
  }
}

void SuperviseTree(const TreePlan& plan) {
  sigset_t handled;
  sigemptyset(&handled);
  sigaddset(&handled, SIGCHLD);
  for (int sig : kPassedOn) sigaddset(&handled, sig);
  int signals = signalfd(-1, &handled, SFD_NONBLOCK | SFD_CLOEXEC);
  bool leader_done = false;
  bool parent_gone = false;
  int64_t kill_at = -1;  // from then on, SIGKILL for all that is left
  for (;;) {
    for (;;) {  // reap what ended; the child's status goes to the parent
      int status = 0;
      pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid == plan.leader) {
        leader_done = true;
        send(plan.channel, &status, sizeof status, MSG_NOSIGNAL);
      }
      if (pid > 0) continue;
      if (pid < 0 && errno == ECHILD && leader_done) _exit(0);
      break;
    }
    int64_t now = NowMs();
    if (kill_at >= 0 && now >= kill_at) SignalTree(SIGKILL, 0, plan.leader);
    int timeout = kill_at < 0 ? -1 : now >= kill_at ? 50
                                                    : static_cast<int>(kill_at - now);
    struct pollfd fds[2] = {{signals, POLLIN, 0},
                            {parent_gone ? -1 : plan.channel, POLLIN, 0}};
    if (poll(fds, 2, timeout) < 0) continue;  // EINTR: nothing is lost
    if (fds[1].revents != 0) {
      unsigned char asked[64];
      ssize_t n = recv(plan.channel, asked, sizeof asked, MSG_DONTWAIT);
      for (ssize_t i = 0; i < n; ++i) {
        bool all = (asked[i] & kTreeRequestWithGroup) != 0;
        int sig = asked[i] & ~kTreeRequestWithGroup;
        SignalTree(sig, all ? 0 : plan.leader, plan.leader);
      }
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        // The parent died, or dropped the Subprocess: the tree goes too.
        parent_gone = true;
        int sig = plan.death_signal > 0 ? plan.death_signal : SIGKILL;
        SignalTree(sig, 0, plan.leader);
        kill_at = sig == SIGKILL ? now : now + plan.death_grace_ms;
      }
    }
    struct signalfd_siginfo info;
    while (signals >= 0 &&
           read(signals, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      int sig = static_cast<int>(info.ssi_signo);
      if (sig != SIGCHLD) SignalTree(sig, 0, plan.leader);
    }
  }
}

}  // namespace trialshim::internal
