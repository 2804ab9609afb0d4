// Subprocess with real processes: how a child ends, exec failures, the
// signal state and process group it starts with, the parent-death signal,
// its environment, working directory and redirections.
#include "trialshim/base/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim {
namespace {

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
  for (const Case& c : cases) {
    SignalState restore;
    if (c.parent_state) c.parent_state();
    SubprocessOptions options;
    if (c.options) c.options(&options);
    Subprocess p;
    ASSERT_OK(p.Start(c.argv, options)) << "case " << c.name;
    ASSERT_OK(p.Wait()) << "case " << c.name;
    EXPECT_EQ(p.exit_code(), c.want_code) << "case " << c.name;
    EXPECT_EQ(p.term_signal(), c.want_signal) << "case " << c.name;
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
    Subprocess p;
    Status st = p.Start({c.program});
    EXPECT_EQ(st.code(), c.want_status)
        << "case " << c.name << ": " << st.ToString();
    EXPECT_EQ(p.start_failure_exit_code(), c.want_exit) << "case " << c.name;
    for (const std::string& want : c.want_in_message) {
      EXPECT_NE(st.message().find(want), std::string::npos)
          << "case " << c.name << ": " << st.message();
    }
    EXPECT_EQ(p.pid(), -1) << "case " << c.name;
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
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st.ToString();
  EXPECT_NE(st.message().find("not found in PATH (/nonexistent)"),
            std::string::npos)
      << st.message();
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

// True once `pid` (not our child) has ended: gone, or a zombie.
bool EndsWithin(pid_t pid, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
    size_t paren = stat.rfind(')');
    if (stat.empty() || (paren != std::string::npos &&
                         paren + 2 < stat.size() && stat[paren + 2] == 'Z')) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
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
  EXPECT_EQ(st.code(), StatusCode::kIOError);
  EXPECT_NE(st.message().find("/nonexistent/dir/log"), std::string::npos)
      << st.message();
  EXPECT_EQ(p.start_failure_exit_code(), 1);
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

}  // namespace
}  // namespace trialshim
