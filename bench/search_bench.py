#!/usr/bin/python3
"""Search quality of `trialshim sweep`: median regret after 20 and 50 trials
on the problems of bench/search/problems.py (Branin, Hartmann-6, a mixed
space; Levy, Rastrigin, Ackley and Styblinski-Tang in 2, 4 and 6
dimensions; the held-out bowl3), for the default algorithm
(ALGORITHM_UNSPECIFIED: Bayesian optimization) and RANDOM_SEARCH, side by
side with Optuna's TPE (Debian's python3-optuna, run in-process with the
same seeds and its defaults, n_startup_trials=10). Then the time of one
Bayesian suggestion at 100 observations (build/bin/search_suggest_bench).

    bench/search_bench.py [--build build] [--seeds 15] [--jobs 2]
                          [--problems a,b] [--via sweep|ask] [--parallel4]
                          [--json FILE] [--tpe-cache FILE]

--via sweep (the default) runs each search as black-box trials through
`trialshim sweep` (a job spec written from the problem, each trial
bench/search/trial.py); --via ask runs the same search in
`search_suggest_bench ask`, which asks this script for each value instead
of starting a process per trial: the same trials (one at a time), much
faster, for tuning. --parallel4 adds the default with --parallel 4 (sweep
only: batches of pending trials). Regret is the best value found so far
minus the known minimum. Prints a Markdown table for bench/README.md."""
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
from problems import PROBLEMS, parse_args  # noqa: E402

BUDGETS = (20, 50)


def regrets(values, minimum):
    """Best-so-far regret after each budget (values in trial order)."""
    out = []
    for b in BUDGETS:
        seen = [v for v in values[:b] if v is not None]
        out.append(min(seen) - minimum if seen else float("inf"))
    return out


def job_spec(name):
    """The job spec of a problem, as YAML (JSON is YAML)."""
    params = []
    for key, p in PROBLEMS[name]["params"].items():
        if p[0] == "categorical":
            params.append({"parameterId": key,
                           "categoricalValueSpec": {"values": list(p[1])}})
            continue
        kind = "doubleValueSpec" if p[0] == "float" else "integerValueSpec"
        params.append({"parameterId": key,
                       kind: {"minValue": p[1], "maxValue": p[2]},
                       "scaleType": "UNIT_LOG_SCALE" if p[3]
                       else "UNIT_LINEAR_SCALE"})
    trial = [sys.executable, os.path.join(HERE, "search", "trial.py"), name]
    return json.dumps({
        "displayName": name, "maxTrialCount": max(BUDGETS),
        "parallelTrialCount": 1,
        "studySpec": {"metrics": [{"metricId": "value", "goal": "MINIMIZE"}],
                      "parameters": params},
        "trialJobSpec": {"workerPoolSpecs": [{
            "machineSpec": {"machineType": "n1-standard-4"},
            "replicaCount": 1,
            "containerSpec": {"imageUri": "example/bench:1",
                              "command": trial}}]}}, indent=1)


def run_sweep(build, problem, algorithm, seed, work):
    """One `trialshim sweep` of max(BUDGETS) trials; regrets and seconds."""
    out = os.path.join(work, "%s-%s-%d" % (problem, algorithm, seed))
    cmd = [os.path.join(build, "bin", "trialshim"), "sweep",
           os.path.join(work, problem + ".yaml"), "--out", out, "--seed",
           str(seed), "--max-trials", str(max(BUDGETS))]
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


def run_ask(build, problem, algorithm, seed, work):
    """The same search in `search_suggest_bench ask`; regrets and seconds."""
    spec = PROBLEMS[problem]
    cmd = [os.path.join(build, "bin", "search_suggest_bench"), "ask",
           os.path.join(work, problem + ".yaml"), str(seed),
           str(max(BUDGETS))] + (["random"] if algorithm == "random" else [])
    start = time.monotonic()
    values = []
    with subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) as proc:
        for line in proc.stdout:
            values.append(spec["f"](parse_args(spec, line.split())))
            proc.stdin.write(repr(float(values[-1])) + "\n")
            proc.stdin.flush()
    if proc.returncode != 0 or len(values) != max(BUDGETS):
        raise RuntimeError("%s failed (exit %d)" % (cmd, proc.returncode))
    return regrets(values, spec["min"]), time.monotonic() - start


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
    ap.add_argument("--seeds", type=int, default=15)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--problems", default=",".join(PROBLEMS))
    ap.add_argument("--via", choices=("sweep", "ask"), default="sweep")
    ap.add_argument("--parallel4", action="store_true")
    ap.add_argument("--json", help="also write every seed's regrets here")
    ap.add_argument("--tpe-cache", help="TPE's runs: read from and added to "
                    "this JSON file (TPE does not change between runs)")
    args = ap.parse_args()
    problems = args.problems.split(",")
    seeds = range(1, args.seeds + 1)
    ours = ["bayesian"] + (["bayesian4"] if args.parallel4 else [])
    run = run_sweep if args.via == "sweep" else run_ask
    results = {}  # (problem, algorithm) -> list of [r20, r50]
    seconds = {}
    with tempfile.TemporaryDirectory(prefix="search_bench.") as work:
        for p in problems:
            with open(os.path.join(work, p + ".yaml"), "w") as f:
                f.write(job_spec(p))
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = {
                pool.submit(run, args.build, p, a, s, work): (p, a)
                for p in problems for a in ours + ["random"] for s in seeds}
            for fut, key in futures.items():
                r, sec = fut.result()
                results.setdefault(key, []).append(r)
                seconds.setdefault(key, []).append(sec)
    # After the searches, so that they do not share the cores with it.
    cache = {}
    if args.tpe_cache and os.path.exists(args.tpe_cache):
        with open(args.tpe_cache) as f:
            cache = json.load(f)
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run_tpe, p, s): "%s/%d" % (p, s)
                   for p in problems for s in seeds
                   if "%s/%d" % (p, s) not in cache}
        for fut, key in futures.items():
            cache[key] = fut.result()
    for p in problems:
        for s in seeds:
            r, sec = cache["%s/%d" % (p, s)]
            results.setdefault((p, "tpe"), []).append(r)
            seconds.setdefault((p, "tpe"), []).append(sec)
    if args.tpe_cache:
        with open(args.tpe_cache, "w") as f:
            json.dump(cache, f)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"%s/%s" % k: v for k, v in results.items()}, f)

    names = {"bayesian": "trialshim default (Bayesian)",
             "bayesian4": "the same, 4 at a time", "tpe": "Optuna TPE",
             "random": "trialshim random"}
    algorithms = ours + ["tpe", "random"]
    print("Median regret over %d seeds (lower is better; via %s):\n" %
          (args.seeds, args.via))
    print("| problem | trials | " +
          " | ".join(names[a] for a in algorithms) + " |")
    print("|---|---:|" + "---:|" * len(algorithms))
    lost = []
    for p in problems:
        for i, b in enumerate(BUDGETS):
            med = {a: statistics.median(r[i] for r in results[(p, a)])
                   for a in algorithms}
            if med["bayesian"] > med["tpe"]:
                lost.append("%s/%d" % (p, b))
            label = p + (" (held out)" if PROBLEMS[p].get("held_out") else "")
            print("| %s | %d | %s |" % (label, b, " | ".join(
                fmt(med[a]) for a in algorithms)))
    print("\nMedian seconds per run of %d trials (%d at a time; TPE: "
          "in-process):\n" % (max(BUDGETS), args.jobs))
    for p in problems:
        print("- %s: %s" % (p, ", ".join(
            "%s %.1f s" % (a, statistics.median(seconds[(p, a)]))
            for a in algorithms)))
    bench = os.path.join(args.build, "bin", "search_suggest_bench")
    print("\n" + subprocess.run([bench, "time", "100", "5"], check=True,
                                capture_output=True, text=True).stdout.strip())
    print("\ngoal (Bayesian <= TPE everywhere): %s" %
          ("met" if not lost else "NOT met: " + ", ".join(lost)))


if __name__ == "__main__":
    main()
