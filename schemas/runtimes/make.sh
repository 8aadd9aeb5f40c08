#!/usr/bin/env bash
# Writes trainer-<tag>.yaml: the ClusterTrainingRuntimes that Kubeflow Trainer
# installs at each tag, as `kubectl kustomize` renders its runtimes overlay
# (manifests/overlays/runtimes: the base runtimes, the webhook-validation label
# and the image tags), plus the data-cache runtime of manifests/base/runtimes/
# data-cache with the dataset-initializer tag its overlay sets (v2.1.0 and
# later). Usage: make.sh PATH-TO-A-CLONE-OF-kubeflow/trainer (with its tags).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for tag in v2.0.0 v2.1.0 v2.2.0 v2.3.0; do
    tree="$work/$tag"
    mkdir -p "$tree"
    git -C "$repo" archive "$tag" manifests | tar -x -C "$tree"
    out="$here/trainer-$tag.yaml"
    {
        echo "# ClusterTrainingRuntimes of kubeflow/trainer $tag (commit $(git -C "$repo" rev-parse "$tag^{commit}")),"
        echo "# rendered by schemas/runtimes/make.sh; Apache-2.0 upstream."
        kubectl kustomize "$tree/manifests/overlays/runtimes"
        if [ -d "$tree/manifests/base/runtimes/data-cache" ]; then
            mkdir -p "$tree/cache"
            cat > "$tree/cache/kustomization.yaml" <<KUST
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../manifests/base/runtimes/data-cache
images:
  - name: ghcr.io/kubeflow/trainer/dataset-initializer
    newTag: $tag
KUST
            echo "---"
            kubectl kustomize "$tree/cache"
        fi
    } > "$out"
done
(cd "$here" && sha256sum trainer-*.yaml > SHA256SUMS)
