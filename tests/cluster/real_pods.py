"""The Pods the real controllers make of a manifest, for `trainc run --manifests`.

    python3 tests/cluster/real_pods.py --kubeconfig FILE MANIFEST OUT

Creates MANIFEST's objects on the control plane tests/cluster/up started
(a job suspended for Kueue let run, as Kueue would once it admits it),
waits for the Pods the operators and the Job controller make of them, and
writes to OUT a `v1 List` of what a pod on the cluster would meet: those
Pods as the API server stores them (status, owner and managed fields cut:
no kubelet ran them), the Services in their namespace (the headless ones
the operators made give the pods their DNS names), and MANIFEST's ConfigMaps,
Secrets and claims, which the pods mount or read. Then it deletes what it made.
Suite 3 of .ci/check-cluster runs OUT with real torchrun: what trains is
what the cluster would run.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

import yaml

import pods as suite

# What the API server adds that is its own business, not the pod's.
CUT = ["managedFields", "ownerReferences", "uid", "resourceVersion", "creationTimestamp",
       "generation"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("manifest")
    parser.add_argument("out")
    args = parser.parse_args()
    manifest = Path(args.manifest)
    objects = [d for d in yaml.safe_load_all(manifest.read_text()) if d]
    namespaces = sorted({o["metadata"].get("namespace", "default") for o in objects})
    for namespace in namespaces:
        suite.kubectl(args, "create", "namespace", namespace, check=False)
    running = suite.unsuspended(manifest, Path(tempfile.mkdtemp()))
    suite.kubectl(args, "create", "-f", str(running))
    case = {"manifest": manifest}
    try:
        made = suite.wait_for_pods(args, set(namespaces), 1)
        if not made:
            sys.exit(f"error: no pods were made of {manifest} within {suite.PATIENCE} s")
        services = []
        for namespace in namespaces:
            listed = suite.kubectl(args, "get", "services", "-n", namespace, "-o", "json")
            services += [s for s in json.loads(listed.stdout)["items"]
                         if s["metadata"]["name"] != "kubernetes"]
        carried = [o for o in objects if o.get("kind") in ("ConfigMap", "Secret", "PersistentVolumeClaim")]
        items = [stored(o) for o in made + services] + carried
        Path(args.out).write_text(yaml.safe_dump_all(items, sort_keys=False))
        print(f"  {manifest.name}: {len(made)} pods made by the real controllers, "
              f"{len(services)} services")
    finally:
        suite.cleanup(args, case, Path(args.out + ".runtimes"))


def stored(obj):
    """An object as a manifest: what the server keeps for itself cut."""
    obj = json.loads(json.dumps(obj))
    obj.pop("status", None)
    for key in CUT:
        obj["metadata"].pop(key, None)
    # A Service's cluster IPs were given by this control plane.
    for key in ["clusterIP", "clusterIPs"]:
        if obj.get("kind") == "Service" and obj["spec"].get(key) not in ("None", ["None"]):
            obj["spec"].pop(key, None)
    return obj


if __name__ == "__main__":
    main()
