//! The training container's volumes back into `[volumes]` and
//! `resources.shm`: a claim created alongside the job becomes `size`, one only
//! referenced `claim`; a volume or mount with settings a `[volumes]` entry
//! has no field for goes whole into `[podTemplate]`.

use std::collections::HashMap;

use serde_json::{Map, Value as Json, json};

use super::{Job, Others, Pod, warn_at};
use crate::spec::defaults::{self, LABEL_MANAGED_BY, LABEL_NAME};

/// Where trainc mounts its memory-backed emptyDir, and the volume it adds
/// for a read-only root filesystem.
const SHM_MOUNT: &str = "/dev/shm";
const TMP_VOLUME: &str = "trainc-tmp";

/// The training container's mounts and the pod's volumes.
pub(super) fn import(
    job: &mut Job<'_>,
    others: &mut Others<'_, '_>,
    pod: &Pod<'_>,
    trainer: Option<(&Json, &str)>,
) {
    let all: Vec<Json> = pod.spec["volumes"].as_array().cloned().unwrap_or_default();
    let mut used = vec![false; all.len()];
    // Each volume's place by name (the first, should a name repeat).
    let mut places: HashMap<&str, usize> = HashMap::new();
    for (v, volume) in all.iter().enumerate() {
        if let Some(name) = volume["name"].as_str() {
            places.entry(name).or_insert(v);
        }
    }
    let mounts = trainer
        .and_then(|(c, _)| c["volumeMounts"].as_array().cloned())
        .unwrap_or_default();
    let read_only_root =
        trainer.is_some_and(|(c, _)| c["securityContext"]["readOnlyRootFilesystem"] == true);
    let mut rest_mounts = Vec::new();
    for (m, mount) in mounts.iter().enumerate() {
        let name = mount["name"].as_str().unwrap_or_default();
        let Some(path) = mount["mountPath"].as_str() else {
            let at = format!("{}/volumeMounts/{m}", trainer.map_or("", |(_, p)| p));
            job.error(
                &at,
                "a volume mount without a `mountPath`",
                "Kubernetes rejects it: add the path or remove the mount",
            );
            continue;
        };
        let Some(&v) = places.get(name) else {
            rest_mounts.push(mount.clone());
            continue;
        };
        let volume = &all[v];
        let mount_ptr = format!("{}/volumeMounts/{m}", trainer.map_or("", |(_, p)| p));
        if used[v] {
            rest_mounts.push(mount.clone());
            continue;
        }
        used[v] = true;
        if path == SHM_MOUNT && shm(job, volume, mount) {
            continue;
        }
        if name == TMP_VOLUME && path == "/tmp" && read_only_root {
            continue; // trainc mounts it for a read-only root filesystem
        }
        if !spec_volume(
            job,
            others,
            pod,
            volume,
            mount,
            &format!("{}/volumes/{v}", pod.base),
        ) {
            if name.starts_with("trainc-") && !job.migrating {
                job.warn(&mount_ptr, format!("volume `{name}` is not imported: names starting with `trainc-` are trainc's own"), "rename it in the input and import again");
                continue;
            }
            // `trainc migrate` keeps the objects beside the job (a `[code]`
            // job's ConfigMap): the volume that mounts one stays, renamed
            // out of trainc's own names.
            let (mut volume, mut mount) = (volume.clone(), mount.clone());
            if let Some(rest) = name.strip_prefix("trainc-") {
                let taken = |n: &str| all.iter().any(|v| v["name"] == n);
                let new = if taken(rest) {
                    format!("job-{rest}")
                } else {
                    rest.to_owned()
                };
                job.warn(
                    &mount_ptr,
                    format!("volume `{name}` is kept as `{new}`: names starting with `trainc-` are trainc's own"),
                    "",
                );
                volume["name"] = json!(new);
                mount["name"] = json!(new);
            }
            to_template(job, &volume);
            rest_mounts.push(mount);
        }
    }
    for (v, volume) in all.iter().enumerate() {
        if !used[v] {
            to_template(job, volume);
        }
    }
    if !rest_mounts.is_empty() {
        job.trainer_rest
            .insert("volumeMounts".into(), Json::Array(rest_mounts));
    }
}

/// A volume the spec cannot say, as it is, into `[podTemplate.spec.volumes]`.
fn to_template(job: &mut Job<'_>, volume: &Json) {
    job.template_spec
        .entry("volumes")
        .or_insert_with(|| Json::Array(Vec::new()))
        .as_array_mut()
        .expect("volumes is a list")
        .push(volume.clone());
}

/// A memory-backed emptyDir at `/dev/shm` with a size: `resources.shm`.
fn shm(job: &mut Job<'_>, volume: &Json, mount: &Json) -> bool {
    match shm_size(volume, mount) {
        Some(size) => {
            job.set("/resources/shm", json!(size));
            true
        }
        None => false,
    }
}

/// The size of a volume mounted at `/dev/shm` as trainc writes it: a
/// memory-backed emptyDir with a size limit, and nothing else.
fn shm_size(volume: &Json, mount: &Json) -> Option<String> {
    let plain_mount = mount
        .as_object()
        .is_some_and(|m| m.keys().all(|k| k == "name" || k == "mountPath"));
    let dir = &volume["emptyDir"];
    let sized = dir.as_object().is_some_and(|d| d.len() == 2)
        && dir["medium"] == "Memory"
        && dir["sizeLimit"].is_string()
        || dir["sizeLimit"].is_number() && dir["medium"] == "Memory";
    let plain_volume = volume.as_object().is_some_and(|v| v.len() == 2);
    (plain_mount && sized && plain_volume).then(|| quantity(&dir["sizeLimit"]))
}

/// The `/dev/shm` volume of the pod `spec` whose training container is
/// `container`, as trainc writes it: its name and size.
pub(super) fn pod_shm<'a>(spec: &Json, container: &'a Json) -> Option<(&'a Json, String)> {
    let mount = container["volumeMounts"]
        .as_array()?
        .iter()
        .find(|m| m["mountPath"] == SHM_MOUNT)?;
    let volume = spec["volumes"]
        .as_array()?
        .iter()
        .find(|v| v["name"] == mount["name"])?;
    Some((&mount["name"], shm_size(volume, mount)?))
}

/// A Kubernetes quantity as the spec writes it: always a string.
pub(super) fn quantity(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether `name` can be a key of `[volumes]`: a DNS-1123 label, not trainc's.
fn volume_key_ok(name: &str) -> bool {
    !name.starts_with("trainc-")
        && !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

/// A volume and its mount as a `[volumes]` entry, if the spec can say all
/// of it; `false` leaves both to `[podTemplate]`.
fn spec_volume(
    job: &mut Job<'_>,
    others: &mut Others<'_, '_>,
    pod: &Pod<'_>,
    volume: &Json,
    mount: &Json,
    pointer: &str,
) -> bool {
    let name = volume["name"].as_str().unwrap_or_default();
    let mount_ok = mount.as_object().is_some_and(|m| {
        m.keys()
            .all(|k| ["name", "mountPath", "readOnly", "subPath"].contains(&k.as_str()))
    });
    let Some(fields) = volume.as_object().filter(|v| v.len() == 2) else {
        return false;
    };
    if !mount_ok || !volume_key_ok(name) || job.get(&format!("/volumes/{name}")).is_some() {
        return false;
    }
    let (source, value) = fields
        .iter()
        .find(|(k, _)| *k != "name")
        .expect("two fields, one is the name");
    let mut entry = Map::new();
    entry.insert("mountPath".into(), mount["mountPath"].clone());
    let mut key = name.to_owned();
    match (source.as_str(), value.as_object()) {
        ("persistentVolumeClaim", Some(claim)) if claim.keys().all(|k| k == "claimName") => {
            let Some(claim_name) = claim.get("claimName").and_then(Json::as_str) else {
                return false;
            };
            let namespace = job.namespace.clone();
            match others.claim(claim_name, namespace.as_deref()) {
                Some(_) if job.migrating => {
                    entry.insert("claim".into(), json!(claim_name));
                }
                Some((pvc, node)) => {
                    key = new_claim(job, &mut entry, pod, &pvc, node, name, pointer);
                }
                None => {
                    entry.insert("claim".into(), json!(claim_name));
                }
            }
        }
        ("emptyDir", Some(dir)) if dir.is_empty() => {
            entry.insert("emptyDir".into(), json!(true));
        }
        // `Map[key]` panics on a missing key: `get`, always.
        ("emptyDir", Some(dir)) if dir.len() == 1 && dir.contains_key("sizeLimit") => {
            let limit = dir.get("sizeLimit").unwrap_or(&Json::Null);
            entry.insert("emptyDir".into(), json!(quantity(limit)));
        }
        ("configMap", Some(source)) if source.len() == 1 => match source.get("name") {
            Some(name) if name.is_string() => {
                entry.insert("configMap".into(), name.clone());
            }
            _ => return false,
        },
        ("secret", Some(source)) if source.len() == 1 => match source.get("secretName") {
            Some(name) if name.is_string() => {
                entry.insert("secret".into(), name.clone());
            }
            _ => return false,
        },
        _ => return false,
    }
    if mount["readOnly"] == true {
        entry.insert("readOnly".into(), json!(true));
    }
    if let Some(sub) = mount.get("subPath").filter(|s| s.is_string()) {
        entry.insert("subPath".into(), sub.clone());
    }
    job.set(&format!("/volumes/{key}"), Json::Object(entry));
    true
}

/// A claim created alongside the job: `size`, and the claim's settings
/// where they differ from trainc's. Returns the volume's key: one that gives
/// the claim its name back (`<job>-<key>`) when there is one.
fn new_claim(
    job: &mut Job<'_>,
    entry: &mut Map<String, Json>,
    pod: &Pod<'_>,
    pvc: &Json,
    node: &crate::tree::Node,
    volume: &str,
    pointer: &str,
) -> String {
    let claim_name = pvc["metadata"]["name"].as_str().unwrap_or_default();
    let prefix = format!("{}-", job.name);
    let key = match claim_name.strip_prefix(&prefix) {
        Some(rest) if volume_key_ok(rest) && job.get(&format!("/volumes/{rest}")).is_none() => {
            rest.to_owned()
        }
        _ => {
            job.warn(
                pointer,
                format!("claim `{claim_name}` becomes `{}`: trainc names the claims it creates `<job>-<volume>`", crate::derived::claim(&job.name, volume)),
                "rename the claim in whatever else refers to it, or use it as an existing claim (`claim = \"...\"`) and apply it yourself",
            );
            volume.to_owned()
        }
    };
    let spec = &pvc["spec"];
    if let Some(size) = spec.pointer("/resources/requests/storage") {
        entry.insert("size".into(), json!(quantity(size)));
    } else {
        {
            warn_at(
                job,
                node,
                "/spec",
                format!(
                    "claim `{claim_name}` has no `resources.requests.storage`; trainc writes `size`"
                ),
                "set `size` in the spec",
            );
            entry.insert("size".into(), json!("1Gi"));
        }
    }
    let default_mode = if pod.max_nodes > 1 {
        defaults::ACCESS_MODE_SHARED
    } else {
        defaults::ACCESS_MODE_SINGLE
    };
    if let Some(modes) = spec.get("accessModes").and_then(Json::as_array)
        && modes.as_slice() != [json!(default_mode)]
    {
        entry.insert("accessModes".into(), Json::Array(modes.clone()));
    }
    if let Some(class) = spec.get("storageClassName").filter(|c| c.is_string()) {
        entry.insert("storageClass".into(), class.clone());
    }
    for (key, _) in spec.as_object().into_iter().flatten() {
        let carried = ["accessModes", "storageClassName", "resources"].contains(&key.as_str())
            || (key == "volumeMode" && spec[key] == "Filesystem");
        if !carried {
            warn_at(
                job,
                node,
                &format!("/spec/{key}"),
                format!(
                    "`{key}` of claim `{claim_name}` is not imported: a spec's claim has a size, access modes and a storage class"
                ),
                "create the claim yourself and mount it with `claim = \"...\"`",
            );
        }
    }
    if spec["resources"]
        .as_object()
        .is_some_and(|r| r.keys().any(|k| k != "requests"))
    {
        warn_at(
            job,
            node,
            "/spec/resources",
            format!("claim `{claim_name}`: only `resources.requests.storage` is imported"),
            "create the claim yourself and mount it with `claim = \"...\"`",
        );
    }
    let metadata = &pvc["metadata"];
    let labels_ok = metadata["labels"].as_object().is_none_or(|l| {
        l.iter().all(|(k, v)| {
            (k == LABEL_MANAGED_BY && v == "trainc") || (k == LABEL_NAME && v == job.name.as_str())
        })
    });
    for key in ["labels", "annotations"] {
        let trainc_only = key == "labels" && labels_ok;
        if metadata
            .get(key)
            .is_some_and(|m| m.as_object().is_some_and(|m| !m.is_empty()))
            && !trainc_only
        {
            warn_at(
                job,
                node,
                &format!("/metadata/{key}"),
                format!(
                    "the {key} of claim `{claim_name}` are not imported: trainc gives a claim the spec's labels and annotations"
                ),
                "set them in the spec's `labels` and `annotations` if every object should have them",
            );
        }
    }
    key
}
