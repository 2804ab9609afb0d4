#!/usr/bin/env python3
"""Composes every case of cases.json with real Hydra 1.3.2 and writes what it got.

Each case names a tree (trees/<tree>/), a config name and overrides; Hydra's
compose API (initialize_config_dir, compose) composes them, and the result,
every interpolation resolved, is the case's `expect` (JSON, in the key order
Hydra kept); where Hydra refuses, `error: true` and its message. The inputs
are the committed cases.json's: this script rewrites what Hydra said about
them. Run it with the anchors environment (`make anchors`):

    build/anchors/bin/python tests/data/conformance/compose/generate.py [--out DIR]

writes cases.json here, or into DIR. tests/config/conformance_test.cc's
Anchors* test runs it into a temporary directory, requires the result to
equal the committed file byte for byte, and compares `trialshim compose`
with it. Paths in messages are written as <tree>.
"""
import json
import os
import sys

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import OmegaConf

HERE = os.path.dirname(os.path.abspath(__file__))


def run(case):
    tree = os.path.join(HERE, "trees", case["tree"])
    out = {k: case[k] for k in ("id", "tree", "config_name", "overrides")}
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=tree, version_base="1.3"):
            cfg = compose(case["config_name"], overrides=case["overrides"])
            out["expect"] = OmegaConf.to_container(cfg, resolve=True)
    except Exception as e:  # what Hydra refuses, with its message
        out["error"] = True
        out["hydra_message"] = str(e).replace(tree, "<tree>").strip()
    return out


def main():
    out = HERE
    if sys.argv[1:2] == ["--out"] and len(sys.argv) == 3:
        out = sys.argv[2]
    elif len(sys.argv) > 1:
        sys.exit("usage: generate.py [--out DIR]")
    with open(os.path.join(HERE, "cases.json")) as f:
        cases = json.load(f)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump([run(c) for c in cases], f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
