#!/usr/bin/env python3
"""A small PyTorch trainer for Vertex AI tuning trials behind trialshim.

An MLP on the UCI handwritten digits (examples/digits/data/). It composes
conf/ with Hydra when installed, else with OmegaConf and the plain overrides
Hydra would take (key=value, +key=value, group=option), so it runs on a bare
Debian machine with python3-torch and python3-omegaconf. After every epoch it
reports hypertune.tag (a metric, or a list of them: one report each) as
cloudml-hypertune does and checkpoints durably to AIP_CHECKPOINT_DIR; on SIGTERM, SIGINT or SIGHUP it finishes the step,
checkpoints and dies of that signal; a restart resumes where it stopped, or,
when training had finished, reports the final metric again. A checkpoint of
another run (other settings) is moved aside, never resumed. The model goes to
AIP_MODEL_DIR. Started by `trialshim launch --nproc-per-node N`
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
    fsync_directory(directory)


def fsync_directory(directory):
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# What makes a checkpoint this run's: every setting that changes the training,
# not how long it runs (a finished run may go on with a larger max_epochs),
# where it writes or which metric it reports.
NOT_THE_RUN = ("trainer.max_epochs", "trainer.checkpoint_dir", "trainer.model_dir",
               "hypertune.tag")


def run_settings(cfg, world):
    from omegaconf import OmegaConf

    def flat(node, prefix=""):
        for key, value in node.items():
            if isinstance(value, dict):
                yield from flat(value, f"{prefix}{key}.")
            else:
                yield f"{prefix}{key}", value
    settings = dict(flat(OmegaConf.to_container(cfg, resolve=True)))
    settings = {k: v for k, v in settings.items() if k not in NOT_THE_RUN}
    settings["world_size"] = world  # the data order depends on it
    return settings


def differences(theirs, ours):
    if theirs is None:
        return "it does not record the settings it was trained with"
    keys = sorted(k for k in theirs.keys() | ours.keys() if theirs.get(k) != ours.get(k))
    show = lambda d, k: repr(d[k]) if k in d else "absent"
    said = [f"{k}: {show(theirs, k)} there, {show(ours, k)} here" for k in keys[:4]]
    return "; ".join(said) + (f"; and {len(keys) - 4} more" if len(keys) > 4 else "")


def move_aside(path):
    """last.pt -> last.<its time>.pt (-1, -2, ... if taken): kept, not resumed."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(os.path.getmtime(path)))
    base, n = path[:-len(".pt")] + "." + stamp, 0
    aside = base + ".pt"
    while os.path.exists(aside):
        n += 1
        aside = f"{base}-{n}.pt"
    os.rename(path, aside)
    fsync_directory(os.path.dirname(path))
    return aside


def load_checkpoint(path, settings, rank):
    """This run's checkpoint at `path`, or None: absent, or another run's
    (which rank 0 moves aside, saying so)."""
    try:
        state = torch.load(path)
    except FileNotFoundError:  # none, or rank 0 just moved another run's aside
        return None
    if state.get("run") == settings:
        return state
    why = differences(state.get("run"), settings)
    if rank == 0:
        aside = move_aside(path)
        print(f"train.py: {path} is another run's ({why}): moved it to {aside} "
              "and training from the start", file=sys.stderr, flush=True)
    return None


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
    # hypertune.tag: the metricId, or a list of them for a study with several
    # metrics (Vertex needs each one reported, else the trial is INFEASIBLE)
    tags = cfg.hypertune.tag
    tags = [tags] if isinstance(tags, str) else list(tags or [])
    if not tags or any(tag not in ("val_acc", "val_loss") for tag in tags):
        fail(f"hypertune.tag={cfg.hypertune.tag!r}: expected val_acc, val_loss "
             "or a list of them ([val_acc,val_loss])")
    width = as_int(cfg.model.width, "model.width")
    net = nn.Sequential(nn.Linear(64, width), acts[cfg.model.act](),
                        nn.Dropout(float(cfg.model.dropout)), nn.Linear(width, 10))
    if cfg.optimizer.name == "sgd":
        opt = torch.optim.SGD(net.parameters(), lr=float(cfg.optimizer.lr),
                              momentum=float(cfg.optimizer.momentum))
    else:
        opt = torch.optim.Adam(net.parameters(), lr=float(cfg.optimizer.lr))

    ckpt = os.path.join(local_path(cfg.trainer.checkpoint_dir), "last.pt")
    settings = run_settings(cfg, world)
    start_epoch, skip, metrics = 0, 0, None
    # Every rank resumes from the same (shared) file.
    state = load_checkpoint(ckpt, settings, rank)
    if state is not None:
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["rng"])
        start_epoch, skip, metrics = state["epoch"], state["batch"], state["metrics"]
        print(f"rank {rank}: resumed from epoch {start_epoch} batch {skip} ({ckpt})", flush=True)
    model = DistributedDataParallel(net) if world > 1 else net  # broadcasts rank 0's weights
    print(f"rank {rank} of {world}: {len(sampler)} training samples", flush=True)

    def checkpoint(epoch, batch):
        if rank == 0:
            save_durably({"epoch": epoch, "batch": batch, "model": net.state_dict(),
                          "optimizer": opt.state_dict(), "rng": torch.get_rng_state(),
                          "metrics": metrics, "run": settings}, ckpt)

    hypertune = None

    def report(epoch):
        nonlocal hypertune
        if rank == 0:
            hypertune = hypertune or HyperTune()
            for tag in tags:  # one report (one line) each, as several calls write
                hypertune.report_hyperparameter_tuning_metric(tag, metrics[tag], epoch + 1)
            print(f"epoch {epoch} val_loss={metrics['val_loss']:.4f} "
                  f"val_acc={metrics['val_acc']:.4f}", flush=True)

    if start_epoch >= epochs and metrics is not None:
        # Finished before (Vertex restarted the container, or the command ran
        # again): the trial's measurement is the last epoch's, once more.
        print(f"rank {rank}: training finished at epoch {start_epoch} "
              f"(trainer.max_epochs={epochs}); reporting epoch {start_epoch - 1} again",
              flush=True)
        report(start_epoch - 1)
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
        metrics = {"val_loss": F.cross_entropy(logits, val_y).item(),
                   "val_acc": (logits.argmax(1) == val_y).double().mean().item()}
        checkpoint(epoch + 1, 0)
        report(epoch)
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
              or re.search(r"^[^'\"\[{]*,|^\w+\(", value)):
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


def main():
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, on_signal)
    try:
        import hydra
    except ImportError:
        hydra = None  # not train() in here: its errors are not about Hydra
    if hydra is None:
        train(compose(sys.argv[1:]))
    else:
        hydra.main(version_base="1.3", config_path="conf", config_name="config")(train)()


if __name__ == "__main__":
    main()
