//! What the API server requires of the names and paths in a pod spec
//! (kubernetes v1.36.3, `pkg/apis/core/validation/validation.go`:
//! `ValidatePodSpec`, `validateContainers`, `ValidateVolumes`,
//! `ValidateVolumeMounts`, `validateKeyToPath`,
//! `validateLocalDescendingPath`, `ValidateLocalNonReservedPath`; the name
//! syntaxes of `apimachinery/pkg/util/validation`). These are the names and
//! paths a node turns into paths of its own, as `trainc run` does: a pod spec
//! that passes here names nothing outside its volumes.
//!
//! - `volumes[].name`: a DNS-1123 label, unique in the pod.
//! - `containers[].name`, `initContainers[].name`: DNS-1123 labels, unique
//!   across both lists; a whole pod has at least one container.
//! - `volumeMounts[]`: `name` a volume of the pod, `mountPath` not empty and
//!   unique in the container, `subPath` and `subPathExpr` relative without a
//!   `..` element.
//! - `hostname`, `subdomain`: DNS-1123 labels.
//! - a hostPath volume's `path`: no `..` element (`validatePathNoBacksteps`).
//! - a ConfigMap's or Secret's `items[]`: `key` not empty, `path`
//!   relative, without a `..` element, not starting with `..`; `mode` and
//!   `defaultMode` from 0 to 0777 (`validateKeyToPath`).
//!
//! The kubelet makes a relative `mountPath` absolute
//! (`pkg/volume/util/util.go` `MakeAbsolutePath`: `/` joined and cleaned),
//! which [`absolute_mount_path`] does likewise.

use serde_json::Value as Json;

use super::names;

/// One problem: where under the pod spec (a JSON pointer, `/volumes/0/name`)
/// and what is wrong, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub at: String,
    pub message: String,
    /// How to write it instead.
    pub help: String,
}

/// A whole pod spec, or a patch laid over one (a TrainJob's), where a list
/// may be absent and a mount may name a volume of the spec underneath.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extent {
    Whole,
    Patch,
}

/// The pod fields a variable may read (kubernetes v1.36.3
/// `pkg/apis/core/validation` `validEnvDownwardAPIFieldPathExpressions`).
pub const ENV_FIELD_PATHS: [&str; 9] = [
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// Whether a variable may read `path`: one of [`ENV_FIELD_PATHS`], or a
/// label or annotation by its key.
pub fn env_field_path(path: &str) -> bool {
    ENV_FIELD_PATHS.contains(&path)
        || ["metadata.labels['", "metadata.annotations['"]
            .iter()
            .any(|prefix| path.starts_with(prefix) && path.ends_with("']"))
}

/// The largest file mode a volume's files may be given.
pub const MAX_MODE: u64 = 0o777;

/// Every problem of `spec` (a pod spec), in document order.
pub fn check(spec: &Json, extent: Extent) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut push = |at: String, message: String, help: String| {
        problems.push(Problem { at, message, help });
    };
    for key in ["hostname", "subdomain"] {
        if let Some(value) = spec[key].as_str()
            && !value.is_empty()
            && let Err(bad) = names::Syntax::Dns1123Label.check(value)
        {
            push(
                format!("/{key}"),
                format!("`{key}` `{value}` is not a DNS-1123 label: {}", bad.why),
                label_help(&bad),
            );
        }
    }
    // Every volume's name, valid or not: a mount of an invalid one is
    // reported at the volume.
    let mut volume_names = std::collections::HashSet::new();
    for (i, volume) in list(spec, "volumes").iter().enumerate() {
        let name = volume["name"].as_str().unwrap_or_default();
        let new = volume_names.insert(name);
        if let Err(bad) = names::Syntax::Dns1123Label.check(name) {
            push(
                format!("/volumes/{i}/name"),
                format!("volume name `{name}` is not a DNS-1123 label: {}", bad.why),
                label_help(&bad),
            );
        } else if !new {
            push(
                format!("/volumes/{i}/name"),
                format!("two volumes are named `{name}`"),
                "give each volume its own name".to_owned(),
            );
        }
        if let Some(path) = volume["hostPath"]["path"].as_str()
            && path.split('/').any(|part| part == "..")
        {
            push(
                format!("/volumes/{i}/hostPath/path"),
                format!("the hostPath `{path}` has a `..` element"),
                "write the node's path without `..`".to_owned(),
            );
        }
        for source in ["configMap", "secret"] {
            key_to_paths(
                &volume[source],
                &format!("/volumes/{i}/{source}"),
                &mut push,
            );
        }
        for (p, projected) in list(&volume["projected"], "sources").iter().enumerate() {
            for source in ["configMap", "secret"] {
                key_to_paths(
                    &projected[source],
                    &format!("/volumes/{i}/projected/sources/{p}/{source}"),
                    &mut push,
                );
            }
        }
    }
    affinity_terms(spec, &mut push);
    for (t, toleration) in list(spec, "tolerations").iter().enumerate() {
        tolerates(toleration, &format!("/tolerations/{t}"), &mut push);
    }
    let containers = list(spec, "containers");
    if extent == Extent::Whole && containers.is_empty() {
        push(
            "/containers".to_owned(),
            "a pod needs at least one container; `containers` is empty".to_owned(),
            "add the container that runs the job".to_owned(),
        );
    }
    let mut container_names = std::collections::HashSet::new();
    for key in ["initContainers", "containers"] {
        for (c, container) in list(spec, key).iter().enumerate() {
            let at = format!("/{key}/{c}");
            let name = container["name"].as_str().unwrap_or_default();
            if let Err(bad) = names::Syntax::Dns1123Label.check(name) {
                push(
                    format!("{at}/name"),
                    format!(
                        "container name `{name}` is not a DNS-1123 label: {}",
                        bad.why
                    ),
                    label_help(&bad),
                );
            } else if !container_names.insert(name) {
                push(
                    format!("{at}/name"),
                    format!("two containers of the pod are named `{name}`"),
                    "give each container, init containers included, its own name".to_owned(),
                );
            }
            env_and_ports(container, &at, &mut push);
            let known = (extent == Extent::Whole).then_some(&volume_names);
            mounts(container, &at, known, &mut push);
        }
    }
    problems
}

/// Pod (anti-)affinity terms name the node label that groups pods
/// (`validatePodAffinityTerm`: a label key, required).
fn affinity_terms(spec: &Json, push: &mut impl FnMut(String, String, String)) {
    for kind in ["podAffinity", "podAntiAffinity"] {
        let affinity = &spec["affinity"][kind];
        let base = format!("/affinity/{kind}");
        let required = list(affinity, "requiredDuringSchedulingIgnoredDuringExecution");
        let preferred = list(affinity, "preferredDuringSchedulingIgnoredDuringExecution");
        let terms = (required.iter().enumerate())
            .map(|(i, t)| {
                (
                    format!("{base}/requiredDuringSchedulingIgnoredDuringExecution/{i}"),
                    t,
                )
            })
            .chain(preferred.iter().enumerate().map(|(i, t)| {
                (
                    format!(
                        "{base}/preferredDuringSchedulingIgnoredDuringExecution/{i}/podAffinityTerm"
                    ),
                    &t["podAffinityTerm"],
                )
            }));
        for (at, term) in terms {
            let key = term["topologyKey"].as_str().unwrap_or_default();
            if let Err(why) = names::qualified_name(key) {
                push(
                    format!("{at}/topologyKey"),
                    format!("the `topologyKey` `{key}` is not a node label key: {why}"),
                    "name the node label that groups pods, such as `kubernetes.io/hostname`"
                        .to_owned(),
                );
            }
        }
    }
}

/// A container's variables' sources and its ports' names.
fn env_and_ports(container: &Json, at: &str, push: &mut impl FnMut(String, String, String)) {
    for (e, var) in list(container, "env").iter().enumerate() {
        env_source(&var["valueFrom"], &format!("{at}/env/{e}/valueFrom"), push);
    }
    let mut port_names = std::collections::HashSet::new();
    for (p, port) in list(container, "ports").iter().enumerate() {
        let name = port["name"].as_str().filter(|n| !n.is_empty());
        if let Some(name) = name
            && !port_names.insert(name)
        {
            push(
                format!("{at}/ports/{p}/name"),
                format!("two ports of the container are named `{name}`"),
                "give each port its own name".to_owned(),
            );
        } else if let Some(name) = name
            && let Err(why) = names::port_name(name)
        {
            push(
                format!("{at}/ports/{p}/name"),
                format!("the port name `{name}` is not an IANA service name: {why}"),
                "name the port with at most 15 lowercase letters, digits and `-`, such as `metrics`".to_owned(),
            );
        }
    }
}

/// One toleration (kubernetes v1.36.3 `pkg/apis/core/validation`
/// `ValidateTolerations`).
fn tolerates(toleration: &Json, at: &str, push: &mut impl FnMut(String, String, String)) {
    let key = toleration["key"].as_str().unwrap_or_default();
    let operator = toleration["operator"].as_str().unwrap_or_default();
    let value = toleration["value"].as_str().unwrap_or_default();
    let effect = toleration["effect"].as_str().unwrap_or_default();
    let help = "write the taint's key, `operator: Equal` with its value or `operator: Exists`, and its effect (`NoSchedule`, `PreferNoSchedule`, `NoExecute`)";
    let mut refuse =
        |field: &str, message: String| push(format!("{at}/{field}"), message, help.to_owned());
    if !key.is_empty()
        && let Err(why) = names::qualified_name(key)
    {
        refuse(
            "key",
            format!("the toleration's key `{key}` is not a label key: {why}"),
        );
    }
    match operator {
        "" | "Equal" if key.is_empty() => refuse(
            "operator",
            "a toleration without a `key` matches every taint, and needs `operator: Exists`"
                .to_owned(),
        ),
        "" | "Equal" => {
            if let Err(why) = names::label_value(value) {
                refuse(
                    "value",
                    format!("the toleration's value is not a label value: {why}"),
                );
            }
        }
        "Exists" if !value.is_empty() => refuse(
            "value",
            "a toleration with `operator: Exists` has no `value`".to_owned(),
        ),
        "Exists" => {}
        other => refuse(
            "operator",
            format!("the operator `{other}` is not `Equal` or `Exists`"),
        ),
    }
    if !effect.is_empty() && !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect) {
        refuse(
            "effect",
            format!("the effect `{effect}` is not `NoSchedule`, `PreferNoSchedule` or `NoExecute`"),
        );
    } else if !toleration["tolerationSeconds"].is_null() && effect != "NoExecute" {
        refuse(
            "effect",
            "`tolerationSeconds` says how long a pod stays on a `NoExecute` taint: the effect must be `NoExecute`".to_owned(),
        );
    }
}

/// An environment variable's `valueFrom`, which names exactly one source
/// (kubernetes v1.36.3 `pkg/apis/core/validation` `validateEnvVarValueFrom`).
fn env_source(from: &Json, at: &str, push: &mut impl FnMut(String, String, String)) {
    let Some(from) = from.as_object() else {
        return;
    };
    let sources = [
        "fieldRef",
        "resourceFieldRef",
        "configMapKeyRef",
        "secretKeyRef",
        "fileKeyRef",
    ];
    let given: Vec<&str> = sources
        .into_iter()
        .filter(|s| from.get(*s).is_some_and(|v| !v.is_null()))
        .collect();
    let message = match given.len() {
        1 => return,
        0 => "`valueFrom` names no source: it needs one of `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef`".to_owned(),
        _ => format!(
            "`valueFrom` names {} sources ({}): it takes one",
            given.len(),
            given.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
        ),
    };
    push(
        at.to_owned(),
        message,
        "give the variable one source, such as `secretKeyRef: {name: hf-token, key: token}`"
            .to_owned(),
    );
}

/// The `volumeMounts` of one container at `at`; `volumes`, the pod's volume
/// names, when the pod is whole.
fn mounts(
    container: &Json,
    at: &str,
    volumes: Option<&std::collections::HashSet<&str>>,
    push: &mut impl FnMut(String, String, String),
) {
    let mut paths = std::collections::HashSet::new();
    for (m, mount) in list(container, "volumeMounts").iter().enumerate() {
        let at = format!("{at}/volumeMounts/{m}");
        let name = mount["name"].as_str().unwrap_or_default();
        if let Some(volumes) = volumes
            && !volumes.contains(name)
        {
            push(
                format!("{at}/name"),
                format!("the mount names the volume `{name}`, which the pod does not have"),
                "name one of the pod's `volumes`".to_owned(),
            );
        }
        let path = mount["mountPath"].as_str().unwrap_or_default();
        if path.is_empty() {
            push(
                format!("{at}/mountPath"),
                "`mountPath` is empty".to_owned(),
                "write the absolute path where the volume appears, such as `/data`".to_owned(),
            );
        } else if !paths.insert(path) {
            push(
                format!("{at}/mountPath"),
                format!("two mounts of the container are at `{path}`"),
                "give each mount its own `mountPath`".to_owned(),
            );
        }
        for key in ["subPath", "subPathExpr"] {
            if let Some(sub) = mount[key].as_str().filter(|s| !s.is_empty())
                && let Err(why) = descending_path(sub)
            {
                push(
                    format!("{at}/{key}"),
                    format!("`{key}` `{sub}` must be a relative path inside the volume: {why}"),
                    "write a path inside the volume, such as `team/run-1`".to_owned(),
                );
            }
        }
    }
}

/// A ConfigMap or Secret volume source's `items` and modes.
fn key_to_paths(source: &Json, at: &str, push: &mut impl FnMut(String, String, String)) {
    if !source.is_object() {
        return;
    }
    let mode = |value: &Json, at: String, push: &mut dyn FnMut(String, String, String)| {
        if let Some(n) = value.as_i64()
            && !(0..=MAX_MODE.cast_signed()).contains(&n)
        {
            push(
                at,
                format!("the file mode {n} is not from 0 to 0777 (octal; 511 in decimal)"),
                "write the mode in decimal in JSON (420 for 0644), or in octal in YAML (0644)"
                    .to_owned(),
            );
        }
    };
    mode(&source["defaultMode"], format!("{at}/defaultMode"), push);
    for (k, item) in list(source, "items").iter().enumerate() {
        let at = format!("{at}/items/{k}");
        // Only an empty key is refused (`validateKeyToPath`); a key no
        // ConfigMap can hold is found when the kubelet mounts the volume.
        if item["key"].as_str().unwrap_or_default().is_empty() {
            push(
                format!("{at}/key"),
                "Required value: the item names no key".to_owned(),
                "name a key of the ConfigMap or Secret".to_owned(),
            );
        }
        let path = item["path"].as_str().unwrap_or_default();
        if let Err(why) = item_path(path) {
            push(
                format!("{at}/path"),
                format!("the item path `{path}` must be a relative path inside the volume: {why}"),
                "write the file's path inside the volume, such as `config/train.yaml`".to_owned(),
            );
        }
        mode(&item["mode"], format!("{at}/mode"), push);
    }
}

/// The nearest valid name, when there is one.
fn label_help(bad: &names::Invalid) -> String {
    match &bad.better {
        Some(better) => format!("try `{better}`"),
        None => "lowercase letters, digits and `-`, starting and ending with a letter or digit, at most 63".to_owned(),
    }
}

fn list<'a>(value: &'a Json, key: &str) -> &'a [Json] {
    value[key].as_array().map_or(&[], Vec::as_slice)
}

/// A path that stays below where it is joined (`subPath`): relative, no
/// `..` element (`validateLocalDescendingPath`). `Err` says why not.
pub fn descending_path(path: &str) -> Result<(), String> {
    if path.starts_with('/') {
        return Err("it is absolute".to_owned());
    }
    if path.split('/').any(|part| part == "..") {
        return Err("it has a `..` element".to_owned());
    }
    if path.contains('\0') {
        return Err("it holds a NUL character".to_owned());
    }
    Ok(())
}

/// A volume item's `path` (`validateLocalNonReservedPath`): a
/// [`descending_path`], not empty, not starting with `..` (the kubelet's own
/// `..data` links). `Err` says why not.
pub fn item_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("it is empty".to_owned());
    }
    descending_path(path)?;
    if path.starts_with("..") {
        return Err("it starts with `..`, which the kubelet keeps for its own files".to_owned());
    }
    Ok(())
}

/// `path` as the kubelet mounts it: absolute, `.` and `..` elements and
/// repeated `/` resolved within the container's root.
pub fn absolute_mount_path(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::{Extent, absolute_mount_path, check};
    use serde_json::json;

    fn problems(spec: &serde_json::Value, extent: Extent) -> Vec<String> {
        check(spec, extent)
            .into_iter()
            .map(|p| format!("{}: {}", p.at, p.message))
            .collect()
    }

    #[test]
    fn names_and_paths_the_api_server_rejects() {
        let spec = json!({
            "hostname": "a\nb",
            "subdomain": "ok",
            "volumes": [
                {"name": "../x", "emptyDir": {}},
                {"name": "data", "emptyDir": {}},
                {"name": "data", "emptyDir": {}},
                {"name": "cfg", "configMap": {"name": "c", "defaultMode": 1000,
                    "items": [{"key": "a", "path": "../a"}, {"key": "", "path": "..b"}, {"key": "..c", "path": "c"}]}},
            ],
            "initContainers": [{"name": "main"}],
            "containers": [
                {"name": "main"},
                {"name": "a/b", "volumeMounts": [
                    {"name": "data", "mountPath": "/d", "subPath": "/etc"},
                    {"name": "data", "mountPath": "/d", "subPath": "x/../../y"},
                    {"name": "gone", "mountPath": ""},
                ]},
            ],
        });
        assert_eq!(
            problems(&spec, Extent::Whole),
            [
                "/hostname: `hostname` `a\nb` is not a DNS-1123 label: `\n` is not allowed (only lowercase letters, digits and `-`)",
                "/volumes/0/name: volume name `../x` is not a DNS-1123 label: `.` is not allowed (only lowercase letters, digits and `-`)",
                "/volumes/2/name: two volumes are named `data`",
                "/volumes/3/configMap/defaultMode: the file mode 1000 is not from 0 to 0777 (octal; 511 in decimal)",
                "/volumes/3/configMap/items/0/path: the item path `../a` must be a relative path inside the volume: it has a `..` element",
                "/volumes/3/configMap/items/1/key: Required value: the item names no key",
                "/volumes/3/configMap/items/1/path: the item path `..b` must be a relative path inside the volume: it starts with `..`, which the kubelet keeps for its own files",
                "/containers/0/name: two containers of the pod are named `main`",
                "/containers/1/name: container name `a/b` is not a DNS-1123 label: `/` is not allowed (only lowercase letters, digits and `-`)",
                "/containers/1/volumeMounts/0/subPath: `subPath` `/etc` must be a relative path inside the volume: it is absolute",
                "/containers/1/volumeMounts/1/mountPath: two mounts of the container are at `/d`",
                "/containers/1/volumeMounts/1/subPath: `subPath` `x/../../y` must be a relative path inside the volume: it has a `..` element",
                "/containers/1/volumeMounts/2/name: the mount names the volume `gone`, which the pod does not have",
                "/containers/1/volumeMounts/2/mountPath: `mountPath` is empty",
            ]
        );
    }

    #[test]
    fn a_patch_may_leave_out_containers_and_mount_volumes_of_the_spec_underneath() {
        let patch = json!({"containers": [{"name": "node", "volumeMounts": [{"name": "elsewhere", "mountPath": "/e"}]}]});
        assert!(problems(&patch, Extent::Patch).is_empty());
        assert_eq!(
            problems(&json!({"containers": []}), Extent::Whole),
            ["/containers: a pod needs at least one container; `containers` is empty"]
        );
        assert!(problems(&json!({}), Extent::Patch).is_empty());
    }

    #[test]
    fn a_mount_path_is_made_absolute_as_the_kubelet_does() {
        assert_eq!(absolute_mount_path("data"), "/data");
        assert_eq!(absolute_mount_path("../../etc"), "/etc");
        assert_eq!(absolute_mount_path("/a/./b//c/"), "/a/b/c");
        assert_eq!(absolute_mount_path("/a/../.."), "/");
    }
}
