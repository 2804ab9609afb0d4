// IsTrialshimApp: looks for TRIALSHIM_APP_SECTION in an ELF file's section
// names (translate/translate.h).
#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "trialshim/translate/translate.h"

namespace trialshim::translate {

bool IsTrialshimApp(const std::string& executable) {
  std::ifstream in(executable, std::ios::binary);
  Elf64_Ehdr eh;
  if (!in.read(reinterpret_cast<char*>(&eh), sizeof(eh)) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum) {
    return false;
  }
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  in.seekg(static_cast<std::streamoff>(eh.e_shoff));
  if (!in.read(reinterpret_cast<char*>(sections.data()),
               static_cast<std::streamsize>(eh.e_shnum * sizeof(Elf64_Shdr)))) {
    return false;
  }
  // Section names: read only what is needed, whatever the file claims.
  const Elf64_Shdr& names = sections[eh.e_shstrndx];
  std::string table(std::min<uint64_t>(names.sh_size, 1 << 20), '\0');
  in.seekg(static_cast<std::streamoff>(names.sh_offset));
  if (!in.read(table.data(), static_cast<std::streamsize>(table.size()))) {
    return false;
  }
  for (const Elf64_Shdr& sh : sections) {
    if (sh.sh_name < table.size() &&
        std::strcmp(table.c_str() + sh.sh_name, TRIALSHIM_APP_SECTION) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace trialshim::translate
