// Did-you-mean suggestions from edit distance, for every "unknown X" error.
#ifndef TRIALSHIM_BASE_SPELL_H_
#define TRIALSHIM_BASE_SPELL_H_

#include <string>
#include <string_view>
#include <vector>

namespace trialshim {

// Edit distance with adjacent transpositions (insert, delete, substitute,
// swap two neighbours; each costs 1): "nmae" is one typo from "name".
int EditDistance(std::string_view a, std::string_view b);

// The candidates closest to `word`, best first, at most `max_results`, only
// those within a distance that makes a typo plausible (a third of the word's
// length, at least 1 and at most 3). Ties keep the candidates' order.
std::vector<std::string> ClosestMatches(std::string_view word,
                                        const std::vector<std::string>& candidates,
                                        size_t max_results = 3);

// " (did you mean 'a'?)" / " (did you mean 'a' or 'b'?)" or "".
std::string DidYouMean(std::string_view word,
                       const std::vector<std::string>& candidates);

}  // namespace trialshim

#endif  // TRIALSHIM_BASE_SPELL_H_
