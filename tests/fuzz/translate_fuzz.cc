// Fuzzes the Vertex argument translator, as `trialshim -- COMMAND ARGS...`
// runs it on every trial. The input is the trial's argv, items separated by
// NUL (argv can not hold NUL, so every split is a real argv); the first
// byte picks the options. Half the inputs translate syntactically, half
// against a config composed once from the conformance tree "train" (with
// recomposition for group overrides, as the shim does).
//
// Invariant: every "--key..." argument that the translator turns into an
// override must read back with Hydra's grammar as one override that is
// not a sweep (else Hydra would run or refuse something else).
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "trialshim/config/compose.h"
#include "trialshim/config/override.h"
#include "trialshim/translate/translate.h"

namespace {

using namespace trialshim;

const std::string kTree = std::string(TRIALSHIM_SOURCE_DIR) +
                          "/tests/data/conformance/compose/trees/train";

struct Composed {
  config::ConfigRepository repo;
  config::ComposeResult result;
};

// Composed once; null when composition fails (then only syntactic runs).
const Composed* BaseConfig() {
  static const Composed* composed = []() -> const Composed* {
    StatusOr<config::ConfigRepository> repo =
        config::ConfigRepository::Open(kTree);
    if (!repo.ok()) return nullptr;
    config::ComposeRequest req;
    req.config_path = kTree;
    req.config_name = "config";
    StatusOr<config::ComposeResult> r = config::Compose(req);
    if (!r.ok()) {
      fprintf(stderr, "translate_fuzz: compose failed, syntactic only: %s\n",
              r.status().message().c_str());
      return nullptr;
    }
    return new Composed{*repo, *r};
  }();
  return composed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  uint8_t mode = data[0];
  std::vector<std::string> args =
      fuzz::Split(fuzz::AsView(data + 1, size - 1), std::string_view("\0", 1));

  translate::TranslateOptions options;
  if (mode & 1) options.add_unknown = true;
  if (mode & 2) options.keep_flags = {"local_rank", "x"};
  if (mode & 4)
    options.key_map = {{"lr", "optimizer.lr"}, {"bs", "data.batch_size"}};
  const Composed* base = (mode & 8) ? BaseConfig() : nullptr;
  if (base != nullptr) {
    options.config = &base->result;
    options.repository = &base->repo;
    if (mode & 16) {
      options.recompose = [](const std::vector<std::string>& groups)
          -> StatusOr<config::ComposeResult> {
        config::ComposeRequest req;
        req.config_path = kTree;
        req.config_name = "config";
        req.overrides = groups;
        return config::Compose(req);
      };
    }
  }

  StatusOr<std::vector<translate::TranslatedArg>> out =
      translate::Translate(args, options);
  if (!out.ok()) {
    if (out.status().message().empty()) __builtin_trap();
    return 0;
  }
  for (const translate::TranslatedArg& t : *out) {
    if (t.inputs.empty() || t.inputs[0].rfind("--", 0) != 0) continue;
    if (t.output.rfind("-", 0) == 0) continue;  // a flag passed through
    StatusOr<config::Override> o = config::ParseOverride(t.output);
    if (!o.ok() || o->is_sweep()) {
      fprintf(stderr, "translated [%s] to [%s], which Hydra %s\n",
              t.inputs[0].c_str(), t.output.c_str(),
              o.ok() ? "reads as a sweep" : o.status().message().c_str());
      __builtin_trap();
    }
  }
  return 0;
}
