//! The pod template shared by every job kind: the training container, its
//! volumes, and where the pod may run.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::{non_empty, non_empty_vec};
use crate::code::Code;
use crate::model::{Container, EnvValue, Master, Model, VolumeSource};

/// The volume that backs `/dev/shm`. The `trainc-` prefix is reserved for
/// trainc's own volumes, so it cannot clash with a volume of the spec.
pub(super) const SHM_VOLUME: &str = "trainc-shm";

/// How the target names and finds its pods.
pub(super) struct PodShape<'a> {
    /// Name of the training container.
    pub container: &'a str,
    /// Ports the container always has (the operator's rendezvous port).
    pub fixed_ports: &'a [(&'a str, i32)],
    /// Labels the operator puts on every pod of this job, for anti-affinity.
    pub job_selector: BTreeMap<String, String>,
}

/// What sets one replica's pods apart from the rest of the job: the
/// training container and `/dev/shm` (a PyTorchJob's `[master]`).
#[derive(Clone, Copy)]
pub(super) struct Role<'a> {
    pub container: &'a Container,
    pub shm: Option<&'a str>,
}

impl<'a> Role<'a> {
    /// The job's own: every pod's but a Master's of its own.
    pub(super) fn of(model: &'a Model) -> Role<'a> {
        Role {
            container: &model.container,
            shm: model.shm.as_deref(),
        }
    }

    pub(super) fn master(master: &'a Master) -> Role<'a> {
        Role {
            container: &master.container,
            shm: master.shm.as_deref(),
        }
    }
}

/// The pod template of every pod of the job.
pub(super) fn template(model: &Model, shape: &PodShape<'_>) -> core::PodTemplateSpec {
    template_as(model, Role::of(model), shape)
}

/// The pod template of the pods of `role`.
pub(super) fn template_as(
    model: &Model,
    role: Role<'_>,
    shape: &PodShape<'_>,
) -> core::PodTemplateSpec {
    core::PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: non_empty(&model.labels),
            annotations: non_empty(&model.pod_annotations),
            ..ObjectMeta::default()
        }),
        spec: Some(pod_spec(model, role, shape)),
    }
}

fn pod_spec(model: &Model, role: Role<'_>, shape: &PodShape<'_>) -> core::PodSpec {
    let s = &model.scheduling;
    core::PodSpec {
        containers: vec![container(model, role, shape)],
        volumes: non_empty_vec(volumes(model, role)),
        node_selector: non_empty(&s.node_selector),
        tolerations: non_empty_vec(tolerations(model)),
        affinity: s.spread_across_nodes.then(|| spread(shape)),
        priority_class_name: s.priority_class_name.clone(),
        scheduler_name: s.scheduler_name.clone(),
        service_account_name: s.service_account_name.clone(),
        image_pull_secrets: non_empty_vec(image_pull_secrets(model)),
        host_network: model.pod.host_network.then_some(true),
        dns_policy: model.pod.dns_policy.clone(),
        security_context: pod_security(model),
        ..core::PodSpec::default()
    }
}

/// The pod-level security settings (`fsGroup`).
pub(super) fn pod_security(model: &Model) -> Option<core::PodSecurityContext> {
    model.pod.fs_group.map(|group| core::PodSecurityContext {
        fs_group: Some(group),
        ..Default::default()
    })
}

/// The training container's security context.
pub(super) fn security(model: &Model) -> Option<core::SecurityContext> {
    model.container.security.clone()
}

pub(super) fn env_from(model: &Model) -> Vec<core::EnvFromSource> {
    model
        .container
        .env_from
        .iter()
        .map(|e| core::EnvFromSource {
            prefix: e.prefix.clone(),
            secret_ref: e.secret.then(|| core::SecretEnvSource {
                name: e.name.clone(),
                optional: e.optional,
            }),
            config_map_ref: (!e.secret).then(|| core::ConfigMapEnvSource {
                name: e.name.clone(),
                optional: e.optional,
            }),
        })
        .collect()
}

fn container(model: &Model, role: Role<'_>, shape: &PodShape<'_>) -> core::Container {
    let c = role.container;
    let mut ports: Vec<core::ContainerPort> = shape
        .fixed_ports
        .iter()
        .map(|(name, port)| core::ContainerPort {
            name: Some((*name).to_owned()),
            container_port: *port,
            ..Default::default()
        })
        .collect();
    // On the host network every declared port becomes a hostPort of the same
    // number (kubernetes/kubernetes pkg/apis/core/v1/defaults.go
    // `defaultHostNetworkPorts`), and the scheduler then places one pod of
    // the job per node. The Services reach `[ports]` by number, so on the
    // host network only the ports an operator requires by name are declared.
    if !model.pod.host_network {
        ports.extend(model.ports.iter().map(|p| core::ContainerPort {
            name: Some(p.name.clone()),
            container_port: i32::from(p.port),
            ..Default::default()
        }));
    }
    core::Container {
        name: shape.container.to_owned(),
        image: c.image.clone(),
        command: non_empty_vec(c.command.clone()),
        args: non_empty_vec(c.args.clone()),
        working_dir: c.working_dir.clone(),
        env: non_empty_vec(env(model)),
        env_from: non_empty_vec(env_from(model)),
        image_pull_policy: c.image_pull_policy.clone(),
        security_context: security(model),
        ports: non_empty_vec(ports),
        resources: resources(c),
        volume_mounts: non_empty_vec(mounts(model, role)),
        ..core::Container::default()
    }
}

pub(super) fn env(model: &Model) -> Vec<core::EnvVar> {
    env_vars(&model.container.env)
}

/// A variable read from a field of the pod (`fieldRef`).
pub(super) fn field_var(name: &str, path: &str) -> core::EnvVar {
    core::EnvVar {
        name: name.to_owned(),
        value: None,
        value_from: Some(core::EnvVarSource {
            field_ref: Some(core::ObjectFieldSelector {
                field_path: path.to_owned(),
                api_version: None,
            }),
            ..Default::default()
        }),
    }
}

/// Where a variable read from one key of a Secret or ConfigMap comes from.
fn key_source(from: &crate::model::KeyRef) -> core::EnvVarSource {
    let (name, key, optional) = (from.name.clone(), from.key.clone(), from.optional);
    if from.secret {
        let selector = core::SecretKeySelector {
            name,
            key,
            optional,
        };
        core::EnvVarSource {
            secret_key_ref: Some(selector),
            ..Default::default()
        }
    } else {
        let selector = core::ConfigMapKeySelector {
            name,
            key,
            optional,
        };
        core::EnvVarSource {
            config_map_key_ref: Some(selector),
            ..Default::default()
        }
    }
}

pub(super) fn env_vars(vars: &[crate::model::EnvVar]) -> Vec<core::EnvVar> {
    vars.iter()
        .map(|var| {
            let (value, value_from) = match &var.value {
                EnvValue::Literal(text) => (Some(text.clone()), None),
                EnvValue::Key(from) => (None, Some(key_source(from))),
                EnvValue::Field(path) => return field_var(&var.name, path),
            };
            core::EnvVar {
                name: var.name.clone(),
                value,
                value_from,
            }
        })
        .collect()
}

pub(super) fn resources(c: &Container) -> Option<core::ResourceRequirements> {
    if c.requests.is_empty() && c.limits.is_empty() {
        return None;
    }
    let quantities = |map: &BTreeMap<String, String>| {
        (!map.is_empty()).then(|| {
            map.iter()
                .map(|(k, v)| (k.clone(), Quantity(v.clone())))
                .collect()
        })
    };
    Some(core::ResourceRequirements {
        requests: quantities(&c.requests),
        limits: quantities(&c.limits),
        ..Default::default()
    })
}

pub(super) fn mounts(model: &Model, role: Role<'_>) -> Vec<core::VolumeMount> {
    let mut mounts: Vec<core::VolumeMount> = model
        .volumes
        .iter()
        .map(|v| core::VolumeMount {
            name: v.name.clone(),
            mount_path: v.mount_path.clone(),
            read_only: v.read_only.then_some(true),
            sub_path: v.sub_path.clone(),
            ..Default::default()
        })
        .collect();
    if role.shm.is_some() {
        mounts.push(core::VolumeMount {
            name: SHM_VOLUME.to_owned(),
            mount_path: "/dev/shm".to_owned(),
            ..Default::default()
        });
    }
    if let Some(code) = &model.code {
        mounts.push(core::VolumeMount {
            name: Code::VOLUME.to_owned(),
            mount_path: Code::MOUNT.to_owned(),
            read_only: Some(true),
            ..Default::default()
        });
        if code.packages {
            mounts.push(core::VolumeMount {
                name: Code::PACKAGES_VOLUME.to_owned(),
                mount_path: Code::PACKAGES.to_owned(),
                ..Default::default()
            });
        }
    }
    mounts
}

pub(super) fn volumes(model: &Model, role: Role<'_>) -> Vec<core::Volume> {
    let mut volumes: Vec<core::Volume> = model
        .volumes
        .iter()
        .map(|v| {
            let mut volume = core::Volume {
                name: v.name.clone(),
                ..Default::default()
            };
            match &v.source {
                VolumeSource::Claim(claim) => {
                    volume.persistent_volume_claim =
                        Some(core::PersistentVolumeClaimVolumeSource {
                            claim_name: claim.clone(),
                            read_only: None,
                        });
                }
                VolumeSource::EmptyDir { size_limit } => {
                    volume.empty_dir = Some(core::EmptyDirVolumeSource {
                        medium: None,
                        size_limit: size_limit.clone().map(Quantity),
                    });
                }
                VolumeSource::ConfigMap(name) => {
                    volume.config_map = Some(core::ConfigMapVolumeSource {
                        name: name.clone(),
                        ..Default::default()
                    });
                }
                VolumeSource::Secret(name) => {
                    volume.secret = Some(core::SecretVolumeSource {
                        secret_name: Some(name.clone()),
                        ..Default::default()
                    });
                }
            }
            volume
        })
        .collect();
    if let Some(size) = role.shm {
        volumes.push(core::Volume {
            name: SHM_VOLUME.to_owned(),
            empty_dir: Some(core::EmptyDirVolumeSource {
                medium: Some("Memory".to_owned()),
                size_limit: Some(Quantity(size.to_owned())),
            }),
            ..Default::default()
        });
    }
    if let Some(code) = &model.code {
        volumes.push(core::Volume {
            name: Code::VOLUME.to_owned(),
            config_map: Some(core::ConfigMapVolumeSource {
                name: code.config_map.clone(),
                ..Default::default()
            }),
            ..Default::default()
        });
        if code.packages {
            volumes.push(core::Volume {
                name: Code::PACKAGES_VOLUME.to_owned(),
                empty_dir: Some(core::EmptyDirVolumeSource::default()),
                ..Default::default()
            });
        }
    }
    volumes
}

pub(super) fn image_pull_secrets(model: &Model) -> Vec<core::LocalObjectReference> {
    model
        .scheduling
        .image_pull_secrets
        .iter()
        .map(|name| core::LocalObjectReference { name: name.clone() })
        .collect()
}

pub(super) fn tolerations(model: &Model) -> Vec<core::Toleration> {
    model
        .scheduling
        .tolerations
        .iter()
        .map(|t| core::Toleration {
            key: t.key.clone(),
            operator: t.operator.clone(),
            value: t.value.clone(),
            effect: t.effect.clone(),
            toleration_seconds: t.toleration_seconds,
        })
        .collect()
}

/// At most one pod of this job per node.
pub(super) fn spread(shape: &PodShape<'_>) -> core::Affinity {
    core::Affinity {
        pod_anti_affinity: Some(core::PodAntiAffinity {
            required_during_scheduling_ignored_during_execution: Some(vec![
                core::PodAffinityTerm {
                    label_selector: Some(LabelSelector {
                        match_labels: Some(shape.job_selector.clone()),
                        match_expressions: None,
                    }),
                    topology_key: "kubernetes.io/hostname".to_owned(),
                    ..Default::default()
                },
            ]),
            ..Default::default()
        }),
        ..Default::default()
    }
}
