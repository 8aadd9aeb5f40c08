//! `trainer.kubeflow.org/v1alpha1 TrainJob` for Kubeflow Trainer v2, in the
//! API of v2.2 and later (`runtimePatches`), of v2.1 (`podTemplateOverrides`)
//! or of v2.0 (`podSpecOverrides`).
//!
//! A TrainJob names a ClusterTrainingRuntime; the torch runtime runs a JobSet
//! (named after the TrainJob) with one replicated job `node` whose container is
//! `node`. The TrainJob itself only has fields for the trainer (image, command,
//! env, nodes, processes, resources); everything else about the pod goes in
//! one patch of that `node` job and container. Env goes in `trainer.env` only:
//! the runtime rejects env patched into the `node` container, and sets the
//! `PET_*` variables torchrun reads itself.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use serde::Serialize;

use super::pod::{self, PodShape};
use super::{Object, metadata, non_empty, non_empty_vec};
use crate::cluster::trainjob::{API_VERSION, KIND, LABEL_JOBSET_NAME, NODE};
use crate::model::Model;
use crate::spec::ApiLevel;
use crate::spec::NProc;

/// Who owns the runtime patch: the webhook wants a domain-prefixed path.
pub const MANAGER: &str = "trainc.dev/trainc";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    runtime_ref: RuntimeRef,
    #[serde(skip_serializing_if = "Option::is_none")]
    initializer: Option<Initializers>,
    trainer: Trainer,
    /// v2.0 and v2.1: labels and annotations of the JobSet.
    #[serde(skip_serializing_if = "Option::is_none")]
    labels: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    annotations: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    suspend: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    active_deadline_seconds: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    runtime_patches: Option<Vec<RuntimePatch>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pod_template_overrides: Option<Vec<PodTemplateOverride>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pod_spec_overrides: Option<Vec<PodSpecOverride>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RuntimeRef {
    name: String,
    api_group: &'static str,
    kind: String,
}

#[derive(Serialize)]
struct Initializers {
    #[serde(skip_serializing_if = "Option::is_none")]
    dataset: Option<Initializer>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<Initializer>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Initializer {
    storage_uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    env: Option<Vec<core::EnvVar>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    secret_ref: Option<core::LocalObjectReference>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Trainer {
    /// None: the runtime's image runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    image: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    env: Option<Vec<core::EnvVar>>,
    num_nodes: u32,
    /// An integer on v2.2 and later; int-or-string (`auto`, `cpu`) on v2.1.
    num_proc_per_node: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    resources_per_node: Option<core::ResourceRequirements>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RuntimePatch {
    manager: &'static str,
    training_runtime_spec: TrainingRuntimeSpec,
}

#[derive(Serialize)]
struct TrainingRuntimeSpec {
    template: JobSetTemplate,
}

#[derive(Serialize)]
struct JobSetTemplate {
    spec: JobSetSpec,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JobSetSpec {
    replicated_jobs: Vec<ReplicatedJob>,
}

#[derive(Serialize)]
struct ReplicatedJob {
    name: &'static str,
    template: JobTemplate,
}

#[derive(Serialize)]
struct JobTemplate {
    spec: JobSpec,
}

#[derive(Serialize)]
struct JobSpec {
    template: PodPatch,
}

#[derive(Serialize)]
struct PodPatch {
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<PodMetadata>,
    spec: PodSpecPatch,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PodTemplateOverride {
    target_jobs: Vec<TargetJob>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<PodMetadata>,
    spec: PodSpecPatch,
}

/// v2.0: the pod-level fields beside the target jobs, with no pod metadata.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PodSpecOverride {
    target_jobs: Vec<TargetJob>,
    #[serde(flatten)]
    spec: PodSpecPatch,
}

#[derive(Serialize)]
struct TargetJob {
    name: &'static str,
}

#[derive(Serialize)]
struct PodMetadata {
    #[serde(skip_serializing_if = "Option::is_none")]
    annotations: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    labels: Option<BTreeMap<String, String>>,
}

/// The pod-level fields the patch forms accept (v2.0's lacks affinity and
/// imagePullSecrets).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PodSpecPatch {
    #[serde(skip_serializing_if = "Option::is_none")]
    affinity: Option<core::Affinity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    containers: Option<Vec<ContainerPatch>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    image_pull_secrets: Option<Vec<core::LocalObjectReference>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    node_selector: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    service_account_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    security_context: Option<core::PodSecurityContext>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tolerations: Option<Vec<core::Toleration>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    volumes: Option<Vec<core::Volume>>,
}

impl PodSpecPatch {
    fn is_empty(&self) -> bool {
        self.affinity.is_none()
            && self.containers.is_none()
            && self.image_pull_secrets.is_none()
            && self.node_selector.is_none()
            && self.service_account_name.is_none()
            && self.security_context.is_none()
            && self.tolerations.is_none()
            && self.volumes.is_none()
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ContainerPatch {
    name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    security_context: Option<core::SecurityContext>,
    #[serde(skip_serializing_if = "Option::is_none")]
    volume_mounts: Option<Vec<core::VolumeMount>>,
}

/// Labels that select the rank-0 pod: node 0 of job 0 of the `node` replicated job.
pub fn rank0_selector(model: &Model) -> BTreeMap<String, String> {
    let mut selector = job_pods(model);
    for (key, value) in crate::cluster::jobset::RANK0_LABELS {
        selector.insert(key.to_owned(), value.to_owned());
    }
    selector
}

/// Labels on every pod of this TrainJob: trainc's own, where the API level
/// carries pod metadata (or trainc writes the runtime); on v2.0, which
/// cannot, JobSet's name label (which
/// kustomize follows through trainc's name-reference configuration).
fn job_pods(model: &Model) -> BTreeMap<String, String> {
    if model.trainjob.api_level == ApiLevel::V2_0 && !model.trainjob.write_runtime {
        BTreeMap::from([(LABEL_JOBSET_NAME.to_owned(), model.name.clone())])
    } else {
        super::own_pods(model)
    }
}

pub(super) fn render(model: &Model) -> Object {
    let level = model.trainjob.api_level;
    let shape = PodShape {
        container: NODE,
        fixed_ports: &[],
        job_selector: job_pods(model),
    };
    let c = &model.container;
    let trainer = Trainer {
        image: c.image.clone(),
        command: non_empty_vec(c.command.clone()),
        args: non_empty_vec(c.args.clone()),
        env: non_empty_vec(pod::env(model)),
        num_nodes: model.nodes.max(),
        num_proc_per_node: match model.nproc_per_node {
            NProc::Count(n) => serde_json::json!(n),
            other => serde_json::json!(other.text()),
        },
        resources_per_node: resources_per_node(model),
    };
    let pod_metadata =
        (!model.labels.is_empty() || !model.pod_annotations.is_empty()).then(|| PodMetadata {
            annotations: non_empty(&model.pod_annotations),
            labels: non_empty(&model.labels),
        });
    let s = &model.scheduling;
    let mounts = pod::mounts(model, pod::Role::of(model));
    // v2.0's podSpecOverrides have no affinity and no imagePullSecrets, and
    // only v2.2's runtimePatches have security contexts; validation rejects a
    // spec that needs them where they are not.
    let v2_0 = level == ApiLevel::V2_0;
    let runtime_patches = level.has_runtime_patches();
    let security = pod::security(model).filter(|_| runtime_patches);
    let patch = PodSpecPatch {
        affinity: (s.spread_across_nodes && !v2_0).then(|| pod::spread(&shape)),
        containers: (!mounts.is_empty() || security.is_some()).then(|| {
            vec![ContainerPatch {
                name: NODE,
                security_context: security,
                volume_mounts: non_empty_vec(mounts.clone()),
            }]
        }),
        security_context: pod::pod_security(model).filter(|_| runtime_patches),
        image_pull_secrets: non_empty_vec(pod::image_pull_secrets(model)).filter(|_| !v2_0),
        node_selector: non_empty(&s.node_selector),
        service_account_name: s.service_account_name.clone(),
        tolerations: non_empty_vec(pod::tolerations(model)),
        volumes: non_empty_vec(pod::volumes(model, pod::Role::of(model))),
    };
    let mut spec = Spec {
        runtime_ref: RuntimeRef {
            name: model.trainjob.runtime.clone(),
            api_group: "trainer.kubeflow.org",
            kind: model.trainjob.runtime_kind.clone(),
        },
        initializer: initializers(model),
        trainer,
        labels: None,
        annotations: None,
        suspend: model.policy.suspend.then_some(true),
        // Before v2.2 there is no such field; validation rejects a deadline there.
        active_deadline_seconds: model
            .policy
            .active_deadline_seconds
            .filter(|_| level.has_runtime_patches()),
        runtime_patches: None,
        pod_template_overrides: None,
        pod_spec_overrides: None,
    };
    // A runtime trainc writes carries the pod: no patch.
    if !model.trainjob.write_runtime {
        place_pod_patch(&mut spec, model, pod_metadata, patch);
    }
    let job = super::Resource {
        api_version: API_VERSION,
        kind: KIND,
        metadata: metadata(model, &model.name, &model.job_labels),
        spec,
    };
    Object::new(KIND, &model.name, &job)
}

/// `spec.initializer`: the same at every API level (kubeflow/trainer
/// v2.0.0–v2.3.0, `pkg/apis/trainer/v1alpha1/trainjob_types.go`).
fn initializers(model: &Model) -> Option<Initializers> {
    let t = &model.trainjob;
    let one = |init: &crate::model::Initializer| Initializer {
        storage_uri: init.storage_uri.clone(),
        env: non_empty_vec(pod::env_vars(&init.env)),
        secret_ref: init
            .secret
            .clone()
            .map(|name| core::LocalObjectReference { name }),
    };
    (t.dataset_initializer.is_some() || t.model_initializer.is_some()).then(|| Initializers {
        dataset: t.dataset_initializer.as_ref().map(one),
        model: t.model_initializer.as_ref().map(one),
    })
}

/// Puts the pod patch where the TrainJob's API level takes it; a patch
/// that carries nothing is not written. An empty override is not harmless:
/// at Trainer v2.0 it alone makes Kueue's admission fail (see the rule in
/// `validate/rules/kueue.rs`).
fn place_pod_patch(
    spec: &mut Spec,
    model: &Model,
    pod_metadata: Option<PodMetadata>,
    patch: PodSpecPatch,
) {
    let target_jobs = || vec![TargetJob { name: NODE }];
    let level = model.trainjob.api_level;
    if level == ApiLevel::V2_0 {
        // No pod metadata: `spec.labels`/`spec.annotations` become the
        // JobSet's own (kubeflow/trainer v2.0.0, pkg/runtime/core/
        // trainingruntime.go `newRuntimeInfo`, plugins/jobset/jobset.go `Build`).
        spec.labels = non_empty(&model.labels);
        spec.annotations = non_empty(&model.annotations);
    }
    let metadata = pod_metadata.filter(|_| level != ApiLevel::V2_0);
    if patch.is_empty() && metadata.is_none() {
        return;
    }
    match level {
        ApiLevel::V2_2 | ApiLevel::V2_3 => {
            spec.runtime_patches = Some(vec![RuntimePatch {
                manager: MANAGER,
                training_runtime_spec: TrainingRuntimeSpec {
                    template: JobSetTemplate {
                        spec: JobSetSpec {
                            replicated_jobs: vec![ReplicatedJob {
                                name: NODE,
                                template: JobTemplate {
                                    spec: JobSpec {
                                        template: PodPatch {
                                            metadata,
                                            spec: patch,
                                        },
                                    },
                                },
                            }],
                        },
                    },
                },
            }]);
        }
        ApiLevel::V2_1 => {
            spec.pod_template_overrides = Some(vec![PodTemplateOverride {
                target_jobs: target_jobs(),
                metadata,
                spec: patch,
            }]);
        }
        ApiLevel::V2_0 => {
            spec.pod_spec_overrides = Some(vec![PodSpecOverride {
                target_jobs: target_jobs(),
                spec: patch,
            }]);
        }
    }
}

/// The trainer's resources. Limits alone get requests equal to them, as
/// Kubernetes defaults a container's: Trainer v2.0 reads the process count
/// from the limits only for `auto`/`cpu`, and otherwise from the requests,
/// where a missing map gives 1, so `numProcPerNode: 4` with limits alone
/// would start one process per node (kubeflow/trainer v2.0.0,
/// `pkg/runtime/framework/plugins/torch/torch.go` `calculateNumProcPerNode`).
fn resources_per_node(model: &Model) -> Option<core::ResourceRequirements> {
    let mut resources = pod::resources(&model.container)?;
    if resources.requests.is_none() {
        resources.requests.clone_from(&resources.limits);
    }
    Some(resources)
}
