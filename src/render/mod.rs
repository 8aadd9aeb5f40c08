//! Stage 6, render: the model into Kubernetes objects, one module per kind,
//! in apply order: PersistentVolumeClaims, the ConfigMap of `[code]`, a
//! TrainJob's TrainingRuntime when trainc writes it, Services (a Job's
//! headless one first), then the job.
//!
//! Renderers build typed objects (k8s-openapi for core kinds, our own structs
//! for the operators' CRDs) and hand them on as JSON values, so emit can write
//! any mix of kinds. Nothing here validates: the model is already valid.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;

use crate::model::Model;
use crate::spec::Target;

mod configmap;
pub mod job;
pub mod jobset;
mod merge;
mod pod;
pub mod pvc;
pub mod pytorchjob;
pub mod service;
pub mod trainingruntime;
pub mod trainjob;

/// One generated object.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    pub kind: &'static str,
    pub name: String,
    /// The whole object, `apiVersion` and `kind` first.
    pub value: serde_json::Value,
}

impl Object {
    fn new(kind: &'static str, name: &str, object: &impl Serialize) -> Object {
        let value = serde_json::to_value(object).expect("generated objects serialise to JSON");
        Object {
            kind,
            name: name.to_owned(),
            value,
        }
    }
}

/// A custom resource: its kind's `apiVersion` and `kind`, its metadata and
/// its spec (a PyTorchJob, a TrainJob, a JobSet).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Resource<S> {
    api_version: &'static str,
    kind: &'static str,
    metadata: ObjectMeta,
    spec: S,
}

/// The labels trainc puts on every pod of the job. Selectors use them rather
/// than the operators' labels, which carry the job's name: kustomize's
/// `namePrefix`, `nameSuffix` and `namespace` rename the job but never rewrite
/// a label value (kubernetes-sigs/kustomize kustomize/v5.5.0,
/// api/filters/prefixsuffix: `metadata/name` only), so the pods keep these.
pub(super) fn own_pods(model: &Model) -> BTreeMap<String, String> {
    [
        crate::spec::defaults::LABEL_NAME,
        crate::spec::defaults::LABEL_MANAGED_BY,
    ]
    .iter()
    .filter_map(|key| Some(((*key).to_owned(), model.labels.get(*key)?.clone())))
    .collect()
}

/// Every object of the model, in apply order.
pub fn render(model: &Model) -> Vec<Object> {
    let mut objects: Vec<Object> = model
        .claims
        .iter()
        .map(|claim| pvc::render(model, claim))
        .collect();
    if let Some(code) = &model.code {
        objects.push(configmap::render(model, code));
    }
    let (mut job, rank0) = match model.target {
        Target::Pytorchjob => (pytorchjob::render(model), pytorchjob::rank0_selector(model)),
        Target::Trainjob => {
            objects.extend(trainingruntime::render(model));
            (trainjob::render(model), trainjob::rank0_selector(model))
        }
        Target::Job => {
            objects.push(job::service(model));
            (job::render(model), job::rank0_selector(model))
        }
        Target::Jobset => (jobset::render(model), jobset::rank0_selector(model)),
    };
    if let Some(fragment) = &model.pod_template {
        pod_template(model, &mut job.value, fragment);
    }
    if !model.ports.is_empty() {
        objects.push(service::render(model, &rank0));
    }
    objects.push(job);
    objects
}

/// `[podTemplate]` merged last into every pod template of the job, or into
/// the TrainJob's patch of its `node` job (validation allowed only what that
/// patch carries).
fn pod_template(model: &Model, job: &mut serde_json::Value, fragment: &serde_json::Value) {
    match model.target {
        Target::Job => {
            let fragment = merge::for_target(fragment, crate::cluster::job::CONTAINER);
            if let Some(template) = job.pointer_mut("/spec/template") {
                merge::merge(template, &fragment);
                merge::sort_keys(template, None);
            }
        }
        Target::Jobset => {
            let fragment = merge::for_target(fragment, crate::cluster::jobset::CONTAINER);
            let rjobs = job
                .pointer_mut("/spec/replicatedJobs")
                .and_then(serde_json::Value::as_array_mut);
            for rjob in rjobs.into_iter().flatten() {
                if let Some(template) = rjob.pointer_mut("/template/spec/template") {
                    merge::merge(template, &fragment);
                    merge::sort_keys(template, None);
                }
            }
        }
        Target::Pytorchjob => {
            let fragment = merge::for_target(fragment, crate::cluster::pytorchjob::CONTAINER);
            if let Some(replicas) = job
                .pointer_mut("/spec/pytorchReplicaSpecs")
                .and_then(serde_json::Value::as_object_mut)
            {
                for replica in replicas.values_mut() {
                    merge::merge(&mut replica["template"], &fragment);
                    merge::sort_keys(&mut replica["template"], None);
                }
            }
        }
        // A runtime trainc writes took the fragment (`trainingruntime`).
        Target::Trainjob if model.trainjob.write_runtime => {}
        Target::Trainjob => {
            let fragment = merge::for_target(fragment, crate::cluster::trainjob::NODE);
            let (place, whole) = match model.trainjob.api_level {
                crate::spec::ApiLevel::V2_2 | crate::spec::ApiLevel::V2_3 => (
                    "/spec/runtimePatches/0/trainingRuntimeSpec/template/spec/replicatedJobs/0/template/spec/template",
                    true,
                ),
                crate::spec::ApiLevel::V2_1 => ("/spec/podTemplateOverrides/0", true),
                // No pod metadata: the pod spec's fields sit beside `targetJobs`.
                crate::spec::ApiLevel::V2_0 => ("/spec/podSpecOverrides/0", false),
            };
            // At v2.0 an override is written only when it carries something;
            // the fragment's pod spec may be all it carries.
            let pod_spec = fragment.get("spec").and_then(serde_json::Value::as_object);
            if !whole && job.pointer(place).is_none() && pod_spec.is_some_and(|s| !s.is_empty()) {
                job["spec"]["podSpecOverrides"] = serde_json::json!([{ "targetJobs": [{ "name": crate::cluster::trainjob::NODE }] }]);
            }
            if let Some(patch) = job.pointer_mut(place) {
                if whole {
                    merge::merge(patch, &fragment);
                } else if let Some(spec) = fragment.get("spec") {
                    merge::merge(patch, spec);
                }
                merge::sort_keys(patch, Some("targetJobs"));
            }
        }
    }
}

/// Metadata of a generated object: its name, the job's namespace, labels and
/// annotations.
fn metadata(model: &Model, name: &str, labels: &BTreeMap<String, String>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: model.namespace.clone(),
        labels: non_empty(labels),
        annotations: non_empty(&model.annotations),
        ..ObjectMeta::default()
    }
}

fn non_empty(map: &BTreeMap<String, String>) -> Option<BTreeMap<String, String>> {
    (!map.is_empty()).then(|| map.clone())
}

fn non_empty_vec<T>(items: Vec<T>) -> Option<Vec<T>> {
    (!items.is_empty()).then_some(items)
}
