#include "trialshim/trainer/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <torch/optim.h>
#include <torch/types.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <sstream>

#include "trialshim/base/file.h"

// The file's integers and tensor bytes are little-endian, as safetensors
// specifies; they are written and read as they lie in memory.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "checkpoints assume a little-endian machine");

namespace trialshim::trainer {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Tensors = std::vector<std::pair<std::string, torch::Tensor>>;

// safetensors' own bound on the header: more is a corrupt length, not a
// large model.
constexpr uint64_t kMaxHeaderBytes = 100 << 20;
constexpr int64_t kMaxDims = 64;

struct DtypeName {
  torch::Dtype dtype;
  const char* name;
};
constexpr DtypeName kDtypes[] = {
    {torch::kFloat32, "F32"}, {torch::kFloat64, "F64"},
    {torch::kFloat16, "F16"}, {torch::kBFloat16, "BF16"},
    {torch::kInt64, "I64"},   {torch::kInt32, "I32"},
    {torch::kInt16, "I16"},   {torch::kInt8, "I8"},
    {torch::kUInt8, "U8"},    {torch::kBool, "BOOL"},
};

const char* NameOf(torch::Dtype dtype) {
  for (const auto& d : kDtypes) {
    if (d.dtype == dtype) return d.name;
  }
  return nullptr;
}

// Parameters and buffers by dotted name ("fc1.weight").
Tensors NamedState(torch::nn::Module& model) {
  Tensors out;
  for (const auto& p : model.named_parameters(/*recurse=*/true)) {
    out.emplace_back(p.key(), p.value());
  }
  for (const auto& b : model.named_buffers(/*recurse=*/true)) {
    out.emplace_back(b.key(), b.value());
  }
  return out;
}

// "[64, 32] F32"
std::string Describe(const torch::Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) {
    s += (i ? ", " : "") + std::to_string(t.size(i));
  }
  const char* name = NameOf(t.scalar_type());
  return s + "] " + (name ? name : std::string(t.dtype().name()));
}

bool SameKind(const torch::Tensor& a, const torch::Tensor& b) {
  return a.sizes().equals(b.sizes()) && a.scalar_type() == b.scalar_type();
}

// --- Optimizer state -------------------------------------------------------
//
// LibTorch's optimizers keep per-parameter state in types of their own, keyed
// by the parameter's TensorImpl address. These functions turn the five the
// Trainer makes into named tensors and a step, and back.

const char* OptimizerType(const torch::optim::Optimizer& o) {
  using namespace torch::optim;
  if (dynamic_cast<const Adam*>(&o)) return "adam";
  if (dynamic_cast<const AdamW*>(&o)) return "adamw";
  if (dynamic_cast<const SGD*>(&o)) return "sgd";
  if (dynamic_cast<const RMSprop*>(&o)) return "rmsprop";
  if (dynamic_cast<const Adagrad*>(&o)) return "adagrad";
  return nullptr;
}

// One parameter's state: its tensors (undefined ones are absent from the
// file) and its step, -1 for types without one.
struct ParamState {
  Tensors tensors;
  int64_t step = -1;
};

// Adam's and AdamW's states have the same fields.
template <typename AdamState>
ParamState FlattenAdam(const AdamState& s) {
  return {{{"exp_avg", s.exp_avg()},
           {"exp_avg_sq", s.exp_avg_sq()},
           {"max_exp_avg_sq", s.max_exp_avg_sq()}},
          s.step()};
}

ParamState Flatten(const torch::optim::OptimizerParamState& state) {
  using namespace torch::optim;
  if (auto* s = dynamic_cast<const AdamParamState*>(&state)) {
    return FlattenAdam(*s);
  }
  if (auto* s = dynamic_cast<const AdamWParamState*>(&state)) {
    return FlattenAdam(*s);
  }
  if (auto* s = dynamic_cast<const SGDParamState*>(&state)) {
    return {{{"momentum_buffer", s->momentum_buffer()}}, -1};
  }
  if (auto* s = dynamic_cast<const RMSpropParamState*>(&state)) {
    return {{{"square_avg", s->square_avg()},
             {"momentum_buffer", s->momentum_buffer()},
             {"grad_avg", s->grad_avg()}},
            s->step()};
  }
  if (auto* s = dynamic_cast<const AdagradParamState*>(&state)) {
    return {{{"sum", s->sum()}}, s->step()};
  }
  return {};
}

// The fields a parameter's state must have under `options`: the optional
// ones are those the optimizer's step() reads only with some options on.
std::vector<std::string> RequiredFields(
    const std::string& type, const torch::optim::OptimizerOptions& options) {
  using namespace torch::optim;
  if (type == "adam" || type == "adamw") {
    bool amsgrad = type == "adam"
                       ? static_cast<const AdamOptions&>(options).amsgrad()
                       : static_cast<const AdamWOptions&>(options).amsgrad();
    if (amsgrad) return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
    return {"exp_avg", "exp_avg_sq"};
  }
  if (type == "sgd") return {"momentum_buffer"};
  if (type == "rmsprop") {
    const auto& o = static_cast<const RMSpropOptions&>(options);
    std::vector<std::string> fields = {"square_avg"};
    if (o.momentum() > 0) fields.push_back("momentum_buffer");
    if (o.centered()) fields.push_back("grad_avg");
    return fields;
  }
  return {"sum"};  // adagrad
}

std::unique_ptr<torch::optim::OptimizerParamState> Build(
    const std::string& type, std::map<std::string, torch::Tensor> f,
    int64_t step) {
  using namespace torch::optim;
  auto adam_like = [&](auto state) {
    state->step(step);
    state->exp_avg(f["exp_avg"]);
    state->exp_avg_sq(f["exp_avg_sq"]);
    state->max_exp_avg_sq(f["max_exp_avg_sq"]);
    return std::unique_ptr<OptimizerParamState>(std::move(state));
  };
  if (type == "adam") return adam_like(std::make_unique<AdamParamState>());
  if (type == "adamw") return adam_like(std::make_unique<AdamWParamState>());
  if (type == "sgd") {
    auto s = std::make_unique<SGDParamState>();
    s->momentum_buffer(f["momentum_buffer"]);
    return s;
  }
  if (type == "rmsprop") {
    auto s = std::make_unique<RMSpropParamState>();
    s->step(step);
    s->square_avg(f["square_avg"]);
    s->momentum_buffer(f["momentum_buffer"]);
    s->grad_avg(f["grad_avg"]);
    return s;
  }
  auto s = std::make_unique<AdagradParamState>();
  s->step(step);
  s->sum(f["sum"]);
  return s;
}

// Every field a state of `type` may have.
std::vector<std::string> KnownFields(const std::string& type) {
  std::vector<std::string> names;
  for (const auto& [field, t] : Flatten(*Build(type, {}, 0)).tensors) {
    names.push_back(field);
  }
  return names;
}

// An optimizer's state is keyed by its parameter's TensorImpl: the
// address as text in LibTorch 1.x, the pointer itself from 2.0 on.
using StateKeyType = std::decay_t<
    decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;

[[maybe_unused]] void SetKey(void* impl, std::string* key) {
  std::ostringstream text;  // what c10::guts::to_string wrote
  text << impl;
  *key = text.str();
}
[[maybe_unused]] void SetKey(void* impl, void** key) { *key = impl; }

StateKeyType StateKey(const torch::Tensor& param) {
  StateKeyType key{};
  SetKey(param.unsafeGetTensorImpl(), &key);
  return key;
}

std::vector<torch::Tensor> AllParams(torch::optim::Optimizer& optimizer) {
  std::vector<torch::Tensor> params;
  for (const auto& group : optimizer.param_groups()) {
    for (const auto& p : group.params()) params.push_back(p);
  }
  return params;
}

// Appends the optimizer's tensors to `tensors` and returns its scalar state.
StatusOr<json> SaveOptimizer(torch::optim::Optimizer& optimizer,
                             Tensors* tensors) {
  const char* type = OptimizerType(optimizer);
  if (type == nullptr) {
    return Status::InvalidArgument(
        "can not checkpoint this optimizer: expected sgd, adam, adamw, "
        "rmsprop or adagrad");
  }
  json groups = json::array();
  for (const auto& group : optimizer.param_groups()) {
    groups.push_back(
        {{"lr", group.options().get_lr()}, {"params", group.params().size()}});
  }
  json steps = json::array();
  std::vector<torch::Tensor> params = AllParams(optimizer);
  for (size_t i = 0; i < params.size(); ++i) {
    auto it = optimizer.state().find(StateKey(params[i]));
    if (it == optimizer.state().end()) {
      steps.push_back(nullptr);  // no step taken yet
      continue;
    }
    ParamState s = Flatten(*it->second);
    steps.push_back(s.step);
    for (auto& [field, t] : s.tensors) {
      if (t.defined()) {
        tensors->emplace_back("optimizer/" + std::to_string(i) + "/" + field,
                              t);
      }
    }
  }
  return json{{"type", type}, {"groups", groups}, {"steps", steps}};
}

using StateMap =
    std::map<StateKeyType, std::unique_ptr<torch::optim::OptimizerParamState>>;

// The saved state of one parameter: its `step` and the tensors under
// `prefix`, checked against the parameter and the fields its optimizer
// type (`known`) and options (`required`) use. Null for a parameter
// without a step (never stepped).
StatusOr<std::unique_ptr<torch::optim::OptimizerParamState>> LoadParamState(
    const OpenedCheckpoint& ckpt, const std::string& type,
    const std::vector<std::string>& known,
    const std::vector<std::string>& required, const torch::Tensor& param,
    const std::string& prefix, const json& step) {
  std::map<std::string, torch::Tensor> fields;
  for (const std::string& field : known) {
    auto it = ckpt.tensors.find(prefix + field);
    if (it == ckpt.tensors.end()) continue;
    if (!SameKind(it->second, param)) {
      return Status::InvalidArgument(
          "its optimizer state '" + prefix + field + "' is " +
          Describe(it->second) + ", the parameter " + Describe(param));
    }
    // Checkpoints hold CPU tensors; the state lives where its parameter
    // does, so a GPU run's checkpoint resumes on the CPU and back.
    fields[field] = it->second.to(param.device());
  }
  if (step.is_null()) {
    if (!fields.empty()) {
      return Status::InvalidArgument(
          "its optimizer state has tensors "
          "for a parameter without a step: " +
          prefix);
    }
    return std::unique_ptr<torch::optim::OptimizerParamState>();
  }
  if (!step.is_number_integer() ||
      (step.is_number_unsigned() ? step.get<uint64_t>() > INT64_MAX
                                 : step.get<int64_t>() < -1)) {
    return Status::InvalidArgument("its optimizer step " + step.dump() +
                                   " for " + prefix + " is not a step count");
  }
  for (const std::string& field : required) {
    if (fields.count(field) == 0) {
      return Status::InvalidArgument(
          "its optimizer state has no '" + prefix + field +
          "', which the optimizer's options need (was the optimizer "
          "config changed?)");
    }
  }
  return Build(type, std::move(fields), step.get<int64_t>());
}

// Checks the saved optimizer state against `optimizer` and builds it, without
// touching the optimizer.
Status LoadOptimizer(const OpenedCheckpoint& ckpt,
                     torch::optim::Optimizer& optimizer, StateMap* states,
                     std::vector<double>* lrs) {
  const json& saved = ckpt.optimizer;
  const char* known_type = OptimizerType(optimizer);
  if (known_type == nullptr) {
    return Status::InvalidArgument(
        "can not restore this optimizer: expected sgd, adam, adamw, rmsprop "
        "or adagrad");
  }
  const std::string type = known_type;
  if (!saved.is_object() || !saved.contains("type")) {
    return Status::InvalidArgument(
        "it has no optimizer state, but the model is trained with " + type);
  }
  if (saved["type"] != type) {
    return Status::InvalidArgument(
        "its optimizer state is for " + saved["type"].dump() +
        ", the run uses '" + type + "' (was the optimizer config changed?)");
  }
  const auto& groups = optimizer.param_groups();
  const json saved_groups = saved.value("groups", json());
  const json steps = saved.value("steps", json());
  std::vector<torch::Tensor> params = AllParams(optimizer);
  if (!saved_groups.is_array() || saved_groups.size() != groups.size() ||
      !steps.is_array() || steps.size() != params.size()) {
    return Status::InvalidArgument(
        "its optimizer state is for " +
        std::to_string(steps.is_array() ? steps.size() : 0) +
        " parameters in " +
        std::to_string(saved_groups.is_array() ? saved_groups.size() : 0) +
        " groups, the optimizer has " + std::to_string(params.size()) + " in " +
        std::to_string(groups.size()));
  }
  const std::vector<std::string> known_fields = KnownFields(type);
  size_t index = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    const json& group = saved_groups[g];
    if (!group.is_object() || !group.value("lr", json()).is_number() ||
        group.value("params", json()) != groups[g].params().size()) {
      return Status::InvalidArgument("its optimizer group " +
                                     std::to_string(g) +
                                     " does not match the optimizer's");
    }
    lrs->push_back(group["lr"].get<double>());
    std::vector<std::string> required =
        RequiredFields(type, groups[g].options());
    for (const torch::Tensor& param : groups[g].params()) {
      const std::string prefix = "optimizer/" + std::to_string(index) + "/";
      TRIALSHIM_ASSIGN_OR_RETURN(
          auto state, LoadParamState(ckpt, type, known_fields, required, param,
                                     prefix, steps[index++]));
      if (state) (*states)[StateKey(param)] = std::move(state);
    }
  }
  // Tensors beyond the optimizer's parameters or fields.
  size_t optimizer_tensors = 0;
  for (const auto& [name, t] : ckpt.tensors) {
    optimizer_tensors += name.rfind("optimizer/", 0) == 0;
  }
  size_t used = 0;
  for (const auto& [key, state] : *states) {
    for (const auto& [field, t] : Flatten(*state).tensors) used += t.defined();
  }
  if (used != optimizer_tensors) {
    return Status::InvalidArgument(
        "its optimizer state holds " + std::to_string(optimizer_tensors) +
        " tensors, of which the optimizer uses " + std::to_string(used));
  }
  return Status::Ok();
}

// --- The file ---------------------------------------------------------------

uint32_t Crc32(uint32_t crc, const torch::Tensor& t) {
  if (t.nbytes() == 0) return crc;  // zlib would return its initial value
  return static_cast<uint32_t>(
      crc32_z(crc, static_cast<const Bytef*>(t.data_ptr()), t.nbytes()));
}

std::string Hex(uint32_t v) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

// One tensor's entry in the header, checked against the data's size.
struct Entry {
  std::string name;
  torch::Dtype dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

// Reads `v`, the header's entry for `name`; an error says what is wrong.
StatusOr<Entry> ParseEntry(const std::string& name, const json& v,
                           uint64_t data_size) {
  auto bad = [&](const std::string& what) {
    return Status::DataLoss("tensor '" + name + "' " + what);
  };
  if (!v.is_object()) return bad("is not a JSON object in the header");
  Entry e{name, torch::kFloat32, {}, 0, 0};
  auto dtype = v.find("dtype");
  const DtypeName* d = nullptr;
  for (const auto& known : kDtypes) {
    if (dtype != v.end() && *dtype == known.name) d = &known;
  }
  if (d == nullptr) {
    return bad("has dtype " + (dtype == v.end() ? "(none)" : dtype->dump()) +
               ", expected one of F32, F64, F16, BF16, I64, I32, I16, I8, "
               "U8, BOOL");
  }
  e.dtype = d->dtype;
  auto shape = v.find("shape");
  if (shape == v.end() || !shape->is_array() ||
      shape->size() > static_cast<size_t>(kMaxDims)) {
    return bad("has no shape (a list of at most 64 sizes)");
  }
  uint64_t nbytes = c10::elementSize(e.dtype);
  for (const json& dim : *shape) {
    if (!dim.is_number_unsigned() ||
        dim.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX) ||
        __builtin_mul_overflow(nbytes, dim.get<uint64_t>(), &nbytes)) {
      return bad("has shape " + shape->dump() +
                 ", expected sizes >= 0 of at most the file's size");
    }
    e.shape.push_back(dim.get<int64_t>());
  }
  auto offsets = v.find("data_offsets");
  if (offsets == v.end() || !offsets->is_array() || offsets->size() != 2 ||
      !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned()) {
    return bad("has no data_offsets [begin, end]");
  }
  e.begin = (*offsets)[0].get<uint64_t>();
  e.end = (*offsets)[1].get<uint64_t>();
  if (e.begin > e.end || e.end > data_size) {
    return bad("has data_offsets " + offsets->dump() + " outside the " +
               std::to_string(data_size) + " bytes of data");
  }
  if (e.end - e.begin != nbytes) {
    return bad("is " + shape->dump() + " " + d->name + " (" +
               std::to_string(nbytes) + " bytes) but has " +
               std::to_string(e.end - e.begin) + " bytes of data");
  }
  return e;
}

// The header's tensor entries, by offset; an error unless they cover the
// `data_size` bytes of data exactly, in any order.
StatusOr<std::vector<Entry>> ParseEntries(const json& header,
                                          uint64_t data_size) {
  std::vector<Entry> entries;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") continue;
    TRIALSHIM_ASSIGN_OR_RETURN(Entry entry, ParseEntry(name, value, data_size));
    entries.push_back(std::move(entry));
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.begin < b.begin; });
  uint64_t covered = 0;
  for (const Entry& e : entries) {
    if (e.begin != covered) {
      return Status::DataLoss("tensor '" + e.name + "' starts at data byte " +
                              std::to_string(e.begin) + ", expected " +
                              std::to_string(covered) +
                              " (tensors must not overlap or leave gaps)");
    }
    covered = e.end;
  }
  if (covered != data_size) {
    return Status::DataLoss("its tensors cover " + std::to_string(covered) +
                            " of " + std::to_string(data_size) +
                            " bytes of data");
  }
  return entries;
}

// The metadata string `key`, parsed as JSON.
StatusOr<json> MetadataJson(const json& meta, const std::string& key) {
  auto it = meta.find(key);
  if (it == meta.end() || !it->is_string()) {
    return Status::DataLoss("its metadata has no '" + key + "'");
  }
  json parsed = json::parse(it->get<std::string>(), nullptr,
                            /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return Status::DataLoss("its metadata '" + key + "' is not JSON");
  }
  return parsed;
}

// --- Reading without trusting the file --------------------------------------

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// What a file of `mode` is, for a message ("a FIFO").
std::string KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// "a symbolic link to /dev/zero": where a link points says what it is.
std::string KindOf(const std::string& path, mode_t mode) {
  std::string kind = KindOf(mode);
  if (S_ISLNK(mode)) {
    std::error_code ec;
    fs::path target = fs::read_symlink(path, ec);
    if (!ec) kind += " to " + target.string();
  }
  return kind;
}

// A relative symbolic link that stays in its directory or below, as
// ModelCheckpoint's save_last="link" makes last.ckpt: the trainer's own.
// Links elsewhere (/dev/zero, another directory's file) are not.
bool InDirectoryLink(const std::string& path) {
  std::error_code ec;
  const fs::path target = fs::read_symlink(path, ec);
  if (ec || target.empty() || target.is_absolute()) return false;
  for (const fs::path& part : target) {
    if (part == "..") return false;
  }
  return true;
}

Status NotRegular(const std::string& path, mode_t mode) {
  return Status::DataLoss("checkpoint " + path + " is " + KindOf(path, mode) +
                          ", not a regular file");
}

// Reads exactly `n` bytes: 0, or -1 at the end of the file first, or the
// errno of a failed read.
int ReadFully(int fd, void* into, uint64_t n) {
  auto* p = static_cast<char*>(into);
  while (n > 0) {
    const ssize_t got = ::read(fd, p, std::min<uint64_t>(n, 1 << 30));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return errno;
    if (got == 0) return -1;
    p += got;
    n -= static_cast<uint64_t>(got);
  }
  return 0;
}

}  // namespace

Status WriteCheckpoint(const std::string& path, torch::nn::Module& model,
                       torch::optim::Optimizer* optimizer,
                       const nlohmann::json& state) {
  auto fail = [&](const std::string& why) {
    return Status::IOError("can not write checkpoint " + path + ": " + why);
  };
  try {
    Tensors tensors;
    for (auto& [name, t] : NamedState(model)) {
      tensors.emplace_back("model/" + name, t);
    }
    json optimizer_state = nullptr;
    if (optimizer != nullptr) {
      auto saved = SaveOptimizer(*optimizer, &tensors);
      if (!saved.ok()) return saved.status().WithPrefix("checkpoint " + path);
      optimizer_state = std::move(*saved);
    }
    {
      auto gen = at::detail::getDefaultCPUGenerator();
      std::lock_guard<std::mutex> lock(gen.mutex());
      tensors.emplace_back("rng/cpu", gen.get_state());
    }

    json header = json::object();
    uint32_t crc = 0;
    uint64_t offset = 0;
    for (auto& [name, t] : tensors) {
      t = t.detach().to(torch::kCPU).contiguous();
      const char* dtype = NameOf(t.scalar_type());
      if (dtype == nullptr) {
        return fail("tensor '" + name + "' has dtype " +
                    std::string(t.dtype().name()) +
                    ", which safetensors can not hold");
      }
      const uint64_t n = t.nbytes();
      header[name] = {{"dtype", dtype},
                      {"shape", t.sizes().vec()},
                      {"data_offsets", {offset, offset + n}}};
      crc = Crc32(crc, t);
      offset += n;
    }
    header["__metadata__"] = {
        {"format", "trialshim"},
        {"version", std::to_string(kCheckpointVersion)},
        {"crc32", Hex(crc)},
        {"optimizer", optimizer_state.dump()},
        {"state", state.dump()},
    };
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');  // aligns the data
    const uint64_t length = text.size();

    TRIALSHIM_RETURN_IF_ERROR(
        MakeDirectories(fs::path(path).parent_path().string()));
    TRIALSHIM_ASSIGN_OR_RETURN(DurableWriter out, DurableWriter::Open(path));
    TRIALSHIM_RETURN_IF_ERROR(out.Append(std::string_view(
        reinterpret_cast<const char*>(&length), sizeof length)));
    TRIALSHIM_RETURN_IF_ERROR(out.Append(text));
    for (const auto& [name, t] : tensors) {
      TRIALSHIM_RETURN_IF_ERROR(out.Append(std::string_view(
          static_cast<const char*>(t.data_ptr()), t.nbytes())));
    }
    return out.Commit();
  } catch (const c10::Error& e) {
    return fail(e.what_without_backtrace());
  } catch (const json::exception& e) {
    return fail(e.what());  // e.g. invalid UTF-8 in the state
  }
}

StatusOr<OpenedCheckpoint> OpenCheckpoint(
    const std::string& path, const CheckpointReadOptions& options) {
  auto corrupt = [&](const std::string& what) {
    return Status::DataLoss("checkpoint " + path +
                            " is truncated or corrupt: " + what);
  };
  auto unreadable = [&](int err) {
    return Status::IOError("can not read checkpoint " + path + ": " +
                           std::strerror(err));
  };
  // O_NONBLOCK: a FIFO without a writer would block the open forever.
  const int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
  const bool follow = options.follow_symlinks || InDirectoryLink(path);
  Fd in{open(path.c_str(), flags | (follow ? 0 : O_NOFOLLOW))};
  struct stat st;
  if (in.fd < 0) {
    const int err = errno;
    // ELOOP: the name is a symbolic link; ENXIO: a socket.
    if ((err == ELOOP || err == ENXIO) && lstat(path.c_str(), &st) == 0) {
      return NotRegular(path, st.st_mode);
    }
    return unreadable(err);
  }
  if (fstat(in.fd, &st) != 0) return unreadable(errno);
  if (!S_ISREG(st.st_mode)) return NotRegular(path, st.st_mode);
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  // A read that fails (EIO on a flaky /gcs mount) is not a short file: the
  // caller must stop rather than skip a checkpoint that may be good.
  auto read = [&](void* into, uint64_t n, const std::string& what) {
    const int err = ReadFully(in.fd, into, n);
    if (err > 0) return unreadable(err);
    if (err < 0) return corrupt(what);
    return Status::Ok();
  };
  uint64_t length = 0;
  TRIALSHIM_RETURN_IF_ERROR(
      read(&length, sizeof length,
           "it is " + std::to_string(file_size) +
               " bytes, shorter than the 8-byte header length"));
  if (length > kMaxHeaderBytes || length > file_size - sizeof length) {
    return corrupt("its header length " + std::to_string(length) +
                   " is beyond the file's " + std::to_string(file_size) +
                   " bytes");
  }
  std::string text(length, '\0');
  TRIALSHIM_RETURN_IF_ERROR(
      read(text.data(), length, "it ends inside its header"));
  json header = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) {
    return corrupt("its header is not a JSON object");
  }
  auto meta = header.find("__metadata__");
  if (meta == header.end() || !meta->is_object() ||
      meta->value("format", json()) != "trialshim") {
    return Status::DataLoss("checkpoint " + path +
                            " is not a trialshim checkpoint (its metadata "
                            "has no \"format\": \"trialshim\")");
  }
  const json version = meta->value("version", json());
  if (version != std::to_string(kCheckpointVersion)) {
    return Status::DataLoss("checkpoint " + path + " has format version " +
                            version.dump() + ", expected \"" +
                            std::to_string(kCheckpointVersion) + "\"");
  }

  OpenedCheckpoint out;
  out.path = path;
  for (const char* key : {"state", "optimizer"}) {
    auto parsed = MetadataJson(*meta, key);
    if (!parsed.ok()) return corrupt(parsed.status().message());
    (key == std::string("state") ? out.state : out.optimizer) =
        std::move(*parsed);
  }
  if (!out.state.is_object()) return corrupt("its state is not an object");
  const json crc_text = meta->value("crc32", json());

  auto entries = ParseEntries(header, file_size - sizeof length - length);
  if (!entries.ok()) return corrupt(entries.status().message());

  uint32_t crc = 0;
  try {
    for (const Entry& e : *entries) {
      torch::Tensor t = torch::empty(e.shape, torch::dtype(e.dtype));
      TRIALSHIM_RETURN_IF_ERROR(read(t.data_ptr(), e.end - e.begin,
                                     "it ends inside tensor '" + e.name + "'"));
      if (options.verify_checksum) crc = Crc32(crc, t);
      out.tensors.emplace(e.name, std::move(t));
    }
  } catch (const c10::Error& e) {
    return corrupt(e.what_without_backtrace());  // e.g. out of memory
  }
  if (options.verify_checksum && crc_text != Hex(crc)) {
    return corrupt("its data has CRC-32 " + Hex(crc) + ", the header says " +
                   crc_text.dump());
  }
  return out;
}

Status RestoreCheckpoint(const OpenedCheckpoint& checkpoint,
                         torch::nn::Module& model,
                         torch::optim::Optimizer* optimizer) {
  const std::string& path = checkpoint.path;
  auto misfit = [&](const std::string& what) {
    return Status::InvalidArgument("checkpoint " + path +
                                   " does not fit the model: " + what);
  };
  // Check everything before copying anything.
  Tensors current = NamedState(model);
  size_t saved_count = 0;
  for (const auto& [name, t] : checkpoint.tensors) {
    saved_count += name.rfind("model/", 0) == 0;
  }
  for (const auto& [name, tensor] : current) {
    auto it = checkpoint.tensors.find("model/" + name);
    if (it == checkpoint.tensors.end()) {
      return misfit("it has no '" + name + "'");
    }
    if (!SameKind(it->second, tensor)) {
      return misfit("'" + name + "' is " + Describe(it->second) +
                    " there and " + Describe(tensor) +
                    " in the model (was the model config changed?)");
    }
  }
  if (saved_count != current.size()) {
    return misfit("it holds " + std::to_string(saved_count) +
                  " tensors, the model " + std::to_string(current.size()));
  }
  StateMap states;
  std::vector<double> lrs;
  if (optimizer != nullptr) {
    TRIALSHIM_RETURN_IF_ERROR(
        LoadOptimizer(checkpoint, *optimizer, &states, &lrs)
            .WithPrefix("checkpoint " + path));
  }
  auto gen = at::detail::getDefaultCPUGenerator();
  auto rng = checkpoint.tensors.find("rng/cpu");
  if (rng != checkpoint.tensors.end()) {
    std::lock_guard<std::mutex> lock(gen.mutex());
    if (!SameKind(rng->second, gen.get_state())) {
      return Status::DataLoss("checkpoint " + path + ": its RNG state is " +
                              Describe(rng->second) + ", expected " +
                              Describe(gen.get_state()));
    }
  }

  try {
    {
      torch::NoGradGuard no_grad;
      for (auto& [name, tensor] : current) {
        tensor.copy_(checkpoint.tensors.at("model/" + name));
      }
    }
    if (optimizer != nullptr) {
      optimizer->state().clear();
      for (auto& [key, state] : states) {
        optimizer->state()[key] = std::move(state);
      }
      for (size_t g = 0; g < lrs.size(); ++g) {
        optimizer->param_groups()[g].options().set_lr(lrs[g]);
      }
    }
    if (rng != checkpoint.tensors.end()) {
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(rng->second);
    }
  } catch (const c10::Error& e) {
    return Status::Internal("checkpoint " + path + " can not be restored: " +
                            e.what_without_backtrace());
  }
  return Status::Ok();
}

std::vector<std::string> ListCheckpoints(const std::string& dir) {
  std::vector<std::pair<fs::file_time_type, std::string>> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const fs::path& p = it->path();
    // A link counts only as save_last="link" makes one.
    const fs::file_status st = it->symlink_status(ec);
    if (p.extension() != ".ckpt" ||
        !(fs::is_regular_file(st) ||
          (fs::is_symlink(st) && InDirectoryLink(p) &&
           it->is_regular_file(ec)))) {
      continue;
    }
    found.emplace_back(fs::last_write_time(p, ec), p.string());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second > b.second;
  });
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

StatusOr<std::vector<NotACheckpoint>> FindNonRegularCheckpoints(
    const std::string& dir) {
  std::vector<NotACheckpoint> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec == std::errc::no_such_file_or_directory) return out;
  for (fs::directory_iterator end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() != ".ckpt") continue;
    struct stat st;
    if (lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) continue;  // gone meanwhile
      return Status::IOError("can not read " + p.string() + ": " +
                             std::strerror(errno));
    }
    if (S_ISREG(st.st_mode)) continue;
    // save_last="link"'s last.ckpt, when it ends at a regular file.
    struct stat target;
    if (S_ISLNK(st.st_mode) && InDirectoryLink(p) &&
        stat(p.c_str(), &target) == 0 && S_ISREG(target.st_mode)) {
      continue;
    }
    out.push_back({p.string(), KindOf(p, st.st_mode)});
  }
  if (ec) {
    return Status::IOError("can not read directory " + dir + ": " +
                           ec.message());
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  return out;
}

}  // namespace trialshim::trainer
