#!/usr/bin/python3
"""Runs real Hydra 1.3.2 multiruns with hydra-optuna-sweeper 1.2.0 (optuna
2.10.1); writes optuna_multirun.json. tests/app/multirun_test.cc runs
app_task, a trialshim::app::Run task, on the same command lines: a
trialshim app runs the plugin's study with trialshim's search engine.

Run it with the anchors' Python (`make anchors`):

    build/anchors/bin/python tests/data/hydra_app/optuna_multirun.py [--out DIR]

writes optuna_multirun.json here, or into DIR (the Anchors test requires a
fresh recording to equal the committed one byte for byte).

It runs as multirun.py runs its cases (record()). The app is multirun.py's
(generate.py's run app: logs "details", "hello" and "careful", raises
RuntimeError(cfg.fail), prints its resolved config),
with the Optuna plugin importable and returning cfg.objective resolved
(a number, text float() reads, or a list for several directions). It seeds
Python's random before Hydra starts, since Optuna's GridSampler draws its
next grid point from it, so that a recording is the same every time. As in
multirun.py: the exit status, stdout and every file left, paths as <cwd> and
<tree>, log times as <asctime>; also the study name as no-name-<uuid>, and
without the lines "setup plugin alembic..." that importing Optuna's
storages logs under Hydra's logging (an accident of that import, not the
plugin's). Where the plugin fails, hydra_message is its error (stderr
without Python's tracebacks) and `says` what trialshim's message must
mention.
"""
import os
import sys

from generate import NO_PLUGINS, RUN_APP
from multirun import out_dir, record

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
    # -- issue 33.4: floats over an untyped int key (x: 1) pass, as in the
    # plugin's own example (x: range(-5.5, 5.5, step=0.5))
    ("grid_floats_over_an_int_key", "optuna_grid",
     ["-m", SWEEP, "x=range(1.5, 3, step=0.5)", "y=choice(5)",
      "objective=${x}"], []),
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

def main():
    out = out_dir("optuna_multirun.py")
    import hydra
    import optuna
    from importlib.metadata import version
    if (hydra.__version__, optuna.__version__,
            version("hydra-optuna-sweeper")) != ("1.3.2", "2.10.1", "1.2.0"):
        sys.exit("needs hydra-core 1.3.2, optuna 2.10.1 and "
                 "hydra-optuna-sweeper 1.2.0 (tests/anchors/requirements.txt)")
    record(CASES, APP, os.path.join(out, "optuna_multirun.json"), 300)


if __name__ == "__main__":
    main()
