"""Hydra 1.3.2's own command-line parser on argument lists, for
tests/config/command_line_test.cc's Anchors* test.

    build/anchors/bin/python tests/anchors/hydra_argparse.py CASES.json

CASES.json is a list of argument lists. Prints a JSON list with, for each,
what hydra._internal.utils.get_args_parser().parse_known_args() made of it in
the form that test's Describe() writes: the flags set (in its order), then
overrides=[...] and unrecognized=[...]; "version" when argparse exited 0 on
--version; "error: MSG" with argparse's message where it would exit 2.
"""
import contextlib
import io
import json
import sys

from hydra._internal.utils import get_args_parser

ORDER = ["help", "hydra_help", "cfg", "resolve", "package", "run", "multirun",
         "shell_completion", "config_path", "config_name", "config_dir",
         "experimental_rerun", "info"]


class Refused(Exception):
    pass


def describe(args):
    parser = get_args_parser()

    def error(message):
        raise Refused(message)

    parser.error = error
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            ns, unknown = parser.parse_known_args(args)
    except Refused as e:
        return f"error: {e}"
    except SystemExit as e:  # --version prints and exits 0
        return "version" if e.code == 0 else f"exit {e.code}"
    parts = []
    for name in ORDER:
        v = getattr(ns, name)
        if v is True:
            parts.append(name)
        elif v not in (None, False):
            parts.append(f"{name}={v}")
    join = lambda items: "[" + ", ".join(items) + "]"
    if ns.overrides:
        parts.append("overrides=" + join(ns.overrides))
    if unknown:
        parts.append("unrecognized=" + join(unknown))
    return " ".join(parts)


def main():
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    json.dump([describe(args) for args in cases], sys.stdout)


if __name__ == "__main__":
    main()
