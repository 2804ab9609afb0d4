#include "trialshim/shim/gpus.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>


namespace trialshim::shim {
namespace {

// The value after "key:" on a line of a /proc text, trimmed.
std::string Field(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::string v = line.substr(key.size() + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    v.erase(v.find_last_not_of(" \t\r") + 1);
    return v;
  }
  return "";
}

// A /proc file (the kernel's text, size 0 to stat), or "".
std::string ReadProc(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  std::getline(in, text, '\0');
  return text.substr(0, 65536);
}

}  // namespace

GpuReport ReadGpus(const std::string& proc) {
  GpuReport report;
  const std::string root = proc + "/driver/nvidia";
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ..."
  {
    std::istringstream words(Field(ReadProc(root + "/version"), "NVRM version"));
    for (std::string w; words >> w;) {
      if (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0])) &&
          w.find('.') != std::string::npos) {
        report.driver = w;
        break;
      }
    }
  }
  std::error_code error;
  std::vector<std::string> buses;
  for (const auto& e : std::filesystem::directory_iterator(root + "/gpus", error)) {
    buses.push_back(e.path().string());
  }
  std::sort(buses.begin(), buses.end());
  for (const std::string& bus : buses) {
    const std::string model = Field(ReadProc(bus + "/information"), "Model");
    if (!model.empty()) report.models.push_back(model);
  }
  return report;
}

std::string GpuComment(const GpuReport& report, const char* visible) {
  std::string out = "# GPUs: ";
  if (report.models.empty()) {
    out += "none (no NVIDIA driver lists one in /proc/driver/nvidia/gpus)";
  } else {
    out += std::to_string(report.models.size()) + " (NVIDIA driver " +
           (report.driver.empty() ? "?" : report.driver) + ")";
    for (size_t i = 0; i < report.models.size(); ++i) {
      out += (i == 0 ? ": " : ", ") + std::to_string(i) + " " + report.models[i];
    }
  }
  out += "\n";
  if (visible != nullptr) {
    out += std::string("# CUDA_VISIBLE_DEVICES=") + visible + "\n";
  }
  out += "# a trainer's LibTorch, its CUDA and the devices it sees: TRAINER "
         "--version (digits-train --version)\n";
  return out;
}

}  // namespace trialshim::shim
