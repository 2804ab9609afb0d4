#!/usr/bin/env python3
"""bench/gpu_bench.cc's model in Python Lightning: steps per second.

    gpu_lightning.py small|large PRECISION [steps] [warmup]

The same network, batch, data (random, seed 0, a pinned DataLoader without
workers, handing out whole batches as bench/gpu_bench.cc's loader slices
them, so Python's per-row indexing is not what is measured), Adam at 1e-3 and per-step self.log of the loss; the timer runs
from the end of step `warmup` to the end of step warmup + steps, both after
torch.cuda.synchronize(). Prints one JSON line. tests/gpu/run.sh runs it
beside gpu_bench (bench/README.md).
"""
import json
import sys
import time
import warnings

import torch

try:
    import lightning.pytorch as pl
except ImportError:  # the package that ships only pytorch_lightning
    import pytorch_lightning as pl

SHAPES = {"small": (64, 64, 1, 64), "large": (1024, 4096, 3, 1024)}


def make_net(inp, hidden, layers):
    mods, width = [], inp
    for _ in range(layers):
        mods += [torch.nn.Linear(width, hidden), torch.nn.ReLU()]
        width = hidden
    mods.append(torch.nn.Linear(width, 10))
    return torch.nn.Sequential(*mods)


class Net(pl.LightningModule):
    def __init__(self, shape):
        super().__init__()
        self.net = make_net(*shape[:3])

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


class Timer(pl.Callback):
    def __init__(self, warmup, steps):
        self.warmup, self.steps, self.start, self.seconds = warmup, steps, 0.0, 0.0

    def on_train_batch_end(self, trainer, *args):
        if trainer.global_step == self.warmup:
            torch.cuda.synchronize()
            self.start = time.perf_counter()
        elif trainer.global_step == self.warmup + self.steps:
            torch.cuda.synchronize()
            self.seconds = time.perf_counter() - self.start


def main():
    model, precision = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    warmup = int(sys.argv[4]) if len(sys.argv) > 4 else 50
    shape = SHAPES[model]
    torch.manual_seed(0)
    rows = shape[3] * 16
    x, y = torch.randn(rows, shape[0]), torch.randint(0, 10, (rows,))
    batches = [(x[i:i + shape[3]], y[i:i + shape[3]])
               for i in range(0, rows, shape[3])]
    loader = torch.utils.data.DataLoader(batches, batch_size=None,
                                         pin_memory=True)
    timer = Timer(warmup, steps)
    warnings.filterwarnings("ignore")
    trainer = pl.Trainer(
        accelerator="gpu", devices=1, precision=precision,
        max_steps=warmup + steps, logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False,
        callbacks=[timer])
    torch.manual_seed(0)
    trainer.fit(Net(shape), loader)
    print(json.dumps({"runner": "lightning " + pl.__version__, "model": model,
                      "precision": precision, "steps": steps,
                      "seconds": round(timer.seconds, 6),
                      "steps_per_s": round(steps / timer.seconds, 2)}))


if __name__ == "__main__":
    main()
