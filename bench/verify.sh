#!/usr/bin/env bash
# `trainc verify` beside kubeconform on the training stream
# (bench/training.py, 10,000 objects by default), interleaved run by run,
# wall time and peak memory (GNU time) of each, then the medians and the
# ratio of wall times. kubeconform is given the same strict schemas:
# ../shared/tools/kubeconform and ../shared/k8s-schemas by default, or
# KUBECONFORM= and SCHEMAS= (a directory of `{kind}{-suffix}.json` files).
#
#   bash bench/verify.sh [OBJECTS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
objects=${1:-10000}
runs=${2:-3}
kubeconform=${KUBECONFORM:-../shared/tools/kubeconform/kubeconform}
schemas=${SCHEMAS:-../shared/k8s-schemas}
for tool in "$kubeconform" /usr/bin/time; do
    [ -x "$tool" ] || { echo "error: $tool is missing" >&2; exit 1; }
done

cargo build --release -q
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 bench/training.py "$work/training.yaml" "$objects" >&2

# one run: wall seconds and peak KiB of a command
run() {
    /usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null 2>&1 || true
    cat "$work/time"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
: > "$work/trainc"
: > "$work/kubeconform"
for i in $(seq "$runs"); do
    run target/release/trainc verify "$work/training.yaml" >> "$work/trainc"
    run "$kubeconform" -strict -summary \
        -schema-location "$schemas/{{.ResourceKind}}{{.KindSuffix}}.json" \
        "$work/training.yaml" >> "$work/kubeconform"
done
for tool in trainc kubeconform; do
    printf '%-12s wall %s s, peak %s MiB (runs: %s)\n' "$tool" \
        "$(cut -d' ' -f1 "$work/$tool" | median)" \
        "$(( $(cut -d' ' -f2 "$work/$tool" | sort -n | tail -1) / 1024 ))" \
        "$(cut -d' ' -f1 "$work/$tool" | paste -sd' ')"
done
awk -v t="$(cut -d' ' -f1 "$work/trainc" | median)" \
    -v k="$(cut -d' ' -f1 "$work/kubeconform" | median)" \
    'BEGIN { printf "trainc / kubeconform wall time: %.2f\n", t / k }'
