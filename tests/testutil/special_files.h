// Test helper: what a hostile or careless neighbour can put where trialshim
// expects a regular file: a FIFO (mkfifo), device nodes made with mknod in
// the test's own directory (the tests run as root; /dev is never touched),
// a listening socket's name, a directory. Each is real: reading a FIFO
// without a writer blocks, writing /dev/full-alike fails with ENOSPC.
#ifndef TRIALSHIM_TESTS_TESTUTIL_SPECIAL_FILES_H_
#define TRIALSHIM_TESTS_TESTUTIL_SPECIAL_FILES_H_

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

namespace trialshim::testing {

enum class Special {
  kFifo,        // mkfifo
  kNullDevice,  // mknod c 1 3: what /dev/null is
  kFullDevice,  // mknod c 1 7: what /dev/full is (writes fail, ENOSPC)
  kZeroDevice,  // mknod c 1 5: what /dev/zero is (reads never end)
  kBlockDevice, // mknod b 7 0: a loop device's node (never opened here)
  kSocket,      // a bound AF_UNIX socket's name
  kDirectory,
};

// The kind as file.h names it ("a FIFO", "a character device", ...).
inline const char* SpecialKind(Special s) {
  switch (s) {
    case Special::kFifo:
      return "a FIFO";
    case Special::kNullDevice:
    case Special::kFullDevice:
    case Special::kZeroDevice:
      return "a character device";
    case Special::kBlockDevice:
      return "a block device";
    case Special::kSocket:
      return "a socket";
    case Special::kDirectory:
      return "a directory";
  }
  return "?";
}

// Makes `s` at `path`; false (with errno) when it can not be made.
inline bool MakeSpecial(Special s, const std::string& path) {
  switch (s) {
    case Special::kFifo:
      return mkfifo(path.c_str(), 0644) == 0;
    case Special::kNullDevice:
      return mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
    case Special::kFullDevice:
      return mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0;
    case Special::kZeroDevice:
      return mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 5)) == 0;
    case Special::kBlockDevice:
      return mknod(path.c_str(), S_IFBLK | 0600, makedev(7, 0)) == 0;
    case Special::kSocket: {
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      if (path.size() >= sizeof addr.sun_path) return false;
      std::strcpy(addr.sun_path, path.c_str());
      int fd = socket(AF_UNIX, SOCK_STREAM, 0);
      if (fd < 0) return false;
      // The name stays after the socket is closed: connect() then fails,
      // and open() gives ENXIO, as for any socket.
      bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
      close(fd);
      return ok;
    }
    case Special::kDirectory:
      return mkdir(path.c_str(), 0755) == 0;
  }
  return false;
}

// The st_mode type bits at `path` (not following a link), 0 when none.
inline mode_t TypeAt(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

}  // namespace trialshim::testing

#endif  // TRIALSHIM_TESTS_TESTUTIL_SPECIAL_FILES_H_
