// Injecting write faults into real files, for the tests that check a writer
// fails cleanly: no partial file, no temporary, an error that names the file
// and the OS reason. The tests run as root, which ignores file permissions,
// so the faults come from the kernel instead:
//   FileSizeLimit  RLIMIT_FSIZE with SIGXFSZ ignored: a write past the limit
//                  fails with EFBIG, in this process (no fork; safe with
//                  LibTorch's threads).
//   InChild        runs a function in a forked child and returns its text;
//                  with MountTmpfs (ENOSPC from a tiny tmpfs in a private
//                  mount namespace) or AsNobody (EACCES on root's dirs).
//   (ENOTDIR needs no helper: make a path's parent a regular file.)
// And the table every writer of a file that matters is tested with:
//   ExpectFailedWriteKeepsTheOldFile  a full disk and a parent that is a
//                  file: an IOError naming the file and the OS reason, the
//                  old file whole, no temporary beside it.
#ifndef TRIALSHIM_TESTS_TESTUTIL_FAULT_H_
#define TRIALSHIM_TESTS_TESTUTIL_FAULT_H_

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <set>
#include <string>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim::testing {

// While alive, files this process writes can not grow past `bytes`.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  sighandler_t old_handler_;
};

// Runs `fn` in a forked child and returns what it returned ("child died"
// if it did not finish). Only for processes without threads of their own.
inline std::string InChild(const std::function<std::string()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) return std::string("pipe: ") + std::strerror(errno);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string text = fn();
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) text.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "child died";
  return text;
}

// In a child of InChild: mounts a tmpfs of `bytes` on `dir`, seen by this
// process only. "" or why it could not.
inline std::string MountTmpfs(const std::string& dir, size_t bytes) {
  if (unshare(CLONE_NEWNS) != 0 ||
      mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      mount("none", dir.c_str(), "tmpfs", 0,
            ("size=" + std::to_string(bytes)).c_str()) != 0) {
    return std::string("can not mount a tmpfs: ") + std::strerror(errno);
  }
  return "";
}

// In a child of InChild: drops root for user and group 65534 (nobody), so
// a directory root owns with mode 0755 can not be written. "" or why not.
inline std::string AsNobody() {
  if (setresgid(65534, 65534, 65534) != 0 ||
      setresuid(65534, 65534, 65534) != 0) {
    return std::string("can not drop root: ") + std::strerror(errno);
  }
  return "";
}

// The names in `dir`, "." and ".." left out.
inline std::set<std::string> ListDir(const std::string& dir) {
  std::set<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.insert(n);
    }
    closedir(d);
  }
  return names;
}

// `write(path, version)` writes the file at `path` (version 1 with more
// bytes than version 0) and returns its status. Each case runs in a fresh
// directory holding a regular file "file":
//  - "file size limit (as a full disk)": version 0 is written to
//    <dir>/`name`, then version 1 where files can not grow past `limit`
//    bytes: an IOError naming the path and EFBIG's reason; the file still
//    holds version 0, and the directory nothing else.
//  - "parent is a regular file": version 1 to <dir>/file/`name`: an IOError
//    naming <dir>/file and ENOTDIR's reason; nothing is created.
template <typename Write>
void ExpectFailedWriteKeepsTheOldFile(const std::string& name, rlim_t limit,
                                      const Write& write) {
  using ::testing::_;
  using ::testing::HasSubstr;
  {
    SCOPED_TRACE("file size limit (as a full disk)");
    TempDir dir;
    dir.Write("file", "f");
    const std::string path = dir.Join(name);
    ASSERT_OK(write(path, 0));
    const std::string before = ReadFile(path);
    Status s;
    {
      FileSizeLimit no_growth(limit);
      s = write(path, 1);
    }
    EXPECT_THAT(s, StatusIs(StatusCode::kIOError, HasSubstr(path)));
    EXPECT_THAT(s, StatusIs(_, HasSubstr(std::strerror(EFBIG))));
    EXPECT_EQ(ReadFile(path), before);
    EXPECT_EQ(ListDir(dir.path()), (std::set<std::string>{"file", name}));
  }
  {
    SCOPED_TRACE("parent is a regular file");
    TempDir dir;
    dir.Write("file", "f");
    Status s = write(dir.Join("file/" + name), 1);
    EXPECT_THAT(s, StatusIs(StatusCode::kIOError, HasSubstr(dir.Join("file"))));
    EXPECT_THAT(s, StatusIs(_, HasSubstr(std::strerror(ENOTDIR))));
    EXPECT_EQ(ListDir(dir.path()), std::set<std::string>{"file"});
  }
}

}  // namespace trialshim::testing

#endif  // TRIALSHIM_TESTS_TESTUTIL_FAULT_H_
