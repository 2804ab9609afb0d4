"""Hydra 1.3.2's own hydra.utils.instantiate on the cases of
tests/config/instantiate_test.cc's Anchors* test.

    build/anchors/bin/python tests/anchors/hydra_instantiate.py CASES.json

CASES.json is a list of {yaml, key, args: [...], kwargs: {...}, call:
{args, kwargs} or null}: instantiate(OmegaConf.create(yaml)[key] (all of it
when key is ""), *args, **kwargs), then, with `call`, the partial it made
called so. The targets are the test's: rec.Rec(*args, **kwargs) records what
it got (rec.alias.Recorder is the same class), rec.Strict(a, b=2) records
the arguments it was given by name, rec.fail raises ValueError("boom").
Prints a JSON list with, for each case, what came back in the test's Repr()
form ("Rec(args=[...], kwargs={...})", "partial(Rec, args=[...], kw={...})"),
or "ERROR <exception type>: <message>".
"""
import functools
import json
import sys
import types

from hydra.utils import instantiate
from omegaconf import DictConfig, ListConfig, OmegaConf

_UNSET = object()


class Rec:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = list(args), dict(kwargs)


class Strict(Rec):
    def __init__(self, a, b=_UNSET):
        super().__init__(a=a, **({} if b is _UNSET else {"b": b}))


def fail(**kwargs):
    raise ValueError("boom")


rec = types.ModuleType("rec")
rec.Rec, rec.Strict, rec.fail = Rec, Strict, fail
rec.alias = types.ModuleType("rec.alias")
rec.alias.Recorder = Rec
sys.modules.update({"rec": rec, "rec.alias": rec.alias})


def show(v):
    if isinstance(v, (DictConfig, ListConfig)):
        v = OmegaConf.to_container(v)
    if isinstance(v, Rec):
        return f"Rec(args={show(v.args)}, kwargs={show(v.kwargs)})"
    if isinstance(v, functools.partial):
        return f"partial(Rec, args={show(list(v.args))}, kw={show(v.keywords)})"
    if isinstance(v, list):
        return "[" + ", ".join(show(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k!r}: {show(x)}" for k, x in v.items()) + "}"
    return repr(v)


def run(case):
    try:
        cfg = OmegaConf.create(case["yaml"])
        if case["key"]:
            cfg = cfg[case["key"]]
        made = instantiate(cfg, *case["args"], **case["kwargs"])
        if case.get("call"):
            made = made(*case["call"]["args"], **case["call"]["kwargs"])
        return show(made)
    except Exception as e:  # the outcome the test compares
        return f"ERROR {type(e).__name__}: {e}"


def main():
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    json.dump([run(c) for c in cases], sys.stdout)


if __name__ == "__main__":
    main()
