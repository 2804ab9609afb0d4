"""A Gloo all-reduce over every rank, rendezvous through env:// as torchrun's
workers do it. Prints "rank R of W: sum S" (S = 1 + 2 + ... + W when every
rank took part)."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo", init_method="env://")
rank, world = dist.get_rank(), dist.get_world_size()
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
print(f"rank {rank} of {world}: sum {int(t.item())}", flush=True)
dist.barrier()
dist.destroy_process_group()
