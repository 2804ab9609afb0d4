#include "device_launcher.h"

#include "trialshim/base/file.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>

extern char** environ;

namespace trialshim::trainer::internal {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

// A port nobody listens on now, as Lightning's find_free_network_port
// (bind port 0, read what the kernel gave, close).
StatusOr<int> FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return IOErrorFor("open", "a TCP socket", errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    Status st = IOErrorFor("bind", "127.0.0.1:0", errno);
    close(fd);
    return st;
  }
  close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

// This process's argv, from /proc/self/cmdline (NUL-separated).
StatusOr<std::vector<std::string>> OwnCommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)),
                  std::istreambuf_iterator<char>());
  if (!in.eof() && in.fail()) {
    return Status::IOError("can not read /proc/self/cmdline");
  }
  std::vector<std::string> argv;
  size_t start = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i] == '\0') {
      argv.push_back(all.substr(start, i - start));
      start = i + 1;
    }
  }
  if (argv.empty()) return Status::IOError("/proc/self/cmdline is empty");
  return argv;
}

}  // namespace

StatusOr<std::unique_ptr<DeviceLauncher>> DeviceLauncher::Start(
    int64_t processes, int64_t num_nodes,
    const std::function<std::vector<std::string>(int64_t)>& command) {
  const std::string world_env = Env("WORLD_SIZE");
  if (!world_env.empty() && world_env != std::to_string(num_nodes)) {
    // The shim exports one rank per replica (CLUSTER_SPEC); each replica
    // is a node here.
    return Status::InvalidArgument(
        "WORLD_SIZE=" + world_env + " machines (on Vertex: the replicas of "
        "CLUSTER_SPEC), but trainer.num_nodes=" + std::to_string(num_nodes) +
        ": set trainer.num_nodes=" + world_env);
  }
  std::string node_rank = Env("NODE_RANK");
  if (node_rank.empty()) node_rank = Env("GROUP_RANK");
  if (node_rank.empty()) node_rank = "0";
  std::string addr = Env("MASTER_ADDR");
  std::string port = Env("MASTER_PORT");
  if (num_nodes > 1 && (addr.empty() || port.empty())) {
    return Status::InvalidArgument(
        "trainer.num_nodes=" + std::to_string(num_nodes) +
        ", but MASTER_ADDR and MASTER_PORT are not both set: run each "
        "machine under trialshim (it derives them from CLUSTER_SPEC)");
  }
  if (addr.empty()) addr = "127.0.0.1";
  if (port.empty()) {
    TRIALSHIM_ASSIGN_OR_RETURN(int free, FreePort());
    port = std::to_string(free);
  }
  std::vector<std::string> own;
  if (!command) {
    TRIALSHIM_ASSIGN_OR_RETURN(own, OwnCommandLine());
  }
  char* end = nullptr;
  const long node = std::strtol(node_rank.c_str(), &end, 10);
  if (*end != '\0' || node < 0 || node >= num_nodes) {
    return Status::InvalidArgument("NODE_RANK=" + node_rank +
                                   ": expected 0 .. num_nodes-1 (" +
                                   std::to_string(num_nodes - 1) + ")");
  }
  auto rank_env = [&](int64_t local) {
    return std::map<std::string, std::string>{
        {"LOCAL_RANK", std::to_string(local)},
        {"LOCAL_WORLD_SIZE", std::to_string(processes)},
        {"NODE_RANK", std::to_string(node)},
        {"RANK", std::to_string(node * processes + local)},
        {"WORLD_SIZE", std::to_string(num_nodes * processes)},
        {"MASTER_ADDR", addr},
        {"MASTER_PORT", port}};
  };
  std::unique_ptr<DeviceLauncher> launcher(new DeviceLauncher);
  for (int64_t local = 1; local < processes; ++local) {
    std::map<std::string, std::string> set = rank_env(local);
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      std::string entry = *e;
      if (!set.count(entry.substr(0, entry.find('=')))) env.push_back(entry);
    }
    for (const auto& [k, v] : set) env.push_back(k + "=" + v);
    SubprocessOptions options;
    // In our process group, as Lightning's children are: a SIGTERM to the
    // trial's group reaches every rank, and they agree to stop together.
    // A rank whose rank 0 is gone can only wait for a collective that never
    // completes, so it is killed with it.
    options.new_process_group = false;
    options.parent_death_signal = SIGKILL;
    options.env = std::move(env);
    options.program = "/proc/self/exe";
    Subprocess p;
    Status st = p.Start(command ? command(local) : own, options);
    if (!st.ok()) {
      return Status::IOError("can not start local rank " +
                             std::to_string(local) + " of trainer.devices=" +
                             std::to_string(processes) + ": " + st.message());
    }
    launcher->ranks_.push_back(std::move(p));
  }
  for (const auto& [k, v] : rank_env(0)) setenv(k.c_str(), v.c_str(), 1);
  return launcher;
}

DeviceLauncher::~DeviceLauncher() {
  for (auto& p : ranks_) {
    if (p.running()) {
      (void)p.Kill(SIGKILL, /*group=*/false);
      (void)p.Wait();
    }
  }
}

Status DeviceLauncher::Wait() {
  Status first;
  for (size_t i = 0; i < ranks_.size(); ++i) {
    Status st = ranks_[i].Wait();
    if (st.ok() && ranks_[i].exit_code() != 0) {
      st = Status::Internal("local rank " + std::to_string(i + 1) +
                            " exited with code " +
                            std::to_string(ranks_[i].exit_code()));
    }
    if (first.ok()) first = st;
  }
  return first;
}

}  // namespace trialshim::trainer::internal
