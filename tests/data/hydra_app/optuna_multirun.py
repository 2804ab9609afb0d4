#!/usr/bin/python3
"""Runs real Hydra 1.3.2 multiruns with hydra-optuna-sweeper 1.2.0 (optuna
2.10.1); writes optuna_multirun.json. tests/app/multirun_test.cc runs
app_task, a trialshim::app::Run task, on the same command lines: a
trialshim app runs the plugin's study with trialshim's search engine.

Run it with the anchors' Python (`make anchors`):

    build/anchors/bin/python tests/data/hydra_app/optuna_multirun.py [--out DIR]

writes optuna_multirun.json here, or into DIR (the Anchors test requires a
fresh recording to equal the committed one byte for byte).

The app is multirun.py's (generate.py's run app: logs "details", "hello"
and "careful", raises RuntimeError(cfg.fail), prints its resolved config),
with the Optuna plugin importable and returning cfg.objective resolved
(a number, text float() reads, or a list for several directions). It seeds
Python's random before Hydra starts, since Optuna's GridSampler draws its
next grid point from it, so that a recording is the same every time. As in
multirun.py: the exit status, stdout and every file left, paths as <cwd> and
<tree>, log times as <asctime>; also the study name as no-name-<uuid>, and
without the lines "setup plugin alembic..." that importing Optuna's
storages logs under Hydra's logging (an accident of that import, not the
plugin's). Where the plugin fails, hydra_message is the exception it ends
with (stderr's last line) and `says` what trialshim's message must mention.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

from generate import ASCTIME, HERE, NO_PLUGINS, RUN_APP

SWEEP = "hydra.sweep.dir=sw"

# (name, tree, args, says)
CASES = [
    # -- the GridSampler: the same trials as the plugin's, in another order
    ("grid", "optuna_grid", ["-m", SWEEP, "y=choice(5,7)", "name=b"], []),
    ("grid_over_a_group_maximized", "optuna_grid",
     ["-m", SWEEP, "db=mysql,pg", "hydra.sweeper.direction=maximize"], []),
    ("grid_lowered_to_the_grid", "optuna_grid",
     ["-m", SWEEP, "hydra.sweeper.n_jobs=2"], []),
    ("grid_two_directions", "optuna_front", ["-m", SWEEP], []),
    # -- other samplers: the same shape, other values ---------------------
    ("tpe", "optuna_tpe", ["-m", SWEEP], []),
    ("random", "optuna_tpe", ["-m", SWEEP, "hydra/sweeper/sampler=random",
                              "hydra.sweeper.sampler.seed=7"], []),
    # -- what ends the study ----------------------------------------------
    ("return_value_not_a_number", "optuna_grid",
     ["-m", SWEEP, "objective=null"],
     ["Return value must be float-castable. Got 'None'."]),
    ("job_failed", "optuna_grid", ["-m", SWEEP, "+fail=boom"], ["+fail=boom"]),
    ("wrong_number_of_values", "optuna_front",
     ["-m", SWEEP, "hydra.sweeper.direction=[minimize]",
      "hydra.sweeper.n_jobs=4"],
     ["Return value must be float-castable."]),
]

FLUSH = "    sys.stdout.flush()\n"
PRINT = '    print(OmegaConf.to_yaml(cfg, resolve=True), end="")\n'
assert NO_PLUGINS in RUN_APP and FLUSH in RUN_APP and PRINT in RUN_APP
APP = (RUN_APP
       .replace(NO_PLUGINS, "import random\nrandom.seed(0)\n")
       .replace(FLUSH, "    if \"fail\" in cfg:\n"
                "        raise RuntimeError(cfg.fail)\n" + FLUSH, 1)
       .replace(PRINT, PRINT + "    return OmegaConf.to_container("
                "cfg, resolve=True).get(\"objective\")\n", 1))

STUDY = re.compile(r"no-name-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}"
                   r"-[0-9a-f]{12}")
ALEMBIC = re.compile(r"^.*\]\[HYDRA\] setup plugin alembic\..*\n", re.M)


def main():
    out_dir = HERE
    if sys.argv[1:2] == ["--out"] and len(sys.argv) == 3:
        out_dir = sys.argv[2]
    elif len(sys.argv) > 1:
        sys.exit("usage: optuna_multirun.py [--out DIR]")
    import hydra
    import optuna
    from importlib.metadata import version
    if (hydra.__version__, optuna.__version__,
            version("hydra-optuna-sweeper")) != ("1.3.2", "2.10.1", "1.2.0"):
        sys.exit("needs hydra-core 1.3.2, optuna 2.10.1 and "
                 "hydra-optuna-sweeper 1.2.0 (tests/anchors/requirements.txt)")
    out = []
    for name, tree, args, says in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            cwd = os.path.realpath(tmp)
            with open(os.path.join(cwd, "app.py"), "w") as f:
                f.write(APP)
            tree_dir = os.path.join(HERE, "trees", tree)
            env = dict(os.environ)
            env.pop("HYDRA_FULL_ERROR", None)
            p = subprocess.run(
                [sys.executable, os.path.join(cwd, "app.py"), tree_dir] + args,
                cwd=cwd, env=env, capture_output=True, text=True, timeout=300)

            def norm(s):
                s = s.replace(tree_dir, "<tree>").replace(cwd, "<cwd>")
                s = STUDY.sub("no-name-<uuid>", ASCTIME.sub("<asctime>", s))
                return ALEMBIC.sub("", s)

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
                # The exception, without the traceback (which names where
                # the venv is).
                case["hydra_message"] = norm(p.stderr).replace(
                    "Set the environment variable HYDRA_FULL_ERROR=1 for a "
                    "complete stack trace.", "").strip().splitlines()[-1]
                case["says"] = says
            out.append(case)
            print(f"{name}: exit {p.returncode}", file=sys.stderr)
    with open(os.path.join(out_dir, "optuna_multirun.json"), "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
