#!/usr/bin/python3
"""digits-train's default training as a plain PyTorch loop (Debian's
python3-torch, the same LibTorch 1.13): same data and split, model, batch
size, Adam 0.003, cosine schedule with 20 warmup steps, 30 epochs and
per-epoch validation. Batches are sliced from tensors (no DataLoader), as
the C++ side does. Prints one JSON line like trainer_bare_loop.

    digits_torch.py [threads] [epochs] [batch_size]
"""
import gzip
import json
import math
import os
import sys
import time

import torch

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 30
batch = int(sys.argv[3]) if len(sys.argv) > 3 else 64
torch.set_num_threads(threads)

here = os.path.dirname(os.path.abspath(__file__))
path = os.path.join(here, "..", "examples", "digits", "data", "digits.csv.gz")
rows = [list(map(int, line.split(","))) for line in gzip.open(path, "rt") if line.strip()]
data = torch.tensor(rows)
images = data[:, :64].float() / 16.0
labels = data[:, 64].long()

n = images.shape[0]
n_val = round(n * 0.2)
order = torch.randperm(n, generator=torch.Generator().manual_seed(42))
xv, yv = images[order[:n_val]], labels[order[:n_val]]
xt, yt = images[order[n_val:]], labels[order[n_val:]]

torch.manual_seed(42)
net = torch.nn.Sequential(
    torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Dropout(0.1),
    torch.nn.Linear(128, 64), torch.nn.ReLU(), torch.nn.Dropout(0.1),
    torch.nn.Linear(64, 10))
lr = 0.003
opt = torch.optim.Adam(net.parameters(), lr=lr)
per_epoch = (xt.shape[0] + batch - 1) // batch
total, warmup = epochs * per_epoch, 20


def lr_at(t):
    if t < warmup:
        return lr * (0.01 + 0.99 * t / warmup)
    p = (min(t, total) - warmup) / (total - warmup)
    return lr * 0.5 * (1 + math.cos(math.pi * p))


step, samples, seconds, acc = 0, 0, 0.0, 0.0
for e in range(epochs):
    t0 = time.perf_counter()
    net.train()
    g = torch.Generator().manual_seed((42 * 6364136223846793005 + e + 1) % 2**64)
    perm = torch.randperm(xt.shape[0], generator=g)
    for b in range(per_epoch):
        rows = perm[b * batch:(b + 1) * batch]
        x, y = xt[rows], yt[rows]
        for group in opt.param_groups:
            group["lr"] = lr_at(step)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.item()
        loss.backward()
        opt.step()
        step += 1
    dt = time.perf_counter() - t0
    if e > 0:
        samples += xt.shape[0]
        seconds += dt
    with torch.no_grad():
        net.eval()
        acc = (net(xv).argmax(1) == yv).double().mean().item()

print(json.dumps({"impl": "python-pytorch", "threads": threads, "batch": batch,
                  "samples_per_s": round(samples / seconds), "val_acc": round(acc, 4)}))
