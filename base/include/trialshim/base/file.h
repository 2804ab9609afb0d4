// Files that must survive a kill, a full disk or a preempted VM.
//
// Every file that matters (the metric file, checkpoints, the model, .hydra/,
// metrics.csv, trials.json, the report) is replaced through DurableWriter:
// the bytes go to a temporary beside the target, the temporary is fsync'd,
// renamed over the target, and the directory is fsync'd, so after a crash
// at any point the target is either its old contents or its new ones, never
// empty or a part (a rename without the fsyncs can leave an empty file after
// a power loss). A write that fails leaves no temporary behind and says which
// file and why ("cannot write /out/model.pt: No space left on device").
//
// Temporaries are named ".<target name>.tmp.<pid>.<n>" (hidden, and never
// matching a pattern for the targets), so RemoveStaleTemporaries can clear
// what an interrupted writer left: only our own pattern, and only where the
// writing process is gone.
#ifndef TRIALSHIM_BASE_FILE_H_
#define TRIALSHIM_BASE_FILE_H_

#include <sys/types.h>

#include <cstdint>

#include <string>
#include <string_view>

#include "trialshim/base/status.h"

namespace trialshim {

// One durable replacement of `path`, written in pieces. Not copyable; a
// writer destroyed before Commit() removes its temporary and leaves the
// target as it was.
class DurableWriter {
 public:
  // Creates the temporary (mode & ~umask). IOError names the target and the
  // reason (ENOENT, ENOTDIR, EACCES, ENOSPC, ...).
  static StatusOr<DurableWriter> Open(const std::string& path,
                                      mode_t mode = 0644);

  DurableWriter(DurableWriter&& other) noexcept;
  DurableWriter& operator=(DurableWriter&& other) noexcept;
  DurableWriter(const DurableWriter&) = delete;
  DurableWriter& operator=(const DurableWriter&) = delete;
  ~DurableWriter();

  // Appends `data`. IOError names the target and the reason; after an error
  // the writer only accepts destruction.
  Status Append(std::string_view data);

  // fsync, rename over the target, fsync the directory. IOError names the
  // target; the temporary is gone either way (an error from the directory's
  // fsync comes after the target was replaced). Only a regular file, a
  // symbolic link (the link is replaced, never what it points to) or nothing
  // is replaced: a device, a FIFO or a socket at the target's name is not
  // ours to turn into a file (IOError "cannot replace <path>: it is a
  // character device, not a regular file"), whoever put it there.
  Status Commit();

  const std::string& path() const { return path_; }

 private:
  DurableWriter(std::string path, std::string tmp, int fd)
      : path_(std::move(path)), tmp_(std::move(tmp)), fd_(fd) {}
  void Abandon();

  std::string path_;
  std::string tmp_;
  int fd_ = -1;
};

// Replaces `path` with `contents` durably (one DurableWriter).
Status WriteFileDurably(const std::string& path, std::string_view contents,
                        mode_t mode = 0644);

// Replaces `dst` with a copy of `src` (one DurableWriter). IOError names
// the file that could not be read or written; a source that is not a
// regular file is refused as OpenInputFile refuses it.
Status CopyFileDurably(const std::string& src, const std::string& dst);

// Replaces `path` with a symbolic link to `target` (a relative target is
// read from `path`'s directory) the same way: a link under the temporary
// pattern, renamed over `path`, the directory synced. IOError names `path`.
Status SymlinkDurably(const std::string& target, const std::string& path);

// mkdir -p `dir` (mode 0777 & ~umask), tolerating other processes that
// create the same directories. "" is the current directory. IOError names
// the directory and the reason.
Status MakeDirectories(const std::string& dir);

// Removes the temporaries of our own pattern in `dir` whose writing process
// no longer exists (or, for our own pid, that no writer of this process has
// open), and returns how many. A missing directory is 0.
StatusOr<int> RemoveStaleTemporaries(const std::string& dir);

// Renames `path` to "<path>.<tag>-N" with the first N (1, 2, ...) that is
// free, never replacing a file, and syncs the directory: a file kept aside
// rather than overwritten (an unreadable checkpoint). Returns the new path;
// IOError names `path` and the reason.
StatusOr<std::string> RenameAsideDurably(const std::string& path,
                                         std::string_view tag);

// The end of a file another process controls (a trial's metric file or
// log), read without trusting it. Only a regular file is read: a symbolic
// link is not followed (O_NOFOLLOW), the open never blocks (O_NONBLOCK: a
// FIFO without a writer), and the kind is checked on the open descriptor,
// so a FIFO, a device such as /dev/zero, a socket or a directory is refused
// without reading a byte. At most the last `max_bytes` bytes are read, so a
// file of any size costs at most that much memory and time.
struct FileTail {
  std::string data;   // the last min(size, max_bytes) bytes
  uint64_t size = 0;  // the file's size when it was opened
  bool cut() const { return data.size() < size; }
};
// NotFound when there is no file; InvalidArgument "<path> is a FIFO, not a
// regular file" (or a symbolic link, a character device, ...); IOError
// naming the file and the reason otherwise.
StatusOr<FileTail> ReadFileTail(const std::string& path, size_t max_bytes);

// A file descriptor we own: closed when the holder goes. Move-only.
class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.release()) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() { reset(); }

  int get() const { return fd_; }
  // The descriptor, no longer ours to close.
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Input files: what a user names for us to read (a job spec, a config file
// of the tree, --map-file, a sweep's trials.json on --resume). Every one is
// read through these two, so that none can hang or exhaust us:
//  - only a regular file is read. The name is checked with stat() before
//    the open, so a device is never opened (opening a tape or a terminal
//    has effects), and the open itself never blocks (O_NONBLOCK: a FIFO
//    without a writer would block open() forever); the descriptor is then
//    checked with fstat(), so a name swapped in between is caught too. A
//    FIFO, a device, a socket or a directory is refused without reading a
//    byte, naming what it is.
//  - symbolic links are followed: a user's config may well be one.
//  - at most `max_bytes` are read, whatever the size claims (a /proc file
//    says 0), so a huge or endless file costs at most that much.
// The errors name the file and the reason: NotFound "cannot read <path>: No
// such file or directory" (also ENOTDIR); IOError "cannot read <path>: it
// is a FIFO, not a regular file" (a directory, a character device, ...) or
// "cannot read <path>: <strerror>" (EACCES, EIO, ...); InvalidArgument
// "<path>: <n> bytes, more than the <max> allowed" for a file over the limit
// ("<path>: more than the <max> allowed" where its size said less).
inline constexpr uint64_t kMaxInputFileBytes = uint64_t{64} << 20;
StatusOr<ScopedFd> OpenInputFile(const std::string& path);
StatusOr<std::string> ReadInputFile(const std::string& path,
                                    uint64_t max_bytes = kMaxInputFileBytes);

// Files we create, append to or lock inside directories of our own (a
// trial's log, a lock file), where another process may have planted
// something: the name is opened with `flags` (O_WRONLY | O_APPEND | O_CREAT,
// O_RDWR | O_CREAT, ...) plus O_NOFOLLOW (a symbolic link is refused, never
// followed out of the directory), O_NONBLOCK (a FIFO never blocks the open)
// and O_CLOEXEC, then checked with fstat(): it must be a regular file with
// one name (a hard link to a file elsewhere is refused too). Nothing is
// written before the check; O_TRUNC is not allowed in `flags` for that
// reason (truncate after the check). O_NONBLOCK is cleared again on the
// returned descriptor. Errors: IOError "cannot <verb> <path>: it is a
// symbolic link, not a regular file" (a FIFO, a device, "it has 2 names",
// ...) or "cannot <verb> <path>: <strerror>".
StatusOr<ScopedFd> OpenOwnFile(const std::string& path, int flags,
                               mode_t mode = 0644,
                               std::string_view verb = "open");

// "cannot <verb> <path>: <strerror(err)>": how an I/O failure is told.
Status IOErrorFor(std::string_view verb, const std::string& path, int err);

}  // namespace trialshim

#endif  // TRIALSHIM_BASE_FILE_H_
