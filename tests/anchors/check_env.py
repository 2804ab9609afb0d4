"""Checks that this interpreter is the anchors environment requirements.txt pins.

    build/anchors/bin/python tests/anchors/check_env.py [--quick] [REQUIREMENTS]

Every pinned distribution must be installed at its exact version, and torch
and numpy must be Debian's (/usr/lib/python3/dist-packages), never a copy
pip put into the venv. Without --quick it also imports what the tests
import (torch, hydra, hypertune, lightning.pytorch, the Optuna sweeper,
torch's SummaryWriter and TensorBoard's event reader) and
runs `pip check`, whose complaints about our packages may only be that
Debian's torch calls itself 1.13.0a0 (older than Lightning's torch>=1.13.0 to
pip).
Prints one line per problem and exits 1, or prints the versions and exits 0.
The tests run it with --quick (no imports, a few milliseconds) before using
the environment.
"""
import importlib
import importlib.metadata as metadata
import os
import re
import subprocess
import sys

DEBIAN = "/usr/lib/python3/dist-packages"


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path):
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                name, version = line.split("==")
                yield canonical(name), version


def main():
    args = [a for a in sys.argv[1:] if a != "--quick"]
    quick = "--quick" in sys.argv[1:]
    req = args[0] if args else os.path.join(os.path.dirname(__file__), "requirements.txt")
    wanted = dict(pins(req))
    problems = []
    for name, version in wanted.items():
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            problems.append(f"{name} {version} is not installed")
            continue
        if have != version:
            problems.append(f"{name} is {have}, {req} pins {version}")
    for name in ("torch", "numpy"):
        try:
            where = str(metadata.distribution(name).locate_file(""))
        except metadata.PackageNotFoundError:
            problems.append(f"{name} is missing (Debian: apt-get install python3-{name})")
            continue
        if not where.startswith(DEBIAN):
            problems.append(f"{name} comes from {where}, not Debian's {DEBIAN}")
    if not quick and not problems:
        # What the tests import: each must load on Debian's torch.
        for module in ("torch", "hydra", "hypertune", "lightning.pytorch",
                       "hydra_plugins.hydra_optuna_sweeper.optuna_sweeper",
                       "torch.utils.tensorboard",
                       "tensorboard.backend.event_processing.event_accumulator"):
            try:
                importlib.import_module(module)
            except Exception as e:  # the environment is unusable: say why
                problems.append(f"import {module}: {type(e).__name__}: {e}")
    if not quick and not problems:
        check = subprocess.run([sys.executable, "-m", "pip", "check"],
                               capture_output=True, text=True).stdout
        for line in check.splitlines():
            owner = canonical(line.split(" ", 1)[0])
            if owner in wanted and "torch 1.13.0a0" not in line:
                problems.append("pip check: " + line)
    for p in problems:
        print(f"anchors: {p}", file=sys.stderr)
    if problems:
        sys.exit(1)
    if not quick:
        shown = ["hydra-core", "omegaconf", "hydra-optuna-sweeper", "optuna",
                 "cloudml-hypertune", "lightning", "torchmetrics", "tensorboard",
                 "torch", "numpy"]
        print("anchors: " + ", ".join(f"{n} {metadata.version(n)}" for n in shown))


if __name__ == "__main__":
    main()
