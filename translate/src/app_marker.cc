// IsTrialshimApp: looks for TRIALSHIM_APP_SECTION in an ELF file's section
// names (translate/translate.h).
#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cerrno>
#include <string>
#include <vector>

#include "trialshim/base/file.h"
#include "trialshim/translate/translate.h"

namespace trialshim::translate {

namespace {

// Exactly `n` bytes at `offset`, or false.
bool ReadAt(int fd, void* buf, size_t n, uint64_t offset) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t got = pread(fd, p, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return true;
}

}  // namespace

bool IsTrialshimApp(const std::string& executable) {
  // As every input (base/file.h): a FIFO named as the program is not
  // waited on (exec refuses it anyway).
  StatusOr<ScopedFd> in = OpenInputFile(executable);
  if (!in.ok()) return false;
  int fd = in->get();
  Elf64_Ehdr eh;
  if (!ReadAt(fd, &eh, sizeof(eh), 0) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum) {
    return false;
  }
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  if (!ReadAt(fd, sections.data(), eh.e_shnum * sizeof(Elf64_Shdr),
              eh.e_shoff)) {
    return false;
  }
  // Section names: read only what is needed, whatever the file claims.
  const Elf64_Shdr& names = sections[eh.e_shstrndx];
  std::string table(std::min<uint64_t>(names.sh_size, 1 << 20), '\0');
  if (!ReadAt(fd, table.data(), table.size(), names.sh_offset)) return false;
  for (const Elf64_Shdr& sh : sections) {
    if (sh.sh_name < table.size() &&
        std::strcmp(table.c_str() + sh.sh_name, TRIALSHIM_APP_SECTION) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace trialshim::translate
