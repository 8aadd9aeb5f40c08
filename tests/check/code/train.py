import torch.distributed as dist


def train():
    dist.init_process_group("gloo")
    print(f"rank {dist.get_rank()} of {dist.get_world_size()}")


if __name__ == "__main__":
    train()
