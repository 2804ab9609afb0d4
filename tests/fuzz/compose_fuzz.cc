// Fuzzes YAML loading and composition with small config trees. The input
// is up to five parts separated by a line "%%":
//
//   conf/config.yaml %% conf/db/mysql.yaml %% conf/db/pg.yaml
//   %% conf/model/base.yaml %% overrides, one per line
//
// Each part is written as a real file (empty parts are left out) and
// composed as `trialshim compose` does, then resolved. Every YAML part is
// also loaded on its own with LoadYamlString.
//
// Invariant: a config outside the config directory is never read. The
// scratch directory holds outside.yaml; a composed node whose mark names a
// file outside conf/ means a group option or defaults entry such as
// "db=../../outside" escaped the directory, and traps.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "trialshim/config/compose.h"
#include "trialshim/config/interpolation.h"
#include "trialshim/config/yaml_loader.h"

namespace {

using namespace trialshim;

// The file of a node that came from outside `conf_dir`, or "". Marks name
// the file each node was read from, so this holds whatever the keys are
// (the fuzzer soon learns any key name it is compared with).
std::string ReadOutside(const config::Node& n, const std::string& conf_dir) {
  const auto& file = n.mark().file;
  if (file && file->rfind(conf_dir, 0) != 0) return *file;
  if (n.is_map()) {
    for (const auto& [k, v] : n.AsMap()) {
      std::string f = ReadOutside(v, conf_dir);
      if (!f.empty()) return f;
    }
  } else if (n.is_list()) {
    for (const config::Node& item : n.AsList()) {
      std::string f = ReadOutside(item, conf_dir);
      if (!f.empty()) return f;
    }
  }
  return "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Static, not leaked: its destructor removes the directory at exit.
  static const fuzz::ScratchDir scratch;
  const fuzz::ScratchDir* dir = &scratch;
  static const char* kFiles[] = {"conf/config.yaml", "conf/db/mysql.yaml",
                                 "conf/db/pg.yaml", "conf/model/base.yaml"};
  std::vector<std::string> parts =
      fuzz::Split(fuzz::AsView(data, size), "\n%%\n");
  if (parts.size() > 5) return 0;

  // Small bounds keep each run fast; the code paths are the default ones.
  config::LoadLimits limits;
  limits.max_depth = 64;
  limits.max_nodes = 20000;
  limits.max_file_bytes = 1 << 20;

  dir->Clear();
  dir->Write("outside.yaml", "secret: 1\n");
  dir->Write("conf/db/outside.yaml", "# keeps db a group\n");
  std::vector<std::string> overrides;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i < 4) {
      (void)config::LoadYamlString(parts[i], kFiles[i], limits);
      if (i == 0 || !parts[i].empty()) dir->Write(kFiles[i], parts[i]);
    } else {
      for (std::string& o : fuzz::Split(parts[i], "\n")) {
        if (!o.empty()) overrides.push_back(std::move(o));
      }
    }
  }

  config::ComposeRequest req;
  req.config_path = dir->path() + "/conf";
  req.config_name = "config";
  req.overrides = overrides;
  req.limits = limits;
  StatusOr<config::ComposeResult> r = config::Compose(req);
  if (!r.ok()) {
    if (r.status().message().empty()) __builtin_trap();
    return 0;
  }
  std::string outside = ReadOutside(r->config, req.config_path + "/");
  if (!outside.empty()) {
    fprintf(stderr, "composition read %s, outside the config dir\n",
            outside.c_str());
    __builtin_trap();
  }
  if (r->config.CountNodes() < 200000) (void)config::ResolveAll(r->config);
  return 0;
}
