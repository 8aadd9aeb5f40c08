#!/usr/bin/env bash
# Seeds corpus/spec, corpus/function, corpus/import, corpus/verify, corpus/runtimes and corpus/run from
# the examples, the check cases, the adversarial corpus, the import tests'
# manifests and the goldens.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p corpus/spec corpus/function corpus/import corpus/verify corpus/runtimes corpus/run
i=0
for f in ../examples/*.toml ../tests/check/*.toml ../tests/adversarial/*.toml; do
    i=$((i + 1)); { printf '\x00'; cat "$f"; } > "corpus/spec/toml-$i"
done
for f in ../examples/*.yaml ../tests/check/*.yaml ../tests/adversarial/*.yaml; do
    i=$((i + 1)); { printf '\x01'; cat "$f"; } > "corpus/spec/yaml-$i"
done
for f in ../tests/adversarial/*.rl; do
    cp "$f" "corpus/function/$(basename "$f")"
done
# ResourceLists with golden objects as items and an example as functionConfig.
python3 - <<'PY'
import glob, tomllib, yaml
items = [d for g in sorted(glob.glob('../golden/*/*.yaml'))[:12] for d in yaml.safe_load_all(open(g)) if d]
for n, path in enumerate(sorted(glob.glob('../examples/*.toml'))[:8]):
    spec = tomllib.load(open(path, 'rb'))
    config = {'apiVersion': 'trainc.dev/v1alpha1', 'kind': 'TrainSpec',
              'metadata': {'name': spec.get('name', 'x'),
                           'annotations': {'config.kubernetes.io/local-config': 'true'}},
              'spec': {k: v for k, v in spec.items() if k != 'name'}}
    rl = {'apiVersion': 'config.kubernetes.io/v1', 'kind': 'ResourceList',
          'items': items[n:n + 3], 'functionConfig': config}
    open(f'corpus/function/rl-{n}', 'w').write(yaml.safe_dump(rl, sort_keys=False))
PY
# Manifests: the first byte picks import's output format or verify's API level.
for f in ../tests/import/*.yaml ../examples/import/*.yaml ../golden/*/*.yaml ../tests/adversarial/*.yaml; do
    i=$((i + 1))
    { printf '\x%02x' $((i % 3)); cat "$f"; } > "corpus/import/m-$i"
    { printf '\x%02x' $((i % 3)); cat "$f"; } > "corpus/verify/m-$i"
done
# Runtimes files: what Kubeflow ships, the tests' and examples' own, upstream manifests.
for f in ../schemas/runtimes/*.yaml ../tests/check/runtimes/*.yaml ../examples/runtimes/*.yaml ../tests/upstream/*/*.yaml; do
    i=$((i + 1))
    { printf '\x%02x' $((i % 4)); cat "$f"; } > "corpus/runtimes/r-$i"
done
# Runs: the goldens' manifests and the adversarial corpus's run cases.
for f in ../golden/*/*.yaml ../tests/adversarial/run-*.yaml; do
    i=$((i + 1))
    { printf "\\x$(printf %02x $(( (i % 3) | (i % 2) * 128 )))"; cat "$f"; } > "corpus/run/m-$i"
done
echo "seeded $(ls corpus/spec | wc -l) spec, $(ls corpus/function | wc -l) function, $(ls corpus/import | wc -l) import, $(ls corpus/verify | wc -l) verify, $(ls corpus/runtimes | wc -l) runtimes and $(ls corpus/run | wc -l) run inputs"
