//! `[podTemplate]` against Kubernetes' own PodTemplateSpec schema (from
//! `schemas/k8s/job-batch-v1.json`), in pass 1 beside the spec's schema, so
//! a typo deep inside an init container is reported at its key with the
//! closest field Kubernetes has. Compiled only for a spec that has a
//! `[podTemplate]`.

use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::{Value as Json, json};

use super::schema::{Outcome, check_against};
use crate::source::Sources;
use crate::tree::Node;

/// `{ podTemplate: PodTemplateSpec }`, so that error paths are the spec's
/// own pointers. A fragment needs no `containers` (PodSpec requires them),
/// and its metadata holds labels and annotations only: the operator names
/// the pods.
fn schema() -> &'static (Json, Validator) {
    static SCHEMA: OnceLock<(Json, Validator)> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let mut job: Json =
            serde_json::from_str(include_str!("../../schemas/k8s/job-batch-v1.json"))
                .expect("bundled schemas are JSON");
        crate::verify::schema::bound_integer_formats(&mut job);
        let mut template = job["properties"]["spec"]["properties"]["template"].take();
        template["additionalProperties"] = json!(false);
        if let Some(spec) = template
            .pointer_mut("/properties/spec")
            .and_then(Json::as_object_mut)
        {
            spec.remove("required");
        }
        let metadata = &mut template["properties"]["metadata"];
        let keep = |key: &str| metadata["properties"][key].clone();
        *metadata = json!({
            "type": "object",
            "properties": { "labels": keep("labels"), "annotations": keep("annotations") },
            "additionalProperties": false,
        });
        let root = json!({ "type": "object", "properties": { "podTemplate": template } });
        let validator = jsonschema::draft7::new(&root).expect("bundled schemas compile");
        (root, validator)
    })
}

/// Every way the spec's `podTemplate` is not a PodTemplateSpec fragment.
pub(super) fn check(tree: &Node, instance: &Json, sources: &Sources) -> Outcome {
    if instance.get("podTemplate").is_none() {
        return Outcome {
            diagnostics: Vec::new(),
            invalid: Vec::new(),
        };
    }
    let (root, validator) = schema();
    check_against(tree, instance, sources, validator, root)
}
