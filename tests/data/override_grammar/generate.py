#!/usr/bin/env python3
"""Parses every input of hydra_cases.json with real Hydra 1.3.2 and writes what it made.

Hydra's own parser (OverridesParser.parse_override) reads each committed
input; the case becomes its parse, or the error it raised (README.md gives
the format). Two kinds of input Hydra parses and fails on only when a sweep
runs them are errors here too, as trialshim refuses them at parse time: a
sweep nested in a value or in another sweep, and a range that can not be
enumerated. `contains` (what trialshim's message must hold) is ours: it is
kept from the committed file. Run it with the anchors environment (`make
anchors`):

    build/anchors/bin/python tests/data/override_grammar/generate.py [--out DIR]

writes hydra_cases.json here, or into DIR. tests/config/override_parser_test.cc's
Anchors* test runs it into a temporary directory, requires the result to
equal the committed file byte for byte, and compares trialshim's parser with
it.
"""
import json
import math
import os
import sys
import warnings

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import ChoiceSweep, Glob, Override, RangeSweep, Sweep
from hydra.errors import HydraException

HERE = os.path.dirname(os.path.abspath(__file__))
NESTED = "nested sweep (Hydra fails later)"
UNBOUNDED = "range can not be enumerated"
MAX_RANGE = 100000  # trialshim's limit on the values of one range


def typed(v):
    """The typed JSON form of a parsed value."""
    if v is None:
        return {"t": "null"}
    if isinstance(v, bool):
        return {"t": "bool", "v": v}
    if isinstance(v, int):
        return {"t": "int", "v": str(v)}
    if isinstance(v, float):
        return {"t": "float", "v": repr(v)}
    if isinstance(v, str):
        return {"t": "str", "v": v}
    if isinstance(v, list):
        return {"t": "list", "v": [typed(x) for x in v]}
    if isinstance(v, dict):  # keys as json.dumps writes them
        return {"t": "dict", "v": [[next(iter(json.loads(json.dumps({k: 0})))), typed(x)]
                                   for k, x in v.items()]}
    raise TypeError(f"unexpected {type(v).__name__} {v!r}")


def holds_sweep(v):
    if isinstance(v, (Sweep, Glob)):
        return True
    if isinstance(v, list):
        return any(holds_sweep(x) for x in v)
    if isinstance(v, dict):
        return any(holds_sweep(x) for x in v.values())
    return False


def unbounded(r):
    bounds = [float(x) for x in (r.start, r.stop, r.step)]
    if not all(math.isfinite(x) for x in bounds) or bounds[2] == 0:
        return True
    return (bounds[1] - bounds[0]) / bounds[2] > MAX_RANGE


def parse(parser, text):
    """The case's fields after `input`, or (error, None) where it is refused."""
    try:
        o = parser.parse_override(text)
    except HydraException as e:
        return {"error": str(e)}
    value = o.value()
    inner = value.list if isinstance(value, ChoiceSweep) else value
    if (holds_sweep(inner) if isinstance(value, (ChoiceSweep, list, dict))
            else False):
        return {"error": NESTED}
    if isinstance(value, RangeSweep) and unbounded(value):
        return {"error": UNBOUNDED}
    case = {"type": o.type.name, "key": o.key_or_group, "package": o.package,
            "value_type": o.value_type.name if o.value_type else None}
    if o.value_type is None:
        case["value"] = typed(None)
    elif "shuffle" in text:  # shuffle(), anywhere: a random order, not compared
        case["value"] = None
    elif isinstance(value, (ChoiceSweep, RangeSweep)):
        # The values as Override.value() gives an element (quotes removed).
        case["value"] = typed([Override._convert_value(x) for x in o.sweep_iterator()])
    elif isinstance(value, (Sweep, Glob)):  # interval, glob: no values to list
        case["value"] = typed(None)
    else:
        case["value"] = typed(value)
    return case


def main():
    out = HERE
    if sys.argv[1:2] == ["--out"] and len(sys.argv) == 3:
        out = sys.argv[2]
    elif len(sys.argv) > 1:
        sys.exit("usage: generate.py [--out DIR]")
    with open(os.path.join(HERE, "hydra_cases.json")) as f:
        committed = json.load(f)
    warnings.simplefilter("ignore")  # _name_ in packages is deprecated: parsed all the same
    parser = OverridesParser.create()
    cases = []
    for old in committed:
        case = {"input": old["input"], **parse(parser, old["input"])}
        if "error" in case:
            case["contains"] = old.get("contains", case["error"])
        cases.append(case)
    with open(os.path.join(out, "hydra_cases.json"), "w") as f:
        json.dump(cases, f, indent=0, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
