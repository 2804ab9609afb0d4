#include "trialshim/base/file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "tests/testutil/fault.h"
#include "tests/testutil/special_files.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim {
namespace {

using ::trialshim::testing::AsNobody;
using ::trialshim::testing::FileSizeLimit;
using ::trialshim::testing::InChild;
using ::trialshim::testing::ListDir;
using ::trialshim::testing::MountTmpfs;
using ::trialshim::testing::ReadFile;
using ::trialshim::testing::TempDir;

std::string Join(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

void Put(const std::string& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

// A pid that no process has: a child that has exited and been reaped.
pid_t DeadPid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return pid;
}

TEST(DurableWriter, ReplaceKeepsTheOldContentsUntilCommit) {
  struct Case {
    const char* name;
    bool existed;  // whether the target had contents before
  };
  for (const Case& c :
       {Case{"replaces a file", true}, Case{"creates a file", false}}) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    std::string path = dir.Join("model.pt");
    if (c.existed) dir.Write("model.pt", "old");
    StatusOr<DurableWriter> w = DurableWriter::Open(path);
    ASSERT_OK(w.status());
    ASSERT_OK(w->Append("new "));
    ASSERT_OK(w->Append("contents"));
    EXPECT_EQ(ReadFile(path), c.existed ? "old" : "");
    EXPECT_EQ(ListDir(dir.path()).size(), c.existed ? 2u : 1u)
        << Join(ListDir(dir.path()));
    ASSERT_OK(w->Commit());
    EXPECT_EQ(ReadFile(path), "new contents");
    EXPECT_EQ(ListDir(dir.path()), std::set<std::string>{"model.pt"});
  }
}

TEST(DurableWriter, AbandonedWriterLeavesNoTemporary) {
  struct Case {
    const char* name;
    std::function<void(DurableWriter&)> use;
  };
  const std::vector<Case> cases = {
      {"destroyed unused", [](DurableWriter&) {}},
      {"destroyed after writing",
       [](DurableWriter& w) { ASSERT_OK(w.Append("partial")); }},
      {"moved from, then destroyed",
       [](DurableWriter& w) {
         ASSERT_OK(w.Append("partial"));
         DurableWriter taken = std::move(w);
       }},
      {"assigned over",
       [](DurableWriter& w) {
         StatusOr<DurableWriter> other =
             DurableWriter::Open(w.path() + ".other");
         ASSERT_OK(other.status());
         w = std::move(*other);
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    dir.Write("last.ckpt", "old");
    {
      StatusOr<DurableWriter> w = DurableWriter::Open(dir.Join("last.ckpt"));
      ASSERT_OK(w.status());
      c.use(*w);
    }
    EXPECT_EQ(ReadFile(dir.Join("last.ckpt")), "old");
    EXPECT_EQ(ListDir(dir.path()), std::set<std::string>{"last.ckpt"})
        << Join(ListDir(dir.path()));
  }
}

// What a failed write leaves: "<message>\n<names in the directory>\n<the
// target's contents>", taken where the fault is (a child for the tmpfs and
// the dropped root).
std::string Attempt(const std::string& dir, const std::string& target) {
  Status s = WriteFileDurably(target, std::string(64 * 1024, 'x'));
  return (s.ok() ? "OK" : s.message()) + "\n" + Join(ListDir(dir)) + "\n" +
         ReadFile(target);
}

TEST(DurableWriter, FailureNamesTheFileAndTheReasonAndLeavesNothing) {
  struct Case {
    const char* name;
    int reason;
    // Runs Attempt under the fault in the test's directory; "SKIP <why>"
    // where the fault can not be made here.
    std::function<std::string(const std::string& dir, std::string* target)> run;
  };
  const std::vector<Case> cases = {
      {"missing directory", ENOENT,
       [](const std::string& dir, std::string* target) {
         *target = dir + "/missing/trials.json";
         return Attempt(dir, *target);
       }},
      {"parent is a regular file", ENOTDIR,
       [](const std::string& dir, std::string* target) {
         Put(dir + "/file", "f");
         *target = dir + "/file/trials.json";
         return Attempt(dir, *target);
       }},
      {"directory root cannot write as nobody", EACCES,
       [](const std::string& dir, std::string* target) {
         chmod(dir.c_str(), 0755);
         *target = dir + "/trials.json";
         Put(*target, "old");
         chmod(target->c_str(), 0644);
         return InChild([&] {
           std::string why = AsNobody();
           if (!why.empty()) return "SKIP " + why;
           return Attempt(dir, *target);
         });
       }},
      {"disk full (8 KiB tmpfs)", ENOSPC,
       [](const std::string& dir, std::string* target) {
         *target = dir + "/trials.json";
         return InChild([&] {
           std::string why = MountTmpfs(dir, 8 * 1024);
           if (!why.empty()) return "SKIP " + why;
           Put(*target, "old");
           return Attempt(dir, *target);
         });
       }},
      {"file size limit", EFBIG,
       [](const std::string& dir, std::string* target) {
         *target = dir + "/trials.json";
         Put(*target, "old");
         FileSizeLimit limit(4096);
         return Attempt(dir, *target);
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    std::string target;
    std::string got = c.run(dir.path(), &target);
    if (got.rfind("SKIP ", 0) == 0) {
      // Only where the kernel refuses namespaces or setresuid.
      std::cout << "[ SKIPPED  ] " << c.name << ": " << got << "\n";
      continue;
    }
    std::string message = got.substr(0, got.find('\n'));
    EXPECT_NE(message.find(target), std::string::npos) << got;
    EXPECT_NE(message.find(std::strerror(c.reason)), std::string::npos) << got;
    // Nothing beside what was there: no temporary, the old target whole.
    std::string rest = got.substr(got.find('\n') + 1);
    std::string names = rest.substr(0, rest.find('\n'));
    std::string contents = rest.substr(rest.find('\n') + 1);
    EXPECT_EQ(names.find(".tmp."), std::string::npos) << got;
    EXPECT_TRUE(contents.empty() || contents == "old") << got;
  }
}

TEST(CopyFileDurably, CopiesAndNamesAMissingSource) {
  TempDir dir;
  std::string src = dir.Write("last.ckpt", std::string(200000, 'c'));
  ASSERT_OK(CopyFileDurably(src, dir.Join("epoch=1.ckpt")));
  EXPECT_EQ(ReadFile(dir.Join("epoch=1.ckpt")), ReadFile(src));
  Status s = CopyFileDurably(dir.Join("gone"), dir.Join("x"));
  EXPECT_THAT(s, StatusIs(StatusCode::kIOError, HasSubstr(dir.Join("gone"))));
  EXPECT_EQ(ListDir(dir.path()),
            (std::set<std::string>{"epoch=1.ckpt", "last.ckpt"}));
}

// A link replaces a file, another link or nothing in one rename, reads
// through to its target, and leaves no temporary; when it can not be made
// the old name stays as it was and the error names the path.
TEST(SymlinkDurably, ReplacesWhatWasThereAndLeavesNoTemporary) {
  struct Case {
    const char* name;
    const char* existing;  // "file", "link" or "" (none)
  } cases[] = {{"over a file", "file"}, {"over a link", "link"}, {"new", ""}};
  for (const Case& c : cases) {
    TempDir dir;
    dir.Write("epoch=1.ckpt", "one");
    dir.Write("epoch=2.ckpt", "two");
    if (std::string(c.existing) == "file") dir.Write("last.ckpt", "old");
    if (std::string(c.existing) == "link") {
      ASSERT_OK(SymlinkDurably("epoch=1.ckpt", dir.Join("last.ckpt"))) << c.name;
    }
    ASSERT_OK(SymlinkDurably("epoch=2.ckpt", dir.Join("last.ckpt"))) << c.name;
    EXPECT_EQ(ReadFile(dir.Join("last.ckpt")), "two") << c.name;
    EXPECT_EQ(ListDir(dir.path()),
              (std::set<std::string>{"epoch=1.ckpt", "epoch=2.ckpt", "last.ckpt"}))
        << c.name;
  }
  // A directory in the way: rename fails, the directory stays, no temporary.
  TempDir dir;
  ASSERT_OK(MakeDirectories(dir.Join("last.ckpt/inside")));
  Status s = SymlinkDurably("epoch=2.ckpt", dir.Join("last.ckpt"));
  EXPECT_THAT(s,
              StatusIs(StatusCode::kIOError,
                       HasSubstr("cannot replace " + dir.Join("last.ckpt"))));
  EXPECT_EQ(ListDir(dir.path()), (std::set<std::string>{"last.ckpt"}));
}

// An unreadable file kept aside is renamed to the first free
// "<name>.<tag>-N", never over an earlier one; a missing file names itself.
TEST(RenameAsideDurably, TakesTheFirstFreeNumber) {
  TempDir dir;
  dir.Write("last.ckpt", "first");
  StatusOr<std::string> first = RenameAsideDurably(dir.Join("last.ckpt"), "unreadable");
  ASSERT_OK(first);
  EXPECT_EQ(*first, dir.Join("last.ckpt.unreadable-1"));
  dir.Write("last.ckpt", "second");
  StatusOr<std::string> second = RenameAsideDurably(dir.Join("last.ckpt"), "unreadable");
  ASSERT_OK(second);
  EXPECT_EQ(*second, dir.Join("last.ckpt.unreadable-2"));
  EXPECT_EQ(ReadFile(*first), "first");
  EXPECT_EQ(ReadFile(*second), "second");
  EXPECT_EQ(ListDir(dir.path()),
            (std::set<std::string>{"last.ckpt.unreadable-1",
                                   "last.ckpt.unreadable-2"}));
  StatusOr<std::string> none = RenameAsideDurably(dir.Join("gone"), "unreadable");
  EXPECT_THAT(none,
              StatusIs(StatusCode::kIOError,
                       HasSubstr("cannot rename aside " + dir.Join("gone") +
                                 ": No such file or directory")));
}

// A file another process controls is read only when it is a regular file,
// never blocking on it and never reading more than asked, whatever it is.
TEST(ReadFileTail, ReadsOnlyTheEndOfRegularFiles) {
  TempDir dir;
  dir.Write("small", "abc\n");
  dir.Write("large", std::string(100, 'x') + "tail");
  ASSERT_EQ(mkfifo(dir.Join("fifo").c_str(), 0644), 0);
  ASSERT_EQ(symlink("/dev/zero", dir.Join("zero").c_str()), 0);
  ASSERT_EQ(symlink("small", dir.Join("link").c_str()), 0);
  ASSERT_OK(MakeDirectories(dir.Join("dir")));
  int sock = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  std::string sock_path = dir.Join("sock");
  ASSERT_LT(sock_path.size(), sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, sock_path.c_str(), sock_path.size() + 1);
  ASSERT_EQ(bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  struct Case {
    std::string name;
    std::string path;
    StatusCode code;
    std::string want;  // the data read, or a part of the message
    uint64_t size = 0;
  } cases[] = {
      {"small file read whole", dir.Join("small"), StatusCode::kOk, "abc\n", 4},
      {"large file: its end", dir.Join("large"), StatusCode::kOk,
       std::string(4, 'x') + "tail", 104},
      {"FIFO without a writer", dir.Join("fifo"), StatusCode::kInvalidArgument,
       dir.Join("fifo") + " is a FIFO, not a regular file"},
      {"link to /dev/zero", dir.Join("zero"), StatusCode::kInvalidArgument,
       dir.Join("zero") + " is a symbolic link, not a regular file"},
      {"link to a regular file", dir.Join("link"),
       StatusCode::kInvalidArgument, "is a symbolic link"},
      {"/dev/zero itself", "/dev/zero", StatusCode::kInvalidArgument,
       "/dev/zero is a character device, not a regular file"},
      {"directory", dir.Join("dir"), StatusCode::kInvalidArgument,
       "is a directory, not a regular file"},
      {"socket", sock_path, StatusCode::kInvalidArgument,
       "is a socket, not a regular file"},
      {"missing", dir.Join("none"), StatusCode::kNotFound,
       "No such file or directory"},
  };
  for (const Case& c : cases) {
    StatusOr<FileTail> got = ReadFileTail(c.path, 8);
    EXPECT_EQ(got.status().code(), c.code)
        << "case " << c.name << ": " << got.status().message();
    if (!got.ok()) {
      EXPECT_THAT(got, StatusIs(_, HasSubstr(c.want))) << "case " << c.name;
      continue;
    }
    EXPECT_EQ(got->data, c.want) << "case " << c.name;
    EXPECT_EQ(got->size, c.size) << "case " << c.name;
    EXPECT_EQ(got->cut(), c.size > 8) << "case " << c.name;
  }
  close(sock);
}

TEST(RemoveStaleTemporaries, RemovesOnlyOurPatternOfDeadWriters) {
  TempDir dir;
  const std::string dead = std::to_string(DeadPid());
  const std::string alive = std::to_string(getppid());
  const std::string self = std::to_string(getpid());
  struct Case {
    std::string name;
    bool removed;
  };
  const std::vector<Case> cases = {
      {".model.pt.tmp." + dead + ".0", true},
      {".last.ckpt.tmp." + dead + ".12", true},
      // Our own pid, but no writer of ours has it open: a restarted
      // container that got the killed process's pid.
      {".metrics.csv.tmp." + self + ".999999", true},
      {".model.pt.tmp." + alive + ".0", false},  // its writer may still run
      {"model.pt.tmp." + dead + ".0", false},    // not hidden: not ours
      {".model.pt.tmp.x" + dead + ".0", false},
      {".model.pt.tmp." + dead + ".", false},
      {".model.pt.tmp." + dead + ".0.bak", false},
      {".tmp." + dead + ".0", false},  // no target name
      {"model.pt", false},
      {"model.pt.tmp", false},
  };
  for (const Case& c : cases) dir.Write(c.name, "x");
  // A temporary this process has open stays.
  StatusOr<DurableWriter> open = DurableWriter::Open(dir.Join("report.html"));
  ASSERT_OK(open.status());
  const std::set<std::string> with_open = ListDir(dir.path());

  StatusOr<int> removed = RemoveStaleTemporaries(dir.path());
  ASSERT_OK(removed.status());
  std::set<std::string> left = ListDir(dir.path());
  int want_removed = 0;
  for (const Case& c : cases) {
    EXPECT_EQ(left.count(c.name) == 0, c.removed) << c.name;
    want_removed += c.removed;
  }
  EXPECT_EQ(*removed, want_removed);
  EXPECT_EQ(left.size(), with_open.size() - want_removed) << Join(left);
  ASSERT_OK(open->Commit());
  EXPECT_EQ(ReadFile(dir.Join("report.html")), "");

  StatusOr<int> missing = RemoveStaleTemporaries(dir.Join("absent"));
  ASSERT_OK(missing.status());
  EXPECT_EQ(*missing, 0);
}

// A stale temporary that carries the name the next writer would pick (our
// pid, reused) is not written into: the writer takes another name.
TEST(DurableWriter, StaleTemporaryWithOurPidIsNotReused) {
  TempDir dir;
  std::string path = dir.Join("m");
  // The names this process will try next are unknown, so occupy many.
  StatusOr<DurableWriter> probe = DurableWriter::Open(path);
  ASSERT_OK(probe.status());
  probe = DurableWriter::Open(path);  // abandons the first
  ASSERT_OK(probe.status());
  std::set<std::string> names = ListDir(dir.path());
  ASSERT_EQ(names.size(), 1u);
  std::string name = *names.begin();
  size_t dot = name.rfind('.');
  long next = std::stol(name.substr(dot + 1)) + 1;
  for (long n = next; n < next + 5; ++n) {
    dir.Write(name.substr(0, dot + 1) + std::to_string(n), "stale");
  }
  ASSERT_OK(WriteFileDurably(path, "fresh"));
  EXPECT_EQ(ReadFile(path), "fresh");
  for (long n = next; n < next + 5; ++n) {
    EXPECT_EQ(ReadFile(dir.Join(name.substr(0, dot + 1) + std::to_string(n))),
              "stale");
  }
}


// Every input is read through ReadInputFile: what is not a regular file is
// refused at once, naming the file and what it is, without blocking (a FIFO
// without a writer would block open() for ever, /dev/zero never ends) and
// without opening a device; a link is followed to what it names.
TEST(ReadInputFile, RefusesWhatIsNotARegularFileWithoutBlocking) {
  using testing::Special;
  struct Case {
    const char* name;
    Special special;
    bool through_link;  // named by a symbolic link to it
  } cases[] = {
      {"FIFO without a writer", Special::kFifo, false},
      {"link to a FIFO", Special::kFifo, true},
      {"null device", Special::kNullDevice, false},
      {"zero device (never ends)", Special::kZeroDevice, true},
      {"block device", Special::kBlockDevice, false},
      {"socket", Special::kSocket, false},
      {"directory", Special::kDirectory, false},
  };
  for (const Case& c : cases) {
    TempDir dir;
    std::string target = dir.Join("node");
    ASSERT_TRUE(testing::MakeSpecial(c.special, target))
        << c.name << ": " << std::strerror(errno);
    std::string path = target;
    if (c.through_link) {
      path = dir.Join("job.yaml");
      ASSERT_EQ(symlink(target.c_str(), path.c_str()), 0) << c.name;
    }
    StatusOr<std::string> read = ReadInputFile(path);
    EXPECT_THAT(read, StatusIs(StatusCode::kIOError,
                               "cannot read " + path + ": it is " +
                                   testing::SpecialKind(c.special) +
                                   ", not a regular file"))
        << c.name;
    EXPECT_THAT(OpenInputFile(path), StatusIs(StatusCode::kIOError, _))
        << c.name;
  }
}

TEST(ReadInputFile, ReadsRegularFilesWithinTheirBound) {
  TempDir dir;
  std::string file = dir.Write("a.yaml", "a: 1\n");
  std::string link = dir.Join("link.yaml");
  ASSERT_EQ(symlink(file.c_str(), link.c_str()), 0);
  struct Case {
    const char* name;
    std::string path;
    uint64_t max;
    StatusCode code;
    std::string want;  // the text, or the message
  } cases[] = {
      {"regular file", file, 100, StatusCode::kOk, "a: 1\n"},
      {"link to one", link, 100, StatusCode::kOk, "a: 1\n"},
      {"exactly the bound", file, 5, StatusCode::kOk, "a: 1\n"},
      {"over the bound", file, 4, StatusCode::kInvalidArgument,
       file + ": 5 bytes, more than the 4 allowed"},
      // /proc says 0 bytes: the bound holds on what is read.
      {"a /proc file over the bound", "/proc/self/status", 16,
       StatusCode::kInvalidArgument,
       "/proc/self/status: more than the 16 allowed"},
      {"missing", dir.Join("nope"), 100, StatusCode::kNotFound,
       "cannot read " + dir.Join("nope") + ": No such file or directory"},
      {"below a file", file + "/x", 100, StatusCode::kNotFound,
       "cannot read " + file + "/x: Not a directory"},
  };
  for (const Case& c : cases) {
    StatusOr<std::string> read = ReadInputFile(c.path, c.max);
    if (c.code == StatusCode::kOk) {
      ASSERT_OK(read.status()) << c.name;
      EXPECT_EQ(*read, c.want) << c.name;
    } else {
      EXPECT_THAT(read, StatusIs(c.code, c.want)) << c.name;
    }
  }
}

// A file we create or append to in a directory of ours is never what a
// link planted there points to, never a FIFO that blocks the open, never a
// device, and never a second name of a file elsewhere; what was planted and
// what it points to stay as they were.
TEST(OpenOwnFile, RefusesWhatWasPlantedAndLeavesItAlone) {
  using testing::Special;
  struct Case {
    const char* name;
    std::function<bool(const std::string& path, const std::string& outside)>
        plant;
    std::string want;  // after "cannot open <path>: "
  } cases[] = {
      {"symbolic link to a file elsewhere",
       [](const std::string& p, const std::string& o) {
         return symlink(o.c_str(), p.c_str()) == 0;
       },
       "it is a symbolic link, not a regular file"},
      {"dangling symbolic link",
       [](const std::string& p, const std::string& o) {
         return symlink((o + ".absent").c_str(), p.c_str()) == 0;
       },
       "it is a symbolic link, not a regular file"},
      {"hard link to a file elsewhere",
       [](const std::string& p, const std::string& o) {
         return link(o.c_str(), p.c_str()) == 0;
       },
       "it has 2 names (hard links), not one of ours alone"},
      {"FIFO without a reader",
       [](const std::string& p, const std::string&) {
         return testing::MakeSpecial(Special::kFifo, p);
       },
       "it is a FIFO, not a regular file"},
      {"full device",
       [](const std::string& p, const std::string&) {
         return testing::MakeSpecial(Special::kFullDevice, p);
       },
       "it is a character device, not a regular file"},
      {"socket",
       [](const std::string& p, const std::string&) {
         return testing::MakeSpecial(Special::kSocket, p);
       },
       "it is a socket, not a regular file"},
  };
  for (int flags : {O_WRONLY | O_APPEND | O_CREAT, O_RDWR | O_CREAT}) {
    for (const Case& c : cases) {
      TempDir dir, elsewhere;
      std::string outside = elsewhere.Write("precious", "keep me\n");
      std::string path = dir.Join("log");
      ASSERT_TRUE(c.plant(path, outside)) << c.name << ": "
                                          << std::strerror(errno);
      mode_t before = testing::TypeAt(path);
      EXPECT_THAT(OpenOwnFile(path, flags),
                  StatusIs(StatusCode::kIOError,
                           "cannot open " + path + ": " + c.want))
          << c.name << ", flags " << flags;
      EXPECT_EQ(testing::TypeAt(path), before) << c.name;
      EXPECT_EQ(ReadFile(outside), "keep me\n") << c.name;
    }
  }
  // A plain file of ours, new or there, is opened (blocking again).
  TempDir dir;
  StatusOr<ScopedFd> fd =
      OpenOwnFile(dir.Join("log"), O_WRONLY | O_APPEND | O_CREAT);
  ASSERT_OK(fd.status());
  EXPECT_EQ(fcntl(fd->get(), F_GETFL) & O_NONBLOCK, 0);
  ASSERT_EQ(write(fd->get(), "x", 1), 1);
  fd = OpenOwnFile(dir.Join("log"), O_WRONLY | O_APPEND | O_CREAT);
  ASSERT_OK(fd.status());
  ASSERT_EQ(write(fd->get(), "y", 1), 1);
  EXPECT_EQ(ReadFile(dir.Join("log")), "xy");
}

// A durable replace never renames over a device, a FIFO or a socket (which
// would turn /dev/null into a regular file for everyone); a symbolic link is
// replaced itself, its target left alone.
TEST(DurableWriter, NeverReplacesWhatIsNotARegularFile) {
  using testing::Special;
  for (Special s : {Special::kNullDevice, Special::kFullDevice, Special::kFifo,
                    Special::kSocket}) {
    TempDir dir;
    std::string path = dir.Join("output.metrics");
    ASSERT_TRUE(testing::MakeSpecial(s, path)) << testing::SpecialKind(s);
    mode_t before = testing::TypeAt(path);
    EXPECT_THAT(WriteFileDurably(path, "{}\n"),
                StatusIs(StatusCode::kIOError,
                         "cannot replace " + path + ": it is " +
                             testing::SpecialKind(s) + ", not a regular file"))
        << testing::SpecialKind(s);
    EXPECT_EQ(testing::TypeAt(path), before) << testing::SpecialKind(s);
    EXPECT_EQ(ListDir(dir.path()), std::set<std::string>{"output.metrics"})
        << testing::SpecialKind(s) << ": no temporary left";
  }
  TempDir dir;
  std::string target = dir.Write("target", "old");
  std::string link = dir.Join("last.ckpt");
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  ASSERT_OK(WriteFileDurably(link, "new"));
  EXPECT_EQ(testing::TypeAt(link), static_cast<mode_t>(S_IFREG));
  EXPECT_EQ(ReadFile(link), "new");
  EXPECT_EQ(ReadFile(target), "old");
}

// Whatever stands in for a source, a copy never blocks or runs on.
TEST(CopyFileDurably, RefusesASourceThatIsNoRegularFile) {
  using testing::Special;
  for (Special s : {Special::kFifo, Special::kZeroDevice}) {
    TempDir dir;
    std::string src = dir.Join("last.ckpt");
    ASSERT_TRUE(testing::MakeSpecial(s, src)) << testing::SpecialKind(s);
    EXPECT_THAT(CopyFileDurably(src, dir.Join("copy")),
                StatusIs(StatusCode::kIOError,
                         "cannot read " + src + ": it is " +
                             testing::SpecialKind(s) + ", not a regular file"))
        << testing::SpecialKind(s);
    EXPECT_EQ(testing::TypeAt(dir.Join("copy")), 0u) << testing::SpecialKind(s);
  }
}

}  // namespace
}  // namespace trialshim
