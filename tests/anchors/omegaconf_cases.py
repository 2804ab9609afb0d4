"""OmegaConf itself on the cases of trialshim's OmegaConf-level tables
(tests/config: yaml_loader, emit, interpolation, typed_value, schema,
hydra_conf), for tests/testutil/omegaconf.h.

    PYTHON tests/anchors/omegaconf_cases.py MODE CASES.json

PYTHON is the anchors' interpreter (omegaconf 2.3.0, what Hydra 1.3.2 users
get from pip: the Anchors* tests) or Debian's /usr/bin/python3
(python3-omegaconf 2.2: the tests that run without PyPI, on the cases where
the two agree). Prints {"version": omegaconf's version, "results": [...]},
one result per case, each as the MODE below says, or {"error": the
exception's type, "message": its message}.

  load       YAML text -> the tree OmegaConf.load makes of it, each scalar
             tagged with its Python type ("int 5", "float 1.5", "str x"...),
             keys as their text (trialshim's keys are strings)
  emit       YAML text -> [to_yaml, json.dumps(indent=2), json.dumps()] of
             OmegaConf.create(yaml.load(text, get_yaml_loader()))
  resolve    {yaml, key} -> json.dumps of `key` ("": all) in to_container(
             resolve=True, throw_on_missing=True) of OmegaConf.create(yaml)
  keep       YAML text -> to_yaml after OmegaConf.resolve (--cfg --resolve)
  create     text -> "0" when OmegaConf.create({"a": text}) takes it
  index      index text -> what ${l.<index>} gives on l = range(12)
  merge      {type, yaml} -> {yaml: to_yaml, json: json.dumps of v} of
             OmegaConf.merge(structured(C), yaml), C a dataclass of one
             field v of that type
  train      (no cases) -> to_yaml of OmegaConf.structured(schema_test's Train)
  hydra      YAML text -> the given keys (as JSON) of the text merged, as
             Hydra composes, into the `hydra` node of Hydra's own HydraConf
             (needs Hydra: the anchors only)
"""
import io
import json
import sys
import warnings
from dataclasses import dataclass, field, make_dataclass
from typing import Any, Dict, List, Optional  # noqa: F401 (eval'd types)

import omegaconf
import yaml
from omegaconf import MISSING, OmegaConf
from omegaconf._utils import get_yaml_loader

warnings.simplefilter("ignore")


def error(e):
    return {"error": type(e).__name__, "message": str(e)}


def key_text(k):  # as to_yaml prints a key: trialshim keeps keys as text
    if isinstance(k, bool):
        return "true" if k else "false"
    return repr(k) if isinstance(k, float) else str(k)


def tagged(v):
    if isinstance(v, dict):
        return {key_text(k): tagged(x) for k, x in v.items()}
    if isinstance(v, list):
        return [tagged(x) for x in v]
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool " + ("true" if v else "false")
    if isinstance(v, int):
        return f"int {v}"
    if isinstance(v, float):
        return f"float {v!r}"
    if isinstance(v, str):
        return "str " + v
    return f"{type(v).__name__} {v!r}"


def load(text):
    return tagged(OmegaConf.to_container(OmegaConf.load(io.StringIO(text))))


def emit(text):
    cfg = OmegaConf.create(yaml.load(text, Loader=get_yaml_loader()))
    plain = OmegaConf.to_container(cfg)
    return [OmegaConf.to_yaml(cfg), json.dumps(plain, indent=2),
            json.dumps(plain)]


def resolve(case):
    cfg = OmegaConf.create(case["yaml"])
    v = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    for part in case["key"].split(".") if case["key"] else []:
        v = v[int(part)] if isinstance(v, list) else v[part]
    return {"json": json.dumps(v)}


def keep(text):
    cfg = OmegaConf.load(io.StringIO(text))
    OmegaConf.resolve(cfg)
    return OmegaConf.to_yaml(cfg)


def create(text):
    OmegaConf.create({"a": text})
    return "0"


def index(text):
    return str(OmegaConf.create({"l": list(range(12)), "x": "${l." + text + "}"}).x)


def one_field(type_text):
    return make_dataclass("C", [("v", eval(type_text), field(default=MISSING))])


def merge(case):
    cfg = OmegaConf.merge(OmegaConf.structured(one_field(case["type"])),
                          OmegaConf.create(case["yaml"]))
    OmegaConf.to_container(cfg, throw_on_missing=True)
    return {"yaml": OmegaConf.to_yaml(cfg),
            "json": json.dumps(OmegaConf.to_container(cfg)["v"])}


@dataclass
class Data:
    path: str = "data/digits.csv"
    val_fraction: float = 0.2


@dataclass
class Train:
    batch_size: int = 64
    lr: float = 0.01
    optimizer: str = "adam"
    seed: Optional[int] = None
    hidden: List[int] = field(default_factory=lambda: [64])
    shuffle: bool = True
    data: Data = field(default_factory=Data)
    tags: Dict[str, str] = field(default_factory=dict)
    name: str = MISSING
    workers: int = 2
    extra: Any = None


def hydra(text):
    from hydra.conf import HydraConf

    given = OmegaConf.create(text)
    cfg = OmegaConf.merge(OmegaConf.create({"hydra": HydraConf}), {"hydra": given})

    def pick(src, got):  # the result, shaped as what was given
        if not isinstance(src, dict):
            return got
        return {k: pick(v, got[k]) for k, v in src.items()}

    merged = OmegaConf.to_container(cfg, enum_to_str=True)["hydra"]
    return {"json": json.dumps(pick(OmegaConf.to_container(given), merged))}


MODES = {"load": load, "emit": emit, "resolve": resolve, "keep": keep,
         "create": create, "index": index, "merge": merge, "hydra": hydra}


def run(fn, case):
    try:
        return fn(case)
    except Exception as e:  # the case's outcome: what the test compares
        return error(e)


def main():
    mode = sys.argv[1]
    if mode == "train":
        results = [OmegaConf.to_yaml(OmegaConf.structured(Train))]
    else:
        with open(sys.argv[2]) as f:
            cases = json.load(f)
        results = [run(MODES[mode], c) for c in cases]
    json.dump({"version": omegaconf.__version__, "results": results},
              sys.stdout)


if __name__ == "__main__":
    main()
