"""What the program in a Pod reads: its environment as the kubelet resolves
it, and, when its command starts torchrun, what torchrun gives each process.

This is the migration suite's reading of a Pod the real controllers made,
kept apart from trainc's own (src/cluster/): the kubelet's rules from
kubernetes v1.36.3 (`pkg/kubelet/kubelet_pods.go` `makeEnvironmentVariables`,
`third_party/forked/golang/expansion`), torchrun's from PyTorch's
`torch/distributed/run.py` (each option defaults to `PET_<OPTION>`, its
`env` action) and `torch/distributed/elastic/agent/server/api.py` (the
variables each worker gets).
"""

import re
import shlex

# Kubernetes' $(VAR) expansion: `$$` is a literal `$`; an undefined
# variable is left as written.
EXPANSION = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")

# torchrun's options that matter to the world, with their defaults
# (torch/distributed/run.py `get_args_parser`).
TORCHRUN = {
    "nnodes": "1:1",
    "nproc_per_node": "1",
    "node_rank": "0",
    "master_addr": "127.0.0.1",
    "master_port": "29500",
    "rdzv_backend": "static",
    "rdzv_endpoint": "",
    "rdzv_id": "none",
    "standalone": False,
    "max_restarts": "0",
}
FLAGS = {"standalone", "no_python", "run_path", "module", "m"}


def kubelet_expand(text, env):
    def one(match):
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        return env[name] if name in env and isinstance(env[name], str) else match.group(0)
    return EXPANSION.sub(one, text)


def environment(pod, container, objects):
    """The container's environment: envFrom, then env in order (a later
    name wins), `$(VAR)` expanded from what came before, each `valueFrom`
    read from the pod or from MANIFEST's ConfigMaps and Secrets (one that
    is not there reads as `<kind name/key>`)."""
    env = {}
    stores = {(o.get("kind"), o["metadata"]["name"]): o for o in objects
              if o.get("kind") in ("ConfigMap", "Secret")}
    for source in container.get("envFrom") or []:
        prefix = source.get("prefix", "")
        for kind, key in [("ConfigMap", "configMapRef"), ("Secret", "secretRef")]:
            if key in source:
                store = stores.get((kind, source[key]["name"]), {})
                for name, value in (store.get("data") or {}).items():
                    env[prefix + name] = str(value)
                for name, value in (store.get("stringData") or {}).items():
                    env[prefix + name] = str(value)
    for var in container.get("env") or []:
        name = var["name"]
        if "valueFrom" not in var:
            env[name] = kubelet_expand(var.get("value", ""), env)
            continue
        source = var["valueFrom"]
        if "fieldRef" in source:
            env[name] = field(pod, source["fieldRef"]["fieldPath"])
        elif "configMapKeyRef" in source or "secretKeyRef" in source:
            kind, ref = (("ConfigMap", source["configMapKeyRef"]) if "configMapKeyRef" in source
                         else ("Secret", source["secretKeyRef"]))
            store = stores.get((kind, ref["name"]), {})
            value = {**(store.get("data") or {}), **(store.get("stringData") or {})}.get(ref["key"])
            env[name] = str(value) if value is not None else f"<{kind} {ref['name']}/{ref['key']}>"
        else:
            env[name] = f"<{sorted(source)[0]}>"
    return env


def field(pod, path):
    meta = pod["metadata"]
    match = re.fullmatch(r"metadata\.(labels|annotations)\['(.*)'\]", path)
    if match:
        return (meta.get(match.group(1)) or {}).get(match.group(2), "")
    if path == "metadata.name":
        return meta["name"]
    if path == "metadata.namespace":
        return meta.get("namespace", "default")
    if path == "status.podIP":
        return f"<the IP of {meta['name']}>"
    return f"<{path}>"


def command_line(container, env):
    return [kubelet_expand(word, env) for word in
            (container.get("command") or []) + (container.get("args") or [])]


def launcher(argv, env):
    """torchrun's words in a command line, `python -m torch.distributed.run`
    and `bash -c SCRIPT` (the script's `$VAR`s expanded) included; None when
    the command starts no torchrun."""
    if not argv:
        return None
    head = argv[0].rsplit("/", 1)[-1]
    if head in ("bash", "sh", "zsh", "dash") and "-c" in argv[1:]:
        script = argv[argv.index("-c") + 1] if argv.index("-c") + 1 < len(argv) else ""
        for line in re.split(r"\n|&&|;|\|\|", script):
            try:
                words = shlex.split(line, comments=True)
            except ValueError:
                continue
            words = [shell_expand(word, env) for word in words]
            while words and ("=" in words[0] and not words[0].startswith("-")
                             or words[0] in ("exec", "time")):
                words = words[1:]
            found = launcher(words, env)
            if found is not None:
                return found
        return None
    if head == "torchrun":
        return argv[1:]
    if head.startswith("python"):
        rest = argv[1:]
        while rest and rest[0].startswith("-") and rest[0] != "-m":
            rest = rest[1:]
        if len(rest) >= 2 and rest[0] == "-m" and rest[1] in (
                "torch.distributed.run", "torch.distributed.launch"):
            return rest[2:]
    return None


def shell_expand(word, env):
    def one(match):
        name = match.group(1) or match.group(2)
        value = env.get(name, "")
        return value if isinstance(value, str) else ""
    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", one, word)


def torchrun_options(words, env):
    """torchrun's options: given on its command line, else `PET_<OPTION>`,
    else its default. Stops at the script."""
    given = {}
    index = 0
    while index < len(words):
        word = words[index]
        if not word.startswith("-"):
            break
        name, _, value = word.lstrip("-").partition("=")
        name = name.replace("-", "_")
        if name in FLAGS:
            given[name] = True
            index += 1
            continue
        if not _:
            value = words[index + 1] if index + 1 < len(words) else ""
            index += 1
        given[name] = value
        index += 1
    options = {}
    for name, default in TORCHRUN.items():
        if name in given:
            options[name] = given[name]
        elif f"PET_{name.upper()}" in env:
            value = env[f"PET_{name.upper()}"]
            options[name] = value if name not in FLAGS else value not in ("", "0", "False")
        else:
            options[name] = default
    return options


def processes(options, gpus):
    """How many workers torchrun starts (`auto`: one per GPU, on a node
    without GPUs one per CPU of the host, which no pod states)."""
    value = str(options["nproc_per_node"])
    if value in ("auto", "gpu") and gpus:
        return gpus
    if value in ("auto", "cpu", "gpu"):
        return "one per CPU of the host"
    try:
        return int(value)
    except ValueError:
        return value


def view(pod, container, objects):
    """What the pod's program reads: `launcher` (`torchrun`; `python`, a
    program that starts none; `script`, a command that may start one from
    the `PET_*` variables; `image`, the image's entrypoint), `node`
    and `world` (torchrun's node rank and world size; None without it), `procs`,
    rank 0's address and port as the program reads them, and `env`: each process's
    environment, the variables torchrun sets given for local rank 0 and the
    world's ranks listed in `ranks`."""
    env = environment(pod, container, objects)
    argv = command_line(container, env)
    words = launcher(argv, env)
    limits = (container.get("resources") or {}).get("limits") or {}
    gpus = int(limits.get("nvidia.com/gpu", 0) or 0)
    if words is None:
        head = argv[0].rsplit("/", 1)[-1] if argv else ""
        kind = "python" if head.startswith("python") else "script" if argv else "image"
        return {"launcher": kind, "env": env,
                "procs": 1, "node": None, "world": None,
                "master": env.get("MASTER_ADDR"), "port": env.get("MASTER_PORT")}
    options = torchrun_options(words, env)
    procs = processes(options, gpus)
    nnodes = str(options["nnodes"])
    low, _, high = nnodes.partition(":")
    fixed = options["rdzv_backend"] == "static" and not options["standalone"]
    if (high and low != high) or not low.isdigit():
        world = "as the rendezvous forms it"
    elif isinstance(procs, int):
        world = int(low) * procs
    else:
        world = f"{low} × {procs}"
    child = dict(env)
    child.update({
        "LOCAL_RANK": "0",
        "LOCAL_WORLD_SIZE": str(procs),
        "GROUP_WORLD_SIZE": low,
        "WORLD_SIZE": str(world),
        "TORCHELASTIC_RUN_ID": str(options["rdzv_id"]),
        "TORCHELASTIC_MAX_RESTARTS": str(options["max_restarts"]),
    })
    if fixed:
        node = options["node_rank"]
        child["GROUP_RANK"] = child["ROLE_RANK"] = str(node)
        child["MASTER_ADDR"], child["MASTER_PORT"] = options["master_addr"], str(options["master_port"])
        if str(node).isdigit() and isinstance(procs, int):
            child["RANK"] = str(int(node) * procs)
    else:
        node = "as the rendezvous assigns it"
        child["RANK"] = node
        endpoint = options["rdzv_endpoint"] or f"{options['master_addr']}:{options['master_port']}"
        child["MASTER_ADDR"], _, child["MASTER_PORT"] = endpoint.rpartition(":")
    return {"launcher": "torchrun", "env": child, "procs": procs, "node": str(node),
            "world": str(world), "master": child["MASTER_ADDR"], "port": child["MASTER_PORT"],
            "rendezvous": "static" if fixed else options["rdzv_backend"]}


def resolves_to(address, namespace, pods, services):
    """The pod a DNS name reaches on the cluster: a Service's name (its
    selector picks the pod), or `<hostname>.<subdomain>` (a pod's own name
    under a headless Service), with or without `.<ns>.svc.cluster.local`."""
    if not isinstance(address, str):
        return None
    name = address
    for suffix in [".svc.cluster.local", ".svc"]:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    parts = name.split(".")
    if len(parts) >= 2 and parts[-1] != namespace and len(parts) == 3:
        return None
    if len(parts) >= 2 and parts[-1] == namespace:
        parts = parts[:-1]
    if len(parts) == 1:
        for service in services:
            if (service["metadata"]["name"] == parts[0]
                    and service["metadata"].get("namespace", "default") == namespace):
                selector = service["spec"].get("selector") or {}
                chosen = [p for p in pods if selector and all(
                    (p["metadata"].get("labels") or {}).get(k) == v for k, v in selector.items())]
                return own_name(chosen[0]) if len(chosen) == 1 else None
        return None
    if len(parts) == 2:
        for pod in pods:
            spec = pod["spec"]
            if (spec.get("hostname"), spec.get("subdomain")) == tuple(parts) and \
                    pod["metadata"].get("namespace", "default") == namespace:
                return own_name(pod)
    return None


def own_name(pod):
    """A pod's name as its peers and its logs know it: a Job's pod by its
    hostname (its name has the Job controller's random suffix)."""
    return pod["spec"].get("hostname") or pod["metadata"]["name"]
