#include "trialshim/base/lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "trialshim/base/file.h"

namespace trialshim {
namespace {

// "1234 (trialshim sweep job.yaml --out o)": who we are, for the next run's
// message. /proc/self/cmdline separates arguments with NULs.
std::string Holder() {
  // At most what execve() takes (base/subprocess.h: 6 MiB).
  StatusOr<std::string> read =
      ReadInputFile("/proc/self/cmdline", uint64_t{8} << 20);
  std::string cmdline = read.ok() ? std::move(*read) : "";
  while (!cmdline.empty() && cmdline.back() == '\0') cmdline.pop_back();
  for (char& c : cmdline) {
    if (c == '\0') c = ' ';
  }
  if (cmdline.size() > 200) cmdline = cmdline.substr(0, 197) + "...";
  return std::to_string(getpid()) + " (" + cmdline + ")";
}

// What the holder wrote into the lock file; the write races with our read
// only in the instant after its flock, so an empty text is possible.
std::string ReadHolder(int fd) {
  char buf[512];
  ssize_t n = pread(fd, buf, sizeof buf, 0);
  std::string text = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) {
    text.pop_back();
  }
  return text.empty() ? "another process" : "pid " + text;
}

}  // namespace

StatusOr<DirectoryLock> DirectoryLock::Acquire(const std::string& dir,
                                               Options options) {
  std::string path = dir + "/" + kLockFileName;
  // A lock file is ours to create and rewrite, so only one that is a plain
  // file of this directory: a symbolic link planted there would make us
  // truncate what it points to, a FIFO would block the open (OpenOwnFile).
  StatusOr<ScopedFd> opened = OpenOwnFile(path, O_RDWR | O_CREAT, 0644, "create lock file");
  // Another user's lock file: flock works on a read-only descriptor too; we
  // just can not record who we are in it.
  bool writable = opened.ok();
  if (!writable) {
    StatusOr<ScopedFd> readable = OpenOwnFile(path, O_RDONLY, 0644, "create lock file");
    if (!readable.ok()) return opened.status();
    opened = std::move(readable);
  }
  int fd = opened->release();
  if (options.inherit) {
    // Held by the children it is passed to (Options::inherit).
    int flags = fcntl(fd, F_GETFD);
    if (flags < 0 || fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC) != 0) {
      int err = errno;
      close(fd);
      return IOErrorFor("lock", path, err);
    }
  }
  auto deadline = std::chrono::steady_clock::now() + options.wait;
  int locked;
  while ((locked = flock(fd, LOCK_EX | LOCK_NB)) != 0 && errno == EWOULDBLOCK &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (locked != 0) {
    int err = errno;
    std::string holder = ReadHolder(fd);
    close(fd);
    if (err == EWOULDBLOCK) {
      return Status::Unavailable(
          dir + " is in use by " + holder +
          " or a process it started; wait for that run to end, or use "
          "another directory");
    }
    return IOErrorFor("lock", path, err);
  }
  // Not durable on purpose: the text only names us while we hold the lock.
  std::string holder = Holder() + "\n";
  if (writable && (ftruncate(fd, 0) != 0 ||
      pwrite(fd, holder.data(), holder.size(), 0) !=
          static_cast<ssize_t>(holder.size()))) {
    int err = errno;
    close(fd);
    return IOErrorFor("write lock file", path, err);
  }
  return DirectoryLock(std::move(path), fd);
}

DirectoryLock::DirectoryLock(DirectoryLock&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

DirectoryLock& DirectoryLock::operator=(DirectoryLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

DirectoryLock::~DirectoryLock() {
  // Closing releases our hold; a child that inherited the descriptor keeps
  // the lock until it exits. The file stays: removing it would let a third
  // run lock a new file while the second still holds the old one.
  if (fd_ >= 0) close(fd_);
}

}  // namespace trialshim
