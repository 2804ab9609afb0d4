#!/usr/bin/python3
"""Runs real Hydra 1.3.2 multiruns (-m, or hydra.mode: MULTIRUN from a
config); writes multirun.json. tests/app/multirun_test.cc runs app_task, a
trialshim::app::Run task, on the same command lines and compares.

Run it with a Python that has hydra-core 1.3.2 and omegaconf 2.3.0 (the
anchors environment, `make anchors`, or any venv with them):

    build/anchors/bin/python tests/data/hydra_app/multirun.py [--out DIR]

writes multirun.json here, or into DIR (for a test that compares a fresh
recording with the committed one).

Each case is a command line of an app file app.py (so hydra.job.name is
"app") decorated with @hydra.main(version_base="1.3"), run against
trees/<tree>/ with config_name "config", as generate.py's RUN_CASES: the app
logs "hello" and "careful", raises RuntimeError(cfg.fail) when the config
has `fail`, and prints its resolved config. Recorded: the exit status,
stdout, and every file left in the working directory. Paths are written as
<cwd> and <tree>, log times as <asctime>, and the directory a default
hydra.sweep.dir names by the time as multirun/<date>/<time>. Where Hydra
fails, `says` lists what trialshim's message must mention instead of
Hydra's error (hydra_message: stderr without Python's tracebacks, which
name where the venv is), and the stdout and files are those of the jobs
that ran.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

from generate import ASCTIME, FAILING_APP, HERE

SWEEP = "hydra.sweep.dir=sw"

# (name, tree, args, says)
CASES = [
    # -- the basic sweeper: comma lists, range, choice, glob, in order -----
    ("cartesian", "basic", ["-m", SWEEP, "port=1,2", "db=mysql,pg"], []),
    ("long_flag", "basic", ["--multirun", SWEEP, "port=1,2"], []),
    ("range_and_choice", "basic",
     ["-m", SWEEP, "port=range(1,4)", "name=choice(a,b)"], []),
    ("range_of_floats", "basic",
     ["-m", SWEEP, "port=1", "+x=range(0,1,0.25)"], []),
    ("glob", "basic", ["-m", SWEEP, "port=1", "db=glob(*)"], []),
    ("glob_exclude", "basic",
     ["-m", SWEEP, "port=1", "db=glob(*,exclude=my*)"], []),
    ("values_as_hydra_writes_them", "basic",
     ["-m", SWEEP, "port=1_000", "~name", "+nm='x y'", "+g=a\\,b",
      "+f=1.50,true,[1,2],{a:b},null"], []),
    ("same_key_twice", "basic",
     ["-m", SWEEP, "port=1,2", "db=pg", "port=3"], []),
    ("no_sweep", "basic", ["-m", SWEEP, "port=5"], []),
    ("group_missing_in_the_defaults", "missing_group",
     ["-m", SWEEP, "db=mysql,pg"], []),
    # -- Hydra's multirun layout and settings ------------------------------
    ("default_sweep_dir", "basic", ["-m", "port=1,2"], []),
    ("subdir_from_overrides", "basic",
     ["-m", SWEEP, "hydra.sweep.subdir=${hydra.job.override_dirname}",
      "port=1,2"], []),
    ("max_batch_size", "basic",
     ["-m", SWEEP, "hydra.sweeper.max_batch_size=2", "port=1,2,3"], []),
    ("output_subdir_null", "basic",
     ["-m", SWEEP, "hydra.output_subdir=null", "port=1,2"], []),
    ("chdir", "basic",
     ["-m", SWEEP, "hydra.job.chdir=true", "port=1,2"], []),
    ("sweeper_params_from_the_config", "sweeper_params", ["-m", SWEEP], []),
    ("sweeper_params_and_the_command_line", "sweeper_params",
     ["-m", SWEEP, "port=7", "name=x,y"], []),
    # -- hydra.mode: MULTIRUN from a config starts a multirun (Hydra 1.2+) -
    ("mode_from_the_config", "mode_multirun", [], []),
    ("mode_from_the_config_with_m", "mode_multirun", ["-m"], []),
    ("mode_from_a_search_config", "search", ["+search=grid"], []),
    ("mode_multirun_override", "basic",
     [SWEEP, "hydra.mode=MULTIRUN", "port=1,2"], []),
    # RunMode's other spellings (EnumNode): its value, "RunMode.<name>".
    ("mode_value_override", "basic", [SWEEP, "hydra.mode=2", "port=1,2"], []),
    ("mode_enum_name_override", "basic",
     [SWEEP, "hydra.mode=RunMode.MULTIRUN", "port=1,2"], []),
    ("mode_run_value_with_m", "basic",
     ["-m", SWEEP, "hydra.mode=1", "port=1,2"], []),
    # -- what Hydra refuses ------------------------------------------------
    ("interval_refused", "basic",
     ["-m", SWEEP, "port=interval(1,2)"], ["does not support sweep type",
                                           "INTERVAL_SWEEP"]),
    ("hydra_sweep_refused", "basic",
     ["-m", SWEEP, "hydra.job.chdir=true,false", "port=1"],
     ["Sweeping over Hydra's configuration is not supported",
      "hydra.job.chdir=true,false"]),
    ("batch_composed_before_it_runs", "basic",
     ["-m", SWEEP, "port=1", "db=mysql,nope"], ["db/nope"]),
    ("failed_job_after_its_batch", "basic",
     ["-m", SWEEP, "port=1,2", "+fail=x"], ["+fail=x"]),
    ("sweep_without_multirun", "basic",
     [SWEEP, "port=1,2"], ["port=1,2", "--multirun"]),
]

# generate.py's run app, which raises RuntimeError(cfg.fail).
APP = FAILING_APP

DATED_DIR = re.compile(r"multirun/\d{4}-\d\d-\d\d/\d\d-\d\d-\d\d")


TRACEBACK = re.compile(r"^Traceback \(most recent call last\):\n(?:[ \t].*\n)*",
                       re.M)


def hydra_message(stderr):
    """Hydra's error without Python's tracebacks (which name where the venv
    is) and the HYDRA_FULL_ERROR advice."""
    stderr = stderr.replace("\nSet the environment variable HYDRA_FULL_ERROR=1 "
                            "for a complete stack trace.\n", "\n")
    return TRACEBACK.sub("", stderr).strip()


# What optuna_multirun.py's multiruns print besides: Optuna's random study
# name, and the lines importing Optuna's storages logs under Hydra's logging.
STUDY = re.compile(r"no-name-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}"
                   r"-[0-9a-f]{12}")
ALEMBIC = re.compile(r"^.*\]\[HYDRA\] setup plugin alembic\..*\n", re.M)


def out_dir(script):
    """This directory, or the one --out names."""
    if sys.argv[1:2] == ["--out"] and len(sys.argv) == 3:
        return sys.argv[2]
    if len(sys.argv) > 1:
        sys.exit(f"usage: {script} [--out DIR]")
    return HERE


def record(cases, app, out_file, timeout):
    """Runs each case's command line as app.py in a directory of its own;
    writes the cases, as the header says, to out_file."""
    out = []
    for name, tree, args, says in cases:
        with tempfile.TemporaryDirectory() as tmp:
            cwd = os.path.realpath(tmp)
            with open(os.path.join(cwd, "app.py"), "w") as f:
                f.write(app)
            tree_dir = os.path.join(HERE, "trees", tree)
            env = dict(os.environ)
            env.pop("HYDRA_FULL_ERROR", None)
            p = subprocess.run(
                [sys.executable, os.path.join(cwd, "app.py"), tree_dir] + args,
                cwd=cwd, env=env, capture_output=True, text=True,
                timeout=timeout)

            def norm(s):
                s = s.replace(tree_dir, "<tree>").replace(cwd, "<cwd>")
                s = DATED_DIR.sub("multirun/<date>/<time>",
                                  ASCTIME.sub("<asctime>", s))
                return ALEMBIC.sub("", STUDY.sub("no-name-<uuid>", s))

            files = {}
            for dirpath, dirs, names in os.walk(cwd):
                dirs.sort()  # the same order on every file system
                for n in sorted(names):
                    path = os.path.join(dirpath, n)
                    rel = os.path.relpath(path, cwd)
                    if rel == "app.py" or "__pycache__" in rel:
                        continue
                    files[norm(rel)] = norm(open(path).read())
            case = {"name": name, "tree": tree, "args": args,
                    "exit_code": p.returncode, "stdout": norm(p.stdout),
                    "files": files}
            if p.returncode != 0:
                case["hydra_message"] = hydra_message(norm(p.stderr))
                case["says"] = says
            out.append(case)
            print(f"{name}: exit {p.returncode}", file=sys.stderr)
    with open(out_file, "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


def main():
    out = out_dir("multirun.py")
    import hydra
    if hydra.__version__ != "1.3.2":
        sys.exit(f"needs hydra-core 1.3.2, this Python has {hydra.__version__}")
    record(CASES, APP, os.path.join(out, "multirun.json"), 120)


if __name__ == "__main__":
    main()
