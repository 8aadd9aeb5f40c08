//! `[podTemplate]` against Kubernetes' own PodTemplateSpec schema (from
//! `schemas/k8s/job-batch-v1.json`, as `schemas/compact/podtemplate-fragment.json`
//! holds it: see [`crate::verify::compact::pod_template_fragment`]), in pass 1
//! beside the spec's schema, so a typo deep inside an init container is
//! reported at its key with the closest field Kubernetes has. Read only for a
//! spec that has a `[podTemplate]`, compiled only when it is not plainly valid.

use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::Value as Json;

use super::kubernetes_forms::entry;
use super::schema::{Outcome, check_against};
use crate::embedded::Compressed;
use crate::parse::Format;
use crate::schema_verdict::{self, Draft, SchemaJson, Verdict};
use crate::source::Sources;
use crate::spec::defaults::TRAINER_CONTAINER as TRAINER;
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

/// The help for `key` (holding `value`), unknown at the spec's top level,
/// where it is a field of Kubernetes' pod spec or of a container that the
/// spec has no key of its own for (`affinity`, `initContainers`,
/// `livenessProbe`): `[podTemplate]` merges it into every pod, and the
/// training container is the one named `trainer`. Read from the same
/// PodTemplateSpec schema `[podTemplate]` is checked against, so every
/// field Kubernetes has is answered, none listed here.
pub(super) fn pod_field(key: &str, value: &Json, target: &str, format: Format) -> Option<String> {
    let spec = schema().pointer("/properties/podTemplate/properties/spec/properties")?;
    let on_pod = spec.get(key).is_some();
    let on_container = spec
        .pointer("/containers/items/properties")
        .is_some_and(|c| c.get(key).is_some());
    if target == "job" && matches!(key, "hostname" | "subdomain") {
        return Some(format!(
            "on target `job` trainc sets each pod's `{key}` itself (pod `i` is `<name>-<i>.<name>`, how the ranks find pod 0): remove it"
        ));
    }
    if !on_pod
        && !on_container
        && matches!(
            key.to_ascii_lowercase().as_str(),
            "sidecar" | "sidecars" | "sidecarcontainers"
        )
    {
        let (header, always) = match format {
            Format::Toml => (
                "a `[[podTemplate.spec.initContainers]]` table",
                "`restartPolicy = \"Always\"`",
            ),
            Format::Yaml => (
                "an item of `podTemplate.spec.initContainers`",
                "`restartPolicy: Always`",
            ),
        };
        return Some(format!(
            "Kubernetes (1.29 and later) runs a sidecar as an init container with `restartPolicy` `Always`: write each as {header} with {always}; it starts before `{TRAINER}` and is stopped when training ends, where a second entry of `containers` would keep the pod, and the job, running"
        ));
    }
    let (what, placed) = if on_pod {
        ("the pod's spec", place(&["spec"], key, value, format))
    } else if on_container {
        let line = place(&[], key, value, format);
        let placed = match format {
            Format::Toml => format!(
                "in a `[[podTemplate.spec.containers]]` table with `name = \"{TRAINER}\"`, {line}"
            ),
            Format::Yaml => format!(
                "in an item of `podTemplate.spec.containers` with `name: {TRAINER}`, {line}"
            ),
        };
        ("the container", placed)
    } else {
        return None;
    };
    let merged = if on_pod {
        "merges it into every pod"
    } else {
        "merges it into the training container, the one named `trainer`"
    };
    let table = match format {
        Format::Toml => "`[podTemplate]`",
        Format::Yaml => "`podTemplate`",
    };
    Some(format!(
        "`{key}` is a Kubernetes field of {what} with no spec key of its own, and {table} {merged}: {placed}"
    ))
}

/// `key = value` placed under `podTemplate` and `under`, in the file's
/// syntax: whole when short, else the table header to write it under.
fn place(under: &[&str], key: &str, value: &Json, format: Format) -> String {
    let parent: Vec<&str> = ["podTemplate"]
        .into_iter()
        .chain(under.iter().copied())
        .collect();
    let parent = parent.join(".");
    let line = entry(key, value, format);
    let tables = value
        .as_array()
        .is_some_and(|items| items.iter().any(Json::is_object));
    let nested = match value {
        Json::Object(map) => map.values().any(|v| v.is_object() || v.is_array()),
        _ => false,
    };
    let short = line.chars().count() <= 80 && !tables && !nested;
    match (format, short) {
        (_, true) if under.is_empty() => format!("write `{line}`"),
        (Format::Toml, true) => format!("write `{line}` in `[{parent}]`"),
        (Format::Yaml, true) => format!("write `{line}` under `{parent}`"),
        (Format::Toml, false) if tables && !under.is_empty() => {
            format!("write each item as a `[[{parent}.{key}]]` table")
        }
        (Format::Toml, false) if value.is_object() && !under.is_empty() => {
            format!("write it as a `[{parent}.{key}]` table")
        }
        (Format::Toml, false) => format!("write `{key} = ...`"),
        (Format::Yaml, false) if under.is_empty() => format!("write `{key}:`"),
        (Format::Yaml, false) => format!("write `{key}:` under `{parent}`"),
    }
}
