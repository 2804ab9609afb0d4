"""A black-box trial of bench/search_bench.py: reads Vertex-style
--id=value arguments, computes the problem named by the first argument and
reports it the way cloudml-hypertune does (one JSON line in
CLOUD_ML_HP_METRIC_FILE), as `trialshim sweep` expects."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from problems import PROBLEMS, parse_args  # noqa: E402

problem = PROBLEMS[sys.argv[1]]
value = problem["f"](parse_args(problem, sys.argv[2:]))
path = os.environ["CLOUD_ML_HP_METRIC_FILE"]
with open(path, "w") as f:
    f.write(json.dumps({"checkpoint_path": "", "global_step": "1",
                        "timestamp": time.time(),
                        "trial": os.environ.get("CLOUD_ML_TRIAL_ID", ""),
                        "value": str(float(value))}, sort_keys=True) + "\n")
