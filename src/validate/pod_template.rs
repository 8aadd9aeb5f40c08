//! `[podTemplate]` against Kubernetes' own PodTemplateSpec schema (from
//! `schemas/k8s/job-batch-v1.json`, as `schemas/compact/podtemplate-fragment.json`
//! holds it: see [`crate::verify::compact::pod_template_fragment`]), in pass 1
//! beside the spec's schema, so a typo deep inside an init container is
//! reported at its key with the closest field Kubernetes has. Read only for a
//! spec that has a `[podTemplate]`, compiled only when it is not plainly valid.

use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::Value as Json;

use super::schema::{Outcome, check_against};
use crate::embedded::Compressed;
use crate::schema_verdict::{self, Draft, SchemaJson, Verdict};
use crate::source::Sources;
use crate::tree::Node;

static FRAGMENT: Compressed = Compressed::new(include_bytes!(
    "../../schemas/compact/podtemplate-fragment.json.lz4"
));

fn quick_schema() -> &'static SchemaJson<'static> {
    static SCHEMA: OnceLock<SchemaJson<'static>> = OnceLock::new();
    schema_verdict::embedded(&SCHEMA, FRAGMENT.text())
}

fn schema() -> &'static Json {
    static SCHEMA: OnceLock<Json> = OnceLock::new();
    schema_verdict::embedded_json(&SCHEMA, FRAGMENT.text())
}

fn validator() -> &'static Validator {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    schema_verdict::validator(&VALIDATOR, schema(), Draft::Draft7)
}

/// Every way the spec's `podTemplate` is not a PodTemplateSpec fragment.
pub(super) fn check(tree: &Node, instance: &Json, sources: &Sources) -> Outcome {
    if instance.get("podTemplate").is_none()
        || schema_verdict::verdict(quick_schema(), instance, Draft::Draft7) == Verdict::Valid
    {
        return Outcome {
            diagnostics: Vec::new(),
            invalid: Vec::new(),
            meant: Vec::new(),
        };
    }
    check_against(tree, instance, sources, validator(), schema())
}
