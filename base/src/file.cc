#include "trialshim/base/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>  // renameat2
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "trialshim/base/strings.h"

namespace trialshim {
namespace {

constexpr std::string_view kTmpMarker = ".tmp.";

std::atomic<unsigned> g_sequence{0};

// The temporaries this process has open. In a container the restarted
// trainer often gets the pid of the killed one, so "the owner is alive" is
// not enough for a temporary that carries our own pid: it is stale unless it
// is one of these. Names, not paths: the sequence number makes a name
// unique within the process however its directory is spelt.
std::mutex g_live_mutex;
std::set<std::string, std::less<>> g_live;

void SetLive(std::string_view name, bool live) {
  std::lock_guard<std::mutex> lock(g_live_mutex);
  if (live) {
    g_live.emplace(name);
  } else if (auto it = g_live.find(name); it != g_live.end()) {
    g_live.erase(it);
  }
}

bool IsLive(std::string_view name) {
  std::lock_guard<std::mutex> lock(g_live_mutex);
  return g_live.find(name) != g_live.end();
}

// Whether process `pid` may still be writing (EPERM: it exists). Signal 0
// checks without sending (kill(2)); only ESRCH says there is none.
bool Alive(pid_t pid) { return kill(pid, 0) == 0 || errno != ESRCH; }

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// ".<name>.tmp.<pid>." beside `path`: a temporary's name before its number.
std::string TemporaryPrefix(const std::string& path) {
  return DirOf(path) + "/." + BaseOf(path) + std::string(kTmpMarker) +
         std::to_string(getpid()) + ".";
}

// The pid in ".<name>.tmp.<pid>.<n>", or 0 when `name` is not ours.
pid_t TemporaryOwner(std::string_view name) {
  if (name.size() < 2 || name[0] != '.') return 0;
  size_t marker = name.rfind(kTmpMarker);
  if (marker == std::string_view::npos || marker == 0) return 0;
  std::string_view rest = name.substr(marker + kTmpMarker.size());
  size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == rest.size()) {
    return 0;
  }
  std::string_view pid = rest.substr(0, dot), seq = rest.substr(dot + 1);
  auto digits = [](std::string_view s) {
    return s.size() <= 10 && s.find_first_not_of("0123456789") ==
                                 std::string_view::npos;
  };
  if (!digits(pid) || !digits(seq)) return 0;
  long value = std::strtol(std::string(pid).c_str(), nullptr, 10);
  return value > 0 ? static_cast<pid_t>(value) : 0;
}

// What a file is, for "it is a FIFO, not a regular file".
const char* KindOf(mode_t mode) {
  return S_ISLNK(mode)    ? "a symbolic link"
         : S_ISFIFO(mode) ? "a FIFO"
         : S_ISCHR(mode)  ? "a character device"
         : S_ISBLK(mode)  ? "a block device"
         : S_ISSOCK(mode) ? "a socket"
         : S_ISDIR(mode)  ? "a directory"
                          : "something else";
}

// IOError "cannot <verb> <path>: it is a FIFO, not a regular file".
Status NotRegularIO(std::string_view verb, const std::string& path,
                    mode_t mode) {
  return Status::IOError("cannot " + std::string(verb) + " " +
                         Abbreviated(path) + ": it is " + KindOf(mode) +
                         ", not a regular file");
}

// fsync(2): syncing a file "does not necessarily ensure that the entry in
// the directory containing the file has also reached disk"; the directory's
// own fsync does, and makes a rename or a new name survive a crash.
Status SyncDirectory(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IOErrorFor("open directory", dir, errno);
  int rc = fsync(fd);
  int err = errno;
  close(fd);
  // Some file systems (FUSE mounts such as /gcs) cannot sync a directory;
  // the rename itself is still atomic there. fsync(2) names EINVAL for a
  // descriptor that "does not support synchronization".
  if (rc != 0 && err != EINVAL && err != ENOTSUP) {
    return IOErrorFor("sync directory", dir, err);
  }
  return Status::Ok();
}

}  // namespace

Status IOErrorFor(std::string_view verb, const std::string& path, int err) {
  return Status::IOError("cannot " + std::string(verb) + " " +
                         Abbreviated(path) + ": " + std::strerror(err));
}

StatusOr<DurableWriter> DurableWriter::Open(const std::string& path,
                                            mode_t mode) {
  const std::string prefix = TemporaryPrefix(path);
  // EEXIST: a stale temporary of an earlier process with our pid; take the
  // next number rather than writing into it.
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string tmp = prefix + std::to_string(g_sequence++);
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd >= 0) {
      SetLive(BaseOf(tmp), true);
      return DurableWriter(path, std::move(tmp), fd);
    }
    if (errno != EEXIST) break;
  }
  return IOErrorFor("write", path, errno);
}

DurableWriter::DurableWriter(DurableWriter&& other) noexcept
    : path_(std::move(other.path_)),
      tmp_(std::move(other.tmp_)),
      fd_(other.fd_) {
  other.fd_ = -1;
  other.tmp_.clear();
}

DurableWriter& DurableWriter::operator=(DurableWriter&& other) noexcept {
  if (this != &other) {
    Abandon();
    path_ = std::move(other.path_);
    tmp_ = std::move(other.tmp_);
    fd_ = other.fd_;
    other.fd_ = -1;
    other.tmp_.clear();
  }
  return *this;
}

DurableWriter::~DurableWriter() { Abandon(); }

void DurableWriter::Abandon() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) {
    unlink(tmp_.c_str());
    SetLive(BaseOf(tmp_), false);
  }
  tmp_.clear();
}

Status DurableWriter::Append(std::string_view data) {
  if (fd_ < 0) return Status::IOError("cannot write " + path_ + ": closed");
  while (!data.empty()) {
    ssize_t n = write(fd_, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status st = IOErrorFor("write", path_, errno);
      Abandon();
      return st;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status DurableWriter::Commit() {
  if (fd_ < 0) return Status::IOError("cannot write " + path_ + ": closed");
  // Data on disk before the name points at it: else a crash can leave the
  // new name on an empty file.
  if (fsync(fd_) != 0) {
    Status st = IOErrorFor("write", path_, errno);
    Abandon();
    return st;
  }
  int rc = close(fd_);
  fd_ = -1;
  if (rc != 0) {
    Status st = IOErrorFor("write", path_, errno);
    Abandon();
    return st;
  }
  // Never over what is not a file of ours: rename() would replace a
  // device node or a FIFO with a regular file (the metric file named
  // /dev/null). A link is replaced itself, its target left alone.
  struct stat target;
  // (A directory is left to rename, which refuses it: EISDIR.)
  if (lstat(path_.c_str(), &target) == 0 && !S_ISREG(target.st_mode) &&
      !S_ISLNK(target.st_mode) && !S_ISDIR(target.st_mode)) {
    Status st = NotRegularIO("replace", path_, target.st_mode);
    Abandon();
    return st;
  }
  // rename(2): an existing target "will be atomically replaced", so a
  // reader sees the old contents or the new, never a partial file.
  if (rename(tmp_.c_str(), path_.c_str()) != 0) {
    Status st = IOErrorFor("replace", path_, errno);
    Abandon();
    return st;
  }
  SetLive(BaseOf(tmp_), false);
  tmp_.clear();
  // The target now holds the new contents; an error here says they may not
  // survive a power loss.
  return SyncDirectory(DirOf(path_));
}

Status WriteFileDurably(const std::string& path, std::string_view contents,
                        mode_t mode) {
  TRIALSHIM_ASSIGN_OR_RETURN(DurableWriter writer,
                             DurableWriter::Open(path, mode));
  TRIALSHIM_RETURN_IF_ERROR(writer.Append(contents));
  return writer.Commit();
}

// symlink(2) refuses an existing name (EEXIST), so the link is made under
// a temporary name and renamed over `path`, as DurableWriter replaces a
// file; rename(2) replaces the link itself, never what it points to.
Status SymlinkDurably(const std::string& target, const std::string& path) {
  const std::string prefix = TemporaryPrefix(path);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string tmp = prefix + std::to_string(g_sequence++);
    if (symlink(target.c_str(), tmp.c_str()) != 0) {
      if (errno == EEXIST) continue;  // a stale temporary with our pid
      break;
    }
    if (rename(tmp.c_str(), path.c_str()) != 0) {
      Status st = IOErrorFor("replace", path, errno);
      unlink(tmp.c_str());
      return st;
    }
    return SyncDirectory(DirOf(path));
  }
  return IOErrorFor("link", path, errno);
}

Status MakeDirectories(const std::string& dir) {
  for (size_t pos = 0; pos != std::string::npos;) {
    pos = dir.find('/', pos + 1);
    std::string prefix = dir.substr(0, pos);
    if (prefix.empty()) continue;
    if (mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST) {
      return IOErrorFor("create directory", prefix, errno);
    }
  }
  struct stat st;
  if (!dir.empty() && (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))) {
    return IOErrorFor("create directory", dir, ENOTDIR);
  }
  return Status::Ok();
}

Status CopyFileDurably(const std::string& src, const std::string& dst) {
  // A source that is no regular file (a FIFO would block, /dev/zero never
  // ends) is refused like any input.
  // A missing source stays an IOError here, as this function always said.
  StatusOr<ScopedFd> opened = OpenInputFile(src);
  if (!opened.ok()) {
    return Status(StatusCode::kIOError, opened.status().message());
  }
  ScopedFd in = std::move(*opened);
  StatusOr<DurableWriter> writer = DurableWriter::Open(dst);
  Status st = writer.status();
  char buf[1 << 16];
  while (st.ok()) {
    ssize_t n = read(in.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) st = IOErrorFor("read", src, errno);
    if (n <= 0) break;
    st = writer->Append(std::string_view(buf, static_cast<size_t>(n)));
  }
  if (st.ok()) st = writer->Commit();
  return st;
}

void ScopedFd::reset(int fd) {
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
}

StatusOr<ScopedFd> OpenInputFile(const std::string& path) {
  auto failed = [&](int err) -> Status {
    if (err == ENOENT || err == ENOTDIR) {
      return Status::NotFound(IOErrorFor("read", path, err).message());
    }
    return IOErrorFor("read", path, err);
  };
  // stat first: a device is refused without being opened at all.
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return failed(errno);
  if (!S_ISREG(st.st_mode)) return NotRegularIO("read", path, st.st_mode);
  // O_NONBLOCK: a FIFO swapped in after the stat opens at once instead of
  // waiting for a writer (fifo(7)); O_NOCTTY: a terminal never becomes our
  // controlling one (open(2)).
  ScopedFd fd(
      open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) return failed(errno);
  // The name may have been swapped since the stat: the descriptor decides.
  if (fstat(fd.get(), &st) != 0) return IOErrorFor("read", path, errno);
  if (!S_ISREG(st.st_mode)) return NotRegularIO("read", path, st.st_mode);
  return fd;
}

StatusOr<std::string> ReadInputFile(const std::string& path,
                                    uint64_t max_bytes) {
  TRIALSHIM_ASSIGN_OR_RETURN(ScopedFd fd, OpenInputFile(path));
  auto too_big = [&](const std::string& size) {
    return Status::InvalidArgument(Abbreviated(path) + ": " + size +
                                   "more than the " +
                                   std::to_string(max_bytes) + " allowed");
  };
  struct stat st;
  if (fstat(fd.get(), &st) == 0 &&
      static_cast<uint64_t>(st.st_size) > max_bytes) {
    return too_big(std::to_string(st.st_size) + " bytes, ");
  }
  std::string text;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IOErrorFor("read", path, errno);
    if (n == 0) break;
    // The size said may be wrong (0 for /proc files) or grow meanwhile.
    if (text.size() + static_cast<uint64_t>(n) > max_bytes) {
      return too_big("");  // "<path>: more than the N allowed"
    }
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

// O_NOFOLLOW makes open(2) fail with ELOOP on a symbolic link, so a link
// planted at `path` cannot aim our write at another file; with O_NONBLOCK
// a FIFO nobody reads fails with ENXIO instead of blocking (open(2)), and
// fstat then refuses anything else that is not a regular file.
StatusOr<ScopedFd> OpenOwnFile(const std::string& path, int flags,
                               mode_t mode, std::string_view verb) {
  // O_TRUNC would act before the check; the caller truncates after it.
  assert((flags & O_TRUNC) == 0);
  ScopedFd fd(open(path.c_str(),
                   flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                   mode));
  struct stat st;
  if (fd.get() < 0) {
    int err = errno;
    // ELOOP: a symbolic link; ENXIO: a socket, or a FIFO nobody reads.
    if ((err == ELOOP || err == ENXIO) && lstat(path.c_str(), &st) == 0) {
      return NotRegularIO(verb, path, st.st_mode);
    }
    return IOErrorFor(verb, path, err);
  }
  if (fstat(fd.get(), &st) != 0) return IOErrorFor(verb, path, errno);
  if (!S_ISREG(st.st_mode)) return NotRegularIO(verb, path, st.st_mode);
  if (st.st_nlink > 1) {
    // Another name of the same file may lie anywhere on the file system.
    return Status::IOError("cannot " + std::string(verb) + " " + path +
                           ": it has " +
                           std::to_string(st.st_nlink) +
                           " names (hard links), not one of ours alone");
  }
  int fl = fcntl(fd.get(), F_GETFL);
  if (fl < 0 || fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK) != 0) {
    return IOErrorFor(verb, path, errno);
  }
  return fd;
}

StatusOr<std::string> RenameAsideDurably(const std::string& path,
                                         std::string_view tag) {
  for (int n = 1;; ++n) {
    std::string aside = path + "." + std::string(tag) + "-" + std::to_string(n);
    // RENAME_NOREPLACE: an older file kept aside under this name stays
    // (renameat2(2) fails with EEXIST); Linux 3.15 and glibc 2.28 have it.
    if (renameat2(AT_FDCWD, path.c_str(), AT_FDCWD, aside.c_str(),
                  RENAME_NOREPLACE) == 0) {
      TRIALSHIM_RETURN_IF_ERROR(SyncDirectory(DirOf(path)));
      return aside;
    }
    if (errno != EEXIST) return IOErrorFor("rename aside", path, errno);
  }
}

namespace {

// "<path> is a FIFO, not a regular file", and so on.
Status NotRegular(const std::string& path, mode_t mode) {
  return Status::InvalidArgument(Abbreviated(path) + " is " + KindOf(mode) +
                                 ", not a regular file");
}

}  // namespace

StatusOr<FileTail> ReadFileTail(const std::string& path, size_t max_bytes) {
  struct Fd {
    int fd;
    ~Fd() {
      if (fd >= 0) close(fd);
    }
  } in{open(path.c_str(),
            O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)};
  struct stat st;
  if (in.fd < 0) {
    int err = errno;
    if (err == ENOENT) {
      return Status::NotFound(IOErrorFor("read", path, err).message());
    }
    // ELOOP: the name is a symbolic link; ENXIO: a socket.
    if ((err == ELOOP || err == ENXIO) && lstat(path.c_str(), &st) == 0) {
      return NotRegular(path, st.st_mode);
    }
    return IOErrorFor("read", path, err);
  }
  if (fstat(in.fd, &st) != 0) return IOErrorFor("read", path, errno);
  if (!S_ISREG(st.st_mode)) return NotRegular(path, st.st_mode);
  FileTail tail;
  tail.size = static_cast<uint64_t>(st.st_size);
  uint64_t from = tail.size > max_bytes ? tail.size - max_bytes : 0;
  tail.data.resize(static_cast<size_t>(tail.size - from));
  size_t got = 0;
  while (got < tail.data.size()) {
    ssize_t n = pread(in.fd, &tail.data[got], tail.data.size() - got,
                      static_cast<off_t>(from + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IOErrorFor("read", path, errno);
    if (n == 0) break;  // it shrank meanwhile
    got += static_cast<size_t>(n);
  }
  tail.data.resize(got);
  return tail;
}

StatusOr<int> RemoveStaleTemporaries(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return 0;
    return IOErrorFor("read directory", dir, errno);
  }
  int removed = 0;
  Status failed;
  while (dirent* e = readdir(d)) {
    pid_t owner = TemporaryOwner(e->d_name);
    if (owner == 0) continue;
    std::string path = dir + "/" + e->d_name;
    if (owner == getpid() ? IsLive(e->d_name) : Alive(owner)) continue;
    if (unlink(path.c_str()) == 0) {
      ++removed;
    } else if (errno != ENOENT && failed.ok()) {
      failed = IOErrorFor("remove", path, errno);
    }
  }
  closedir(d);
  if (!failed.ok()) return failed;
  return removed;
}

}  // namespace trialshim
