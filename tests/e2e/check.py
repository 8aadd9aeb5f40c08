"""Checks the output of `trainc run` for the end-to-end suite: the world every
rank reports is the one the spec reads.

    check.py OUTPUT --world 4 --nodes 2 [--per-node 1,3] [--probe | --plain-job | --ranks-only]

--probe: the JSON lines of tests/e2e/image/acme/probe.py: every rank 0..world-1
once, the same world size everywhere, each pod one node rank with
world/nodes local ranks, the node ranks 0..nodes-1, and the all-reduce sum
of the ranks on every rank.
--plain-job: examples/plain-job/train.py's lines ("rank R of W: node rank N
on HOST", "done: W processes trained one model").
--ranks-only: "rank R of W" lines (examples/trainjob-runtime-image.toml).
--per-node: the processes of each node rank, in order, where they differ
(a Master with its own count); else world/nodes each. torchrun numbers a
node's ranks from the sum of the counts of the node ranks before it."""

import argparse
import collections
import json
import re
import sys


def fail(message):
    print(f"check: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("output")
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--nodes", type=int, required=True)
    parser.add_argument("--per-node", type=lambda s: [int(n) for n in s.split(",")])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--probe", action="store_true")
    mode.add_argument("--plain-job", action="store_true")
    mode.add_argument("--ranks-only", action="store_true")
    args = parser.parse_args()
    lines = open(args.output, encoding="utf-8", errors="replace").read().splitlines()
    ranks = {}
    for line in lines:
        match = re.match(r"^\[([^\]]+)\] (.*)$", line)
        if not match:
            continue
        pod, text = match.groups()
        if args.probe and text.startswith("{") and '"probe"' in text:
            report = json.loads(text)
            report["pod"] = pod
        elif args.plain_job and (m := re.match(r"^rank (\d+) of (\d+): node rank (\d+) on (\S+)$", text)):
            report = {"rank": int(m[1]), "world": int(m[2]), "node": int(m[3]), "host": m[4], "pod": pod}
        elif args.ranks_only and (m := re.match(r"^rank (\d+) of (\d+)$", text)):
            report = {"rank": int(m[1]), "world": int(m[2]), "pod": pod}
        else:
            continue
        if report["rank"] in ranks:
            fail(f"rank {report['rank']} reported twice")
        ranks[report["rank"]] = report
    if sorted(ranks) != list(range(args.world)):
        fail(f"ranks {sorted(ranks)}, expected 0..{args.world - 1}")
    worlds = {r["world"] for r in ranks.values()}
    if worlds != {args.world}:
        fail(f"world sizes {worlds}, expected {args.world}")
    by_pod = collections.defaultdict(list)
    for report in ranks.values():
        by_pod[report["pod"]].append(report)
    if len(by_pod) != args.nodes:
        fail(f"{len(by_pod)} pods reported ({sorted(by_pod)}), expected {args.nodes}")
    counts = args.per_node or [args.world // args.nodes] * args.nodes
    if len(counts) != args.nodes or sum(counts) != args.world:
        fail(f"--per-node {counts} does not add up to {args.nodes} nodes and world {args.world}")
    if args.ranks_only:
        if sorted(len(r) for r in by_pod.values()) != sorted(counts):
            fail(f"ranks per pod {[len(r) for r in by_pod.values()]}, expected {counts}")
    else:
        nodes = set()
        for pod, reports in by_pod.items():
            node = {r["node"] for r in reports}
            if len(node) != 1:
                fail(f"pod {pod} has ranks of node ranks {node}")
            nodes |= node
            (rank,) = node
            if not 0 <= rank < args.nodes:
                fail(f"pod {pod} is node rank {rank}, expected 0..{args.nodes - 1}")
            per_node = counts[rank]
            first = sum(counts[:rank])
            if sorted(r["rank"] for r in reports) != list(range(first, first + per_node)):
                fail(f"pod {pod} (node rank {rank}) has ranks {sorted(r['rank'] for r in reports)}, expected {first}..{first + per_node - 1}")
            hosts = {r["host"] for r in reports}
            name = pod.split("/")[0]
            # A Job's pod made by the real controller (`run --manifests` of
            # the Pods it made) is named after its hostname and 5 random
            # characters the API server adds (`generateName`).
            if hosts != {name} and hosts != {re.sub(r"-[a-z0-9]{5}$", "", name)}:
                fail(f"pod {pod} ranks ran on hosts {hosts}")
            if args.probe and sorted(r["local"] for r in reports) != list(range(per_node)):
                fail(f"pod {pod} local ranks {[r['local'] for r in reports]}")
        if nodes != set(range(args.nodes)):
            fail(f"node ranks {sorted(nodes)}, expected 0..{args.nodes - 1}")
    if args.probe:
        expected = args.world * (args.world - 1) // 2
        sums = {r["sum"] for r in ranks.values()}
        if sums != {expected}:
            fail(f"all-reduce sums {sums}, expected {expected}")
    if args.plain_job and f"done: {args.world} processes trained one model" not in "\n".join(lines):
        fail("no 'done' line from rank 0")
    what = "all-reduce" if args.probe else "training" if args.plain_job else "init"
    print(f"  ok: world {args.world}, ranks 0..{args.world - 1} once each, {args.nodes} pods, {what} completed")


if __name__ == "__main__":
    main()
