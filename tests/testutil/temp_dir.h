// TempDir: a fresh directory under $TMPDIR (or /tmp), removed with its
// contents when the object goes out of scope.
#ifndef TRIALSHIM_TESTS_TESTUTIL_TEMP_DIR_H_
#define TRIALSHIM_TESTS_TESTUTIL_TEMP_DIR_H_

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace trialshim::testing {

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") +
                       "/trialshim_test_XXXXXX";
    char* made = mkdtemp(tmpl.data());
    path_ = made ? made : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Join(const std::string& rel) const { return path_ + "/" + rel; }

  // Writes `contents` to path()/rel, creating parent directories.
  std::string Write(const std::string& rel, const std::string& contents) const {
    std::string full = Join(rel);
    std::filesystem::create_directories(
        std::filesystem::path(full).parent_path());
    std::ofstream(full, std::ios::binary) << contents;
    return full;
  }

 private:
  std::string path_;
};

// Reads a whole file ("" if it can not be read).
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

}  // namespace trialshim::testing

#endif  // TRIALSHIM_TESTS_TESTUTIL_TEMP_DIR_H_
