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
  // fsync comes after the target was replaced).
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
// the file that could not be read or written.
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

// "cannot <verb> <path>: <strerror(err)>": how an I/O failure is told.
Status IOErrorFor(std::string_view verb, const std::string& path, int err);

}  // namespace trialshim

#endif  // TRIALSHIM_BASE_FILE_H_
