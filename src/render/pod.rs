//! The pod template shared by every job kind: the training container, its
//! volumes, and where the pod may run.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::{non_empty, non_empty_vec};
use crate::model::{EnvValue, Model, VolumeSource};

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

pub(super) fn template(model: &Model, shape: &PodShape<'_>) -> core::PodTemplateSpec {
    core::PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: non_empty(&model.labels),
            annotations: non_empty(&model.pod_annotations),
            ..ObjectMeta::default()
        }),
        spec: Some(pod_spec(model, shape)),
    }
}

pub(super) fn pod_spec(model: &Model, shape: &PodShape<'_>) -> core::PodSpec {
    let s = &model.scheduling;
    core::PodSpec {
        containers: vec![container(model, shape)],
        volumes: non_empty_vec(&volumes(model)),
        node_selector: non_empty(&s.node_selector),
        tolerations: non_empty_vec(&tolerations(model)),
        affinity: s.spread_across_nodes.then(|| spread(shape)),
        priority_class_name: s.priority_class_name.clone(),
        scheduler_name: s.scheduler_name.clone(),
        service_account_name: s.service_account_name.clone(),
        image_pull_secrets: non_empty_vec(&image_pull_secrets(model)),
        ..core::PodSpec::default()
    }
}

pub(super) fn container(model: &Model, shape: &PodShape<'_>) -> core::Container {
    let c = &model.container;
    let mut ports: Vec<core::ContainerPort> = shape
        .fixed_ports
        .iter()
        .map(|(name, port)| core::ContainerPort {
            name: Some((*name).to_owned()),
            container_port: *port,
            ..Default::default()
        })
        .collect();
    ports.extend(model.ports.iter().map(|p| core::ContainerPort {
        name: Some(p.name.clone()),
        container_port: i32::from(p.port),
        ..Default::default()
    }));
    core::Container {
        name: shape.container.to_owned(),
        image: Some(c.image.clone()),
        command: non_empty_vec(&c.command),
        args: non_empty_vec(&c.args),
        working_dir: c.working_dir.clone(),
        env: non_empty_vec(&env(model)),
        ports: non_empty_vec(&ports),
        resources: resources(model),
        volume_mounts: non_empty_vec(&mounts(model)),
        ..core::Container::default()
    }
}

pub(super) fn env(model: &Model) -> Vec<core::EnvVar> {
    model
        .container
        .env
        .iter()
        .map(|var| {
            let (value, value_from) = match &var.value {
                EnvValue::Literal(text) => (Some(text.clone()), None),
                EnvValue::Secret {
                    name,
                    key,
                    optional,
                } => (
                    None,
                    Some(core::EnvVarSource {
                        secret_key_ref: Some(core::SecretKeySelector {
                            name: name.clone(),
                            key: key.clone(),
                            optional: *optional,
                        }),
                        ..Default::default()
                    }),
                ),
                EnvValue::ConfigMap {
                    name,
                    key,
                    optional,
                } => (
                    None,
                    Some(core::EnvVarSource {
                        config_map_key_ref: Some(core::ConfigMapKeySelector {
                            name: name.clone(),
                            key: key.clone(),
                            optional: *optional,
                        }),
                        ..Default::default()
                    }),
                ),
                EnvValue::Field(path) => (
                    None,
                    Some(core::EnvVarSource {
                        field_ref: Some(core::ObjectFieldSelector {
                            field_path: path.clone(),
                            api_version: None,
                        }),
                        ..Default::default()
                    }),
                ),
            };
            core::EnvVar {
                name: var.name.clone(),
                value,
                value_from,
            }
        })
        .collect()
}

pub(super) fn resources(model: &Model) -> Option<core::ResourceRequirements> {
    let c = &model.container;
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

pub(super) fn mounts(model: &Model) -> Vec<core::VolumeMount> {
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
    if model.shm.is_some() {
        mounts.push(core::VolumeMount {
            name: SHM_VOLUME.to_owned(),
            mount_path: "/dev/shm".to_owned(),
            ..Default::default()
        });
    }
    mounts
}

pub(super) fn volumes(model: &Model) -> Vec<core::Volume> {
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
    if let Some(size) = &model.shm {
        volumes.push(core::Volume {
            name: SHM_VOLUME.to_owned(),
            empty_dir: Some(core::EmptyDirVolumeSource {
                medium: Some("Memory".to_owned()),
                size_limit: Some(Quantity(size.clone())),
            }),
            ..Default::default()
        });
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
