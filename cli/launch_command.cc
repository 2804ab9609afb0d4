// `trialshim launch --nproc-per-node N -- COMMAND ...`: N workers on this
// node with torchrun's environment, each output line prefixed with
// "[rank i] " (the global rank).
#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "options.h"
#include "translate_flags.h"
#include "trialshim/shim/launch.h"

namespace trialshim::cli {

using shim::Launch;
using translate::OptionId;
using shim::LaunchOptions;
using shim::LaunchResult;
namespace {

struct LaunchFlags {
  int nproc = 1;
  int nnodes = 1;
  int node_rank = 0;
  int master_port = 0;
  std::string master_addr;
  std::string run_id = "none";
  double grace_s = 30;
  bool hydra = false;
  TranslateFlags translate;
  std::vector<std::string> command;
  // Set when given on the command line (else CLUSTER_SPEC or a default).
  CLI::Option* nnodes_opt = nullptr;
  CLI::Option* node_rank_opt = nullptr;
  CLI::Option* master_port_opt = nullptr;
  CLI::Option* master_addr_opt = nullptr;
};

template <typename T>
std::optional<T> IfGiven(const CLI::Option* opt, const T& value) {
  return opt->count() > 0 ? std::optional<T>(value) : std::nullopt;
}

int Fail(const Status& s) {
  std::cerr << "trialshim launch: error: " << s.message() << "\n";
  return ExitCodeFor(s);
}

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
  options.nnodes = IfGiven(flags.nnodes_opt, flags.nnodes);
  options.node_rank = IfGiven(flags.node_rank_opt, flags.node_rank);
  options.master_port = IfGiven(flags.master_port_opt, flags.master_port);
  options.master_addr = IfGiven(flags.master_addr_opt, flags.master_addr);
  options.run_id = flags.run_id;
  options.grace =
      std::chrono::milliseconds(static_cast<int64_t>(flags.grace_s * 1000));
  // Like torchrun, the arguments pass untouched (an argparse trainer wants
  // --lr=0.01 as it is); a Hydra trainer asks for `trialshim --`'s
  // translation.
  std::vector<std::string> argv = flags.command;
  if (flags.hydra || !flags.translate.config_path.empty()) {
    StatusOr<std::vector<std::string>> translated =
        TranslateCommand(flags.translate, flags.command);
    if (!translated.ok()) return Fail(translated.status());
    argv = std::move(translated).value();
  }
  options.on_line = [](int rank, int stream, std::string_view line) {
    std::string text = "[rank " + std::to_string(rank) + "] ";
    text.append(line.data(), line.size());
    text += '\n';
    WriteAll(stream == 2 ? 2 : 1, text);
  };
  StatusOr<LaunchResult> result = Launch(argv, options);
  if (!result.ok()) return Fail(result.status());
  if (result->failed_rank >= 0 && result->forwarded_signal == 0) {
    std::cerr << "trialshim launch: rank " << result->failed_rank
              << " failed with exit code " << result->exit_code
              << "; the other ranks on this node were stopped\n";
  }
  return result->exit_code;
}

}  // namespace

void AddLaunchCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<LaunchFlags>();
  CLI::App* cmd = app.add_subcommand(
      "launch",
      "Run N worker processes of COMMAND on this node with torchrun's "
      "environment (RANK, WORLD_SIZE, LOCAL_RANK, ...); nodes, node rank and "
      "master default from CLUSTER_SPEC / TF_CONFIG; --hydra translates the "
      "trial's arguments as `trialshim -- COMMAND` does");
  AddOption(cmd, OptionId::kNprocPerNode, &flags->nproc)
      ->check(Bounded(1, 4096))
      ->capture_default_str();
  flags->nnodes_opt = AddOption(cmd, OptionId::kNnodes, &flags->nnodes)
                          ->check(Bounded(1, 65536));
  flags->node_rank_opt = AddOption(cmd, OptionId::kNodeRank, &flags->node_rank)
                             ->check(Bounded(0, 65535));
  flags->master_addr_opt =
      AddOption(cmd, OptionId::kMasterAddr, &flags->master_addr);
  flags->master_port_opt =
      AddOption(cmd, OptionId::kMasterPort, &flags->master_port)
          ->check(Bounded(0, 65535));
  AddOption(cmd, OptionId::kRdzvId, &flags->run_id)->capture_default_str();
  AddOption(cmd, OptionId::kHydra, &flags->hydra);
  AddTranslateFlags(cmd, &flags->translate, /*command=*/true);
  AddOption(cmd, OptionId::kLaunchGrace, &flags->grace_s)
      ->check(Bounded(0.0))
      ->capture_default_str();
  cmd->add_option("command", flags->command, "-- COMMAND [ARG...]")->required();
  cmd->callback([flags, exit_code] { *exit_code = RunLaunch(*flags); });
}

}  // namespace trialshim::cli
