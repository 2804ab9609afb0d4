#include "trialshim/shim/launch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "trialshim/base/subprocess.h"

namespace trialshim::shim {
namespace {

using Clock = std::chrono::steady_clock;

// torchrun 1.13 catches SIGTERM, SIGINT, SIGHUP and SIGQUIT
// (PContext.start in torch/distributed/elastic/multiprocessing/api.py) and
// hands the one it got to its workers; SIGUSR1/2 are added, as trainers use
// them to checkpoint before preemption.
constexpr int kForwardedSignals[] = {SIGTERM, SIGINT,  SIGHUP,
                                     SIGQUIT, SIGUSR1, SIGUSR2};

// Signal handlers only write the signal number here; the loop reads it
// (the self-pipe trick: poll(2) then wakes for a signal as for output).
int g_signal_pipe[2] = {-1, -1};

// write(2) is async-signal-safe, and errno is kept as signal-safety(7) asks
// of a handler that calls it. The pipe is non-blocking: a full pipe drops a
// byte rather than hang the handler.
void OnSignal(int sig) {
  int saved = errno;
  unsigned char byte = static_cast<unsigned char>(sig);
  (void)!write(g_signal_pipe[1], &byte, 1);
  errno = saved;
}

std::string Errno(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

// The environment of local worker `local_rank`: ours, with torchrun's
// variables replaced.
std::vector<std::string> FullEnvironment(const LaunchOptions& options,
                                         const LaunchTopology& topology,
                                         int local_rank) {
  std::vector<std::string> set;
  for (auto& [name, value] : WorkerEnvironment(options, topology, local_rank))
    set.push_back(name + "=" + value);
  return EnvironmentWith(set);
}

// torchrun runs a script with `python -u`; so do we, for "*.py".
// torchrun 1.13 (config_from_args in torch/distributed/run.py) takes
// os.getenv("PYTHON_EXEC", sys.executable) and puts it before any script
// unless --no-python; we have no sys.executable, so "python3", and any other
// command runs as torchrun --no-python runs it (docs/distributed.md).
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
    // SA_NOCLDSTOP: a rank stopped or continued (SIGSTOP, SIGCONT) is no
    // event (sigaction(2)). SA_RESTART spares our reads and writes; poll(2)
    // still fails with EINTR whatever the flag (signal(7)), which Step
    // expects.
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

// One Launch: the ranks of this node, the signals sent to us, and the
// stop-the-others timers.
class Launcher {
 public:
  Launcher(const LaunchOptions& options, const LaunchTopology& topology,
           LaunchResult* result)
      : options_(options),
        topology_(topology),
        result_(result),
        first_rank_(topology.node_rank * options.nproc),
        ranks_(options.nproc) {}

  // Starts every rank and supervises them until all have ended and their
  // output is read.
  Status Run(const std::vector<std::string>& argv) {
    Status started = StartRanks(argv);
    if (!started.ok()) StopOthers();  // and wait for those that did start
    Status st;
    for (;;) {
      StatusOr<bool> more = Step();
      if (!more.ok()) st = more.status();
      if (!more.ok() || !*more) break;
    }
    CloseStreams();
    TRIALSHIM_RETURN_IF_ERROR(started);
    TRIALSHIM_RETURN_IF_ERROR(st);
    for (const Rank& r : ranks_) result_->rank_codes.push_back(r.code);
    return Status::Ok();
  }

 private:
  // One rank's process and its two output pipes.
  struct Rank {
    Subprocess proc;
    bool running = false;
    int code = 0;
    int fds[2] = {-1, -1};  // stdout, stderr read ends
    std::string pending[2];
  };

  Status StartRanks(const std::vector<std::string>& argv);
  Status StartRank(size_t i, const std::vector<std::string>& argv);
  StatusOr<bool> Step();
  int PollTimeoutMs(bool running) const;
  void ReadSignals();
  void ReadStream(size_t i, int s);
  void CloseStreams();

  void SignalAll(int sig) {
    for (Rank& r : ranks_) {
      if (r.running) r.proc.Kill(sig, /*group=*/true).IgnoreError();
    }
  }

  // torchrun's agent stops a failed group the same way: SIGTERM to each
  // worker, SIGKILL to those alive 30 s later (SubprocessContext._close,
  // torch/distributed/elastic/multiprocessing/api.py); options_.grace is
  // that timeout.
  void StopOthers() {
    if (stopping_) return;
    stopping_ = true;
    // Ranks still running the handler of a signal we forwarded get a moment
    // to finish it before SIGTERM.
    std::chrono::milliseconds delay(0);
    if (result_->forwarded_signal != 0) {
      delay = std::min(options_.grace, std::chrono::milliseconds(1000));
    }
    term_at_ = Clock::now() + delay;
    kill_at_ = term_at_ + options_.grace;
  }

  void Finish(size_t i, int code) {
    Rank& r = ranks_[i];
    r.running = false;
    r.code = code;
    if (r.code != 0 && result_->failed_rank < 0) {
      result_->failed_rank = first_rank_ + static_cast<int>(i);
      result_->exit_code = r.code;
      StopOthers();
    }
  }

  void Reap() {
    // Orphans are reparented to PID 1, which must wait(2) for them: waiting
    // for our ranks' pids only would leave them as zombies.
    if (getpid() == 1) {  // a container's init: every orphan is ours to reap
      int status = 0;
      for (pid_t pid; (pid = waitpid(-1, &status, WNOHANG)) > 0;) {
        for (size_t i = 0; i < ranks_.size(); ++i) {
          if (ranks_[i].running && ranks_[i].proc.pid() == pid) {
            ranks_[i].proc.SetReaped(status);
            Finish(i, ranks_[i].proc.exit_code());
          }
        }
      }
      return;
    }
    for (size_t i = 0; i < ranks_.size(); ++i) {
      if (ranks_[i].running && ranks_[i].proc.Poll()) {
        Finish(i, ranks_[i].proc.exit_code());
      }
    }
  }

  bool AnyRunning() const {
    for (const Rank& r : ranks_) {
      if (r.running) return true;
    }
    return false;
  }

  static constexpr Clock::time_point kNever = Clock::time_point::max();
  static constexpr int kRankEnded = -2;  // Step's owner: a rank's event_fd
  const LaunchOptions& options_;
  const LaunchTopology& topology_;
  LaunchResult* result_;
  const int first_rank_;
  std::vector<Rank> ranks_;
  bool stopping_ = false;
  Clock::time_point term_at_ = kNever, kill_at_ = kNever;
};

Status Launcher::StartRanks(const std::vector<std::string>& argv) {
  for (size_t i = 0; i < ranks_.size(); ++i) {
    TRIALSHIM_RETURN_IF_ERROR(StartRank(i, argv));
    if (!ranks_[i].running) break;  // could not exec: the others would not
  }
  return Status::Ok();
}

Status Launcher::StartRank(size_t i, const std::vector<std::string>& argv) {
  SubprocessOptions o;
  o.env = FullEnvironment(options_, topology_, static_cast<int>(i));
  o.in = Stdio::Null();
  o.out = Stdio::Pipe();
  o.err = Stdio::Pipe();
  // Its own group (the default), so its children get our signals too. And
  // SIGKILL when we die, not SIGTERM: a rank without its launcher would
  // hold the others' collectives, and one stuck in NCCL may not act on
  // SIGTERM. torchrun 1.13 differs: its workers are plain Popen children
  // (SubprocessHandler, elastic/multiprocessing/api.py) and outlive an agent
  // killed with SIGKILL (docs/distributed.md).
  o.parent_death_signal = SIGKILL;
  // Under a supervisor that holds the rank's whole tree (contain), as the
  // shim's and the sweep's children are: what a rank starts, even in a
  // session of its own (setsid), gets our signals and dies with us, kill -9
  // included. As PID 1 every orphan is ours already, and our death ends the
  // container's PID namespace.
  o.contain = getpid() != 1;
  Rank& r = ranks_[i];
  Status st = r.proc.Start(argv, o);
  if (!st.ok() && r.proc.start_failure_exit_code() != 1) {
    // The command cannot be executed: a failing worker with the shell's
    // code, 127 not found, 126 found but not executable (POSIX sh's "Command
    // Search and Execution"), its reason on its stderr (launch.h).
    if (options_.on_line) {
      options_.on_line(first_rank_ + static_cast<int>(i), 2,
                       "trialshim launch: " + st.message());
    }
    Finish(i, r.proc.start_failure_exit_code());
    return Status::Ok();
  }
  TRIALSHIM_RETURN_IF_ERROR(st);
  r.running = true;
  r.fds[0] = r.proc.TakeStdout();
  r.fds[1] = r.proc.TakeStderr();
  return Status::Ok();
}

int Launcher::PollTimeoutMs(bool running) const {
  // Every rank is gone; a grandchild may still hold a pipe open, so read
  // what is left but do not wait for it.
  if (!running) return 100;
  Clock::time_point next = std::min(term_at_, kill_at_);
  if (next == kNever) return -1;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      next - Clock::now());
  return static_cast<int>(
      std::clamp<int64_t>(left.count(), 0, 24 * 3600 * 1000));
}

// One round of poll: signals, output, timers, reaping. False once every
// rank has ended and its output is drained.
StatusOr<bool> Launcher::Step() {
  std::vector<pollfd> fds;
  std::vector<std::pair<int, int>> owner;  // (rank, stream) per fd
  fds.push_back({g_signal_pipe[0], POLLIN, 0});
  owner.emplace_back(-1, 0);
  for (size_t i = 0; i < ranks_.size(); ++i) {
    for (int s = 0; s < 2; ++s) {
      if (ranks_[i].fds[s] >= 0) {
        fds.push_back({ranks_[i].fds[s], POLLIN, 0});
        owner.emplace_back(static_cast<int>(i), s);
      }
    }
    // A contained rank's end comes from its supervisor, not as SIGCHLD.
    if (ranks_[i].running && ranks_[i].proc.event_fd() >= 0) {
      fds.push_back({ranks_[i].proc.event_fd(), POLLIN, 0});
      owner.emplace_back(static_cast<int>(i), kRankEnded);
    }
  }
  bool running = AnyRunning();
  if (!running && fds.size() == 1) return false;
  int n = poll(fds.data(), fds.size(), PollTimeoutMs(running));
  if (n < 0 && errno != EINTR) {
    Status st = Status::IOError(Errno("poll"));
    SignalAll(SIGKILL);
    for (Rank& r : ranks_) {
      if (r.running) r.proc.Wait().IgnoreError();
    }
    return st;
  }
  if (n == 0 && !running) return false;
  if (running && Clock::now() >= term_at_) {
    SignalAll(SIGTERM);
    term_at_ = kNever;
  }
  if (running && Clock::now() >= kill_at_) {
    SignalAll(SIGKILL);
    kill_at_ = kNever;
  }
  for (size_t k = 0; n > 0 && k < fds.size(); ++k) {
    if (fds[k].revents == 0) continue;
    if (owner[k].first < 0) {
      ReadSignals();
    } else if (owner[k].second == kRankEnded) {
      continue;  // Reap() below
    } else {
      ReadStream(static_cast<size_t>(owner[k].first), owner[k].second);
    }
  }
  Reap();
  return true;
}

// Unlike torchrun, which answers a signal by closing its workers (the
// signal, then SIGKILL after 30 s: SimpleElasticAgent.run's SignalException
// branch), we only forward it and wait: a trainer that checkpoints on
// SIGTERM takes as long as it takes, and Vertex ends the VM after its own
// grace period. A failing rank still starts StopOthers.
void Launcher::ReadSignals() {
  unsigned char sigs[64];
  ssize_t got = read(g_signal_pipe[0], sigs, sizeof(sigs));
  for (ssize_t j = 0; j < got; ++j) {
    if (sigs[j] == SIGCHLD) continue;
    result_->forwarded_signal = sigs[j];
    SignalAll(sigs[j]);
  }
  Reap();  // cheap; SIGCHLD may have been merged with others
}

void Launcher::ReadStream(size_t i, int s) {
  Rank& r = ranks_[i];
  char buf[65536];
  ssize_t got = read(r.fds[s], buf, sizeof(buf));
  const int rank = first_rank_ + static_cast<int>(i);
  if (got > 0) {
    EmitLines(options_, rank, s + 1, &r.pending[s], buf, got);
  } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
    close(r.fds[s]);
    r.fds[s] = -1;
    if (!r.pending[s].empty() && options_.on_line) {
      options_.on_line(rank, s + 1, r.pending[s]);
    }
    r.pending[s].clear();
  }
}

// Flushes and closes what a lingering grandchild still holds.
void Launcher::CloseStreams() {
  for (size_t i = 0; i < ranks_.size(); ++i) {
    for (int s = 0; s < 2; ++s) {
      Rank& r = ranks_[i];
      if (r.fds[s] < 0) continue;
      if (!r.pending[s].empty() && options_.on_line) {
        options_.on_line(first_rank_ + static_cast<int>(i), s + 1,
                         r.pending[s]);
      }
      close(r.fds[s]);
      r.fds[s] = -1;
    }
  }
}

}  // namespace

// A flag wins over CLUSTER_SPEC / TF_CONFIG, which win over torchrun's
// defaults (--nnodes 1:1, --node-rank 0, --master-addr 127.0.0.1,
// --master-port 29500: get_args_parser in torch/distributed/run.py). One
// node takes a free port instead of 29500, so two launches on one machine
// do not collide; several nodes need a port every node knows.
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
  // The keys and order of worker_env in LocalElasticAgent._start_workers
  // (torch 1.13, elastic/agent/server/local_elastic_agent.py). One role, so
  // the role's rank and size are the global ones. USE_AGENT_STORE is "False"
  // on purpose: torchrun's static rendezvous says "True" because its agent
  // hosts the TCPStore; with no agent, rank 0 hosts it, as env:// does.
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
  // torchrun: "to avoid your system being overloaded" by N BLAS pools
  // (config_from_args in torch/distributed/run.py).
  if (options.nproc > 1 && !options.env("OMP_NUM_THREADS").has_value()) {
    env.emplace_back("OMP_NUM_THREADS", "1");
  }
  return env;
}

// Port 0 asks bind(2) for an ephemeral port (ip(7)); getsockname(2) says
// which. The socket is closed before the ranks start, so another process
// may take the port first; torchrun's agent runs the same race
// (_get_socket_with_port, elastic/agent/server/api.py).
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
  if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Status::IOError(Errno("pipe"));
  }
  Status st;
  {
    SignalScope signals;
    st =
        Launcher(options, topology, &result).Run(WorkerArgv(argv, options.env));
  }
  close(g_signal_pipe[0]);
  close(g_signal_pipe[1]);
  g_signal_pipe[0] = g_signal_pipe[1] = -1;
  TRIALSHIM_RETURN_IF_ERROR(st);
  return result;
}

}  // namespace trialshim::shim
