// One trial started: its directory (new, or the one a --resume reruns,
// checked before the record is rewritten), locked for the trial; its
// environment as Vertex gives it (CLOUD_ML_*, CLUSTER_SPEC, AIP_*); its
// working directory (a private overlay, or links where the kernel refuses
// one); and its process, contained, so stopping it stops all it started.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "sweeper.h"
#include "trialshim/base/file.h"
#include "trialshim/base/strings.h"

extern char** environ;

namespace trialshim::tuning::internal {

namespace fs = std::filesystem;

namespace {

// Appends `text` to a trial's log, a file of ours (OpenOwnFile).
Status AppendToLog(const std::string& log, std::string_view text) {
  TRIALSHIM_ASSIGN_OR_RETURN(ScopedFd fd,
                             OpenOwnFile(log, O_WRONLY | O_APPEND | O_CREAT));
  while (!text.empty()) {
    ssize_t n = write(fd.get(), text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IOErrorFor("write", log, errno);
    text.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

// The view trial directory `dir` ran in: an overlay leaves .overlay/
// beside work/, the links a work/ alone; `otherwise` where it never ran.
WorkdirView RanIn(const std::string& dir, WorkdirView otherwise) {
  struct stat st;
  if (lstat((dir + "/.overlay").c_str(), &st) == 0)
    return WorkdirView::kOverlay;
  if (lstat((dir + "/work").c_str(), &st) == 0) return WorkdirView::kLinks;
  return otherwise;
}

}  // namespace

// Starts trial `id` in its directory: a new one, or, for a trial a
// resume reruns, the one its first run left (checkpoints and all), as
// Vertex restarts a trial with the same AIP_CHECKPOINT_DIR.
Status Sweeper::Start(int64_t id) {
  TrialRecord t;
  t.id = id;
  TRIALSHIM_ASSIGN_OR_RETURN(t.parameters, Values(id));
  auto prior = prior_.find(id);
  double prior_seconds = 0;
  if (prior != prior_.end()) {
    t.measurements = std::move(prior->second.measurements);
    prior_seconds = prior->second.seconds;
    prior_.erase(prior);
  }
  std::string dir = out_abs_ + "/" + std::to_string(id);
  std::string log = dir + "/log";
  // A rerun's directory is one the record describes already: what the
  // trial will use of it (its lock, its log) is checked before the record
  // is rewritten, so a directory that can not be used (a planted link, a
  // FIFO as its log) stops the sweep with the record as it was.
  struct stat st;
  const bool rerun = lstat(dir.c_str(), &st) == 0;
  if (rerun && !S_ISDIR(st.st_mode)) {
    return Status::IOError("cannot use trial directory " + dir +
                           ": it is not a directory (a symbolic link?)");
  }
  std::optional<DirectoryLock> lock;
  if (rerun) TRIALSHIM_RETURN_IF_ERROR(PrepareTrialDirectory(dir, &lock));
  t.state = TrialState::kActive;
  t.start_time = Now();
  t.seconds = prior_seconds;
  result_.trials.push_back(std::move(t));
  size_t index = result_.trials.size() - 1;
  TrialRecord& rec = result_.trials[index];
  // A new trial is recorded before its directory exists, so that every
  // trial directory is one the record describes (a resume refuses any
  // other), and a Bayesian suggestion, which depends on the trials before
  // it, is rerun with these very values.
  TRIALSHIM_RETURN_IF_ERROR(
      WriteFileDurably(options_.out_dir + "/trials.json", RecordJson()));
  if (!rerun) TRIALSHIM_RETURN_IF_ERROR(PrepareTrialDirectory(dir, &lock));
  TRIALSHIM_RETURN_IF_ERROR(KeepEarlierReports(dir, &rec));
  if (job_.base_output_directory) {
    for (const char* sub : {"model", "checkpoints", "logs"}) {
      TRIALSHIM_RETURN_IF_ERROR(MakeDirectories(dir + "/" + sub));
    }
  }
  std::vector<std::string> args = argv_;
  for (const ParameterValue& v : rec.parameters) args.push_back(v.Arg());
  if (rerun) {
    TRIALSHIM_RETURN_IF_ERROR(
        AppendToLog(log, "--- trialshim sweep: trial " + std::to_string(id) +
                             " started again in this directory ---\n"));
  }
  SubprocessOptions spawn;
  spawn.program = program_;
  spawn.env = Environment(rec, dir);
  // A rerun keeps the view its first run had (RanIn), whatever this sweep's
  // --private-workdir: the other would mix links and an overlay's files.
  const WorkdirView view = rerun ? RanIn(dir, view_) : view_;
  TRIALSHIM_RETURN_IF_ERROR(GiveWorkdir(dir, view, &spawn));
  spawn.in = Stdio::Null();
  // Opened as a file of ours (OwnFile): never through a link, never
  // blocking on a FIFO.
  spawn.out = Stdio::OwnFile(log, /*append=*/true);
  spawn.err = Stdio::SameAsStdout();
  // Its own process group (the default), under a supervisor that holds
  // its whole tree (contain): stopping a trial stops all it started, even
  // what left its group. And SIGKILL to that tree when the sweep dies
  // (SIGHUP, kill -9): SIGTERM can be caught or ignored by a trainer, and
  // an orphaned process would keep training in a directory --resume reuses.
  spawn.contain = true;
  spawn.parent_death_signal = SIGKILL;
  Running r;
  Status started = r.proc.Start(args, spawn);
  if (!started.ok() && r.proc.private_overlay_failed() &&
      options_.workdir_view == WorkdirView::kAuto && !rerun) {
    FallBackToLinks(started.message());
    TRIALSHIM_RETURN_IF_ERROR(GiveWorkdir(dir, view_, &spawn));
    started = r.proc.Start(args, spawn);
  }
  if (!started.ok()) {
    if (r.proc.start_failure_exit_code() == 1) return started;
    TRIALSHIM_RETURN_IF_ERROR(
        AppendToLog(log, "trialshim sweep: " + started.message() + "\n"));
    rec.exit_code = r.proc.start_failure_exit_code();
    return Fail(index, started.message());
  }
  r.index = index;
  r.earlier = rec.measurements;
  // Elapsed time counts the earlier runs too, as Vertex's elapsedDuration.
  r.log.emplace(dir + "/output.metrics", result_.metric_id,
                rec.start_time - prior_seconds);
  r.pidfd = static_cast<int>(syscall(SYS_pidfd_open, r.proc.pid(), 0));
  r.started = Clock::now() - std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(prior_seconds));
  if (timeout_ > 0) {
    r.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(timeout_));
  }
  running_.push_back(std::move(r));
  return Changed(index);
}

std::vector<std::string> Sweeper::Environment(const TrialRecord& t,
                                              const std::string& dir) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  // Vertex sets these only with a baseOutputDirectory; do not leak ours.
  for (const char* k :
       {"AIP_MODEL_DIR", "AIP_CHECKPOINT_DIR", "AIP_TENSORBOARD_LOG_DIR"}) {
    env.erase(k);
  }
  for (const auto& [k, v] : env_) env[k] = v;
  env["PWD"] = "";  // the trial's working directory (GiveWorkdir)
  std::string id = std::to_string(t.id);
  env["CLOUD_ML_TRIAL_ID"] = id;
  env["CLOUD_ML_JOB_ID"] = result_.job_id;
  env["CLOUD_ML_HP_METRIC_FILE"] = dir + "/output.metrics";
  env["CLUSTER_SPEC"] =
      nlohmann::json{
          {"cluster", {{"workerpool0", {"localhost:2222"}}}},
          {"environment", "cloud"},
          {"task", {{"type", "workerpool0"}, {"index", 0}, {"trial", id}}}}
          .dump();
  if (job_.base_output_directory) {
    env["AIP_MODEL_DIR"] = dir + "/model/";
    env["AIP_CHECKPOINT_DIR"] = dir + "/checkpoints/";
    env["AIP_TENSORBOARD_LOG_DIR"] = dir + "/logs/";
  }
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

// The trial's working directory (container.h): the working directory
// itself through a private overlay, or <dir>/work/ linking its entries.
// Sets spawn's cwd, PWD and overlay.
Status Sweeper::GiveWorkdir(const std::string& dir, WorkdirView view,
                            SubprocessOptions* spawn) {
  std::string cwd = dir + "/work";
  spawn->private_overlay.reset();
  if (view == WorkdirView::kLinks) {
    std::vector<std::string> exclude;
    if (!out_tree_.empty()) exclude.push_back(out_tree_);
    TRIALSHIM_RETURN_IF_ERROR(container_->LinkWorkdir(cwd, exclude));
  } else {
    TRIALSHIM_ASSIGN_OR_RETURN(spawn->private_overlay,
                               container_->TrialOverlay(dir, out_abs_));
    cwd = container_->workdir();
  }
  spawn->cwd = cwd;
  for (std::string& e : *spawn->env) {
    if (StartsWith(e, "PWD=")) e = "PWD=" + cwd;  // for shells
  }
  return Status::Ok();
}

// overlayfs leaves its work directory (<id>/.overlay/work) mode 000:
// opened to its owner once the trial is gone, so that `rm -rf` of a
// sweep works without root. Best effort (a link-farm trial has none).
void Sweeper::OpenOverlayWorkdir(int64_t id) const {
  std::string work = out_abs_ + "/" + std::to_string(id) + "/.overlay/work";
  struct stat st;
  if (lstat(work.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    (void)chmod(work.c_str(), 0700);
  }
}

// Where the kernel refuses the overlay: links for this trial and every
// later one, and the user told once what is then shared.
void Sweeper::FallBackToLinks(const std::string& why) {
  view_ = WorkdirView::kLinks;
  const std::string& w = container_->workdir();
  std::string text =
      why + "; so each trial runs in <out>/<id>/work/ instead, linking " +
      "every entry of " + w +
      " but outputs/, multirun/ and --out: what a trial writes inside a "
      "linked directory (logs/, data/ ...) or through an absolute path "
      "into " +
      w +
      " reaches your files and the other trials "
      "(--private-workdir links chooses this without this warning)";
  if (options_.on_warning) {
    options_.on_warning(text);
  } else {
    result_.notes.push_back(text);
  }
}

// A rerun's metric file is from its earlier run: its reports (when the
// record has none, as after kill -9 of the sweep) join the trial's, and
// the file moves aside to output.metrics.N, as a restarted trainer's
// cloudml-hypertune starts a new one.
Status Sweeper::KeepEarlierReports(const std::string& dir, TrialRecord* t) {
  std::string file = dir + "/output.metrics";
  if (!fs::exists(file)) return Status::Ok();
  if (t->measurements.empty()) {
    MeasurementLog earlier(file, result_.metric_id, t->start_time - t->seconds);
    earlier.Update(/*force=*/true);
    t->measurements = earlier.measurements();
  }
  int n = 1;
  while (fs::exists(file + "." + std::to_string(n))) ++n;
  std::error_code ec;
  fs::rename(file, file + "." + std::to_string(n), ec);
  if (ec) return IOErrorFor("rename", file, ec.value());
  return Status::Ok();
}

// Creates a trial's directory (a rerun keeps what is in it) and locks it
// for the trial: the lock is inherited by the trial's processes and held
// until the last of them exits. A killed sweep's trials are being killed
// by their supervisors (contain) when a --resume starts, so it waits a
// moment; a process that outlived that keeps its directory from the
// --resume (kUnavailable names it).
StatusOr<DirectoryLock> Sweeper::LockTrialDirectory(const std::string& dir) {
  TRIALSHIM_RETURN_IF_ERROR(MakeDirectories(dir));
  return DirectoryLock::Acquire(dir, {/*inherit=*/true,
                                      /*wait=*/std::chrono::seconds(10)});
}

// Locks a trial's directory (`*lock`, ours until the trial has started
// with it; the trial holds it after) and checks that its log can be
// appended to: a plain file of the directory or none (OpenOwnFile).
Status Sweeper::PrepareTrialDirectory(const std::string& dir,
                                      std::optional<DirectoryLock>* lock) {
  TRIALSHIM_ASSIGN_OR_RETURN(DirectoryLock held, LockTrialDirectory(dir));
  lock->emplace(std::move(held));
  return OpenOwnFile(dir + "/log", O_WRONLY | O_APPEND | O_CREAT).status();
}

}  // namespace trialshim::tuning::internal
