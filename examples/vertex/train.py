#!/usr/bin/env python3
"""A small Hydra-style trainer for a Vertex AI tuning trial.

It composes conf/ with the overrides on its command line (trialshim turns
Vertex's `--optimizer.lr=0.01` into `optimizer.lr=0.01`), "trains" a toy
model whose loss depends on the hyperparameters, and reports val_loss the way
cloudml-hypertune does. With Hydra installed it is a real @hydra.main app;
without it (a plain Debian machine) it composes the same config with
OmegaConf, so `trialshim -- python3 train.py ...` can be tried anywhere.
It needs no SIGTERM handler: trialshim delivers SIGTERM to it and Python's
default is to stop.
"""
import json
import math
import os
import sys
import time


def report(tag, value, step):
    """cloudml-hypertune's report_hyperparameter_tuning_metric, or an exact
    stand-in when the package is not installed."""
    try:
        import hypertune  # cloudml-hypertune
        if not hasattr(report, "ht"):
            report.ht = hypertune.HyperTune()
        report.ht.report_hyperparameter_tuning_metric(
            hyperparameter_metric_tag=tag, metric_value=value, global_step=step)
        return
    except ImportError:
        pass
    path = os.environ.get("CLOUD_ML_HP_METRIC_FILE", "/tmp/hypertune/output.metrics")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    entries = getattr(report, "entries", [])
    entries.append({"timestamp": time.time(),
                    "trial": str(os.environ.get("CLOUD_ML_TRIAL_ID", 0)),
                    tag: str(float(value)),
                    "global_step": str(int(step) if step else 0),
                    "checkpoint_path": ""})
    report.entries = entries[-100:]
    with open(path, "w") as f:
        for e in report.entries:
            f.write(json.dumps(e, sort_keys=True) + "\n")


def train(cfg):
    lr = float(cfg.optimizer.lr)
    width = int(cfg.model.width)
    batch = int(cfg.data.batch_size)
    best = math.inf
    for epoch in range(int(cfg.trainer.max_epochs)):
        # A made-up loss surface with its optimum near lr=3e-3, width=128.
        val_loss = ((math.log10(lr) + 2.5) ** 2 + (math.log2(width) - 7) ** 2 / 10
                    + 32 / batch / (epoch + 1))
        if cfg.optimizer.name == "sgd":
            val_loss *= 1.0 + 0.1 * (1 - float(cfg.optimizer.momentum))
        best = min(best, val_loss)
        print(f"epoch {epoch} val_loss={val_loss:.6f}", flush=True)
        report("val_loss", val_loss, epoch)
    return best


def main_without_hydra():
    from omegaconf import OmegaConf
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conf")
    overrides = [a for a in sys.argv[1:] if "=" in a]
    group = {"optimizer": "adam"}
    rest = []
    for o in overrides:
        key, value = o.split("=", 1)
        if key in group:
            group[key] = value
        else:
            rest.append(o.lstrip("+"))
    cfg = OmegaConf.load(os.path.join(here, "config.yaml"))
    cfg.pop("defaults")
    cfg.optimizer = OmegaConf.load(os.path.join(here, "optimizer", group["optimizer"] + ".yaml"))
    cfg = OmegaConf.merge(cfg, OmegaConf.from_dotlist(rest))
    print(OmegaConf.to_yaml(cfg), end="", flush=True)
    train(cfg)


if __name__ == "__main__":
    try:
        import hydra
    except ImportError:
        main_without_hydra()
    else:
        @hydra.main(version_base="1.3", config_path="conf", config_name="config")
        def main(cfg):
            from omegaconf import OmegaConf
            print(OmegaConf.to_yaml(cfg), end="", flush=True)
            return train(cfg)

        main()
