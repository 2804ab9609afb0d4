#!/usr/bin/env python3
"""The digits MLP as a real Lightning + Hydra trainer, under the same config
tree as the C++ digits-train: examples/digits/conf-lightning, shaped like
lightning-hydra-template's configs/ (trainer/, callbacks/, logger/, paths/,
hydra/). The `_target_`s instantiate as Hydra does: Lightning's Trainer,
callbacks and loggers, torch's optimizer, and digits.py's data module and
network under the names the C++ program registers. After every epoch's
validation rank zero reports `hypertune.monitor` through cloudml-hypertune.

    python3 examples/lightning/train.py optimizer.lr=0.01 trainer.max_epochs=5
    trialshim --config-path examples/digits/conf-lightning --config-name config -- \
        python3 examples/lightning/train.py --optimizer.lr=0.01 --data.batch_size=32.0

`trainer.strategy=ddp trainer.devices=2` trains on two CPU processes (Gloo)
that Lightning starts itself; under trialshim with CLUSTER_SPEC they join the
replica's cluster (docs/distributed.md). Needs hydra-core, lightning and
cloudml-hypertune (the anchors environment: `make anchors`).
"""
import os

import hydra
import lightning.pytorch as pl
import torch
import torch.nn.functional as F
from hydra.core.hydra_config import HydraConfig
from hydra.utils import instantiate
from hypertune import HyperTune
from lightning.pytorch.callbacks import Checkpoint
from omegaconf import OmegaConf

import digits

# Keys of conf-lightning's trainer node that only trialshim's trainer takes
# (the seed and the resume rule are the run's, here as in the template).
NOT_LIGHTNING = ("seed", "ckpt_path", "num_threads", "on_nonfinite", "checkpoint_dir",
                 "model_dir")


class DigitsModule(pl.LightningModule):
    def __init__(self, net, optimizer, scheduler=None):
        super().__init__()
        self.net, self.optimizer, self.scheduler = net, optimizer, scheduler

    # Debian's torch 1.13 can not import torch.distributed._shard under
    # Python 3.11 (a dataclass default 3.11 refuses; fixed in torch 2.0);
    # Lightning 2.2 imports it here only for ShardedTensor state dicts.
    def _register_sharded_tensor_state_dict_hooks_if_available(self):
        pass

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("val_loss", F.cross_entropy(logits, y), sync_dist=True)
        self.log("val_acc", (logits.argmax(1) == y).double().mean(), prog_bar=True,
                 sync_dist=True)

    def configure_optimizers(self):
        optimizer = self.optimizer(params=self.parameters())
        if self.scheduler is None:
            return optimizer
        make, interval = self.scheduler
        total = self.trainer.estimated_stepping_batches if interval == "step" \
            else self.trainer.max_epochs
        return {"optimizer": optimizer,
                "lr_scheduler": {"scheduler": make(optimizer, total), "interval": interval}}


def scheduler_of(node):
    """(make(optimizer, total), interval) for conf-lightning's scheduler node:
    trialshim.trainer.Scheduler's cosine schedule as digits.py mirrors it,
    else a torch.optim.lr_scheduler partial as Hydra makes it."""
    if node is None:
        return None
    node = OmegaConf.to_container(node, resolve=True)
    interval = node.pop("interval", "epoch")
    if node.get("_target_") != "trialshim.trainer.Scheduler":
        partial = instantiate(node)
        return (lambda optimizer, total: partial(optimizer)), interval
    name = node.get("name", "none")
    if name == "none":
        return None
    if name != "cosine":
        raise ValueError(f"scheduler.name={name!r}: this trainer knows cosine and none")
    args = {k: node[k] for k in ("warmup", "warmup_start_factor", "min_lr_factor") if k in node}
    return (lambda optimizer, total: digits.cosine_warmup(optimizer, total, **args)), interval


class HypertuneReport(Checkpoint):
    """Rank zero reports `monitor` (as `tag`) after each epoch whose
    validation ran, with the global step and the newest checkpoint, as
    trialshim's trainer does. A Checkpoint (that saves nothing) because
    Lightning calls those last at an epoch's end, in order: after
    ModelCheckpoint has saved the epoch's files."""

    def __init__(self, monitor, tag=None):
        # a name or a list of them (one report each), as trialshim's
        # hypertune.monitor and hypertune.tag
        listed = lambda names: [names] if isinstance(names, str) else list(names or [])
        self.monitor = listed(monitor)
        self.tag = listed(tag) or self.monitor
        self.hypertune, self.validated = None, False

    def on_validation_end(self, trainer, pl_module):
        self.validated = not trainer.sanity_checking

    def on_train_epoch_end(self, trainer, pl_module):
        if not (self.validated and trainer.is_global_zero):
            return
        self.validated = False
        ckpt = trainer.checkpoint_callback
        path = (ckpt.last_model_path or ckpt.best_model_path) if ckpt else ""
        self.hypertune = self.hypertune or HyperTune()
        for monitor, tag in zip(self.monitor, self.tag):
            self.hypertune.report_hyperparameter_tuning_metric(
                tag, float(trainer.callback_metrics[monitor]), trainer.global_step, path)


class ShowProcess(pl.Callback):
    """One line per process at the start: who it is and who started it. It is
    printed, and written to process-<global rank>.txt in the run directory:
    the processes Lightning starts share their parent's stdout, where lines
    can interleave (unbuffered, as under trialshim, print writes the text and
    its newline apart)."""

    def on_fit_start(self, trainer, pl_module):
        env = getattr(trainer.strategy, "cluster_environment", None)
        line = (f"process {trainer.global_rank} of {trainer.world_size}: local rank "
                f"{trainer.local_rank}, node {trainer.node_rank}, "
                f"{type(env).__name__ if env else 'no cluster environment'}"
                + (f", master {env.main_address}:{env.main_port}" if env else ""))
        print(line, flush=True)
        run_dir = HydraConfig.get().runtime.output_dir
        with open(os.path.join(run_dir, f"process-{trainer.global_rank}.txt"), "w") as f:
            f.write(line + "\n")


def targets(group):
    """The `_target_` nodes of a callbacks:/logger: map (null entries skipped)."""
    return [instantiate(node) for node in (group or {}).values()
            if node is not None and "_target_" in node]


@hydra.main(version_base="1.3", config_path="../digits/conf-lightning", config_name="config")
def main(cfg):
    options = OmegaConf.to_container(cfg.trainer, resolve=True)
    for key in NOT_LIGHTNING:
        options.pop(key, None)
    pl.seed_everything(cfg.seed, workers=True)
    data = instantiate(cfg.data)
    torch.manual_seed(cfg.seed)  # the network's initial weights
    module = DigitsModule(instantiate(cfg.model), instantiate(cfg.optimizer),
                          scheduler_of(cfg.get("scheduler")))
    callbacks = targets(cfg.get("callbacks")) + [
        HypertuneReport(cfg.hypertune.monitor, cfg.hypertune.get("tag")), ShowProcess()]
    loggers = targets(cfg.get("logger"))
    trainer = instantiate(options, callbacks=callbacks, logger=loggers or False)
    trainer.fit(module, data, ckpt_path=cfg.get("ckpt_path"))
    # the template's get_metric_value, per name for a list (several
    # hydra.sweeper.direction): what the Optuna sweeper takes as the objective
    names = cfg.get("optimized_metric")
    if not names:
        return None
    values = [float(trainer.callback_metrics[name])
              for name in ([names] if isinstance(names, str) else names)]
    return values[0] if isinstance(names, str) else values


if __name__ == "__main__":
    main()
