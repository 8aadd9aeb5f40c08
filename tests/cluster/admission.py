"""Suite 1, admission: does `trainc verify` give the verdict the API server does?

    python3 tests/cluster/admission.py --trainc BIN --admit BIN --kubeconfig FILE \
        --table docs/admission.md [--check]

Every golden, every example built at every target (and a TrainJob at every
Trainer API level) it builds for, and every manifest the verify tests use
(tests/reference, tests/upstream at the releases the control plane runs,
tests/verify-crd, tests/import and tests/migrate) go
to the control plane that tests/cluster/up started, through `admit` (a
create with dryRun=All and fieldValidation=Strict, as `kubectl apply
--dry-run=server` makes), and to `trainc verify` at the releases the
control plane runs. Document by document, the verdicts must be the same,
and a refusal must name a field the server names (or one inside it, or
around it) unless the server names none.

Then the CRDs with CEL rules are created for real (the verify tests' own
and tests/cluster/cel's, bounded so that the server admits them) and the
objects of their kinds go to the server again, now served, and to `trainc
verify --crd`: the server's CEL against trainc's, rule by rule, each
failure of a rule and each schema error in the server's words.

A difference is either listed in tests/cluster/admission-differences.yaml
with its reason and citation, or a failure; a listed difference that no
longer happens is a failure too (the list is kept true). The table written
to --table says, case by case, what both said; with --check it must be the
checked-in one byte for byte.
"""

import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DIFFERENCES = Path(__file__).with_name("admission-differences.yaml")

# The releases tests/cluster/go.mod pins, as trainc verify names them.
LEVELS = ["--api-level", "v2.3", "--training-operator", "v1.9", "--jobset", "v0.12"]
TARGETS = ["pytorchjob", "trainjob", "jobset", "job"]
API_LEVELS = ["v2.3", "v2.2", "v2.1", "v2.0"]
# The verify tests' manifests, at the releases the control plane runs.
TEST_MANIFESTS = [
    "tests/reference",
    "tests/upstream/jobset-v0.12.0",
    "tests/upstream/kubeflow-trainer-v2.3.0",
    "tests/upstream/kubeflow-trainer-v1.9.2",
    "tests/upstream/webhooks/jobset-v0.12.0",
    "tests/upstream/webhooks/trainer-v2.3.0",
    "tests/upstream/webhooks/training-operator-v1.9.2",
    "tests/verify-crd/site-crds",
    "tests/verify-crd/manifests",
    "tests/cluster/cel",
    "tests/import",
    "tests/migrate",
]
# CRDs with CEL rules, created for real once the cases above are done, and
# the objects of their kinds checked again against them.
SERVED_CRDS = [
    ("tests/verify-crd/site-crds/datasetcache.yaml", "tests/verify-crd/manifests/caches.yaml"),
    ("tests/cluster/cel/gauntlet-crd.yaml", "tests/cluster/cel/gauntlets.yaml"),
]
# What the control plane holds beside the cases: the team runtime the
# examples name. (The CRDs the verify tests check against are cases, made
# with dryRun: their kinds are served by neither side until SERVED_CRDS.)
RUNTIMES = "examples/runtimes/team.yaml"

# trainc's errors about what happens after the server admits an object: the
# operator's failure, or the cluster's (not the server's verdict).
AFTER_ADMISSION = {"trainc::verify::operator", "trainc::verify::admitted"}
TRAINC_FIELD = re.compile(r"^document (\d+), [^`]*?`([^`]*)`: ")
TRAINC_DOCUMENT = re.compile(r"^document (\d+), ")
# A field error as apimachinery's field.Error prints it.
SERVER_FIELD = re.compile(
    r"(?:^|\[|, |: )([A-Za-z<][\w.<>/\[\]-]*?): (?:Invalid value|Required value|Forbidden|"
    r"Too long|Too many|Unsupported value|Duplicate value|Not found|Internal error)"
)
UNKNOWN_FIELD = re.compile(r'unknown field "([^"]+)"|duplicate field "([^"]+)"')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trainc", required=True)
    parser.add_argument("--admit", required=True)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    os.chdir(ROOT)
    with tempfile.TemporaryDirectory() as scratch:
        cases = collect(args.trainc, Path(scratch))
        install_runtimes(args.kubeconfig, Path(scratch))
        server = admit(args.admit, args.kubeconfig, [case["file"] for case in cases])
        ours = verify(args.trainc, [case["file"] for case in cases])
        served, served_server, served_ours = served_crds(args, Path(scratch))
        cases += served
        server.update(served_server)
        ours.update(served_ours)
        known = yaml.safe_load(DIFFERENCES.read_text()) or []
        rows, failures = compare(cases, server, ours, known)
    table = render(rows)
    failures += write_table(args.table, table, args.check)
    agree = sum(1 for row in rows if row["agree"])
    print(f"  admission: {len(rows)} documents in {len(cases)} files; {agree} agree with the server, "
          f"{len(rows) - agree} differ as listed, with reasons, in {DIFFERENCES.relative_to(ROOT)}")
    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)
    sys.exit(1 if failures else 0)


def install_runtimes(kubeconfig, scratch):
    """The team runtimes the examples name, in their namespaces (made first)."""
    runtimes = []
    for document in yaml.safe_load_all((ROOT / RUNTIMES).read_text()):
        if document:
            runtimes += document.get("items", [document]) if document.get("kind") == "List" else [document]
    namespaces = sorted({d["metadata"]["namespace"] for d in runtimes if d["metadata"].get("namespace")})
    made = scratch / "namespaces.yaml"
    made.write_text(yaml.safe_dump_all(
        [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in namespaces]))
    if namespaces:
        kubectl(kubeconfig, "apply", "-f", str(made))
    kubectl(kubeconfig, "apply", "-f", RUNTIMES)


def served_crds(args, scratch):
    """The objects of SERVED_CRDS' kinds, their CRDs created (and removed
    after): the cases, the server's verdicts and trainc's (`--crd`)."""
    cases, crds = [], []
    (scratch / "served").mkdir()
    for crd, objects in SERVED_CRDS:
        kubectl(args.kubeconfig, "apply", "-f", crd)
        kubectl(args.kubeconfig, "wait", "--for", "condition=Established", "--timeout", "60s", "-f", crd)
        copy = scratch / "served" / Path(objects).name
        copy.write_text((ROOT / objects).read_text())
        cases.append({"group": "objects of CRDs with CEL rules, the CRDs created",
                      "file": str(copy), "name": f"{objects} (its CRD created)", "rules_worded": True})
        crds += ["--crd", crd]
    try:
        server = admit(args.admit, args.kubeconfig, [case["file"] for case in cases])
        ours = verify(args.trainc, [case["file"] for case in cases], crds)
    finally:
        for crd, _ in SERVED_CRDS:
            kubectl(args.kubeconfig, "delete", "--wait", "-f", crd)
    return cases, server, ours


def write_table(path, table, check):
    """Writes a generated table, or with `check` holds the checked-in one to
    it: a failure (and the new table beside it) when they differ."""
    if not check:
        Path(path).write_text(table)
        return []
    if Path(path).exists() and Path(path).read_text() == table:
        return []
    Path(path + ".new").write_text(table)
    return [f"{path} is not what this run found: see {path}.new (and diff it); "
            "rerun without --check to write it"]


def kubectl(kubeconfig, *args):
    subprocess.run(["kubectl", "--kubeconfig", kubeconfig, *args], check=True,
                   stdout=subprocess.DEVNULL)


def collect(trainc, scratch):
    """The cases: (group, name, file) for every manifest, example builds made here."""
    cases = []
    for path in sorted(ROOT.glob("golden/*/*.yaml")):
        cases.append({"group": "goldens", "file": str(path.relative_to(ROOT))})
    builds = scratch / "builds"
    builds.mkdir()
    for example in sorted(list(ROOT.glob("examples/*.toml")) + list(ROOT.glob("examples/*.yaml"))):
        for target in TARGETS:
            levels = API_LEVELS if target == "trainjob" else [None]
            for level in levels:
                command = [trainc, "build", "--target", target, str(example)]
                name = f"{example.stem} --target {target}"
                if level:
                    command += ["--api-level", level]
                    name += f" --api-level {level}"
                built = subprocess.run(command, capture_output=True, text=True)
                if built.returncode != 0:
                    continue  # the example is not for this target or level
                out = builds / (name.replace(" --", ".").replace(" ", "-") + ".yaml")
                out.write_text(built.stdout)
                cases.append({"group": "example builds", "file": str(out), "name": name})
    for directory in TEST_MANIFESTS:
        for path in sorted((ROOT / directory).rglob("*.yaml")):
            cases.append({"group": "the verify tests' manifests", "file": str(path.relative_to(ROOT))})
    return cases


def admit(binary, kubeconfig, files):
    run = subprocess.run([binary, "--kubeconfig", kubeconfig, *files], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"error: admit exited {run.returncode} over {len(files)} files: {run.stderr.strip()}")
    out = run.stdout
    verdicts = {}
    for line in out.splitlines():
        verdict = json.loads(line)
        verdicts.setdefault(verdict["file"], []).append(verdict)
    return verdicts


def verify(trainc, files, crds=()):
    """trainc verify's diagnostics, file by file and document by document."""
    command = [trainc, "verify", "--format", "json", *LEVELS, "--runtimes", RUNTIMES,
               *crds, *files]
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"error: trainc verify exited {out.returncode}: {out.stderr}")
    found = {}
    for line in out.stdout.splitlines():
        diagnostic = json.loads(line)
        found.setdefault(diagnostic["file"], []).append(diagnostic)
    return found


def document_of(diagnostic, starts):
    """The document (from 1) a diagnostic is about: named, or the one its line is in."""
    named = TRAINC_DOCUMENT.match(diagnostic["message"])
    if named:
        return int(named.group(1))
    line = diagnostic.get("line") or 1
    return max([i + 1 for i, start in enumerate(starts) if start <= line] or [1])


def document_starts(path):
    """The line (from 1) each non-empty YAML document starts at."""
    starts, current, content = [], 1, False
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if line.startswith("---"):
            if content:
                starts.append(current)
            current, content = number + 1, False
        elif line.strip() and not line.lstrip().startswith("#"):
            content = True
    if content:
        starts.append(current)
    return starts


def server_fields(verdict):
    """The fields the server names in a refusal (None for one it does not name)."""
    fields = [cause["field"] for cause in verdict.get("causes") or [] if cause.get("field")]
    message = verdict.get("message", "")
    fields += [m.group(1) for m in SERVER_FIELD.finditer(message)]
    fields += [a or b for a, b in UNKNOWN_FIELD.findall(message)]
    return sorted({f for f in fields if f and f != "<nil>"})


def normal(field):
    """A field as both name it: `spec.RuntimeRef` is `spec.runtimeRef`; `[x]` keys unquoted."""
    field = field.replace('"', "").replace("'", "")
    # A map's key: `pytorchReplicaSpecs[Worker]` is `pytorchReplicaSpecs.Worker`.
    field = re.sub(r"\[([A-Za-z][\w-]*)\]", r".\1", field)
    parts = re.split(r"(\.|\[)", field)
    return "".join(p[:1].lower() + p[1:] for p in parts).lstrip(".")


def near(a, b):
    """One field is the other, or inside it."""
    a, b = normal(a), normal(b)
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    return long.startswith(short) and long[len(short)] in ".["


def compare(cases, server, ours, known):
    rows, failures, used = [], [], set()
    for case in cases:
        file = case["file"]
        starts = document_starts(file)
        diagnostics = ours.get(file, [])
        refused_kinds = set()
        for verdict in merged(server.get(file, [])):
            document = verdict["document"]
            mine = [d for d in diagnostics if document_of(d, starts) == document]
            errors = [d for d in mine if d["severity"] == "error" and d["code"] not in AFTER_ADMISSION]
            fields = sorted({m.group(2) for d in errors if (m := TRAINC_FIELD.match(d["message"]))})
            theirs = server_fields(verdict)
            trainc = "refused" if errors else "admitted"
            row = {
                "group": case["group"], "case": case.get("name", file), "document": document,
                "object": f'{verdict.get("kind", "?")}/{verdict.get("name", "")}',
                "server": verdict["verdict"], "trainc": trainc,
                "server_fields": theirs, "trainc_fields": fields,
            }
            if verdict["verdict"] == "refused":
                refused_kinds.add(verdict.get("kind"))
            if follows(verdict, refused_kinds):
                # The server has no runtime because the file's own was
                # refused above: trainc says why at that document.
                difference = None
                row["server"] = "refused (its runtime was refused above)"
            elif verdict["verdict"] == "unchecked":
                difference = None if not errors else "trainc refuses a kind the server does not serve"
            elif verdict["verdict"] == "unreadable":
                difference = None if errors else "the server cannot read a file trainc admits"
            elif verdict["verdict"] != trainc:
                difference = f"the server {verdict['verdict']}, trainc {trainc}"
            elif trainc == "refused" and theirs and not any(near(a, b) for a in fields for b in theirs):
                difference = "both refuse, at different fields"
            elif case.get("rules_worded") and (unsaid := rule_failures_unsaid(errors, verdict)):
                difference = f"both refuse, an error in other words: {unsaid[0]!r}"
            else:
                difference = None
            row["difference"] = difference
            row["agree"] = difference is None
            if difference:
                listed = listing(known, row)
                if listed is None:
                    failures.append(
                        f"{row['case']} document {document} ({row['object']}): {difference}; "
                        f"the server: {verdict.get('message', '')[:400]!r} (fields {theirs}); "
                        f"trainc: fields {fields}, {[d['message'][:200] for d in errors]}")
                else:
                    used.add(listed)
                    row["reason"] = known[listed]["reason"]
            rows.append(row)
    for index, entry in enumerate(known):
        if index not in used:
            failures.append(f"{DIFFERENCES.name} lists a difference that no longer happens: {entry['case']}")
    return rows, failures


def rule_failures_unsaid(errors, verdict):
    """trainc's errors in the server's words (`field: words`: a CEL rule's
    failure, a schema's error) the server's message does not hold word for
    word. Where the server validated the object, every one; where it could
    not decode it (an unknown field, with strict field validation), the
    unknown fields it names; where a name is missing, none (the object is
    refused before it is validated)."""
    unsaid = []
    message = verdict.get("message", "")
    validated = " is invalid: " in message
    undecoded = "strict decoding error: " in message
    if not (validated or undecoded):
        return unsaid
    if any(field.startswith("metadata") for field in server_fields(verdict)):
        return unsaid
    for d in errors:
        code = d["code"]
        if not (code.endswith("::rule") or code.endswith("::schema")):
            continue
        match = TRAINC_FIELD.match(d["message"])
        if not match:
            continue
        words = TRAINC_NOTE.sub("", d["message"][match.end():])
        unknown = words.startswith("unknown field ")
        if unknown != undecoded:
            continue
        said = TRAINC_HINT.sub("", words) if unknown else f"{match.group(2)}: {words}"
        if not said_within(said, message):
            unsaid.append(said)
    return unsaid


# What trainc adds after the server's words: where a duplicate was first,
# the field an unknown one is near.
TRAINC_NOTE = re.compile(r" \(item \d+ has it too\)$")
TRAINC_HINT = re.compile(r" \(did you mean `[^`]*`\?\)$")


def said_within(said, message):
    """Whether `message` holds `said`, where trainc cut a long text in
    the middle (` … `): its pieces, in order."""
    at = 0
    for piece in said.split(" … "):
        found = message.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def merged(verdicts):
    """One verdict per document: a List's items together (refused if one is)."""
    by_document = {}
    for verdict in verdicts:
        document = verdict["document"]
        if document not in by_document:
            by_document[document] = dict(verdict)
            continue
        kept = by_document[document]
        kept["kind"] = "List"
        kept["name"] = ""
        if verdict["verdict"] == "refused" and kept["verdict"] != "refused":
            by_document[document] = {**verdict, "kind": "List", "name": ""}
        elif verdict["verdict"] == "refused":
            kept["message"] = f'{kept.get("message", "")}; {verdict.get("message", "")}'
            kept["causes"] = (kept.get("causes") or []) + (verdict.get("causes") or [])
    return [by_document[d] for d in sorted(by_document)]


def follows(verdict, refused_kinds):
    """A TrainJob refused for a runtime its file holds but the server refused."""
    return (verdict.get("kind") == "TrainJob" and verdict["verdict"] == "refused"
            and "must be created before the TrainJob is created" in verdict.get("message", "")
            and bool(refused_kinds & {"TrainingRuntime", "ClusterTrainingRuntime"}))


def listing(known, row):
    for index, entry in enumerate(known):
        if fnmatch.fnmatch(row["case"], entry["case"]) and entry.get("document", row["document"]) == row["document"]:
            return index
    return None


def render(rows):
    agree = sum(1 for row in rows if row["agree"])
    lines = [
        "# Admission: trainc verify against the API server",
        "",
        "Generated by `.ci/check-cluster` (tests/cluster/admission.py); CI fails when",
        "this file is not what it finds. Each manifest goes to a control plane of",
        "kube-apiserver v1.36.3 with the webhooks of JobSet v0.12.0, Kubeflow Trainer",
        "v2.3.0 and the Training Operator v1.9.4 (`kubectl apply --dry-run=server",
        "--validate=strict`), and to `trainc verify` at those releases. A refusal",
        "agrees when trainc names a field the server names, or one inside it or around",
        "it (the server names none for some webhook refusals).",
        "",
        f"**{agree}/{len(rows)} documents agree.** Every difference is listed below with",
        "its reason (tests/cluster/admission-differences.yaml).",
        "",
    ]
    differences = [row for row in rows if not row["agree"]]
    if differences:
        lines += ["## Differences", "", "| case | document | server | trainc | reason |", "|---|---|---|---|---|"]
        for row in differences:
            lines.append(f"| {cell(row['case'])} | {row['document']} {cell(row['object'])} | "
                         f"{row['server']} {cell(', '.join(row['server_fields']))} | "
                         f"{row['trainc']} {cell(', '.join(row['trainc_fields']))} | {cell(row.get('reason', 'not listed'))} |")
        lines.append("")
    group = None
    for row in rows:
        if row["group"] != group:
            group = row["group"]
            lines += ["", f"## {group[0].upper()}{group[1:]}", "",
                      "| case | document | server | trainc | fields |", "|---|---|---|---|---|"]
        mark = "" if row["agree"] else " (differs)"
        fields = ", ".join(row["server_fields"] or row["trainc_fields"])
        lines.append(f"| {cell(row['case'])} | {row['document']} {cell(row['object'])} | {row['server']} | "
                     f"{row['trainc']}{mark} | {cell(fields)} |")
    return "\n".join(lines) + "\n"


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


if __name__ == "__main__":
    main()
