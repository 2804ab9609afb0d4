#!/usr/bin/python3
"""OmegaConf baseline for bench/compose_bench.sh.

Does by hand what `trialshim compose` does for the conformance `train` tree:
loads the primary config and the chosen group files with OmegaConf.load,
merges them in defaults-list order, applies the value overrides in struct
mode (OmegaConf.from_dotlist + merge) and prints the resolved result as JSON.
Only `group=option` and `key=value` overrides are understood; that is all the
benchmark passes.

Usage: compose_omegaconf.py CONFIG_DIR OVERRIDE...
"""
import json
import os
import sys

from omegaconf import OmegaConf


def main() -> None:
    config_dir, overrides = sys.argv[1], sys.argv[2:]
    primary = OmegaConf.load(os.path.join(config_dir, "config.yaml"))
    defaults = primary.pop("defaults")
    choices = {}
    for item in defaults:
        if item != "_self_":
            (group, option), = item.items()
            choices[group] = option
    values = []
    for o in overrides:
        key, value = o.split("=", 1)
        if os.path.isdir(os.path.join(config_dir, key)):
            choices[key] = value
        else:
            values.append(o)
    cfg = OmegaConf.create()
    for item in defaults:
        if item == "_self_":
            cfg.merge_with(primary)
        else:
            (group, _), = item.items()
            path = os.path.join(config_dir, group, choices[group] + ".yaml")
            cfg.merge_with({group: OmegaConf.load(path)})
    OmegaConf.set_struct(cfg, True)
    cfg.merge_with(OmegaConf.from_dotlist(values))
    print(json.dumps(OmegaConf.to_container(cfg, resolve=True), indent=2))


main()
