#include "trialshim/trainer/distributed.h"

#include <torch/torch.h>
#include <torch/version.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace trialshim::trainer {
namespace {

// What runs the collectives: in LibTorch 1.x ProcessGroupGloo/NCCL are
// ProcessGroups; from 2.0 on they are c10d::Backends (a ProcessGroup
// dispatches to one per device type). The calls used here are the same.
#if TORCH_VERSION_MAJOR >= 2
using Collectives = c10d::Backend;
#else
using Collectives = c10d::ProcessGroup;
#endif

constexpr std::chrono::milliseconds kDefaultTimeout{300000};

// Reads an integer variable unless the option already holds one.
Status ReadEnvInt(const char* name, int min, int max, int* value) {
  if (*value >= min) return Status::Ok();
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') {
    return Status::InvalidArgument(
        std::string(name) +
        " is not set: run the ranks under `trialshim launch --nproc N`, or "
        "as the command of a Vertex worker pool (trialshim derives it from "
        "CLUSTER_SPEC)");
  }
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < min || v > max) {
    return Status::InvalidArgument(
        std::string(name) + ": expected an integer " + std::to_string(min) +
        ".." + std::to_string(max) + ", got \"" + text + "\"");
  }
  *value = static_cast<int>(v);
  return Status::Ok();
}

// "300 s", "2.5 s".
std::string Seconds(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g s", ms.count() / 1000.0);
  return buf;
}

// TRIALSHIM_DIST_TIMEOUT (seconds), else kDefaultTimeout.
StatusOr<std::chrono::milliseconds> TimeoutFromEnvironment() {
  const char* t = std::getenv("TRIALSHIM_DIST_TIMEOUT");
  if (t == nullptr) return kDefaultTimeout;
  char* end = nullptr;
  double s = std::strtod(t, &end);
  if (*end != '\0' || !(s > 0)) {
    return Status::InvalidArgument(
        std::string("TRIALSHIM_DIST_TIMEOUT: expected seconds > 0, got \"") +
        t + "\"");
  }
  return std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
}

// "auto" (nccl on a CUDA machine when built with it, else gloo), "gloo" or
// "nccl" (when built with it).
StatusOr<std::string> ResolveBackend(std::string backend) {
  if (backend == "auto") {
#ifdef USE_C10D_NCCL
    backend = torch::cuda::is_available() ? "nccl" : "gloo";
#else
    backend = "gloo";
#endif
  }
  if (backend != "gloo" && backend != "nccl") {
    return Status::InvalidArgument(
        "backend: expected gloo, nccl or auto, got \"" + backend + "\"");
  }
#ifndef USE_C10D_NCCL
  if (backend == "nccl") {
    return Status::InvalidArgument(
        "backend: nccl, but this LibTorch was built without NCCL (use gloo)");
  }
#else
  // ProcessGroupNCCL would fail later, as a failed rendezvous.
  if (backend == "nccl" && !torch::cuda::is_available()) {
    return Status::InvalidArgument(
        "backend: nccl, but LibTorch sees no CUDA device (use gloo)");
  }
#endif
  return backend;
}

bool IsLoopback(const std::string& addr) {
  return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1";
}

// A parameter taking part in gradient averaging.
struct Param {
  torch::Tensor tensor;
  size_t bucket = 0;
  size_t slot = 0;       // position among its bucket's members
  int64_t offset = 0;    // first element in the bucket's buffer
  bool arrived = false;  // its gradient reached the bucket in this round
  unsigned hook = 0;
  bool hooked = false;
};

// Several gradients flattened into one buffer; after them, one flag per
// member (1 if this rank has a gradient for it), so "has a gradient on some
// rank" travels in the same all-reduce.
struct Bucket {
  std::vector<size_t> members;
  int64_t numel = 0;
  torch::Tensor flat;
  size_t arrived = 0;
  bool launched = false;
  c10::intrusive_ptr<c10d::Work> work;
};

}  // namespace

struct DistributedContext::Impl {
  DistributedOptions options;
  int rank = 0;
  int world_size = 1;
  std::string backend;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<Collectives> group;
  torch::Device device = torch::kCPU;

  std::mutex mu;  // hooks may run on an autograd thread
  std::vector<Param> params;
  std::vector<Bucket> buckets;
  size_t next_launch = 0;
  bool prepared = false;
  Status hook_error;
  Status broken;  // once a collective failed, every later call fails

  std::string Who() const {
    return "rank " + std::to_string(rank) + " of " + std::to_string(world_size);
  }

  // Runs `f`, turning LibTorch's exceptions into a Status that says what
  // failed and the likely cause.
  template <typename F>
  Status Guard(const std::string& what, F&& f) {
    if (!broken.ok()) return broken;
    std::string cause;
    try {
      f();
      return Status::Ok();
    } catch (const c10::Error& e) {
      cause = e.what_without_backtrace();
    } catch (const std::exception& e) {
      cause = e.what();
    }
    broken = Status::IOError(
        Who() + ": " + what + " failed (another rank died, or did not " +
        "answer within " + Seconds(options.timeout()) + "): " + cause);
    return broken;
  }

  void Launch(Bucket& b) {
    std::vector<at::Tensor> tensors = {b.flat};
    b.work = group->allreduce(tensors);
    b.launched = true;
  }

  // Starts the buckets that are full, strictly in order.
  void LaunchReady() {
    while (next_launch < buckets.size() &&
           buckets[next_launch].arrived ==
               buckets[next_launch].members.size()) {
      Launch(buckets[next_launch++]);
    }
  }

  torch::Tensor Slice(const Param& p) {
    return buckets[p.bucket].flat.narrow(0, p.offset, p.tensor.numel());
  }
  torch::Tensor Flag(const Param& p) {
    const Bucket& b = buckets[p.bucket];
    return b.flat.narrow(0, b.numel + static_cast<int64_t>(p.slot), 1);
  }

  // The autograd hook: copies the gradient into its bucket and hands
  // autograd zeros instead, so .grad keeps only what was there before this
  // backward; AllReduceGradients adds the average to it.
  torch::Tensor OnGradient(size_t index, const torch::Tensor& grad) {
    std::lock_guard<std::mutex> lock(mu);
    if (!hook_error.ok() || !broken.ok()) return {};
    Param& p = params[index];
    if (p.arrived) {
      hook_error = Status::Internal(
          Who() +
          ": a gradient arrived twice before AllReduceGradients(); "
          "call it after every backward(), or set "
          "overlap_backward(false)");
      return {};
    }
    if (grad.is_sparse()) {
      hook_error = Status::InvalidArgument(
          Who() + ": sparse gradients are not supported by ddp");
      return {};
    }
    Status st = Guard("starting a gradient all-reduce", [&] {
      torch::NoGradGuard no_grad;
      Slice(p).copy_(grad.reshape({-1}));
      Flag(p).fill_(1);
      p.arrived = true;
      ++buckets[p.bucket].arrived;
      LaunchReady();
    });
    if (!st.ok()) {
      hook_error = st;
      return {};
    }
    return torch::zeros_like(grad);
  }
};

std::vector<int64_t> ShardIndices(int64_t n, int64_t epoch, int rank,
                                  int world_size, uint64_t seed, bool shuffle,
                                  bool drop_last) {
  if (n <= 0 || world_size < 1 || rank < 0 || rank >= world_size) return {};
  std::vector<int64_t> order(n);
  if (shuffle) {
    // torch.randperm with a generator seeded seed + epoch: the permutation
    // DistributedSampler uses.
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed + epoch);
    torch::Tensor perm = at::randperm(n, gen, torch::kLong);
    const int64_t* data = perm.data_ptr<int64_t>();
    order.assign(data, data + n);
  } else {
    for (int64_t i = 0; i < n; ++i) order[i] = i;
  }
  int64_t per_rank =
      drop_last && n % world_size != 0
          ? static_cast<int64_t>(std::ceil(double(n - world_size) / world_size))
          : (n + world_size - 1) / world_size;
  int64_t total = per_rank * world_size;
  for (int64_t i = n; i < total; ++i) order.push_back(order[(i - n) % n]);
  order.resize(total);
  std::vector<int64_t> out;
  out.reserve(per_rank);
  for (int64_t i = rank; i < total; i += world_size) out.push_back(order[i]);
  return out;
}

DistributedContext::DistributedContext(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

DistributedContext::~DistributedContext() {
  // Hooks capture the context; take them off the module's parameters.
  for (Param& p : impl_->params) {
    if (p.hooked) {
      try {
        p.tensor.remove_hook(p.hook);
      } catch (const std::exception&) {
        // The parameter is going away too; nothing to undo.
      }
    }
  }
}

StatusOr<std::unique_ptr<DistributedContext>>
DistributedContext::FromEnvironment(const DistributedOptions& given) {
  auto impl = std::make_unique<Impl>();
  DistributedOptions options = given;
  int world = options.world_size();
  TRIALSHIM_RETURN_IF_ERROR(ReadEnvInt("WORLD_SIZE", 1, 1 << 20, &world));
  int rank = options.rank();
  TRIALSHIM_RETURN_IF_ERROR(ReadEnvInt("RANK", 0, world - 1, &rank));
  if (rank >= world) {
    return Status::InvalidArgument("RANK " + std::to_string(rank) +
                                   " is not below WORLD_SIZE " +
                                   std::to_string(world));
  }
  int port = options.master_port();
  TRIALSHIM_RETURN_IF_ERROR(ReadEnvInt("MASTER_PORT", 1, 65535, &port));
  std::string addr = options.master_addr();
  if (addr.empty()) {
    const char* a = std::getenv("MASTER_ADDR");
    if (a == nullptr || *a == '\0') {
      return Status::InvalidArgument(
          "MASTER_ADDR is not set: run the ranks under `trialshim launch "
          "--nproc N`, or as the command of a Vertex worker pool");
    }
    addr = a;
  }
  if (options.timeout().count() <= 0) {
    TRIALSHIM_ASSIGN_OR_RETURN(std::chrono::milliseconds timeout,
                               TimeoutFromEnvironment());
    options.timeout(timeout);
  }
  TRIALSHIM_ASSIGN_OR_RETURN(std::string backend,
                             ResolveBackend(options.backend()));
  if (!(options.bucket_cap_mb() > 0)) {
    return Status::InvalidArgument("bucket_cap_mb: expected > 0");
  }
  impl->options = options;
  impl->rank = rank;
  impl->world_size = world;
  impl->backend = backend;

  std::string where = addr + ":" + std::to_string(port);
  Status st = impl->Guard("rendezvous at " + where, [&] {
    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<uint16_t>(port);
    store_options.isServer = rank == 0;
    store_options.numWorkers = world;
    store_options.waitWorkers = false;  // the group below waits, with a bound
    store_options.timeout = options.timeout();
    impl->store = c10::make_intrusive<c10d::TCPStore>(addr, store_options);
    if (backend == "gloo") {
      auto gloo = c10d::ProcessGroupGloo::Options::create(options.timeout());
      // Loopback rendezvous means every rank is on this machine; otherwise
      // bind where the hostname (or GLOO_SOCKET_IFNAME) says, as PyTorch.
      const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
      if (ifname != nullptr && *ifname != '\0') {
        gloo->devices.push_back(
            c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
      } else if (IsLoopback(addr)) {
        gloo->devices.push_back(
            c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      } else {
        gloo->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      }
      gloo->threads = 2;
      impl->group = c10::make_intrusive<c10d::ProcessGroupGloo>(
          impl->store, rank, world, gloo);
    }
#ifdef USE_C10D_NCCL
    if (backend == "nccl") {
      auto nccl = c10d::ProcessGroupNCCL::Options::create();
      nccl->timeout = options.timeout();
      impl->group = c10::make_intrusive<c10d::ProcessGroupNCCL>(
          impl->store, rank, world, nccl);
    }
#endif
  });
  if (!st.ok()) return st;
  return std::unique_ptr<DistributedContext>(
      new DistributedContext(std::move(impl)));
}

int DistributedContext::rank() const { return impl_->rank; }
int DistributedContext::world_size() const { return impl_->world_size; }
const std::string& DistributedContext::backend() const {
  return impl_->backend;
}
void DistributedContext::set_device(const torch::Device& device) {
  impl_->device = device;
}

const DistributedOptions& DistributedContext::options() const {
  return impl_->options;
}

Status DistributedContext::BroadcastParameters(torch::nn::Module& module) {
  std::vector<torch::Tensor> tensors = module.parameters();
  for (torch::Tensor& b : module.buffers()) tensors.push_back(b);
  const int64_t cap_bytes =
      static_cast<int64_t>(impl_->options.bucket_cap_mb() * 1024 * 1024);
  return impl_->Guard("broadcasting parameters from rank 0", [&] {
    torch::NoGradGuard no_grad;
    // One flat buffer per dtype and device, cut at the bucket size.
    std::map<std::string, std::vector<torch::Tensor>> groups;
    for (const torch::Tensor& t : tensors) {
      if (t.numel() == 0) continue;
      groups[std::string(t.dtype().name()) + t.device().str()].push_back(t);
    }
    for (auto& [key, group] : groups) {
      size_t begin = 0;
      while (begin < group.size()) {
        size_t end = begin;
        int64_t bytes = 0;
        std::vector<torch::Tensor> flat_parts;
        while (
            end < group.size() &&
            (end == begin ||
             bytes + static_cast<int64_t>(group[end].nbytes()) <= cap_bytes)) {
          bytes += static_cast<int64_t>(group[end].nbytes());
          flat_parts.push_back(group[end].reshape({-1}));
          ++end;
        }
        std::vector<at::Tensor> flat = {torch::cat(flat_parts)};
        c10d::BroadcastOptions opts;
        opts.rootRank = 0;
        impl_->group->broadcast(flat, opts)->wait();
        int64_t offset = 0;
        for (size_t i = begin; i < end; ++i) {
          int64_t n = group[i].numel();
          group[i].copy_(flat[0].narrow(0, offset, n).view_as(group[i]));
          offset += n;
        }
        begin = end;
      }
    }
  });
}

Status DistributedContext::PrepareModule(torch::nn::Module& module) {
  TRIALSHIM_RETURN_IF_ERROR(BroadcastParameters(module));
  Impl& m = *impl_;
  for (Param& p : m.params) {
    if (p.hooked) p.tensor.remove_hook(p.hook);
  }
  m.params.clear();
  m.buckets.clear();
  m.next_launch = 0;
  m.hook_error = Status::Ok();
  const int64_t cap_bytes =
      static_cast<int64_t>(m.options.bucket_cap_mb() * 1024 * 1024);
  return m.Guard("preparing gradient buckets", [&] {
    // Backward produces gradients roughly from the last layer to the first,
    // so buckets are filled in reverse registration order (as DDP does).
    std::vector<torch::Tensor> all = module.parameters();
    std::map<std::string, size_t> open;  // dtype+device -> bucket index
    std::vector<int64_t> bucket_bytes;
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      if (!it->requires_grad()) continue;
      Param p;
      p.tensor = *it;
      std::string key = std::string(it->dtype().name()) + it->device().str();
      auto found = open.find(key);
      if (found == open.end() ||
          bucket_bytes[found->second] + static_cast<int64_t>(it->nbytes()) >
              cap_bytes) {
        m.buckets.emplace_back();
        bucket_bytes.push_back(0);
        open[key] = m.buckets.size() - 1;
        found = open.find(key);
      }
      Bucket& b = m.buckets[found->second];
      p.bucket = found->second;
      p.slot = b.members.size();
      p.offset = b.numel;
      b.members.push_back(m.params.size());
      b.numel += it->numel();
      bucket_bytes[found->second] += static_cast<int64_t>(it->nbytes());
      m.params.push_back(p);
    }
    for (Bucket& b : m.buckets) {
      const Param& first = m.params[b.members.front()];
      b.flat = torch::zeros({b.numel + static_cast<int64_t>(b.members.size())},
                            first.tensor.options().requires_grad(false));
    }
    if (m.options.overlap_backward()) {
      for (size_t i = 0; i < m.params.size(); ++i) {
        Impl* self = &m;
        m.params[i].hook =
            m.params[i].tensor.register_hook([self, i](torch::Tensor grad) {
              return self->OnGradient(i, grad);
            });
        m.params[i].hooked = true;
      }
    }
    m.prepared = true;
  });
}

Status DistributedContext::AllReduceGradients() {
  Impl& m = *impl_;
  if (!m.prepared) {
    return Status::Internal("AllReduceGradients before PrepareModule");
  }
  {
    std::lock_guard<std::mutex> lock(m.mu);
    if (!m.hook_error.ok()) {
      if (m.broken.ok()) m.broken = m.hook_error;
      return m.hook_error;
    }
  }
  const bool overlap = m.options.overlap_backward();
  Status st = m.Guard("all-reduce of gradients", [&] {
    torch::NoGradGuard no_grad;
    std::lock_guard<std::mutex> lock(m.mu);
    // What backward did not deliver (unused parameters, or everything
    // without overlap) is filled in now, then the rest started in order.
    for (Param& p : m.params) {
      if (p.arrived) continue;
      const torch::Tensor& g = p.tensor.grad();
      if (!overlap && g.defined()) {
        m.Slice(p).copy_(g.reshape({-1}));
        m.Flag(p).fill_(1);
      } else {
        m.Slice(p).zero_();
        m.Flag(p).fill_(0);
      }
      p.arrived = true;
      ++m.buckets[p.bucket].arrived;
    }
    m.LaunchReady();
    for (Bucket& b : m.buckets) {
      b.work->wait();
      b.flat.div_(m.world_size);
    }
    for (Param& p : m.params) {
      if (m.Flag(p).item<double>() > 0) {
        torch::Tensor avg = m.Slice(p).view_as(p.tensor);
        torch::Tensor& grad = p.tensor.mutable_grad();
        if (!grad.defined()) {
          grad = avg.clone();
        } else if (overlap) {
          grad.add_(avg);  // .grad holds only earlier backward passes
        } else {
          grad.copy_(avg);
        }
      }
    }
  });
  // The next round starts empty whatever happened.
  std::lock_guard<std::mutex> lock(m.mu);
  for (Param& p : m.params) p.arrived = false;
  for (Bucket& b : m.buckets) {
    b.arrived = 0;
    b.launched = false;
    b.work.reset();
  }
  m.next_launch = 0;
  return st;
}

StatusOr<std::vector<double>> DistributedContext::AllReduceMean(
    const std::vector<double>& values) {
  std::vector<double> out(values);
  if (out.empty()) return out;
  Status st = impl_->Guard("all-reduce of logged metrics", [&] {
    std::vector<at::Tensor> t = {
        torch::tensor(values, torch::kDouble).to(impl_->device).contiguous()};
    impl_->group->allreduce(t)->wait();
    const torch::Tensor mean = t[0].div_(impl_->world_size).cpu();
    const double* d = mean.data_ptr<double>();
    out.assign(d, d + out.size());
  });
  if (!st.ok()) return st;
  return out;
}

StatusOr<double> DistributedContext::AllReduceMean(double value) {
  TRIALSHIM_ASSIGN_OR_RETURN(std::vector<double> v,
                             AllReduceMean(std::vector<double>{value}));
  return v[0];
}

Status DistributedContext::Barrier() {
  return impl_->Guard("barrier", [&] { impl_->group->barrier()->wait(); });
}

std::vector<int64_t> DistributedContext::ShardIndices(int64_t n,
                                                      int64_t epoch) const {
  const DistributedOptions& o = impl_->options;
  return trainer::ShardIndices(n, epoch, impl_->rank, impl_->world_size,
                               o.seed(), o.shuffle(), o.drop_last());
}

}  // namespace trialshim::trainer
