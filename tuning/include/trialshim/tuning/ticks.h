// Ticks: where the report's axes put their tick marks and labels.
//
// A linear axis gets about `target` ticks spaced by 1, 2 or 5 times a power
// of ten (data over [0, 0.87] gets the axis [0, 1] ticked at 0, 0.2, ...; with
// `integers`, as for trial numbers, the spacing is never below 1). A log
// axis ticks at decades, with the 2s and 5s between them when it spans too
// few decades for enough ticks, and at every 2nd, 5th, 10th... decade when
// it spans too many. Each function also widens [lo, hi] to the ticks
// around it, so the data sits inside a labelled frame. Pure functions.
#ifndef TRIALSHIM_TUNING_TICKS_H_
#define TRIALSHIM_TUNING_TICKS_H_

#include <string>
#include <vector>

namespace trialshim::tuning {

struct Ticks {
  double lo = 0, hi = 1;   // the axis range, widened to nice values
  std::vector<double> at;  // ascending, within [lo, hi]
};

// lo <= hi, both finite; lo == hi gets a range around the value.
Ticks LinearTicks(double lo, double hi, int target = 5, bool integers = false);
// 0 < lo <= hi, both finite.
Ticks LogTicks(double lo, double hi, int target = 5);

// A tick's label: the shortest text that reads back as the tick ("0.2",
// "1e-05", "250", "1.5e+06"), with the rounding error of lo + k * step
// removed.
std::string TickLabel(double v);

}  // namespace trialshim::tuning

#endif  // TRIALSHIM_TUNING_TICKS_H_
