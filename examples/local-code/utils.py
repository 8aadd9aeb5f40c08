import torch.distributed as dist


def log(message):
    """Print from rank 0 only."""
    if dist.get_rank() == 0:
        print(message, flush=True)
