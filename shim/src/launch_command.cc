// `trialshim launch --nproc N -- COMMAND ...`: N local ranks, like torchrun
// on one machine, each output line prefixed with "[rank i] ".
#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "trialshim/shim/launch.h"

namespace trialshim::shim {
namespace {

struct LaunchFlags {
  int nproc = 1;
  int master_port = 0;
  std::string master_addr = "127.0.0.1";
  double grace_s = 30;
  std::vector<std::string> command;
};

// One write per line, so lines of different ranks never interleave.
void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // our own output is gone; keep supervising
    done += static_cast<size_t>(n);
  }
}

int RunLaunch(const LaunchFlags& flags) {
  LaunchOptions options;
  options.nproc = flags.nproc;
  options.master_port = flags.master_port;
  options.master_addr = flags.master_addr;
  options.grace =
      std::chrono::milliseconds(static_cast<int64_t>(flags.grace_s * 1000));
  options.on_line = [](int rank, int stream, std::string_view line) {
    std::string text = "[rank " + std::to_string(rank) + "] ";
    text.append(line.data(), line.size());
    text += '\n';
    WriteAll(stream == 2 ? 2 : 1, text);
  };
  StatusOr<LaunchResult> result = Launch(flags.command, options);
  if (!result.ok()) {
    std::cerr << "trialshim launch: error: " << result.status().message()
              << "\n";
    return ExitCodeFor(result.status());
  }
  if (result->failed_rank >= 0 && result->forwarded_signal == 0) {
    std::cerr << "trialshim launch: rank " << result->failed_rank
              << " failed with exit code " << result->exit_code
              << "; the other ranks were stopped\n";
  }
  return result->exit_code;
}

}  // namespace

void AddLaunchCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<LaunchFlags>();
  CLI::App* cmd = app.add_subcommand(
      "launch",
      "Run N local ranks of COMMAND with MASTER_ADDR, MASTER_PORT, "
      "WORLD_SIZE, RANK and LOCAL_RANK set (like torchrun on one machine)");
  cmd->add_option("--nproc,--nproc-per-node", flags->nproc,
                  "Number of ranks to start")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--master-port", flags->master_port,
                  "MASTER_PORT for the ranks (0: a free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--master-addr", flags->master_addr,
                  "MASTER_ADDR for the ranks")
      ->capture_default_str();
  cmd->add_option("--grace", flags->grace_s,
                  "Seconds a rank has between SIGTERM and SIGKILL once "
                  "another rank failed")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("command", flags->command, "-- COMMAND [ARG...]")->required();
  cmd->callback([flags, exit_code] { *exit_code = RunLaunch(*flags); });
}

}  // namespace trialshim::shim
