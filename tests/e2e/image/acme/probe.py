"""What every rank of an end-to-end run reports: one JSON line with the world
torchrun formed (rank, world size, node rank, local rank, host) and the result
of an all-reduce of the ranks, which every rank must agree on.

PROBE_FAIL_RANK=<rank> makes that rank raise after the all-reduce, for the
suite's failure cases."""

import json
import os
import socket

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    total = torch.tensor([float(rank)])
    dist.all_reduce(total)
    report = {
        "probe": 1,
        "rank": rank,
        "world": world,
        # Under torchrun; else one process per pod, told its rank by the
        # operator's RANK (a job that runs the image's entrypoint).
        "node": int(os.environ.get("GROUP_RANK", os.environ["RANK"])),
        "local": int(os.environ.get("LOCAL_RANK", "0")),
        "host": socket.gethostname(),
        "sum": int(total.item()),
    }
    # One write of a whole line: the pod's processes share its output, and
    # print() may write the text and its newline apart.
    os.write(1, (json.dumps(report, sort_keys=True) + "\n").encode())
    if os.environ.get("PROBE_FAIL_RANK") == str(rank):
        raise RuntimeError(f"rank {rank} fails, as PROBE_FAIL_RANK asks")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
