"""Lightning's ModelCheckpoint.format_checkpoint_name on a list of cases, for
tests/trainer/callbacks_test.cc's Anchors* test.

    build/anchors/bin/python tests/anchors/lightning_names.py CASES.json

CASES.json is a list of {filename, metrics: {name: float.hex() text}, epoch,
step, auto_insert_metric_name, version (0: none)}; metrics, epoch and step are
plain Python numbers, as Lightning's own tests pass them. Prints a JSON list
with {"name": ...} or {"error": "Type: message"} for each.
"""
import json
import sys
import warnings

from lightning.pytorch.callbacks import ModelCheckpoint


def name(c):
    metrics = {k: float.fromhex(v) for k, v in c["metrics"].items()}
    metrics.update(epoch=c["epoch"], step=c["step"])
    ckpt = ModelCheckpoint(filename=c["filename"] or None,
                           auto_insert_metric_name=c["auto_insert_metric_name"])
    try:
        return {"name": ckpt.format_checkpoint_name(metrics, ver=c["version"] or None)}
    except Exception as e:  # what Python's str.format refuses
        return {"error": f"{type(e).__name__}: {e}"}


def main():
    warnings.simplefilter("ignore")
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    json.dump([name(c) for c in cases], sys.stdout)


if __name__ == "__main__":
    main()
