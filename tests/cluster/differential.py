"""Suite 5, differential testing of `trainc verify` against the API server.

    python3 tests/cluster/differential.py --trainc BIN --admit BIN --kubeconfig FILE \
        [--cases 2000] [--seed 1] [--save DIR]

A seeded generator takes the manifests the admission suite agrees on (the
goldens and the webhook cases at the releases the control plane runs) and
makes each case by one mutation of one object: a value replaced (a number
out of range, a name Kubernetes refuses, the wrong type, an empty string,
null), a field removed, an unknown field added, a list item repeated. Every
case goes to the server (`admit`) and to `trainc verify`; the verdicts, and
for a refusal the field, are compared as admission.py compares them.

Then the CEL stage: the Gauntlet CRD (tests/cluster/cel/gauntlet-crd.yaml,
whose rules call most of Kubernetes' CEL environment) is created for real,
and --cel-cases mutations of its objects (tests/cluster/cel/gauntlets.yaml),
with values its rules read (quantities, URLs, addresses, versions,
durations, times, names) besides the generic ones, go to the server and to
`trainc verify --crd`: the verdicts, the fields, and each rule's failure
and each schema error word for word.

A disagreement is written to --save (default tests/cluster/regressions/) as
the case's manifest with a header saying what each side said, and fails the
run unless `known.yaml` there lists its kind with a reason. Once trainc is
mended, the case stays as a regression case with the server's verdict in its
header (drop the `# trainc verify:` line): tests/regressions.rs holds
`trainc verify` to it in `cargo test`. The same seed gives the same cases.
"""

import argparse
import copy
import fnmatch
import hashlib
import json
import random
import sys
import tempfile
from pathlib import Path

import yaml

import admission

ROOT = admission.ROOT
REGRESSIONS = Path(__file__).with_name("regressions")
SEEDS = [
    "golden/*/*.yaml",
    "tests/upstream/webhooks/jobset-v0.12.0/*.yaml",
    "tests/upstream/webhooks/trainer-v2.3.0/*.yaml",
    "tests/upstream/webhooks/training-operator-v1.9.2/*.yaml",
    "tests/upstream/jobset-v0.12.0/*.yaml",
    "tests/upstream/kubeflow-trainer-v2.3.0/*.yaml",
]
NAMES = ["Bad_Name", "a" * 64, "-leading", "has space", "UPPER", "x" * 254, "ok.dots", ""]
# The CEL stage: a CRD created for real, mutations of its objects with the
# values its rules read as well.
CEL_CRD = "tests/cluster/cel/gauntlet-crd.yaml"
CEL_SEED = "tests/cluster/cel/gauntlets.yaml"
CEL_VALUES = ["64Gi", "65Gi", "1Ti", "500m", "12e3", "1.5Gi", "https://example.com/a", "http://example.com",
              "https://", "not a url", "10.0.0.1", "10.0.0.0/8", "::1", "fe80::1%eth0", "192.168.1.300",
              "1.0.0", "v1.0.1", "1.2", "2.0.0-rc.1", "30m", "1h", "1h1s", "-5s", "2019-12-31T23:59:59Z",
              "2030-01-01T00:00:00+01:00", "a@b", "a@b@c", "train", "abc--x", "ok-x", "a1 22 333 4444"]
NUMBERS = [-1, 0, 1, 2, 2**31, -(2**31) - 1, 100000]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trainc", required=True)
    parser.add_argument("--admit", required=True)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cel-cases", type=int, default=500)
    parser.add_argument("--save", default=str(REGRESSIONS))
    parser.add_argument("--table", help="write the summary here (docs/differential.md)")
    parser.add_argument("--check", action="store_true", help="the --table file must be what this run finds")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    seeds = seed_files()
    known = load_known(Path(args.save))
    with tempfile.TemporaryDirectory() as scratch:
        cases = []
        for number in range(args.cases):
            documents, path = rng.choice(seeds)
            mutated, index, what = mutate(rng, documents)
            file = Path(scratch) / f"case-{number:05}.yaml"
            file.write_text(yaml.safe_dump_all(mutated, sort_keys=False))
            cases.append({"group": "differential", "file": str(file), "name": f"case {number}",
                          "seed": str(path.relative_to(ROOT)), "document": index + 1, "what": what})
        server = admission.admit(args.admit, args.kubeconfig, [case["file"] for case in cases])
        ours = admission.verify(args.trainc, [case["file"] for case in cases])
        tally = Tally()
        judge(args, cases, server, ours, known, tally)
        cel_cases = []
        cel_seed = [(d, ROOT / CEL_SEED) for d in yaml.safe_load_all((ROOT / CEL_SEED).read_text()) if d]
        for number in range(args.cel_cases):
            documents, path = cel_seed[rng.randrange(len(cel_seed))]
            mutated, _, what = mutate(rng, [documents], strings=NAMES + CEL_VALUES)
            file = Path(scratch) / f"cel-case-{number:05}.yaml"
            file.write_text(yaml.safe_dump_all(mutated, sort_keys=False))
            cel_cases.append({"group": "differential", "file": str(file), "name": f"CEL case {number}",
                              "seed": CEL_SEED, "document": 1, "what": what, "rules_worded": True})
        admission.kubectl(args.kubeconfig, "apply", "-f", CEL_CRD)
        try:
            admission.kubectl(args.kubeconfig, "wait", "--for", "condition=Established", "--timeout", "60s",
                              "-f", CEL_CRD)
            server = admission.admit(args.admit, args.kubeconfig, [case["file"] for case in cel_cases])
            ours = admission.verify(args.trainc, [case["file"] for case in cel_cases], ["--crd", CEL_CRD])
        finally:
            admission.kubectl(args.kubeconfig, "delete", "--wait", "-f", CEL_CRD)
        cel = Tally()
        judge(args, cel_cases, server, ours, known, cel)
    failures = tally.failures + cel.failures
    print(f"  differential: {args.cases} cases (seed {args.seed}) from {len(seeds)} manifests; "
          f"{tally.agree()} agree, {tally.verdicts} verdicts and {tally.fields} fields differ; "
          f"{args.cel_cases} CEL cases on the Gauntlet CRD, created: {cel.agree()} agree, "
          f"{cel.verdicts} verdicts and {cel.fields} fields or words differ; "
          f"{len(failures)} of them not yet listed in {shown(Path(args.save))}/known.yaml")
    if args.table:
        table = render(args, len(seeds), tally, cel, known)
        failures += admission.write_table(args.table, table, args.check)
    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)
    sys.exit(1 if failures else 0)


class Tally:
    """What a stage's cases found: the mutated documents compared, those
    that differ in verdict and in field (or a rule's words), how many of
    each listed kind, and the failures (differences not listed)."""

    def __init__(self):
        self.compared = self.verdicts = self.fields = 0
        self.by_kind = {}
        self.failures = []

    def agree(self):
        return self.compared - self.verdicts - self.fields


def judge(args, cases, server, ours, known, tally):
    """Each case's mutated document compared (admission.py's comparison),
    into `tally`; a difference no listing covers is saved as a case."""
    rows, _ = admission.compare(cases, server, ours, [])
    by_case = {case["file"]: case for case in cases}
    for row, case in zip(rows, row_cases(rows, cases)):
        if case["document"] != row["document"]:
            continue  # only the mutated document is the case's question
        tally.compared += 1
        if row["agree"]:
            continue
        same_verdict = row["server"] == row["trainc"]
        tally.fields += same_verdict
        tally.verdicts += not same_verdict
        entry = listed(known, case, row)
        if entry is not None:
            tally.by_kind[entry] = tally.by_kind.get(entry, 0) + 1
            continue
        saved = save(Path(args.save), by_case[case["file"]], row)
        tally.failures.append(f'{case["seed"]} | {case["what"]}: the server {row["server"]} '
                              f'{row["server_fields"]}, trainc {row["trainc"]} {row["trainc_fields"]} '
                              f'({row["difference"]}; saved as {saved})')


def render(args, seeds, tally, cel, known):
    lines = [
        "# Differential testing: trainc verify against the API server",
        "",
        "Generated by `.ci/check-cluster` (tests/cluster/differential.py); CI fails",
        "when this file is not what it finds. Each case is one mutation of one",
        "object of a manifest the admission suite uses ([admission.md](admission.md)):",
        "a value replaced (out of range, a name Kubernetes refuses, the wrong type,",
        "empty, null), a field removed, an unknown field added, a list item repeated.",
        "The mutated object goes to the control plane as a server dry run and to",
        "`trainc verify`; the verdicts, and for a refusal the field, are compared.",
        "",
        f"**{args.cases} cases (seed {args.seed}) from {seeds} manifests: {tally.agree()} agree; "
        f"{tally.verdicts} verdicts and {tally.fields} fields differ, each of a kind listed below.**",
        "",
        "Then the CEL stage: the Gauntlet CRD (`tests/cluster/cel/gauntlet-crd.yaml`) is",
        "created, and mutations of its objects, with the values its rules read as",
        "well, go to the server and to `trainc verify --crd`: verdicts, fields, and",
        "each rule's failure and each schema error word for word.",
        "",
        f"**{args.cel_cases} CEL cases: {cel.agree()} agree; {cel.verdicts} verdicts and "
        f"{cel.fields} fields or words differ.**",
        "",
        "The disagreements found and mended are regression cases in",
        "`tests/cluster/regressions/`, which `cargo test` holds trainc to.",
        "",
        "| cases | seed manifests | mutations | refused by | reason |",
        "|---|---|---|---|---|",
    ]
    for index, entry in enumerate(known):
        listed = lambda key: ", ".join(  # noqa: E731
            f"`{p}`" for p in (entry.get(key, "*") if isinstance(entry.get(key, "*"), list) else [entry.get(key, "*")]))
        reason = " ".join(entry["reason"].split())
        count = tally.by_kind.get(index, 0) + cel.by_kind.get(index, 0)
        lines.append(f"| {count} | {listed('seed')} | {listed('what')} | "
                     f"{entry.get('refuses', 'either')} | {reason.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def shown(path):
    """A path as the repository names it, where it is in the repository."""
    path = path.resolve()
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def seed_files():
    seeds = []
    for pattern in SEEDS:
        for path in sorted(ROOT.glob(pattern)):
            documents = [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
            if documents and all(d.get("kind") != "List" for d in documents):
                seeds.append((documents, path))
    return seeds


def row_cases(rows, cases):
    by_name = {case.get("name", case["file"]): case for case in cases}
    return [by_name[row["case"]] for row in rows]


def mutate(rng, documents, strings=NAMES):
    """One mutation of one document: (the documents, its index, what was
    done), a string replaced by one of `strings`."""
    documents = copy.deepcopy(documents)
    index = rng.randrange(len(documents))
    paths = list(walk(documents[index], ()))
    # Not the identity of the object: a case about apiVersion or kind is
    # about which schema, which both sides answer by refusing.
    paths = [p for p in paths if p[0][:1] not in (("apiVersion",), ("kind",))]
    path, value = rng.choice(paths)
    parent = documents[index]
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    choice = rng.randrange(6)
    spelled = ".".join(str(p) for p in path)
    if choice == 0 and isinstance(parent, dict) and len(path) > 1:
        del parent[last]
        what = f"{spelled} removed"
    elif choice == 1 and isinstance(value, dict):
        value["unknownField"] = "x"
        what = f"{spelled}.unknownField added"
    elif choice == 2 and isinstance(value, list) and value:
        value.append(copy.deepcopy(value[0]))
        what = f"{spelled}[0] repeated"
    elif choice == 3 and isinstance(value, (int, float)) and not isinstance(value, bool):
        new = rng.choice(NUMBERS)
        parent[last] = new
        what = f"{spelled} = {new}"
    elif choice == 4 and isinstance(value, str):
        new = rng.choice(strings)
        parent[last] = new
        what = f"{spelled} = {new[:20]!r}"
    else:
        new = rng.choice([None, "text", 7, True, [], {}])
        parent[last] = new
        what = f"{spelled} = {json.dumps(new)}"
    return documents, index, what


def walk(value, path):
    if path:
        yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from walk(child, path + (key,))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from walk(child, path + (i,))


def load_known(directory):
    """What known.yaml lists: kinds of disagreement, each with its reason."""
    path = directory / "known.yaml"
    return (yaml.safe_load(path.read_text()) or []) if path.exists() else []


def listed(known, case, row):
    """The listing that covers the case, by its index: its seed, its mutation (fnmatch
    patterns, or lists of them), and which side refuses (`server`, `trainc` or `both`; any if unsaid)."""
    server, trainc = row["server"] == "refused", row["trainc"] == "refused"
    refuses = "both" if server and trainc else "server" if server else "trainc" if trainc else None
    def matches(text, patterns):
        patterns = patterns if isinstance(patterns, list) else [patterns]
        return any(fnmatch.fnmatch(text, pattern) for pattern in patterns)

    for index, entry in enumerate(known):
        if (matches(case["seed"], entry.get("seed", "*"))
                and matches(case["what"], entry["what"])
                and entry.get("refuses", refuses) == refuses):
            return index
    return None


def save(directory, case, row):
    directory.mkdir(parents=True, exist_ok=True)
    name = f'{Path(case["seed"]).stem}-{hashlib.sha256(case["what"].encode()).hexdigest()[:8]}.yaml'
    header = [
        f"# from {case['seed']}, document {case['document']}: {case['what']}",
        f"# the server: {row['server']} {', '.join(row['server_fields'])}",
        f"# trainc verify: {row['trainc']} {', '.join(row['trainc_fields'])}",
    ]
    (directory / name).write_text("\n".join(header) + "\n" + Path(case["file"]).read_text())
    return name


if __name__ == "__main__":
    main()
