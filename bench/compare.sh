#!/usr/bin/env bash
# What a whole trainc run costs on this machine, start-up included, next to
# /bin/true and the tools it sits beside: medians of interleaved wall-clock
# runs (hyperfine), instruction counts (valgrind's callgrind, which repeat
# exactly where wall time does not) and peak memory.
#
#   bash bench/compare.sh            # ROUNDS=5 RUNS=10 by default
#   ROUNDS=10 RUNS=20 bash bench/compare.sh
#
# Needs hyperfine (installed with apt-get when missing and possible). Uses
# kubectl (kustomize), valgrind, GNU time (peak memory) and torchx (or
# TORCHX=path) where they are installed, and says so where they are not.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
runs=${RUNS:-10}

if ! command -v hyperfine >/dev/null; then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        echo "installing hyperfine with apt-get" >&2
        apt-get install -y -q hyperfine >/dev/null 2>&1 ||
            { apt-get update -q >/dev/null && apt-get install -y -q hyperfine >/dev/null; }
    fi
    command -v hyperfine >/dev/null || {
        echo "error: hyperfine is missing: apt-get install hyperfine (or cargo install hyperfine)" >&2
        exit 1
    }
fi

echo "building the release binary" >&2
cargo build --release --quiet
trainc=$(realpath "${CARGO_TARGET_DIR:-target}")/release/trainc
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The inputs: the GPU example; 1,000 copies of it under other names; the
# kustomize example's TrainSpec, built to plain YAML and as a generator.
spec=examples/gpu-multinode.toml
mkdir -p "$work/specs"
for i in $(seq 1000); do
    sed "s/^name = .*/name = \"job-$i\"/" "$spec" > "$work/specs/job-$i.toml"
done
printf 'name = "tiny"\nimage = "python:3.12"\nscript = "train.py"\n' > "$work/tiny.toml"
mkdir -p "$work/plain" "$work/plugin" "$work/xdg"
cp examples/kustomize/spec/trainspec.yaml "$work/plugin/trainspec.yaml"
printf 'generators:\n- trainspec.yaml\n' > "$work/plugin/kustomization.yaml"
"$trainc" build "$work/plugin/trainspec.yaml" > "$work/plain/objects.yaml"
printf 'resources:\n- objects.yaml\n' > "$work/plain/kustomization.yaml"
"$trainc" plugin install --dev --dir "$work/xdg/kustomize/plugin" >/dev/null
export XDG_CONFIG_HOME=$work/xdg NO_COLOR=1

names=("/bin/true" "trainc build" "trainc build --verify" "trainc check (1,000 specs)")
commands=("/bin/true" "$trainc build $spec" "$trainc build --verify $spec"
    "$trainc check $(echo "$work"/specs/*.toml)")
kubectl=$(command -v kubectl || true)
if [ -n "$kubectl" ]; then
    if ! diff <("$kubectl" kustomize "$work/plain") \
        <("$kubectl" kustomize --enable-alpha-plugins "$work/plugin") >/dev/null; then
        echo "error: kustomize gives different output through the plugin" >&2
        exit 1
    fi
    names+=("kubectl kustomize (plain YAML)" "kubectl kustomize (trainc plugin)")
    commands+=("$kubectl kustomize $work/plain" "$kubectl kustomize --enable-alpha-plugins $work/plugin")
else
    echo "note: kubectl not installed: no kustomize rows" >&2
fi
torchx=${TORCHX:-$(command -v torchx || true)}
if [ -n "$torchx" ]; then
    # The peer's dry run of a comparable job: 4 nodes x 8 processes, rendered
    # for Kubernetes (a Volcano job), nothing submitted.
    printf 'print("hello")\n' > "$work/train.py"
    names+=("torchx dist.ddp dry run")
    commands+=("$torchx run --workspace '' --dryrun --scheduler kubernetes -cfg queue=default dist.ddp -j 4x8 --script $work/train.py")
else
    echo "note: torchx not found (pip install torchx kubernetes, or TORCHX=path): no TorchX row" >&2
fi

# Interleaved: every command runs $runs times per round, round after round.
for round in $(seq "$rounds"); do
    echo "round $round of $rounds" >&2
    hyperfine --style none -N --warmup 2 --runs "$runs" --ignore-failure \
        --export-json "$work/round-$round.json" "${commands[@]}" >/dev/null 2>&1
done

# Instruction counts and peak memory, one run each.
counts=()
if command -v valgrind >/dev/null; then
    for command in "${commands[@]}"; do
        valgrind --tool=callgrind --callgrind-out-file=/dev/null $command >/dev/null 2>"$work/vg" || true
        counts+=("$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/vg")")
    done
else
    echo "note: valgrind not installed: no instruction counts" >&2
fi

python3 - "$work" "$rounds" "$trainc" "${names[@]}" -- "${counts[@]}" <<'EOF'
import json, os, statistics, subprocess, sys
work, rounds, trainc = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rest = sys.argv[4:]
split = rest.index("--")
names, counts = rest[:split], rest[split + 1:]
times = {}
commands = []
for r in range(1, rounds + 1):
    results = json.load(open(f"{work}/round-{r}.json"))["results"]
    for name, result in zip(names, results):
        times.setdefault(name, []).extend(result["times"])
        if r == 1:
            commands.append(result["command"])

def peak_rss(command):
    """KiB, by GNU time: a small parent, so the figure is the command's own."""
    if not os.path.exists("/usr/bin/time"):
        return None
    run = subprocess.run(["/usr/bin/time", "-f", "%M", "sh", "-c", f"exec {command} >/dev/null 2>&1"],
                         capture_output=True, text=True)
    return int(run.stderr.strip().splitlines()[-1])

base = statistics.median(times["/bin/true"])
print(f"\n{len(times['/bin/true'])} runs each, interleaved in {rounds} rounds; "
      f"trainc {subprocess.run([trainc, '--version'], capture_output=True, text=True).stdout.split()[1]}, "
      f"binary {os.path.getsize(trainc) / 1e6:.2f} MB\n")
print("| command | median | × /bin/true | instructions | peak RSS |")
print("|---|---:|---:|---:|---:|")
for i, name in enumerate(names):
    median = statistics.median(times[name])
    count = f"{int(counts[i]) / 1e6:.2f} M" if i < len(counts) and counts[i] else "—"
    rss = peak_rss(commands[i]) if name != "/bin/true" else None
    rss = f"{rss / 1024:.1f} MiB" if rss else "—"
    print(f"| {name} | {median * 1000:.2f} ms | {median / base:.1f}× | {count} | {rss} |")
if "kubectl kustomize (plain YAML)" in times:
    plain = statistics.median(times["kubectl kustomize (plain YAML)"])
    plugin = statistics.median(times["kubectl kustomize (trainc plugin)"])
    print(f"\nkustomize through the trainc plugin: {(plugin - plain) * 1000:+.2f} ms against plain YAML")
EOF
