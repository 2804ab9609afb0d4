// `trialshim sweep JOB.yaml`: runs a tuning job locally, with a live table
// and a leaderboard. Ctrl-C (or SIGTERM, SIGHUP) stops the trials cleanly; a second
// one kills them.
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "commands.h"
#include "hydra_sweep_flags.h"
#include "options.h"
#include "trialshim/base/strings.h"
#include "trialshim/tuning/check.h"
#include "trialshim/tuning/job_writer.h"
#include "trialshim/tuning/sweep.h"

namespace trialshim::cli {

using tuning::Algorithm;
using tuning::ParameterType;
using tuning::TrialState;

using tuning::ParameterValue;
using tuning::TrialRecord;

using translate::OptionId;
using tuning::CheckJobSpec;
using tuning::CheckOptions;
using tuning::Diagnostic;
using tuning::GoalName;
using tuning::HasErrors;
using tuning::JobSpec;
using tuning::LoadJobSpecFile;
using tuning::RunSweep;
using tuning::SweepOptions;
using tuning::SweepResult;
using tuning::TrialStateName;
namespace {

// The count of stop signals: the sweep terminates its trials at 1 and
// kills them at 2 (Sweeper::StopLevel, sweep_loop.cc). A handler may touch
// only lock-free atomics and volatile sig_atomic_t ([support.signal] in
// C++17); std::atomic<int> is lock-free on every platform we build for.
std::atomic<int> g_stop{0};
std::atomic<int> g_stop_signal{0};

void OnStopSignal(int sig) {
  g_stop_signal.store(sig);
  g_stop.fetch_add(1);
}

struct SweepFlags {
  // The job spec, or with --config-path the Hydra sweep's overrides.
  std::vector<std::string> positional;
  std::string job;  // the spec file, or "" for a Hydra sweep
  HydraSweepFlags hydra;
  int parallel = 0;
  int64_t max_trials = 0;
  std::string algorithm;
  uint64_t seed = 0;
  std::string out;
  bool resume = false;
  double timeout = 0;
  double grace = 10;
  bool no_check = false;
  std::vector<std::string> volumes;  // HOST:CONTAINER
  std::string workdir;
  std::string private_workdir = "auto";
};

// The command that continues a stopped sweep: every flag that shapes it,
// as given, then --out and --resume, run by `program`: the trialshim that
// was run (argv[0]), as the other hints name it, since a bare `trialshim`
// is found only when it is on PATH.
std::string ResumeCommand(const std::string& program, const SweepFlags& f,
                          const std::vector<std::string>& command,
                          const std::string& out) {
  std::vector<std::string> words;
  auto add = [&](const char* flag, const std::string& value) {
    words.push_back(flag);
    words.push_back(value);
  };
  if (f.parallel > 0) add("--parallel", std::to_string(f.parallel));
  if (f.max_trials > 0) add("--max-trials", std::to_string(f.max_trials));
  if (!f.algorithm.empty()) add("--algorithm", f.algorithm);
  if (f.seed != 0) add("--seed", std::to_string(f.seed));
  if (f.timeout > 0) add("--timeout", tuning::FormatNumber(f.timeout));
  if (f.grace != 10) add("--grace", tuning::FormatNumber(f.grace));
  if (f.no_check) words.push_back("--no-check");
  for (const std::string& v : f.volumes) add("--volume", v);
  if (!f.workdir.empty()) add("--workdir", f.workdir);
  if (f.private_workdir != "auto") add("--private-workdir", f.private_workdir);
  add("--out", out);
  words.push_back("--resume");
  if (f.job.empty()) {
    return f.hydra.CommandLine(program, "sweep", command, words);
  }
  std::string line = ShellQuote(program) + " sweep " + ShellQuote(f.job);
  for (const std::string& w : words) line += " " + ShellQuote(w);
  return line;
}

// Short forms for the table; trials.csv and trials.json keep every digit.
std::string Short(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

std::string Params(const TrialRecord& t) {
  std::string s;
  for (const ParameterValue& v : t.parameters) {
    s += (s.empty() ? "" : " ") + v.id + "=" +
         (v.type == ParameterType::kDouble ? Short(v.number) : v.Format());
  }
  return s;
}

// One column per objective (the study's metrics), as wide as its name.
std::string MetricColumns(const SweepResult& r, const TrialRecord* t) {
  std::string out;
  for (size_t i = 0; i < r.objectives.size(); ++i) {
    std::string text = r.objectives[i].id;
    if (t) {
      bool several = r.objectives.size() > 1;
      std::optional<double> v =
          several ? (i < t->values.size() ? std::optional(t->values[i])
                                          : std::nullopt)
                  : t->metric;
      text = v ? Short(*v) : "-";
    }
    char buf[64];
    std::snprintf(
        buf, sizeof(buf), "  %*s",
        static_cast<int>(std::max<size_t>(10, r.objectives[i].id.size())),
        text.c_str());
    out += buf;
  }
  return out;
}

// `front` marks a trial on the Pareto front of several objectives.
std::string Row(const SweepResult& r, const TrialRecord& t,
                bool front = false) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s%4lld  %-10s", front ? "*" : " ",
                static_cast<long long>(t.id), TrialStateName(t.state));
  std::string row = buf + MetricColumns(r, &t);
  std::snprintf(buf, sizeof(buf), "  %7.1fs  ", t.seconds);
  row += buf + Params(t);
  if (!t.reason.empty()) row += "  (" + t.reason + ")";
  return row;
}

std::string Header(const SweepResult& r) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%5s  %-10s", "trial", "state");
  std::string header = buf + MetricColumns(r, nullptr);
  std::snprintf(buf, sizeof(buf), "  %8s  %s", "time", "parameters");
  return header + buf;
}

// The terminal's columns: the window's (TIOCGWINSZ, ioctl_tty(2)), else
// $COLUMNS, else 80. The window first: a shell exports a COLUMNS that goes
// stale when the window is resized.
int TerminalWidth() {
  struct winsize ws = {};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    return ws.ws_col;
  }
  const char* columns = std::getenv("COLUMNS");
  int n = columns ? std::atoi(columns) : 0;
  return n > 0 ? n : 80;
}

// `line` cut to `width` columns (a UTF-8 character is one), its end
// marked "...": a row the terminal wrapped would take two lines, and the
// redraw, which moves the cursor up one line per row, would overwrite the
// wrong ones.
std::string Fit(const std::string& line, int width) {
  std::vector<size_t> starts;  // byte offset of each character
  for (size_t i = 0; i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) {
      starts.push_back(i);
    }
  }
  if (starts.size() <= static_cast<size_t>(width)) return line;
  size_t keep = width > 3 ? width - 3 : 0;
  return line.substr(0, starts[keep]) + std::string("...").substr(0, width);
}

// The live view: a redrawn table on a terminal, else one line per change.
class Progress {
 public:
  explicit Progress(bool tty) : tty_(tty) {}

  void Update(const SweepResult& r, const TrialRecord* changed) {
    if (!tty_) {
      if (!changed) return;
      if (!header_done_) {
        std::cout << Header(r) << "\n";
        header_done_ = true;
      }
      std::cout << Row(r, *changed) << std::endl;
      return;
    }
    // Active trials and the most recent ones, so the table stays small.
    std::vector<const TrialRecord*> rows;
    for (const TrialRecord& t : r.trials) rows.push_back(&t);
    const size_t kMaxRows = 20;
    if (rows.size() > kMaxRows) {
      std::vector<const TrialRecord*> keep;
      for (size_t i = 0; i < rows.size(); ++i) {
        if (rows[i]->state == TrialState::kActive ||
            rows[i]->state == TrialState::kStopping ||
            i + kMaxRows / 2 >= rows.size()) {
          keep.push_back(rows[i]);
        }
      }
      rows = keep;
    }
    // Redraw in place: ESC [ n A moves the cursor up n rows (CUU) and
    // ESC [ J erases from it to the end of the screen (ED), as ECMA-48 and
    // console_codes(4) define them; every terminal emulator has both.
    std::string out;
    if (lines_ > 0) out += "\x1b[" + std::to_string(lines_) + "A\x1b[J";
    int width = TerminalWidth();
    out += Fit(Header(r), width) + "\n";
    for (const TrialRecord* t : rows) out += Fit(Row(r, *t), width) + "\n";
    lines_ = static_cast<int>(rows.size()) + 1;
    std::cout << out << std::flush;
  }

 private:
  bool tty_;
  bool header_done_ = false;
  int lines_ = 0;
};

// The job: the spec file, or the Hydra sweep written as one (job_writer.h),
// whose sampler seed is the sweep's unless --seed says otherwise.
StatusOr<JobSpec> LoadJob(SweepFlags* flags,
                          const std::vector<std::string>& command,
                          std::vector<Diagnostic>* diags) {
  if (flags->hydra.config_path.empty()) {
    if (flags->positional.size() != 1) {
      return Status::InvalidArgument(
          "give one job spec (trialshim sweep JOB.yaml), or a Hydra sweep: "
          "trialshim sweep --config-path DIR --config-name NAME "
          "[OVERRIDE...] -- COMMAND...");
    }
    flags->job = flags->positional[0];
    return LoadJobSpecFile(flags->job, diags);
  }
  if (command.empty()) {
    return Status::InvalidArgument(
        "no COMMAND after '--' (the trainer each trial runs)");
  }
  flags->hydra.overrides = flags->positional;
  tuning::HydraSweepRequest request = flags->hydra.Request(command);
  // Only marks the trials' AIP_*_DIR as wanted: they go under --out. A
  // gs:// URI, as Vertex (and so the writer) takes; nothing reads it.
  // Vertex sets AIP_MODEL_DIR and the others only when the job has a
  // baseOutputDirectory (CustomJobSpec.base_output_directory,
  // custom_job.proto; docs/vertex-values.md), and a Hydra sweep's trials
  // should get them.
  request.output_dir = "gs://trialshim-sweep/out";
  TRIALSHIM_ASSIGN_OR_RETURN(tuning::HydraSweepJob written,
                             tuning::HydraSweepToJob(request));
  for (const std::string& w : written.warnings) {
    diags->push_back({Diagnostic::Severity::kWarning, {}, w});
  }
  // The Optuna sweeper's hydra.sweeper.sampler.seed, so that the same
  // sweep draws the same trials here as under Hydra's -m; 0: none given.
  if (flags->seed == 0) flags->seed = written.seed;
  return std::move(written.spec);
}

// The sweep's options, from the command line's flags.
SweepOptions OptionsOf(const SweepFlags& flags,
                       const std::vector<tuning::Volume>& volumes) {
  SweepOptions options;
  options.parallel = flags.parallel;
  options.max_trials = flags.max_trials;
  // study.proto's Algorithm: "bayesian" is ALGORITHM_UNSPECIFIED, "the
  // default algorithm used by Vertex AI for hyperparameter tuning", which
  // Vertex runs as Bayesian optimisation (docs/search.md, bayesian.h).
  if (flags.algorithm == "grid") options.algorithm = Algorithm::kGridSearch;
  if (flags.algorithm == "random") options.algorithm = Algorithm::kRandomSearch;
  if (flags.algorithm == "bayesian") options.algorithm = Algorithm::kUnspecified;
  options.seed = flags.seed;
  options.out_dir = flags.out;
  if (options.out_dir.empty()) {
    options.out_dir =
        "sweeps/" + (flags.job.empty()
                         ? flags.hydra.config_name
                         : std::filesystem::path(flags.job).stem().string());
  }
  options.resume = flags.resume;
  options.trial_timeout_seconds = flags.timeout;
  options.kill_grace_seconds = flags.grace;
  options.stop = &g_stop;
  options.workdir = flags.workdir;
  options.volumes = volumes;
  if (flags.private_workdir == "overlay")
    options.workdir_view = tuning::WorkdirView::kOverlay;
  if (flags.private_workdir == "links")
    options.workdir_view = tuning::WorkdirView::kLinks;
  return options;
}

// The leaderboard, the notes and where the results are; the number of
// trials that succeeded. On a terminal (`width` > 0) rows are cut like the
// live table's: the whole values are in trials.csv, named below.
size_t PrintLeaderboard(const SweepResult& r, int width) {
  auto fit = [width](const std::string& line) {
    return width > 0 ? Fit(line, width) : line;
  };
  std::string goals;
  for (const tuning::Objective& o : r.objectives) {
    goals += (goals.empty() ? "" : ", ") + std::string(GoalName(o.goal)) + " " +
             o.id;
  }
  std::vector<int> ranks = r.ParetoRanks();
  std::cout << "\nleaderboard ("
            << (ranks.empty() ? goals
                              : "the Pareto front first, marked *: " + goals)
            << "):\n"
            << fit(Header(r)) << "\n";
  size_t shown = 0, succeeded = 0;
  for (size_t i : r.Leaderboard()) {
    succeeded += r.trials[i].state == TrialState::kSucceeded;
    bool front = !ranks.empty() && ranks[i] == 0;  // the whole front shows
    if (shown < 10 || front) {
      std::cout << fit(Row(r, r.trials[i], front)) << "\n";
      ++shown;
    }
  }
  if (shown < r.trials.size()) {
    std::cout << "  ... " << r.trials.size() - shown << " more\n";
  }
  for (const std::string& n : r.notes) std::cout << "note: " << n << "\n";
  std::cout << "results: " << r.out_dir << "/trials.csv, trials.json, "
            << "report.html\n";
  return succeeded;
}

int RunSweepCommand(const std::string& program, SweepFlags flags,
                    const std::vector<std::string>& command) {
  std::vector<Diagnostic> diags;
  StatusOr<JobSpec> job = LoadJob(&flags, command, &diags);
  if (!job.ok()) {
    std::cerr << "trialshim sweep: error: " << job.status().message() << "\n";
    return ExitCodeFor(job.status());
  }
  std::vector<tuning::Volume> volumes;
  for (const std::string& v : flags.volumes) {
    StatusOr<tuning::Volume> volume = tuning::ParseVolume(v);
    if (!volume.ok()) {
      std::cerr << "trialshim sweep: error: " << volume.status().message()
                << "\n";
      return 2;
    }
    volumes.push_back(*volume);
  }
  if (!flags.no_check) {
    CheckOptions check;
    check.workdir = flags.workdir;
    check.volumes = volumes;
    check.local_run = true;
    CheckJobSpec(*job, check, &diags);
  }
  std::set<std::string> printed;  // a written job's warnings, checked again
  for (const Diagnostic& d : diags) {
    if (d.severity != Diagnostic::Severity::kNote &&
        printed.insert(d.ToString()).second) {
      std::cerr << d.ToString() << "\n";
    }
  }
  if (HasErrors(diags)) {
    std::cerr << "trialshim sweep: the job spec has errors; no trial was "
                 "started\n";
    return 2;
  }

  SweepOptions options = OptionsOf(flags, volumes);
  options.on_warning = [](const std::string& text) {
    std::cerr << "trialshim sweep: warning: " << text << std::endl;
  };
  Progress progress(isatty(STDOUT_FILENO));
  options.on_progress = [&](const SweepResult& r, const TrialRecord* t) {
    progress.Update(r, t);
  };

  // The sweep loop's poll() fails with EINTR on the signal, SA_RESTART or
  // not (signal(7)), so a stop is acted on at once (sweep_loop.cc).
  struct sigaction sa = {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  // SIGHUP too: a closed terminal or ssh session must not leave the trials
  // running with no sweep to record them.
  constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction old[3];
  for (int i = 0; i < 3; ++i) sigaction(kStopSignals[i], &sa, &old[i]);
  std::cout << "sweep of "
            << (flags.job.empty()
                    ? flags.hydra.config_path + "/" + flags.hydra.config_name
                    : flags.job)
            << " -> " << options.out_dir << "/" << std::endl;
  StatusOr<SweepResult> result = RunSweep(*job, options);
  for (int i = 0; i < 3; ++i) sigaction(kStopSignals[i], &old[i], nullptr);
  if (!result.ok()) {
    std::cerr << "trialshim sweep: error: " << result.status().message()
              << "\n";
    return ExitCodeFor(result.status());
  }

  const SweepResult& r = *result;
  const size_t succeeded =
      PrintLeaderboard(r, isatty(STDOUT_FILENO) ? TerminalWidth() : 0);
  if (r.stopped) {
    std::cout << "stopped; continue with: "
              << ResumeCommand(program, flags, command, r.out_dir) << "\n";
    // A shell's status for a command killed by signal N (bash(1), "EXIT
    // STATUS": 128+N), so scripts tell a stopped sweep from a failed one.
    int sig = g_stop_signal.load();
    return 128 + (sig ? sig : SIGINT);
  }
  if (r.failed) return 1;
  if (succeeded == 0) {
    std::cerr << "trialshim sweep: no trial succeeded\n";
    return 1;
  }
  return 0;
}

}  // namespace

void AddSweepCommand(CLI::App& app, const std::vector<std::string>* command,
                     int* exit_code) {
  auto flags = std::make_shared<SweepFlags>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Run a Vertex HyperparameterTuningJob YAML locally, trial by trial, "
      "with the arguments and environment Vertex would give; or a Hydra "
      "sweep: trialshim sweep --config-path DIR --config-name NAME "
      "[OVERRIDE...] -- COMMAND...");
  cmd->add_option("job", flags->positional,
                  "The job spec YAML; with --config-path, the Hydra sweep's "
                  "overrides (as after -m)");
  flags->hydra.Add(cmd, /*required=*/false);
  AddOption(cmd, OptionId::kParallel, &flags->parallel)->check(Bounded(1));
  AddOption(cmd, OptionId::kMaxTrials, &flags->max_trials)
      ->check(Bounded<int64_t>(1));
  AddOption(cmd, OptionId::kAlgorithm, &flags->algorithm)
      ->check(CLI::IsMember({"grid", "random", "bayesian"}));
  AddOption(cmd, OptionId::kSeed, &flags->seed)->capture_default_str();
  AddOption(cmd, OptionId::kOut, &flags->out);
  AddOption(cmd, OptionId::kResume, &flags->resume);
  AddOption(cmd, OptionId::kTimeout, &flags->timeout)->check(Bounded(0.0));
  AddOption(cmd, OptionId::kSweepGrace, &flags->grace)
      ->check(Bounded(0.0))
      ->capture_default_str();
  AddOption(cmd, OptionId::kNoCheck, &flags->no_check);
  AddOption(cmd, OptionId::kVolume, &flags->volumes);
  AddOption(cmd, OptionId::kWorkdir, &flags->workdir)
      ->check(Existing(/*directory=*/true));
  AddOption(cmd, OptionId::kPrivateWorkdir, &flags->private_workdir)
      ->check(CLI::IsMember({"auto", "overlay", "links"}))
      ->capture_default_str();
  cmd->callback([cmd, flags, command, exit_code] {
    // CLI11 names the app by argv[0] as it parses.
    *exit_code =
        RunSweepCommand(cmd->get_parent()->get_name(), *flags, *command);
  });
}

}  // namespace trialshim::cli
