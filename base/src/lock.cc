#include "trialshim/base/lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include "trialshim/base/file.h"

namespace trialshim {
namespace {

// "1234 (trialshim sweep job.yaml --out o)": who we are, for the next run's
// message. /proc/self/cmdline separates arguments with NULs.
std::string Holder() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string cmdline((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
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
  int cloexec = options.inherit ? 0 : O_CLOEXEC;
  int fd = open(path.c_str(), O_RDWR | O_CREAT | cloexec, 0644);
  // Another user's lock file: flock works on a read-only descriptor too; we
  // just can not record who we are in it.
  bool writable = fd >= 0;
  if (fd < 0 && errno == EACCES) fd = open(path.c_str(), O_RDONLY | cloexec);
  if (fd < 0) return IOErrorFor("create lock file", path, errno);
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
