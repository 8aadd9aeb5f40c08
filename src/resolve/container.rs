//! The training container, and the Master's where `[master]` sets it apart:
//! what runs, its resources, env and security.

use std::collections::BTreeMap;

use super::spelled;
use crate::model::{Container, EnvFrom, EnvValue, EnvVar, KeyRef, Master, Policy};
use crate::spec::NProc;
use crate::spec::defaults;
use crate::spec::{self, Spec};
use k8s_openapi::api::core::v1 as core;

/// The Master of `[master]`: the Workers' container with its own image,
/// resources and count, and its own restart policy.
pub(super) fn master(
    spec: &Spec,
    master: &spec::Master,
    workers: &Container,
    workers_nproc: NProc,
    policy: &Policy,
    command: impl Fn(NProc) -> Vec<String>,
) -> Master {
    let resources = master.resources(spec.resources.as_ref());
    let gpus = resources.as_ref().and_then(|r| r.gpus).unwrap_or(0);
    // A job that runs as written is told one count for every pod.
    let nproc = if spec.runs_as_written() {
        workers_nproc
    } else {
        NProc::of(
            master
                .n_proc_per_node
                .as_ref()
                .or(spec.n_proc_per_node.as_ref()),
            gpus,
        )
    };
    let (requests, limits) = requests_and_limits(resources.as_ref());
    Master {
        container: Container {
            image: master.image.clone().or_else(|| workers.image.clone()),
            command: command(nproc),
            requests,
            limits,
            ..workers.clone()
        },
        shm: resources
            .as_ref()
            .and_then(|r| r.shm.as_ref())
            .map(spec::Quantity::text),
        nproc,
        restart_policy: master
            .restart_policy
            .map_or_else(|| policy.restart_policy.clone(), |p| spelled(&p)),
    }
}

/// The container's requests and limits, by Kubernetes resource name.
fn requests_and_limits(
    resources: Option<&spec::Resources>,
) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let mut requests = BTreeMap::new();
    let mut limits = BTreeMap::new();
    if let Some(resources) = resources {
        let gpus = resources.gpus.unwrap_or(0);
        for (name, value) in [
            ("cpu", &resources.cpu),
            ("memory", &resources.memory),
            ("ephemeral-storage", &resources.ephemeral_storage),
        ] {
            if let Some(q) = value {
                requests.insert(name.to_owned(), q.text());
                limits.insert(name.to_owned(), q.text());
            }
        }
        if let Some(over) = &resources.limits {
            for (name, value) in [
                ("cpu", &over.cpu),
                ("memory", &over.memory),
                ("ephemeral-storage", &over.ephemeral_storage),
            ] {
                match value {
                    Some(q) if q.is_no_limit() => {
                        limits.remove(name);
                    }
                    Some(q) => {
                        limits.insert(name.to_owned(), q.text());
                    }
                    None => {}
                }
            }
        }
        if gpus > 0 {
            let name = resources
                .gpu_resource
                .clone()
                .unwrap_or_else(|| defaults::GPU_RESOURCE.to_owned());
            // Extended resources must have requests equal to limits.
            requests.insert(name.clone(), gpus.to_string());
            limits.insert(name, gpus.to_string());
        }
        // The same rule holds for every extended resource (k8s.io/kubernetes
        // pkg/apis/core/validation, `validateResourceRequirements`).
        for (name, count) in resources.extended.iter().flatten() {
            requests.insert(name.clone(), count.0.to_string());
            limits.insert(name.clone(), count.0.to_string());
        }
    }
    (requests, limits)
}

/// The training container's security context (`fsGroup` is the pod's):
/// `None` when the spec sets none of its fields.
fn security(s: &spec::SecurityContext) -> Option<core::SecurityContext> {
    let capabilities = s.capabilities.clone().filter(|add| !add.is_empty());
    let context = core::SecurityContext {
        capabilities: capabilities.map(|add| core::Capabilities {
            add: Some(add),
            drop: None,
        }),
        privileged: s.privileged,
        run_as_user: s.run_as_user,
        run_as_group: s.run_as_group,
        run_as_non_root: s.run_as_non_root,
        allow_privilege_escalation: s.allow_privilege_escalation,
        read_only_root_filesystem: s.read_only_root_filesystem,
        ..Default::default()
    };
    (context != core::SecurityContext::default()).then_some(context)
}

pub(super) fn container(
    spec: &Spec,
    resources: Option<&spec::Resources>,
    command: Vec<String>,
) -> Container {
    let (requests, limits) = requests_and_limits(resources);
    Container {
        image_pull_policy: spec.image_pull_policy.map(|p| spelled(&p)),
        env_from: spec
            .env_from
            .iter()
            .flatten()
            .map(|e| EnvFrom {
                secret: e.secret.is_some(),
                name: e
                    .secret
                    .clone()
                    .or_else(|| e.config_map.clone())
                    .unwrap_or_default(),
                prefix: e.prefix.clone(),
                optional: e.optional,
            })
            .collect(),
        security: spec.security_context.as_ref().and_then(security),
        image: spec.image.clone(),
        verbatim: spec.runs_as_written(),
        command,
        args: spec.args.clone().unwrap_or_default(),
        working_dir: spec.working_dir.clone(),
        env: env_vars(spec.env.as_ref()),
        requests,
        limits,
    }
}

pub(super) fn env_vars(env: Option<&indexmap::IndexMap<String, spec::EnvValue>>) -> Vec<EnvVar> {
    env.into_iter()
        .flatten()
        .map(|(name, value)| EnvVar {
            name: name.clone(),
            value: match value {
                spec::EnvValue::Literal(text) => EnvValue::Literal(text.clone()),
                spec::EnvValue::Source(source) => env_source(source),
            },
        })
        .collect()
}

fn env_source(source: &spec::EnvSource) -> EnvValue {
    match source.secret.as_ref().or(source.config_map.as_ref()) {
        Some(name) => EnvValue::Key(KeyRef {
            secret: source.secret.is_some(),
            name: name.clone(),
            key: source.key.clone().unwrap_or_default(),
            optional: source.optional,
        }),
        None => EnvValue::Field(source.field.clone().unwrap_or_default()),
    }
}
