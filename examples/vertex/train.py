#!/usr/bin/env python3
"""A small PyTorch trainer for Vertex AI tuning trials behind trialshim.

An MLP on the UCI handwritten digits (examples/digits/data/). It composes
conf/ with Hydra when installed, else with OmegaConf and the plain overrides
Hydra would take (key=value, +key=value, group=option), so it runs on a bare
Debian machine with python3-torch and python3-omegaconf. After every epoch it
reports hypertune.tag as cloudml-hypertune does and checkpoints durably to
AIP_CHECKPOINT_DIR; on SIGTERM, SIGINT or SIGHUP it finishes the step,
checkpoints and dies of that signal; a restart resumes where it stopped. The
model goes to AIP_MODEL_DIR. Started by `trialshim launch --nproc-per-node N`
(WORLD_SIZE > 1) it trains data-parallel over Gloo and only rank 0 writes.
"""
import collections
import gzip
import json
import os
import re
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

HERE = os.path.dirname(os.path.abspath(__file__))


class _HyperTune:
    """cloudml-hypertune's HyperTune, byte for byte, for when it is not installed."""

    def __init__(self):
        self.path = os.environ.get("CLOUD_ML_HP_METRIC_FILE", "/tmp/hypertune/output.metrics")
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.trial = str(os.environ.get("CLOUD_ML_TRIAL_ID", 0))
        self.entries = collections.deque(maxlen=100)

    def report_hyperparameter_tuning_metric(self, hyperparameter_metric_tag, metric_value,
                                            global_step=None, checkpoint_path=""):
        value = float(metric_value)
        self.entries.append({"timestamp": time.time(), "trial": self.trial,
                             hyperparameter_metric_tag or "training/hptuning/metric": str(value),
                             "global_step": str(int(global_step) if global_step else 0),
                             "checkpoint_path": checkpoint_path})
        with open(self.path, "w") as f:  # rewritten whole, as the original does
            for entry in self.entries:
                f.write(json.dumps(entry, sort_keys=True) + "\n")


try:
    from hypertune import HyperTune
except ImportError:
    HyperTune = _HyperTune


def fail(message):
    print(f"train.py: {message}", file=sys.stderr)
    sys.exit(2)


def as_int(value, key):
    """Vertex sends DISCRETE values as 64.0: an integral float is an int."""
    try:
        if float(value) == int(float(value)):
            return int(float(value))
    except (TypeError, ValueError):
        pass
    fail(f"{key}={value!r}: expected an integer")


def local_path(path):
    return "/gcs/" + path[len("gs://"):] if path.startswith("gs://") else path


def save_durably(obj, path):
    """Temp file beside `path`, fsync, rename over it, fsync the directory:
    a crash at any point leaves the old file or the new one."""
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        torch.save(obj, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def load_digits(cfg):
    candidates = [cfg.data.path] if cfg.data.path else [
        os.path.join(HERE, "data", "digits.csv.gz"),
        os.path.join(HERE, "..", "digits", "data", "digits.csv.gz")]
    path = next((p for p in map(local_path, candidates) if os.path.exists(p)), None)
    if path is None:
        fail(f"data.path: no digits data at {' or '.join(candidates)}")
    with gzip.open(path, "rt") as f:
        rows = torch.tensor([[int(v) for v in line.split(",")] for line in f if line.strip()])
    return rows[:, :64].float() / 16, rows[:, 64]


STOP = []  # the signals received; the step in progress finishes first


def on_signal(signum, frame):
    STOP.append(signum)


def stop_agreed(world):
    """True on every rank at the same step once any rank got a signal."""
    flag = torch.tensor([float(len(STOP))])
    if world > 1:
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    return flag.item() > 0


def train(cfg):
    torch.set_num_threads(1)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        dist.init_process_group("gloo", init_method="env://")
    rank = dist.get_rank() if world > 1 else 0
    seed, epochs = as_int(cfg.seed, "seed"), as_int(cfg.trainer.max_epochs, "trainer.max_epochs")
    torch.manual_seed(seed)

    x, y = load_digits(cfg)
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))
    n_val = round(len(y) * float(cfg.data.val_fraction))
    val_x, val_y = x[order[:n_val]], y[order[:n_val]]
    train_set = TensorDataset(x[order[n_val:]], y[order[n_val:]])
    sampler = DistributedSampler(train_set, num_replicas=world, rank=rank, seed=seed)
    loader = DataLoader(train_set, as_int(cfg.data.batch_size, "data.batch_size"), sampler=sampler)

    acts = {"relu": nn.ReLU, "gelu": nn.GELU, "tanh": nn.Tanh}
    if cfg.model.act not in acts:
        fail(f"model.act={cfg.model.act!r}: expected one of {', '.join(acts)}")
    if cfg.hypertune.tag not in ("val_acc", "val_loss"):
        fail(f"hypertune.tag={cfg.hypertune.tag!r}: expected val_acc or val_loss")
    width = as_int(cfg.model.width, "model.width")
    net = nn.Sequential(nn.Linear(64, width), acts[cfg.model.act](),
                        nn.Dropout(float(cfg.model.dropout)), nn.Linear(width, 10))
    if cfg.optimizer.name == "sgd":
        opt = torch.optim.SGD(net.parameters(), lr=float(cfg.optimizer.lr),
                              momentum=float(cfg.optimizer.momentum))
    else:
        opt = torch.optim.Adam(net.parameters(), lr=float(cfg.optimizer.lr))

    ckpt = os.path.join(local_path(cfg.trainer.checkpoint_dir), "last.pt")
    start_epoch, skip = 0, 0
    if os.path.exists(ckpt):  # every rank resumes from the same (shared) file
        state = torch.load(ckpt)
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["rng"])
        start_epoch, skip = state["epoch"], state["batch"]
        print(f"rank {rank}: resumed from epoch {start_epoch} batch {skip} ({ckpt})", flush=True)
    model = DistributedDataParallel(net) if world > 1 else net  # broadcasts rank 0's weights
    print(f"rank {rank} of {world}: {len(sampler)} training samples", flush=True)

    def checkpoint(epoch, batch):
        if rank == 0:
            save_durably({"epoch": epoch, "batch": batch, "model": net.state_dict(),
                          "optimizer": opt.state_dict(), "rng": torch.get_rng_state()}, ckpt)

    hypertune = None
    for epoch in range(start_epoch, epochs):
        sampler.set_epoch(epoch)  # the same order after a resume
        model.train()
        for batch, (xb, yb) in enumerate(loader):
            if batch < skip:
                continue
            opt.zero_grad()
            F.cross_entropy(model(xb), yb).backward()
            opt.step()
            if stop_agreed(world):
                checkpoint(epoch, batch + 1)
                if world > 1:
                    dist.barrier()  # the others wait until rank 0 has written
                sig = STOP[0] if STOP else signal.SIGTERM
                print(f"rank {rank}: {signal.Signals(sig).name}: checkpointed epoch {epoch} "
                      f"batch {batch + 1} to {ckpt}", flush=True)
                signal.signal(sig, signal.SIG_DFL)
                os.kill(os.getpid(), sig)  # die of it: the status says why
        skip = 0
        model.eval()
        with torch.no_grad():  # the whole validation set on every rank
            logits = net(val_x)
        val_loss = F.cross_entropy(logits, val_y).item()
        val_acc = (logits.argmax(1) == val_y).double().mean().item()
        checkpoint(epoch + 1, 0)
        if rank == 0:
            hypertune = hypertune or HyperTune()
            metric = {"val_acc": val_acc, "val_loss": val_loss}[cfg.hypertune.tag]
            hypertune.report_hyperparameter_tuning_metric(cfg.hypertune.tag, metric, epoch + 1)
            print(f"epoch {epoch} val_loss={val_loss:.4f} val_acc={val_acc:.4f}", flush=True)
    if rank == 0:
        save_durably(net.state_dict(), os.path.join(local_path(cfg.trainer.model_dir), "model.pt"))
    checksum = sum(p.double().sum().item() for p in net.parameters())
    print(f"rank {rank}: done, parameter checksum {checksum:.6f}", flush=True)
    if world > 1:
        dist.barrier()  # no rank leaves while rank 0 still writes
        # torch 1.13 can deadlock tearing DDP down: ~Reducer joins a Gloo
        # worker thread that waits for the GIL the joining thread holds
        # (seen here under load). Everything is written and flushed, so the
        # ranks leave without running destructors.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


PLAIN = re.compile(r"\+?[A-Za-z_][\w.-]*=")  # key=value and +key=value


def compose(argv):
    """conf/ and Hydra-style overrides without Hydra. What only Hydra can do
    (sweeps, ~key, ++key, key@package, hydra.*, flags) is refused by name."""
    from omegaconf import OmegaConf, open_dict
    from omegaconf.errors import OmegaConfBaseException

    conf = os.path.join(HERE, "conf")
    cfg = OmegaConf.load(os.path.join(conf, "config.yaml"))
    groups = {k: v for d in cfg.pop("defaults") if not isinstance(d, str) for k, v in d.items()}
    settings = []
    for arg in argv:
        key, _, value = arg.partition("=")
        if key in groups:
            groups[key] = value
        elif (not PLAIN.match(arg) or key.startswith(("hydra.", "+hydra."))
              or re.search(r"^[^'\"]*,|^\w+\(", value)):
            fail(f"cannot apply {arg!r} without Hydra (only key=value, +key=value and "
                 f"group=option; pip install hydra-core for the rest)")
        else:
            settings.append((key, value))
    for group, option in groups.items():
        path = os.path.join(conf, group, f"{option}.yaml")
        if not os.path.exists(path):
            options = sorted(f[:-5] for f in os.listdir(os.path.join(conf, group)))
            fail(f"{group}={option}: no {path}; options: {', '.join(options)}")
        cfg = OmegaConf.merge({group: OmegaConf.load(path)}, cfg)  # _self_ comes last
    OmegaConf.set_struct(cfg, True)
    for key, value in settings:
        parsed = OmegaConf.from_dotlist([f"v={value}"]).v  # YAML typing, as Hydra's
        try:
            if key.startswith("+"):
                with open_dict(cfg):
                    OmegaConf.update(cfg, key[1:], parsed)
            else:
                OmegaConf.update(cfg, key, parsed)
        except OmegaConfBaseException:
            fail(f"cannot override {key!r}: no such key in conf/ (+{key}=... adds one)")
    return cfg


if __name__ == "__main__":
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, on_signal)
    try:
        import hydra
    except ImportError:
        train(compose(sys.argv[1:]))
    else:
        hydra.main(version_base="1.3", config_path="conf", config_name="config")(train)()
