// Translate: Vertex-style arguments to Hydra overrides, with and without a
// composed config. Expected overrides are compared by what Hydra reads
// (config::ParseOverride: type, key, value and its type), so any correct
// quoting style passes; spellings the contract fixes are checked exactly.
// The Anchors* tests have Hydra 1.3.2's own parser judge the same pairs
// (tests/anchors/hydra_overrides.py).
#include "trialshim/translate/translate.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testutil/anchors.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/config/compose.h"
#include "trialshim/config/override.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::translate {
namespace {

using config::Node;

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += "[" + s + "] ";
  return out;
}

// True if Hydra reads `got` as the same override as `want` (or, for things
// that are not overrides, such as flags, if they are equal).
bool SameOverride(const std::string& got, const std::string& want) {
  if (got == want) return true;
  StatusOr<config::Override> g = config::ParseOverride(got);
  StatusOr<config::Override> w = config::ParseOverride(want);
  if (!g.ok() || !w.ok()) return false;
  return g->type == w->type && g->key_or_group == w->key_or_group &&
         g->package == w->package && g->value_kind == w->value_kind &&
         g->value.has_value() == w->value.has_value() &&
         (!g->value || *g->value == *w->value);
}

void ExpectTranslation(const std::string& name,
                       const std::vector<std::string>& args,
                       const std::vector<std::string>& want,
                       const TranslateOptions& options = TranslateOptions()) {
  StatusOr<std::vector<std::string>> got = TranslateToArgv(args, options);
  ASSERT_TRUE(got.ok()) << "case " << name << ": " << got.status().message();
  ASSERT_EQ(got->size(), want.size())
      << "case " << name << ": got " << Join(*got) << " want " << Join(want);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(SameOverride((*got)[i], want[i]))
        << "case " << name << " item " << i << ": got [" << (*got)[i]
        << "] want [" << want[i] << "]";
  }
}

struct Case {
  const char* name;
  std::vector<std::string> args;
  std::vector<std::string> want;
};

const std::vector<Case>& ValueCases() {
  static const auto* cases = new std::vector<Case>{
      {"equals_float", {"--lr=0.02"}, {"lr=0.02"}},
      {"equals_int", {"--epochs=5"}, {"epochs=5"}},
      {"space_form",
       {"--lr", "0.02", "--epochs", "5"},
       {"lr=0.02", "epochs=5"}},
      {"negative_int_space_form", {"--shift", "-3"}, {"shift=-3"}},
      {"negative_exponent_space_form", {"--lr", "-1e-3"}, {"lr=-1e-3"}},
      {"dash_word_is_a_value", {"--name", "-x"}, {"name=-x"}},
      {"exponent_float", {"--wd=5e-4"}, {"wd=5e-4"}},
      {"bool_false", {"--flag=false"}, {"flag=false"}},
      {"bool_capitalised", {"--flag=True"}, {"flag=true"}},
      {"null", {"--clip=null"}, {"clip=null"}},
      {"nan", {"--x=nan"}, {"x=nan"}},
      {"minus_inf", {"--x=-inf"}, {"x=-inf"}},
      {"list", {"--gpus=[0,1]"}, {"gpus=[0,1]"}},
      {"nested_list", {"--l=[[1,2],[a]]"}, {"l=[[1,2],[a]]"}},
      {"empty_list", {"--l=[]"}, {"l=[]"}},
      {"dict", {"--opt={a:1,b:[2]}"}, {"opt={a:1,b:[2]}"}},
      {"leading_zero_is_a_string", {"--id=007"}, {"id='007'"}},
      {"interpolation_kept", {"--dir=${oc.env:HOME}"}, {"dir=${oc.env:HOME}"}},
      {"url", {"--uri=gs://bucket/path"}, {"uri='gs://bucket/path'"}},
      {"empty_value", {"--tag="}, {"tag=''"}},
      {"inner_space", {"--name=my run"}, {"name='my run'"}},
  };
  return *cases;
}

TEST(Translate, ValuesKeepTheTypeTheUserMeant) {
  for (const Case& c : ValueCases()) ExpectTranslation(c.name, c.args, c.want);
}

const std::vector<Case>& QuotingCases() {
  static const auto* cases = new std::vector<Case>{
      {"comma_not_a_sweep", {"--act=relu,gelu"}, {"act='relu,gelu'"}},
      {"int_comma_not_a_sweep", {"--seeds=1,2"}, {"seeds='1,2'"}},
      {"two_lists_not_a_sweep", {"--l=[1,2],[3]"}, {"l='[1,2],[3]'"}},
      {"checkpoint_equals",
       {"--ckpt=epoch=3-step=100.ckpt"},
       {"ckpt='epoch=3-step=100.ckpt'"}},
      {"query_string", {"--u=http://x?b=c"}, {"u='http://x?b=c'"}},
      {"leading_space", {"--s= x"}, {"s=' x'"}},
      {"trailing_space", {"--s=x "}, {"s='x '"}},
      {"only_space", {"--s= "}, {"s=' '"}},
      {"double_quotes", {"--q=say \"hi\""}, {"q='say \"hi\"'"}},
      {"single_quote", {"--q=it's"}, {"q=\"it's\""}},
      {"both_quotes", {"--q=it's \"x\""}, {"q='it\\'s \"x\"'"}},
      {"hash", {"--c=a#b"}, {"c='a#b'"}},
      {"semicolon", {"--cmd=a;b"}, {"cmd='a;b'"}},
      {"closing_bracket", {"--t=a]b"}, {"t='a]b'"}},
      {"opening_bracket_only", {"--t=[a"}, {"t='[a'"}},
      {"sweep_function", {"--o=choice(a,b)"}, {"o='choice(a,b)'"}},
      {"range_function", {"--o=range(1,3)"}, {"o='range(1,3)'"}},
      {"non_ascii", {"--name=caf\xc3\xa9"}, {"name='caf\xc3\xa9'"}},
      {"escaped_comma_kept_literally", {"--p=a\\,b"}, {"p='a\\,b'"}},
      {"ampersand_pipe", {"--c=a&b|c"}, {"c='a&b|c'"}},
      {"quoted_text_is_literal", {"--q='x'"}, {"q=\"'x'\""}},
  };
  return *cases;
}

TEST(Translate, TextHydraWouldMisreadIsQuoted) {
  for (const Case& c : QuotingCases())
    ExpectTranslation(c.name, c.args, c.want);
}

const std::vector<Case>& FlagCases() {
  static const auto* cases = new std::vector<Case>{
      {"bare_flag_last",
       {"--epochs=5", "--resume"},
       {"epochs=5", "resume=true"}},
      {"bare_flag_before_flag",
       {"--fast_dev_run", "--lr=0.01"},
       {"fast_dev_run=true", "lr=0.01"}},
      {"next_token_is_the_value",
       {"--name", "model=resnet"},
       {"name='model=resnet'"}},
      {"dotted_key", {"--a.b.c=1"}, {"a.b.c=1"}},
      {"dunder_key", {"--data__batch_size=32"}, {"data.batch_size=32"}},
      {"dashed_key", {"--model.hidden-dim=8"}, {"model.hidden-dim=8"}},
      {"dollar_key", {"--$x=1"}, {"$x=1"}},
      {"index_key", {"--model.layers.0=4"}, {"model.layers.0=4"}},
      {"override_passthrough",
       {"model=resnet", "+x=1", "~y", "++t.x=1"},
       {"model=resnet", "+x=1", "~y", "++t.x=1"}},
      {"double_dash_inside_passthrough",
       {"experiment=a--b", "hparams_search=vertex_ai", "--lr=0.1"},
       {"experiment=a--b", "hparams_search=vertex_ai", "lr=0.1"}},
      {"single_dash_passthrough", {"-m", "seed=1,2"}, {"-m", "seed=1,2"}},
      {"lone_double_dash", {"--", "--lr=1"}, {"--", "lr=1"}},
      {"passthrough_keeps_position",
       {"a=1", "--lr=2", "b=3"},
       {"a=1", "lr=2", "b=3"}},
      {"last_wins", {"--epochs=1", "--epochs", "2"}, {"epochs=2"}},
      {"last_wins_in_its_place", {"--a=1", "x=1", "--a=2"}, {"x=1", "a=2"}},
      {"last_wins_across_spellings", {"--a__b=1", "--a.b=2"}, {"a.b=2"}},
      {"bare_then_value_last_wins", {"--v", "--v=false"}, {"v=false"}},
      {"last_wins_interleaved",
       {"--a=1", "--b=1", "--a=2", "x=1", "--b=2", "--a=3", "--c=1"},
       {"x=1", "b=2", "a=3", "c=1"}},
      {"index_zero_key", {"--a.0=1"}, {"a.0=1"}},
      {"index_ten_key", {"--a.10.b=1"}, {"a.10.b=1"}},
      {"group_path_key", {"--model/encoder=x"}, {"model/encoder=x"}},
      {"group_with_package_key", {"--db@backup=x"}, {"db@backup=x"}},
      {"group_with_empty_package", {"--db@=x"}, {"db@=x"}},
  };
  return *cases;
}

TEST(Translate, FlagsKeysAndPassThrough) {
  for (const Case& c : FlagCases()) ExpectTranslation(c.name, c.args, c.want);
}

const std::vector<Case>& HydraFlagCases() {
  static const auto* cases = new std::vector<Case>{
      {"multirun", {"--multirun", "seed=1,2"}, {"--multirun", "seed=1,2"}},
      {"cfg_space", {"--cfg", "job", "--lr=1"}, {"--cfg", "job", "lr=1"}},
      {"cfg_equals", {"--cfg=all"}, {"--cfg=all"}},
      {"cfg_short", {"-c", "hydra"}, {"-c", "hydra"}},
      {"resolve", {"--resolve", "--lr=1"}, {"--resolve", "lr=1"}},
      {"package",
       {"--package", "_global_", "--lr=1"},
       {"--package", "_global_", "lr=1"}},
      {"run", {"--run", "--lr=1"}, {"--run", "lr=1"}},
      {"config_path_equals",
       {"--config-path=/cfg", "--lr=1"},
       {"--config-path=/cfg", "lr=1"}},
      {"config_name_space",
       {"--config-name", "train", "--lr", "1"},
       {"--config-name", "train", "lr=1"}},
      {"config_dir", {"--config-dir", "/extra"}, {"--config-dir", "/extra"}},
      {"short_config_flags",
       {"-cp", "/cfg", "-cn", "x"},
       {"-cp", "/cfg", "-cn", "x"}},
      {"info_alone", {"--info", "--lr=1"}, {"--info", "lr=1"}},
      {"info_with_choice", {"--info", "defaults"}, {"--info", "defaults"}},
      {"help", {"--help"}, {"--help"}},
      {"hydra_help", {"--hydra-help"}, {"--hydra-help"}},
      {"version", {"--version"}, {"--version"}},
      {"shell_completion",
       {"--shell-completion", "install=bash"},
       {"--shell-completion", "install=bash"}},
      {"experimental_rerun",
       {"--experimental-rerun", "o/.hydra/config.pickle"},
       {"--experimental-rerun", "o/.hydra/config.pickle"}},
      // Hydra's argparse takes abbreviations, but a Vertex parameter named
      // "config" must still become an override.
      {"not_a_hydra_flag", {"--config=x"}, {"config=x"}},
  };
  return *cases;
}

TEST(Translate, HydraFlagsPassThroughWithTheirValues) {
  for (const Case& c : HydraFlagCases())
    ExpectTranslation(c.name, c.args, c.want);
}

struct OptCase {
  const char* name;
  std::vector<std::string> keep;
  std::vector<std::pair<std::string, std::string>> map;
  std::vector<std::string> args;
  std::vector<std::string> want;

  TranslateOptions options() const {
    TranslateOptions o;
    o.keep_flags = keep;
    o.key_map = map;
    return o;
  }
};

const std::vector<OptCase>& OptCases() {
  static const auto* cases = new std::vector<OptCase>{
      {"keep_equals",
       {"--local_rank"},
       {},
       {"--local_rank=1", "--lr=2"},
       {"--local_rank=1", "lr=2"}},
      {"keep_space",
       {"local_rank"},
       {},
       {"--local_rank", "1", "--lr=2"},
       {"--local_rank", "1", "lr=2"}},
      {"keep_bare",
       {"--debug"},
       {},
       {"--debug", "--lr=2"},
       {"--debug", "lr=2"}},
      {"map", {}, {{"lr", "optimizer.lr"}}, {"--lr=0.1"}, {"optimizer.lr=0.1"}},
      {"map_dotted_spelling", {}, {{"a.b", "c"}}, {"--a__b=1"}, {"c=1"}},
      {"map_last_mapping_wins",
       {},
       {{"lr", "x"}, {"lr", "y"}},
       {"--lr=1"},
       {"y=1"}},
      {"map_makes_duplicates",
       {},
       {{"lr", "optimizer.lr"}},
       {"--optimizer.lr=1", "--lr=2"},
       {"optimizer.lr=2"}},
  };
  return *cases;
}

TEST(Translate, KeepAndMap) {
  for (const OptCase& c : OptCases()) {
    ExpectTranslation(c.name, c.args, c.want, c.options());
  }
}

TEST(Translate, ExactSpellings) {
  // Numbers stay as written (Vertex's text), not re-printed.
  const std::vector<Case> cases = {
      {"exponent", {"--wd=5e-4"}, {"wd=5e-4"}},
      {"decimal", {"--lr=0.020"}, {"lr=0.020"}},
      {"int", {"--n=100"}, {"n=100"}},
      {"dict", {"--opt={a:1}"}, {"opt={a:1}"}},
      {"bare", {"--dry"}, {"dry=true"}},
  };
  for (const Case& c : cases) {
    StatusOr<std::vector<std::string>> got = TranslateToArgv(c.args, {});
    ASSERT_OK(got);
    EXPECT_EQ(*got, c.want) << "case " << c.name;
  }
}

TEST(Translate, BadKeysAreRefusedNamingTheArgument) {
  struct ErrCase {
    const char* name;
    std::vector<std::string> args;
    std::string want_in_message;
  };
  const std::vector<ErrCase> cases = {
      {"empty_key", {"--=3"}, "'--=3'"},
      {"space_in_key", {"--a b=1"}, "'--a b=1'"},
      {"non_ascii_key", {"--caf\xc3\xa9=1"}, "not a valid Hydra key"},
      {"empty_segment", {"--a..b=1"}, "'a..b'"},
      {"leading_dot", {"--.a=1"}, "not a valid Hydra key"},
      {"space_form_named", {"--a b", "1"}, "'--a b 1'"},
      // Hydra's key grammar, as its parser applies it (F1).
      {"leading_zero_index", {"--a.02=1"}, "'a.02' is not a valid Hydra key"},
      {"leading_zero_index_dunder",
       {"--a__007=1"},
       "'a.007' is not a valid Hydra key"},
      {"index_alone", {"--0=1"}, "'0' is not a valid Hydra key"},
      {"dollar_in_group_path", {"--a/$b=1"}, "'a/$b' is not a valid Hydra key"},
      {"dollar_group_head", {"--$a/b=1"}, "'$a/b' is not a valid Hydra key"},
      {"dot_in_group_path", {"--a/b.c=1"}, "'a/b.c' is not a valid Hydra key"},
      {"two_packages", {"--a@b@c=1"}, "'a@b@c' is not a valid Hydra key"},
      {"leading_dash_segment", {"--a.-b=1"}, "not a valid Hydra key"},
      {"add_prefix_in_key", {"--+a=1"}, "'+a' is not a valid Hydra key"},
      {"delete_prefix_in_key", {"--~a=1"}, "'~a' is not a valid Hydra key"},
      {"empty_head_with_package", {"--@p=1"}, "'@p' is not a valid Hydra key"},
      {"says_what_a_key_may_hold",
       {"--a.02=1"},
       "an index without leading zeros"},
  };
  for (const ErrCase& c : cases) {
    StatusOr<std::vector<std::string>> got = TranslateToArgv(c.args, {});
    ASSERT_FALSE(got.ok()) << "case " << c.name;
    EXPECT_THAT(got, StatusIs(StatusCode::kInvalidArgument,
                              HasSubstr(c.want_in_message)))
        << "case " << c.name;
  }
}

TEST(Translate, ExplanationsSayWhy) {
  struct ExCase {
    const char* name;
    std::vector<std::string> args;
    std::string want;
  };
  const std::vector<ExCase> cases = {
      {"float", {"--lr=0.1"}, "float"},
      {"quoted", {"--a=x,y"}, "quoted"},
      {"bare", {"--dry"}, "bare flag"},
      {"dunder", {"--a__b=1"}, "'__' read as '.'"},
      {"hydra_flag", {"--multirun"}, "Hydra's own flag"},
      {"passthrough", {"x=1"}, "passed through"},
      {"last_wins", {"--a=1", "--a=2"}, "last wins"},
  };
  for (const ExCase& c : cases) {
    StatusOr<std::vector<TranslatedArg>> got = Translate(c.args, {});
    ASSERT_OK(got);
    ASSERT_FALSE(got->empty());
    EXPECT_NE(got->back().explanation.find(c.want), std::string::npos)
        << "case " << c.name << ": " << got->back().explanation;
    EXPECT_EQ(got->back().inputs.back(), c.args.back()) << "case " << c.name;
  }
}

// A trialshim app translates "--key=value" itself: it gets that form, with
// only --map's renames (and "__" as "."), everything else untouched.
TEST(Translate, LeftToATrialshimApp) {
  TranslateOptions options;
  options.leave_to_app = true;
  options.key_map = {{"bs", "data.batch_size"}};
  options.keep_flags = {"--local_rank"};
  const std::vector<Case> cases = {
      {"equals form kept",
       {"--data.batch_size=32.0"},
       {"--data.batch_size=32.0"}},
      {"space form joined", {"--lr", "0.1"}, {"--lr=0.1"}},
      {"negative value", {"--shift", "-3"}, {"--shift=-3"}},
      {"bare flag", {"--fast"}, {"--fast"}},
      {"renamed", {"--bs=64.0"}, {"--data.batch_size=64.0"}},
      {"dunder as dot", {"--model__lr=1"}, {"--model.lr=1"}},
      {"a value Hydra would misread stays raw",
       {"--act=relu,gelu"},
       {"--act=relu,gelu"}},
      {"overrides, Hydra's flags and --keep pass",
       {"x=1", "--cfg", "job", "--local_rank", "0"},
       {"x=1", "--cfg", "job", "--local_rank", "0"}},
      {"the same key twice: the app decides",
       {"--a=1", "--a=2"},
       {"--a=1", "--a=2"}},
  };
  for (const Case& c : cases) {
    StatusOr<std::vector<std::string>> got = TranslateToArgv(c.args, options);
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.status().message();
    EXPECT_EQ(*got, c.want) << "case " << c.name;
  }
  StatusOr<std::vector<std::string>> bad =
      TranslateToArgv({"--a b=1"}, options);
  EXPECT_FALSE(bad.ok()) << "a key Hydra can not read is still refused";
}

// What the program gets without the trial's values.
TEST(Translate, StaticArgsLeaveOutVertexs) {
  TranslateOptions options;
  options.keep_flags = {"--local_rank"};
  const std::vector<Case> cases = {
      {"overrides and flags kept",
       {"train.py", "x=1", "--lr=0.1", "--cfg", "job", "--epochs", "3"},
       {"train.py", "x=1", "--cfg", "job"}},
      {"keep flag with its value",
       {"--local_rank", "0", "--fast"},
       {"--local_rank", "0"}},
  };
  for (const Case& c : cases) {
    StatusOr<std::vector<std::string>> got = StaticArgs(c.args, options);
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.status().message();
    EXPECT_EQ(*got, c.want) << "case " << c.name;
  }
}

TEST(KeyMapping, ParseAndLoad) {
  StatusOr<std::pair<std::string, std::string>> m =
      ParseKeyMapping("--lr=optimizer.lr");
  ASSERT_OK(m);
  EXPECT_EQ(m->first, "lr");
  EXPECT_EQ(m->second, "optimizer.lr");
  for (const char* bad : {"lr", "=x", "lr="}) {
    EXPECT_FALSE(ParseKeyMapping(bad).ok()) << "case " << bad;
  }
  testing::TempDir tmp;
  std::string good =
      tmp.Write("map.yaml", "lr: optimizer.lr\nbatch-size: data.batch_size\n");
  auto loaded = LoadKeyMapFile(good);
  ASSERT_OK(loaded);
  ASSERT_EQ(loaded->size(), 2u);
  EXPECT_EQ((*loaded)[1].first, "batch-size");
  EXPECT_EQ((*loaded)[1].second, "data.batch_size");
  EXPECT_FALSE(LoadKeyMapFile(tmp.Write("list.yaml", "- a\n")).ok());
  EXPECT_FALSE(LoadKeyMapFile(tmp.Write("num.yaml", "a: 1\n")).ok());
  EXPECT_FALSE(LoadKeyMapFile(tmp.Join("missing.yaml")).ok());
}

// Config-aware resolution against the conformance "train" tree:
// optimizer: adam|sgd (adam default), data: digits|synthetic, experiment/
// not in the defaults; seed, run_name, trainer.{max_epochs, gradient_clip_val
// (null), precision, devices}, model.{hidden, dropout, act}.
class ConfigAware : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::string(TRIALSHIM_TEST_DATA_DIR) +
           "/conformance/compose/trees/train";
    StatusOr<config::ConfigRepository> repo =
        config::ConfigRepository::Open(dir_);
    ASSERT_OK(repo);
    repo_.emplace(*repo);
    StatusOr<config::ComposeResult> composed = Compose({});
    ASSERT_OK(composed);
    composed_.emplace(std::move(composed).value());
  }

  StatusOr<config::ComposeResult> Compose(
      const std::vector<std::string>& overrides) {
    config::ComposeRequest request;
    request.config_path = dir_;
    request.config_name = "config";
    request.overrides = overrides;
    return config::Compose(request);
  }

  TranslateOptions Options(bool add_unknown = false) {
    TranslateOptions o;
    o.config = &*composed_;
    o.repository = &*repo_;
    o.add_unknown = add_unknown;
    o.recompose = [this](const std::vector<std::string>& overrides) {
      return Compose(overrides);
    };
    return o;
  }

  std::string dir_;
  std::optional<config::ConfigRepository> repo_;
  std::optional<config::ComposeResult> composed_;
};

const std::vector<Case>& KeyCases() {
  static const auto* cases = new std::vector<Case>{
      {"exact", {"--seed=7"}, {"seed=7"}},
      {"nested", {"--trainer.max_epochs=5"}, {"trainer.max_epochs=5"}},
      {"dash_for_underscore",
       {"--trainer.max-epochs=5"},
       {"trainer.max_epochs=5"}},
      {"dunder_and_dash",
       {"--trainer__max-epochs=5"},
       {"trainer.max_epochs=5"}},
      {"int_key_integral_float",
       {"--data.batch_size=64.0"},
       {"data.batch_size=64"}},
      {"int_key_exponent", {"--seed=1e2"}, {"seed=100"}},
      {"float_key", {"--optimizer.lr=0.01"}, {"optimizer.lr=0.01"}},
      {"float_key_takes_int", {"--optimizer.lr=1"}, {"optimizer.lr=1"}},
      {"float_key_takes_inf", {"--optimizer.lr=inf"}, {"optimizer.lr=inf"}},
      {"int_key_takes_null", {"--seed=null"}, {"seed=null"}},
      {"int_key_takes_interpolation",
       {"--seed=${data.batch_size}"},
       {"seed=${data.batch_size}"}},
      // OmegaConf's words for a typed bool field (docs/vertex-values.md):
      // Hydra's grammar would pass 'no', which Python takes as true.
      {"bool_key_takes_yes",
       {"--optimizer=sgd", "--optimizer.nesterov=yes"},
       {"optimizer=sgd", "optimizer.nesterov=true"}},
      {"bool_key_takes_no",
       {"--optimizer=sgd", "--optimizer.nesterov=No"},
       {"optimizer=sgd", "optimizer.nesterov=false"}},
      {"bool_key_takes_off",
       {"--optimizer=sgd", "--optimizer.nesterov=off"},
       {"optimizer=sgd", "optimizer.nesterov=false"}},
      // An untyped int key takes a float as Hydra passes it (the Optuna
      // sweeper's examples sweep 2.5 over `x: 1`).
      {"int_key_takes_a_fraction", {"--seed=1.5"}, {"seed=1.5"}},
      {"null_key_takes_float",
       {"--trainer.gradient_clip_val=0.5"},
       {"trainer.gradient_clip_val=0.5"}},
      {"string_key_keeps_numeric_text",
       {"--model.act=123"},
       {"model.act='123'"}},
      {"string_key_keeps_bool_text",
       {"--model.act=true"},
       {"model.act='true'"}},
      {"interpolated_key_untyped", {"--run_name=5"}, {"run_name=5"}},
      {"list_key", {"--trainer.devices=[0,1]"}, {"trainer.devices=[0,1]"}},
      {"list_index", {"--model.hidden.0=256"}, {"model.hidden.0=256"}},
      {"hydra_keys_unchecked",
       {"--hydra.run.dir=/tmp/x"},
       {"hydra.run.dir=/tmp/x"}},
      {"passthrough_unchecked", {"whatever=1"}, {"whatever=1"}},
  };
  return *cases;
}

TEST_F(ConfigAware, KeysResolveAndValuesFitTheirKeys) {
  for (const Case& c : KeyCases())
    ExpectTranslation(c.name, c.args, c.want, Options());
}

const std::vector<Case>& GroupCases() {
  static const auto* cases = new std::vector<Case>{
      {"switch", {"--optimizer=sgd"}, {"optimizer=sgd"}},
      {"key_of_the_new_option",
       {"--optimizer=sgd", "--optimizer.momentum=0.5"},
       {"optimizer=sgd", "optimizer.momentum=0.5"}},
      {"key_after_passthrough_switch",
       {"optimizer=sgd", "--optimizer.momentum=0.5"},
       {"optimizer=sgd", "optimizer.momentum=0.5"}},
      {"bool_key_bare_flag",
       {"--optimizer=sgd", "--optimizer.nesterov"},
       {"optimizer=sgd", "optimizer.nesterov=true"}},
      {"bool_key_then_override",
       {"--optimizer=sgd", "--optimizer.nesterov", "model.act=gelu"},
       {"optimizer=sgd", "optimizer.nesterov=true", "model.act=gelu"}},
      {"bool_key_with_value",
       {"--optimizer=sgd", "--optimizer.nesterov", "false"},
       {"optimizer=sgd", "optimizer.nesterov=false"}},
      {"group_last_wins",
       {"--data=synthetic", "--data=digits"},
       {"data=digits"}},
  };
  return *cases;
}

TEST_F(ConfigAware, GroupsSwitchAndResolveTheirKeys) {
  for (const Case& c : GroupCases())
    ExpectTranslation(c.name, c.args, c.want, Options());
  ExpectTranslation("group_not_in_defaults_added", {"--experiment=long"},
                    {"+experiment=long"}, Options(true));
  ExpectTranslation("unknown_key_added", {"--optimizer.warmup=5"},
                    {"+optimizer.warmup=5"}, Options(true));
}

TEST_F(ConfigAware, UnknownKeysAndOptionsAreRefused) {
  struct ErrCase {
    const char* name;
    std::vector<std::string> args;
    std::vector<std::string> want_in_message;
  };
  const std::vector<ErrCase> cases = {
      {"typo",
       {"--optimizer.lrr=0.1"},
       {"'--optimizer.lrr=0.1'", "did you mean 'optimizer.lr'",
        "--add-unknown"}},
      {"missing_parent",
       {"--lr=0.1"},
       {"'--lr=0.1'", "'optimizer.lr'", "--add-unknown"}},
      {"key_only_in_other_option",
       {"--optimizer.momentum=0.5"},
       {"optimizer.momentum", "--add-unknown"}},
      {"bad_group_option",
       {"--optimizer=sgdd"},
       {"'--optimizer=sgdd'", "did you mean 'sgd'", "adam, sgd"}},
      {"group_needs_a_value", {"--optimizer"}, {"'--optimizer'", "adam, sgd"}},
      {"group_not_in_defaults",
       {"--experiment=long"},
       {"defaults list", "--add-unknown (it becomes +experiment=long)"}},
      {"unknown_key_hint_is_quoted_as_translated",
       {"--act=relu,gelu"},
       {"did you mean 'model.act'", "(it becomes +act='relu,gelu')"}},
      {"misspelt_group_with_its_option",
       {"--optimizr=sgd"},
       {"'optimizr' is neither a config key nor a config group",
        "did you mean the config group 'optimizer': --optimizer=sgd?"}},
      {"misspelt_group_other_value",
       {"--optimizr=fast"},
       {"did you mean 'optimizer'", "+optimizr=fast"}},
      // Values the key's type refuses, as OmegaConf converts them.
      {"int_key_bare",
       {"--seed"},
       {"'--seed'", "'seed' is an int in the config (42)",
        "a bare flag means true", "--seed=42"}},
      {"float_key_bare",
       {"--model.dropout", "--seed=1"},
       {"'--model.dropout'", "'model.dropout' is a float in the config (0.1)",
        "give it a value: --model.dropout=0.1"}},
      {"int_key_word",
       {"--data.batch_size=wide"},
       {"'data.batch_size' is an int in the config (64)", "str wide",
        "could not be converted to Integer"}},
      {"int_key_bool", {"--seed=true"}, {"bool true", "expected an int"}},
      {"int_key_list", {"--seed=[1,2]"}, {"list [1,2]", "expected an int"}},
      {"float_key_word",
       {"--model.dropout=high"},
       {"'model.dropout' is a float in the config (0.1)", "expected a number"}},
      {"float_key_bool", {"--model.dropout=true"}, {"expected a number"}},
      {"bool_key_word",
       {"--optimizer=sgd", "--optimizer.nesterov=maybe"},
       {"'optimizer.nesterov' is a bool in the config (false)",
        "expected true or false"}},
  };
  for (const ErrCase& c : cases) {
    StatusOr<std::vector<std::string>> got = TranslateToArgv(c.args, Options());
    ASSERT_FALSE(got.ok()) << "case " << c.name << " gave " << Join(*got);
    EXPECT_EQ(ExitCodeFor(got.status()), 2) << "case " << c.name;
    for (const std::string& part : c.want_in_message) {
      EXPECT_THAT(got, StatusIs(_, HasSubstr(part))) << "case " << c.name;
    }
  }
}

// A bare flag on a number key names the spelling that works: followed, it
// translates.
TEST_F(ConfigAware, BareFlagOnANumberKeyHintTranslates) {
  for (const char* flag : {"--seed", "--model.dropout", "--optimizer.lr"}) {
    StatusOr<std::vector<std::string>> got = TranslateToArgv({flag}, Options());
    ASSERT_FALSE(got.ok()) << flag << " gave " << Join(*got);
    const std::string& m = got.status().message();
    size_t at = m.find("give it a value: ");
    ASSERT_NE(at, std::string::npos) << m;
    std::string hint = m.substr(at + 17);
    StatusOr<std::vector<std::string>> followed =
        TranslateToArgv({hint}, Options());
    EXPECT_TRUE(followed.ok()) << flag << ": the hint " << hint << ": "
                               << followed.status().message();
  }
}

// Where the command line takes Hydra's overrides itself (an app), the hint
// is that override, quoted for the shell, and it works: the override it
// names composes.
TEST_F(ConfigAware, AppHintsNameTheHydraOverride) {
  struct HintCase {
    const char* name;
    std::vector<std::string> args;
    std::string hint;  // the override, as a shell word
  };
  const std::vector<HintCase> cases = {
      {"unknown_key", {"--warmup=5"}, "+warmup=5"},
      {"needs_quotes", {"--act=relu,gelu"}, "\"+act='relu,gelu'\""},
      {"group_not_in_defaults", {"--experiment=long"}, "+experiment=long"},
  };
  TranslateOptions options = Options();
  options.add_unknown_hint = TranslateOptions::AddUnknownHint::kOverride;
  for (const HintCase& c : cases) {
    StatusOr<std::vector<std::string>> got = TranslateToArgv(c.args, options);
    ASSERT_FALSE(got.ok()) << "case " << c.name;
    const std::string& message = got.status().message();
    const std::string said = "to add it anyway pass the Hydra override ";
    ASSERT_NE(message.find(said + c.hint), std::string::npos)
        << "case " << c.name << ": " << message;
    EXPECT_EQ(message.find("--add-unknown"), std::string::npos)
        << "case " << c.name << ": " << message;
    // What the shell hands the app for the hint's word.
    std::string word = c.hint;
    if (word.front() == '"') word = word.substr(1, word.size() - 2);
    StatusOr<config::ComposeResult> followed = Compose({word});
    EXPECT_OK(followed) << "case " << c.name;
  }
}

// --- The anchors: Hydra 1.3.2's own parser reads each translation as it
// reads the table's spelling, and reads every expected override, flags
// aside (SameOverride's config::ParseOverride stands in for it without
// PyPI).

struct Judged {
  std::string name, got, want;
};

// The pairs ExpectTranslation judges for one case.
void Collect(const std::string& name, const std::vector<std::string>& args,
             const std::vector<std::string>& want,
             const TranslateOptions& options, std::vector<Judged>* out) {
  StatusOr<std::vector<std::string>> got = TranslateToArgv(args, options);
  ASSERT_TRUE(got.ok()) << name << ": " << got.status().message();
  ASSERT_EQ(got->size(), want.size()) << name;
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string& w = want[i];
    // A flag, or a flag's value, passed through as it came.
    const bool flag = w.rfind('-', 0) == 0 ||
                      (w.find('=') == std::string::npos && w[0] != '~');
    if (flag && (*got)[i] == w) continue;
    out->push_back({name + " item " + std::to_string(i), (*got)[i], w});
  }
}

void ExpectHydraReadsAlike(const std::vector<Judged>& pairs) {
  nlohmann::json args = nlohmann::json::array();
  for (const Judged& j : pairs) {
    args.push_back(j.got);
    args.push_back(j.want);
  }
  testing::TempDir dir;
  testing::Finished f =
      testing::RunAnchorsScript("tests/anchors/hydra_overrides.py",
                                {dir.Write("args.json", args.dump())});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  nlohmann::json read = nlohmann::json::parse(f.out, nullptr, false);
  ASSERT_EQ(read.size(), args.size()) << f.out;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Judged& j = pairs[i];
    EXPECT_TRUE(read[2 * i + 1].is_string())
        << j.name << ": Hydra does not read [" << j.want
        << "] as an override: " << read[2 * i + 1];
    EXPECT_EQ(read[2 * i], read[2 * i + 1])
        << j.name << ": [" << j.got << "] against [" << j.want << "]";
  }
}

TEST(AnchorsTranslate, HydraReadsEachTranslationAsTheTableSays) {
  SKIP_WITHOUT_ANCHORS();
  std::vector<Judged> pairs;
  for (const auto* table :
       {&ValueCases(), &QuotingCases(), &FlagCases(), &HydraFlagCases()}) {
    for (const Case& c : *table) Collect(c.name, c.args, c.want, {}, &pairs);
  }
  for (const OptCase& c : OptCases()) {
    Collect(c.name, c.args, c.want, c.options(), &pairs);
  }
  ExpectHydraReadsAlike(pairs);
}

class AnchorsConfigAware : public ConfigAware {};

TEST_F(AnchorsConfigAware, HydraReadsEachTranslationAsTheTableSays) {
  SKIP_WITHOUT_ANCHORS();
  std::vector<Judged> pairs;
  for (const auto* table : {&KeyCases(), &GroupCases()}) {
    for (const Case& c : *table) {
      Collect(c.name, c.args, c.want, Options(), &pairs);
    }
  }
  Collect("group_not_in_defaults_added", {"--experiment=long"},
          {"+experiment=long"}, Options(true), &pairs);
  Collect("unknown_key_added", {"--optimizer.warmup=5"},
          {"+optimizer.warmup=5"}, Options(true), &pairs);
  ExpectHydraReadsAlike(pairs);
}

}  // namespace
}  // namespace trialshim::translate
