#!/usr/bin/python3
"""Search quality of `trialshim sweep`: median regret after 20 and 50 trials
on Branin, Hartmann-6 and a mixed problem (bench/search/problems.py), for
the default algorithm (ALGORITHM_UNSPECIFIED: Bayesian optimization) and
RANDOM_SEARCH, both run as black-box trials through `trialshim sweep`
(the default also with --parallel 4, to see what batches cost)
(bench/search/*.yaml, the trial bench/search/trial.py), side by side with
Optuna's TPE (Debian's python3-optuna, run in-process with the same seeds
and its defaults, n_startup_trials=10). Then the time of one Bayesian
suggestion at 100 observations (build/bin/search_suggest_bench).

    bench/search_bench.py [--build build] [--seeds 10] [--jobs 2]

Regret is the best value found so far minus the known minimum. Prints a
Markdown table for bench/README.md."""
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "search"))
from problems import PROBLEMS  # noqa: E402

BUDGETS = (20, 50)


def regrets(values, minimum):
    """Best-so-far regret after each budget (values in trial order)."""
    out = []
    for b in BUDGETS:
        seen = [v for v in values[:b] if v is not None]
        out.append(min(seen) - minimum if seen else float("inf"))
    return out


def run_sweep(trialshim, problem, algorithm, seed, work):
    """One `trialshim sweep` of max(BUDGETS) trials; regrets and seconds."""
    out = os.path.join(work, "%s-%s-%d" % (problem, algorithm, seed))
    cmd = [trialshim, "sweep", os.path.join(work, problem + ".yaml"),
           "--out", out, "--seed", str(seed), "--max-trials",
           str(max(BUDGETS))]
    if algorithm == "random":
        cmd += ["--algorithm", "random"]
    if algorithm == "bayesian4":
        cmd += ["--parallel", "4"]
    start = time.monotonic()
    with open(out + ".log", "w") as log:
        subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=True)
    seconds = time.monotonic() - start
    with open(os.path.join(out, "trials.json")) as f:
        record = json.load(f)
    trials = sorted(record["trials"], key=lambda t: t["id"])
    values = [t["metric"] if t["state"] == "SUCCEEDED" else None
              for t in trials]
    return regrets(values, PROBLEMS[problem]["min"]), seconds


def run_tpe(problem, seed):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    spec = PROBLEMS[problem]

    def objective(trial):
        values = {}
        for key, p in spec["params"].items():
            if p[0] == "float":
                values[key] = trial.suggest_float(key, p[1], p[2], log=p[3])
            elif p[0] == "int":
                values[key] = trial.suggest_int(key, p[1], p[2])
            else:
                values[key] = trial.suggest_categorical(key, p[1])
        return spec["f"](values)

    study = optuna.create_study(
        sampler=optuna.samplers.TPESampler(seed=seed))
    start = time.monotonic()
    study.optimize(objective, n_trials=max(BUDGETS))
    seconds = time.monotonic() - start
    return regrets([t.value for t in study.trials], spec["min"]), seconds


def fmt(x):
    return "%.3g" % x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--problems", default=",".join(PROBLEMS))
    args = ap.parse_args()
    trialshim = os.path.join(args.build, "bin", "trialshim")
    problems = args.problems.split(",")
    seeds = range(1, args.seeds + 1)
    results = {}  # (problem, algorithm) -> list of [r20, r50]
    seconds = {}
    with tempfile.TemporaryDirectory(prefix="search_bench.") as work:
        for p in problems:
            with open(os.path.join(HERE, "search", p + ".yaml")) as f:
                text = f.read().replace("@BENCH@", os.path.join(HERE, "search"))
            with open(os.path.join(work, p + ".yaml"), "w") as f:
                f.write(text)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = {
                pool.submit(run_sweep, trialshim, p, a, s, work): (p, a)
                for p in problems for a in ("bayesian", "bayesian4", "random")
                for s in seeds}
            for fut, key in futures.items():
                r, sec = fut.result()
                results.setdefault(key, []).append(r)
                seconds.setdefault(key, []).append(sec)
    # After the sweeps, so that they do not share the cores with it.
    for p in problems:
        for s in seeds:
            r, sec = run_tpe(p, s)
            results.setdefault((p, "tpe"), []).append(r)
            seconds.setdefault((p, "tpe"), []).append(sec)

    algorithms = [("bayesian", "trialshim default (Bayesian)"),
                  ("bayesian4", "the same, 4 at a time"),
                  ("tpe", "Optuna TPE"), ("random", "trialshim random")]
    print("Median regret over %d seeds (lower is better):\n" % args.seeds)
    print("| problem | trials | " +
          " | ".join(name for _, name in algorithms) + " |")
    print("|---|---:|" + "---:|" * len(algorithms))
    goal_met = True
    for p in problems:
        for i, b in enumerate(BUDGETS):
            med = {a: statistics.median(r[i] for r in results[(p, a)])
                   for a, _ in algorithms}
            goal_met &= med["bayesian"] <= med["tpe"]
            print("| %s | %d | %s |" % (p, b, " | ".join(
                fmt(med[a]) for a, _ in algorithms)))
    print("\nMedian seconds per run of %d trials (sweeps: whole processes, "
          "%d at a time; TPE: in-process):\n" % (max(BUDGETS), args.jobs))
    for p in problems:
        print("- %s: %s" % (p, ", ".join(
            "%s %.1f s" % (a, statistics.median(seconds[(p, a)]))
            for a, _ in algorithms)))
    bench = os.path.join(args.build, "bin", "search_suggest_bench")
    print("\n" + subprocess.run([bench, "time", "100", "5"], check=True,
                                capture_output=True, text=True).stdout.strip())
    print("\ngoal (Bayesian <= TPE everywhere): %s" %
          ("met" if goal_met else "NOT met"))


if __name__ == "__main__":
    main()
