#!/usr/bin/python3
"""Runs real Hydra 1.3.2 on the cases below and writes cases.json.

Each case is a Hydra app command line (`--cfg job|hydra|all`, `--resolve`,
overrides) run against trees/<tree>/ with config_name "config" (unless the
case's args give `--config-name`, as Hydra's command line allows), as an app file
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
    with open(os.path.join(HERE, "cases.json"), "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
