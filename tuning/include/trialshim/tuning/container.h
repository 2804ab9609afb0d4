// Container: a trial's container as this machine can stand in for it. Backs
// `trialshim sweep` (how a trial runs here) and the path rules of
// `trialshim check` (what a local run would find), so that the two agree.
//
// On Vertex every trial runs in a container of its own: the image's files,
// the image's working directory, nothing shared with the other trials. Here
// a trial gets:
//  - The spec's paths, on this machine. An absolute path under a volume
//    (--volume HOST:CONTAINER, as `docker run -v` takes it) is read as the
//    same path under HOST, in the command, its args and containerSpec.env
//    values, as a whole token or after the token's first '='
//    (`--config-path=/app/conf`, `data.path=/app/data`). A relative path
//    means a path in the working directory (--workdir, default the current
//    directory), which stands for the image's WORKDIR.
//  - A command named trialshim (`trialshim`, or a path ending in
//    `/trialshim`) runs this very binary: the image's trialshim is this one.
//  - A working directory of its own (WorkdirView): by default the
//    working directory's own path, seen through a private overlay
//    (base/subprocess.h): the trial reads what is there, and whatever it
//    writes under that path, relative or absolute (Hydra's outputs/, a
//    template's logs/train/runs/..., a file it changes or deletes), lands
//    in <trial>/work/ instead, the overlay's upper directory; the user's
//    files never change. The sweep's --out, when it lies inside, is bound
//    back, so what the trial writes there (its metric file, AIP_*_DIR)
//    reaches the real one. Starting one costs the same whatever the
//    directory holds. Where the kernel refuses the overlay (no user
//    namespaces, a seccomp filter), or when chosen, <trial>/work/ is the
//    working directory instead, holding a symbolic link to every entry of
//    the working directory but the sweep's own output tree and Hydra's
//    output roots (`outputs`, `multirun`): a link is a bind mount, not the
//    image's copy, so a file written inside a linked directory reaches the
//    original and the other trials, and linking costs one symlink per
//    entry.
//
// A path the trial needs that is not here gets the flag that fixes it
// (SuggestFix): the volume or working directory under which it exists.
#ifndef TRIALSHIM_TUNING_CONTAINER_H_
#define TRIALSHIM_TUNING_CONTAINER_H_

#include <string>
#include <utility>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/base/subprocess.h"

namespace trialshim::tuning {

// --volume HOST:CONTAINER. `host` is absolute once parsed.
struct Volume {
  std::string host;
  std::string container;
};

// "HOST:CONTAINER" (split at the last ":/"): CONTAINER absolute, HOST an
// existing file or directory, made absolute. InvalidArgument naming what
// is wrong otherwise.
StatusOr<Volume> ParseVolume(const std::string& text);

// How a trial gets a working directory of its own (see the top).
enum class WorkdirView {
  kAuto,     // the overlay; links, with a warning, where the kernel refuses
  kOverlay,  // the overlay, or the trial fails to start
  kLinks,    // links
};
// "auto", "overlay", "links".
const char* WorkdirViewName(WorkdirView view);

class Container {
 public:
  // `workdir` empty: the current directory. `self_exe` empty:
  // /proc/self/exe.
  Container(std::string workdir, std::vector<Volume> volumes,
            std::string self_exe = "");

  const std::string& workdir() const { return workdir_; }

  // `path` as the trial names it, on this machine: under the longest
  // volume that holds it, else relative to the working directory, else as
  // it is. Lexically; nothing is looked up.
  std::string HostPath(const std::string& path) const;

  // A command-line token or an environment value with its container path
  // mapped (the whole token, or what follows its first '='); unchanged when
  // no volume holds it.
  std::string MapToken(const std::string& token) const;
  std::vector<std::string> MapTokens(std::vector<std::string> tokens) const;

  // True for `trialshim` and paths ending in `/trialshim`.
  static bool IsTrialshim(const std::string& program);

  // The file to execute for `program` (a token already mapped), with the
  // trial's PATH `path_var`: this binary for trialshim; an existing
  // executable file for a path with '/', relative to the working
  // directory; else the PATH's, as execvp looks (a relative PATH entry is
  // a directory of the working directory). Absolute. InvalidArgument saying
  // why it can not run here, with the flag that fixes it when one is found
  // near `near` (see SuggestFix).
  StatusOr<std::string> ResolveProgram(const std::string& program,
                                       const std::string& path_var,
                                       const std::string& near) const;

  // For a path the trial needs (`path` as the trial names it) that does not
  // exist here: the flag under which it would, or "". An absolute path
  // /A/B/C looks for B/C, then C, in `near` (the job file's directory), its
  // parents and the working directory, and answers `--volume DIR:/A` (or
  // DIR:/A/B); a relative path looks in `near` and its parents and answers
  // `--workdir DIR`. DIR is written relative to the current directory when
  // it is inside it.
  std::string SuggestFix(const std::string& path,
                         const std::string& near) const;

  // The private overlay of the trial whose directory is `trial_dir`
  // (absolute), created as needed: the working directory over itself, the
  // upper directory `trial_dir`/work, overlayfs's own `trial_dir`/.overlay,
  // and `out` (the sweep's directory) bound back when it lies inside.
  // Paths as the kernel resolves them (symbolic links followed), so that a
  // route through a link still meets --out. IOError naming the path and
  // the OS reason.
  StatusOr<PrivateOverlay> TrialOverlay(const std::string& trial_dir,
                                        const std::string& out) const;

  // Creates `dir` (a trial's working directory) if needed and links every
  // entry of the working directory into it but those named in `exclude`
  // (top-level names), `outputs` and `multirun`. Links already there are
  // kept, so a rerun finds what its first run left. IOError naming the path
  // and the OS reason.
  Status LinkWorkdir(const std::string& dir,
                     const std::vector<std::string>& exclude) const;

 private:
  std::string workdir_;  // absolute, normal
  std::vector<Volume> volumes_;
  std::string self_exe_;
};

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_TUNING_CONTAINER_H_
