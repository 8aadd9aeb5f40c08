//! The training container's own settings back into spec fields: resources,
//! env, security, and (for a PyTorchJob's full container) everything else.

use serde_json::{Map, Value as Json, json};

use super::volumes::quantity;
use super::{Job, text};
use crate::spec::NO_LIMIT;
use crate::spec::defaults;
use crate::syntax::names::is_gpu_resource as is_gpu;

/// Container fields the spec carries; the rest go to the `trainer` container
/// of `[podTemplate]`.
const CONTAINER_FIELDS: &[&str] = &[
    "name",
    "image",
    "imagePullPolicy",
    "command",
    "args",
    "workingDir",
    "env",
    "envFrom",
    "securityContext",
    "resources",
    "ports",
    "volumeMounts",
];

/// The spec's fields of a full container (a PyTorchJob's `pytorch`); the
/// caller imports `command`, `args` and `ports`.
pub(super) fn full(job: &mut Job<'_>, container: &Json, pointer: &str) {
    if let Some(image) = text(container, "image") {
        job.set("/image", json!(image));
    } else {
        job.error(
            pointer,
            "the training container has no `image`",
            "add the image the job runs",
        );
    }
    rest(job, container, pointer);
}

/// Every field of the training container but its image: what a runtime
/// trainc wrote holds in its `node` container (the TrainJob's `trainer`
/// has the image).
pub(super) fn rest(job: &mut Job<'_>, container: &Json, pointer: &str) {
    if let Some(policy) = container.get("imagePullPolicy").filter(|p| p.is_string()) {
        job.set("/imagePullPolicy", policy.clone());
    }
    if let Some(dir) = container.get("workingDir").filter(|p| p.is_string()) {
        job.set("/workingDir", dir.clone());
    }
    if let Some(list) = container.get("env").and_then(Json::as_array) {
        env(job, list, &format!("{pointer}/env"), true);
    }
    if let Some(list) = container.get("envFrom").and_then(Json::as_array) {
        match super::pod::env_from(list) {
            Some(entries) if !entries.is_empty() => job.set("/envFrom", Json::Array(entries)),
            Some(_) => {}
            None => {
                job.trainer_rest
                    .insert("envFrom".into(), Json::Array(list.clone()));
            }
        }
    }
    if let Some(context) = container.get("securityContext") {
        security(job, context);
    }
    if let Some(resources) = container.get("resources") {
        self::resources(job, resources, &format!("{pointer}/resources"));
    }
    for (key, value) in container.as_object().into_iter().flatten() {
        if !CONTAINER_FIELDS.contains(&key.as_str()) {
            job.trainer_rest.insert(key.clone(), value.clone());
        }
    }
}

/// `[env]`, or (`patchable`: on a PyTorchJob) the training container's env
/// in `[podTemplate]` when a value is one the spec cannot say.
pub(super) fn env(job: &mut Job<'_>, list: &[Json], pointer: &str, patchable: bool) {
    match super::pod::env(list) {
        Ok(env) if env.is_empty() => {}
        Ok(env) => job.set("/env", Json::Object(env)),
        Err(()) if patchable => {
            job.trainer_rest
                .insert("env".into(), Json::Array(list.to_vec()));
        }
        Err(()) => {
            // The TrainJob's env is `trainer.env`: keep what the spec can say.
            let mut kept = Map::new();
            for (i, var) in list.iter().enumerate() {
                match super::pod::env(std::slice::from_ref(var)) {
                    Ok(one) if !one.keys().any(|k| kept.contains_key(k)) => kept.extend(one),
                    _ => job.warn(
                        &format!("{pointer}/{i}"),
                        format!("env `{}` is not imported: `[env]` takes a value, a Secret or ConfigMap key, or a pod field", text(var, "name").unwrap_or_default()),
                        "set it in the runtime, or as a literal value",
                    ),
                }
            }
            if !kept.is_empty() {
                job.set("/env", Json::Object(kept));
            }
        }
    }
}

/// The container's security context: the spec's `[securityContext]` when
/// it says only what that can, else all of it in `[podTemplate]`.
pub(super) fn security(job: &mut Job<'_>, context: &Json) {
    const FIELDS: &[&str] = &[
        "privileged",
        "runAsUser",
        "runAsGroup",
        "runAsNonRoot",
        "allowPrivilegeEscalation",
        "readOnlyRootFilesystem",
    ];
    let Some(map) = context.as_object().filter(|m| !m.is_empty()) else {
        return;
    };
    let capabilities_ok = map.get("capabilities").is_none_or(|c| {
        c.as_object().is_some_and(|c| c.keys().all(|k| k == "add"))
            && c["add"]
                .as_array()
                .is_some_and(|a| a.iter().all(Json::is_string))
    });
    let fits = capabilities_ok
        && map
            .keys()
            .all(|k| k == "capabilities" || FIELDS.contains(&k.as_str()));
    if !fits {
        job.trainer_rest
            .insert("securityContext".into(), context.clone());
        return;
    }
    for (key, value) in map {
        if key == "capabilities" {
            job.set("/securityContext/capabilities", value["add"].clone());
        } else {
            job.set(&format!("/securityContext/{key}"), value.clone());
        }
    }
}

/// `[resources]`: requests, limits where they differ, GPUs and extended
/// resources by count.
pub(super) fn resources(job: &mut Job<'_>, resources: &Json, pointer: &str) {
    resources_in(job, resources, pointer, "/resources");
}

/// [`resources`] into the spec's table at `table` (`/master/resources`).
pub(super) fn resources_in(job: &mut Job<'_>, resources: &Json, pointer: &str, table: &str) {
    let empty = Map::new();
    let requests = resources["requests"].as_object().unwrap_or(&empty);
    let limits = resources["limits"].as_object().unwrap_or(&empty);
    job.unknown_keys(
        resources,
        pointer,
        &["requests", "limits"],
        "a spec's resources are requests and limits",
    );
    // Kubernetes takes a missing request from the limit.
    let mut names: Vec<&String> = requests.keys().chain(limits.keys()).collect();
    names.sort();
    names.dedup();
    let mut gpu_seen = false;
    for name in names {
        let request = requests
            .get(name)
            .or_else(|| limits.get(name))
            .map(quantity)
            .unwrap_or_default();
        let limit = limits.get(name).map(quantity);
        let field = match name.as_str() {
            "cpu" => Some("cpu"),
            "memory" => Some("memory"),
            "ephemeral-storage" => Some("ephemeralStorage"),
            _ => None,
        };
        if let Some(field) = field {
            job.set(&format!("{table}/{field}"), json!(request));
            match limit {
                Some(limit) if limit != request => {
                    job.set(&format!("{table}/limits/{field}"), json!(limit));
                }
                Some(_) => {}
                // A request without a limit stays so (Burstable).
                None => job.set(&format!("{table}/limits/{field}"), json!(NO_LIMIT)),
            }
            continue;
        }
        let count: Option<u32> = request
            .parse()
            .ok()
            .filter(|_| limit.as_ref().is_none_or(|l| *l == request));
        let Some(count) = count.filter(|c| *c > 0) else {
            job.warn(
                &format!("{pointer}/limits/{}", crate::tree::pointer_segment(name)),
                format!("`{name}` is not imported: trainc requests an extended resource by a whole count, the same as its limit"),
                "",
            );
            continue;
        };
        if is_gpu(name) && !gpu_seen {
            gpu_seen = true;
            job.set(&format!("{table}/gpus"), json!(count));
            if name != defaults::GPU_RESOURCE {
                job.set(&format!("{table}/gpuResource"), json!(name));
            }
        } else {
            job.set(
                &format!("{table}/extended/{}", crate::tree::pointer_segment(name)),
                json!(count),
            );
        }
    }
}
