"""The `digits.*` targets of examples/digits/conf-lightning, in Python: the
same data split and network as the C++ digits-train registers under these
names (examples/digits/digits.cc), as a LightningDataModule and an nn.Module,
and trialshim's cosine-with-warmup schedule (trainer/scheduler.h) for the
conf's `trialshim.trainer.Scheduler` node.
"""
import gzip
import math
import os

import lightning.pytorch as pl
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

HERE = os.path.dirname(os.path.abspath(__file__))
PIXELS, CLASSES = 64, 10


class DigitsDataModule(pl.LightningDataModule):
    """gzipped CSV rows of 64 pixels (0-16) and a label; `val_fraction` held
    out by a permutation seeded with `split_seed`, as SplitDataModule."""

    def __init__(self, path=None, batch_size=64, val_fraction=0.2, split_seed=0):
        super().__init__()
        self.path = path or os.path.join(HERE, "..", "digits", "data", "digits.csv.gz")
        self.batch_size, self.val_fraction, self.split_seed = batch_size, val_fraction, split_seed

    def setup(self, stage=None):
        with gzip.open(self.path, "rt") as f:
            rows = torch.tensor([[int(v) for v in line.split(",")] for line in f if line.strip()])
        x, y = rows[:, :PIXELS].float() / 16, rows[:, PIXELS]
        order = torch.randperm(len(y), generator=torch.Generator().manual_seed(self.split_seed))
        n_val = round(len(y) * self.val_fraction)
        self.val = TensorDataset(x[order[:n_val]], y[order[:n_val]])
        self.train = TensorDataset(x[order[n_val:]], y[order[n_val:]])

    def train_dataloader(self):
        return DataLoader(self.train, batch_size=self.batch_size, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.val, batch_size=256)


def MLP(hidden=(128, 64), dropout=0.1):
    """Linear + ReLU (+ Dropout) per hidden width, then the 10 classes."""
    layers, width = [], PIXELS
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()] + ([nn.Dropout(dropout)] if dropout > 0 else [])
        width = h
    return nn.Sequential(*layers, nn.Linear(width, CLASSES))


def cosine_warmup(optimizer, total, warmup=0, warmup_start_factor=0.01, min_lr_factor=0.0):
    """Linear warmup from base * warmup_start_factor to base over `warmup`
    counts, then a half cosine down to base * min_lr_factor at `total`."""
    total = max(total, warmup + 1)

    def scale(count):
        if count < warmup:
            return warmup_start_factor + (1 - warmup_start_factor) * count / warmup
        progress = (min(count, total) - warmup) / (total - warmup)
        return min_lr_factor + (1 - min_lr_factor) * 0.5 * (1 + math.cos(math.pi * progress))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, scale)
