#include "trialshim/shim/launch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

extern char** environ;

namespace trialshim::shim {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kForwardedSignals[] = {SIGTERM, SIGINT,  SIGHUP,
                                     SIGQUIT, SIGUSR1, SIGUSR2};

// Signal handlers only write the signal number here; the loop reads it.
int g_signal_pipe[2] = {-1, -1};

void OnSignal(int sig) {
  int saved = errno;
  unsigned char byte = static_cast<unsigned char>(sig);
  (void)!write(g_signal_pipe[1], &byte, 1);
  errno = saved;
}

std::string Errno(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

// One rank's process and its two output pipes.
struct Rank {
  pid_t pid = -1;
  bool running = false;
  int code = 0;
  int fds[2] = {-1, -1};  // stdout, stderr read ends
  std::string pending[2];
};

// The environment of local worker `local_rank`: ours, with torchrun's
// variables replaced. Built before fork because setenv is not safe after it.
std::vector<std::string> FullEnvironment(const LaunchOptions& options,
                                         const LaunchTopology& topology,
                                         int local_rank) {
  std::map<std::string, std::string> set;
  for (auto& [name, value] : WorkerEnvironment(options, topology, local_rank))
    set[name] = value;
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
    if (set.count(name) == 0) out.push_back(std::move(entry));
  }
  for (const auto& [name, value] : set) out.push_back(name + "=" + value);
  return out;
}

// torchrun runs a script with `python -u`; so do we, for "*.py".
std::vector<std::string> WorkerArgv(std::vector<std::string> argv,
                                    const EnvLookup& env) {
  const std::string& program = argv[0];
  if (program.size() > 3 && program.compare(program.size() - 3, 3, ".py") == 0) {
    std::optional<std::string> python = env("PYTHON_EXEC");
    argv.insert(argv.begin(), {python && !python->empty() ? *python : "python3",
                               "-u"});
  }
  return argv;
}

// A flag's value when given, else what CLUSTER_SPEC says, else a default;
// `from` records which.
template <typename T>
T Pick(const std::optional<T>& flag, const char* flag_name,
       const std::optional<T>& cluster, const std::string& cluster_name,
       T fallback, std::string* from) {
  if (flag.has_value()) {
    *from = flag_name;
    return *flag;
  }
  if (cluster.has_value()) {
    *from = cluster_name;
    return *cluster;
  }
  *from = "default";
  return fallback;
}

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void ExecRank(const std::vector<char*>& argv,
                           const std::vector<char*>& envp, int out_fd,
                           int err_fd, pid_t parent) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : kForwardedSignals) sigaction(sig, &dfl, nullptr);
  sigaction(SIGCHLD, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);  // the launcher already died
  int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd >= 0) dup2(null_fd, 0);
  dup2(out_fd, 1);
  dup2(err_fd, 2);
  execvpe(argv[0], argv.data(), envp.data());
  int err = errno;
  const char* why = strerror(err);
  const char* prefix = "trialshim launch: cannot run ";
  (void)!write(2, prefix, strlen(prefix));
  (void)!write(2, argv[0], strlen(argv[0]));
  (void)!write(2, ": ", 2);
  (void)!write(2, why, strlen(why));
  (void)!write(2, "\n", 1);
  _exit(err == ENOENT ? 127 : 126);
}

int CodeOf(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

// Hands complete lines of `data` to the sink; keeps the rest in *pending.
void EmitLines(const LaunchOptions& options, int rank, int stream,
               std::string* pending, const char* data, size_t n) {
  pending->append(data, n);
  size_t start = 0;
  for (size_t nl; (nl = pending->find('\n', start)) != std::string::npos;
       start = nl + 1) {
    if (options.on_line) {
      options.on_line(rank, stream,
                      std::string_view(pending->data() + start, nl - start));
    }
  }
  pending->erase(0, start);
}

// Installs the handlers for the life of one Launch and restores the old ones.
class SignalScope {
 public:
  SignalScope() {
    struct sigaction sa {};
    sa.sa_handler = OnSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    for (int sig : kForwardedSignals) sigaction(sig, &sa, &old_[sig]);
    sigaction(SIGCHLD, &sa, &old_[SIGCHLD]);
  }
  ~SignalScope() {
    for (auto& [sig, old] : old_) sigaction(sig, &old, nullptr);
  }

 private:
  std::map<int, struct sigaction> old_;
};

}  // namespace

StatusOr<LaunchTopology> ResolveTopology(const LaunchOptions& options) {
  if (options.nproc < 1 || options.nproc > 4096) {
    return Status::InvalidArgument("--nproc-per-node: expected 1..4096, got " +
                                   std::to_string(options.nproc));
  }
  std::optional<int> nnodes, node_rank, port;
  std::optional<std::string> addr;
  std::string source = "CLUSTER_SPEC";
  for (const char* var : {"CLUSTER_SPEC", "TF_CONFIG"}) {
    std::optional<std::string> text = options.env(var);
    if (!text.has_value() || text->empty()) continue;
    TRIALSHIM_ASSIGN_OR_RETURN(ClusterTask task, ParseClusterSpec(*text, var));
    if (!task.rank.has_value()) {
      return Status::InvalidArgument(
          std::string(var) + ": task " + task.type + "[" +
          std::to_string(task.index) + "] (role " +
          ClusterRoleName(task.role) +
          ") takes no part in the collective: give its worker pool a command "
          "without `trialshim launch`");
    }
    source = std::string(var) + " (" + task.primary_field + ")";
    nnodes = task.world_size;
    node_rank = *task.rank;
    addr = task.master_addr;
    port = task.master_port;
    break;
  }
  LaunchTopology t;
  t.nnodes = Pick(options.nnodes, "--nnodes", nnodes, source, 1, &t.nnodes_from);
  t.node_rank = Pick(options.node_rank, "--node-rank", node_rank, source, 0,
                     &t.node_rank_from);
  std::string port_from;
  t.master_port = Pick(options.master_port, "--master-port", port, source,
                       t.nnodes > 1 ? 29500 : 0, &port_from);
  t.master_addr = Pick(options.master_addr, "--master-addr", addr, source,
                       std::string("127.0.0.1"), &t.master_from);
  if (t.nnodes < 1 || t.nnodes > 65536) {
    return Status::InvalidArgument("--nnodes: expected 1..65536, got " +
                                   std::to_string(t.nnodes));
  }
  if (t.node_rank < 0 || t.node_rank >= t.nnodes) {
    return Status::InvalidArgument(
        "--node-rank: expected 0.." + std::to_string(t.nnodes - 1) +
        " (--nnodes " + std::to_string(t.nnodes) + " from " + t.nnodes_from +
        "), got " + std::to_string(t.node_rank) + " (from " +
        t.node_rank_from + ")");
  }
  if (t.master_port < 0 || t.master_port > 65535 ||
      (t.master_port == 0 && t.nnodes > 1)) {
    return Status::InvalidArgument(
        "--master-port: expected 1..65535" +
        std::string(t.nnodes > 1 ? " (every node must use the same port)"
                                 : " (or 0 for a free port)") +
        ", got " + std::to_string(t.master_port));
  }
  if (t.nnodes > 1 && t.master_from == "default") {
    return Status::InvalidArgument(
        "--nnodes " + std::to_string(t.nnodes) +
        " needs --master-addr: the host of node 0, which every node must "
        "reach (on Vertex AI, CLUSTER_SPEC gives it)");
  }
  if (t.master_addr.empty()) {
    return Status::InvalidArgument("--master-addr: empty host");
  }
  return t;
}

std::vector<std::pair<std::string, std::string>> WorkerEnvironment(
    const LaunchOptions& options, const LaunchTopology& topology,
    int local_rank) {
  const std::string rank = std::to_string(topology.node_rank * options.nproc +
                                          local_rank);
  const std::string world = std::to_string(topology.nnodes * options.nproc);
  std::vector<std::pair<std::string, std::string>> env = {
      {"LOCAL_RANK", std::to_string(local_rank)},
      {"RANK", rank},
      {"GROUP_RANK", std::to_string(topology.node_rank)},
      {"ROLE_RANK", rank},
      {"ROLE_NAME", "default"},
      {"LOCAL_WORLD_SIZE", std::to_string(options.nproc)},
      {"WORLD_SIZE", world},
      {"GROUP_WORLD_SIZE", std::to_string(topology.nnodes)},
      {"ROLE_WORLD_SIZE", world},
      {"MASTER_ADDR", topology.master_addr},
      {"MASTER_PORT", std::to_string(topology.master_port)},
      {"TORCHELASTIC_RESTART_COUNT", "0"},
      {"TORCHELASTIC_MAX_RESTARTS", "0"},
      {"TORCHELASTIC_RUN_ID", options.run_id},
      {"TORCHELASTIC_USE_AGENT_STORE", "False"},
  };
  std::optional<std::string> nccl = options.env("NCCL_ASYNC_ERROR_HANDLING");
  if (!nccl.has_value()) env.emplace_back("NCCL_ASYNC_ERROR_HANDLING", "1");
  // torchrun: "to avoid your system being overloaded" by N BLAS pools.
  if (options.nproc > 1 && !options.env("OMP_NUM_THREADS").has_value()) {
    env.emplace_back("OMP_NUM_THREADS", "1");
  }
  return env;
}

StatusOr<int> PickFreePort(const std::string& addr) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IOError(Errno("socket"));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = 0;
  if (inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) != 1) {
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
  }
  socklen_t len = sizeof(sa);
  if (bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
    Status st = Status::IOError(Errno("picking a free port on " + addr));
    close(fd);
    return st;
  }
  close(fd);
  return static_cast<int>(ntohs(sa.sin_port));
}

StatusOr<LaunchResult> Launch(const std::vector<std::string>& argv,
                              const LaunchOptions& options) {
  if (argv.empty()) {
    return Status::InvalidArgument(
        "no command to launch (expected "
        "'-- COMMAND [ARG...]')");
  }
  TRIALSHIM_ASSIGN_OR_RETURN(LaunchTopology topology, ResolveTopology(options));
  LaunchResult result;
  if (topology.master_port == 0) {
    TRIALSHIM_ASSIGN_OR_RETURN(topology.master_port,
                               PickFreePort(topology.master_addr));
  }
  result.master_port = topology.master_port;
  const int first_rank = topology.node_rank * options.nproc;

  if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Status::IOError(Errno("pipe"));
  }
  SignalScope signals;
  const std::vector<std::string> worker_argv = WorkerArgv(argv, options.env);
  std::vector<char*> cargv;
  for (const std::string& a : worker_argv)
    cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  std::vector<Rank> ranks(options.nproc);
  Status start_error;
  const pid_t self = getpid();
  for (int i = 0; i < options.nproc && start_error.ok(); ++i) {
    std::vector<std::string> env = FullEnvironment(options, topology, i);
    std::vector<char*> envp;
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0) {
      start_error = Status::IOError(Errno("pipe"));
      break;
    }
    if (pipe2(err, O_CLOEXEC) != 0) {
      start_error = Status::IOError(Errno("pipe"));
      close(out[0]);
      close(out[1]);
      break;
    }
    pid_t pid = fork();
    if (pid == 0) ExecRank(cargv, envp, out[1], err[1], self);
    close(out[1]);
    close(err[1]);
    if (pid < 0) {
      start_error = Status::IOError(Errno("fork"));
      close(out[0]);
      close(err[0]);
      break;
    }
    setpgid(pid, pid);  // also here, so kill(-pid) works at once
    ranks[i].pid = pid;
    ranks[i].running = true;
    ranks[i].fds[0] = out[0];
    ranks[i].fds[1] = err[0];
  }

  // Sends `sig` to every running rank's process group.
  auto signal_all = [&](int sig) {
    for (Rank& r : ranks) {
      if (r.running) kill(-r.pid, sig);
    }
  };
  bool stopping = false;
  const Clock::time_point never = Clock::time_point::max();
  Clock::time_point term_at = never, kill_at = never;
  auto stop_others = [&] {
    if (stopping) return;
    stopping = true;
    // Ranks still running the handler of a signal we forwarded get a moment
    // to finish it before SIGTERM.
    std::chrono::milliseconds delay(0);
    if (result.forwarded_signal != 0) {
      delay = std::min(options.grace, std::chrono::milliseconds(1000));
    }
    term_at = Clock::now() + delay;
    kill_at = term_at + options.grace;
  };
  if (!start_error.ok()) stop_others();

  auto finish = [&](size_t i, int status) {
    Rank& r = ranks[i];
    r.running = false;
    r.code = CodeOf(status);
    if (r.code != 0 && result.failed_rank < 0) {
      result.failed_rank = first_rank + static_cast<int>(i);
      result.exit_code = r.code;
      stop_others();
    }
  };
  auto reap = [&] {
    int status = 0;
    if (self == 1) {  // a container's init: every orphan is ours to reap
      for (pid_t pid; (pid = waitpid(-1, &status, WNOHANG)) > 0;) {
        for (size_t i = 0; i < ranks.size(); ++i) {
          if (ranks[i].running && ranks[i].pid == pid) finish(i, status);
        }
      }
      return;
    }
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (ranks[i].running &&
          waitpid(ranks[i].pid, &status, WNOHANG) == ranks[i].pid) {
        finish(i, status);
      }
    }
  };
  auto any_running = [&] {
    for (const Rank& r : ranks) {
      if (r.running) return true;
    }
    return false;
  };

  bool drained = false;
  while (!drained) {
    std::vector<pollfd> fds;
    std::vector<std::pair<int, int>> owner;  // (rank, stream) per fd
    fds.push_back({g_signal_pipe[0], POLLIN, 0});
    owner.emplace_back(-1, 0);
    for (size_t i = 0; i < ranks.size(); ++i) {
      for (int s = 0; s < 2; ++s) {
        if (ranks[i].fds[s] >= 0) {
          fds.push_back({ranks[i].fds[s], POLLIN, 0});
          owner.emplace_back(static_cast<int>(i), s);
        }
      }
    }
    bool running = any_running();
    if (!running && fds.size() == 1) break;
    int timeout_ms = -1;
    if (!running) {
      // Every rank is gone; a grandchild may still hold a pipe open, so
      // read what is left but do not wait for it.
      timeout_ms = 100;
    } else if (std::min(term_at, kill_at) != never) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::min(term_at, kill_at) - Clock::now());
      timeout_ms = static_cast<int>(
          std::clamp<int64_t>(left.count(), 0, 24 * 3600 * 1000));
    }
    int n = poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) {
      signal_all(SIGKILL);
      start_error = Status::IOError(Errno("poll"));
      break;
    }
    if (n == 0 && !running) drained = true;
    if (running && Clock::now() >= term_at) {
      signal_all(SIGTERM);
      term_at = never;
    }
    if (running && Clock::now() >= kill_at) {
      signal_all(SIGKILL);
      kill_at = never;
    }
    for (size_t k = 0; n > 0 && k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      if (owner[k].first < 0) {
        unsigned char sigs[64];
        ssize_t got = read(g_signal_pipe[0], sigs, sizeof(sigs));
        for (ssize_t j = 0; j < got; ++j) {
          if (sigs[j] == SIGCHLD) continue;
          result.forwarded_signal = sigs[j];
          signal_all(sigs[j]);
        }
        reap();  // cheap; SIGCHLD may have been merged with others
        continue;
      }
      Rank& r = ranks[owner[k].first];
      int s = owner[k].second;
      char buf[65536];
      ssize_t got = read(r.fds[s], buf, sizeof(buf));
      if (got > 0) {
        EmitLines(options, first_rank + owner[k].first, s + 1, &r.pending[s],
                  buf, got);
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(r.fds[s]);
        r.fds[s] = -1;
        if (!r.pending[s].empty() && options.on_line) {
          options.on_line(first_rank + owner[k].first, s + 1, r.pending[s]);
        }
        r.pending[s].clear();
      }
    }
    reap();
  }
  for (Rank& r : ranks) {
    if (r.running) waitpid(r.pid, nullptr, 0);  // only after a poll failure
  }
  // Flush and close what a lingering grandchild still holds.
  for (size_t i = 0; i < ranks.size(); ++i) {
    for (int s = 0; s < 2; ++s) {
      if (ranks[i].fds[s] < 0) continue;
      if (!ranks[i].pending[s].empty() && options.on_line) {
        options.on_line(first_rank + static_cast<int>(i), s + 1,
                        ranks[i].pending[s]);
      }
      close(ranks[i].fds[s]);
    }
  }
  close(g_signal_pipe[0]);
  close(g_signal_pipe[1]);
  g_signal_pipe[0] = g_signal_pipe[1] = -1;
  if (!start_error.ok()) return start_error;
  for (const Rank& r : ranks) result.rank_codes.push_back(r.code);
  return result;
}

}  // namespace trialshim::shim
