// Directories that two runs could share are locked.
//
// Two sweeps on one --out would both run every trial; two trainers on one
// checkpoint directory would resume from each other's checkpoints; an
// orphaned trial left by a killed sweep would train in the directory a
// resumed sweep hands to the trial's re-run. A DirectoryLock is an advisory
// flock(2) on "<dir>/.trialshim.lock" that records who holds it (pid and
// command line), so the second run refuses with a message that names the
// first one. flock is released by the kernel when the last descriptor of the
// lock closes, so a run killed with SIGKILL never leaves a stale lock; a
// lock made inheritable (Options::inherit) is held on by the children it was
// passed to, which is how a trial's directory stays locked for as long as
// the trial runs, even after its sweep died.
//
// Advisory: it keeps trialshim's own runs apart, nothing else. NFS and some
// FUSE mounts emulate flock locally or not at all (docs/limits.md).
#ifndef TRIALSHIM_BASE_LOCK_H_
#define TRIALSHIM_BASE_LOCK_H_

#include <chrono>
#include <string>

#include "trialshim/base/status.h"

namespace trialshim {

class DirectoryLock {
 public:
  struct Options {
    // Keep the descriptor open across exec (no O_CLOEXEC), so the children
    // started while the lock is held hold it too. Default: ours alone.
    bool inherit = false;
    // How long to wait for a held lock to be released before refusing: a
    // holder that is being killed (the tree of a trial whose sweep died)
    // lets go a moment later. Default: 0, refuse at once.
    std::chrono::milliseconds wait{0};
  };

  // Locks `dir` (which must exist), waiting at most Options::wait. A
  // directory locked by another process is kUnavailable, naming `dir`, the holder's pid and
  // command line; other failures are IOError naming the lock file.
  static StatusOr<DirectoryLock> Acquire(const std::string& dir,
                                         Options options);
  static StatusOr<DirectoryLock> Acquire(const std::string& dir) {
    return Acquire(dir, Options());
  }

  DirectoryLock(DirectoryLock&& other) noexcept;
  DirectoryLock& operator=(DirectoryLock&& other) noexcept;
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  ~DirectoryLock();  // releases the lock (our descriptor, not the children's)

  // The lock file, "<dir>/.trialshim.lock".
  const std::string& path() const { return path_; }
  // The descriptor, for a caller that hands it to a child explicitly.
  int fd() const { return fd_; }

 private:
  DirectoryLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

  std::string path_;
  int fd_ = -1;
};

// The name of the lock file inside a locked directory.
inline constexpr char kLockFileName[] = ".trialshim.lock";

}  // namespace trialshim

#endif  // TRIALSHIM_BASE_LOCK_H_
