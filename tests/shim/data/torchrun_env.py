"""Prints the environment Debian's torchrun would give each local worker.

torch 1.13's torchrun crashes on Python 3.11 in start_processes(), after it
has computed every worker's environment; this runs torchrun's own main() with
start_processes replaced by a function that prints those environments as
JSON ({local_rank: {name: value}}) and exits. Arguments are torchrun's.
Used as the oracle for `trialshim launch`'s worker environment.
"""
import json
import os
import sys

import torch.distributed.elastic.agent.server.local_elastic_agent as agent
import torch.distributed.run as run


def dump(name, entrypoint, args, envs, *rest, **kwargs):
    print(json.dumps({str(k): v for k, v in envs.items()}, sort_keys=True))
    sys.stdout.flush()
    # Node 0's agent hosts the rendezvous store: with ORACLE_HOLD it stays
    # until its stdin ends, the test's word that the others have read it.
    if os.environ.get("ORACLE_HOLD"):
        sys.stdin.read()
    os._exit(0)


agent.start_processes = dump
run.main(sys.argv[1:])
