#include "trialshim/trainer/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/serialize.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <mutex>

namespace trialshim::trainer {
namespace {

namespace fs = std::filesystem;

// Parameters and buffers by dotted name ("fc1.weight").
std::vector<std::pair<std::string, torch::Tensor>> NamedState(
    torch::nn::Module& model) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& p : model.named_parameters(/*recurse=*/true)) {
    out.emplace_back(p.key(), p.value());
  }
  for (const auto& b : model.named_buffers(/*recurse=*/true)) {
    out.emplace_back(b.key(), b.value());
  }
  return out;
}

std::string Shape(const torch::Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) {
    s += (i ? ", " : "") + std::to_string(t.size(i));
  }
  return s + "]";
}

}  // namespace

Status WriteCheckpoint(const std::string& path, torch::nn::Module& model,
                       torch::optim::Optimizer* optimizer,
                       const nlohmann::json& state) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  try {
    std::error_code ec;
    fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
    torch::serialize::OutputArchive archive;
    archive.write("version", c10::IValue(kCheckpointVersion));
    archive.write("state", c10::IValue(state.dump()));
    std::vector<std::string> names;
    std::vector<torch::Tensor> tensors;
    for (auto& [name, tensor] : NamedState(model)) {
      names.push_back(name);
      tensors.push_back(tensor.detach().cpu());
    }
    archive.write("model_names", c10::IValue(names));
    archive.write("model_tensors", c10::IValue(tensors));
    if (optimizer != nullptr) {
      torch::serialize::OutputArchive opt_archive;
      optimizer->save(opt_archive);
      archive.write("optimizer", opt_archive);
    }
    auto gen = at::detail::getDefaultCPUGenerator();
    {
      std::lock_guard<std::mutex> lock(gen.mutex());
      archive.write("rng_cpu", gen.get_state());
    }
    archive.save_to(tmp);
  } catch (const c10::Error& e) {
    std::remove(tmp.c_str());
    return Status::IOError("can not write checkpoint " + path + ": " +
                           e.what_without_backtrace());
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::IOError("can not rename " + tmp + " to " + path);
  }
  return Status::Ok();
}

StatusOr<OpenedCheckpoint> OpenCheckpoint(const std::string& path) {
  OpenedCheckpoint out;
  out.path = path;
  out.archive = std::make_shared<torch::serialize::InputArchive>();
  try {
    out.archive->load_from(path);
    c10::IValue version, state, names, tensors;
    if (!out.archive->try_read("version", version) || !version.isInt() ||
        !out.archive->try_read("state", state) || !state.isString() ||
        !out.archive->try_read("model_names", names) ||
        !out.archive->try_read("model_tensors", tensors)) {
      return Status::DataLoss("checkpoint " + path +
                              " is not a trialshim checkpoint (missing keys)");
    }
    if (version.toInt() != kCheckpointVersion) {
      return Status::DataLoss("checkpoint " + path + " has format version " +
                              std::to_string(version.toInt()) + ", expected " +
                              std::to_string(kCheckpointVersion));
    }
    out.state = nlohmann::json::parse(state.toStringRef());
  } catch (const c10::Error& e) {
    return Status::DataLoss(
        "checkpoint " + path +
        " is truncated or corrupt: " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    return Status::DataLoss("checkpoint " + path + " is corrupt: " + e.what());
  }
  return out;
}

Status RestoreCheckpoint(OpenedCheckpoint& checkpoint, torch::nn::Module& model,
                         torch::optim::Optimizer* optimizer) {
  const std::string& path = checkpoint.path;
  try {
    c10::IValue names_value, tensors_value;
    checkpoint.archive->try_read("model_names", names_value);
    checkpoint.archive->try_read("model_tensors", tensors_value);
    std::map<std::string, torch::Tensor> saved;
    auto names = names_value.toListRef();
    auto tensors = tensors_value.toTensorVector();
    if (names.size() != tensors.size()) {
      return Status::DataLoss("checkpoint " + path + " is corrupt: " +
                              std::to_string(names.size()) + " names for " +
                              std::to_string(tensors.size()) + " tensors");
    }
    for (size_t i = 0; i < names.size(); ++i) {
      saved[names[i].toStringRef()] = tensors[i];
    }
    auto current = NamedState(model);
    // Check everything before copying anything.
    for (const auto& [name, tensor] : current) {
      auto it = saved.find(name);
      if (it == saved.end()) {
        return Status::InvalidArgument("checkpoint " + path +
                                       " does not fit the model: it has no '" +
                                       name + "'");
      }
      if (!it->second.sizes().equals(tensor.sizes())) {
        return Status::InvalidArgument(
            "checkpoint " + path + " does not fit the model: '" + name +
            "' is " + Shape(it->second) + " there and " + Shape(tensor) +
            " in the model (was the model config changed?)");
      }
    }
    if (saved.size() != current.size()) {
      return Status::InvalidArgument(
          "checkpoint " + path + " does not fit the model: it holds " +
          std::to_string(saved.size()) + " tensors, the model " +
          std::to_string(current.size()));
    }
    {
      torch::NoGradGuard no_grad;
      for (auto& [name, tensor] : current) tensor.copy_(saved[name]);
    }
    if (optimizer != nullptr) {
      torch::serialize::InputArchive opt_archive;
      if (!checkpoint.archive->try_read("optimizer", opt_archive)) {
        return Status::DataLoss("checkpoint " + path + " has no optimizer");
      }
      optimizer->load(opt_archive);
    }
    torch::Tensor rng;
    if (checkpoint.archive->try_read("rng_cpu", rng)) {
      auto gen = at::detail::getDefaultCPUGenerator();
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(rng);
    }
  } catch (const c10::Error& e) {
    return Status::InvalidArgument(
        "checkpoint " + path +
        " can not be restored: " + e.what_without_backtrace());
  }
  return Status::Ok();
}

std::vector<std::string> ListCheckpoints(const std::string& dir) {
  std::vector<std::pair<fs::file_time_type, std::string>> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() != ".ckpt" || !it->is_regular_file(ec)) continue;
    found.emplace_back(fs::last_write_time(p, ec), p.string());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second > b.second;
  });
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

}  // namespace trialshim::trainer
