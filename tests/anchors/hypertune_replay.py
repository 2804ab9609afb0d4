"""Reports metrics through cloudml-hypertune (or a stand-in for it) with
given timestamps, so a metric file can be compared with what it writes byte
for byte.

    build/anchors/bin/python tests/anchors/hypertune_replay.py WRITER REPORTS.json OUT

WRITER is `hypertune` (cloudml-hypertune's HyperTune, from the anchors) or
the path of a Python file whose _HyperTune stands in for it
(examples/vertex/train.py's). REPORTS.json is {"trial": "7", "reports":
[{"tag", "value", "step", "checkpoint_path", "timestamp"}, ...]}: `value` is
float.hex() text (or nan, inf, -inf), `step` an int or null, `timestamp` what
time.time() returns for that report. One HyperTune object makes every report,
as in a trainer, writing OUT (CLOUD_ML_HP_METRIC_FILE) with CLOUD_ML_TRIAL_ID
set to `trial`.
"""
import importlib.util
import json
import os
import sys
import time


def writer_class(writer):
    if writer == "hypertune":
        from hypertune import HyperTune
        return HyperTune
    spec = importlib.util.spec_from_file_location("stand_in", writer)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._HyperTune


def main():
    writer, reports_file, out = sys.argv[1:4]
    with open(reports_file) as f:
        job = json.load(f)
    os.environ["CLOUD_ML_HP_METRIC_FILE"] = out
    os.environ["CLOUD_ML_TRIAL_ID"] = job["trial"]
    hypertune = writer_class(writer)()
    for r in job["reports"]:
        time.time = lambda: r["timestamp"]  # the report's own moment
        hypertune.report_hyperparameter_tuning_metric(
            r["tag"], float.fromhex(r["value"]), r["step"], r["checkpoint_path"])


if __name__ == "__main__":
    main()
