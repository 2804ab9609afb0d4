// Helpers shared by the libFuzzer targets: splitting one input into parts
// and a scratch directory for targets that must go through real files.
#ifndef TRIALSHIM_TESTS_FUZZ_FUZZ_UTIL_H_
#define TRIALSHIM_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace trialshim::fuzz {

inline std::string_view AsView(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// Splits `s` at every `sep` (empty parts kept), so a seed file can hold
// several arguments or files in readable text.
inline std::vector<std::string> Split(std::string_view s,
                                      std::string_view sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    if (at == std::string_view::npos) {
      parts.emplace_back(s.substr(start));
      return parts;
    }
    parts.emplace_back(s.substr(start, at - start));
    start = at + sep.size();
  }
}

// One directory per fuzzer process, removed at exit. Files are rewritten on
// every input; /dev/shm keeps that off the disk where it exists.
class ScratchDir {
 public:
  ScratchDir() {
    std::string base =
        std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp";
    if (const char* t = std::getenv("TMPDIR"); t && *t) base = t;
    std::string tmpl = base + "/trialshim_fuzz_XXXXXX";
    if (char* made = mkdtemp(tmpl.data())) path_ = made;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

  // Removes everything under the directory (keeping it).
  void Clear() const {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(path_, ec)) {
      std::filesystem::remove_all(e.path(), ec);
    }
  }
  std::string Write(const std::string& rel, std::string_view text) const {
    std::string full = path_ + "/" + rel;
    std::error_code ec;
    std::filesystem::create_directories(
        std::filesystem::path(full).parent_path(), ec);
    std::ofstream(full, std::ios::binary)
        .write(text.data(), static_cast<std::streamsize>(text.size()));
    return full;
  }

 private:
  std::string path_;
};

}  // namespace trialshim::fuzz

#endif  // TRIALSHIM_TESTS_FUZZ_FUZZ_UTIL_H_
