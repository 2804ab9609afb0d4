#!/usr/bin/python3
"""A scripted trainer for sweep tests: behaves as --mode says, reports like
cloudml-hypertune, and records what it received in received.json beside its
metric file.

Modes: ok (report score = x + y/10 once), multi (report 1, 3, 2), fail (exit
3; with --x=2 after an error block as OmegaConf prints one), hang (sleep
until SIGTERM, then exit 143), stubborn (ignore SIGTERM), none (exit 0
without a report), tree (a child with a grandchild and a worker in a
session of its own, all sleeping 300 s, pids in child.pid, grandchild.pid
and orphan.pid, then hang), nan (report nan), wrongtag (report under
another tag), int (report int(--n) as argparse's type=int reads it), orphan
(start a worker that sleeps 60 s in a session of its own, as a stray worker
process would be, writing its pid to orphan.pid, then hang), curve (report
q * (1 - 0.1/(step + 1)) for steps 1..--steps, --sleep seconds apart, with
q = --curve; SIGTERM handled as in hang; flat enough that a good trial that
started late is never below the others' running averages, whatever the load), pair
(two metrics, as a multi-objective trial reports them: score = x + y/10 and
cost = 1 - x + y/10 at steps 1 and 2, cost 5 at step 3 after the last
score; --drop=cost leaves cost out). Every mode
writes its pid to "pid" first (tests check that no trial outlives a sweep).

Hostile metric files (the sweep must read them in bounded time and memory):
fifo (make the file a FIFO and exit 0), zero (make it a
symbolic link to /dev/zero, then hang as in hang), zeroexit (the same, then
exit 0), hugeline (a 2 GiB sparse file without a newline), hugefile (4 GiB
of holes, then a newline and one report)."""
import json
import os
import signal
import sys
import time

args = {}
for a in sys.argv[1:]:
    if a.startswith("--") and "=" in a:
        k, v = a[2:].split("=", 1)
        args[k] = v
mode = (os.environ.get("TRAINER_FORCE_MODE") or
        args.get("mode", os.environ.get("TRAINER_MODE", "ok")))
tag = args.get("tag", "score")
path = os.environ.get("CLOUD_ML_HP_METRIC_FILE", "/tmp/hypertune/output.metrics")
trial = os.environ.get("CLOUD_ML_TRIAL_ID", "0")
out = os.path.dirname(path)

try:
    with open(os.path.join(out, "pid"), "w") as f:
        f.write(str(os.getpid()))
except OSError:
    pass  # a full disk in a test; the sweep's own record is what is tested
with open(os.path.join(out, "received.json"), "w") as f:
    json.dump({"argv": sys.argv[1:], "cwd": os.getcwd(),
               "env": {k: v for k, v in os.environ.items()
                       if k.startswith(("CLOUD_ML_", "AIP_", "CLUSTER_SPEC",
                                        "TRAINER_", "JOB_ENV"))}}, f)
if "RUNS_LOG" in os.environ:
    with open(os.environ["RUNS_LOG"], "a") as f:
        f.write(trial + "\n")

lines = []


def report(value, step=0, t=tag):
    lines.append(json.dumps({"checkpoint_path": "", "global_step": str(step),
                             "timestamp": time.time(), "trial": trial,
                             t: str(float(value))}, sort_keys=True))
    with open(path, "w") as f:
        f.write("".join(l + "\n" for l in lines))


def on_term(signum, frame):
    with open(os.path.join(out, "sigterm"), "w") as f:
        f.write("got SIGTERM\n")
    sys.exit(143)


def hang():
    """Says it started, then runs until SIGTERM (exit 143)."""
    signal.signal(signal.SIGTERM, on_term)
    open(os.path.join(out, "started"), "w").close()
    while True:
        signal.pause()  # until a signal ends it


print("trainer: mode", mode, "args", sys.argv[1:], flush=True)
score = float(args.get("x", 0)) + float(args.get("y", 0)) / 10
if mode == "ok":
    report(score, 10)
elif mode == "multi":
    for i, v in enumerate([1, 3, 2]):
        report(v, i + 1)
elif mode == "fail":
    print("trainer: boom, giving up", file=sys.stderr, flush=True)
    if args.get("x") == "2":  # an error as Hydra and OmegaConf end one
        print("Value '32.0' of type 'float' could not be converted to Integer\n"
              "    full_key: data.batch_size\n"
              "    object_type=DataConfig\n"
              "full_key: data\n\n"
              "Set the environment variable HYDRA_FULL_ERROR=1 for a complete "
              "stack trace.", file=sys.stderr, flush=True)
    sys.exit(3)
elif mode == "hang":
    hang()
elif mode == "orphan":
    import subprocess
    # close_fds=False: the worker inherits what the trial inherited, as a
    # fork()ed data-loader worker does.
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                              start_new_session=True, close_fds=False)
    with open(os.path.join(out, "orphan.pid"), "w") as f:
        f.write(str(worker.pid))
    open(os.path.join(out, "started"), "w").close()
    while True:
        signal.pause()  # until a signal ends it
elif mode == "tree":
    import subprocess
    # A wrapper's work in a child with a grandchild of its own, and a
    # worker in a session of its own; all inherit the trial's descriptors
    # (its directory's lock), as fork()ed workers do.
    # The shell says grandchild.pid is written with a line on a pipe (an
    # event to wait on, not a file to poll for).
    ready_r, ready_w = os.pipe()
    os.set_inheritable(ready_w, True)
    child = subprocess.Popen(
        ["/bin/sh", "-c",
         f"sleep 300 & echo $! > grandchild.pid; echo > /dev/fd/{ready_w}; wait"],
        cwd=out, close_fds=False)
    os.close(ready_w)
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                              start_new_session=True, close_fds=False)
    for name, pid in (("child.pid", child.pid), ("orphan.pid", worker.pid)):
        with open(os.path.join(out, name), "w") as f:
            f.write(str(pid))
    os.read(ready_r, 1)
    os.close(ready_r)
    hang()
elif mode == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    open(os.path.join(out, "started"), "w").close()
    while True:
        signal.pause()  # until a signal ends it
elif mode == "curve":
    signal.signal(signal.SIGTERM, on_term)
    q = float(args["curve"])
    for step in range(1, int(args.get("steps", 12)) + 1):
        report(q * (1 - 0.1 / (step + 1)), step)
        time.sleep(float(args.get("sleep", 0.04)))
elif mode == "fifo":
    os.mkfifo(path)
elif mode in ("zero", "zeroexit"):
    os.symlink("/dev/zero", path)
    if mode == "zero":
        hang()
elif mode == "hugeline":
    with open(path, "w") as f:
        f.write('{"score": "')
        f.truncate(2 << 30)
elif mode == "hugefile":
    line = json.dumps({"checkpoint_path": "", "global_step": "10",
                       "timestamp": time.time(), "trial": trial,
                       tag: str(score)}, sort_keys=True)
    with open(path, "w") as f:
        f.seek(4 << 30)
        f.write("\n" + line + "\n")
elif mode == "pair":
    for step in (1, 2):
        report(score + (2 - step), step)
        if args.get("drop") != "cost":
            report(1 - float(args.get("x", 0)) + float(args.get("y", 0)) / 10
                   + (2 - step), step, "cost")
    if args.get("drop") != "cost":
        report(5, 3, "cost")
elif mode == "nan":
    report(float("nan"))
elif mode == "wrongtag":
    report(score, 0, "val_acc")
elif mode == "int":
    report(int(args["n"]))
sys.exit(0)
