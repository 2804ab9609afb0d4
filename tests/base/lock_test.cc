// DirectoryLock against real processes: a lock held by another process (or
// by a child it passed the lock to) refuses a second run with a message
// naming the holder; SIGKILL of every holder frees it.
#include "trialshim/base/lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "tests/testutil/special_files.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"

namespace trialshim {
namespace {

using testing::TempDir;

// Starts `sleep 60` (it inherits whatever descriptors are not close-on-exec)
// and returns its pid once it has exec'd: until then the forked child still
// holds every descriptor. A raw fork: the point is what exec passes on.
pid_t StartSleeper() {
  int sync[2];
  if (pipe2(sync, O_CLOEXEC) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(sync[1]);
  char byte;
  while (read(sync[0], &byte, 1) < 0 && errno == EINTR) {
  }
  close(sync[0]);  // EOF: the exec closed the child's end
  return pid;
}

void KillAndReap(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

TEST(DirectoryLock, SecondAcquireNamesTheHolder) {
  TempDir dir;
  StatusOr<DirectoryLock> first = DirectoryLock::Acquire(dir.path());
  ASSERT_OK(first);
  EXPECT_EQ(first->path(), dir.path() + "/.trialshim.lock");

  StatusOr<DirectoryLock> second = DirectoryLock::Acquire(dir.path());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  const std::string& msg = second.status().message();
  EXPECT_NE(msg.find(dir.path() + " is in use by pid " +
                     std::to_string(getpid()) + " ("),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("lock_test"), std::string::npos) << msg;  // its command

  first = Status::Internal("released");  // destroys the lock
  EXPECT_OK(DirectoryLock::Acquire(dir.path()));
}

// How the sweep keeps a trial's directory locked while the trial lives, even
// after the sweep itself was killed.
TEST(DirectoryLock, InheritedLockOutlivesItsTaker) {
  struct Case {
    const char* name;
    bool inherit;
    bool locked_while_child_lives;
  } cases[] = {
      {"inherited: the child holds it", true, true},
      {"close-on-exec: the child does not", false, false},
  };
  for (const Case& c : cases) {
    TempDir dir;
    pid_t child;
    {
      StatusOr<DirectoryLock> lock =
          DirectoryLock::Acquire(dir.path(), {/*inherit=*/c.inherit});
      ASSERT_OK(lock) << c.name;
      child = StartSleeper();
    }  // our descriptor is closed here
    StatusOr<DirectoryLock> again = DirectoryLock::Acquire(dir.path());
    EXPECT_EQ(!again.ok(), c.locked_while_child_lives) << c.name;
    if (!again.ok()) {
      EXPECT_EQ(again.status().code(), StatusCode::kUnavailable) << c.name;
    }
    again = Status::Internal("released");
    KillAndReap(child);  // SIGKILL: the kernel drops the lock
    EXPECT_OK(DirectoryLock::Acquire(dir.path())) << c.name;
  }
}

TEST(DirectoryLock, MissingDirectoryIsAnIOErrorNamingTheFile) {
  TempDir dir;
  StatusOr<DirectoryLock> lock = DirectoryLock::Acquire(dir.Join("absent"));
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), StatusCode::kIOError);
  EXPECT_EQ(lock.status().message(),
            "cannot create lock file " + dir.Join("absent") +
                "/.trialshim.lock: No such file or directory");
}


// A lock file is ours to create and rewrite: one planted in the directory
// (a link to a file elsewhere, which the lock would truncate; a FIFO, which
// would block the open; a second name of another file) is refused, naming
// it, and what it points to is left as it was.
TEST(DirectoryLock, PlantedLockFileIsRefusedAndLeftAlone) {
  struct Case {
    const char* name;
    std::string want;  // after "cannot create lock file <path>: "
  } cases[] = {
      {"symbolic link", "it is a symbolic link, not a regular file"},
      {"hard link", "it has 2 names (hard links), not one of ours alone"},
      {"FIFO", "it is a FIFO, not a regular file"},
  };
  for (const Case& c : cases) {
    TempDir dir, elsewhere;
    std::string outside = elsewhere.Write("passwd", "root:x:0:0\n");
    std::string lock_file = dir.Join(kLockFileName);
    std::string kind = c.name;
    if (kind == "symbolic link") {
      ASSERT_EQ(symlink(outside.c_str(), lock_file.c_str()), 0) << c.name;
    } else if (kind == "hard link") {
      ASSERT_EQ(link(outside.c_str(), lock_file.c_str()), 0) << c.name;
    } else {
      ASSERT_TRUE(testing::MakeSpecial(testing::Special::kFifo, lock_file));
    }
    for (bool inherit : {false, true}) {
      StatusOr<DirectoryLock> lock =
          DirectoryLock::Acquire(dir.path(), {inherit, {}});
      EXPECT_THAT(lock, testing::StatusIs(StatusCode::kIOError,
                                          "cannot create lock file " +
                                              lock_file + ": " + c.want))
          << c.name;
    }
    EXPECT_EQ(testing::ReadFile(outside), "root:x:0:0\n") << c.name;
  }
}

}  // namespace
}  // namespace trialshim
