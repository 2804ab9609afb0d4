// Subprocess with real processes: how a child ends, exec failures, the
// signal state and process group it starts with, the parent-death signal,
// its environment, working directory and redirections.
#include "trialshim/base/subprocess.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/fault.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/temp_dir.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim {
namespace {

using ::trialshim::testing::EndsWithin;
using ::trialshim::testing::ReadFile;
using ::trialshim::testing::TempDir;

// Reads `fd` to EOF and closes it.
std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, n);
  close(fd);
  return out;
}

// Restores the signal state a case changed in the test process.
class SignalState {
 public:
  SignalState() {
    sigprocmask(SIG_SETMASK, nullptr, &mask_);
    sigaction(SIGINT, nullptr, &int_);
  }
  ~SignalState() {
    sigprocmask(SIG_SETMASK, &mask_, nullptr);
    sigaction(SIGINT, &int_, nullptr);
  }

 private:
  sigset_t mask_;
  struct sigaction int_;
};

void BlockTermIgnoreInt() {
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_BLOCK, &term, nullptr);
  signal(SIGINT, SIG_IGN);
}

TEST(SubprocessTest, HowTheChildEnds) {
  TempDir dir;
  struct Case {
    std::string name;
    std::vector<std::string> argv;
    std::function<void()> parent_state;  // run in the parent before Start
    std::function<void(SubprocessOptions*)> options;
    int want_code;
    int want_signal;
  };
  const std::vector<Case> cases = {
      {"exit code", {"/bin/sh", "-c", "exit 3"}, nullptr, nullptr, 3, 0},
      {"killed by a signal",
       {"/bin/sh", "-c", "kill -KILL $$"},
       nullptr,
       nullptr,
       128 + SIGKILL,
       SIGKILL},
      {"blocked SIGTERM is unblocked",
       {"/bin/sh", "-c", "kill -TERM $$; sleep 5"},
       BlockTermIgnoreInt,
       nullptr,
       128 + SIGTERM,
       SIGTERM},
      {"ignored SIGINT is reset",
       {"/bin/sh", "-c", "kill -INT $$; sleep 5"},
       BlockTermIgnoreInt,
       nullptr,
       128 + SIGINT,
       SIGINT},
      {"keep_ignored keeps SIGINT ignored",
       {"/bin/sh", "-c", "kill -INT $$; exit 7"},
       BlockTermIgnoreInt,
       [](SubprocessOptions* o) { o->keep_ignored = {SIGINT}; },
       7,
       0},
      {"explicit environment",
       {"/bin/sh", "-c", "test \"$ONLY\" = this && test -z \"$HOME\""},
       nullptr,
       [](SubprocessOptions* o) { o->env = {{"ONLY=this"}}; },
       0,
       0},
      {"inherited environment",
       {"/bin/sh", "-c", "test -n \"$PATH\""},
       nullptr,
       nullptr,
       0,
       0},
      {"working directory",
       {"/bin/sh", "-c", "test \"$(pwd -P)\" = \"" + dir.path() + "\""},
       nullptr,
       [&](SubprocessOptions* o) { o->cwd = dir.path(); },
       0,
       0},
      {"PATH lookup", {"sh", "-c", "exit 4"}, nullptr, nullptr, 4, 0},
  };
  // A contained child (under its tree's supervisor) ends the same way.
  for (bool contain : {false, true}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(contain ? "contained" : "plain");
      SignalState restore;
      if (c.parent_state) c.parent_state();
      SubprocessOptions options;
      options.contain = contain;
      if (c.options) c.options(&options);
      Subprocess p;
      ASSERT_OK(p.Start(c.argv, options)) << "case " << c.name;
      ASSERT_OK(p.Wait()) << "case " << c.name;
      EXPECT_EQ(p.exit_code(), c.want_code) << "case " << c.name;
      EXPECT_EQ(p.term_signal(), c.want_signal) << "case " << c.name;
    }
  }
}

TEST(SubprocessTest, ExecFailureIsAStatus) {
  TempDir dir;
  std::string not_exec = dir.Write("script.sh", "echo hi\n");
  struct Case {
    std::string name;
    std::string program;
    StatusCode want_status;
    int want_exit;
    std::vector<std::string> want_in_message;
  };
  const std::vector<Case> cases = {
      {"missing path",
       "/nonexistent/trainer",
       StatusCode::kNotFound,
       127,
       {"cannot run '/nonexistent/trainer'", "No such file or directory"}},
      {"missing in PATH",
       "no-such-program-xyz",
       StatusCode::kNotFound,
       127,
       {"'no-such-program-xyz'", "not found in PATH"}},
      {"not executable",
       not_exec,
       StatusCode::kIOError,
       126,
       {not_exec, "Permission denied"}},
      {"a directory",
       dir.path(),
       StatusCode::kIOError,
       126,
       {dir.path(), "Permission denied"}},
  };
  for (const Case& c : cases) {
   for (bool contain : {false, true}) {
    SCOPED_TRACE(contain ? "contained" : "plain");
    SubprocessOptions options;
    options.contain = contain;
    Subprocess p;
    Status st = p.Start({c.program}, options);
    EXPECT_EQ(st.code(), c.want_status)
        << "case " << c.name << ": " << st.ToString();
    EXPECT_EQ(p.start_failure_exit_code(), c.want_exit) << "case " << c.name;
    for (const std::string& want : c.want_in_message) {
      EXPECT_THAT(st, StatusIs(_, HasSubstr(want))) << "case " << c.name;
    }
    EXPECT_EQ(p.pid(), -1) << "case " << c.name;
   }
  }
}

// FindProgram follows execvp's search: a name with '/' as it is; else the
// first PATH entry holding an executable regular file of that name, past
// directories and files without the execute bit.
TEST(SubprocessTest, FindProgramSearchesAsExecvp) {
  TempDir dir;
  dir.Write("a/tool", "#!/bin/sh\n");              // not executable
  std::filesystem::create_directories(dir.Join("b/tool"));  // a directory
  std::string c = dir.Write("c/tool", "#!/bin/sh\necho c\n");
  chmod(c.c_str(), 0755);
  std::filesystem::permissions(dir.Join("b/tool"),
                               std::filesystem::perms::all);
  std::string path = dir.Join("a") + ":" + dir.Join("b") + ":" + dir.Join("c");
  struct Case {
    std::string name, program, path_var, cwd, want;
  };
  const std::vector<Case> cases = {
      {"skips a file without x and a directory", "tool", path, "", c},
      {"a name with a slash as it is", "./x/tool", path, "", "./x/tool"},
      {"not found", "tool", dir.Join("a"), "", ""},
      {"relative entry from cwd", "tool", "c", dir.path(), "c/tool"},
      {"empty entry is the current directory", "tool", ":", dir.Join("c"),
       "./tool"},
      {"empty name", "", path, "", ""},
  };
  for (const Case& k : cases) {
    EXPECT_EQ(FindProgram(k.program, k.path_var, k.cwd), k.want)
        << "case " << k.name;
  }
}

// The child's PATH, not ours, finds a bare program (execvpe would search
// ours); one found nowhere there fails before fork, naming that PATH.
TEST(SubprocessTest, BareProgramIsLookedUpInTheChildsPath) {
  TempDir dir;
  std::string tool = dir.Write("bin/only-here-xyz", "#!/bin/sh\necho found\n");
  chmod(tool.c_str(), 0755);
  SubprocessOptions o;
  o.env = std::vector<std::string>{"PATH=" + dir.Join("bin")};
  o.out = Stdio::Pipe();
  Subprocess p;
  ASSERT_OK(p.Start({"only-here-xyz"}, o));
  EXPECT_EQ(ReadAll(p.TakeStdout()), "found\n");
  ASSERT_OK(p.Wait());
  EXPECT_EQ(p.exit_code(), 0);

  o.env = std::vector<std::string>{"PATH=/nonexistent"};
  Subprocess q;
  Status st = q.Start({"sh", "-c", "true"}, o);
  EXPECT_THAT(st, StatusIs(StatusCode::kNotFound,
                           HasSubstr("not found in PATH (/nonexistent)")));
  EXPECT_EQ(q.start_failure_exit_code(), 127);
}

TEST(SubprocessTest, ExecErrorExitCodeFollowsShells) {
  struct Case {
    std::string name;
    int err;
    int want;
  } cases[] = {{"enoent", ENOENT, 127},
               {"enotdir", ENOTDIR, 127},
               {"eacces", EACCES, 126},
               {"enoexec", ENOEXEC, 126},
               {"e2big", E2BIG, 126}};
  for (const Case& c : cases) {
    EXPECT_EQ(ExecErrorExitCode(c.err), c.want) << "case " << c.name;
  }
}

TEST(SubprocessTest, ProcessGroup) {
  struct Case {
    std::string name;
    bool new_group;
  } cases[] = {{"own group", true}, {"our group", false}};
  for (const Case& c : cases) {
    SubprocessOptions options;
    options.new_process_group = c.new_group;
    Subprocess p;
    ASSERT_OK(p.Start({"sleep", "30"}, options)) << "case " << c.name;
    EXPECT_EQ(getpgid(p.pid()), c.new_group ? p.pid() : getpgrp())
        << "case " << c.name;
    EXPECT_OK(p.Kill(SIGKILL, false));
    ASSERT_OK(p.Wait());
    EXPECT_EQ(p.term_signal(), SIGKILL) << "case " << c.name;
  }
}

TEST(SubprocessTest, KillReachesTheWholeGroup) {
  SubprocessOptions options;
  options.out = Stdio::Pipe();
  Subprocess p;
  ASSERT_OK(p.Start({"/bin/sh", "-c", "sleep 30 & echo $!; wait"}, options));
  int out = p.TakeStdout();
  std::string line;
  char ch;
  while (read(out, &ch, 1) == 1 && ch != '\n') line += ch;
  close(out);
  pid_t sleeper = std::stoi(line);
  EXPECT_OK(p.Kill(SIGTERM, /*group=*/true));
  ASSERT_OK(p.Wait());
  EXPECT_EQ(p.term_signal(), SIGTERM);
  EXPECT_TRUE(EndsWithin(sleeper, std::chrono::seconds(5)));
  // The group and the pid are gone: killing again is no error.
  EXPECT_OK(p.Kill(SIGTERM, true));
  EXPECT_OK(p.Kill(SIGTERM, false));
}

// A middle process starts a grandchild through Subprocess with a parent
// death signal and exits; the grandchild must get that signal. The middle
// is a fork of this test (it has to run Subprocess itself); we are a child
// subreaper so the orphaned grandchild is ours to reap.
TEST(SubprocessTest, ParentDeathSignal) {
  struct Case {
    std::string name;
    int signal;
  } cases[] = {{"SIGTERM", SIGTERM}, {"SIGKILL", SIGKILL}};
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  for (const Case& c : cases) {
    int report[2];
    ASSERT_EQ(pipe(report), 0);
    pid_t middle = fork();
    if (middle == 0) {
      SubprocessOptions options;
      options.parent_death_signal = c.signal;
      Subprocess grandchild;
      if (!grandchild.Start({"sleep", "30"}, options).ok()) _exit(1);
      pid_t pid = grandchild.pid();
      (void)!write(report[1], &pid, sizeof(pid));
      _exit(0);
    }
    close(report[1]);
    pid_t grandchild = -1;
    ASSERT_EQ(read(report[0], &grandchild, sizeof(grandchild)),
              static_cast<ssize_t>(sizeof(grandchild)))
        << "case " << c.name;
    close(report[0]);
    int status = 0;
    ASSERT_EQ(waitpid(middle, &status, 0), middle);
    ASSERT_EQ(waitpid(grandchild, &status, 0), grandchild) << "case " << c.name;
    EXPECT_TRUE(WIFSIGNALED(status)) << "case " << c.name;
    EXPECT_EQ(WTERMSIG(status), c.signal) << "case " << c.name;
  }
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

// The tree of a contained child: a shell with a background sleep in its
// group and a Python sleeper in a session of its own (setsid), which
// ignores SIGTERM when `stubborn`; it prints its pid and theirs.
std::vector<std::string> TreeArgv(bool stubborn) {
  std::string sleeper =
      "import os, signal, time\nos.setsid()\n" +
      std::string(stubborn ? "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                           : "") +
      "print(os.getpid(), flush=True)\ntime.sleep(300)\n";
  return {"/bin/sh", "-c",
          "echo $$; sleep 300 & echo $!; /usr/bin/python3 -c \"$1\" & wait",
          "sh", sleeper};
}

// Reads the three pids TreeArgv's shell prints from `fd`.
std::vector<pid_t> ReadTreePids(int fd) {
  std::vector<pid_t> pids;
  std::string line;
  char ch;
  while (pids.size() < 3 && read(fd, &ch, 1) == 1) {
    if (ch != '\n') {
      line += ch;
    } else {
      pids.push_back(std::stoi(line));
      line.clear();
    }
  }
  return pids;
}

// Contained, nothing of the child's tree outlives us: kill -9 of the
// process that started it (a fork of this test, as it must run Subprocess
// itself) ends the child, its group and what left the group, with
// parent_death_signal and then SIGKILL after the grace period for what
// ignores it.
TEST(SubprocessTest, ContainedTreeEndsWithItsParent) {
  struct Case {
    std::string name;
    int signal;
    bool stubborn;
  } cases[] = {{"SIGKILL", SIGKILL, false},
               {"SIGTERM", SIGTERM, false},
               {"SIGTERM, then SIGKILL for what ignores it", SIGTERM, true}};
  for (const Case& c : cases) {
    int report[2];
    ASSERT_EQ(pipe(report), 0);
    pid_t middle = fork();
    if (middle == 0) {
      close(report[0]);
      SubprocessOptions options;
      options.contain = true;
      options.parent_death_signal = c.signal;
      options.parent_death_grace = std::chrono::milliseconds(300);
      options.out = Stdio::Pipe();
      Subprocess tree;
      if (!tree.Start(TreeArgv(c.stubborn), options).ok()) _exit(1);
      std::vector<pid_t> pids = ReadTreePids(tree.TakeStdout());
      (void)!write(report[1], pids.data(), pids.size() * sizeof(pid_t));
      pause();  // until killed
      _exit(0);
    }
    close(report[1]);
    pid_t pids[3] = {0, 0, 0};
    ASSERT_EQ(read(report[0], pids, sizeof pids),
              static_cast<ssize_t>(sizeof pids))
        << "case " << c.name;
    close(report[0]);
    kill(middle, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(middle, &status, 0), middle);
    for (pid_t pid : pids) {
      EXPECT_TRUE(EndsWithin(pid, std::chrono::seconds(20)))
          << "case " << c.name << ": pid " << pid << " outlived its parent";
    }
  }
}

// Contained, Kill(sig, /*group=*/true) reaches what left the group too,
// and dropping the Subprocess ends what is left of the tree.
TEST(SubprocessTest, ContainedKillAndDropReachTheWholeTree) {
  for (const char* how : {"Kill(SIGTERM, group)", "destroyed"}) {
    SubprocessOptions options;
    options.contain = true;
    options.out = Stdio::Pipe();
    std::vector<pid_t> pids;
    {
      Subprocess tree;
      ASSERT_OK(tree.Start(TreeArgv(false), options)) << how;
      pids = ReadTreePids(tree.TakeStdout());
      ASSERT_EQ(pids.size(), 3u) << how;
      EXPECT_EQ(pids[0], tree.pid()) << how << ": pid() is the child's";
      if (std::string(how) != "destroyed") {
        ASSERT_OK(tree.Kill(SIGTERM, /*group=*/true));
        ASSERT_OK(tree.Wait());
        EXPECT_EQ(tree.term_signal(), SIGTERM) << how;
        // The setsid'd sleeper ends through the supervisor while we still
        // hold the Subprocess.
        EXPECT_TRUE(EndsWithin(pids[2], std::chrono::seconds(20))) << how;
      }
    }
    for (pid_t pid : pids) {
      EXPECT_TRUE(EndsWithin(pid, std::chrono::seconds(20)))
          << how << ": pid " << pid;
    }
  }
}

TEST(SubprocessTest, Redirection) {
  TempDir dir;
  std::string input = dir.Write("in", "from a file\n");
  const std::string script = "cat; echo out; echo err >&2";
  struct Case {
    std::string name;
    Stdio in, out, err;
    std::string want_file;  // contents of dir/file after the run (cases
                            // run in order on the same file)
    std::string want_out_pipe, want_err_pipe;
  };
  const std::string file = dir.Join("file");
  const std::vector<Case> cases = {
      {"both to one file", Stdio::Null(), Stdio::File(file),
       Stdio::SameAsStdout(), "out\nerr\n", "", ""},
      {"stdin from a file, pipes", Stdio::File(input), Stdio::Pipe(),
       Stdio::Pipe(), "out\nerr\n" /* untouched */, "from a file\nout\n",
       "err\n"},
      {"stderr to a file, stdout to /dev/null", Stdio::Null(), Stdio::Null(),
       Stdio::File(file), "err\n", "", ""},
      {"append", Stdio::Null(), Stdio::File(file, /*append=*/true),
       Stdio::SameAsStdout(), "err\nout\nerr\n", "", ""},
      {"one pipe for both", Stdio::Null(), Stdio::Pipe(), Stdio::SameAsStdout(),
       "err\nout\nerr\n", "out\nerr\n", ""},
  };
  for (const Case& c : cases) {
    SubprocessOptions options;
    options.in = c.in;
    options.out = c.out;
    options.err = c.err;
    Subprocess p;
    ASSERT_OK(p.Start({"/bin/sh", "-c", script}, options)) << "case " << c.name;
    int out = p.TakeStdout(), err = p.TakeStderr();
    std::string got_out = out >= 0 ? ReadAll(out) : "";
    std::string got_err = err >= 0 ? ReadAll(err) : "";
    ASSERT_OK(p.Wait());
    EXPECT_EQ(p.exit_code(), 0) << "case " << c.name;
    EXPECT_EQ(got_out, c.want_out_pipe) << "case " << c.name;
    EXPECT_EQ(got_err, c.want_err_pipe) << "case " << c.name;
    EXPECT_EQ(ReadFile(file), c.want_file) << "case " << c.name;
  }
}

TEST(SubprocessTest, BadRedirectionIsAnErrorOfStart) {
  SubprocessOptions options;
  options.out = Stdio::File("/nonexistent/dir/log");
  Subprocess p;
  Status st = p.Start({"true"}, options);
  EXPECT_THAT(
      st, StatusIs(StatusCode::kIOError, HasSubstr("/nonexistent/dir/log")));
  EXPECT_EQ(p.start_failure_exit_code(), 1);
}

// What execve() itself says to `argv` with environment `env`: 0 when it
// ran (/bin/true exits 0), else its errno. A fork by hand: the point is to
// ask the kernel without our own check in front of it.
int KernelVerdict(const std::vector<std::string>& argv,
                  const std::vector<std::string>& env) {
  std::vector<char*> a, e;
  for (const std::string& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  for (const std::string& s : env) e.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  e.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    execve(argv[0].c_str(), a.data(), e.data());
    _exit(errno);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// CheckExecLimits draws the line exactly where the kernel does: one byte
// under each limit runs, the limit itself is E2BIG, and Start says which
// argument and why before anything runs (126, as a shell).
TEST(SubprocessTest, ExecLimitsAreTheKernels) {
  const std::string prog = "/bin/true";
  const size_t space = ExecArgSpace();
  // Arguments of 100000 bytes, then one that brings the cost to `total`.
  auto filled = [&](size_t total) {
    std::vector<std::string> argv = {prog};
    while (ExecArgCost(argv, {}, prog) + 100000 + 1 + 8 < total) {
      argv.push_back(std::string(100000, 'a'));
    }
    size_t rest = total - ExecArgCost(argv, {}, prog) - 1 - 8;
    argv.push_back(std::string(rest, 'b'));
    return argv;
  };
  struct Case {
    std::string name;
    std::vector<std::string> argv;
    std::vector<std::string> env;
    bool fits;
    std::string why;
  } cases[] = {
      {"largest argument", {prog, std::string(kMaxArgStrlen - 1, 'x')}, {},
       true, ""},
      {"argument at MAX_ARG_STRLEN", {prog, "x", std::string(kMaxArgStrlen, 'x')},
       {}, false,
       "argument 2 is 131072 bytes; the kernel takes at most 131071 in one "
       "argument (MAX_ARG_STRLEN)"},
      {"environment entry at MAX_ARG_STRLEN", {prog},
       {"BIG=" + std::string(kMaxArgStrlen - 4, 'x')}, false,
       "environment variable BIG is 131072 bytes with its name"},
      {"everything at the space", filled(space), {}, true, ""},
      {"one byte more", filled(space + 1), {}, false,
       "the arguments and environment take " + std::to_string(space + 1) +
           " bytes (each with its NUL and an 8-byte pointer), more than the " +
           std::to_string(space)},
  };
  for (const Case& c : cases) {
    Status ours = CheckExecLimits(c.argv, c.env, prog, space);
    EXPECT_EQ(ours.ok(), c.fits) << "case " << c.name << ": " << ours.message();
    EXPECT_EQ(KernelVerdict(c.argv, c.env), c.fits ? 0 : E2BIG)
        << "case " << c.name;
    SubprocessOptions options;
    options.env = c.env;
    Subprocess p;
    Status started = p.Start(c.argv, options);
    if (c.fits) {
      ASSERT_OK(started) << "case " << c.name;
      ASSERT_OK(p.Wait());
      EXPECT_EQ(p.exit_code(), 0) << "case " << c.name;
      continue;
    }
    EXPECT_THAT(started,
                StatusIs(StatusCode::kInvalidArgument,
                         HasSubstr("cannot run '/bin/true': " + c.why)))
        << "case " << c.name;
    EXPECT_EQ(p.start_failure_exit_code(), kExitNotExecutable)
        << "case " << c.name;
  }
}

TEST(SubprocessTest, EnvironmentWithReplacesAndAdds) {
  setenv("TRIALSHIM_SUBPROCESS_TEST", "old", 1);
  std::vector<std::string> env =
      EnvironmentWith({"TRIALSHIM_SUBPROCESS_TEST=new", "TRIALSHIM_ADDED=1"});
  int seen = 0;
  for (const std::string& e : env) {
    if (e.rfind("TRIALSHIM_SUBPROCESS_TEST=", 0) == 0) {
      ++seen;
      EXPECT_EQ(e, "TRIALSHIM_SUBPROCESS_TEST=new");
    }
  }
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(env.back(), "TRIALSHIM_ADDED=1");
  unsetenv("TRIALSHIM_SUBPROCESS_TEST");
}


// A probe's run is bounded: a program that never answers is killed after
// the timeout with all it started (even what left its session), one that
// exits while a daemon of its own still holds its stdout is not waited for,
// and what it prints is kept up to the limit.
TEST(RunCapturedTest, EndsOnTimeAndTakesItsTreeWithIt) {
  TempDir dir;
  const std::string pid_file = dir.Join("daemon.pid");
  // A daemon: a fork in a session of its own that holds the probe's stdout
  // and sleeps; its parent writes its pid to pid_file and exits.
  const std::string daemon =
      "/usr/bin/python3 -c 'import os, sys, time; pid = os.fork(); "
      "(open(sys.argv[1], \"w\").write(str(pid)) if pid else "
      "(os.setsid(), time.sleep(300)))' " + pid_file;
  struct Case {
    std::string name;
    std::string script;
    std::chrono::milliseconds timeout;
    size_t max_output;
    bool times_out;
    std::string want_out;
    int want_exit;
    bool cut;
  } cases[] = {
      {"answers", "echo hello", std::chrono::seconds(60), 1 << 20, false,
       "hello\n", 0, false},
      {"fails", "echo no; exit 3", std::chrono::seconds(60), 1 << 20, false,
       "no\n", 3, false},
      {"never answers", "sleep 300", std::chrono::milliseconds(300), 1 << 20,
       true, "", 0, false},
      {"never answers, a setsid'd daemon holds stdout", daemon + "; sleep 300",
       std::chrono::milliseconds(1500), 1 << 20, true, "", 0, false},
      {"exits, a setsid'd daemon holds stdout", daemon + "; echo done",
       std::chrono::seconds(60), 1 << 20, false, "done\n", 0, false},
      {"prints more than is kept", "head -c 100000 /dev/zero | tr '\\0' a",
       std::chrono::seconds(60), 1000, false, std::string(1000, 'a'), 0, true},
  };
  for (const Case& c : cases) {
    unlink(pid_file.c_str());
    SubprocessOptions options;
    options.in = Stdio::Null();
    StatusOr<CapturedRun> run = RunCaptured({"/bin/sh", "-c", c.script},
                                            options, c.timeout, c.max_output);
    if (c.times_out) {
      char seconds[16];
      std::snprintf(seconds, sizeof seconds, "%g", c.timeout.count() / 1000.0);
      EXPECT_THAT(run, StatusIs(StatusCode::kIOError,
                                "'/bin/sh' did not finish within " +
                                    std::string(seconds) + " s; it was killed"))
          << "case " << c.name;
    } else {
      ASSERT_OK(run.status()) << "case " << c.name;
      EXPECT_EQ(run->out, c.want_out) << "case " << c.name;
      EXPECT_EQ(run->exit_code, c.want_exit) << "case " << c.name;
      EXPECT_EQ(run->cut, c.cut) << "case " << c.name;
    }
    std::string pid = ReadFile(pid_file);
    if (!pid.empty()) {
      EXPECT_TRUE(EndsWithin(std::stoi(pid), std::chrono::seconds(20)))
          << "case " << c.name << ": the daemon outlived the probe";
    }
  }
}

// Makes the next process this pid namespace creates get `pid`, through
// /proc/sys/kernel/ns_last_pid (root only): how a test reuses a reaped
// child's pid on purpose. False when the kernel will not.
bool NextPidIs(pid_t pid) {
  int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::string text = std::to_string(pid - 1);
  bool ok = write(fd, text.data(), text.size()) ==
            static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

// Once a child is reaped, its pid and its group's id may be a stranger's:
// Kill(sig, /*group=*/true) must not reach a process that took that id as
// its own group. The stranger is a fork of ours given the reaped pid
// (NextPidIs) that leads a group of its own and waits for a byte; if the
// SIGKILL had reached it, it could not read the byte and exit 0.
TEST(SubprocessTest, KillAfterTheReapSparesAStrangerWithTheSameId) {
  for (bool contain : {false, true}) {
    const std::string name = contain ? "contained" : "not contained";
    SubprocessOptions options;
    options.contain = contain;
    Subprocess child;
    ASSERT_OK(child.Start({"/bin/true"}, options)) << name;
    ASSERT_OK(child.Wait()) << name;
    const pid_t old = child.pid();
    pid_t stranger = -1;
    int go[2];
    ASSERT_EQ(pipe(go), 0);
    // Other processes of the machine may take the pid first: a few tries.
    for (int attempt = 0; attempt < 20 && stranger != old; ++attempt) {
      if (stranger > 0) {
        kill(stranger, SIGKILL);
        waitpid(stranger, nullptr, 0);
      }
      if (!NextPidIs(old)) {
        close(go[0]);
        close(go[1]);
        GTEST_SKIP() << "the kernel does not let us choose the next pid";
      }
      stranger = fork();
      if (stranger == 0) {
        setpgid(0, 0);
        char byte;
        _exit(read(go[0], &byte, 1) == 1 ? 0 : 1);
      }
    }
    if (stranger != old) {
      kill(stranger, SIGKILL);
      waitpid(stranger, nullptr, 0);
      close(go[0]);
      close(go[1]);
      GTEST_SKIP() << "pid " << old << " was taken by another process";
    }
    setpgid(stranger, stranger);  // in the parent too: no race with Kill
    ASSERT_OK(child.Kill(SIGKILL, /*group=*/true)) << name;
    ASSERT_EQ(write(go[1], "x", 1), 1);
    close(go[0]);
    close(go[1]);
    int status = 0;
    ASSERT_EQ(waitpid(stranger, &status, 0), stranger) << name;
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << name << ": the stranger with the reaped child's id was signalled";
  }
}

// Contained, what is left of the child's group after its reap is still
// ours: Kill reaches it through the supervisor.
TEST(SubprocessTest, ContainedKillAfterTheReapReachesTheLeftovers) {
  SubprocessOptions options;
  options.contain = true;
  options.out = Stdio::Pipe();
  Subprocess p;
  ASSERT_OK(p.Start({"/bin/sh", "-c", "sleep 300 & echo $!"}, options));
  int out = p.TakeStdout();
  std::string line;
  char ch;
  while (read(out, &ch, 1) == 1 && ch != '\n') line += ch;
  ASSERT_OK(p.Wait());
  pid_t sleeper = std::stoi(line);
  EXPECT_TRUE(testing::ProcessRuns(sleeper));
  ASSERT_OK(p.Kill(SIGKILL, /*group=*/true));
  EXPECT_TRUE(EndsWithin(sleeper, std::chrono::seconds(20)));
  close(out);
}

// A private overlay, as root (a mount namespace) and as uid 1000 (a user
// namespace too, userxattr): the child reads the directory, and what it
// writes there, relative or absolute, changes or deletes (a file, a
// directory renamed) lands in the upper directory; the directory stays as
// it was, but for what it writes under `keep`, which reaches the real one.
TEST(SubprocessTest, PrivateOverlayKeepsTheDirectoryAsItWas) {
  struct Case {
    std::string name;
    uid_t uid;
  };
  const std::vector<Case> cases = {{"as root", 0}, {"as uid 1000", 1000}};
  for (const Case& c : cases) {
    TempDir dir;
    std::string proj = dir.Join("proj");
    dir.Write("proj/input.txt", "in");
    dir.Write("proj/data/keep.csv", "k");
    dir.Write("proj/gone.txt", "g");
    dir.Write("proj/dir/a", "a");
    dir.Write("proj/out/1/old", "");
    std::filesystem::create_directories(dir.Join("trial/upper"));
    std::filesystem::create_directories(dir.Join("trial/work"));
    for (const auto& e :
         std::filesystem::recursive_directory_iterator(dir.path())) {
      ASSERT_EQ(lchown(e.path().c_str(), c.uid, c.uid), 0) << c.name;
    }
    ASSERT_EQ(chown(dir.path().c_str(), c.uid, c.uid), 0);
    const std::string script =
        "cat input.txt > read.txt && echo changed > data/keep.csv && "
        "rm gone.txt && mv dir moved && echo abs > " + proj + "/abs.txt && "
        "echo out > " + proj + "/out/1/metric && mkdir -p logs/train/runs/x "
        "&& echo log > logs/train/runs/x/train.log && echo ok";
    std::string got = testing::InChild([&]() -> std::string {
      if (c.uid != 0 && (setgroups(0, nullptr) != 0 ||
                         setresgid(c.uid, c.uid, c.uid) != 0 ||
                         setresuid(c.uid, c.uid, c.uid) != 0)) {
        return std::string("can not drop root: ") + std::strerror(errno);
      }
      // As after an exec by uid 1000 (setpriv): a change of uid leaves a
      // process undumpable, its /proc/self files root's.
      prctl(PR_SET_DUMPABLE, 1);
      SubprocessOptions options;
      options.private_overlay = PrivateOverlay{
          proj, dir.Join("trial/upper"), dir.Join("trial/work"),
          {proj + "/out"}};
      options.cwd = proj;
      options.out = Stdio::Pipe();
      options.err = Stdio::SameAsStdout();
      Subprocess p;
      Status st = p.Start({"/bin/sh", "-c", script}, options);
      if (!st.ok()) return st.ToString();
      std::string out = ReadAll(p.TakeStdout());
      if (!p.Wait().ok()) return "wait failed";
      return out + "exit " + std::to_string(p.exit_code());
    });
    ASSERT_EQ(got, "ok\nexit 0") << "case " << c.name;
    // The directory as it was, but for --out.
    EXPECT_EQ(testing::ListDir(proj),
              (std::set<std::string>{"data", "dir", "gone.txt", "input.txt",
                                     "out"}))
        << "case " << c.name;
    EXPECT_EQ(ReadFile(proj + "/data/keep.csv"), "k") << "case " << c.name;
    EXPECT_EQ(ReadFile(proj + "/dir/a"), "a") << "case " << c.name;
    EXPECT_EQ(ReadFile(proj + "/out/1/metric"), "out\n") << "case " << c.name;
    // What the child wrote, in the upper directory.
    std::string upper = dir.Join("trial/upper");
    EXPECT_EQ(ReadFile(upper + "/read.txt"), "in") << "case " << c.name;
    EXPECT_EQ(ReadFile(upper + "/data/keep.csv"), "changed\n")
        << "case " << c.name;
    EXPECT_EQ(ReadFile(upper + "/abs.txt"), "abs\n") << "case " << c.name;
    EXPECT_EQ(ReadFile(upper + "/moved/a"), "a") << "case " << c.name;
    EXPECT_EQ(ReadFile(upper + "/logs/train/runs/x/train.log"), "log\n")
        << "case " << c.name;
    struct stat st;
    ASSERT_EQ(lstat((upper + "/gone.txt").c_str(), &st), 0) << c.name;
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << "case " << c.name << ": a whiteout";
    EXPECT_FALSE(std::filesystem::exists(upper + "/out")) << c.name;
  }
}

// A step the kernel refuses comes back from Start, naming the mount, its
// paths and the OS reason; nothing ran.
TEST(SubprocessTest, RefusedPrivateOverlayIsAStatusOfStart) {
  TempDir dir;
  dir.Write("proj/input.txt", "in");
  std::filesystem::create_directories(dir.Join("upper"));
  // Another file system than upper's (a tmpfs).
  char shm_name[] = "/dev/shm/trialshim_test_XXXXXX";
  ASSERT_NE(mkdtemp(shm_name), nullptr) << std::strerror(errno);
  struct Shm {
    std::string dir;
    ~Shm() { std::filesystem::remove_all(dir); }
    const std::string& path() const { return dir; }
  } shm{shm_name};
  struct Case {
    std::string name;
    PrivateOverlay overlay;
    StatusCode code;
    std::vector<std::string> want;
    bool failed;  // private_overlay_failed()
  };
  const std::vector<Case> cases = {
      {"work on another file system than upper",
       {dir.Join("proj"), dir.Join("upper"), shm.path(), {}},
       StatusCode::kIOError,
       {"cannot give '/bin/sh' a private overlay of " + dir.Join("proj"),
        "mount overlay on " + dir.Join("proj") + " (lowerdir=" +
            dir.Join("proj") + ", upperdir=" + dir.Join("upper") +
            ", workdir=" + shm.path() + ")",
        "Invalid argument"},
       true},
      {"missing upper",
       {dir.Join("proj"), dir.Join("none"), dir.Join("upper"), {}},
       StatusCode::kIOError,
       {"open " + dir.Join("none") + ": No such file or directory"},
       true},
      {"relative path",
       {"proj", dir.Join("upper"), dir.Join("upper"), {}},
       StatusCode::kInvalidArgument,
       {"private overlay: path 'proj' is not absolute"},
       false},
  };
  for (const Case& c : cases) {
    for (bool contain : {false, true}) {
      SubprocessOptions options;
      options.contain = contain;
      options.private_overlay = c.overlay;
      std::string marker = dir.Join("ran");
      Subprocess p;
      Status st = p.Start({"/bin/sh", "-c", "touch " + marker}, options);
      EXPECT_EQ(st.code(), c.code) << "case " << c.name << ": " << st.ToString();
      for (const std::string& w : c.want) {
        EXPECT_THAT(st, StatusIs(_, HasSubstr(w))) << "case " << c.name;
      }
      EXPECT_EQ(p.private_overlay_failed(), c.failed) << "case " << c.name;
      EXPECT_EQ(p.start_failure_exit_code(), 1) << "case " << c.name;
      EXPECT_FALSE(std::filesystem::exists(marker)) << "case " << c.name;
    }
  }
}

}  // namespace
}  // namespace trialshim
