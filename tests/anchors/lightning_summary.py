"""Lightning 2.2.5's ModelSummary and RichModelSummary in real fits of the
models of tests/trainer/callbacks_test.cc's AnchorsModelSummary test.

    build/anchors/bin/python tests/anchors/lightning_summary.py CASES.json

CASES.json is a list of {dir, model, max_depth, rich, precision}: model is
"docstring" (net: Sequential(Linear(64, 128), ReLU, Linear(128, 10)), the
model of Lightning's docstring), "mixed" (a parameter `scale` of 3, encoder:
Sequential(Linear(2, 4), Tanh), head: Linear(4, 1) frozen) or "flat" (two
parameters a and b, no submodules). Each fit runs one epoch of four steps
with that callback and Trainer(precision=...). Prints a JSON list with the
table ModelSummary logged ("" when it logged none); for RichModelSummary,
which draws with rich, the data it was given as ModelSummary's plain table.
"""
import json
import logging
import sys
import warnings

import lightning.pytorch as pl
import torch
from lightning.pytorch.callbacks import ModelSummary, RichModelSummary
from lightning.pytorch.utilities.model_summary.model_summary import _format_summary_table
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Summarized(pl.LightningModule):
    def __init__(self, model):
        super().__init__()
        if model == "docstring":
            self.net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
        elif model == "mixed":
            self.scale = nn.Parameter(torch.ones(3))
            self.encoder = nn.Sequential(nn.Linear(2, 4), nn.Tanh())
            self.head = nn.Linear(4, 1)
            self.head.requires_grad_(False)
        else:
            self.a = nn.Parameter(torch.zeros(1))
            self.b = nn.Parameter(torch.zeros(1))

    # Debian's torch 1.13 under Python 3.11 (lightning_scripted.py says why).
    def _register_sharded_tensor_state_dict_hooks_if_available(self):
        pass

    def training_step(self, batch, batch_idx):
        return sum((p ** 2).sum() for p in self.parameters() if p.requires_grad)

    def configure_optimizers(self):
        return torch.optim.SGD([p for p in self.parameters() if p.requires_grad], lr=0.01)


class Tables(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


drawn = []  # what RichModelSummary was given, as the plain table


class PlainRich(RichModelSummary):
    @staticmethod
    def summarize(summary_data, total_parameters, trainable_parameters, model_size,
                  **kwargs):
        drawn.append(_format_summary_table(total_parameters, trainable_parameters,
                                           model_size, *summary_data))


def fit(case):
    callback = (PlainRich if case["rich"] else ModelSummary)(max_depth=case["max_depth"])
    trainer = pl.Trainer(default_root_dir=case["dir"], callbacks=[callback], logger=False,
                         accelerator="cpu", enable_progress_bar=False,
                         enable_checkpointing=False, max_epochs=1,
                         precision=case["precision"])
    tables = Tables()
    log = logging.getLogger("lightning.pytorch.callbacks.model_summary")
    log.addHandler(tables)
    del drawn[:]
    try:
        trainer.fit(Summarized(case["model"]),
                    DataLoader(TensorDataset(torch.zeros(4, 2)), batch_size=1))
    finally:
        log.removeHandler(tables)
    shown = drawn + [m[1:] for m in tables.messages if m.startswith("\n")]
    return shown[0] if shown else ""


def main():
    warnings.simplefilter("ignore")
    logging.getLogger("lightning.pytorch").setLevel(logging.INFO)
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    json.dump([fit(c) for c in cases], sys.stdout)


if __name__ == "__main__":
    main()
