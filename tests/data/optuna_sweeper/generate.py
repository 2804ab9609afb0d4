#!/usr/bin/env python3
"""Records how Hydra 1.3.2's sweepers and hydra-optuna-sweeper 1.2.0 read
sweeps; writes cases.json (or --out FILE) for tests/config/sweep_test.cc,
tests/cli/compose_command_test.cc and tests/tuning/job_writer_test.cc.

Run it with the anchors' Python (`make anchors`: hydra-core 1.3.2,
omegaconf 2.3.0, hydra-optuna-sweeper 1.2.0, optuna 2.10.1):

    build/anchors/bin/python tests/data/optuna_sweeper/generate.py

The Anchors suites run it again into a temporary file and require the
committed cases.json byte for byte, so what the tests expect is what the
plugin does now. Sections:

  distributions  create_optuna_distribution_from_override(override):
                 distribution_to_json, or the exception; Optuna's warnings
  search_spaces  create_params_from_overrides(overrides), then the sweeper's
                 removal of fixed names from the search space
  grid           OptunaSweeperImpl._to_grid_sampler_choices(distribution)
  basic          BasicSweeper.split_arguments(overrides): the jobs
  compose        an app's `--cfg hydra` with the plugin installed (paths as
                 <tree> and <cwd>)
  trials         a whole multirun: each job's task overrides and config
                 (unresolved), in job order

Shuffled sweeps are marked "unordered" and their choices recorded sorted:
their order is random.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))

# (override, says): `says` is what trialshim's refusal must mention.
DISTRIBUTIONS = [
    # The plugin's own table (tests/test_optuna_sweeper_plugin.py, 1.2.0).
    ("key=choice(1,2)", []),
    ("key=choice(true, false)", []),
    ("key=choice('hello', 'world')", []),
    ("key=shuffle(range(1,3))", []),
    ("key=range(1,3)", []),
    ("key=interval(1, 5)", []),
    ("key=int(interval(1, 5))", []),
    ("key=tag(log, interval(1, 5))", []),
    ("key=tag(log, int(interval(1, 5)))", []),
    ("key=range(0.5, 5.5, step=1)", []),
    # More of the grammar.
    ("key=a,b", []),
    ("key=a,'b c',d\\,e", []),
    ("key=shuffle(a,b,c)", []),
    ("key=sort(3,1,2)", []),
    ("key=sort(range(5,1,-1))", []),
    ("key=range(5)", []),
    ("key=range(0,10,3)", []),
    ("key=range(0.5, 5.3, step=1)", []),
    ("key=range(0,1,0.1)", []),
    ("key=range(1,3,0.5)", []),
    ("key=float(range(1,3))", []),
    ("key=int(interval(1.5, 5.5))", []),
    ("key=interval(0, 1)", []),
    ("key=interval(1, 1)", []),
    ("key=int(interval(0, 1))", []),
    ("key=tag(log, interval(1e-5, 1e-2))", []),
    ("key=tag(log, int(interval(1, 100)))", []),
    ("key=tag(log, choice(1, 2))", []),
    ("key=tag(foo, interval(1, 2))", []),
    ("key=choice(1.0, 2)", []),
    ("key=choice(1e-3, 0.1, inf, nan)", []),
    ("key=choice([1,2], [3])", []),
    ("key=choice({a: 1}, {b: 2})", []),
    ("key=choice('a,b', \"x\", 1.5, true)", []),
    ("key=choice(${x}, y)", []),
    ("key=choice(0x10, 1_000)", []),
    ("key=choice(1, 1, 2)", []),
    ("+key=choice(1,2)", []),
    ("db@src=choice(x,y)", []),
    # Refused.
    ("key=range(5,1)", ["low", "high"]),
    ("key=range(10, 0, -2)", ["low", "high"]),
    ("key=interval(5, 1)", ["low", "high"]),
    ("key=range(1,3,0)", ["zero"]),
    ("key=tag(log, interval(0, 1))", ["larger than 0"]),
    ("key=tag(log, int(interval(0, 10)))", ["greater than 1"]),
    ("key=glob(*)", ["glob"]),
]

SEARCH_SPACES = [
    # The plugin's own table.
    ["key=choice(1,2)"],
    ["key=5"],
    ["key1=choice(1,2)", "key2=5"],
    ["key1=choice(1,2)", "key2=5", "key3=range(1,3)"],
    # A key both swept and fixed stays fixed, whichever comes first.
    ["lr=interval(0.1,1)", "lr=0.5"],
    ["lr=0.5", "lr=interval(0.1,1)"],
    # A later sweep of a key replaces the earlier one in its place.
    ["a=choice(1,2)", "b=range(1,3)", "a=choice(3,4)"],
    # Fixed values as Hydra writes them back.
    ["+x=choice(1,2)", "~y", "~w=1", "db@src=choice(a,b)", "z='a b'",
     "v=[1, 2]", "u={a: 1, b: [x, 'y z']}", "t=${foo}", "s=1e-3",
     "r=a\\ b", "q=null", "p=\"it's\"", "o=int(3.7)", "n=True"],
]

GRID = [
    ("key=range(1,4)", []),
    ("key=range(0,10,3)", []),
    ("key=range(0.5, 5.5, step=1)", []),
    ("key=range(0,1,0.1)", []),
    ("key=choice(a,b)", []),
    ("key=int(interval(1, 5))", []),
    ("key=interval(1, 5)", ["GridSampler"]),
    ("key=tag(log, interval(1, 5))", ["GridSampler"]),
]

# (tree or None, overrides, says)
BASIC = [
    (None, ["a=1,2", "b=x,y"], []),
    (None, ["a=range(1,4)", "b=5"], []),
    (None, ["a=1,2", "a=3"], []),
    (None, ["a='x,y',z", "s=a\\,b,c"], []),
    (None, ["a=choice([1,2],{b: 1})", "f=range(0,1,0.25)"], []),
    (None, ["+c=1,2", "~d", "e@pkg=u,v"], []),
    (None, ["a=sort(3,1,2)", "b=1e-3", "c=null"], []),
    ("basic", ["db=glob(*)"], []),
    ("basic", ["db=glob(*,exclude=my*)", "lr=0.1,0.2"], []),
    (None, ["a=interval(1,2)"], ["INTERVAL"]),
]

# (name, tree, args, says)
COMPOSE = [
    ("optuna_defaults", "compose", ["--cfg", "hydra"], []),
    ("sampler_random", "compose",
     ["--cfg", "hydra", "hydra/sweeper/sampler=random"], []),
    ("sampler_cmaes", "compose",
     ["--cfg", "hydra", "hydra/sweeper/sampler=cmaes"], []),
    ("sampler_nsgaii", "compose",
     ["--cfg", "hydra", "hydra/sweeper/sampler=nsgaii"], []),
    ("sampler_motpe", "compose",
     ["--cfg", "hydra", "hydra/sweeper/sampler=motpe"], []),
    ("sampler_grid", "compose",
     ["--cfg", "hydra", "hydra/sweeper/sampler=grid"], []),
    ("sweeper_overrides", "compose",
     ["--cfg", "hydra", "hydra.sweeper.n_trials=5", "hydra.sweeper.n_jobs=3",
      "hydra.sweeper.direction=maximize", "hydra.sweeper.sampler.seed=42",
      "hydra.sweeper.study_name=s"], []),
    ("converted", "compose",
     ["--cfg", "hydra", "hydra.sweeper.n_trials='7'",
      "hydra.sweeper.sampler.prior_weight=2", "hydra.sweeper.study_name=12"],
     []),
    ("from_a_file", "compose", ["--cfg", "hydra", "--config-name", "params"],
     []),
    ("on_the_command_line", "basic",
     ["--cfg", "hydra", "hydra/sweeper=optuna", "hydra/sweeper/sampler=tpe"],
     []),
    ("template", "template/configs",
     ["--cfg", "hydra", "--config-name", "train", "hparams_search=mnist_optuna"],
     []),
    ("n_trials_not_int", "compose", ["--cfg", "hydra", "hydra.sweeper.n_trials=abc"],
     ["hydra.sweeper.n_trials", "abc"]),
    ("unknown_sweeper_key", "compose", ["--cfg", "hydra", "hydra.sweeper.foo=1"],
     ["foo", "OptunaSweeperConf"]),
    ("unknown_sampler_key", "compose",
     ["--cfg", "hydra", "hydra.sweeper.sampler.foo=1"],
     ["foo", "SamplerConfig"]),
    ("seed_not_int", "compose",
     ["--cfg", "hydra", "hydra.sweeper.sampler.seed=x"],
     ["hydra.sweeper.sampler.seed"]),
    ("prior_weight_not_float", "compose",
     ["--cfg", "hydra", "hydra.sweeper.sampler.prior_weight=abc"],
     ["hydra.sweeper.sampler.prior_weight"]),
    ("basic_unknown_key", "basic", ["--cfg", "hydra", "hydra.sweeper.foo=1"],
     ["foo", "BasicSweeperConf"]),
    ("basic_batch_not_int", "basic",
     ["--cfg", "hydra", "hydra.sweeper.max_batch_size=abc"],
     ["hydra.sweeper.max_batch_size"]),
]

# (name, config_dir relative to the repository, config_name, args): a whole
# multirun of a task that records each job.
TRIALS = [
    ("digits_optuna", "examples/digits/conf-lightning", "config",
     ["hparams_search=digits_optuna", "hydra.sweeper.n_trials=6",
      "hydra.sweeper.n_jobs=2"]),
    ("template_mnist_optuna",
     "tests/data/optuna_sweeper/trees/template/configs", "train",
     ["hparams_search=mnist_optuna", "experiment=example",
      "hydra.sweeper.n_trials=4"]),
    ("command_line_sweep", "examples/digits/conf-lightning", "config",
     ["hydra/sweeper=optuna", "hydra/sweeper/sampler=random",
      "hydra.sweeper.n_trials=5", "hydra.sweeper.sampler.seed=3",
      "optimizer.lr=tag(log, interval(1e-4, 1e-1))",
      "data.batch_size=range(16, 64, 16)", "model.dropout=choice(0.0, 0.25)",
      "scheduler=cosine", "trainer.max_epochs=3"]),
    ("basic_grid", "examples/digits/conf-lightning", "config",
     ["data.batch_size=32,64", "optimizer.lr=0.01,0.1", "logger=csv,tensorboard"]),
]

TRIAL_APP = """
import json, sys, hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import OmegaConf
record = sys.argv.pop(1)
@hydra.main(version_base="1.3", config_path=sys.argv.pop(1),
            config_name=sys.argv.pop(1))
def app(cfg):
    with open(record, "a") as f:
        f.write(json.dumps({
            "num": HydraConfig.get().job.num,
            "overrides": list(HydraConfig.get().overrides.task),
            "config": OmegaConf.to_container(cfg, resolve=False)}) + "\\n")
    return float(len(json.dumps(OmegaConf.to_container(cfg))) % 97)
app()
"""

COMPOSE_APP = """
import sys, hydra
@hydra.main(version_base="1.3", config_path=sys.argv.pop(1), config_name="config")
def app(cfg):
    pass
app()
"""


def error(e):
    return f"{type(e).__name__}: {e}"


def distributions():
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra_plugins.hydra_optuna_sweeper import _impl
    from optuna.distributions import distribution_to_json
    parser = OverridesParser.create()
    out = []
    for text, says in DISTRIBUTIONS:
        case = {"override": text}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                o = parser.parse_overrides([text])[0]
                d = _impl.create_optuna_distribution_from_override(o)
                if "shuffle" in text:  # random order: recorded sorted
                    d.choices = tuple(sorted(d.choices, key=json.dumps))
                    case["unordered"] = True
                case["json"] = distribution_to_json(d)
            except Exception as e:
                case["error"] = error(e)
                case["says"] = says
        case["warnings"] = [str(w.message) for w in caught]
        out.append(case)
    return out


def search_spaces():
    from hydra_plugins.hydra_optuna_sweeper import _impl
    from optuna.distributions import distribution_to_json
    out = []
    for overrides in SEARCH_SPACES:
        space, fixed = _impl.create_params_from_overrides(overrides)
        for name in fixed:  # as OptunaSweeperImpl.sweep does
            space.pop(name, None)
        out.append({"overrides": overrides,
                    "params": [[k, distribution_to_json(v)]
                               for k, v in space.items()],
                    "fixed": [[k, v] for k, v in fixed.items()]})
    return out


def grid():
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra_plugins.hydra_optuna_sweeper import _impl
    parser = OverridesParser.create()
    out = []
    for text, says in GRID:
        o = parser.parse_overrides([text])[0]
        d = _impl.create_optuna_distribution_from_override(o)
        case = {"override": text}
        try:
            case["choices"] = json.loads(json.dumps(
                _impl.OptunaSweeperImpl._to_grid_sampler_choices(None, d)))
        except Exception as e:
            case["error"] = error(e)
            case["says"] = says
        out.append(case)
    return out


def basic():
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra._internal.utils import create_config_search_path
    from hydra.core.override_parser.overrides_parser import OverridesParser
    out = []
    for tree, overrides, says in BASIC:
        loader = None
        if tree:
            loader = ConfigLoaderImpl(config_search_path=create_config_search_path(
                os.path.join(HERE, "trees", tree)))
        case = {"tree": tree, "overrides": overrides}
        try:
            parsed = OverridesParser.create(config_loader=loader).parse_overrides(
                overrides)
            case["jobs"] = BasicSweeper.split_arguments(parsed, None)[0]
        except Exception as e:
            case["error"] = error(e)
            case["says"] = says
        out.append(case)
    return out


def run_app(app, args, cwd, env_path):
    env = dict(os.environ, PYTHONPATH=env_path)
    env.pop("HYDRA_FULL_ERROR", None)
    return subprocess.run([sys.executable, app] + args, cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def compose():
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.path.realpath(tmp)
        app = os.path.join(cwd, "app.py")
        with open(app, "w") as f:
            f.write(COMPOSE_APP)
        for name, tree, args, says in COMPOSE:
            tree_dir = os.path.join(HERE, "trees", tree)
            p = run_app(app, [tree_dir] + args, cwd, tree_dir)
            norm = lambda s: s.replace(tree_dir, "<tree>").replace(cwd, "<cwd>")
            case = {"name": name, "tree": tree, "args": args,
                    "exit_code": p.returncode, "stdout": norm(p.stdout)}
            if p.returncode != 0:
                case["hydra_message"] = norm(p.stderr).replace(
                    "\nSet the environment variable HYDRA_FULL_ERROR=1 for a "
                    "complete stack trace.\n", "").strip()
                case["says"] = says
            out.append(case)
            print(f"compose {name}: exit {p.returncode}", file=sys.stderr)
    return out


def trials():
    out = []
    for name, config_dir, config_name, args in TRIALS:
        with tempfile.TemporaryDirectory() as tmp:
            cwd = os.path.realpath(tmp)
            app = os.path.join(cwd, "app.py")
            record = os.path.join(cwd, "jobs.jsonl")
            with open(app, "w") as f:
                f.write(TRIAL_APP)
            p = run_app(app, [record, os.path.join(ROOT, config_dir),
                              config_name, "-m", "hydra.sweep.dir=" + cwd +
                              "/multirun"] + args, cwd, cwd)
            if p.returncode != 0:
                sys.exit(f"trials {name} failed:\n{p.stderr}")
            jobs = [json.loads(line) for line in open(record)]
            jobs.sort(key=lambda j: j["num"])
            out.append({"name": name, "config_dir": config_dir,
                        "config_name": config_name, "args": args,
                        "jobs": [{"overrides": j["overrides"],
                                  "config": j["config"]} for j in jobs]})
            print(f"trials {name}: {len(jobs)} jobs", file=sys.stderr)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "cases.json"))
    out = ap.parse_args().out
    # The digits tree resolves ${hydra:runtime.cwd} and needs no environment;
    # the template's paths read PROJECT_ROOT with a default.
    os.environ.pop("PROJECT_ROOT", None)
    cases = {"distributions": distributions(), "search_spaces": search_spaces(),
             "grid": grid(), "basic": basic(), "compose": compose(),
             "trials": trials()}
    with open(out, "w") as f:
        json.dump(cases, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
