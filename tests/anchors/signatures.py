"""The keyword parameters of Python classes, in order, for
tests/trainer/targets_test.cc's Anchors* test (the `_target_`s our registry
takes under PyTorch's and Lightning's names).

    build/anchors/bin/python tests/anchors/signatures.py PATHS.json

PATHS.json is a list of dotted class paths ("torch.optim.Adam"). Prints a
JSON object from each path to {"positional": the names of its __init__'s
parameters a position or a keyword can set, in order (self left out),
"keyword_only": those only a keyword can set, "var_keyword": whether it
takes **kwargs}, or to {"error": message} where it can not be imported.
"""
import importlib
import inspect
import json
import sys
import warnings

warnings.simplefilter("ignore")


def params(path):
    module, _, name = path.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        return {"error": f"{type(e).__name__}: {e}"}
    ps = list(inspect.signature(cls.__init__).parameters.values())
    return {"positional": [p.name for p in ps if p.name != "self" and
                           p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD],
            "keyword_only": [p.name for p in ps if p.kind == inspect.Parameter.KEYWORD_ONLY],
            "var_keyword": any(p.kind == inspect.Parameter.VAR_KEYWORD for p in ps)}


def main():
    with open(sys.argv[1]) as f:
        paths = json.load(f)
    json.dump({p: params(p) for p in paths}, sys.stdout)


if __name__ == "__main__":
    main()
