#include "trialshim/trainer/callbacks.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "trialshim/trainer/trainer.h"

namespace trialshim::trainer {

namespace {

// Lightning's get_human_readable_count: "123  ", "1.2 K", "132 K", "2.0 M".
std::string HumanCount(int64_t number) {
  static const char* kUnits[] = {" ", "K", "M", "B", "T"};
  const int digits =
      number > 0 ? static_cast<int>(std::floor(std::log10(number))) + 1 : 1;
  const int groups = std::min(5, (digits + 2) / 3);
  const double scaled = number * std::pow(10.0, -3 * (groups - 1));
  char buf[64];
  if (groups - 1 < 1 || scaled >= 100) {
    std::snprintf(buf, sizeof(buf), "%lld %s",
                  static_cast<long long>(scaled), kUnits[groups - 1]);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f %s", scaled, kUnits[groups - 1]);
  }
  std::string out = buf;
  // Python's "{:,d}" groups thousands (only past 999 T).
  size_t end = out.find_first_of(". ");
  for (size_t at = end; at > 3; at -= 3) out.insert(at - 3, 1, ',');
  return out;
}

// torch::nn::LinearImpl -> Linear, as Python's __class__.__name__.
std::string TypeName(const torch::nn::Module& m) {
  std::string name = m.name();
  size_t colon = name.rfind("::");
  if (colon != std::string::npos) name = name.substr(colon + 2);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, "Impl") == 0)
    name.resize(name.size() - 4);
  return name;
}

int64_t CountParams(const torch::nn::Module& m, bool trainable_only) {
  int64_t n = 0;
  for (const auto& p : m.parameters(/*recurse=*/true)) {
    if (!trainable_only || p.requires_grad()) n += p.numel();
  }
  return n;
}

}  // namespace

// Lightning's _format_summary_table (utilities/model_summary/
// model_summary.py) without its FLOPs column and line.
std::string SummarizeModel(const torch::nn::Module& module, int64_t max_depth,
                           int bits_per_param) {
  std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>> rows;
  if (max_depth == 1) {
    for (const auto& item : module.named_children())
      rows.emplace_back(item.key(), item.value());
  } else if (max_depth != 0) {
    for (const auto& item : module.named_modules("", /*include_self=*/false)) {
      const std::string& name = item.key();
      if (max_depth < 0 ||
          std::count(name.begin(), name.end(), '.') < max_depth)
        rows.emplace_back(name, item.value());
    }
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> cols = {
      {" ", {}}, {"Name", {}}, {"Type", {}}, {"Params", {}}, {"Mode", {}}};
  int64_t in_rows = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& m = *rows[i].second;
    const int64_t n = CountParams(m, false);
    cols[0].second.push_back(std::to_string(i));
    cols[1].second.push_back(rows[i].first);
    cols[2].second.push_back(TypeName(m));
    cols[3].second.push_back(HumanCount(n));
    cols[4].second.push_back(m.is_training() ? "train" : "eval");
    in_rows += n;
  }
  const int64_t total = CountParams(module, false);
  const int64_t trainable = CountParams(module, true);
  // Lightning's _add_leftover_params_to_summary: the parameters the rows do
  // not add up to (the module's own, outside every child), at any depth.
  if (max_depth != 0 && total > in_rows) {
    cols[0].second.push_back(" ");
    cols[1].second.push_back("other params");
    cols[2].second.push_back("n/a");
    cols[3].second.push_back(HumanCount(total - in_rows));
    cols[4].second.push_back("n/a");
  }
  std::string out;
  auto pad = [](const std::string& s, size_t w) {
    return s + std::string(w > s.size() ? w - s.size() : 0, ' ');
  };
  std::vector<size_t> widths;
  size_t total_width = 0;
  for (const auto& [header, values] : cols) {
    size_t w = header.size();
    for (const auto& v : values) w = std::max(w, v.size());
    widths.push_back(w);
    total_width += w + 3;
  }
  total_width += 3;  // Lightning's 3 * n_cols counts an index column twice
  const size_t n_rows = cols[0].second.size();
  for (size_t r = 0; r <= n_rows; ++r) {
    for (size_t c = 0; c < cols.size(); ++c) {
      out += (c ? " | " : "") +
             pad(r == 0 ? cols[c].first : cols[c].second[r - 1], widths[c]);
    }
    out += "\n";
    if (r == 0) out += std::string(total_width, '-') + "\n";
  }
  out += std::string(total_width, '-') + "\n";
  int64_t train_mode = 0, modules = 0;
  for (const auto& m : module.modules(/*include_self=*/false)) {
    ++modules;
    train_mode += m->is_training() ? 1 : 0;
  }
  char size[64];
  std::snprintf(size, sizeof(size), "%.3f", total * (bits_per_param / 8.0) * 1e-6);
  out += pad(HumanCount(trainable), 10) + "Trainable params\n";
  out += pad(HumanCount(total - trainable), 10) + "Non-trainable params\n";
  out += pad(HumanCount(total), 10) + "Total params\n";
  out += pad(size, 10) + "Total estimated model params size (MB)\n";
  out += pad(std::to_string(train_mode), 10) + "Modules in train mode\n";
  out += pad(std::to_string(modules - train_mode), 10) + "Modules in eval mode";
  return out;
}

Status ModelSummary::on_fit_start(Trainer& trainer, Module& module) {
  if (max_depth_ == 0 || !trainer.is_global_zero()) return Status::Ok();
  const std::string& p = trainer.options().precision();
  const int bits = p == "64-true" ? 64 : p == "bf16-true" ? 16 : 32;
  trainer.console().info("\n{}", SummarizeModel(module, max_depth_, bits));
  return Status::Ok();
}

}  // namespace trialshim::trainer
