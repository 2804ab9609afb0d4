"""Real Hydra 1.3.2 composing tests/data/hydra_app/trees/basic under a
structured config, for AnchorsSchemaLikeHydra in tests/app/app_test.cc.

    build/anchors/bin/python tests/anchors/hydra_schema.py TREE REQUESTS.json

`Basic` is app_task's schema (tests/app/app_task.cc) as a dataclass, stored
as "basic_schema" and put first in the defaults list of a copy of TREE's
config.yaml: Hydra's schema pattern. REQUESTS.json is a list of override
lists; prints a JSON list with, for each, {"config": ...} (unresolved) or
{"error": "Type: message"} where Hydra refused.
"""
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from typing import Any, Optional

from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.core.global_hydra import GlobalHydra
from omegaconf import MISSING, OmegaConf


@dataclass
class Basic:
    db: Any = None
    name: str = ""
    port: int = MISSING
    url: str = ""
    note: Optional[str] = None
    retries: int = 3


def main():
    ConfigStore.instance().store(name="basic_schema", node=Basic)
    with open(sys.argv[2]) as f:
        requests = json.load(f)
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "tree")
        shutil.copytree(sys.argv[1], tree)
        primary = os.path.join(tree, "config.yaml")
        with open(primary) as f:
            text = f.read()
        assert text.startswith("defaults:\n"), "the tree's defaults list moved"
        with open(primary, "w") as f:
            f.write(text.replace("defaults:\n", "defaults:\n  - basic_schema\n", 1))
        out = []
        for overrides in requests:
            GlobalHydra.instance().clear()
            try:
                with initialize_config_dir(config_dir=tree, version_base="1.3"):
                    cfg = compose("config", overrides=overrides)
                    out.append({"config": OmegaConf.to_container(cfg, resolve=False)})
            except Exception as e:  # what Hydra refuses
                out.append({"error": f"{type(e).__name__}: {e}"})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
