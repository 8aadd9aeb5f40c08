"""A few steps of DistributedDataParallel on synthetic data, on CPU (gloo):
enough to show that every rank found pod 0 and that they trained together."""

import os
import socket
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def say(line):
    """One write per line: torchrun starts `python -u`, where print() writes a
    line and its newline apart, and a pod's processes share one output."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    node = os.environ.get("GROUP_RANK", "?")
    say(f"rank {rank} of {world}: node rank {node} on {socket.gethostname()}")
    torch.manual_seed(0)
    model = DistributedDataParallel(torch.nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    data = torch.Generator().manual_seed(rank)
    for step in range(1, 101):
        x = torch.randn(32, 16, generator=data)
        loss = torch.nn.functional.mse_loss(model(x), x.sum(dim=1, keepdim=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if rank == 0 and step % 20 == 0:
            say(f"step {step}: loss {loss.item():.4f}")
    # Every rank done before any leaves: a rank that exits while another is
    # still inside the process group can abort it.
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        say(f"done: {world} processes trained one model")


if __name__ == "__main__":
    main()
