"""Prints what Hydra's own instantiate does with the configs of
tests/config/instantiate_test.cc (the expectations there were taken from
this output):

  PYTHONPATH=/path/to/hydra-1.3.2 /usr/bin/python3 instantiate_hydra.py

rec.Rec records its arguments; rec.Strict(a, b=2) names its keywords.
"""
import functools
import sys
import types

from hydra.utils import instantiate
from omegaconf import OmegaConf

rec = types.ModuleType("rec")
exec(
    """
class Rec:
    def __init__(self, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs
    def __repr__(self):
        return f"Rec(args={list(self.args)!r}, kwargs={dict(self.kwargs)!r})"
class Strict:
    def __init__(self, a, b=2):
        self.a, self.b = a, b
def fail(**kw):
    raise ValueError("boom")
""",
    rec.__dict__,
)
sys.modules["rec"] = rec


def show(name, yaml, *args, **kwargs):
    try:
        r = instantiate(OmegaConf.create(yaml), *args, **kwargs)
        if isinstance(r, functools.partial):
            r = f"partial(Rec, args={list(r.args)!r}, kw={r.keywords!r})"
    except Exception as e:  # what the C++ errors follow
        r = f"ERROR {type(e).__name__}: {e}"
    print(f"== {name}\n{r}")


R = "_target_: rec.Rec"
show("plain", "{%s, a: 1, b: x}" % R)
show("nested", "{%s, a: {%s, x: 1}}" % (R, R))
show("nested_in_list", "{%s, l: [1, {%s, y: 2}]}" % (R, R))
show("nested_in_plain_map", "{%s, m: {k: {%s, z: 3}, j: 4}}" % (R, R))
show("args", "{%s, _args_: [1, {%s, q: 1}], k: 2}" % (R, R))
show("args_overridden_by_call", "{%s, _args_: [1, 2]}" % R, 9)
show("args_not_list", "{%s, _args_: 5}" % R)
show("partial", "{%s, _partial_: true, lr: 0.1}" % R)
p = instantiate(OmegaConf.create("{%s, _partial_: true, lr: 0.1, b: 1}" % R))
print("== partial_called\n", p(5, lr=0.5, params="P"))
show("partial_missing_skipped", "{%s, _partial_: true, lr: '???'}" % R)
show("missing_not_partial", "{%s, lr: '???'}" % R)
show("nested_partial", "{%s, opt: {%s, _partial_: true, lr: 1}}" % (R, R))
show("recursive_false", "{%s, _recursive_: false, a: {%s, x: 1}}" % (R, R))
show("recursive_false_below",
     "{%s, a: {%s, _recursive_: false, b: {%s}}}" % (R, R, R))
show("recursive_kwarg", "{%s, a: {%s, x: 1}}" % (R, R), _recursive_=False)
show("kwargs_override", "{%s, a: 1}" % R, a=2, extra=3)
show("kwarg_target", "{%s}" % R, a={"_target_": "rec.Rec", "k": 1})
show("partial_kwarg", "{%s, a: 1}" % R, _partial_=True)
show("convert_all", "{%s, _convert_: all, a: {b: 1}}" % R)
show("null_value", "{%s, a: null}" % R)
show("partial_holds_nested_objects",
     "{%s, _partial_: true, a: {%s, b: 1}}" % (R, R))
show("unknown_target", "{_target_: rec.Nope}")
show("target_not_str", "{_target_: 5}")
show("partial_not_bool", "{%s, _partial_: yes_please}" % R)
show("recursive_not_bool", "{%s, _recursive_: 1}" % R)
show("bad_kwarg", "{_target_: rec.Strict, a: 1, c: 2}")
show("missing_arg", "{_target_: rec.Strict, b: 1}")
show("pos_and_kw", "{_target_: rec.Strict, _args_: [1], a: 2}")
show("factory_raises", "{_target_: rec.fail}")
show("no_target_map", "{a: {%s, x: 1}, b: 2}" % R)
show("list_top", "[{%s, x: 1}, 2]" % R)
show("nested_error_full_key",
     "{m: {%s, a: {_target_: rec.Strict, c: 1}}}" % R)
show("nested_missing_in_partial",
     "{%s, _partial_: true, a: {%s, b: '???'}}" % (R, R))
cfg = OmegaConf.create("{p: 3, m: {%s, a: '${p}'}}" % R)
print("== interp\n", instantiate(cfg.m))
