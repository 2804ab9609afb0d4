#include "trialshim/trainer/runtime.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

#include <filesystem>

namespace trialshim::trainer {

BlasInfo DetectBlas() {
  BlasInfo info;
  info.name = "unknown";
  void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
  Dl_info where;
  if (sgemm != nullptr && dladdr(sgemm, &where) != 0 && where.dli_fname) {
    // Resolve the alternatives symlink (libblas.so.3 -> .../openblas-
    // pthread/libblas.so.3) to see which implementation it is.
    std::error_code ec;
    auto real = std::filesystem::canonical(where.dli_fname, ec);
    info.library = ec ? where.dli_fname : real.string();
  }
  // The library that resolved sgemm_ is the one LibTorch calls; OpenBLAS
  // may be loaded beside a reference libblas without being used.
  using ConfigFn = const char* (*)();
  auto config =
      reinterpret_cast<ConfigFn>(dlsym(RTLD_DEFAULT, "openblas_get_config"));
  if (info.library.find("openblas") != std::string::npos ||
      (info.library.empty() && config != nullptr)) {
    info.is_openblas = true;
    info.name =
        std::string("OpenBLAS") + (config ? std::string(" ") + config() : "");
  } else if (info.library.find("mkl") != std::string::npos) {
    info.name = "MKL";
  } else if (info.library.find("blis") != std::string::npos) {
    info.name = "BLIS";
  } else if (info.library.find("libblas") != std::string::npos) {
    info.name = "reference BLAS";
    info.is_reference = true;
  }
  return info;
}

int ChooseNumThreads(int64_t requested) {
  return requested > 0 ? static_cast<int>(requested) : 1;
}

void SetNumThreads(int n) {
  if (n < 1) n = 1;
  at::set_num_threads(n);
  using SetFn = void (*)(int);
  if (auto set = reinterpret_cast<SetFn>(
          dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
    set(n);
  }
}

}  // namespace trialshim::trainer
