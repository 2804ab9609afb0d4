// Override: one Hydra command-line override, parsed with Hydra 1.3's grammar.
//
// ParseOverride reads one argv item such as "db=postgres", "+trainer.x=1",
// "~model.dropout", "lr=choice(0.1,0.01)" or "group@pkg=opt" exactly as
// Hydra's hydra/grammar/OverrideParser.g4 does (the cases real Hydra
// produced are in tests/data/override_grammar/hydra_cases.json): primitives get Hydra's types ("01" is a string, "1_000"
// is 1000, "True" is a bool), quoted strings and backslash escapes are
// unescaped, interpolations stay unresolved strings, casts (int(), float(),
// str(), bool()) are applied, and sweeps are recognised so that a single run
// can refuse them with Hydra's advice.
//
// Parse errors return InvalidArgument with Hydra's wording where it has one,
// followed by the override and a caret line under the offending column. A
// value that is not valid interpolation syntax ("a=${x y}", "a='${x'") is
// refused too, as Hydra refuses it when merging the override.
#ifndef TRIALSHIM_CONFIG_OVERRIDE_H_
#define TRIALSHIM_CONFIG_OVERRIDE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trialshim/base/status.h"
#include "trialshim/config/node.h"

namespace trialshim::config {

enum class OverrideType {
  kChange,    // key=value
  kAdd,       // +key=value
  kForceAdd,  // ++key=value
  kDelete,    // ~key or ~key=value
};

enum class ValueKind {
  kElement,            // a single value (primitive, list, dict, cast result)
  kSimpleChoiceSweep,  // a,b,c
  kChoiceSweep,        // choice(...), also wrapped by sort/shuffle/tag
  kRangeSweep,         // range(...)
  kIntervalSweep,      // interval(...)
  kGlob,               // glob(...)
};

// True for a key or config group of Hydra's own config: "hydra",
// "hydra.run.dir", "hydra/launcher" (not "hydrate").
inline bool IsHydraKey(std::string_view key) {
  return key == "hydra" || key.substr(0, 6) == "hydra." ||
         key.substr(0, 6) == "hydra/";
}

// What Hydra's sweepers read of a sweep (ChoiceSweep, RangeSweep,
// IntervalSweep and Glob in Hydra's override_parser/types.py); sweepers.h reads
// it as the basic and Optuna sweepers do.
struct SweepItem {
  // The value a job gets (quoted strings unquoted).
  Node value;
  // Hydra's Transformer.str of the item, the text after "key=" that the
  // basic sweeper hands each job: strings with Hydra's special characters
  // escaped ("a\\,b"), quoted strings with their quotes, lists and dicts in
  // Hydra's syntax ("[1,2]"), numbers as Python's str() ("0.001", "True").
  std::string text;
  // A Python str, int, float or bool as parsed, which Transformer.encode
  // keeps as it is; null, lists, dicts and quoted strings it turns into
  // `text`.
  bool primitive = true;
};

struct SweepDetail {
  // tag(...)'s tags, sorted ("log").
  std::vector<std::string> tags;
  // shuffle(...): the items are in shuffled order.
  bool shuffle = false;
  // A choice or range sweep's values in sweep order (a range enumerated).
  std::vector<SweepItem> items;
  // A range's start, stop and step; an interval's start and end: Int or
  // Double nodes as the arguments and casts made them (interval() makes
  // floats, int(interval(...)) ints).
  std::vector<Node> bounds;
  // A glob's patterns.
  std::vector<std::string> include, exclude;
};

struct Override {
  OverrideType type = OverrideType::kChange;
  // The key or group path before any '@': "a.b", "db", "hydra/launcher".
  std::string key_or_group;
  // The package after '@' ("" for "group@="), absent without '@'.
  std::optional<std::string> package;
  // For kElement the value; for enumerable sweeps a list of the choices; for
  // interval and glob sweeps null. Absent only for "~key" without "=".
  std::optional<Node> value;
  ValueKind value_kind = ValueKind::kElement;
  // The override exactly as given (for messages and .hydra/overrides.yaml).
  std::string input;
  // A single value as Hydra's get_value_element_as_str writes it, the text
  // after "key=" that a sweeper hands every job for a fixed override
  // ("0.001" for 1e-3, "'a b'" for a quoted string, "null" for "~key").
  std::string value_text;
  // A sweep's parts (empty for a single value).
  SweepDetail sweep;

  bool is_sweep() const { return value_kind != ValueKind::kElement; }
  // Hydra's Override.is_hydra_override: the override is Hydra's own.
  bool is_hydra() const { return IsHydraKey(key_or_group); }
  // key_or_group plus "@package" when a package was given.
  std::string KeyWithPackage() const;
  // Hydra's get_key_element: KeyWithPackage() after the prefix ("+", "++",
  // "~"), the name a sweeper gives the override's jobs ("+db@src").
  std::string KeyElement() const;
};

// Parses one override. Never throws; errors are InvalidArgument.
StatusOr<Override> ParseOverride(std::string_view text);

// Parses text as the value part of an override ("x" in "k=x"), returning the
// element it denotes. Sweeps are an error. Used by the renderer's tests and
// the shim to check that a rendering reads back as intended.
StatusOr<Node> ParseOverrideValue(std::string_view text);

}  // namespace trialshim::config

#endif  // TRIALSHIM_CONFIG_OVERRIDE_H_
