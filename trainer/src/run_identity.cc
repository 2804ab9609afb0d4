#include "run_identity.h"

#include <algorithm>
#include <set>
#include <vector>

#include "trialshim/base/strings.h"
#include "trialshim/config/emit.h"
#include "trialshim/trainer/module.h"
#include "trialshim/trainer/options.h"

namespace trialshim::trainer::internal {
namespace {

using nlohmann::json;

// The keys (and, by prefix, the subtrees) that may differ on a resume; "*"
// stands for one segment. Each group says why it is not the run.
// clang-format off
constexpr const char* kMayDiffer[] = {
    // How long it runs: a finished run may go on with a larger max_epochs,
    // as Lightning resumes it; the scheduler's state comes from the
    // checkpoint.
    "trainer.max_epochs", "trainer.min_epochs", "trainer.max_steps",
    "trainer.min_steps", "trainer.max_time",
    // Which checkpoint it resumes, and where it writes.
    "ckpt_path", "trainer.ckpt_path", "trainer.checkpoint_dir",
    "trainer.default_root_dir", "trainer.model_dir",
    "trainer.enable_checkpointing", "paths", "hydra", "task_name",
    // When it stops and what it saves, logs and shows: the callbacks
    // (ModelCheckpoint, EarlyStopping, LearningRateMonitor, the summary and
    // progress bars) change no step, and their state is the checkpoint's.
    "callbacks", "trainer.callbacks",
    // How it is watched and reported.
    "logger", "trainer.logger", "trainer.log_every_n_steps",
    "trainer.enable_progress_bar", "trainer.enable_model_summary",
    "trainer.profiler", "hypertune", "optimized_metric", "tags", "extras",
    "train", "test",
    // The hardware: what it changes of the math is the world size, recorded
    // on its own; the rest changes how, not what, is computed.
    "trainer.accelerator", "trainer.devices", "trainer.strategy",
    "trainer.num_nodes", "trainer.num_threads", "trainer.benchmark",
    "trainer.deterministic", "trainer.detect_anomaly",
};
// clang-format on

std::vector<std::string> Segments(const std::string& key) {
  std::vector<std::string> out(1);
  for (char c : key) {
    if (c == '.') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

bool Matches(const std::vector<std::string>& pattern,
             const std::vector<std::string>& key) {
  if (key.size() < pattern.size()) return false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != "*" && pattern[i] != key[i]) return false;
  }
  return true;  // the key itself, or inside its subtree
}

void Flatten(const config::Node& node, const std::string& key,
             const std::string& run_dir, json* out) {
  auto join = [&](const std::string& k) {
    return key.empty() ? k : key + "." + k;
  };
  if (node.is_map() && !node.AsMap().empty()) {
    for (const auto& [k, v] : node.AsMap()) Flatten(v, join(k), run_dir, out);
    return;
  }
  if (node.is_list() && !node.AsList().empty()) {
    for (size_t i = 0; i < node.AsList().size(); ++i) {
      Flatten(node.AsList()[i], join(std::to_string(i)), run_dir, out);
    }
    return;
  }
  if (key.empty() || MayDifferOnResume(key)) return;
  if (node.is_string() && !run_dir.empty() &&
      node.AsString().find(run_dir) != std::string::npos) {
    (*out)[key] = config::ToJson(config::Node::String(ReplaceAll(
                                     node.AsString(), run_dir, "${run_dir}")),
                                 -1);
    return;
  }
  (*out)[key] = config::ToJson(node, -1);
}

std::string Shown(const json& settings, const std::string& key) {
  auto it = settings.find(key);
  if (it == settings.end()) return "absent";
  std::string text = it->is_string() ? it->get<std::string>() : it->dump();
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

}  // namespace

bool MayDifferOnResume(const std::string& key) {
  static const auto* patterns = [] {
    auto* out = new std::vector<std::vector<std::string>>;
    for (const char* p : kMayDiffer) out->push_back(Segments(p));
    return out;
  }();
  const std::vector<std::string> parts = Segments(key);
  return std::any_of(patterns->begin(), patterns->end(),
                     [&](const auto& p) { return Matches(p, parts); });
}

json RunIdentity(const config::Node& settings, int world_size,
                 const std::string& run_dir) {
  // Only a real directory: "/" or "." would match inside every path.
  std::string dir = run_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir.size() < 2 || dir[0] != '/') dir.clear();
  json flat = json::object();
  if (settings.is_map()) Flatten(settings, "", dir, &flat);
  return {{"settings", std::move(flat)}, {"world_size", world_size}};
}

json RunIdentityOf(const TrainerOptions& options, const Module& module,
                   int world_size) {
  const config::Node& settings =
      options.run_config().is_null() ? module.hparams() : options.run_config();
  return RunIdentity(settings, world_size, options.default_root_dir());
}

std::string RunDifferences(const json& state, const json& ours,
                           size_t max_shown) {
  auto run = state.find("run");
  if (run == state.end() || !run->is_object() || !run->contains("settings") ||
      !(*run)["settings"].is_object()) {
    return "it does not record the settings it was trained with (written "
           "before checkpoints recorded them, or by another program)";
  }
  std::vector<std::string> said;
  size_t differing = 0;
  auto add = [&](const std::string& line) {
    if (++differing <= max_shown) said.push_back(line);
  };
  if (run->value("world_size", json()) != ours.at("world_size")) {
    add("world size: " + run->value("world_size", json()).dump() + " there, " +
        ours.at("world_size").dump() + " here");
  }
  const json& theirs = (*run)["settings"];
  const json& mine = ours.at("settings");
  std::set<std::string> keys;
  for (const auto& [k, v] : theirs.items()) keys.insert(k);
  for (const auto& [k, v] : mine.items()) keys.insert(k);
  for (const std::string& k : keys) {
    // A key that may differ now (say, a newer trainer's list) is no
    // difference, even where an older checkpoint recorded it.
    if (MayDifferOnResume(k)) continue;
    if (theirs.value(k, json()) == mine.value(k, json())) continue;
    add(k + ": " + Shown(theirs, k) + " there, " + Shown(mine, k) + " here");
  }
  if (differing == 0) return "";
  std::string out = "its settings differ: " + JoinStrings(said, "; ");
  if (differing > said.size()) {
    out += "; and " + std::to_string(differing - said.size()) + " more";
  }
  return out;
}

}  // namespace trialshim::trainer::internal
