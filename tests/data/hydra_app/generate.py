#!/usr/bin/env python3
"""Runs real Hydra 1.3.2 on the cases below; writes cases.json and runs.json.

Each case is a Hydra app command line (`--cfg job|hydra|all`, `--resolve`,
overrides) run against trees/<tree>/ with config_name "config" (unless the
case's args give `--config-name`, as Hydra's command line allows), as an app file
named app.py (so hydra.job.name is "app") decorated with
@hydra.main(version_base="1.3"). cases.json records what Hydra printed and its
exit status (PLUGIN_CASES run with a plugin of the tree's installed);
tests/cli/compose_command_test.cc runs `trialshim compose` and
tests/app/app_test.cc a trialshim::app::Run task on the same command lines.
runs.json (RUN_CASES) records whole runs: output and run directory.

The apps run under the interpreter that runs this script, which must have
hydra-core 1.3.2 with omegaconf 2.3.0: the anchors environment (`make
anchors`, tests/anchors/requirements.txt):

    build/anchors/bin/python tests/data/hydra_app/generate.py [--out DIR] [cases] [runs]

writes both files (or the ones named) here, or into DIR. The anchors tests
(Anchors* in those two suites) run it into a temporary directory, require
the files it writes to equal the committed ones byte for byte, and compare
trialshim with what it wrote.

Paths are written as <cwd> (the directory the app ran in) and <tree> (the
config directory), so the test can put its own back.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TREES_PATH_LENGTH = 64
TREES = None  # a copy of trees/ at a path of TREES_PATH_LENGTH characters

# (name, tree, args, says): `says` lists what trialshim's error must mention
# where Hydra refuses (Hydra's wording is guidance, not a spec). "<tree>" in
# args is the config directory. Python imports pkg:// search path entries
# from the config directory's parent (where an app's file usually is).
CASES = [
    # -- issue 14.1: --resolve keeps '???' ---------------------------------
    ("resolve_keeps_missing", "basic", ["--cfg", "job", "--resolve"], []),
    ("hydra_run_dir_task_keys", "task_refs", ["--cfg", "hydra", "--resolve"],
     ["Interpolation key 'paths.log_dir' not found", "full_key: hydra.run.dir"]),

    # -- issue 14.2: bad interpolation syntax refused as the config loads --
    ("interp_bad_space", "interp_bad_space", ["--cfg", "job"],
     ["config.yaml:2:4", "GrammarParseError", "whitespace", "full_key: a"]),
    ("interp_bad_resolver", "interp_bad_resolver", ["--cfg", "job"],
     ["config.yaml:2:4", "GrammarParseError", "resolver name", "full_key: b"]),
    ("interp_unclosed", "interp_unclosed", ["--cfg", "hydra"],
     ["config.yaml:2:6", "GrammarParseError", "unexpected end of input",
      "full_key: nested.c"]),
    ("interp_bad_in_group", "interp_bad_in_group", ["--cfg", "job"],
     ["db/a.yaml:2:6", "GrammarParseError", "full_key: url"]),
    ("interp_not_interpolations", "interp_not_interpolations",
     ["--cfg", "job"], []),
    # OmegaConf.resolve parses each result again: "\${x" resolves to "${x".
    ("interp_unescaped_by_resolve", "interp_not_interpolations",
     ["--cfg", "job", "--resolve"],
     ["config.yaml:4:15", "GrammarParseError", "full_key: escaped_open"]),
    ("interp_escapes_resolved", "interp_escapes_resolved",
     ["--cfg", "job", "--resolve"], []),
    ("interp_override_unclosed", "basic", ["--cfg", "job", "port=1", "name='${x'"],
     ["Error merging override name='${x'", "GrammarParseError",
      "full_key: name"]),
    ("interp_override_space", "basic", ["--cfg", "job", "port=${foo bar}"],
     ["Error merging override port=${foo bar}", "whitespace",
      "full_key: port"]),
    ("interp_override_in_list", "basic", ["--cfg", "job", "+l=[1,'${x']"],
     ["Error merging override +l=[1,'${x']", "full_key: l[1]"]),
    ("interp_override_escaped", "basic",
     ["--cfg", "job", "port=1", "name='\\${x'"], []),
    # -- issue 14.3: the hydra: node checked against HydraConf -------------
    ("hydra_unknown_key", "basic", ["hydra.foo=bar"], ["hydra.foo"]),
    ("hydra_added_key", "basic", ["--cfg", "hydra", "+hydra.foo=bar"], []),
    ("hydra_searchpath_not_list", "basic", ["hydra.searchpath=42"],
     ["hydra.searchpath", "42"]),
    ("hydra_logging_not_optional", "basic", ["hydra.hydra_logging=null"],
     ["hydra.hydra_logging", "not Optional"]),
    ("hydra_num_not_int", "basic", ["hydra.job.num=abc"],
     ["hydra.job.num", "abc", "Integer"]),
    ("hydra_num_from_text", "basic", ["--cfg", "hydra", "hydra.job.num='3'"], []),
    ("hydra_chdir_not_bool", "basic", ["hydra.job.chdir=maybe"],
     ["hydra.job.chdir", "maybe", "bool"]),
    ("hydra_chdir_yes", "basic", ["--cfg", "hydra", "hydra.job.chdir=yes"], []),
    ("hydra_name_from_int", "basic", ["--cfg", "hydra", "hydra.job.name=7"], []),
    ("hydra_output_subdir_null", "basic",
     ["--cfg", "hydra", "hydra.output_subdir=null"], []),
    ("hydra_verbose_list", "basic", ["--cfg", "hydra", "hydra.verbose=[a,b]"], []),
    ("hydra_env_set_closed", "basic", ["hydra.job.env_set.X=1"],
     ["hydra.job.env_set.X"]),
    ("hydra_env_set_added", "basic",
     ["--cfg", "hydra", "+hydra.job.env_set.X=1", "hydra.run.dir=o/${hydra.job.name}"],
     []),
    ("hydra_mode", "basic", ["--cfg", "hydra", "hydra.mode=MULTIRUN"], []),
    ("hydra_mode_bad", "basic", ["hydra.mode=SOMETIMES"], ["SOMETIMES"]),
    # hydra.mode is a RunMode: EnumNode.validate_and_convert_to_enum takes a
    # member's name, "RunMode.<name>" and a member's value, printed as the name.
    ("hydra_mode_enum_name", "basic",
     ["--cfg", "hydra", "hydra.mode=RunMode.MULTIRUN"], []),
    ("hydra_mode_value_1", "basic", ["--cfg", "hydra", "hydra.mode=1"], []),
    ("hydra_mode_value_2", "basic", ["--cfg", "hydra", "hydra.mode=2"], []),
    ("hydra_mode_null", "basic", ["--cfg", "hydra", "hydra.mode=null"], []),
    ("hydra_mode_value_3", "basic", ["hydra.mode=3"],
     ["Invalid value '3', expected one of [RUN, MULTIRUN]", "full_key: hydra.mode"]),
    ("hydra_mode_float", "basic", ["hydra.mode=1.5"],
     ["Value 1.5 (float) is not a valid input for <enum 'RunMode'>",
      "full_key: hydra.mode"]),
    ("hydra_mode_bool", "basic", ["hydra.mode=true"],
     ["Invalid value 'True', expected one of [RUN, MULTIRUN]"]),
    ("hydra_mode_quoted_value", "basic", ["hydra.mode='1'"],
     ["Invalid value '1', expected one of [RUN, MULTIRUN]"]),
    ("hydra_mode_lower_case", "basic", ["hydra.mode=run"],
     ["Invalid value 'run', expected one of [RUN, MULTIRUN]"]),
    ("hydra_mode_other_class", "basic", ["hydra.mode=Runmode.RUN"],
     ["Invalid value 'Runmode.RUN', expected one of [RUN, MULTIRUN]"]),
    ("hydra_mode_list", "basic", ["hydra.mode=[1]"],
     ["Value [1] (list) is not a valid input for <enum 'RunMode'>"]),
    ("hydra_mode_dict", "basic", ["hydra.mode={a:1}"],
     ["Value {'a': 1} (dict) is not a valid input for <enum 'RunMode'>"]),
    ("hydra_mode_enum_name_in_file", "mode_enum_name", ["--cfg", "hydra"], []),
    ("hydra_mode_value_in_file", "mode_enum_name",
     ["--cfg", "hydra", "--config-name", "value"], []),
    ("hydra_mode_list_in_file", "mode_enum_name", ["--config-name", "list"],
     ["list.yaml:2:9", "Value [1] (ListConfig) is not a valid input for "
      "<enum 'RunMode'>", "full_key: hydra.mode"]),
    ("hydra_in_file", "hydra_in_file", ["--cfg", "hydra"], []),
    ("hydra_in_file_all", "hydra_in_file", ["--cfg", "all", "seed=2", "lr=0.5"], []),
    ("hydra_in_file_job", "hydra_in_file",
     ["--cfg", "job", "--resolve", "seed=2", "lr=0.5"], []),
    ("hydra_bad_key_in_file", "hydra_bad_key", [], ["jobs", "HydraConf", "job"]),
    ("hydra_bad_type_in_file", "hydra_bad_type", [], ["abc", "hydra.job.num"]),

    # -- issue 14.4: Hydra's own groups in defaults lists ------------------
    ("hydra_group_option", "basic",
     ["--cfg", "hydra", "hydra/job_logging=stdout", "hydra/hydra_logging=hydra_debug"],
     []),
    ("hydra_group_options_all", "basic",
     ["--cfg", "all", "hydra/job_logging=none", "hydra/hydra_logging=disabled"], []),
    # (an unknown hydra/launcher or hydra/sweeper option is a plugin's to
    # provide: PLUGIN_CASES)
    ("hydra_group_bad_option", "basic", ["hydra/job_logging=nope"],
     ["hydra/job_logging", "nope", "default"]),
    ("hydra_entry_without_override", "old_hydra_entry", [],
     ["hydra/job_logging", "override hydra/job_logging"]),
    ("hydra_override_bad_option", "bad_hydra_option", [],
     ["hydra/hydra_logging", "slurm", "default"]),
    ("hydra_group_deleted", "basic", ["--cfg", "hydra", "~hydra/job_logging"], []),

    # -- hydra.searchpath (Hydra's own example, config_search_path) --------
    ("searchpath_pkg", "searchpath/conf", ["--cfg", "all"], []),
    ("searchpath_app_dir_first", "searchpath/conf",
     ["--cfg", "job", "dataset=cifar10"], []),
    ("searchpath_file_override", "searchpath/conf",
     ["--cfg", "hydra", "hydra.searchpath=[file://<tree>/../more]", "dataset=mnist"], []),
    ("searchpath_replaced", "searchpath/conf",
     ["hydra.searchpath=[file://<tree>/../more]"], ["imagenet", "dataset"]),
    ("searchpath_missing", "searchpath/conf",
     ["--cfg", "hydra", "hydra.searchpath=[pkg://nowhere]", "dataset=cifar10"], []),
    # issue 28.3: a package Python imports as a namespace package (no
    # __init__.py) is searched, and Hydra warns that it is not available;
    # one Python can not import by its name is not searched.
    ("searchpath_namespace_package", "searchpath/conf",
     ["--cfg", "job", "hydra.searchpath=[pkg://nsconf]", "dataset=svhn"],
     ["path=nsconf is not available", "__init__.py"]),
    ("searchpath_empty_package", "searchpath/conf",
     ["--cfg", "hydra", "hydra.searchpath=[pkg://]", "dataset=cifar10"],
     ["path= is not available", "not a Python package name"]),
    ("searchpath_package_path", "searchpath/conf",
     ["--cfg", "hydra", "hydra.searchpath=[pkg://extra_conf/]", "dataset=imagenet"],
     []),

    # -- issue 14.5: ${hydra:...} ------------------------------------------
    ("hydra_resolver", "hydra_refs", ["--cfg", "job", "--resolve"], []),
    ("hydra_resolver_overrides", "hydra_refs",
     ["--cfg", "job", "--resolve", "db=pg", "+extra=1", "hydra.job.name=custom",
      "hydra.job.config.override_dirname.kv_sep=_"], []),
    ("hydra_resolver_unresolved", "hydra_refs", ["--cfg", "job"], []),
    # -- issue 28.3: an override's interpolation in override_dirname -------
    ("override_dirname_interpolation", "override_interp",
     ["--cfg", "job", "--resolve", "b=${a}"], []),
    ("override_dirname_interpolation_hydra", "override_interp",
     ["--cfg", "hydra", "--resolve", "b=${a}"],
     ["Interpolation key 'a' not found", "hydra.overrides.task[0]"]),
    ("override_dirname_resolver", "override_interp",
     ["--cfg", "job", "--resolve", "b=${hydra:job.name}"], []),
    # -- issue 28.3: an override's text is a string OmegaConf parses --------
    ("override_text_escaped_quote", "basic",
     ["--cfg", "job", "name='${foo:\\'b,a,r\\'}'"],
     ["name='${foo:\\'b,a,r\\'}'", "hydra.overrides.task[0]",
      "Write the value in double quotes"]),
    ("override_text_double_quoted", "basic",
     ["--cfg", "job", "name=\"${foo:'b,a,r'}\""], []),
    ("override_text_nested", "basic",
     ["--cfg", "job", "port=1", "name='${foo:${port}, x}'"], []),
    ("override_text_nested_escaped_quote", "basic",
     ["--cfg", "job", "port=1", "name='${foo:${port}, \\'x\\'}'"],
     ["hydra.overrides.task[1]"]),
    ("override_text_hydra", "basic",
     ["--cfg", "hydra", "hydra.job.name='${oc.env:\\'X\\'}'"],
     ["hydra.overrides.hydra[0]"]),

    # -- issue 14.6: smaller differences ------------------------------------
    ("lone_string", "lone_string", ["--cfg", "job"], []),
    ("lone_string_in_group", "lone_string", ["--cfg", "job", "+g=a"], []),
    ("primary_list_in_subfolder", "primary_list",
     ["--config-name", "sub/cfg", "--cfg", "job"],
     ["primary config 'sub/cfg' must be a DictConfig, got ListConfig"]),
    ("legacy_defaults_interpolation", "legacy_defaults_interp", ["--cfg", "job"],
     ["Defaults list element "
      "'group1_group2=${defaults.1.group1}_${defaults.2.group2}' is using a "
      "deprecated interpolation form"]),
    ("defaults_null", "defaults_null", ["--cfg", "job"],
     ["Invalid defaults list in 'config', defaults must be a list "
      "(got NoneType)"]),
]

# (name, tree, args, says) as CASES, run with a Hydra plugin installed: the
# app's environment may have a plugin that provides an option of
# hydra/launcher or hydra/sweeper that trialshim does not know
# (trees/plugin/hydra_plugins); Hydra with it composes the config, and
# trialshim composes it too, with a warning that names the option (`says`).
PLUGIN_CASES = [
    ("plugin_launcher", "plugin/conf", ["--cfg", "job", "hydra/launcher=elsewhere"],
     ["hydra/launcher=elsewhere", "a plugin installed where the app runs"]),
    ("plugin_sweeper", "plugin/conf", ["--cfg", "job", "hydra/sweeper=elsewhere"],
     ["hydra/sweeper=elsewhere", "a plugin installed where the app runs"]),
    ("plugin_in_defaults", "plugin/conf",
     ["--config-name", "in_defaults", "--cfg", "job", "lr=0.2"],
     ["hydra/launcher=elsewhere", "hydra/sweeper=elsewhere"]),
    # -- issue 33.4: the sampler option merged types hydra.sweeper.sampler,
    # whatever _target_ the search config writes over it
    ("optuna_sampler_random_under_tpe_keys", "optuna_search",
     ["--cfg", "hydra", "hparams_search=optuna", "hydra/sweeper/sampler=random"],
     ["Key 'n_startup_trials' not in 'RandomSamplerConfig'",
      "full_key: hydra.sweeper.sampler.n_startup_trials"]),
    ("optuna_sampler_grid_under_tpe_keys", "optuna_search",
     ["--cfg", "hydra", "hparams_search=optuna", "hydra/sweeper/sampler=grid"],
     ["Key 'seed' not in 'GridSamplerConfig'",
      "full_key: hydra.sweeper.sampler.seed"]),
    ("optuna_sampler_tpe_keys", "optuna_search",
     ["--cfg", "job", "hparams_search=optuna", "hydra/sweeper/sampler=tpe"], []),
]

# (name, tree, args): a run of the app (no --cfg): what it prints (stdout,
# and stderr as job_stderr records it) and the files it leaves in its run
# directory. The app logs "hello" (INFO) and "careful" (WARNING) through the
# logger "app" (made at import, as apps make theirs), raises
# RuntimeError(cfg.fail) where the config has `fail`, and prints its
# resolved config; tests/app/app_test.cc runs a C++ task doing the same through
# trialshim::app::Run. Log times are written as <asctime>.
RUN_CASES = [
    ("run_default", "basic", ["hydra.run.dir=run", "port=5432"]),
    ("run_overrides", "hydra_refs",
     ["hydra.run.dir=out/${hydra.job.name}", "db=pg", "+extra=1"]),
    ("run_hydra_in_file", "hydra_in_file", ["hydra.run.dir=run", "seed=3"]),
    ("run_dir_from_resolver", "basic",
     ["hydra.run.dir=out/${hydra:job.name}_${hydra:job.override_dirname}", "port=2"]),
    ("run_no_subdir", "basic",
     ["hydra.run.dir=run", "hydra.output_subdir=null", "port=1"]),
    ("run_job_logging_stdout", "basic",
     ["hydra.run.dir=run", "hydra/job_logging=stdout", "port=1"]),
    ("run_job_logging_none", "basic",
     ["hydra.run.dir=run", "hydra/job_logging=none", "port=1"]),
    ("help", "basic", ["--help"]),
    ("help_with_overrides", "hydra_refs", ["--help", "db=pg"]),
    ("help_resolved", "hydra_refs", ["--help", "--resolve"]),
    ("info_searchpath", "searchpath/conf", ["--info", "searchpath"]),
    ("info_defaults", "hydra_in_file", ["--info", "defaults"]),
    ("info_defaults_tree", "basic", ["--info", "defaults-tree", "db=pg"]),
    ("info_config", "basic", ["--info", "config", "port=1"]),
    ("info_defaults_packages", "searchpath/conf", ["--info", "defaults"]),
    ("info_all", "basic", ["--info", "all", "port=1"]),
    ("run_dir_from_task_keys", "task_refs", ["task_name=eval"]),
    ("run_verbose", "basic", ["hydra.run.dir=run", "hydra.verbose=true", "port=1"]),
    ("run_verbose_hydra_logger", "hydra_refs",
     ["hydra.run.dir=run", "hydra.verbose=[hydra]", "db=pg"]),
    ("run_verbose_app_logger", "basic",
     ["hydra.run.dir=run", "hydra.verbose=app", "port=1"]),
    ("run_override_dirname_interpolation", "override_interp",
     ["hydra.run.dir=run_${hydra:job.override_dirname}", "b=${a}"]),
    # -- dictConfig's levels and root handlers -------------------------------
    # A failed job: Hydra writes "Error executing job ..." to stderr, no log.
    ("run_fails", "basic", ["hydra.run.dir=run", "port=1", "+fail=boom"]),
    # disabled: a root without handlers (dictConfig removes Hydra's), and
    # disable_existing_loggers silences the app's logger.
    ("run_job_logging_disabled", "basic",
     ["hydra.run.dir=run", "hydra/job_logging=disabled", "port=1"]),
    ("run_job_logging_disabled_fails", "basic",
     ["hydra.run.dir=run", "hydra/job_logging=disabled", "port=1", "+fail=boom"]),
    ("run_job_logging_disabled_at_warning", "basic",
     ["hydra.run.dir=run", "hydra/job_logging=disabled",
      "hydra.job_logging.root.level=WARNING", "port=1"]),
    # dictConfig's default for disable_existing_loggers is true.
    ("run_disable_existing_loggers_default", "basic",
     ["hydra.run.dir=run", "~hydra.job_logging.disable_existing_loggers",
      "port=1"]),
    # A root without handlers, loggers enabled: Python's lastResort prints
    # WARNING and above bare on stderr; the file handler, declared, still
    # creates its file.
    ("run_root_without_handlers", "basic",
     ["hydra.run.dir=run", "~hydra.job_logging.root.handlers", "port=1"]),
    ("run_level_warn", "basic",
     ["hydra.run.dir=run", "hydra.job_logging.root.level=WARN", "port=1"]),
    ("run_level_fatal", "basic",
     ["hydra.run.dir=run", "hydra.job_logging.root.level=FATAL", "port=1"]),
    ("run_level_int", "basic",
     ["hydra.run.dir=run", "hydra.job_logging.root.level=25", "port=1"]),
    ("run_level_null", "basic",
     ["hydra.run.dir=run", "hydra.job_logging.root.level=null", "port=1"]),
    ("run_handler_level_warn", "basic",
     ["hydra.run.dir=run", "+hydra.job_logging.handlers.console.level=WARN",
      "port=1"]),
]

# Hydra as `pip install hydra-core` has it, without plugins: the anchors
# environment also holds hydra-optuna-sweeper, which --info would list. (No
# hydra_plugins package is how Hydra itself sees "none installed".)
NO_PLUGINS = 'sys.modules["hydra_plugins"] = None\n'

RUN_APP = """
import sys, logging
""" + NO_PLUGINS + """import hydra
from omegaconf import OmegaConf
log = logging.getLogger("app")
@hydra.main(version_base="1.3", config_path=sys.argv.pop(1), config_name="config")
def app(cfg):
    log.debug("details")
    log.info("hello")
    log.warning("careful")
    sys.stdout.flush()
    print(OmegaConf.to_yaml(cfg, resolve=True), end="")
app()
"""

ASCTIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}")

# RUN_APP raising RuntimeError(cfg.fail) where the config has `fail` (the
# run cases' app, and multirun.py's).
FLUSH = "    sys.stdout.flush()\n"
assert FLUSH in RUN_APP
FAILING_APP = RUN_APP.replace(FLUSH, "    if \"fail\" in cfg:\n"
                              "        raise RuntimeError(cfg.fail)\n" + FLUSH, 1)

# A failed job's stderr as Hydra writes it (JobReturn.return_value:
# "Error executing job with overrides: [...]", then run_and_report's
# traceback and HYDRA_FULL_ERROR advice), recorded with the traceback, which
# names where the venv is, as its exception's message, which a C++ task's
# what() stands for, and without the advice.
JOB_TRACEBACK = re.compile(
    r"^Traceback \(most recent call last\):\n(?:[ \t].*\n)*[\w.]+: ", re.M)
FULL_ERROR = ("\nSet the environment variable HYDRA_FULL_ERROR=1 for a "
              "complete stack trace.\n")


def job_stderr(stderr):
    return JOB_TRACEBACK.sub("", stderr.replace(FULL_ERROR, ""))

APP_WITH_PLUGINS = """
import sys
import hydra
@hydra.main(version_base="1.3", config_path=sys.argv.pop(1), config_name="config")
def app(cfg):
    pass
app()
"""

APP = APP_WITH_PLUGINS.replace("import hydra", NO_PLUGINS + "import hydra", 1)


def run(tree, args, cwd):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(tree))
    env.pop("HYDRA_FULL_ERROR", None)
    app = os.path.join(cwd, "app.py")
    p = subprocess.run(
        [sys.executable, app, tree] + args,
        cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    return p


def write(path, entries):
    with open(path, "w") as f:
        json.dump(entries, f, indent=1, ensure_ascii=False)
        f.write("\n")


def cfg_cases():
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.path.realpath(tmp)
        for app, cases in ((APP, CASES), (APP_WITH_PLUGINS, PLUGIN_CASES)):
            with open(os.path.join(cwd, "app.py"), "w") as f:
                f.write(app)
            out += cfg_cases_of(cases, cwd)
    return out


def cfg_cases_of(cases, cwd):
    out = []
    for name, tree, args, says in cases:
        tree_dir = os.path.join(TREES, tree)
        p = run(tree_dir, [a.replace("<tree>", tree_dir) for a in args], cwd)
        norm = lambda s: s.replace(tree_dir, "<tree>").replace(cwd, "<cwd>")
        case = {"name": name, "tree": tree, "args": args,
                "exit_code": p.returncode, "stdout": norm(p.stdout)}
        if p.returncode == 0 and says:
            case["says"] = says  # trialshim's warning
        if p.returncode != 0:
            message = norm(p.stderr).replace(
                "\nSet the environment variable HYDRA_FULL_ERROR=1 for a "
                "complete stack trace.\n", "").strip()
            if message.startswith("Traceback"):
                # An error Hydra does not catch: its last line says it.
                message = message.splitlines()[-1]
            case["hydra_message"] = message
            case["says"] = says
        out.append(case)
        print(f"{name}: exit {p.returncode}", file=sys.stderr)
    return out


def run_cases():
    runs = []
    for name, tree, args in RUN_CASES:
        with tempfile.TemporaryDirectory() as tmp:
            cwd = os.path.realpath(tmp)
            with open(os.path.join(cwd, "app.py"), "w") as f:
                f.write(FAILING_APP)
            tree_dir = os.path.join(TREES, tree)
            p = run(tree_dir, args, cwd)
            norm = lambda s: ASCTIME.sub("<asctime>", s.replace(
                tree_dir, "<tree>").replace(cwd, "<cwd>"))
            files = {}
            for dirpath, dirs, names in os.walk(cwd):
                dirs.sort()  # the same order on every file system
                for n in sorted(names):
                    path = os.path.join(dirpath, n)
                    rel = os.path.relpath(path, cwd)
                    if rel == "app.py" or "__pycache__" in rel:
                        continue
                    files[rel] = norm(open(path).read())
            runs.append({"name": name, "tree": tree, "args": args,
                         "exit_code": p.returncode, "stdout": norm(p.stdout),
                         "stderr": job_stderr(norm(p.stderr)), "files": files})
            print(f"{name}: exit {p.returncode}", file=sys.stderr)
    return runs


def main():
    global TREES
    args = sys.argv[1:]
    out = HERE
    if args[:1] == ["--out"]:
        out, args = args[1], args[2:]
    unknown = set(args) - {"cases", "runs"}
    if unknown:
        sys.exit(f"usage: generate.py [--out DIR] [cases] [runs] (not {sorted(unknown)})")
    with tempfile.TemporaryDirectory() as tmp:
        # --info pads its tables to the longest path: the trees go where
        # their path has the same length wherever this runs.
        TREES = os.path.join(tmp, "t" * (TREES_PATH_LENGTH - len(tmp) - 1))
        if len(TREES) != TREES_PATH_LENGTH:
            sys.exit(f"TMPDIR {tmp} is too long for a {TREES_PATH_LENGTH}-character path")
        shutil.copytree(os.path.join(HERE, "trees"), TREES)
        if not args or "cases" in args:
            write(os.path.join(out, "cases.json"), cfg_cases())
        if not args or "runs" in args:
            write(os.path.join(out, "runs.json"), run_cases())


if __name__ == "__main__":
    main()
