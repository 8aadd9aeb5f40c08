#!/usr/bin/env python3
"""The training objects of a large repository alone, for the verify
benchmark against kubeconform: the goldens' own PyTorchJobs, TrainJobs,
Jobs, Services, claims and ConfigMaps, each copy of a golden build in a
namespace of its own (so its references hold), 10,000 objects by default.
Where the time of a training repository's CI gate goes: no small built-in
kinds around them (`repository.py` writes those too). Deterministic.

    python3 bench/training.py OUT.yaml [OBJECTS]
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from repository import golden_builds, placed  # noqa: E402


def main():
    out = pathlib.Path(sys.argv[1])
    wanted = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    goldens = golden_builds()
    written = []
    copy = 0
    while len(written) < wanted:
        for name, objects in goldens:
            for document in objects:
                if len(written) < wanted:
                    written.append(placed(document, f"c{copy}-{name}"))
        copy += 1
    text = "---\n".join(written)
    out.write_text(text)
    print(f"{wanted} objects, {len(text) / 1e6:.1f} MB in {out}")


if __name__ == "__main__":
    main()
