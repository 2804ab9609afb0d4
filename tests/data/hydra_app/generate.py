#!/usr/bin/python3
"""Runs real Hydra 1.3.2 on the cases below and writes cases.json.

Each case is a Hydra app command line (`--cfg job|hydra|all`, `--resolve`,
overrides) run against trees/<tree>/ with config_name "config", as an app file
named app.py (so hydra.job.name is "app") decorated with
@hydra.main(version_base="1.3"). cases.json records what Hydra printed and its
exit status; tests/config/hydra_app_test.cc runs `trialshim compose` on the same
command lines and compares.

Hydra is not installable on the project's machines; build it from its
repository (see DEVELOPERS.md, "Real Hydra as the oracle") and run:

    HYDRA_SRC=/path/to/hydra-1.3.2 /usr/bin/python3 tests/data/hydra_app/generate.py

Paths are written as <cwd> (the directory the app ran in) and <tree> (the
config directory), so the test can put its own back.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# (name, tree, args, says): `says` lists what trialshim's error must mention
# where Hydra refuses (Hydra's wording is guidance, not a spec).
CASES = [
    # -- issue 14.1: --resolve keeps '???' ---------------------------------
    ("resolve_keeps_missing", "basic", ["--cfg", "job", "--resolve"], []),
]

APP = """
import sys, hydra
@hydra.main(version_base="1.3", config_path=sys.argv.pop(1), config_name="config")
def app(cfg):
    pass
app()
"""


def run(tree, args, cwd):
    env = dict(os.environ, PYTHONPATH=os.environ["HYDRA_SRC"])
    env.pop("HYDRA_FULL_ERROR", None)
    app = os.path.join(cwd, "app.py")
    p = subprocess.run(
        ["/usr/bin/python3", app, tree] + args,
        cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    return p


def main():
    if "HYDRA_SRC" not in os.environ:
        sys.exit("set HYDRA_SRC to a Hydra 1.3.2 source tree with its parser generated")
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.path.realpath(tmp)
        with open(os.path.join(cwd, "app.py"), "w") as f:
            f.write(APP)
        for name, tree, args, says in CASES:
            tree_dir = os.path.join(HERE, "trees", tree)
            p = run(tree_dir, args, cwd)
            norm = lambda s: s.replace(tree_dir, "<tree>").replace(cwd, "<cwd>")
            case = {"name": name, "tree": tree, "args": args,
                    "exit_code": p.returncode, "stdout": norm(p.stdout)}
            if p.returncode != 0:
                case["hydra_message"] = norm(p.stderr).replace(
                    "\nSet the environment variable HYDRA_FULL_ERROR=1 for a "
                    "complete stack trace.\n", "").strip()
                case["says"] = says
            out.append(case)
            print(f"{name}: exit {p.returncode}", file=sys.stderr)
    with open(os.path.join(HERE, "cases.json"), "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
