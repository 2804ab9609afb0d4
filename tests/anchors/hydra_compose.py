"""Real Hydra 1.3.2's compose API on a list of requests, for the Anchors*
tests of tests/config/compose_test.cc.

    build/anchors/bin/python tests/anchors/hydra_compose.py REQUESTS.json

REQUESTS.json is a list of {config_dir, config_name, overrides, env,
choices}. Prints a JSON list with, for each, {"config": ...} (the composed
config as JSON, interpolations left unresolved, in the key order Hydra kept),
with `choices` {"choices": hydra.runtime.choices as [[group, option], ...]
in Hydra's order} instead, or {"error": "Type: message"} where Hydra
refused. `env` is set while that one composes.
"""
import json
import os
import sys

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import OmegaConf


def run(r):
    saved = {k: os.environ.get(k) for k in r.get("env", {})}
    os.environ.update(r.get("env", {}))
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=r["config_dir"], version_base="1.3"):
            cfg = compose(r["config_name"], overrides=r["overrides"],
                          return_hydra_config=r.get("choices", False))
            if r.get("choices"):
                return {"choices": [[k, v] for k, v in cfg.hydra.runtime.choices.items()]}
            return {"config": OmegaConf.to_container(cfg, resolve=False)}
    except Exception as e:  # what Hydra refuses
        return {"error": f"{type(e).__name__}: {e}"}
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def main():
    with open(sys.argv[1]) as f:
        requests = json.load(f)
    json.dump([run(r) for r in requests], sys.stdout)


if __name__ == "__main__":
    main()
