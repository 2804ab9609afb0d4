// Hydra's basic sweeper (hydra/_internal/core_plugins/basic_sweeper.py): the
// jobs of a multirun and each job's overrides, as Hydra 1.3.2 makes them.
//
//   db=mysql,pg port=range(1,3) seed=7
//     -> [db=mysql port=1 seed=7] [db=mysql port=2 seed=7]
//        [db=pg port=1 seed=7]    [db=pg port=2 seed=7]
//
// The input is hydra.sweeper.params as "key=value" (in the config's order,
// each value as str() gives it) followed by the command line's task
// overrides. Each key gets one list of
// overrides: a sweep's values (a,b,c; choice(); range() with Python's
// range; glob() as the group's options it matches), or the single value;
// a later override of the same key replaces the list and keeps the first
// one's place (Python's OrderedDict). The jobs are the lists' cartesian
// product, the first list varying slowest (itertools.product). Values are
// written as Hydra writes them (Override::element_texts): "port=1000" for
// port=1_000, "+f=True" for +f=true, "~name=null" for ~name.
//
// interval() is refused, as the basic sweeper refuses it. shuffle() shuffles
// with this library's random source, not Python's. Errors are
// InvalidArgument with Hydra's wording.
#ifndef TRIALSHIM_CONFIG_BASIC_SWEEPER_H_
#define TRIALSHIM_CONFIG_BASIC_SWEEPER_H_

#include <optional>
#include <string>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/config/compose.h"
#include "trialshim/config/node.h"

namespace trialshim::config {

// The jobs' overrides, in launch order. `params`: hydra.sweeper.params
// resolved (a map, or null); `overrides`: the task overrides; `repo` gives
// glob()'s options.
StatusOr<std::vector<std::vector<std::string>>> BasicSweepJobs(
    const Node& params, const std::vector<std::string>& overrides,
    const ConfigRepository& repo);

// The jobs in launch batches of at most `max_batch_size`
// (hydra.sweeper.max_batch_size; nullopt or -1: one batch, even of none).
std::vector<std::vector<std::vector<std::string>>> SplitIntoBatches(
    std::vector<std::vector<std::string>> jobs,
    std::optional<int64_t> max_batch_size);

}  // namespace trialshim::config

#endif  // TRIALSHIM_CONFIG_BASIC_SWEEPER_H_
