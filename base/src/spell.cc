#include "trialshim/base/spell.h"

#include <algorithm>
#include <numeric>

namespace trialshim {

int EditDistance(std::string_view a, std::string_view b) {
  // Three rows: a transposition looks two rows back.
  std::vector<int> before(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  std::iota(prev.begin(), prev.end(), 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1,
                         prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], before[j - 2] + 1);
      }
    }
    std::swap(before, prev);
    std::swap(prev, row);
  }
  return prev[b.size()];
}

std::vector<std::string> ClosestMatches(
    std::string_view word, const std::vector<std::string>& candidates,
    size_t max_results) {
  const int limit =
      std::clamp<int>(static_cast<int>(word.size()) / 3, 1, 3);
  std::vector<std::pair<int, size_t>> scored;  // (distance, index)
  for (size_t i = 0; i < candidates.size(); ++i) {
    int d = EditDistance(word, candidates[i]);
    if (d <= limit) scored.emplace_back(d, i);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [d, i] : scored) {
    if (out.size() == max_results) break;
    if (std::find(out.begin(), out.end(), candidates[i]) == out.end()) {
      out.push_back(candidates[i]);
    }
  }
  return out;
}

std::string DidYouMean(std::string_view word,
                       const std::vector<std::string>& candidates) {
  std::vector<std::string> best = ClosestMatches(word, candidates, 2);
  if (best.empty()) return "";
  std::string out = " (did you mean '" + best[0] + "'";
  if (best.size() > 1) out += " or '" + best[1] + "'";
  return out + "?)";
}

}  // namespace trialshim
