//! Rules on `[podTemplate]` beyond its schema: a field the spec also sets is
//! an error naming both places (one value, one place to read it), and a
//! TrainJob takes only what its API level's patch type carries.

use serde_json::{Map, Value as Json};

use super::{Rules, at};
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::{ApiLevel, Target};

use crate::spec::defaults::TRAINER_CONTAINER as TRAINER;

/// Pod fields the spec owns: (pod spec key, spec pointer, whether the spec sets it).
fn pod_owned(r: &Rules<'_>) -> Vec<(&'static str, &'static str)> {
    let mut owned = vec![
        ("nodeSelector", "/scheduling/nodeSelector"),
        ("tolerations", "/scheduling/tolerations"),
        ("affinity", "/scheduling/spreadAcrossNodes"),
        ("priorityClassName", "/scheduling/priorityClassName"),
        ("schedulerName", "/scheduling/schedulerName"),
        ("serviceAccountName", "/scheduling/serviceAccountName"),
        ("imagePullSecrets", "/scheduling/imagePullSecrets"),
        ("hostNetwork", "/hostNetwork"),
        ("dnsPolicy", "/dnsPolicy"),
    ];
    owned.retain(|(_, pointer)| r.tree_has(pointer));
    owned
}

/// Training-container fields the spec owns.
const CONTAINER_OWNED: &[(&str, &[&str])] = &[
    ("image", &["/image"]),
    (
        "command",
        &[
            "/script",
            "/module",
            "/command",
            "/code",
            "/imageEntrypoint",
        ],
    ),
    ("args", &["/args", "/code"]),
    ("workingDir", &["/workingDir"]),
    ("envFrom", &["/envFrom"]),
    ("resources", &["/resources"]),
    ("imagePullPolicy", &["/imagePullPolicy"]),
    ("securityContext", &["/securityContext"]),
];

pub(super) fn check(r: &mut Rules<'_>) {
    let Some(template) = &r.spec.pod_template else {
        return;
    };
    if let Some(metadata) = &template.metadata {
        for (key, field) in [("labels", "/labels"), ("annotations", "/annotations")] {
            for name in metadata
                .get(key)
                .and_then(Json::as_object)
                .into_iter()
                .flatten()
                .map(|(k, _)| k)
            {
                let ours = at(field, name);
                let theirs = at(&format!("/podTemplate/metadata/{key}"), name);
                if r.tree_has(&ours) {
                    conflict(r, &theirs, &ours);
                } else if key == "labels"
                    && let Some(why) = super::metadata::reserved_label(name)
                {
                    // The pods' own labels are what the Services select.
                    let d = super::metadata::reserved(r, &theirs, name, &why);
                    r.push(d);
                }
            }
        }
    }
    if let Some(spec) = &template.spec {
        pod_spec(r, spec);
    }
    // A runtime trainc writes takes the whole pod template.
    if r.target() == Target::Trainjob && !r.writes_runtime() {
        trainjob(r);
    }
}

fn pod_spec(r: &mut Rules<'_>, spec: &Map<String, Json>) {
    // The API server's own rules on names and paths; a mount may name a
    // volume of `[volumes]`, so the template is a patch.
    let whole = Json::Object(spec.clone());
    for problem in crate::syntax::pod::check(&whole, crate::syntax::pod::Extent::Patch) {
        r.push(
            Diagnostic::error(
                codes::POD_TEMPLATE_INVALID,
                r.value(&format!("/podTemplate/spec{}", problem.at)),
                format!("{}; Kubernetes rejects it", problem.message),
            )
            .with_help(problem.help),
        );
    }
    for (key, ours) in pod_owned(r) {
        if spec.contains_key(key) {
            conflict(r, &format!("/podTemplate/spec/{key}"), ours);
        }
    }
    if spec.contains_key("restartPolicy") {
        r.push(
            Diagnostic::error(
                codes::POD_TEMPLATE,
                r.key("/podTemplate/spec/restartPolicy"),
                "the pods' `restartPolicy` is the job's: the operator sets it",
            )
            .with_help("set `policy.restartPolicy`"),
        );
    }
    if r.target() == Target::Job {
        for key in ["subdomain", "hostname"] {
            if spec.contains_key(key) {
                r.push(
                    Diagnostic::error(
                        codes::POD_TEMPLATE,
                        r.key(&format!("/podTemplate/spec/{key}")),
                        format!("on target `job` the pods' `{key}` is set for them: pod `i` must be `<name>-<i>.<name>` for the ranks to find pod 0"),
                    )
                    .with_help("remove it"),
                );
            }
        }
    }
    if spec
        .get("securityContext")
        .and_then(|s| s.get("fsGroup"))
        .is_some()
        && r.tree_has("/securityContext/fsGroup")
    {
        conflict(
            r,
            "/podTemplate/spec/securityContext/fsGroup",
            "/securityContext/fsGroup",
        );
    }
    for (i, volume) in items(spec, "volumes") {
        let Some(name) = volume.get("name").and_then(Json::as_str) else {
            continue;
        };
        let theirs = format!("/podTemplate/spec/volumes/{i}/name");
        if r.tree_has(&at("/volumes", name)) {
            conflict(r, &theirs, &at("/volumes", name));
        } else if name.starts_with("trainc-") {
            reserved(r, &theirs, name);
        }
    }
    for c in containers(spec, &["initContainers", "containers"]) {
        let (name, container, base, is_trainer) = (c.name, c.map, &c.base, c.is_trainer);
        unique_mounts(r, container, base, is_trainer);
        if is_trainer {
            trainer(r, container, base);
            continue;
        }
        if name == crate::cluster::pytorchjob::CONTAINER || name == crate::cluster::trainjob::NODE {
            r.push(
                Diagnostic::error(
                    codes::POD_TEMPLATE,
                    r.value(&format!("{base}/name")),
                    format!("`{name}` is what one operator calls the training container; in `[podTemplate]` it is `{TRAINER}` on every target"),
                )
                .with_help(format!("write `name = \"{TRAINER}\"` to change the training container, or choose another name for a new one")),
            );
            continue;
        }
        if c.list == "containers" && container.contains_key("image") {
            sidecar(r, name, base);
        }
        if container.get("image").is_none() && r.target() != Target::Trainjob {
            r.push(
                Diagnostic::error(
                    codes::POD_TEMPLATE,
                    r.value(base),
                    format!("`{}[{}]` (`{name}`) has no `image`; Kubernetes rejects a container without one", c.list, c.index),
                )
                .with_help("add `image`; only the training container, `trainer`, takes the spec's"),
            );
        }
    }
}

/// A container added beside the training container (an entry without
/// `image` patches one a TrainJob's runtime has): the pod is `Succeeded`,
/// and the job done, only when every container has ended (Kubernetes'
/// Job and JobSet count pods by phase, as kubeflow/trainer v1.9.2
/// `pkg/core/status.go` `UpdateJobReplicaStatuses` does for a PyTorchJob).
fn sidecar(r: &mut Rules<'_>, name: &str, base: &str) {
    let d = Diagnostic::warning(
        codes::POD_TEMPLATE_SIDECAR,
        r.value(&format!("{base}/name")),
        format!("`{name}` runs beside `{TRAINER}` in every pod; a pod completes only when all its containers have exited, so unless `{name}` exits by itself the pods, and the job, keep running after training ends"),
    )
    .with_help(format!("move it to `podTemplate.spec.initContainers` with `restartPolicy` `Always` (a sidecar, Kubernetes 1.29 and later): it starts before `{TRAINER}` and is stopped when training ends; if it does exit by itself, list `{}` in `allowWarnings`", codes::POD_TEMPLATE_SIDECAR));
    r.push(d);
}

/// The training container: fields the spec sets belong to the spec.
fn trainer(r: &mut Rules<'_>, container: &Map<String, Json>, base: &str) {
    for (key, owners) in CONTAINER_OWNED {
        if !container.contains_key(*key) {
            continue;
        }
        if let Some(ours) = owners.iter().find(|p| r.tree_has(p)) {
            conflict(r, &format!("{base}/{key}"), ours);
        }
    }
    for (i, var) in items(container, "env") {
        if let Some(name) = var.get("name").and_then(Json::as_str)
            && r.tree_has(&at("/env", name))
        {
            conflict(r, &format!("{base}/env/{i}/name"), &at("/env", name));
        }
    }
    for (i, mount) in items(container, "volumeMounts") {
        if let Some(name) = mount.get("name").and_then(Json::as_str)
            && name.starts_with("trainc-")
        {
            reserved(r, &format!("{base}/volumeMounts/{i}/name"), name);
        }
    }
}

/// What a TrainJob's patch can carry at each API level (kubeflow/trainer
/// `pkg/apis/trainer/v1alpha1/trainjob_types.go`: v2.2.0 `PodSpecPatch` and
/// `ContainerPatch`, v2.1.0 `PodTemplateSpecOverride` and
/// `ContainerOverride`, v2.0.0 `PodSpecOverride`). Containers are patched,
/// never added: the runtime must have them, so a new init container or
/// sidecar needs a TrainingRuntime. The `node` container's env is the
/// trainer's (`[env]`): the webhook rejects it in a patch.
fn trainjob(r: &mut Rules<'_>) {
    let level = r.api_level();
    let Some(template) = &r.spec.pod_template else {
        return;
    };
    let pod_keys: &[&str] = match level {
        ApiLevel::V2_2 | ApiLevel::V2_3 => &[
            "serviceAccountName",
            "volumes",
            "initContainers",
            "containers",
            "imagePullSecrets",
            "securityContext",
            "nodeSelector",
            "affinity",
            "tolerations",
            "schedulingGates",
        ],
        ApiLevel::V2_1 => &[
            "serviceAccountName",
            "nodeSelector",
            "affinity",
            "tolerations",
            "volumes",
            "initContainers",
            "containers",
            "schedulingGates",
            "imagePullSecrets",
        ],
        ApiLevel::V2_0 => &[
            "serviceAccountName",
            "nodeSelector",
            "tolerations",
            "volumes",
            "initContainers",
            "containers",
            "schedulingGates",
        ],
    };
    if level == ApiLevel::V2_0 && template.metadata.is_some() {
        let d = needs_runtime(
            r,
            level,
            "/podTemplate/metadata",
            "pod metadata (`podTemplate.metadata`)",
        );
        r.push(d);
    }
    let Some(spec) = &template.spec else { return };
    for key in spec.keys() {
        if !pod_keys.contains(&key.as_str()) {
            let pointer = format!("/podTemplate/spec/{key}");
            let d = needs_runtime(r, level, &pointer, &format!("`podTemplate.spec.{key}`"));
            r.push(d);
        }
    }
    trainjob_containers(r, level, spec, pod_keys);
}

/// Containers in a TrainJob patch: the runtime's own, and only the fields
/// the patch type has.
fn trainjob_containers(
    r: &mut Rules<'_>,
    level: ApiLevel,
    spec: &Map<String, Json>,
    pod_keys: &[&str],
) {
    let container_keys: &[&str] = match level {
        ApiLevel::V2_2 | ApiLevel::V2_3 => &["name", "env", "volumeMounts", "securityContext"],
        _ => &["name", "env", "volumeMounts"],
    };
    let lists: Vec<&str> = ["initContainers", "containers"]
        .into_iter()
        .filter(|list| pod_keys.contains(list))
        .collect();
    for c in containers(spec, &lists) {
        let (name, container, base) = (c.name, c.map, &c.base);
        unique_mounts(r, container, base, c.is_trainer);
        if container.contains_key("image") {
            let what = format!(
                "a new container (`{name}` with an `image`): patches change only the runtime's own containers"
            );
            let d = needs_runtime(r, level, &format!("{base}/image"), &what);
            r.push(d);
            continue;
        }
        for key in container.keys() {
            let pointer = format!("{base}/{key}");
            if !container_keys.contains(&key.as_str()) {
                let what = format!(
                    "`{key}` of a container (a patch has {})",
                    container_keys
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                let d = needs_runtime(r, level, &pointer, &what);
                r.push(d);
            } else if key == "env" && name == TRAINER {
                r.push(
                    Diagnostic::error(
                        codes::POD_TEMPLATE,
                        r.key(&pointer),
                        "the Trainer webhook rejects env patched into the `node` container",
                    )
                    .with_help("set the variables in `[env]`: they become `trainer.env`"),
                );
            }
        }
    }
}

/// A TrainJob's patch holds each container's `volumeMounts` as a list map
/// keyed by `name` (every Trainer CRD v2.0.0–v2.3.0,
/// `x-kubernetes-list-type: map` on `volumeMounts` in
/// `manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml`), so the API
/// server rejects two mounts of one volume (two `subPath`s of it, say). The
/// trainer's container also holds trainc's mount of each `[volumes]` entry;
/// a patch mount at the same `mountPath` merges into it.
fn unique_mounts(r: &mut Rules<'_>, container: &Map<String, Json>, base: &str, trainer: bool) {
    // Volume name -> its first mount's path and where it was written.
    let mut seen: std::collections::HashMap<&str, (&str, String)> =
        std::collections::HashMap::new();
    if trainer {
        for (name, volume) in r.spec.volumes.iter().flatten() {
            seen.insert(name, (volume.mount_path.as_str(), at("/volumes", name)));
        }
    }
    let mounts = container.get("volumeMounts").and_then(Json::as_array);
    for (i, mount) in mounts.into_iter().flatten().enumerate() {
        let (Some(name), Some(path)) = (
            mount.get("name").and_then(Json::as_str),
            mount.get("mountPath").and_then(Json::as_str),
        ) else {
            continue;
        };
        let pointer = format!("{base}/volumeMounts/{i}");
        match seen.get(name) {
            // The same mount as trainc's: the merge makes it one.
            Some((first_path, first)) if *first_path == path && first.starts_with("/volumes") => {}
            Some((_, first)) => {
                let first = first.clone();
                r.push(
                    Diagnostic::error(
                        codes::POD_TEMPLATE,
                        r.value(&format!("{pointer}/name")),
                        format!("the volume `{name}` is mounted twice in this container; a TrainJob's patch keys mounts by volume name, and the API server rejects a duplicate"),
                    )
                    .with_secondary(r.key(&first), "mounted here")
                    .with_help("mount the volume once (at a common parent directory), or make a second volume for the other path"),
                );
            }
            None => {
                seen.insert(name, (path, pointer));
            }
        }
    }
}

fn items<'a>(
    map: &'a Map<String, Json>,
    key: &str,
) -> impl Iterator<Item = (usize, &'a Map<String, Json>)> {
    map.get(key)
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, item)| item.as_object().map(|o| (i, o)))
}

/// Each container of `[podTemplate.spec]`'s `lists` (`initContainers`,
/// `containers`): its pointer, its name, itself, and whether it is the
/// training container.
fn containers<'a>(
    spec: &'a Map<String, Json>,
    lists: &'a [&'a str],
) -> impl Iterator<Item = PodContainer<'a>> {
    lists.iter().flat_map(move |list| {
        items(spec, list).map(move |(index, map)| {
            let name = map.get("name").and_then(Json::as_str).unwrap_or_default();
            PodContainer {
                list,
                index,
                name,
                map,
                base: format!("/podTemplate/spec/{list}/{index}"),
                is_trainer: *list == "containers" && name == TRAINER,
            }
        })
    })
}

/// A container of `[podTemplate.spec]` (see [`containers`]).
struct PodContainer<'a> {
    list: &'a str,
    index: usize,
    name: &'a str,
    map: &'a Map<String, Json>,
    base: String,
    is_trainer: bool,
}

fn needs_runtime(r: &Rules<'_>, level: ApiLevel, pointer: &str, what: &str) -> Diagnostic {
    Diagnostic::error(
        codes::TARGET_UNSUPPORTED,
        r.key(pointer),
        format!("target `trainjob` on Trainer API {} cannot carry {what}", level.as_str()),
    )
    .with_help("it needs a TrainingRuntime: set `[trainjob] writeRuntime = true` and trainc writes one that carries it, or put it in your own runtime's `node` job, or use `target = \"pytorchjob\"`")
}

fn conflict(r: &mut Rules<'_>, theirs: &str, ours: &str) {
    r.push(
        Diagnostic::error(
            codes::POD_TEMPLATE,
            r.key(theirs),
            format!(
                "`{}` sets what `{}` already sets",
                crate::tree::field_path(theirs),
                crate::tree::field_path(ours)
            ),
        )
        .with_secondary(r.entry(ours), "set here")
        .with_help("keep one: the spec field, unless it cannot say what you need"),
    );
}

fn reserved(r: &mut Rules<'_>, pointer: &str, name: &str) {
    r.push(
        Diagnostic::error(
            codes::POD_TEMPLATE,
            r.value(pointer),
            format!("`{name}`: names starting with `trainc-` are trainc's own volumes"),
        )
        .with_help("choose another name"),
    );
}
