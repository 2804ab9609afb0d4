"""Python's own format() and str.format(), and Lightning's checkpoint names
made of them, for the comparisons in tests/base/python_format_test.cc and
tests/trainer/callbacks_test.cc.

usage: python_format.py CASES.json
CASES.json: a list of cases, each one of
  {"value": NUMBER, "spec": str}                  format(value, spec)
  {"template": str, "mapping": {str: NUMBER}}     template.format(mapping)
  {"filename": str, "metrics": {str: NUMBER}, "epoch": int, "step": int,
   "auto_insert_metric_name": bool}               Lightning's checkpoint name
where NUMBER is {"int": "decimal digits"} or {"float": float.hex() text}.
Prints one JSON list, per case {"ok": str} or {"error": exception type name,
"message": str(exception)}.
"""

import json
import re
import sys


def number(v):
    return int(v["int"]) if "int" in v else float.fromhex(v["float"])


def lightning_checkpoint_name(case):
    # Lightning 2.6.2's ModelCheckpoint._format_checkpoint_name
    # (src/lightning/pytorch/callbacks/model_checkpoint.py), with the epoch
    # and step its format_checkpoint_name adds, and its metrics as tensors:
    # the logged values float32, epoch, step and missing names int64.
    import torch

    metrics = {k: torch.tensor(number(v), dtype=torch.float32)
               for k, v in case["metrics"].items()}
    metrics["epoch"] = torch.tensor(case["epoch"])
    metrics["step"] = torch.tensor(case["step"])
    filename = case["filename"]
    if not filename:
        filename = "{epoch}" + "-" + "{step}"
    groups = re.findall(r"(\{.*?)[:\}]", filename)
    groups = sorted(groups, key=lambda x: len(x), reverse=True)
    for group in groups:
        name = group[1:]
        if case["auto_insert_metric_name"]:
            filename = filename.replace(group, name + "={" + name)
        filename = filename.replace(group, f"{{0[{name}]")
        if name not in metrics:
            metrics[name] = torch.tensor(0)
    return filename.format(metrics)


def run(case):
    try:
        if "spec" in case:
            return {"ok": format(number(case["value"]), case["spec"])}
        if "filename" in case:
            return {"ok": lightning_checkpoint_name(case)}
        mapping = {k: number(v) for k, v in case["mapping"].items()}
        return {"ok": case["template"].format(mapping)}
    except Exception as e:  # what the C++ side compares with its Status
        return {"error": type(e).__name__, "message": str(e)}


with open(sys.argv[1], encoding="utf-8") as f:
    cases = json.load(f)
json.dump([run(c) for c in cases], sys.stdout)
