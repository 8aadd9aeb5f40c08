//! The objects against the strict schemas in `schemas/k8s/`, each compiled
//! once per process and only when an object of its kind is checked.

use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::Value;

use super::Problem;
use crate::render::trainjob;
use crate::spec::ApiLevel;

struct Schema {
    api_version: String,
    kind: String,
    validator: Validator,
    /// Whether `metadata` is left open (a CRD) and must be checked separately.
    open_metadata: bool,
    /// The schema itself, for the known fields where one is unknown.
    root: Value,
}

/// Schemas of the kinds that have one API.
const COMMON: &[&str] = &[
    include_str!("../../schemas/k8s/pytorchjob-kubeflow-v1.json"),
    include_str!("../../schemas/k8s/service-v1.json"),
    include_str!("../../schemas/k8s/persistentvolumeclaim-v1.json"),
    include_str!("../../schemas/k8s/configmap-v1.json"),
    include_str!("../../schemas/k8s/job-batch-v1.json"),
];
/// TrainJob on Trainer v2.2 and later (the schema is v2.3.0's CRD), on v2.1 and on v2.0.
const TRAINJOB_CURRENT: &str = include_str!("../../schemas/k8s/trainjob-trainer-v1alpha1.json");
const TRAINJOB_V2_0: &str =
    include_str!("../../schemas/k8s/variants/trainjob-trainer-v1alpha1-v2.0.0.json");
const TRAINJOB_V2_1: &str =
    include_str!("../../schemas/k8s/variants/trainjob-trainer-v1alpha1-v2.1.0.json");
const OBJECT_META: &str = include_str!("../../schemas/k8s/objectmeta-meta-v1.json");

/// A bundled schema, compiled, with the group-version-kind it names.
fn compile(text: &str) -> Schema {
    let mut schema: Value = serde_json::from_str(text).expect("bundled schemas are JSON");
    bound_integer_formats(&mut schema);
    let validator = jsonschema::draft7::new(&schema).expect("bundled schemas compile");
    let open_metadata = schema.pointer("/properties/metadata/properties").is_none();
    // Each bundled file names exactly one group-version-kind.
    let gvk = &schema["x-kubernetes-group-version-kind"][0];
    let group = gvk["group"].as_str().unwrap_or("");
    let version = gvk["version"].as_str().unwrap_or("");
    let api_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    let kind = gvk["kind"].as_str().unwrap_or("").to_owned();
    Schema {
        api_version,
        kind,
        validator,
        open_metadata,
        root: schema,
    }
}

/// JSON Schema validators treat `format` as a note on strings, so an int32
/// field of a CRD (`replicas`, `backoffLimit`, `numNodes`, ...) would accept
/// any integer; the API server rejects what does not fit. This turns every
/// `format: int32` / `int64` into the bounds it stands for, keeping any
/// tighter bound the schema already has.
pub(crate) fn bound_integer_formats(schema: &mut Value) {
    match schema {
        Value::Object(node) => {
            let bounds = match node.get("format").and_then(Value::as_str) {
                Some("int32") => Some((i64::from(i32::MIN), i64::from(i32::MAX))),
                Some("int64") => Some((i64::MIN, i64::MAX)),
                _ => None,
            };
            if let Some((min, max)) = bounds {
                let tighter = |key: &str, bound: i64, keep: fn(i64, i64) -> i64| {
                    node.get(key)
                        .and_then(Value::as_i64)
                        .map_or(bound, |own| keep(own, bound))
                };
                let (min, max) = (
                    tighter("minimum", min, i64::max),
                    tighter("maximum", max, i64::min),
                );
                node.insert("minimum".to_owned(), Value::from(min));
                node.insert("maximum".to_owned(), Value::from(max));
            }
            node.values_mut().for_each(bound_integer_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(bound_integer_formats),
        _ => {}
    }
}

/// The schemas of the kinds with one API, and ObjectMeta; compiled once, on first use.
fn common() -> &'static (Vec<Schema>, Schema) {
    static COMMON_SCHEMAS: OnceLock<(Vec<Schema>, Schema)> = OnceLock::new();
    COMMON_SCHEMAS.get_or_init(|| {
        (
            COMMON.iter().map(|text| compile(text)).collect(),
            compile(OBJECT_META),
        )
    })
}

/// The TrainJob schema of one Trainer API level; compiled only when a TrainJob is checked.
fn trainjob_schema(level: ApiLevel) -> &'static Schema {
    static CURRENT: OnceLock<Schema> = OnceLock::new();
    static V2_1: OnceLock<Schema> = OnceLock::new();
    static V2_0: OnceLock<Schema> = OnceLock::new();
    match level {
        ApiLevel::V2_2 => CURRENT.get_or_init(|| compile(TRAINJOB_CURRENT)),
        ApiLevel::V2_1 => V2_1.get_or_init(|| compile(TRAINJOB_V2_1)),
        ApiLevel::V2_0 => V2_0.get_or_init(|| compile(TRAINJOB_V2_0)),
    }
}

/// Every schema problem of one object (`id` is its `Kind/name`).
pub(super) fn check(id: &str, value: &Value, level: ApiLevel, problems: &mut Vec<Problem>) {
    let (list, meta_schema) = common();
    let api_version = value["apiVersion"].as_str().unwrap_or("");
    let kind = value["kind"].as_str().unwrap_or("");
    let schema = list
        .iter()
        .find(|s| s.api_version == api_version && s.kind == kind)
        .or_else(|| {
            (kind == trainjob::KIND)
                .then(|| trainjob_schema(level))
                .filter(|t| t.api_version == api_version)
        });
    let Some(schema) = schema else {
        problems.push(Problem::schema(
            id,
            "",
            format!("no schema for {api_version} {kind}"),
        ));
        return;
    };
    for error in schema.validator.iter_errors(value) {
        push_error(id, "", &error, &schema.root, problems);
    }
    if schema.open_metadata {
        for error in meta_schema.validator.iter_errors(&value["metadata"]) {
            push_error(id, "/metadata", &error, &meta_schema.root, problems);
        }
    }
}

/// One validation error as problems, in words a manifest's author acts on:
/// each unknown field at its own key, a missing one by name.
fn push_error(
    id: &str,
    prefix: &str,
    error: &jsonschema::ValidationError<'_>,
    root: &Value,
    problems: &mut Vec<Problem>,
) {
    use jsonschema::error::ValidationErrorKind as Kind;
    let path = format!("{prefix}{}", error.instance_path());
    match error.kind() {
        Kind::AdditionalProperties { unexpected } => {
            // The object's schema is the parent of its `additionalProperties`.
            let schema_path = error.schema_path().as_str();
            let known: Vec<&str> = schema_path
                .rsplit_once('/')
                .and_then(|(object, _)| root.pointer(object))
                .and_then(|object| object["properties"].as_object())
                .map(|properties| properties.keys().map(String::as_str).collect())
                .unwrap_or_default();
            for key in unexpected {
                let segment = key.replace('~', "~0").replace('/', "~1");
                let hint = crate::validate::suggest(key, known.iter().copied())
                    .map_or_else(String::new, |near| format!(" (did you mean `{near}`?)"));
                problems.push(Problem::schema(
                    id,
                    &format!("{path}/{segment}"),
                    format!("unknown field `{key}`{hint}"),
                ));
            }
        }
        Kind::Required { property } => problems.push(Problem::schema(
            id,
            &path,
            format!(
                "missing required field `{}`",
                property
                    .as_str()
                    .map_or_else(|| property.to_string(), str::to_owned)
            ),
        )),
        _ => problems.push(Problem::schema(id, &path, error.to_string())),
    }
}
