// trainer.devices > 1 without a launcher: this process starts the other
// processes of its machine, one per device, as Lightning's DDP launcher
// (_SubprocessScriptLauncher) does, and becomes local rank 0.
//
// Each process gets the environment torch.distributed reads, set as
// Lightning sets it: LOCAL_RANK, LOCAL_WORLD_SIZE, NODE_RANK (from
// NODE_RANK or GROUP_RANK, else 0), RANK = NODE_RANK * devices + LOCAL_RANK,
// WORLD_SIZE = num_nodes * devices, MASTER_ADDR (127.0.0.1 on one node)
// and MASTER_PORT (a free port on one node). The others run contained
// (base/subprocess.h): when this process ends, however it ends, their whole
// process trees end too.
#ifndef TRIALSHIM_TRAINER_DEVICE_LAUNCHER_H_
#define TRIALSHIM_TRAINER_DEVICE_LAUNCHER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/base/subprocess.h"

namespace trialshim::trainer::internal {

class DeviceLauncher {
 public:
  // Starts local ranks 1 .. processes-1, rank N with command(N) (unset:
  // this process's own command line) and sets this process's environment
  // as local rank 0's. Errors: InvalidArgument for an environment that
  // contradicts num_nodes; IOError when a process can not be started.
  static StatusOr<std::unique_ptr<DeviceLauncher>> Start(
      int64_t processes, int64_t num_nodes,
      const std::function<std::vector<std::string>(int64_t)>& command);
  // Ends the processes still running (SIGTERM, then their trees).
  ~DeviceLauncher();

  // Waits for the other ranks to end: the first one that failed.
  Status Wait();

 private:
  DeviceLauncher() = default;
  std::vector<Subprocess> ranks_;  // local ranks 1, 2, ...
};

}  // namespace trialshim::trainer::internal

#endif  // TRIALSHIM_TRAINER_DEVICE_LAUNCHER_H_
