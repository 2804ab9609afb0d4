"""Real Lightning fits of tests/trainer/scripted_module.h's ScriptedModule on
its TinyData, for the trainer tests' Anchors* side-by-side comparisons.

    build/anchors/bin/python tests/anchors/lightning_scripted.py RUNS.json

y = a x0 + b x1 (a, b start at 0, double), MSE, SGD(lr); four rows, one per
batch, for training and validation (not shuffled): an epoch is four steps.
The validation metric follows `script` (float.hex() texts: the i-th
validation logs script[i], the last repeats); an empty script logs the real
validation MSE.

RUNS.json is a list of {dir, trainer: {Trainer keywords}, checkpoint:
{ModelCheckpoint keywords} or null, early_stopping: {EarlyStopping keywords}
or null, lr_monitor: {LearningRateMonitor keywords} or null, csv: bool,
script: [...], metric: "val_loss", optimizer: "SGD" or "Adam", lr: 0.05,
lr2: a second param group's rate (b's) or 0, scheduler: {gamma, interval}
(an ExponentialLR) or null}; each fit runs in `dir` (default_root_dir,
dirpath <dir>/checkpoints, a CSVLogger writing <dir>/csv when asked). Prints
a JSON list with, for each run: {epoch, global_step, files (under
<dir>/checkpoints, relative, recursively), last_is_link, best (the best
checkpoint's file name or ""), reason (the message EarlyStopping logged, or
""), lr_rows (each non-empty lr-* cell of the CSVLogger's metrics.csv in
file order, as [column, epoch cell, step cell, the cell])}.
"""
import contextlib
import csv
import io
import json
import logging
import os
import sys
import warnings

import torch
import lightning.pytorch as pl
from lightning.pytorch.callbacks import EarlyStopping, LearningRateMonitor, ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger
from torch.utils.data import DataLoader, TensorDataset

ROWS = [(1, 2, 3), (-1, 0.5, 1), (2, -1, -2), (0.5, 0.5, 4)]


class ScriptedModule(pl.LightningModule):
    def __init__(self, run):
        super().__init__()
        self.a = torch.nn.Parameter(torch.zeros(1, dtype=torch.double))
        self.b = torch.nn.Parameter(torch.zeros(1, dtype=torch.double))
        self.script = [float.fromhex(v) for v in run.get("script", [])]
        self.metric = run.get("metric", "val_loss")
        self.lr, self.lr2 = run.get("lr", 0.05), run.get("lr2", 0)
        self.optimizer = run.get("optimizer", "SGD")
        self.scheduler = run.get("scheduler")
        self.validations = 0

    # Debian's torch 1.13 can not import torch.distributed._shard under
    # Python 3.11 (a dataclass default 3.11 refuses; fixed in torch 2.0);
    # Lightning 2.2 imports it here only for ShardedTensor state dicts.
    def _register_sharded_tensor_state_dict_hooks_if_available(self):
        pass

    def predict(self, x):
        return x[:, 0] * self.a + x[:, 1] * self.b

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = (self.predict(x) - y).pow(2).mean()
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        if not self.script:
            self.log(self.metric, (self.predict(x) - y).pow(2).mean())
            return
        if batch_idx == 0:
            self.validations += 1
        self.log(self.metric, float(self.script[min(self.validations, len(self.script)) - 1]))

    def configure_optimizers(self):
        params = self.parameters()
        if self.lr2 > 0:
            params = [{"params": [self.a]}, {"params": [self.b], "lr": self.lr2}]
        opt = getattr(torch.optim, self.optimizer)(params, lr=self.lr)
        if not self.scheduler:
            return opt
        scheduler = torch.optim.lr_scheduler.ExponentialLR(opt, self.scheduler["gamma"])
        return {"optimizer": opt,
                "lr_scheduler": {"scheduler": scheduler,
                                 "interval": self.scheduler.get("interval", "epoch")}}


def loader():
    t = torch.tensor(ROWS, dtype=torch.double)
    return DataLoader(TensorDataset(t[:, :2], t[:, 2]), batch_size=1)


class Reasons(logging.Handler):
    """EarlyStopping's stop message (it logs it on rank zero)."""

    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def fit(run):
    callbacks = []
    ckpt = None
    if run.get("checkpoint") is not None:
        ckpt = ModelCheckpoint(dirpath=os.path.join(run["dir"], "checkpoints"),
                               **run["checkpoint"])
        callbacks.append(ckpt)
    stopper = None
    if run.get("early_stopping") is not None:
        stopper = EarlyStopping(**{"verbose": True, **run["early_stopping"]})
        callbacks.append(stopper)
    if run.get("lr_monitor") is not None:
        callbacks.append(LearningRateMonitor(**run["lr_monitor"]))
    logger = CSVLogger(run["dir"], name="", version="csv") if run.get("csv") else False
    trainer = pl.Trainer(default_root_dir=run["dir"], callbacks=callbacks, logger=logger,
                         accelerator="cpu", enable_progress_bar=False,
                         enable_model_summary=False, num_sanity_val_steps=0,
                         **run.get("trainer", {}))
    module = ScriptedModule(run)
    reasons = Reasons()
    logging.getLogger("lightning.pytorch.callbacks.early_stopping").addHandler(reasons)
    try:
        trainer.fit(module, loader(), loader())
    finally:
        logging.getLogger("lightning.pytorch.callbacks.early_stopping").removeHandler(reasons)
    ckpt_dir = os.path.join(run["dir"], "checkpoints")
    files = sorted(os.path.relpath(os.path.join(d, n), ckpt_dir)
                   for d, _, names in os.walk(ckpt_dir) for n in names)
    return {"epoch": trainer.current_epoch, "global_step": trainer.global_step,
            "files": files,
            "last_is_link": os.path.islink(os.path.join(ckpt_dir, "last.ckpt")),
            "best": os.path.basename(ckpt.best_model_path) if ckpt else "",
            "reason": reasons.messages[-1] if reasons.messages else "",
            "lr_rows": lr_rows(os.path.join(run["dir"], "csv", "metrics.csv"))}


def lr_rows(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return [[k, row.get("epoch", ""), row["step"], v] for row in csv.DictReader(f)
                for k, v in row.items() if k.startswith("lr-") and v != ""]


def main():
    warnings.simplefilter("ignore")
    logging.getLogger("lightning.pytorch").setLevel(logging.INFO)
    with open(sys.argv[1]) as f:
        runs = json.load(f)
    out = []
    with contextlib.redirect_stdout(io.StringIO()):  # Lightning's own chatter
        for run in runs:
            out.append(fit(run))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
