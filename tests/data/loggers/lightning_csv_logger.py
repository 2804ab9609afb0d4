"""Lightning's CSVLogger, for the byte-for-byte comparison in
tests/trainer/csv_logger_test.cc.

Lightning is not packaged in Debian, so its writer is reproduced here from
Lightning 2.6.2 (github.com/Lightning-AI/pytorch-lightning @7f0c343):
  src/lightning/fabric/loggers/csv_logs.py: CSVLogger.log_metrics (prefix,
    flush every n steps), _ExperimentWriter.log_metrics/save/
    _record_new_keys/_rewrite_with_new_header (csv.DictWriter);
  src/lightning/pytorch/loggers/csv_logs.py: ExperimentWriter.log_hparams;
  src/lightning/pytorch/core/saving.py: save_hparams_to_yaml (OmegaConf.save);
  src/lightning/pytorch/trainer/connectors/logger_connector/
    logger_connector.py: log_metrics (the trainer adds "epoch" to a step's
    metrics, then calls log_metrics and save on every logger).
The code below keeps their logic and order; only the file system calls are
the plain os/open ones (Lightning goes through fsspec).

usage: lightning_csv_logger.py OPS.json LOG_DIR
       lightning_csv_logger.py --installed OPS.json LOG_DIR [OPS.json LOG_DIR ...]
--installed: the installed Lightning's own CSVLogger (the anchors' 2.2.5,
  build/anchors/bin/python) instead of the reproduction, given the calls the
  trainer makes: log_metrics with "epoch" added, save, and finalize at the
  end (the C++ side finalizes too); one Python start for every pair.
OPS.json: {"prefix": str, "flush_logs_every_n_steps": int, "ops": [
  {"op": "log", "metrics": {name: float.hex() text}, "step": int,
   "epoch": int or null},
  {"op": "save"},
  {"op": "hparams", "yaml": YAML text read by OmegaConf}]}
"""

import csv
import json
import os
import sys

from omegaconf import OmegaConf


class ExperimentWriter:
    NAME_METRICS_FILE = "metrics.csv"
    NAME_HPARAMS_FILE = "hparams.yaml"

    def __init__(self, log_dir):
        self.metrics = []
        self.metrics_keys = []
        self.hparams = {}
        self.log_dir = log_dir
        self.metrics_file_path = os.path.join(self.log_dir, self.NAME_METRICS_FILE)
        if os.path.isfile(self.metrics_file_path):
            os.remove(self.metrics_file_path)
        os.makedirs(self.log_dir, exist_ok=True)

    def log_metrics(self, metrics_dict, step=None):
        if step is None:
            step = len(self.metrics)
        metrics = dict(metrics_dict)
        metrics["step"] = step
        self.metrics.append(metrics)

    def log_hparams(self, params):
        self.hparams.update(params)
        hparams_file = os.path.join(self.log_dir, self.NAME_HPARAMS_FILE)
        with open(hparams_file, "w", encoding="utf-8") as fp:
            OmegaConf.save(self.hparams, fp)

    def save(self):
        if not self.metrics:
            return
        new_keys = self._record_new_keys()
        file_exists = os.path.isfile(self.metrics_file_path)
        if new_keys and file_exists:
            self._rewrite_with_new_header(self.metrics_keys)
        with open(self.metrics_file_path, mode=("a" if file_exists else "w"), newline="") as file:
            writer = csv.DictWriter(file, fieldnames=self.metrics_keys)
            if not file_exists:
                writer.writeheader()
            writer.writerows(self.metrics)
        self.metrics = []

    def _record_new_keys(self):
        current_keys = set().union(*self.metrics)
        new_keys = current_keys - set(self.metrics_keys)
        self.metrics_keys.extend(new_keys)
        self.metrics_keys.sort()
        return new_keys

    def _rewrite_with_new_header(self, fieldnames):
        with open(self.metrics_file_path, "r", newline="") as file:
            metrics = list(csv.DictReader(file))
        with open(self.metrics_file_path, "w", newline="") as file:
            writer = csv.DictWriter(file, fieldnames=fieldnames)
            writer.writeheader()
            writer.writerows(metrics)


def installed(spec, log_dir):
    from lightning.pytorch.loggers import CSVLogger

    logger = CSVLogger(os.path.dirname(log_dir), name="", version=os.path.basename(log_dir),
                       prefix=spec["prefix"],
                       flush_logs_every_n_steps=spec["flush_logs_every_n_steps"])
    for op in spec["ops"]:
        if op["op"] == "log":
            metrics = {k: float.fromhex(v) for k, v in op["metrics"].items()}
            if op["epoch"] is not None:
                metrics.setdefault("epoch", op["epoch"])
            logger.log_metrics(metrics, op["step"])
        elif op["op"] == "save":
            logger.save()
        elif op["op"] == "hparams":
            logger.log_hyperparams(OmegaConf.to_container(OmegaConf.create(op["yaml"])))
    logger.finalize("success")


def main():
    if sys.argv[1] == "--installed":
        pairs = sys.argv[2:]
        for ops, log_dir in zip(pairs[::2], pairs[1::2]):
            installed(json.load(open(ops)), log_dir)
        return
    spec = json.load(open(sys.argv[1]))
    prefix = spec["prefix"]
    flush_every = spec["flush_logs_every_n_steps"]
    writer = ExperimentWriter(sys.argv[2])
    for op in spec["ops"]:
        if op["op"] == "log":
            metrics = {k: float.fromhex(v) for k, v in op["metrics"].items()}
            if op["epoch"] is not None:
                metrics.setdefault("epoch", op["epoch"])
            if prefix:  # _add_prefix, LOGGER_JOIN_CHAR "-"
                metrics = {f"{prefix}-{k}": v for k, v in metrics.items()}
            step = op["step"]
            writer.log_metrics(metrics, step)
            if (step + 1) % flush_every == 0:
                writer.save()
        elif op["op"] == "save":
            writer.save()
        elif op["op"] == "hparams":
            params = OmegaConf.to_container(OmegaConf.create(op["yaml"]))
            writer.log_hparams(params)


if __name__ == "__main__":
    main()
