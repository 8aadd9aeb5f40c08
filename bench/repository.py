#!/usr/bin/env python3
"""The whole rendered output of a large training repository, for the verify
benchmark: 10,000 objects and about 20 MB in one stream, as
`kubectl kustomize ... | trainc verify -` sees it.

Each goldens' objects (trainc's own PyTorchJobs, TrainJobs, Jobs, Services,
claims and ConfigMaps) are repeated under new names beside what a repository
holds around them: Deployments, Secrets, ServiceAccounts, RoleBindings,
ConfigMaps of configuration, and Kueue LocalQueues that trainc does not check.
Deterministic: the same bytes on every run.

    python3 bench/repository.py OUT.yaml [OBJECTS [MEGABYTES]]
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

AROUND = [
    """apiVersion: apps/v1
kind: Deployment
metadata:
  name: NAME
  labels: {app: tensorboard, team: vision}
spec:
  replicas: 1_0
  selector:
    matchLabels: {app: tensorboard}
  template:
    metadata:
      labels: {app: tensorboard, team: vision}
    spec:
      serviceAccountName: trainer
      containers:
      - name: tensorboard
        image: tensorflow/tensorflow:2.16.1
        command: [tensorboard, --logdir, /runs, --bind_all]
        ports: [{containerPort: 6006, name: http}]
        env:
        - {name: TZ, value: UTC}
        - name: WANDB_API_KEY
          valueFrom: {secretKeyRef: {name: wandb, key: key}}
        resources:
          requests: {cpu: 500m, memory: 1Gi}
          limits: {cpu: "1", memory: 2Gi}
        readinessProbe:
          httpGet: {path: /, port: 6006}
          periodSeconds: 10
        volumeMounts: [{name: runs, mountPath: /runs, readOnly: true}]
      volumes:
      - name: runs
        persistentVolumeClaim: {claimName: runs}
      - name: config
        configMap: {name: config, defaultMode: 0644}
""",
    """apiVersion: v1
kind: Secret
metadata:
  name: NAME
type: Opaque
data:
  key: bm90LWEtcmVhbC1rZXktYnV0LWxvbmctZW5vdWdoLXRvLWxvb2stbGlrZS1vbmU=
stringData:
  HF_TOKEN: not-a-real-token
""",
    """apiVersion: v1
kind: ServiceAccount
metadata:
  name: NAME
automountServiceAccountToken: false
""",
    """apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: NAME
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}
subjects:
- {kind: ServiceAccount, name: trainer, namespace: ml}
""",
    """apiVersion: v1
kind: ConfigMap
metadata:
  name: NAME
data:
  train.yaml: |
FILLER""",
    """apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: NAME
spec:
  clusterQueue: cluster-queue
""",
]

def filler(lines):
    """A training configuration as a ConfigMap holds it, 60 bytes a line."""
    return "".join(
        f"    layer_{i:04}: {{width: {64 * (i + 1):6}, dropout: 0.1, act: gelu}}\n"
        for i in range(lines)
    )


def documents(text):
    return [d.strip("\n") + "\n" for d in re.split(r"^---\n", text, flags=re.M) if d.strip()]


def placed(document, namespace, name=None):
    """The object in `namespace` (and renamed to `name`)."""
    if name is not None:
        # The first `name:` under metadata is the object's.
        document = re.sub(r"^(metadata:\n(?:  .*\n)*?  name: ).*$",
                          lambda m: m.group(1) + name, document, count=1, flags=re.M)
    document = re.sub(r"^  namespace: .*\n", "", document, flags=re.M)
    return document.replace("\nmetadata:\n", f"\nmetadata:\n  namespace: {namespace}\n", 1)


def stream(goldens, around, wanted):
    """Copies of each golden build, each in a namespace of its own (so its
    references hold), with the objects around them, until `wanted`."""
    written = []
    copy = 0
    while len(written) < wanted:
        for name, objects in goldens:
            if len(written) + len(objects) > wanted:
                break
            written.extend(placed(o, f"c{copy}-{name}") for o in objects)
            for template in around:
                if len(written) < wanted:
                    written.append(placed(template, f"c{copy}-team", f"obj-{len(written)}"))
        while around and len(written) < wanted and len(written) + 8 > wanted:
            written.append(placed(around[len(written) % len(around)], "rest", f"obj-{len(written)}"))
        copy += 1
    return "---\n".join(written)


def golden_builds():
    """Each golden build for the current Trainer API (the default of
    verify), named for a namespace of its own, with its objects."""
    goldens = []
    for golden in sorted((ROOT / "golden").glob("*/*.yaml")):
        if "-v2." not in golden.name:
            # A namespace is a DNS-1123 label: no `.` (trainjob-v2.0/).
            name = f"{golden.parent.name}-{golden.stem}".replace(".", "-")
            goldens.append((name, documents(golden.read_text())))
    return goldens


def main():
    out = pathlib.Path(sys.argv[1])
    wanted = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    megabytes = float(sys.argv[3]) if len(sys.argv) > 3 else 20.0
    goldens = golden_builds()
    # ConfigMaps grow until the stream has the size asked for.
    lines = 16
    while True:
        around = [t.replace("FILLER", filler(lines)) for t in AROUND]
        text = stream(goldens, around, wanted)
        if len(text) >= megabytes * 1e6:
            break
        lines += 8
    out.write_text(text)
    print(f"{wanted} objects, {len(text) / 1e6:.1f} MB in {out}")


if __name__ == "__main__":
    main()
