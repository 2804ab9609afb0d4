// The supervisor of a contained Subprocess (SubprocessOptions::contain): a
// process between us and the child that holds the child's whole process
// tree. Private to base; subprocess.h documents what callers see.
//
// It runs in a fork of the caller that never execs, so everything here is
// async-signal-safe: system calls on buffers prepared before the fork, no
// allocation, no locks, no stdio.
#ifndef TRIALSHIM_BASE_SRC_TREE_SUPERVISOR_H_
#define TRIALSHIM_BASE_SRC_TREE_SUPERVISOR_H_

#include <sys/types.h>

#include <cstdint>

namespace trialshim::internal {

// What the supervisor and its parent say to each other over one
// SOCK_STREAM socket pair. The parent writes one byte per request: a signal
// for every process of the tree outside the child's process group (the
// parent signals the group itself; with kTreeRequestWithGroup, for every
// process of the tree). The supervisor writes the child's wait
// status (an int) once the child has ended. End of file either way: the
// other side is gone (the parent died or dropped the Subprocess; the
// supervisor exited, the tree being gone).
// A request byte with this bit set asks for the child's process group too:
// sent once the child is reaped, when the parent may no longer signal the
// group by its id (subprocess.h, Kill). Signal numbers stay below it.
inline constexpr unsigned char kTreeRequestWithGroup = 0x80;

struct TreePlan {
  int channel = -1;          // the supervisor's end of the socket pair
  pid_t leader = -1;         // the child, in a process group of its own
  int death_signal = 0;      // for the tree when the parent is gone
  int64_t death_grace_ms = 0;  // then SIGKILL
};

// Makes this process (a fresh fork) the tree's holder before the child is
// forked: its own process group, a child subreaper, every signal blocked.
void BecomeTreeSupervisor();

// Closes every descriptor of this process but `keep` (n of them, -1 ones
// ignored); with `cloexec_only`, only the close-on-exec ones (what the
// child's exec would close anyway).
void CloseDescriptorsExcept(const int* keep, int n, bool cloexec_only);

// Runs the supervisor until the tree is gone, then exits (status 0).
[[noreturn]] void SuperviseTree(const TreePlan& plan);

}  // namespace trialshim::internal

#endif  // TRIALSHIM_BASE_SRC_TREE_SUPERVISOR_H_
