//! A pod's spec as the migration's comparison ([`super::compare`]) reads
//! it: without what it compares elsewhere (names, the restart policy, the
//! training container's env and command line), nulls pruned as the API
//! server prunes them, quantities in one form with limits as requests
//! where none is set, and volumes by what they hold rather than their
//! names.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::cluster::{Pod, Workload};

/// A pod's spec without what the comparison reads elsewhere: its
/// hostname and subdomain (the names), its restart policy (the story), the
/// training container's env, command and args (the processes), and the
/// ports each controller gives the rendezvous.
pub(super) fn bare(w: &Workload, pod: &Pod) -> Json {
    let mut spec = pod.spec.clone();
    if let Some(map) = spec.as_object_mut() {
        for key in ["hostname", "subdomain", "restartPolicy"] {
            map.remove(key);
        }
    }
    for key in ["containers", "initContainers"] {
        let Some(list) = spec.get_mut(key).and_then(Json::as_array_mut) else {
            continue;
        };
        for container in list.iter_mut() {
            let trainer = key == "containers" && container["name"] == w.trainer.as_str();
            let Some(fields) = container.as_object_mut() else {
                continue;
            };
            // The training container's variables are compared one by one
            // elsewhere; another container's as a whole: the Training
            // Operator sets its variables in every container, Trainer in
            // the trainer's alone. The Job controller's index, which only
            // one side has, is no difference to a container that never read
            // it.
            if trainer {
                fields.remove("env");
            } else if let Some(env) = fields.get_mut("env").and_then(Json::as_array_mut) {
                env.retain(|v| v["name"] != crate::cluster::job::COMPLETION_INDEX_ENV);
                if env.is_empty() {
                    fields.remove("env");
                }
            }
            if trainer {
                fields.remove("command");
                fields.remove("args");
                fields.remove("name");
                if let Some(ports) = fields.get_mut("ports").and_then(Json::as_array_mut) {
                    ports.retain(|p| {
                        p["name"] != crate::cluster::pytorchjob::PORT_NAME
                            && p["containerPort"] != crate::cluster::trainjob::TRAINER_PORT
                    });
                    if ports.is_empty() {
                        fields.remove("ports");
                    }
                }
            }
        }
        if list.is_empty() {
            spec.as_object_mut().map(|m| m.remove(key));
        }
    }
    volumes_by_source(&mut spec);
    pruned(&mut spec);
    spec
}

/// Nulls removed: the API server prunes them from a custom resource before
/// it stores it, and a pod's field left null is unset. So are empty maps and
/// lists (`resources: {}`), which say what an unset field says, but for
/// `emptyDir: {}`, which is a volume's source.
fn pruned(value: &mut Json) {
    match value {
        Json::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(pruned);
            map.retain(|key, v| {
                key == "emptyDir"
                    || !(v.as_object().is_some_and(serde_json::Map::is_empty)
                        || v.as_array().is_some_and(Vec::is_empty))
            });
        }
        Json::Array(items) => items.iter_mut().for_each(pruned),
        _ => {}
    }
}

/// A container's resources as the API server stores them: every quantity
/// in one form (`4` and `"4"` are one amount), and each limit without a
/// request its request too (`pkg/apis/core/v1` defaults).
fn resources(container: &mut serde_json::Map<String, Json>) {
    let Some(resources) = container.get_mut("resources").and_then(Json::as_object_mut) else {
        return;
    };
    let canonical = |v: &Json| {
        let text = match v {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        };
        match crate::syntax::quantity::parse(&text) {
            Ok(q) => format!("{}", q.value),
            Err(_) => text,
        }
    };
    for field in ["limits", "requests"] {
        if let Some(map) = resources.get_mut(field).and_then(Json::as_object_mut) {
            for v in map.values_mut() {
                *v = Json::String(canonical(v));
            }
        }
    }
    let limits = resources.get("limits").and_then(Json::as_object).cloned();
    if let Some(limits) = limits.filter(|l| !l.is_empty()) {
        let requests = resources
            .entry("requests")
            .or_insert_with(|| Json::Object(serde_json::Map::new()));
        if let Some(requests) = requests.as_object_mut() {
            for (k, v) in limits {
                requests.entry(k).or_insert(v);
            }
        }
    }
}

/// Volumes by what they hold, not their names: each container's mounts
/// name the volume's source, and the volumes are a sorted list of sources,
/// so that a volume renamed (`trainc-code` to `code`) or moved is the same.
fn volumes_by_source(spec: &mut Json) {
    let mut sources: BTreeMap<String, String> = BTreeMap::new();
    if let Some(volumes) = spec.get_mut("volumes").and_then(Json::as_array_mut) {
        let mut held: Vec<Json> = Vec::new();
        for volume in volumes.iter() {
            let mut source = volume.clone();
            let name = source
                .as_object_mut()
                .and_then(|m| m.remove("name"))
                .and_then(|n| n.as_str().map(str::to_owned))
                .unwrap_or_default();
            let text = source.to_string();
            sources.insert(name, text);
            held.push(source);
        }
        held.sort_by_key(Json::to_string);
        *volumes = held;
    }
    for key in ["containers", "initContainers"] {
        for container in spec
            .get_mut(key)
            .and_then(Json::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(fields) = container.as_object_mut() {
                resources(fields);
            }
            let mounts = container
                .get_mut("volumeMounts")
                .and_then(Json::as_array_mut);
            for mount in mounts.into_iter().flatten() {
                let name = mount["name"].as_str().unwrap_or_default().to_owned();
                if let Some(source) = sources.get(&name) {
                    mount["name"] = Json::String(source.clone());
                }
            }
            if let Some(mounts) = container
                .get_mut("volumeMounts")
                .and_then(Json::as_array_mut)
            {
                mounts.sort_by_key(Json::to_string);
            }
        }
    }
}

/// The paths (JSON pointers) at which `a` and `b` differ.
pub(super) fn differ(a: &Json, b: &Json, pointer: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Json::Object(a), Json::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                let at = format!("{pointer}/{}", crate::tree::pointer_segment(key));
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => differ(x, y, &at, out),
                    _ => out.push(at),
                }
            }
        }
        (Json::Array(a), Json::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                differ(x, y, &format!("{pointer}/{i}"), out);
            }
        }
        _ if a != b => out.push(pointer.to_owned()),
        _ => {}
    }
}

/// `/affinity/podAffinity` as `affinity.podAffinity` (a key's own `/`
/// kept: `nvidia.com/gpu`).
pub(super) fn dotted(pointer: &str) -> String {
    pointer
        .trim_start_matches('/')
        .split('/')
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect::<Vec<_>>()
        .join(".")
}

/// A value in a line: its JSON, cut at 80 characters.
pub(super) fn short(value: &Json) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}
