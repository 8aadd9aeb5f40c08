//! Stage 6, render: the model into Kubernetes objects, one module per kind,
//! in apply order: PersistentVolumeClaims, the ConfigMap of `[code]`,
//! Services, then the job.
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
mod pod;
pub mod pvc;
pub mod pytorchjob;
pub mod service;
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
    let (job, rank0) = match model.target {
        Target::Pytorchjob => (pytorchjob::render(model), pytorchjob::rank0_selector(model)),
        Target::Trainjob => (trainjob::render(model), trainjob::rank0_selector(model)),
    };
    if !model.ports.is_empty() {
        objects.push(service::render(model, &rank0));
    }
    objects.push(job);
    objects
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

fn non_empty_vec<T: Clone>(items: &[T]) -> Option<Vec<T>> {
    (!items.is_empty()).then(|| items.to_vec())
}
