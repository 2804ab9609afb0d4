// Subprocess: the one way trialshim starts a child process (the shim's
// supervisor, `trialshim launch`, the sweep's trials, the tests).
//
// What the child starts with, whoever starts it:
//  - Signals: an empty signal mask, and every signal at its default
//    disposition. Handlers are reset by exec anyway; ignored signals would
//    survive it, so they are reset too (a trainer started from a supervisor
//    that ignores SIGPIPE or SIGINT must still die of them), except those
//    listed in SubprocessOptions::keep_ignored.
//  - Process group: by default a new group whose id is the child's pid, set
//    in the child and in the parent (so Kill(sig, /*group=*/true) works as
//    soon as Start returns). With new_process_group = false it stays in ours.
//  - Parent death: with parent_death_signal set, the kernel sends that signal
//    to the child when the thread that started it ends (PR_SET_PDEATHSIG).
//    If we died between fork and prctl, the child sends it to itself. This
//    reaches the child only, not what it started: for that, contain.
//  - Containment (SubprocessOptions::contain): the child runs under a small
//    supervisor ("trialshim-tree", a fork of ours that never execs, in a
//    process group of its own) that is a child subreaper, so everything the
//    child starts stays in its tree, even a process that leaves its group
//    or session (setsid) or double-forks. Kill(sig, /*group=*/true) then
//    reaches the child's group at once and, through the supervisor, every
//    other process of the tree. When we are gone (any death, kill -9
//    included) or the Subprocess is destroyed, the supervisor sends
//    parent_death_signal (SIGKILL if 0) to the whole tree, SIGKILL after
//    parent_death_grace, and exits once the tree is gone. The child gets
//    SIGKILL if the supervisor dies. pid(), Poll(), Wait() and the exit
//    status are the child's own; the supervisor is not our child (it is
//    adopted by init or the nearest subreaper), so nothing waits for it.
//    What survives: only SIGKILL of the supervisor itself (by its pid) lets
//    the child's descendants outlive the tree (the child dies with it).
//  - Environment: ours, or exactly SubprocessOptions::env.
//  - Program: a name without '/' is searched in the PATH of the child's
//    environment, as execvp does (FindProgram), before fork; relative PATH
//    entries are relative to the child's working directory.
//  - stdin/stdout/stderr: inherited, /dev/null, a file, or a pipe whose read
//    end the caller takes (TakeStdout/TakeStderr); stderr can join stdout.
//    Files are opened by the parent, so a bad path is an error of Start.
//  - Working directory: ours, or SubprocessOptions::cwd.
//  - A private overlay (SubprocessOptions::private_overlay): the child runs
//    in a mount namespace of its own (and, unless we are root, a user
//    namespace mapping only our uid and gid to themselves, setgroups
//    denied), with every mount private, in which an overlayfs is mounted
//    over a directory's own path: the directory is its lower layer, so the
//    child reads what is there, and what it writes, creates, renames or
//    deletes under that path lands in the upper directory instead (whiteouts
//    for deletions), whatever path it uses, absolute or relative. The cost
//    does not depend on what the directory holds. Directories to `keep`
//    (under it) are bound back over the overlay, so writes there reach the
//    real ones. All is done between fork and exec, before the working
//    directory is entered; a step the kernel refuses (no user namespaces, a
//    seccomp filter, an upper file system overlayfs can not use) fails
//    Start with IOError naming the step, its paths and the OS reason, and
//    private_overlay_failed() says so, for a caller that falls back.
// An exec that fails is reported by Start through a close-on-exec pipe, as a
// Status naming the program and the OS reason; start_failure_exit_code()
// turns it into the shell's code (127 not found, 126 not executable). The
// code between fork and exec is async-signal-safe: everything it needs
// (argv, envp, PATH candidates, file descriptors) is prepared before fork.
//
// A Subprocess is move-only. Its destructor closes the pipes it still owns
// and neither kills nor reaps the child: whoever starts one waits for it.
// (A contained child's tree, though, ends with its Subprocess, see above.)
// Not thread-safe.
#ifndef TRIALSHIM_BASE_SUBPROCESS_H_
#define TRIALSHIM_BASE_SUBPROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trialshim/base/status.h"

namespace trialshim {

// The file execvp would run for `name` with PATH `path_var` (":"-separated;
// an empty entry is the current directory): `name` itself when it holds a
// '/', else the first PATH entry's file of that name that is a regular file
// we may execute, relative entries looked up from `cwd` when it is not
// empty. The result is named as the child names it (dir/name, relative to
// `cwd` for a relative entry). Directories and files without the execute
// bit are skipped, as execvp skips them. "" when there is none.
std::string FindProgram(const std::string& name, const std::string& path_var,
                        const std::string& cwd = "");

// Exit codes for a program that could not be run, as shells use them.
inline constexpr int kExitNotExecutable = 126;
inline constexpr int kExitNotFound = 127;

// Where one of the child's standard streams goes.
struct Stdio {
  enum class Kind {
    kInherit,  // our own descriptor
    kNull,     // /dev/null
    kFile,     // `path`: read for stdin; created/truncated (or appended) else
               // (with `own`: a file of our own directory, see OwnFile)
    kPipe,     // a pipe; the parent reads (or, for stdin, writes) the end
    kStdout,   // stderr only: wherever stdout goes
  };
  Kind kind = Kind::kInherit;
  std::string path;     // kFile
  bool append = false;  // kFile output: O_APPEND instead of O_TRUNC
  bool own = false;     // kFile output: opened as OwnFile says

  static Stdio Inherit() { return {}; }
  static Stdio Null() { return {Kind::kNull, "", false}; }
  static Stdio File(std::string path, bool append = false) {
    return {Kind::kFile, std::move(path), append};
  }
  // An output file in a directory of ours (a trial's log) that another
  // process may have replaced: opened through OpenOwnFile (base/file.h), so
  // a symbolic link, a FIFO or a device there fails Start (IOError naming
  // it) instead of being followed or blocking the open.
  static Stdio OwnFile(std::string path, bool append = false) {
    return {Kind::kFile, std::move(path), append, true};
  }
  static Stdio Pipe() { return {Kind::kPipe, "", false}; }
  static Stdio SameAsStdout() { return {Kind::kStdout, "", false}; }
};

// See "A private overlay" at the top of this file. Every path absolute.
struct PrivateOverlay {
  // The directory the child sees through the overlay: its lower layer, and
  // where the overlay is mounted.
  std::string dir;
  // An existing directory: what the child writes under `dir` lands here
  // (overlayfs's upperdir). Not inside `dir` unless under a `keep`.
  std::string upper;
  // An existing directory on upper's file system, for overlayfs's own use
  // (its workdir); a rerun may reuse it.
  std::string work;
  // Existing directories under `dir` that stay the real ones inside the
  // overlay (bound back over their path, submounts included).
  std::vector<std::string> keep;
};

struct SubprocessOptions {
  // Start the child in a process group of its own. Default: true.
  bool new_process_group = true;
  // With a new group and a terminal on our stdin: make the child's group the
  // terminal's foreground group, so ^C and terminal reads reach it.
  // Default: false.
  bool take_terminal = false;
  // Sent to the child when the thread that started it ends; 0 for none.
  // With contain: sent to the whole tree when we are gone (SIGKILL if 0).
  // Default: 0.
  int parent_death_signal = 0;
  // Run the child under a supervisor that holds its whole process tree
  // (see the top of this file). Needs new_process_group. Default: false.
  bool contain = false;
  // With contain and a parent_death_signal other than SIGKILL: how long
  // the tree has after it before SIGKILL. Default: 10 s.
  std::chrono::milliseconds parent_death_grace{10000};
  // Signals that stay ignored in the child if they are ignored in the
  // parent (nohup-style); every other signal is reset to default.
  // Default: none.
  std::vector<int> keep_ignored;
  // "NAME=value" entries: the child's whole environment. nullopt inherits
  // ours. Default: nullopt.
  std::optional<std::vector<std::string>> env;
  // The child's working directory; empty keeps ours. Default: "".
  std::string cwd;
  // Run the child in a private overlay of a directory (see the top of this
  // file); `cwd` is entered after it is mounted. Default: none.
  std::optional<PrivateOverlay> private_overlay;
  // What to execute, when it is not argv[0] (which the child still gets as
  // its argv[0]). Default: "".
  std::string program;
  // The child's stdin, stdout and stderr. Default: inherited.
  Stdio in, out, err;
};

class Subprocess {
 public:
  Subprocess() = default;
  ~Subprocess();
  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  // Starts argv[0] (or options.program) with argv; a name without '/' is
  // looked up in the child's PATH (FindProgram). On failure nothing is left
  // running and start_failure_exit_code() says how a shell would have exited.
  // Errors: InvalidArgument (empty argv, a kStdout stdin, or what execve()
  // would refuse with E2BIG, see CheckExecLimits: exit code 126), NotFound
  // (no such program: ENOENT, ENOTDIR), IOError (found but not executable,
  // or our own pipe/fork/open failed).
  Status Start(const std::vector<std::string>& argv,
               const SubprocessOptions& options = {});

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0 && !reaped_; }

  // The read end of a kPipe stdout/stderr (the write end of a kPipe stdin);
  // the caller owns and closes it. -1 when not a pipe or already taken.
  int TakeStdin() { return Take(&in_fd_); }
  int TakeStdout() { return Take(&out_fd_); }
  int TakeStderr() { return Take(&err_fd_); }

  // Blocks until the child has ended and reaps it.
  Status Wait();
  // A contained child: a descriptor that becomes readable when Poll() may
  // have news, for a caller's poll(); -1 otherwise.
  int event_fd() const { return channel_fd_; }
  // Reaps the child if it has ended; true once it has.
  bool Poll();
  // For a caller that reaps with waitpid(-1) (an init, a subreaper): records
  // that this child ended with `wait_status`.
  void SetReaped(int wait_status);

  // Sends `sig` to the child, or to its whole process group. A child that is
  // already gone is not an error. Once the child is reaped its pid, and so
  // its group's id, may be another process's (an empty group's id is free
  // for reuse), so only what we still hold is signalled: a contained
  // child's tree, what is left of its group included, through its
  // supervisor, which still holds them (they are its descendants); without
  // containment nothing, unless we are PID 1 (every process of our PID
  // namespace descends from us, so whatever holds the id is ours).
  Status Kill(int sig, bool group) const;

  // How it ended, valid once reaped: the raw wait status, the shell's exit
  // code (its own, or 128+N when killed by signal N), and N (0 if none).
  int wait_status() const { return wait_status_; }
  int exit_code() const;
  int term_signal() const;

  // After a failed Start: 127/126 for an exec failure, 1 for our own.
  int start_failure_exit_code() const { return start_failure_exit_code_; }
  // After a failed Start: true when the kernel refused a step of the
  // private overlay (nothing was executed).
  bool private_overlay_failed() const { return private_overlay_failed_; }

 private:
  static int Take(int* fd) {
    int out = *fd;
    *fd = -1;
    return out;
  }
  void Reset();
  void ReadChannel(bool block);

  pid_t pid_ = -1;
  bool own_group_ = false;
  bool reaped_ = false;
  int wait_status_ = 0;
  int start_failure_exit_code_ = 0;
  bool private_overlay_failed_ = false;
  int in_fd_ = -1, out_fd_ = -1, err_fd_ = -1;
  int channel_fd_ = -1;  // to a contained child's supervisor
};

// A bounded run of a probe (a program asked a question, such as a Hydra
// app's `--cfg all`): Start with stdout captured through a pipe, read it
// until the child ends, and never wait longer than `timeout` in all: a
// program that never answers is killed (SIGKILL to its group; contained,
// to its whole tree) and the run fails with IOError "<program> did not
// finish within <n> s; it was killed". Start's errors are returned as
// Start returns them. At most
// `max_output` bytes are kept (the rest is read and dropped, so the child
// never blocks on a full pipe). options.out is replaced by the pipe;
// options.new_process_group and contain are forced on, so the kill reaches
// all the probe started.
struct CapturedRun {
  std::string out;     // what it printed on stdout (at most max_output)
  bool cut = false;    // more was printed than kept
  int exit_code = 0;   // the shell's code (128+N when killed by N)
  int wait_status = 0;
};
StatusOr<CapturedRun> RunCaptured(const std::vector<std::string>& argv,
                                  SubprocessOptions options,
                                  std::chrono::milliseconds timeout,
                                  size_t max_output);

// The shell's exit code for a wait status: the code, or 128+N for signal N.
int ExitCodeOfWaitStatus(int wait_status);

// 127 for "no such file" errors of exec (ENOENT, ENOTDIR), 126 for the rest.
int ExecErrorExitCode(int err);

// "cannot run 'prog': not found in PATH (<PATH>): <strerror>" for a bare
// name not found, "cannot run 'prog': <strerror>" otherwise.
std::string ExecErrorMessage(const std::string& program, int err);

// What a Subprocess child does to its signals before exec (all to default
// but those in `keep_ignored` that are ignored now, then an empty mask), for
// a caller that execs in place. Async-signal-safe.
void ResetSignalsForExec(const std::vector<int>& keep_ignored = {});

// What execve() accepts, as the Linux kernel counts it (fs/exec.c), so that
// a command line the kernel would refuse with E2BIG ("Argument list too
// long") is caught before a program is started, naming the argument:
//  - one argument or environment entry: at most MAX_ARG_STRLEN, 131072
//    bytes with its NUL;
//  - all of them together: the bytes of every argument, environment entry
//    and of the program's path, each with its NUL, plus an 8-byte pointer
//    per argument and entry, at most a quarter of the stack limit
//    (RLIMIT_STACK: 2 MiB for the usual 8 MiB), never more than 6 MiB and
//    never less than 128 KiB. (A "#!" script's interpreter line adds a few
//    bytes more.)
inline constexpr size_t kMaxArgStrlen = 131072;
// The space for all of them under a stack limit of `stack_limit` bytes.
size_t ExecArgSpace(uint64_t stack_limit);
// ... under our own RLIMIT_STACK now (which a child inherits).
size_t ExecArgSpace();
// The bytes the kernel counts for `argv`, `env` and `path` (see above).
size_t ExecArgCost(const std::vector<std::string>& argv,
                   const std::vector<std::string>& env,
                   const std::string& path);
// InvalidArgument naming the first argument ("argument 3") or environment
// entry ("environment variable NAME") longer than MAX_ARG_STRLEN, or the
// total when it exceeds `space`; Ok when execve() would accept them.
Status CheckExecLimits(const std::vector<std::string>& argv,
                       const std::vector<std::string>& env,
                       const std::string& path, size_t space);

// Our environment with each "NAME=value" of `set` added or replacing ours.
std::vector<std::string> EnvironmentWith(const std::vector<std::string>& set);

}  // namespace trialshim

#endif  // TRIALSHIM_BASE_SUBPROCESS_H_
