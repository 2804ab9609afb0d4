"""Prints how this worker was started, as one JSON line: its environment and
the interpreter's own command line (python -u shows there)."""
import json
import os
import sys

print(json.dumps({"env": dict(os.environ), "orig_argv": sys.orig_argv},
                 sort_keys=True), flush=True)
