"""An operator's webhook configurations (its kustomize base's
manifests.yaml), pointed at its manager on loopback: each webhook's
clientConfig becomes the URL of its path on 127.0.0.1:PORT with the CA
that signed the manager's certificate, and each configuration is named
after the operator so that two operators' do not collide. Without
kube-proxy no Service routes to a process on this machine.

    python3 webhooks.py OPERATOR MANIFESTS PORT CA_FILE > configurations.yaml
"""

import base64
import sys

import yaml


def main():
    operator, manifests, port, ca_file = sys.argv[1:5]
    ca = base64.b64encode(open(ca_file, "rb").read()).decode()
    out = []
    for doc in yaml.safe_load_all(open(manifests)):
        if not doc or doc.get("kind") not in (
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
        ):
            continue
        doc["metadata"] = {"name": f"{operator}-{doc['metadata']['name']}"}
        for hook in doc.get("webhooks", []):
            path = hook["clientConfig"]["service"].get("path", "/")
            hook["clientConfig"] = {
                "url": f"https://127.0.0.1:{port}{path}",
                "caBundle": ca,
            }
        out.append(doc)
    if not out:
        sys.exit(f"webhooks.py: no webhook configuration in {manifests}")
    yaml.safe_dump_all(out, sys.stdout, sort_keys=False)


main()
