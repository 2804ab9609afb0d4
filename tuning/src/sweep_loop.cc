// The sweep's loop: keeps up to `parallel` trials running, waits for one
// to exit, a deadline or a progress tick, reaps what exited, follows the
// metrics the running ones report (asking the early-stopping rule), and
// stops them all on a stop request, a failed job or a record that could
// not be written. SIGTERM first, SIGKILL after the grace period.
#include <poll.h>
#include <signal.h>

#include "sweeper.h"

namespace trialshim::tuning::internal {

Status Sweeper::Loop() {
  int64_t next_id = 1;
  bool stopping = false;
  auto last_tick = Clock::now();
  while (true) {
    if (!stopping && (StopLevel() > 0 || result_.failed || !error_.ok())) {
      stopping = true;
      if (StopLevel() > 0) result_.stopped = true;
      for (Running& r : running_) Terminate(&r, /*stop=*/true);
    }
    if (StopLevel() > 1) {
      for (Running& r : running_) Kill(&r);
    }
    while (!stopping && static_cast<int>(running_.size()) < parallel_) {
      while (next_id <= max_trials_ && Done(next_id)) ++next_id;
      if (next_id > max_trials_) break;
      Note(Start(next_id++));
      if (result_.failed || !error_.ok()) break;
    }
    if (running_.empty()) break;

    Wait(last_tick);
    Reap();
    Follow();
    auto now = Clock::now();
    for (Running& r : running_) {
      if (!r.terminated && now >= r.deadline) {
        r.timed_out = true;
        Terminate(&r, /*stop=*/false);
      }
      if (now >= r.kill_at) Kill(&r);
    }
    if (options_.on_progress &&
        now - last_tick >=
            std::chrono::duration<double>(options_.tick_seconds)) {
      last_tick = now;
      for (Running& r : running_) {
        result_.trials[r.index].seconds =
            std::chrono::duration<double>(now - r.started).count();
      }
      options_.on_progress(result_, nullptr);
    }
  }
  std::sort(
      result_.trials.begin(), result_.trials.end(),
      [](const TrialRecord& a, const TrialRecord& b) { return a.id < b.id; });
  if (!error_.ok()) {
    return error_.WithPrefix("the sweep stopped its trials (" +
                             options_.out_dir +
                             "/trials.json keeps the trials recorded before)");
  }
  if (result_.failed) {
    result_.notes.push_back("the job failed: " + std::to_string(failed_) +
                            " trials failed (maxFailedTrialCount " +
                            std::to_string(max_failed_) + ")");
  }
  return Status::Ok();
}

void Sweeper::Terminate(Running* r, bool stop) {
  if (stop) r->stop_requested = true;
  if (r->terminated) return;
  r->terminated = true;
  r->proc.Kill(SIGTERM, /*group=*/true).IgnoreError();
  r->kill_at = Clock::now() +
               std::chrono::duration_cast<Clock::duration>(
                   std::chrono::duration<double>(options_.kill_grace_seconds));
}

void Sweeper::Kill(Running* r) {
  if (r->killed) return;
  r->killed = true;
  r->kill_at = Clock::time_point::max();
  r->proc.Kill(SIGKILL, /*group=*/true).IgnoreError();
}

// Sleeps until a child may have exited, a deadline or a tick is due.
void Sweeper::Wait(Clock::time_point last_tick) {
  auto now = Clock::now();
  auto wake =
      last_tick + std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(options_.tick_seconds));
  for (const Running& r : running_) {
    wake = std::min({wake, r.deadline, r.kill_at});
  }
  // A stop request arrives as a signal, which interrupts poll(), but one
  // that lands just before poll() is only seen at the next wake-up.
  double ms = std::chrono::duration<double, std::milli>(wake - now).count();
  int timeout = static_cast<int>(std::clamp(ms, 0.0, 200.0));
  std::vector<pollfd> fds;
  bool all_fds = true;
  for (const Running& r : running_) {
    if (r.pidfd < 0)
      all_fds = false;
    else
      fds.push_back({r.pidfd, POLLIN, 0});
  }
  if (!all_fds) timeout = std::min(timeout, 10);
  poll(fds.data(), fds.size(), timeout);
}

void Sweeper::Reap() {
  for (size_t i = 0; i < running_.size();) {
    if (running_[i].proc.Poll()) {
      Running r = std::move(running_[i]);
      running_.erase(running_.begin() + i);
      OpenOverlayWorkdir(result_.trials[r.index].id);
      Finish(r, r.proc.wait_status());
    } else {
      ++i;
    }
  }
}

// Reads what the running trials reported since the last call and asks
// the stopping rule about each trial that reported something new.
void Sweeper::Follow() {
  for (Running& r : running_) {
    if (!r.log->Update()) continue;
    TrialRecord& t = result_.trials[r.index];
    t.measurements = r.Measurements();
    t.reports = static_cast<int>(t.measurements.size());
    if (job_.stopping == StoppingRule::kNone || r.terminated) continue;
    StoppingDecision d = ShouldStop(job_.stopping, job_.stopping_use_elapsed,
                                    result_.goal, completed_, t.measurements);
    if (!d.stop) continue;
    t.state = TrialState::kStopping;
    t.stopped_early = true;
    t.reason = "stopped early: " + d.reason;
    Terminate(&r, /*stop=*/false);
    Note(Changed(r.index));
  }
}

}  // namespace trialshim::tuning::internal
