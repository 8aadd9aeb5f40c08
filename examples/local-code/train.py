"""A ResNet-18 on FakeData with DistributedDataParallel: the local code that
examples/local-code.toml runs on the stock pytorch/pytorch image."""

import os

import torch
import torch.distributed as dist
import torchvision
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

from utils import log


def train():
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend)
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device(f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)

    data = torchvision.datasets.FakeData(
        size=2048, image_size=(3, 64, 64), num_classes=10,
        transform=torchvision.transforms.ToTensor(),
    )
    loader = DataLoader(data, batch_size=64, sampler=DistributedSampler(data))
    model = DistributedDataParallel(
        torchvision.models.resnet18(num_classes=10).to(device),
        device_ids=[local_rank] if device.type == "cuda" else None,
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(2):
        loader.sampler.set_epoch(epoch)
        for images, labels in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(images.to(device)), labels.to(device))
            loss.backward()
            optimizer.step()
        log(f"epoch {epoch}: loss {loss.item():.3f}")
    dist.destroy_process_group()
