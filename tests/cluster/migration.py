"""Suite 4, migration: does a migrated job run the way the original did, or
does the migrate report say what changes?

    python3 tests/cluster/migration.py --trainc BIN --kubeconfig FILE \
        --table docs/migration.md [--check] [--only PATTERN]

Each case is a manifest with PyTorchJobs: every one of tests/migrate that
migrates, and each of Kubeflow's own examples (tests/upstream/kubeflow-
trainer-v1.9.2) and of the import cases (tests/import); one that migrate
refuses (elastic, a Master unlike its Workers, invalid) is listed with the
reason. On the control plane tests/cluster/up started, the original is
created and the real Training Operator v1.9.4 makes its Pods; then `trainc
migrate --api-level v2.3` of it (for this cluster's releases, whatever a
case's own `# args:` say) is created and the real Trainer v2.3.0 (with
JobSet v0.12.0 and the Job controller) makes the TrainJob's. What each
Pod's program reads is worked out from the Pods as made (program_view.py:
the kubelet's environment, and torchrun's for each process where the
command starts it), and the two sides are compared job by job and pod by
pod, the Master and the Workers in order against the TrainJob's nodes:

  names    the pod's name (a Job's pod by its hostname)
                                  `pod_names`, naming both (or the first
                                  three and the count)
  world    processes per pod, node rank, world size under torchrun; the
           world's variables a program that is not torchrun reads
                                  `world`; `command` for torchrun's node
                                  rank; `env` or `command` naming the
                                  variable
  address  the pod rank 0's address reaches (names mapped old to new)
                                  `pod_names` (its new address),
                                  `command` (torchrun's rendezvous)
  port     the rendezvous port    `pod_names` ("port N (was M)")
  env      every other variable the program read, its value with the
           pods' names mapped old to new
                                  `env` or `command`, naming it

A variable only the new pods have is no difference: no program of the
old job read it. torchrun's `PET_*` are compared as the world torchrun
forms of them, and as variables where the command is a script or the
image's entrypoint, which may start torchrun itself.

A difference the report does not name fails the run, unless
tests/cluster/migration-differences.yaml lists it with its reason; a
listing that no longer happens fails it too. The table is written to
--table; with --check it must be the checked-in one.
"""

import fnmatch
import json
import re
import sys
import tempfile
from pathlib import Path

import yaml

import admission
import pods as suite
import program_view

ROOT = Path(__file__).resolve().parents[2]
DIFFERENCES = Path(__file__).with_name("migration-differences.yaml")
UPSTREAM = "tests/upstream/kubeflow-trainer-v1.9.2"
# Which report entries may say each kind of difference.
CODES = {"names": ["pod_names"], "port": ["pod_names"], "address": ["pod_names", "command", "env"],
         "world": ["world", "command", "env"], "env": ["env", "command"]}


def main():
    parser = suite.arguments()
    parser.add_argument("--show", action="store_true", help="print each pod's view")
    args = parser.parse_args()
    known = yaml.safe_load(DIFFERENCES.read_text()) or [] if DIFFERENCES.exists() else []
    used, failures, rows = set(), [], []
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        for name, manifest, must in cases():
            if args.only and not fnmatch.fnmatch(name, args.only):
                continue
            row = run_case(args, name, manifest, must, scratch)
            for difference in row["unnamed"]:
                listed = suite.listing(known, name, difference)
                if listed is None:
                    failures.append(f"{name}: the migrate report does not say: {difference}")
                else:
                    used.add(listed)
                    row.setdefault("reasons", set()).add(listed)
            failures += [f"{name}: {problem}" for problem in row["problems"]]
            rows.append(row)
    if not args.only:
        failures += suite.unused(known, used, DIFFERENCES)
        failures += admission.write_table(args.table, render(rows, known), args.check)
    rows_compared = [r for r in rows if "refused" not in r]
    before = sum(r["pods"][0] for r in rows)
    after = sum(r["pods"][1] for r in rows)
    print(f"  migration: {len(rows_compared)} cases migrated, {len(rows) - len(rows_compared)} "
          f"refused; {before} pods of the Training Operator against {after} "
          f"of Trainer; {sum(len(r['named']) for r in rows)} differences the report names, "
          f"{sum(len(r['unnamed']) for r in rows)} it does not")
    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)
    sys.exit(1 if failures else 0)


def cases():
    """Each manifest of tests/migrate that migrate takes (exit 0 in its case
    file), and every manifest with a PyTorchJob among Kubeflow's own
    examples and the import cases: (name, manifest, whether migrate must
    take it)."""
    found = []
    for manifest in sorted(ROOT.glob("tests/migrate/*.yaml")):
        expected = manifest.with_suffix(".stderr")
        if expected.exists() and expected.read_text().startswith("exit: 0") and jobs_in(manifest):
            found.append((f"migrate/{manifest.stem}", manifest, True))
    for folder, label in [(UPSTREAM, "kubeflow"), ("tests/import", "import")]:
        for manifest in sorted(ROOT.glob(f"{folder}/*.yaml")):
            if jobs_in(manifest):
                found.append((f"{label}/{manifest.stem}", manifest, False))
    return found


def jobs_in(manifest):
    try:
        objects = [d for d in yaml.safe_load_all(manifest.read_text()) if d]
    except yaml.YAMLError:
        return False
    return any(isinstance(o, dict) and item.get("kind") == "PyTorchJob"
               for o in objects for item in (o.get("items") or [o] if isinstance(o, dict) else []))


def run_case(args, name, manifest, must, scratch):
    row = {"case": name, "pods": (0, 0), "worlds": ("", ""), "named": [], "unnamed": [],
           "problems": []}
    migrated = suite.run([args.trainc, "migrate", "--color", "never", "--api-level", "v2.3",
                          str(manifest)])
    if migrated.returncode == 1 and not must:
        # An elastic job, a Master unlike its Workers: refused with the
        # reason, and nothing to compare.
        row["refused"] = next((text.split("error: ", 1)[1].split(" ╭─")[0]
                               for _, text in warnings(migrated.stderr) if "error: " in text),
                              migrated.stderr.strip().splitlines()[-1])
        return row
    if migrated.returncode != 0:
        row["problems"].append(f"trainc migrate exited {migrated.returncode}: {migrated.stderr[-600:]}")
        return row
    report = warnings(migrated.stderr)
    after = scratch / f"{manifest.stem}.migrated.yaml"
    after.write_text(migrated.stdout)
    original = [d for d in yaml.safe_load_all(manifest.read_text()) if d]
    objects = [i for o in original for i in o.get("items", [o])]
    old, old_services = made(args, manifest, scratch, row)
    new, new_services = made(args, after, scratch, row)
    if row["problems"]:
        return row
    jobs = [(o["metadata"].get("namespace", "default"), o["metadata"]["name"])
            for o in objects if o.get("kind") == "PyTorchJob"]
    old, new = trained(old, "pytorch"), trained(new, "node")
    worlds = ([], [])
    for job in jobs:
        mine = [(p, c) for p, c in old if job_of(p) == job]
        theirs = [(p, c) for p, c in new if job_of(p) == job]
        row["pods"] = (row["pods"][0] + len(mine), row["pods"][1] + len(theirs))
        views = [see(side, services, objects) for side, services in
                 [(mine, old_services), (theirs, new_services)]]
        for index, side in enumerate(views):
            worlds[index].append(world(side))
        if args.show:
            for label, pods, side in [("before", mine, views[0]), ("after", theirs, views[1])]:
                for (pod, _), seen in zip(pods, side):
                    print(f"  {name} {label} {pod['metadata']['name']}: "
                          f"{json.dumps({k: v for k, v in seen.items() if k != 'env'})}")
                    print(f"      env {json.dumps(seen['env'], sort_keys=True)}")
        for kind, difference, subject in differences(mine, theirs, views):
            if named(report, kind, subject):
                row["named"].append((kind, difference))
            else:
                row["unnamed"].append(difference)
    row["worlds"] = tuple("; ".join(w) for w in worlds)
    return row


def job_of(pod):
    """The (namespace, name) of the job that made a pod: the PyTorchJob's,
    or the TrainJob's (its JobSet has its name)."""
    labels = pod["metadata"].get("labels") or {}
    return (pod["metadata"].get("namespace", "default"),
            labels.get("training.kubeflow.org/job-name") or labels.get("jobset.sigs.k8s.io/jobset-name"))


def see(pods, services, objects):
    """Each pod's program view, with the pod its rank 0 address (and each
    variable) reaches."""
    out = []
    for pod, container in pods:
        seen = program_view.view(pod, container, objects)
        namespace = pod["metadata"].get("namespace", "default")
        reach = lambda address: program_view.resolves_to(  # noqa: E731
            address, namespace, [p for p, _ in pods], services)
        seen["reaches"] = reach(seen["master"])
        seen["reaches_of"] = {var: reach(value) for var, value in seen["env"].items()}
        out.append(seen)
    return out


def made(args, manifest, scratch, row):
    """The Pods and Services the real controllers make of `manifest`, and
    everything deleted again. Objects of kinds this control plane does not
    serve (another operator's jobs, which migrate passes through as they
    are) are left out."""
    objects = [d for d in yaml.safe_load_all(manifest.read_text()) if d]
    items = [i for o in objects for i in (o.get("items") or [] if o.get("kind") == "List" else [o])]
    if not hasattr(args, "served"):
        listed = suite.kubectl(args, "api-resources", "--no-headers").stdout.splitlines()
        args.served = {(line.split()[-3], line.split()[-1]) for line in listed if line.split()}
    unserved = sorted({o["kind"] for o in items if (o.get("apiVersion"), o.get("kind")) not in args.served})
    if unserved:
        row["left out"] = unserved
        items = [o for o in items if (o.get("apiVersion"), o.get("kind")) in args.served]
    manifest = scratch / f"served.{manifest.stem}.yaml"
    manifest.write_text(yaml.safe_dump_all(items, sort_keys=False))
    namespaces = {o["metadata"].get("namespace", "default") for o in items}
    for namespace in sorted(namespaces):
        suite.kubectl(args, "create", "namespace", namespace, check=False)
    for priority in sorted({deep(o, "priorityClassName") for o in items} - {None}):
        suite.kubectl(args, "create", "priorityclass", priority, "--value=1000", check=False)
    case = {"manifest": manifest}
    # Strict field validation is the admission suite's; a null the server
    # prunes is no reason to refuse here.
    created = suite.kubectl(args, "create", "--validate=warn", "-f",
                            str(suite.unsuspended(manifest, scratch)), check=False)
    if created.returncode != 0:
        row["problems"].append(f"the server refused {manifest.name}: {created.stderr.strip()[:400]}")
        suite.cleanup(args, case, scratch / "none")
        return [], []
    # The pods each job makes (a PyTorchJob's replicas, a TrainJob's nodes):
    # once they are all there, a short wait shows that no more come.
    expected = 0
    for o in items:
        if o.get("kind") == "PyTorchJob":
            expected += sum((r or {}).get("replicas", 1) or 0
                            for r in (o["spec"].get("pytorchReplicaSpecs") or {}).values())
        elif o.get("kind") == "TrainJob":
            expected += ((o["spec"].get("trainer") or {}).get("numNodes") or 1)
    pods = suite.wait_for_pods(args, namespaces, expected, settle=1.5)
    services = []
    for namespace in sorted(namespaces):
        listed = suite.kubectl(args, "get", "services", "-n", namespace, "-o", "json")
        services += [s for s in json.loads(listed.stdout)["items"]
                     if s["metadata"]["name"] != "kubernetes"]
    suite.cleanup(args, case, scratch / "none")
    if not pods:
        row["problems"].append(f"no pods were made of {manifest.name}")
    return pods, services


def deep(obj, key):
    """The first value of `key` anywhere in `obj`."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        values = obj.values()
    elif isinstance(obj, list):
        values = obj
    else:
        return None
    for value in values:
        found = deep(value, key)
        if found is not None:
            return found
    return None


def trained(pods, container_name):
    """The training pods in the order of their node: a PyTorchJob's Master,
    then its Workers by index; a TrainJob's nodes by their replicated job,
    job and completion index. With each, its training container."""
    def order(pod):
        labels = pod["metadata"].get("labels") or {}
        return (pod["metadata"].get("namespace", "default"),
                labels.get("training.kubeflow.org/job-name") or labels.get("jobset.sigs.k8s.io/jobset-name", ""),
                {"master": 0, "worker": 1}.get(labels.get("training.kubeflow.org/replica-type"), 2),
                int(labels.get("training.kubeflow.org/replica-index", 0)),
                labels.get("jobset.sigs.k8s.io/replicatedjob-name", ""),
                int(labels.get("jobset.sigs.k8s.io/job-index", 0)),
                int(labels.get("batch.kubernetes.io/job-completion-index", 0)))
    out = []
    for pod in sorted(pods, key=order):
        containers = {c["name"]: c for c in pod["spec"]["containers"]}
        if container_name in containers:
            out.append((pod, containers[container_name]))
    return out


def world(side):
    """`pods × processes = world` in words."""
    procs = [seen["procs"] for seen in side]
    if not procs:
        return "no pods"
    each = procs[0] if len(set(map(str, procs))) == 1 else " + ".join(map(str, procs))
    if all(isinstance(p, int) for p in procs):
        return f"{len(side)} × {each} = {sum(procs)}" if len(set(procs)) == 1 else f"{each} = {sum(procs)}"
    return f"{len(side)} pods, {each}"


# The variables torchrun sets for each process it starts
# (torch/distributed/elastic/agent/server/api.py `_start_workers`), over
# the pod's own: compared as the world it forms.
TORCHRUN_SETS = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",
                 "GROUP_WORLD_SIZE", "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                 "TORCHELASTIC_RUN_ID", "TORCHELASTIC_MAX_RESTARTS"}
# What a program that is not torchrun reads of the world.
WORLD_VARS = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK", "PET_NNODES",
              "PET_NPROC_PER_NODE", "PET_NODE_RANK"}
PORTS = {"MASTER_PORT", "PET_MASTER_PORT"}


def differences(old, new, views):
    """(kind, text, subject) for each way the TrainJob's pods differ from
    the PyTorchJob's for their programs. A variable only the new pods have
    is none: no program of the old job read it."""
    out = []
    if len(old) != len(new):
        out.append(("world", f"{len(old)} training pods become {len(new)}", "pods"))
    renamed = {}
    for (a, _), (b, _) in zip(old, new):
        renamed[program_view.own_name(a)] = program_view.own_name(b)
    for (a, _), (b, _), before, after in zip(old, new, *views):
        pod = f"{program_view.own_name(a)} → {program_view.own_name(b)}"
        if program_view.own_name(a) != program_view.own_name(b):
            out.append(("names", f"{pod}: the pod's name", (program_view.own_name(a), program_view.own_name(b))))
        for key, label in [("procs", "processes"), ("node", "node rank"), ("world", "world size")]:
            if str(before[key]) != str(after[key]):
                out.append(("world", f"{pod}: {label} {before[key]} becomes {after[key]}", label))
        if renamed.get(before["reaches"], before["reaches"]) != after["reaches"]:
            out.append(("address", f"{pod}: rank 0's address {before['master']} reached "
                                   f"{before['reaches'] or 'no pod of the job'}, now "
                                   f"{after['reaches']}", after["master"]))
        if before["port"] != after["port"]:
            out.append(("port", f"{pod}: the rendezvous port {before['port']} becomes "
                                f"{after['port']}", after["port"]))
        for var, x in sorted(before["env"].items()):
            y = after["env"].get(var)
            if var in PORTS or var == "MASTER_ADDR":
                continue  # the rendezvous, compared above
            if before["launcher"] == "torchrun" and (var in TORCHRUN_SETS or var.startswith("PET_")):
                continue  # torchrun's: compared as the world it forms
            if var.startswith("PET_") and before["launcher"] == "python":
                continue  # torchrun's inputs, and no torchrun reads them
            if var.endswith("_ADDR") or before["reaches_of"].get(var):
                if renamed.get(before["reaches_of"].get(var)) == after["reaches_of"].get(var):
                    continue
            if renamed_in(x, renamed) != y:
                kind = "world" if var in WORLD_VARS else "env"
                out.append((kind, f"{pod}: {var}: {short(x)} becomes {short(y)}", var))
    return out


def renamed_in(text, renamed):
    for before in sorted(renamed, key=len, reverse=True):
        text = re.sub(rf"(?<![a-z0-9-]){re.escape(before)}(?![a-z0-9-])", renamed[before], text)
    return text


def short(value):
    if value is None:
        return "(not set)"
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:80] + "…"


def warnings(stderr):
    """The report: each entry's code (`pod_names` for
    `trainc::migrate::pod_names`, the whole code for another) and its
    text, unwrapped."""
    out = []
    for block in re.split(r"(?m)^(?=\S*\s*trainc::[\w:]+\s*$)", stderr):
        match = re.match(r"\S*\s*trainc::([\w:]+)", block)
        if match:
            code = match.group(1).removeprefix("migrate::")
            text = " ".join(line.strip(" │") for line in block.splitlines()[1:])
            out.append((code, " ".join(text.split())))
    return out


def named(report, kind, subject):
    """Whether the report says this change: a warning of the kind's code that
    names the pods (names) or the variable (env)."""
    for code, text in report:
        if code not in CODES[kind]:
            continue
        # Both names, or the first three and the count ("… (8 in all)").
        if kind == "names" and not all(f"`{name}`" in text for name in subject) \
                and not re.search(r"… \(\d+ in all\)", text):
            continue
        if kind == "port" and f"port {subject} " not in text:
            continue
        # Rank 0's new address, or torchrun's rendezvous said to change.
        if kind == "address" and f"at `{subject}`" not in text and "rendezvous" not in text:
            continue
        # The world's change, the node rank torchrun is given, or the
        # variable by name.
        if kind == "world" and code != "world" and f"`{subject}`" not in text \
                and not (subject == "node rank" and "node rank" in text):
            continue
        if kind == "env" and f"`{subject}`" not in text:
            continue
        return True
    return False


def render(rows, known):
    compared = [row for row in rows if "refused" not in row]
    lines = [
        "# Migration: the PyTorchJob's pods against the TrainJob's",
        "",
        "Generated by `.ci/check-cluster` (tests/cluster/migration.py); CI fails",
        "when this file is not what it finds. Each PyTorchJob of tests/migrate, of",
        "Kubeflow's own examples and of the import cases is created on a control",
        "plane where the Training Operator v1.9.4 makes its Pods; `trainc migrate",
        "--api-level v2.3` of it is created where Kubeflow Trainer v2.3.0, JobSet",
        "v0.12.0 and Kubernetes v1.36.3's Job controller make the TrainJob's. What",
        "each pod's program reads (the kubelet's environment, and what torchrun",
        "gives each process where the command starts it) is compared pod by pod, the",
        "Master and the Workers in order against the TrainJob's nodes: the pod's name,",
        "the world (processes per pod, node rank, world size), the pod rank 0's",
        "address reaches and its port, and every other variable the program read",
        "(one only the new pods have is none). Each difference must be one the",
        "migrate report names: the new names and address (`pod_names`), the world",
        "(`world`, or the node rank torchrun is given, `command`), each variable by",
        "name (`env`, `command`).",
        "",
        f"**{len(compared)} cases migrated, {sum(r['pods'][0] for r in compared)} pods against "
        f"{sum(r['pods'][1] for r in compared)}; {sum(len(r['named']) for r in compared)} "
        f"differences, {sum(len(r['unnamed']) for r in compared)} the report does not name**"
        + (" (each listed below with its reason)" if known else "")
        + f"; {len(rows) - len(compared)} refused by migrate with the reason.",
        "",
        "| case | world before | world after | names | world | rank 0's address and port "
        "| variables | not named |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in compared:
        kinds = [kind for kind, _ in row["named"]]
        reasons = ", ".join(f"({i + 1})" for i in sorted(row.get("reasons", ())))
        unnamed = f"{len(row['unnamed'])} {reasons}".strip()
        lines.append(
            f"| {row['case']} | {row['worlds'][0]} | {row['worlds'][1]} | {kinds.count('names')} "
            f"| {kinds.count('world')} | {kinds.count('address') + kinds.count('port')} "
            f"| {kinds.count('env')} | {unnamed} |")
    refused = [row for row in rows if "refused" in row]
    if refused:
        lines += ["", "Refused by `trainc migrate`, as they must be:", ""]
        lines += [f"- {row['case']}: {row['refused']}" for row in refused]
    lines += suite.listed_reasons(known, "## Differences the report does not name, and why")
    return "\n".join(lines) + "\n"

if __name__ == "__main__":
    main()
