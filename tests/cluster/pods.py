"""Suite 2, pods: are the Pods `trainc describe --pods` states the ones the
real controllers make?

    python3 tests/cluster/pods.py --trainc BIN --kubeconfig FILE \
        --table docs/pods.md [--check] [--save DIR]

Every example, built for every target it builds for (a TrainJob at the
Trainer API level the control plane runs), is created for real on the
control plane tests/cluster/up started: the Training Operator, JobSet,
Trainer and the Job controller make its Pods, which stay Pending (no
scheduler, no kubelet). Each described Pod (`describe --pods --format json`)
is matched to a real one by its name (a Job's pods by `generateName`) and
compared field by field for what describe states: labels and annotations
(each described one must be there, the same), hostname and subdomain, and
each container's command, args, env (every variable, its value or source,
both ways), resources, ports and volume mounts, and the pod's volumes. The
API server's defaults (a `fieldRef`'s `apiVersion: v1`, a volume's
`defaultMode: 420`, a port's `protocol: TCP`, a request of what a container
only limits) count as unstated. A job suspended for Kueue is let run, as
Kueue would once it admits it.

A difference is listed in tests/cluster/pods-differences.yaml with its reason
and citation, or it fails the run; a listing that no longer happens fails it
too. --save writes the real Pods of each case there (for `trainc run
--manifests`, the third suite). The table is written to --table; with
--check it must be the checked-in one.
"""

import argparse
import fnmatch
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

import admission

ROOT = Path(__file__).resolve().parents[2]
DIFFERENCES = Path(__file__).with_name("pods-differences.yaml")
TARGETS = ["pytorchjob", "trainjob", "jobset", "job"]
RUNTIMES = "examples/runtimes/team.yaml"
# How long the controllers get to make a case's pods, and how long the
# count must hold still to be the whole.
PATIENCE, SETTLED = 90, 4
CONTAINER_FIELDS = ["command", "args", "resources", "ports", "volumeMounts", "env"]


def arguments():
    """The options of a suite that creates cases on the control plane and
    writes a table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--trainc", required=True)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--only", help="the cases whose name matches this fnmatch pattern")
    return parser


def main():
    parser = arguments()
    parser.add_argument("--save", help="write each case's real Pods here, one file per case")
    args = parser.parse_args()
    known = yaml.safe_load(DIFFERENCES.read_text()) or []
    used, failures, rows = set(), [], []
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        for case in cases(args.trainc, scratch):
            if args.only and not fnmatch.fnmatch(case["name"], args.only):
                continue
            row = run_case(args, case, scratch)
            for difference in row["differences"]:
                listed = listing(known, case["name"], difference)
                if listed is None:
                    failures.append(f"{case['name']}: {difference}")
                else:
                    used.add(listed)
                    row.setdefault("reasons", set()).add(listed)
            rows.append(row)
    if not args.only:
        failures += unused(known, used, DIFFERENCES)
    table = render(rows, known)
    if not args.only:
        failures += admission.write_table(args.table, table, args.check)
    pods = sum(row["compared"] for row in rows)
    print(f"  pods: {len(rows)} cases, {pods} pods made by the real controllers compared with "
          f"describe's; {sum(len(r['differences']) for r in rows)} differences, each listed with its reason")
    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)
    sys.exit(1 if failures else 0)


def cases(trainc, scratch):
    """Every example at every target it builds for, built, with describe's pods."""
    found = []
    for example in sorted(list(ROOT.glob("examples/*.toml")) + list(ROOT.glob("examples/*.yaml"))):
        for target in TARGETS:
            extra = ["--api-level", "v2.3"] if target == "trainjob" else []
            built = run([trainc, "build", "--target", target, *extra, str(example)])
            if built.returncode != 0:
                continue  # not an example for this target
            described = run([trainc, "describe", "--pods", "--format", "json", "--target", target,
                             *extra, str(example)])
            if described.returncode != 0:
                sys.exit(f"error: describe --pods --format json failed on {example.name} --target "
                         f"{target}: {described.stderr}")
            name = f"{example.stem} --target {target}"
            manifest = scratch / f"{example.stem}.{target}.yaml"
            manifest.write_text(built.stdout)
            found.append({"name": name, "manifest": manifest,
                          "pods": json.loads(described.stdout)["items"]})
    return found


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def kubectl(args, *words, check=True):
    done = run(["kubectl", "--kubeconfig", args.kubeconfig, *words])
    if check and done.returncode != 0:
        sys.exit(f"error: kubectl {' '.join(words)}: {done.stderr.strip()}")
    return done


def run_case(args, case, scratch):
    """Creates the case's objects, waits for its pods, compares, deletes."""
    objects = [d for d in yaml.safe_load_all(case["manifest"].read_text()) if d]
    namespaces = {o["metadata"].get("namespace", "default") for o in objects}
    namespaces |= {p["metadata"].get("namespace", "default") for p in case["pods"]}
    for namespace in sorted(namespaces):
        kubectl(args, "create", "namespace", namespace, check=False)
    # A PriorityClass the pods name is the cluster's: without it the API
    # server refuses the pods (the Priority admission plugin).
    for priority in sorted({p["spec"].get("priorityClassName") for p in case["pods"]} - {None}):
        kubectl(args, "create", "priorityclass", priority, "--value=1000", check=False)
    runtimes = scratch / "runtimes.yaml"
    if "team-runtime" in case["name"]:
        # The team's runtime, in the namespace the TrainJob runs in.
        documents = list(yaml.safe_load_all((ROOT / RUNTIMES).read_text()))
        items = [i for d in documents if d for i in d.get("items", [d])]
        for item in items:
            item["metadata"]["namespace"] = next(iter(namespaces))
        runtimes.write_text(yaml.safe_dump_all(items))
        kubectl(args, "apply", "-f", str(runtimes))
    created = kubectl(args, "create", "-f", str(unsuspended(case["manifest"], scratch)), check=False)
    row = {"case": case["name"], "described": len(case["pods"]), "made": 0, "compared": 0,
           "differences": []}
    if created.returncode != 0:
        row["differences"].append(f"the server refused the objects: {created.stderr.strip()[:300]}")
        cleanup(args, case, runtimes)
        return row
    real = wait_for_pods(args, namespaces, len(case["pods"]))
    row["made"] = len(real)
    if args.save:
        Path(args.save).mkdir(parents=True, exist_ok=True)
        name = case["name"].replace(" --target ", ".")
        (Path(args.save) / f"{name}.json").write_text(json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": real}, indent=1, sort_keys=True))
    waiting = waiting_jobs(args, namespaces)
    by_key = {key(pod): pod for pod in real}
    for pod in case["pods"]:
        mine = key(pod)
        theirs = by_key.pop(mine, None)
        if theirs is None:
            job = pod["metadata"].get("labels", {}).get("jobset.sigs.k8s.io/replicatedjob-name")
            if job not in waiting:
                row["differences"].append(f"{mine}: described, not made")
            continue
        row["compared"] += 1
        row["differences"] += [f"{mine}: {d}" for d in compare(pod, theirs)]
    for extra in sorted(by_key):
        row["differences"].append(f"{extra}: made, not described")
    cleanup(args, case, runtimes)
    return row


def unsuspended(manifest, scratch):
    """The manifest with its job let run, as Kueue lets a queued job run once
    it admits it (no Kueue runs here): `suspend: true` made false."""
    objects = [item for d in yaml.safe_load_all(manifest.read_text()) if d
               for item in (d.get("items") or [] if d.get("kind") == "List" else [d])]
    for obj in objects:
        spec = obj.get("spec") or {}
        for holder in [spec, spec.get("runPolicy") or {}]:
            if holder.get("suspend") is True:
                holder["suspend"] = False
    # JSON, not YAML: a string such as `1e-4` that PyYAML writes bare would
    # be read back as a number.
    out = scratch / f"running.{manifest.stem}.json"
    out.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    return out


def key(pod):
    meta = pod["metadata"]
    return meta.get("generateName") or meta["name"]


def wait_for_pods(args, namespaces, expected, settle=SETTLED):
    """The pods of `namespaces` once their count reaches `expected` and
    holds still `settle` seconds (or holds still three times SETTLED short
    of it), at most PATIENCE seconds."""
    deadline = time.monotonic() + PATIENCE
    last, since = -1, time.monotonic()
    while True:
        pods = []
        for namespace in sorted(namespaces):
            listed = kubectl(args, "get", "pods", "-n", namespace, "-o", "json")
            pods += json.loads(listed.stdout)["items"]
        now = time.monotonic()
        if len(pods) != last:
            last, since = len(pods), now
        settled = (now - since >= settle and len(pods) >= expected) or now - since >= 3 * SETTLED
        if (pods and settled) or now > deadline:
            return pods
        time.sleep(0.5)


def waiting_jobs(args, namespaces):
    """Replicated jobs of the real JobSets that wait for others (`dependsOn`):
    with no kubelet their pods are never made."""
    waiting = set()
    for namespace in sorted(namespaces):
        listed = kubectl(args, "get", "jobsets", "-n", namespace, "-o", "json", check=False)
        if listed.returncode != 0:
            continue
        for jobset in json.loads(listed.stdout)["items"]:
            for rjob in jobset["spec"].get("replicatedJobs", []):
                if rjob.get("dependsOn"):
                    waiting.add(rjob["name"])
    return waiting


def cleanup(args, case, runtimes):
    """Deletes what the case made, and waits until it is gone (the pods with
    their owners, through the garbage collector), so that the next case
    meets none of it."""
    kubectl(args, "delete", "-f", str(case["manifest"]), "--wait=false", "--ignore-not-found",
            check=False)
    if runtimes.exists():
        kubectl(args, "delete", "-f", str(runtimes), "--ignore-not-found", check=False)
        runtimes.unlink()
    namespaces = {item["metadata"].get("namespace", "default")
                  for o in yaml.safe_load_all(case["manifest"].read_text()) if o
                  for item in o.get("items", [o])}
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        left = kubectl(args, "get", "-f", str(case["manifest"]), "--ignore-not-found", "-o", "name",
                       check=False).stdout.split()
        for namespace in namespaces:
            listed = kubectl(args, "get", "pods", "-n", namespace, "-o", "json")
            for pod in json.loads(listed.stdout)["items"]:
                left.append(pod["metadata"]["name"])
                # Nothing runs them: no kubelet confirms their end.
                kubectl(args, "delete", "pod", "-n", namespace, pod["metadata"]["name"],
                        "--grace-period=0", "--force", "--wait=false", check=False)
        if not left:
            return
        time.sleep(0.5)
    sys.exit(f"error: what {case['manifest'].name} made was not gone 90 s after its deletion")


def defaulted(pod):
    """A pod with what the API server defaults on every create (kubernetes
    v1.36.3 `pkg/apis/core/v1/defaults.go`): a container's request of what
    it limits and does not request is its limit (`SetDefaults_Pod`), and with
    `hostNetwork` a port's `hostPort` is its `containerPort`
    (`SetDefaults_PodSpec`)."""
    pod = json.loads(json.dumps(pod))
    spec = pod["spec"]
    for kind in ["initContainers", "containers"]:
        for container in spec.get(kind) or []:
            resources = container.get("resources") or {}
            limits = resources.get("limits") or {}
            if limits:
                requests = resources.setdefault("requests", {})
                for name, amount in limits.items():
                    requests.setdefault(name, amount)
            if spec.get("hostNetwork"):
                for port in container.get("ports") or []:
                    port.setdefault("hostPort", port.get("containerPort"))
    return pod


def compare(mine, theirs):
    """What describe states of a pod that the real pod does not have."""
    mine = defaulted(mine)
    out = []
    for field in ["labels", "annotations"]:
        for k, v in (mine["metadata"].get(field) or {}).items():
            real = (theirs["metadata"].get(field) or {}).get(k)
            if real != v:
                out.append(f"metadata.{field}[{k}]: described {v!r}, made {real!r}")
    for field in ["hostname", "subdomain"]:
        if mine["spec"].get(field) != theirs["spec"].get(field):
            out.append(f"spec.{field}: described {mine['spec'].get(field)!r}, "
                       f"made {theirs['spec'].get(field)!r}")
    for kind in ["initContainers", "containers"]:
        real = {c["name"]: c for c in theirs["spec"].get(kind) or []}
        described = {c["name"]: c for c in mine["spec"].get(kind) or []}
        if set(real) != set(described):
            out.append(f"spec.{kind}: described {sorted(described)}, made {sorted(real)}")
        for name in sorted(set(real) & set(described)):
            for field in CONTAINER_FIELDS:
                a, b = normal(field, described[name].get(field)), normal(field, real[name].get(field))
                if a != b:
                    out.append(f"{kind}[{name}].{field}: described {short(a)}, made {short(b)}")
    a = normal("volumes", mine["spec"].get("volumes"))
    b = normal("volumes", theirs["spec"].get("volumes"))
    if a != b:
        out.append(f"spec.volumes: described {short(a)}, made {short(b)}")
    return out


def normal(field, value):
    """A field without what the API server defaults, in a comparable order."""
    if value in (None, [], {}):
        return None
    if field == "env":
        out = {}
        for var in value:
            source = json.loads(json.dumps(var.get("valueFrom") or {}))
            if source.get("fieldRef", {}).get("apiVersion") == "v1":
                del source["fieldRef"]["apiVersion"]
            if "resourceFieldRef" in source:
                source["resourceFieldRef"].pop("divisor", None) if source["resourceFieldRef"].get("divisor") in ("0", 0) else None
            out[var["name"]] = var.get("value", "") if not source else source
        return out
    if field == "ports":
        return sorted(({**p, "protocol": p.get("protocol", "TCP")} for p in value),
                      key=lambda p: json.dumps(p, sort_keys=True))
    if field == "resources":
        return {side: {k: quantity(v) for k, v in (value.get(side) or {}).items()}
                for side in ["limits", "requests"] if value.get(side)} or None
    if field == "volumeMounts":
        return sorted(value, key=lambda m: json.dumps(m, sort_keys=True))
    if field == "volumes":
        out = {}
        for volume in value:
            volume = json.loads(json.dumps(volume))
            for source in ["configMap", "secret", "projected", "downwardAPI"]:
                if (volume.get(source) or {}).get("defaultMode") == 420:
                    del volume[source]["defaultMode"]
            if (volume.get("hostPath") or {}).get("type") == "":
                del volume["hostPath"]["type"]
            if "emptyDir" in volume and volume["emptyDir"].get("sizeLimit"):
                volume["emptyDir"]["sizeLimit"] = quantity(volume["emptyDir"]["sizeLimit"])
            out[volume.pop("name")] = volume
        return out
    return value


SUFFIXES = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
            "n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
            "P": 1e15, "E": 1e18}


def quantity(text):
    """A quantity's value, so that `1000m` and `1` compare equal."""
    text = str(text)
    for suffix in sorted(SUFFIXES, key=len, reverse=True):
        if suffix and text.endswith(suffix):
            try:
                return round(float(text[: -len(suffix)]) * SUFFIXES[suffix], 6)
            except ValueError:
                return text
    try:
        return round(float(text), 6)
    except ValueError:
        return text


def short(value):
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 400 else text[:400] + "…"


def listing(known, case, difference):
    for index, entry in enumerate(known):
        if fnmatch.fnmatch(case, entry["case"]) and fnmatch.fnmatch(difference, entry["difference"]):
            return index
    return None


def render(rows, known):
    agree = sum(1 for row in rows if not row["differences"])
    pods = sum(row["compared"] for row in rows)
    lines = [
        "# Pods: trainc describe against the real controllers",
        "",
        "Generated by `.ci/check-cluster` (tests/cluster/pods.py); CI fails when",
        "this file is not what it finds. Each example, built for each target, is",
        "created on a control plane where the Training Operator v1.9.4, JobSet",
        "v0.12.0, Kubeflow Trainer v2.3.0 and Kubernetes v1.36.3's Job controller",
        "make its Pods; `trainc describe --pods --format json` states them",
        "beforehand. Each described Pod is compared with the one made: labels and",
        "annotations, hostname and subdomain, each container's command, args, env,",
        "resources, ports and mounts, and the volumes.",
        "",
        f"**{len(rows)} cases, {pods} pods compared: {agree} cases agree in every field**;"
        " each difference is listed below with its reason",
        "(tests/cluster/pods-differences.yaml).",
        "",
        "| case | pods described | made | compared | differences |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        reasons = ", ".join(f"({i + 1})" for i in sorted(row.get("reasons", ())))
        lines.append(f"| {row['case']} | {row['described']} | {row['made']} | {row['compared']} | "
                     f"{len(row['differences'])} {reasons} |")
    lines += listed_reasons(known, "## The differences, and why")
    return "\n".join(lines) + "\n"


def listed_reasons(known, heading):
    """A listing's entries, numbered as the table refers to them."""
    lines = ["", heading, ""] if known else []
    for index, entry in enumerate(known):
        reason = " ".join(entry["reason"].split())
        lines.append(f"{index + 1}. `{entry['case']}`: `{entry['difference']}`: {reason}")
    return lines


def unused(known, used, listing):
    """A failure for each entry of `listing` that no run used."""
    return [f"{listing.name} lists a difference that no longer happens: "
            f"{entry['case']}: {entry['difference']}"
            for index, entry in enumerate(known) if index not in used]


if __name__ == "__main__":
    main()
