// CallFunction: Hydra's override functions, their signatures and the
// binding of a call's arguments to them (override_functions.h).
#include "override_functions.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "override_functions_internal.h"

namespace trialshim::config::override_internal {

// Hydra's functions raise Python exceptions that its override parser
// reports by type and text ("TypeError: ..."); the type is kept in the
// message so that errors read as Hydra's do.
Status Err(const char* type, const std::string& msg) {
  return Status::InvalidArgument(std::string(type) + ": " + msg);
}
Status AssertionError() { return Err("AssertionError", ""); }

namespace {

// One parameter of a registered function, as inspect.signature sees it.
struct Param {
  const char* name;
  enum Kind { kPositional, kVarPositional, kKeywordOnly } kind;
  bool has_default;
  uint32_t types;  // isinstance() of a Union; bool passes for int
  const char* type_str;
};

struct Signature {
  const char* name;
  std::vector<Param> params;
};

// Hydra's CastType: every parsed value except a glob.
constexpr uint32_t kCastable = kAny & ~Bit(K::kGlob);
const char* const kCastStr =
    "Optional[Union[str, int, float, bool, List[Any], Dict[str, Any], "
    "QuotedString, Sweep]]";
const Param kCastArgs{"args", Param::kVarPositional, false, kCastable,
                      kCastStr};
const Param kCastValue{"value", Param::kKeywordOnly, true, kCastable, kCastStr};
constexpr uint32_t kSortable = kElement | Bit(K::kChoice) | Bit(K::kRange);
const char* const kSortableStr =
    "Union[str, int, bool, float, list, dict, ChoiceSweep, RangeSweep]";

// The functions Hydra registers (create_functions in
// hydra/core/override_parser/overrides_parser.py) with the signatures of
// hydra/_internal/grammar/grammar_functions.py. The annotation strings
// are what Hydra's type errors print (omegaconf's type_str), so they are
// copied, not derived.
const std::vector<Signature>& Signatures() {
  static const auto* sigs = new std::vector<Signature>{
      {"bool", {kCastArgs, kCastValue}},
      {"choice",
       {{"args", Param::kVarPositional, false, kElement | Bit(K::kChoice),
         "Union[str, int, float, bool, Dict[Any, Any], List[Any], "
         "ChoiceSweep]"}}},
      {"float", {kCastArgs, kCastValue}},
      {"glob",
       {{"include", Param::kPositional, false, Bit(K::kList) | Bit(K::kStr),
         "Union[List[str], str]"},
        {"exclude", Param::kPositional, true,
         Bit(K::kNull) | Bit(K::kList) | Bit(K::kStr),
         "Optional[Union[str, List[str]]]"}}},
      {"int", {kCastArgs, kCastValue}},
      {"interval",
       {{"start", Param::kPositional, false, kNumber, "Union[int, float]"},
        {"end", Param::kPositional, false, kNumber, "Union[int, float]"}}},
      {"range",
       {{"start", Param::kPositional, false, kNumber, "Union[int, float]"},
        {"stop", Param::kPositional, true, kNumber | Bit(K::kNull),
         "Optional[Union[int, float]]"},
        {"step", Param::kPositional, true, kNumber, "Union[int, float]"}}},
      {"shuffle",
       {{"args", Param::kVarPositional, false, kSortable, kSortableStr},
        {"sweep", Param::kKeywordOnly, true,
         Bit(K::kNull) | Bit(K::kChoice) | Bit(K::kRange),
         "Optional[Union[ChoiceSweep, RangeSweep]]"},
        {"list", Param::kKeywordOnly, true, Bit(K::kNull) | Bit(K::kList),
         "Optional[List[Any]]"}}},
      {"sort",
       {{"args", Param::kVarPositional, false, kSortable, kSortableStr},
        {"sweep", Param::kKeywordOnly, true,
         Bit(K::kNull) | Bit(K::kChoice) | Bit(K::kRange),
         "Optional[Union[ChoiceSweep, RangeSweep]]"},
        {"list", Param::kKeywordOnly, true, Bit(K::kNull) | Bit(K::kList),
         "Optional[List[Any]]"},
        // A plain `bool` annotation: type(value) is bool, so 1 is refused.
        {"reverse", Param::kKeywordOnly, true, Bit(K::kBool), "bool"}}},
      {"str", {kCastArgs, kCastValue}},
      {"tag",
       {{"args", Param::kVarPositional, false, Bit(K::kStr) | kSweep,
         "Union[str, Sweep]"},
        {"sweep", Param::kKeywordOnly, true, Bit(K::kNull) | kSweep,
         "Optional[Sweep]"}}},
  };
  return *sigs;
}

// Functions.eval (hydra/_internal/grammar/functions.py): Python's
// inspect.Signature.bind with its TypeError texts, then Hydra's own check
// of each bound argument against its annotation (is_type_matching in
// hydra/_internal/grammar/utils.py), parameter by parameter, *args item by
// item. A Union passes any isinstance() match, so True passes for int;
// a plain annotation such as `bool` needs that exact type.
StatusOr<Bound> Bind(const Signature& sig, std::vector<PVal> args,
                     std::vector<std::pair<std::string, PVal>> kwargs) {
  Bound bound;
  std::map<std::string, PVal> kw;
  for (auto& [k, v] : kwargs) kw[k] = std::move(v);  // the last one wins
  size_t next_arg = 0;
  size_t p = 0;
  for (; p < sig.params.size(); ++p) {
    const Param& param = sig.params[p];
    if (next_arg == args.size()) break;
    if (param.kind == Param::kKeywordOnly) break;
    if (param.kind == Param::kVarPositional) {
      while (next_arg < args.size())
        bound.var.push_back(std::move(args[next_arg++]));
      ++p;
      break;
    }
    if (kw.count(param.name)) {
      return Err("TypeError", std::string("multiple values for argument '") +
                                  param.name + "'");
    }
    bound.named[param.name] = std::move(args[next_arg++]);
  }
  if (next_arg < args.size())
    return Err("TypeError", "too many positional arguments");
  for (; p < sig.params.size(); ++p) {
    const Param& param = sig.params[p];
    if (param.kind == Param::kVarPositional) continue;
    auto it = kw.find(param.name);
    if (it == kw.end()) {
      if (!param.has_default) {
        return Err("TypeError", std::string("missing a required argument: '") +
                                    param.name + "'");
      }
      continue;
    }
    bound.named[param.name] = std::move(it->second);
    kw.erase(it);
  }
  if (!kw.empty()) {
    // Python names the first unexpected keyword in call order.
    for (const auto& [k, v] : kwargs) {
      if (kw.count(k)) {
        return Err("TypeError",
                   "got an unexpected keyword argument '" + k + "'");
      }
    }
  }
  // Hydra's type check, in parameter order.
  for (const Param& param : sig.params) {
    auto check = [&](const PVal& v, const std::string& label) -> Status {
      bool ok = (param.types & Bit(v.k)) != 0;
      if (ok) return Status::Ok();
      return Err("TypeError", "mismatch type argument " + label + ": " +
                                  PyTypeName(v) + " is incompatible with " +
                                  param.type_str);
    };
    if (param.kind == Param::kVarPositional) {
      for (size_t n = 0; n < bound.var.size(); ++n) {
        TRIALSHIM_RETURN_IF_ERROR(
            check(bound.var[n],
                  std::string(param.name) + "[" + std::to_string(n) + "]"));
      }
    } else if (const PVal* v = bound.Get(param.name)) {
      TRIALSHIM_RETURN_IF_ERROR(check(*v, param.name));
    }
  }
  return bound;
}

}  // namespace

// Hydra shuffles with Python's global, unseeded random module, so its
// orders differ from run to run and ours need not match them; one
// generator per thread keeps concurrent parses apart.
std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

PVal SimpleChoice(std::vector<PVal> items) {
  PVal c;
  c.k = K::kChoice;
  c.simple_form = true;
  c.items = std::move(items);
  return c;
}

StatusOr<PVal> ListToSimpleChoice(std::vector<PVal> items) {
  for (const PVal& v : items) {
    if (v.is_sweep() || v.k == K::kGlob) return AssertionError();
  }
  return SimpleChoice(std::move(items));
}

const std::vector<std::string>& FunctionNames() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string>;
    for (const Signature& s : Signatures()) v->push_back(s.name);
    return v;
  }();
  return *names;
}

// Functions.eval: an unknown name is a HydraException; the parser
// (override_parser.cc) lists FunctionNames with it.
StatusOr<PVal> CallFunction(const std::string& name, std::vector<PVal> args,
                            std::vector<std::pair<std::string, PVal>> kwargs) {
  const Signature* sig = nullptr;
  for (const Signature& s : Signatures()) {
    if (name == s.name) sig = &s;
  }
  if (sig == nullptr)
    return Err("HydraException", "Unknown function '" + name + "'");
  // Hydra unquotes quoted strings passed directly as arguments.
  for (PVal& a : args) {
    if (a.k == K::kQuoted) a.k = K::kStr;
  }
  for (auto& [k, v] : kwargs) {
    if (v.k == K::kQuoted) v.k = K::kStr;
  }
  TRIALSHIM_ASSIGN_OR_RETURN(Bound b,
                             Bind(*sig, std::move(args), std::move(kwargs)));
  if (name == "int") return CallCast(Cast::kInt, std::move(b));
  if (name == "float") return CallCast(Cast::kFloat, std::move(b));
  if (name == "str") return CallCast(Cast::kStr, std::move(b));
  if (name == "bool") return CallCast(Cast::kBool, std::move(b));
  if (name == "choice") return CallChoice(std::move(b));
  if (name == "range") return CallRange(std::move(b));
  if (name == "interval") return CallInterval(std::move(b));
  if (name == "tag") return CallTag(std::move(b));
  if (name == "sort") return CallSort(std::move(b));
  if (name == "shuffle") return CallShuffle(std::move(b));
  return CallGlob(std::move(b));
}

}  // namespace trialshim::config::override_internal
