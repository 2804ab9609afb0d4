#include "trialshim/translate/translate.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "trialshim/config/command_line.h"
#include "trialshim/config/interpolation.h"
#include "trialshim/config/override.h"
#include "trialshim/config/render.h"
#include "trialshim/config/typed_value.h"
#include "trialshim/base/spell.h"
#include "trialshim/base/strings.h"
#include "trialshim/config/yaml_loader.h"

namespace trialshim::translate {
namespace {

using config::Node;

// Whether Hydra's `flag` takes `next` as its value. A flag whose value is
// one of a fixed set (--cfg, --info) only takes it when it is one, so a
// following override is never swallowed. Hydra 1.3.2's argparse is blunter
// (get_args_parser in hydra/_internal/utils.py: --info is nargs="?" with
// choices): `--info db=b` fails there as "invalid choice: 'db=b'". Both
// tokens stay in place, so the app still says so.
bool TakesNext(const config::HydraFlag& flag, const std::string& next) {
  if (flag.arity == config::HydraFlag::kSwitch) return false;
  if (flag.choices.empty()) return true;
  return std::find(flag.choices.begin(), flag.choices.end(), next) !=
         flag.choices.end();
}

// The gist of a parser message: its first line, without the advice after
// " at column" / "; " (the explanation gives its own).
std::string Gist(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  for (const char* cut : {" at column", "; "}) {
    size_t at = line.find(cut);
    if (at != std::string::npos) line.resize(at);
  }
  return line;
}

// One argument (or flag with its value) before keys are resolved. The
// three forms are the ones argparse-style tuners append: "--k=v" (Vertex),
// "--k v" and a bare "--k" (translate.h).
struct Item {
  enum Kind { kPass, kHydraFlag, kKeep, kVertex } kind = kPass;
  std::vector<std::string> inputs;
  std::string why;  // for kPass / kHydraFlag / kKeep
  // kVertex only:
  std::string key;  // after --map and "__" -> "."
  std::string value;
  enum Form { kEquals, kNextToken, kBare } form = kEquals;
  std::vector<std::string> key_notes;
};

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t end = s.find(sep, start);
    out.emplace_back(s.substr(start, end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

// Hydra's key grammar (OverrideParser.g4: packageOrGroup ('@' package)?) is
// decided by the config library's override parser, so the translator can
// never pass on a key that Hydra's parser then refuses (an index with a
// leading zero, '$' in a group path, ...). The key must come back whole, as
// a plain change: no '+'/'~' prefix, nothing trimmed, a non-empty head.
bool IsValidHydraKey(const std::string& key) {
  StatusOr<config::Override> parsed = config::ParseOverride(key + "=x");
  return parsed.ok() && parsed->type == config::OverrideType::kChange &&
         !parsed->key_or_group.empty() && parsed->KeyWithPackage() == key;
}

std::string Describe(const Node& v) {
  return std::string(v.type_name()) + " " + config::RenderValue(v);
}

// The value the user meant and its text for Hydra. Text that Hydra already
// reads as the value it spells is kept as written (so "5e-4" stays "5e-4");
// anything Hydra would misread or refuse is a string, rendered so it reads
// back exactly.
struct TypedValue {
  Node node;
  std::string text;
  std::string why;
};

TypedValue TypeValue(const std::string& text) {
  bool padded = !text.empty() &&
                (std::isspace(static_cast<unsigned char>(text.front())) ||
                 std::isspace(static_cast<unsigned char>(text.back())));
  // Hydra drops the leading and trailing whitespace of an unquoted value
  // (OverridesVisitor._createPrimitive, hydra/core/override_parser/
  // overrides_visitor.py): "x= hi " is x='hi'. A padded value is quoted.
  StatusOr<Node> parsed = config::ParseOverrideValue(text);
  if (!padded && parsed.ok()) {
    if (!parsed->is_string()) {
      return {*parsed, text, std::string(parsed->type_name()) + ", as written"};
    }
    if (parsed->AsString() == text) {
      return {*parsed, text,
              parsed->IsInterpolation() ? "interpolation, as written"
                                        : "string, as written"};
    }
  }
  std::string why;
  if (padded) {
    why = "string with leading/trailing space (Hydra would trim it), quoted";
  } else if (!parsed.ok()) {
    why = "string; Hydra would refuse or misread it as written (" +
          Gist(parsed.status().message()) + "), so it is quoted/escaped";
  } else {
    why = "string; Hydra would read the text as " + Describe(*parsed) +
          ", so it is quoted/escaped";
  }
  Node s = Node::String(text);
  return {s, config::RenderString(text), why};
}

// Follows `key` through the composed tree, trying each segment as given,
// then with '-' and '_' swapped. Returns the resolved dotted path. The swap
// is argparse's habit: an option "--learning-rate" lands in dest
// learning_rate (_get_optional_kwargs in Python's argparse.py), so a spec
// written for an argparse trainer may spell a config key either way.
std::optional<std::string> ResolvePath(const Node& root, const std::string& key,
                                       const Node** found) {
  const Node* cur = &root;
  std::string resolved;
  for (const std::string& seg : Split(key, '.')) {
    const Node* next = nullptr;
    std::string used = seg;
    if (cur->is_map()) {
      for (const std::string& cand :
           {seg, ReplaceAll(seg, "-", "_"), ReplaceAll(seg, "_", "-")}) {
        if ((next = cur->Get(cand)) != nullptr) {
          used = cand;
          break;
        }
      }
    } else if (cur->is_list()) {
      next = cur->Find(seg);
    }
    if (next == nullptr) return std::nullopt;
    resolved += (resolved.empty() ? "" : ".") + used;
    cur = next;
  }
  *found = cur;
  return resolved;
}

void CollectPaths(const Node& node, const std::string& prefix,
                  std::vector<std::string>* out) {
  if (!node.is_map()) return;
  for (const auto& [k, child] : node.AsMap()) {
    std::string path = prefix.empty() ? k : prefix + "." + k;
    out->push_back(path);
    CollectPaths(child, path, out);
  }
}

// The group a key names, if any: "optimizer", "model/encoder" (also spelled
// "model.encoder" or "model__encoder" by tuners), with '-'/'_' swapped.
std::optional<std::string> GroupOf(const config::ConfigRepository* repo,
                                   const std::string& key) {
  if (repo == nullptr) return std::nullopt;
  std::string head = key.substr(0, key.find('@'));
  std::string slashed = ReplaceAll(head, ".", "/");
  const std::string candidates[] = {head, slashed,
                                    ReplaceAll(slashed, "-", "_"),
                                    ReplaceAll(slashed, "_", "-")};
  for (size_t i = 0; i < 4; ++i) {
    const std::string& cand = candidates[i];
    // Each spelling asked once, in each search directory.
    if (cand.empty() ||
        std::find(candidates, candidates + i, cand) != candidates + i) {
      continue;
    }
    if (repo->GroupExists(cand)) return cand;
  }
  return std::nullopt;
}

bool InDefaults(const config::ComposeResult& composed, const std::string& group,
                const std::string& package_suffix) {
  for (const auto& [slot, choice] : composed.choices) {
    (void)choice;
    if (slot == group + package_suffix) return true;
  }
  return false;
}

std::string Quote(const Item& item) {
  std::string out;
  for (const std::string& in : item.inputs) {
    out += (out.empty() ? "" : " ") + in;
  }
  return "'" + out + "'";
}

struct Output {
  TranslatedArg arg;
  std::string dedupe_key;  // "" when it never replaces another argument
};

class Translator {
 public:
  explicit Translator(const TranslateOptions& options) : options_(options) {}

  StatusOr<std::vector<std::string>> StaticArgs(
      const std::vector<std::string>& args) const {
    TRIALSHIM_ASSIGN_OR_RETURN(std::vector<Item> items, Tokenize(args));
    std::vector<std::string> out;
    for (const Item& item : items) {
      if (item.kind == Item::kVertex) continue;
      out.insert(out.end(), item.inputs.begin(), item.inputs.end());
    }
    return out;
  }

  StatusOr<std::vector<TranslatedArg>> Run(
      const std::vector<std::string>& args) {
    TRIALSHIM_ASSIGN_OR_RETURN(std::vector<Item> items, Tokenize(args));
    config_ = options_.config;
    if (config_ != nullptr && options_.recompose) {
      TRIALSHIM_ASSIGN_OR_RETURN(std::vector<std::string> groups,
                                 GroupOverrides(items));
      if (!groups.empty()) {
        StatusOr<config::ComposeResult> again = options_.recompose(groups);
        if (!again.ok()) {
          return again.status().WithPrefix(
              "composing the config with the arguments' group choices");
        }
        recomposed_ = std::move(again).value();
        config_ = &*recomposed_;
      }
    }
    std::vector<Output> outputs;
    for (const Item& item : items) {
      if (item.kind == Item::kVertex && options_.leave_to_app) {
        outputs.push_back({LeftToApp(item), ""});
        continue;
      }
      if (item.kind != Item::kVertex) {
        for (size_t i = 0; i < item.inputs.size(); ++i) {
          outputs.push_back({{{item.inputs[i]},
                              item.inputs[i],
                              i == 0 ? item.why : "value of " + item.inputs[0]},
                             ""});
        }
        continue;
      }
      TRIALSHIM_RETURN_IF_ERROR(TranslateVertex(item, &outputs));
    }
    // The same key twice: only the last one is kept, in its own place. One
    // pass with the latest index per key, as 100k arguments are legal.
    // Hydra 1.3.2 applies "x=1 x=2" in order but refuses a key appended
    // twice ("+y=1 +y=2": "Could not append to config. An item is already
    // at 'y'") and a group appended twice ("appears more than once in the
    // final defaults list"), which a trial's value after the container's
    // own default would otherwise produce.
    std::vector<bool> replaced(outputs.size(), false);
    std::unordered_map<std::string, size_t> last;
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::string& key = outputs[i].dedupe_key;
      if (key.empty()) continue;
      auto [it, inserted] = last.try_emplace(key, i);
      if (!inserted) {
        outputs[i].arg.explanation += "; replaces " +
                                      outputs[it->second].arg.output +
                                      " given earlier (last wins)";
        replaced[it->second] = true;
        it->second = i;
      }
    }
    std::vector<TranslatedArg> result;
    result.reserve(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!replaced[i]) result.push_back(std::move(outputs[i].arg));
    }
    return result;
  }

 private:
  bool IsKeepFlag(std::string_view name) const {
    for (const std::string& k : options_.keep_flags) {
      std::string_view bare = k;
      while (!bare.empty() && bare.front() == '-') bare.remove_prefix(1);
      if (bare == name) return true;
    }
    return false;
  }

  // A trialshim app translates "--key=value" itself, with its own config
  // (which trialshim without --config-path does not have): it gets the
  // argument in the "--key=value" form, renamed by --map.
  static TranslatedArg LeftToApp(const Item& item) {
    std::string out = "--" + item.key;
    if (item.form != Item::kBare) out += "=" + item.value;
    std::string why =
        "left to the trialshim app, which translates it with "
        "its own config";
    for (const std::string& note : item.key_notes) why += "; " + note;
    return {item.inputs, out, why};
  }

  std::optional<std::string> Mapped(const std::string& key) const {
    std::optional<std::string> out;
    for (const auto& [from, to] : options_.key_map) {
      if (from == key) out = to;  // a later mapping of the same key wins
    }
    return out;
  }

  StatusOr<std::vector<Item>> Tokenize(
      const std::vector<std::string>& args) const {
    std::vector<Item> items;
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& tok = args[i];
      Item item;
      item.inputs.push_back(tok);
      if (!StartsWith(tok, "--") || tok == "--") {
        item.why = "not a --key argument: passed through unchanged";
        items.push_back(std::move(item));
        continue;
      }
      size_t eq = tok.find('=');
      std::string name =
          tok.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      bool has_next = i + 1 < args.size() && !StartsWith(args[i + 1], "--");
      if (const config::HydraFlag* flag = config::FindHydraFlag("--" + name)) {
        item.kind = Item::kHydraFlag;
        item.why = "Hydra's own flag --" + name + ": passed through untouched";
        if (eq == std::string::npos && has_next &&
            TakesNext(*flag, args[i + 1])) {
          item.inputs.push_back(args[++i]);
        }
        items.push_back(std::move(item));
        continue;
      }
      if (IsKeepFlag(name)) {
        item.kind = Item::kKeep;
        item.why = "--keep flag --" + name + ": passed through untouched";
        if (eq == std::string::npos && has_next)
          item.inputs.push_back(args[++i]);
        items.push_back(std::move(item));
        continue;
      }
      item.kind = Item::kVertex;
      if (name.empty()) {
        return Status::InvalidArgument("argument '" + tok +
                                       "': empty key after '--'");
      }
      if (eq != std::string::npos) {
        item.form = Item::kEquals;
        item.value = tok.substr(eq + 1);
      } else if (has_next) {
        item.form = Item::kNextToken;
        item.value = args[++i];
        item.inputs.push_back(item.value);
      } else {
        item.form = Item::kBare;
      }
      // --map applies to the key as given, then to its dotted spelling.
      if (std::optional<std::string> to = Mapped(name)) {
        item.key = *to;
        item.key_notes.push_back("renamed by --map " + name + "=" + *to);
      } else {
        item.key = ReplaceAll(name, "__", ".");
        if (item.key != name) item.key_notes.push_back("'__' read as '.'");
        if (std::optional<std::string> to2 = Mapped(item.key)) {
          item.key_notes.push_back("renamed by --map " + item.key + "=" + *to2);
          item.key = *to2;
        }
      }
      if (!IsValidHydraKey(item.key)) {
        return Status::InvalidArgument(
            "argument " + Quote(item) + ": '" + item.key +
            "' is not a valid Hydra key (expected dot-separated parts, each "
            "letters, digits, '_', '-' and '$' not starting with a digit or "
            "'-', or an index without leading zeros, e.g. 'optimizer.lr', "
            "'layers.0.size'; or a group path of such parts without '$', "
            "e.g. 'model/encoder'; optionally followed by '@package')");
      }
      items.push_back(std::move(item));
    }
    return items;
  }

  // Group overrides among the arguments, as Hydra overrides, in order: the
  // config is composed again with them, since switching a group changes
  // which keys exist (Hydra composes the defaults list, group choices
  // included, before it applies the value overrides: ConfigLoaderImpl.
  // _load_configuration_impl in hydra/_internal/config_loader_impl.py).
  StatusOr<std::vector<std::string>> GroupOverrides(
      const std::vector<Item>& items) const {
    std::vector<std::string> out;
    for (const Item& item : items) {
      if (item.kind == Item::kPass) {
        const std::string& tok = item.inputs[0];
        if (StartsWith(tok, "-")) continue;
        StatusOr<config::Override> ov = config::ParseOverride(tok);
        if (!ov.ok() || ov->is_hydra()) continue;
        if (options_.repository->GroupExists(ov->key_or_group))
          out.push_back(tok);
      } else if (item.kind == Item::kVertex && item.form != Item::kBare) {
        std::optional<std::string> group =
            GroupOf(options_.repository, item.key);
        if (!group || config::IsHydraKey(*group)) continue;
        std::vector<std::string> opts =
            options_.repository->GroupOptions(*group);
        if (std::find(opts.begin(), opts.end(), item.value) == opts.end())
          continue;
        std::string pkg = item.key.find('@') == std::string::npos
                              ? ""
                              : item.key.substr(item.key.find('@'));
        bool known = InDefaults(*options_.config, *group, pkg);
        if (!known && !options_.add_unknown) continue;  // refused later
        out.push_back((known ? "" : "+") + *group + pkg + "=" + item.value);
      }
    }
    return out;
  }

  // What TranslateVertex renders (`prefix` "" or "+", `key`) must mean what
  // the argument meant, and pass the checks the app's Hydra makes of it.
  Status CheckRendered(const Item& item, const std::string& prefix,
                       const std::string& key, const TypedValue& typed) const {
    // Whatever the renderer produced must read back as the value meant.
    if (typed.text != item.value || !typed.node.is_string()) {
      StatusOr<Node> back = config::ParseOverrideValue(typed.text);
      if (!back.ok() || *back != typed.node) {
        return Status::Internal(
            "argument " + Quote(item) + ": rendered value '" + typed.text +
            "' does not read back as " + Describe(typed.node));
      }
    }
    // OmegaConf refuses bad interpolation syntax ("${x y}") as the app
    // merges the override: better said here, naming the argument.
    Status syntax = config::CheckInterpolationSyntax(typed.node, key);
    if (!syntax.ok()) {
      return Status::InvalidArgument(
          "argument " + Quote(item) +
          ": the app would refuse the value: " + syntax.message());
    }
    // So is the override's text, which Hydra keeps in hydra.overrides.task:
    // a value with both quotes inside ${...} has no spelling it takes.
    syntax = config::CheckInterpolationSyntax(
        Node::String(prefix + key + "=" + typed.text));
    if (!syntax.ok()) {
      return Status::InvalidArgument(
          "argument " + Quote(item) + ": the app would refuse the override " +
          prefix + key + "=" + typed.text +
          ": Hydra keeps its text in hydra.overrides.task, where OmegaConf "
          "parses it (use one kind of quote inside ${...})\n" +
          syntax.message());
    }
    return Status::Ok();
  }

  Status TranslateVertex(const Item& item, std::vector<Output>* outputs) {
    std::vector<std::string> notes;
    notes.push_back(item.form == Item::kEquals      ? "from --key=value"
                    : item.form == Item::kNextToken ? "from --key value"
                                                    : "bare flag means true");
    notes.insert(notes.end(), item.key_notes.begin(), item.key_notes.end());
    std::string prefix;
    std::string key = item.key;
    const Node* current = nullptr;  // the composed value, when known

    if (config_ != nullptr && !config::IsHydraKey(key)) {
      if (std::optional<std::string> group =
              GroupOf(options_.repository, key)) {
        return TranslateGroup(item, *group, notes, outputs);
      }
      std::optional<std::string> resolved =
          ResolvePath(config_->config, key, &current);
      if (resolved) {
        if (*resolved != key)
          notes.push_back("resolved to config key '" + *resolved + "'");
        key = *resolved;
      } else if (options_.add_unknown) {
        prefix = "+";
        notes.push_back("not in the config: added with '+' (--add-unknown)");
      } else {
        return UnknownKey(item);
      }
    }

    // A bool key followed by something that is not a bool was a bare flag:
    // the next token stays where it was.
    bool give_back_next = false;
    Item::Form form = item.form;
    if (current != nullptr && current->is_bool() && form == Item::kNextToken) {
      StatusOr<Node> v = config::ParseOverrideValue(item.value);
      if (!v.ok() || !v->is_bool()) {
        form = Item::kBare;
        give_back_next = true;
        notes[0] = "bool key followed by a non-bool: a bare flag, means true";
      }
    }

    TypedValue typed;
    if (form == Item::kBare) {
      typed = {Node::Bool(true), "true", "bool true"};
      // A bare flag means true, which a number key refuses as it refuses
      // --lr=abc: Vertex never sends one, a user's typo does.
      if (current != nullptr && current->is_number() &&
          !current->IsMissing() && !current->IsInterpolation()) {
        return Status::InvalidArgument(
            "argument " + Quote(item) + ": '" + key + "' is " +
            (current->is_int() ? "an int" : "a float") + " in the config (" +
            config::RenderValue(*current) +
            "), and a bare flag means true; give it a value: --" + key + "=" +
            config::RenderValue(*current));
      }
    } else {
      typed = TypeValue(item.value);
      if (current != nullptr) {
        TRIALSHIM_RETURN_IF_ERROR(Fit(item, key, *current, &typed));
      }
    }
    TRIALSHIM_RETURN_IF_ERROR(CheckRendered(item, prefix, key, typed));
    notes.push_back(typed.why);

    TranslatedArg out;
    out.inputs = item.inputs;
    if (give_back_next) out.inputs.pop_back();
    out.output = prefix + key + "=" + typed.text;
    std::string why;
    for (const std::string& n : notes) why += (why.empty() ? "" : "; ") + n;
    out.explanation = why;
    outputs->push_back({std::move(out), key});
    if (give_back_next) {
      outputs->push_back({{{item.value},
                           item.value,
                           "not a --key argument: passed through unchanged"},
                          ""});
    }
    return Status::Ok();
  }

  // Vertex sends a DISCRETE value as a float ("--batch_size=128.0",
  // docs/vertex-values.md), which an int field of a structured config
  // refuses; hence the integral-float rule below.
  // Adjusts the value to the composed key's type where Vertex's spelling
  // differs from what the config means, and refuses what no key of that
  // type means (abc for a number, 2 for a bool). A non-integral float for an
  // int key passes as Hydra passes it: an untyped YAML key takes it (the
  // Optuna sweeper's own examples sweep 2.5 over `x: 1`), and an app's
  // structured config refuses it there, as Hydra's typing does.
  static Status Fit(const Item& item, const std::string& key,
                    const Node& current, TypedValue* typed) {
    const Node& v = typed->node;
    const std::string& text = item.value;
    if (current.IsMissing() || current.IsInterpolation()) return Status::Ok();
    if (current.is_int() && v.is_double() && std::isfinite(v.AsDouble()) &&
        std::trunc(v.AsDouble()) == v.AsDouble() &&
        std::fabs(v.AsDouble()) < 9.2e18) {
      Node as_int = Node::Int(static_cast<int64_t>(v.AsDouble()));
      *typed = {as_int, config::RenderValue(as_int),
                "int key: integral float " + text + " becomes int"};
      return Status::Ok();
    }
    if (current.is_int() && v.is_double()) {
      typed->why += "; int key: the float passes as Hydra passes it (an "
                    "untyped key takes it; a structured config refuses it)";
      return Status::Ok();
    }
    // yes/no/on/off for a bool key: what OmegaConf makes of them for a
    // typed bool field (and YAML of the config's own `yes`), where Hydra's
    // grammar alone would pass the string 'no', which Python takes as true.
    // OmegaConf 2.3.0's BooleanNode._validate_and_convert_impl (nodes.py)
    // takes yes/y/on/true and no/n/off/false in any case; an untyped key
    // under Hydra 1.3.2 keeps flag=no as the string 'no'.
    if (current.is_bool() && v.is_string()) {
      StatusOr<Node> b = config::ConvertLike(current, v);
      if (b.ok() && b->is_bool()) {
        *typed = {*b, b->AsBool() ? "true" : "false",
                  "bool key: '" + text + "' becomes " +
                      (b->AsBool() ? "true" : "false") +
                      " as OmegaConf converts it for a bool field"};
        return Status::Ok();
      }
    }
    if (current.is_string() && v.is_scalar() && !v.is_string()) {
      Node s = Node::String(text);
      *typed = {s, config::RenderString(text),
                "string key: kept as the string '" + text +
                    "' (Hydra would read " + Describe(v) + ")"};
      return Status::Ok();
    }
    if ((!current.is_number() && !current.is_bool()) || v.is_null() ||
        v.IsInterpolation()) {
      return Status::Ok();
    }
    StatusOr<Node> converted = config::ConvertLike(current, v);
    if (converted.ok()) return Status::Ok();
    std::string type = current.is_int() ? "an int" : current.is_double()
                                                         ? "a float"
                                                         : "a bool";
    std::string expected =
        current.is_int()
            ? std::string("an int (an integral float such as 64.0 is taken as "
                          "64)") +
                  (v.is_double() ? "; if the key takes floats, write its "
                                   "value in the config as a float"
                                 : "")
        : current.is_double() ? "a number"
                              : "true or false";
    return Status::InvalidArgument(
        "argument " + Quote(item) + ": '" + key + "' is " + type +
        " in the config (" + config::RenderValue(current) + "), " +
        Describe(v) + " is not (" + converted.status().message() +
        "); expected " + expected);
  }

  Status TranslateGroup(const Item& item, const std::string& group,
                        std::vector<std::string> notes,
                        std::vector<Output>* outputs) {
    std::vector<std::string> opts = options_.repository->GroupOptions(group);
    std::string list;
    for (const std::string& o : opts) list += (list.empty() ? "" : ", ") + o;
    if (item.form == Item::kBare) {
      return Status::InvalidArgument(
          "argument " + Quote(item) + ": '" + group +
          "' is a config group and needs an option (" + list + ")");
    }
    if (std::find(opts.begin(), opts.end(), item.value) == opts.end()) {
      return Status::InvalidArgument(
          "argument " + Quote(item) + ": '" + item.value +
          "' is not an option of config group '" + group + "'" +
          DidYouMean(item.value, opts) +
          "; available options: " + list);
    }
    size_t at = item.key.find('@');
    std::string pkg = at == std::string::npos ? "" : item.key.substr(at);
    std::string prefix;
    // Hydra switches only a group its defaults list has ("Could not override
    // 'optim'. No match in the defaults list."; hydra/_internal/
    // defaults_list.py) and appends one with '+'.
    // Against the config as first composed: a group that only an argument's
    // "+group=x" put in the defaults list still needs that '+'.
    if (!InDefaults(*options_.config, group, pkg)) {
      if (!options_.add_unknown) {
        return Status::InvalidArgument(
            "argument " + Quote(item) + ": config group '" + group + pkg +
            "' is not in the defaults list, so Hydra can not switch it" +
            AddAnyway("+" + group + pkg + "=" +
                      config::RenderString(item.value)));
      }
      prefix = "+";
      notes.push_back(
          "group not in the defaults list: appended with '+' (--add-unknown)");
    }
    notes.push_back("config group '" + group + "' switched to option '" +
                    item.value + "'");
    TranslatedArg out;
    out.inputs = item.inputs;
    out.output = prefix + group + pkg + "=" + config::RenderString(item.value);
    for (const std::string& n : notes) {
      out.explanation += (out.explanation.empty() ? "" : "; ") + n;
    }
    outputs->push_back({std::move(out), group + pkg});
    return Status::Ok();
  }

  // How to take a refused argument anyway, as `override`: trialshim's
  // option, or the Hydra override itself where the caller's command line
  // takes one (an app), quoted for the shell.
  std::string AddAnyway(const std::string& override) const {
    using Hint = TranslateOptions::AddUnknownHint;
    if (options_.add_unknown_hint == Hint::kFlag) {
      return "; to add it anyway pass --add-unknown (it becomes " + override +
             ")";
    }
    return "; to add it anyway pass the Hydra override " + ShellQuote(override);
  }

  Status UnknownKey(const Item& item) const {
    std::vector<std::string> groups;
    if (options_.repository != nullptr) {
      for (const std::string& g : options_.repository->Groups()) {
        if (!config::IsHydraKey(g)) groups.push_back(g);
      }
    }
    // A misspelt group with one of its options: the group is meant.
    if (std::optional<std::string> g =
            options_.repository && item.form != Item::kBare
                ? options_.repository->GroupMeant(item.key, item.value)
                : std::nullopt) {
      return Status::InvalidArgument(
          "argument " + Quote(item) + ": '" + item.key +
          "' is neither a config key nor a config group (did you mean the "
          "config group '" + *g + "': " +
          ShellQuote("--" + *g + "=" + item.value) + "?)");
    }
    std::vector<std::string> candidates;
    CollectPaths(config_->config, "", &candidates);
    candidates.insert(candidates.end(), groups.begin(), groups.end());
    std::string hint = DidYouMean(item.key, candidates);
    if (hint.empty()) {
      // Tuners often drop the parent: "lr" for "optimizer.lr".
      std::vector<std::string> leaf_matches;
      for (const std::string& c : candidates) {
        size_t dot = c.rfind('.');
        std::string leaf = dot == std::string::npos ? c : c.substr(dot + 1);
        if (leaf == item.key ||
            ReplaceAll(leaf, "_", "-") == ReplaceAll(item.key, "_", "-")) {
          leaf_matches.push_back(c);
        }
      }
      if (!leaf_matches.empty()) {
        hint = " (did you mean '" + leaf_matches[0] + "'";
        if (leaf_matches.size() > 1) hint += " or '" + leaf_matches[1] + "'";
        hint += "?)";
      }
    }
    std::string value =
        item.form == Item::kBare ? "true" : TypeValue(item.value).text;
    return Status::InvalidArgument(
        "argument " + Quote(item) + ": key '" + item.key +
        "' is not in the config" + hint +
        (options_.add_unknown_hint == TranslateOptions::AddUnknownHint::kGroups
             ? ""
             : AddAnyway("+" + item.key + "=" + value)));
  }

  const TranslateOptions& options_;
  const config::ComposeResult* config_ = nullptr;
  std::optional<config::ComposeResult> recomposed_;
};

}  // namespace

StatusOr<std::vector<TranslatedArg>> Translate(
    const std::vector<std::string>& args, const TranslateOptions& options) {
  return Translator(options).Run(args);
}

StatusOr<std::vector<std::string>> TranslateToArgv(
    const std::vector<std::string>& args, const TranslateOptions& options) {
  TRIALSHIM_ASSIGN_OR_RETURN(std::vector<TranslatedArg> translated,
                             Translate(args, options));
  std::vector<std::string> out;
  out.reserve(translated.size());
  for (TranslatedArg& t : translated) out.push_back(std::move(t.output));
  return out;
}

StatusOr<std::vector<std::string>> StaticArgs(
    const std::vector<std::string>& args, const TranslateOptions& options) {
  return Translator(options).StaticArgs(args);
}

StatusOr<std::pair<std::string, std::string>> ParseKeyMapping(
    std::string_view text) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    return Status::InvalidArgument(
        "--map '" + std::string(text) +
        "': expected FROM=TO, e.g. --map lr=optimizer.lr");
  }
  std::string from(text.substr(0, eq));
  while (StartsWith(from, "-")) from.erase(0, 1);
  return std::make_pair(from, std::string(text.substr(eq + 1)));
}

StatusOr<std::vector<std::pair<std::string, std::string>>> LoadKeyMapFile(
    const std::string& path) {
  TRIALSHIM_ASSIGN_OR_RETURN(Node doc, config::LoadYamlFile(path));
  if (!doc.is_map()) {
    return Status::InvalidArgument("--map-file " + path +
                                   ": expected a mapping of FROM: TO keys");
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [from, to] : doc.AsMap()) {
    if (!to.is_string() || to.AsString().empty()) {
      std::string where = to.mark().known() ? to.mark().ToString() : path;
      return Status::InvalidArgument(where + ": --map-file entry '" + from +
                                     "' must map to a key string, got " +
                                     to.type_name());
    }
    std::string bare = from;
    while (StartsWith(bare, "-")) bare.erase(0, 1);
    out.emplace_back(bare, to.AsString());
  }
  return out;
}

}  // namespace trialshim::translate
