//! The JSON Schemas generated from the spec types: the spec's, committed as
//! `schemas/trainspec.schema.json`, and the overlay's (nothing required, plus
//! `unset`), committed as `schemas/overlay.schema.json`. Tests lock both.

use super::Spec;

/// `schemas/trainspec.schema.json`, as committed: what `trainc schema` prints
/// and the schema pass reads, so that no run generates it.
pub const SPEC_SCHEMA: &str = include_str!("../../schemas/trainspec.schema.json");
/// `schemas/overlay.schema.json`, as committed.
pub const OVERLAY_SCHEMA: &str = include_str!("../../schemas/overlay.schema.json");
/// `schemas/trainspec-krm.schema.json`, as committed.
pub const KRM_SCHEMA: &str = include_str!("../../schemas/trainspec-krm.schema.json");
/// `schemas/trainspec-patch.schema.json`, as committed.
pub const KRM_PATCH_SCHEMA: &str = include_str!("../../schemas/trainspec-patch.schema.json");

/// The JSON Schema of a spec, as committed in `schemas/trainspec.schema.json`.
pub fn json_schema() -> serde_json::Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(Spec)).expect("a schema is JSON");
    strip_null(&mut schema);
    schema["$id"] = serde_json::json!("https://trainc.dev/schemas/trainspec.schema.json");
    schema
}

/// The JSON Schema of an overlay (`schemas/overlay.schema.json`): the spec's,
/// with nothing required and the overlay-only `unset` list.
pub fn overlay_schema() -> serde_json::Value {
    fn drop_required(schema: &mut serde_json::Value) {
        match schema {
            serde_json::Value::Object(object) => {
                object.remove("required");
                object.values_mut().for_each(drop_required);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(drop_required),
            _ => {}
        }
    }
    let mut schema = json_schema();
    drop_required(&mut schema);
    schema["$id"] = serde_json::json!("https://trainc.dev/schemas/overlay.schema.json");
    schema["title"] = serde_json::json!("trainc overlay");
    schema["description"] = serde_json::json!(
        "A partial TrainSpec merged over a spec with `trainc build -O`: tables merge key by key, scalars and arrays replace."
    );
    schema["properties"]["unset"] = serde_json::json!({
        "description": "Dotted paths of keys to remove from the spec before this overlay is merged, e.g. `[\"resources.gpus\", \"scheduling.tolerations\"]`; quote keys that contain dots: `labels.\"app.kubernetes.io/part-of\"`.",
        "type": "array",
        "items": {"type": "string"}
    });
    schema
}

/// The KRM form of a spec (`schemas/trainspec-krm.schema.json`): `apiVersion`,
/// `kind: TrainSpec`, `metadata` (the job's `name` and `namespace`) and
/// `spec`, the spec's other fields. What kustomize and kpt read.
pub fn krm_schema() -> serde_json::Value {
    krm(
        &json_schema(),
        "trainspec-krm",
        "TrainSpec",
        "A training spec in the KRM form that kustomize and kpt hand to trainc: `metadata.name` is the job's name, `spec` holds the other fields.",
        true,
    )
}

/// A partial TrainSpec in the KRM form (`schemas/trainspec-patch.schema.json`):
/// a kustomize patch of a TrainSpec, where `null` removes a key, or a trainc
/// overlay written that way. Nothing is required.
pub fn krm_patch_schema() -> serde_json::Value {
    fn nullable(schema: &mut serde_json::Value) {
        let serde_json::Value::Object(object) = schema else {
            return;
        };
        if let Some(serde_json::Value::Object(properties)) = object.get_mut("properties") {
            for property in properties.values_mut() {
                nullable(property);
                let inner = property.take();
                *property = serde_json::json!({"anyOf": [inner, {"type": "null"}]});
            }
        }
        for key in ["$defs", "items", "additionalProperties"] {
            match object.get_mut(key) {
                Some(serde_json::Value::Object(defs)) if key == "$defs" => {
                    defs.values_mut().for_each(nullable);
                }
                Some(other) => nullable(other),
                None => {}
            }
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(serde_json::Value::Array(branches)) = object.get_mut(key) {
                branches.iter_mut().for_each(nullable);
            }
        }
    }
    let mut inner = overlay_schema();
    nullable(&mut inner);
    krm(
        &inner,
        "trainspec-patch",
        "TrainSpec patch",
        "A partial TrainSpec in the KRM form: a kustomize patch of a TrainSpec (`null` removes a key) or a trainc overlay written in YAML. Nothing is required.",
        false,
    )
}

/// Wraps the schema of a spec (`inner`) in the KRM envelope.
fn krm(
    inner: &serde_json::Value,
    id: &str,
    title: &str,
    description: &str,
    complete: bool,
) -> serde_json::Value {
    let mut properties = inner["properties"].clone();
    let name = properties
        .as_object_mut()
        .and_then(|p| p.remove("name"))
        .unwrap_or_default();
    let namespace = properties
        .as_object_mut()
        .and_then(|p| p.remove("namespace"))
        .unwrap_or_default();
    let mut spec = serde_json::json!({
        "description": "The spec's fields, but `name` and `namespace` (in `metadata`).",
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    });
    let mut metadata = serde_json::json!({
        "description": "The job's name and namespace; its labels and annotations, which join `spec.labels` and `spec.annotations` (kustomize's and kpt's own annotations, `config.kubernetes.io/*` and the like, are left out).",
        "type": "object",
        "properties": {
            "name": name,
            "namespace": namespace,
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    });
    let mut root = serde_json::json!({
        "$schema": inner["$schema"],
        "$id": format!("https://trainc.dev/schemas/{id}.schema.json"),
        "title": title,
        "description": description,
        "type": "object",
        "properties": {
            "apiVersion": {"description": "Always `trainc.dev/v1alpha1`.", "const": crate::parse::KRM_API_VERSION},
            "kind": {"description": "Always `TrainSpec`.", "const": crate::parse::KRM_KIND},
            "metadata": metadata.clone(),
            "spec": spec.clone(),
        },
        "additionalProperties": false,
        "$defs": inner["$defs"],
    });
    if complete {
        let required: Vec<serde_json::Value> = inner["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| *r != "name" && *r != "namespace")
            .cloned()
            .collect();
        spec["required"] = serde_json::Value::Array(required);
        metadata["required"] = serde_json::json!(["name"]);
        root["properties"]["spec"] = spec;
        root["properties"]["metadata"] = metadata;
        root["required"] = serde_json::json!(["apiVersion", "kind", "metadata", "spec"]);
    } else {
        root["required"] = serde_json::json!(["apiVersion", "kind"]);
    }
    root
}

/// Pretty JSON with a final newline, as the schemas are committed.
pub fn schema_text(schema: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).expect("a schema serialises");
    text.push('\n');
    text
}

/// Removes the `null` that schemars allows for every `Option`: an optional key
/// is left out, not set to null (TOML has no null; in YAML it is a mistake).
fn strip_null(schema: &mut serde_json::Value) {
    use serde_json::Value;
    match schema {
        Value::Object(object) => {
            if let Some(Value::Array(types)) = object.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    object.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(branches)) = object.get_mut("anyOf") {
                branches.retain(|b| b.get("type").is_none_or(|t| t != "null"));
                if branches.len() == 1 {
                    let Some(Value::Object(only)) = branches.pop() else {
                        unreachable!("one branch")
                    };
                    object.remove("anyOf");
                    for (key, value) in only {
                        object.entry(key).or_insert(value);
                    }
                }
            }
            object.values_mut().for_each(strip_null);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_null),
        _ => {}
    }
}

/// [`json_schema`] as the committed file's text: pretty, with a final newline.
pub fn json_schema_text() -> String {
    schema_text(&json_schema())
}
