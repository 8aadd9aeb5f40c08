//! The JSON Schemas generated from the spec types: the spec's, committed as
//! `schemas/trainspec.schema.json`, and the overlay's (nothing required, plus
//! `unset`), committed as `schemas/overlay.schema.json`. Tests lock both.

use super::Spec;

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
