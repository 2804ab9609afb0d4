// DirectoryListings: what is at a path under a config directory, from each
// directory's listing, read once.
//
// The shim asks, for every argument of every trial, whether its key names a
// group, in every spelling and every search directory, and composition asks
// again for every config it loads: a stat(2) each was most of a start's
// system calls (bench/README.md). A listing answers all of a directory's
// questions with one getdents(2). readdir's d_type gives the kind; a
// symbolic link, or a file system that leaves d_type unknown, is asked with
// stat(2), which follows links as every other lookup here does. A
// directory that may be searched but not read (mode --x) is asked with
// stat(2) too, so the answers are stat's.
//
// Listings are not refreshed: a ConfigRepository lives for one composition
// (or one trial's translation), as Hydra's caching repository does.
#ifndef TRIALSHIM_CONFIG_SRC_DIRECTORY_LISTINGS_H_
#define TRIALSHIM_CONFIG_SRC_DIRECTORY_LISTINGS_H_

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace trialshim::config::internal {

class DirectoryListings {
 public:
  enum class Kind { kMissing, kFile, kDirectory, kOther };

  // What `root`/`rel` is ("db/mysql.yaml": '/'-separated, relative).
  Kind KindOf(const std::string& root, std::string_view rel);
  // The names in directory `dir` ("." and ".." left out), in the order
  // readdir gave them; none if it does not exist or can not be read.
  std::vector<std::string> Names(const std::string& dir);
  // 0 if `dir` could be listed, else the errno of opening it.
  int ListError(const std::string& dir) { return List(dir).error; }

 private:
  struct Listing {
    int error = 0;
    std::unordered_map<std::string, unsigned char> types;  // name -> d_type
    std::vector<std::string> names;                        // readdir order
  };
  const Listing& List(const std::string& dir);

  std::unordered_map<std::string, Listing> listings_;  // by directory
};

}  // namespace trialshim::config::internal

#endif  // TRIALSHIM_CONFIG_SRC_DIRECTORY_LISTINGS_H_
