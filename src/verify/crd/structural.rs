//! A CRD version's structural schema (`openAPIV3Schema`) as the strict JSON
//! Schema the API server enforces, and an object as the API server has it
//! when it validates: nulls of non-nullable fields pruned, defaults applied.
//!
//! From kubernetes/kubernetes v1.30.0,
//! `staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/`:
//! with strict field validation (kubectl's default since 1.27) a field the
//! schema does not name is an error unless `x-kubernetes-preserve-unknown-fields`
//! keeps it (`pruning/algorithm.go`); `x-kubernetes-int-or-string` takes an
//! integer or a string; `x-kubernetes-embedded-resource` is an object with
//! `apiVersion`, `kind` and `metadata` (`objectmeta/validation.go`);
//! `nullable: false` nulls are pruned before defaulting (`defaulting/prunenulls.go`),
//! and defaults fill absent fields before validation (`defaulting/algorithm.go`).

use serde_json::{Map, Value as Json, json};

/// The strict schema of `schema`, the root of a version's `openAPIV3Schema`.
pub(super) fn strict(schema: &Json) -> Json {
    let mut strict = node(schema, 0);
    if let Json::Object(root) = &mut strict {
        // The root's identity: `metadata` is checked as ObjectMeta apart.
        let properties = root.entry("properties").or_insert_with(|| json!({}));
        if let Json::Object(properties) = properties {
            properties.insert("apiVersion".to_owned(), json!({"type": "string"}));
            properties.insert("kind".to_owned(), json!({"type": "string"}));
            let metadata = schema["properties"]["metadata"].clone();
            properties.insert(
                "metadata".to_owned(),
                if metadata.is_object() {
                    open(metadata)
                } else {
                    json!({"type": "object"})
                },
            );
        }
        if schema["x-kubernetes-preserve-unknown-fields"] != true {
            root.insert("additionalProperties".to_owned(), Json::Bool(false));
        }
    }
    super::super::compact::bound_integer_formats(&mut strict);
    strict
}

/// `metadata`'s own schema (a CRD may bound its `name`), without closing it.
fn open(mut metadata: Json) -> Json {
    if let Some(fields) = metadata.as_object_mut() {
        fields.remove("additionalProperties");
    }
    metadata
}

fn node(schema: &Json, depth: usize) -> Json {
    let Json::Object(written) = schema else {
        return schema.clone();
    };
    if depth > super::MAX_DEPTH {
        return Json::Object(written.clone());
    }
    let flag = |key: &str| written.get(key).and_then(Json::as_bool) == Some(true);
    let mut out = Map::new();
    for (key, value) in written {
        let value = match key.as_str() {
            "properties" => match value {
                Json::Object(properties) => Json::Object(
                    properties
                        .iter()
                        .map(|(name, child)| (name.clone(), node(child, depth + 1)))
                        .collect(),
                ),
                other => other.clone(),
            },
            "items" | "additionalProperties" if value.is_object() => node(value, depth + 1),
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    if flag("x-kubernetes-int-or-string") {
        out.remove("type");
        if !out.contains_key("anyOf") && !out.contains_key("oneOf") {
            out.insert(
                "anyOf".to_owned(),
                json!([{"type": "integer"}, {"type": "string"}]),
            );
        }
    }
    if flag("x-kubernetes-embedded-resource") {
        let properties = out.entry("properties").or_insert_with(|| json!({}));
        if let Json::Object(properties) = properties {
            for key in ["apiVersion", "kind"] {
                properties
                    .entry(key)
                    .or_insert_with(|| json!({"type": "string", "minLength": 1}));
            }
            properties
                .entry("metadata")
                .or_insert_with(|| json!({"type": "object"}));
        }
        let required = out.entry("required").or_insert_with(|| json!([]));
        if let Json::Array(required) = required {
            for key in ["apiVersion", "kind"] {
                if !required.iter().any(|r| r == key) {
                    required.push(Json::from(key));
                }
            }
        }
    }
    let is_object =
        out.get("type").and_then(Json::as_str) == Some("object") || out.contains_key("properties");
    if is_object
        && !flag("x-kubernetes-preserve-unknown-fields")
        && !out.contains_key("additionalProperties")
    {
        out.insert("additionalProperties".to_owned(), Json::Bool(false));
    }
    if flag("nullable") {
        if let Some(Json::String(kind)) = out.get("type").cloned() {
            out.insert("type".to_owned(), json!([kind, "null"]));
        }
        if let Some(Json::Array(options)) = out.get_mut("enum")
            && !options.contains(&Json::Null)
        {
            options.push(Json::Null);
        }
    }
    if written.get("x-kubernetes-list-type").and_then(Json::as_str) == Some("set") {
        out.insert("uniqueItems".to_owned(), Json::Bool(true));
    }
    Json::Object(out)
}

fn nullable(schema: &Json) -> bool {
    schema["nullable"].as_bool() == Some(true)
}

/// `value` as the API server validates it (apiextensions-apiserver
/// v0.36.3 `pkg/apiserver/schema/defaulting/`): a null that is not
/// nullable and has no default pruned, a property's or a map value's
/// (`prunenulls.go`); then each absent property with a default given it,
/// and a null that is not nullable given its default, a property's, a map
/// value's or a list item's (`algorithm.go`), all the way down.
pub(super) fn apply(value: &mut Json, schema: &Json, depth: usize) {
    if depth > super::MAX_DEPTH {
        return;
    }
    let more = Some(&schema["additionalProperties"]).filter(|s| s.is_object());
    match value {
        Json::Object(fields) => {
            let field_schema = |key: &str| schema["properties"].get(key).or(more);
            fields.retain(|key, field| {
                !field.is_null()
                    || field_schema(key).is_none_or(|s| nullable(s) || s.get("default").is_some())
            });
            for (key, property) in schema["properties"].as_object().into_iter().flatten() {
                if let Some(default) = property.get("default")
                    && fields
                        .get(key)
                        .is_none_or(|v| v.is_null() && !nullable(property))
                {
                    fields.insert(key.clone(), default.clone());
                }
            }
            for (key, field) in fields.iter_mut() {
                if let Some(property) = schema["properties"].get(key) {
                    apply(field, property, depth + 1);
                } else if let Some(more) = more {
                    defaulted_null(field, more);
                    apply(field, more, depth + 1);
                }
            }
        }
        Json::Array(items) if schema["items"].is_object() => {
            for item in items {
                defaulted_null(item, &schema["items"]);
                apply(item, &schema["items"], depth + 1);
            }
        }
        _ => {}
    }
}

/// A null that `schema` does not let be null given its default (or left
/// null where it has none).
fn defaulted_null(value: &mut Json, schema: &Json) {
    if value.is_null()
        && !nullable(schema)
        && let Some(default) = schema.get("default")
    {
        *value = default.clone();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn nulls_are_pruned_and_defaulted_as_the_server_does() {
        let schema = json!({"type": "object", "properties": {
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "sizes": {"type": "object", "additionalProperties": {"type": "integer", "default": 1}},
            "tags": {"type": "array", "items": {"type": "string", "default": "x"}},
            "note": {"type": "string", "nullable": true},
            "tier": {"type": "string", "default": "gold"},
            "port": {"type": "integer"},
        }});
        let mut value = json!({
            "labels": {"team": null, "app": "a"},
            "sizes": {"a": null},
            "tags": [null, "y"],
            "note": null,
            "tier": null,
            "port": null,
        });
        super::apply(&mut value, &schema, 0);
        // A map's null value pruned; with a default, defaulted; a list's
        // null item defaulted; a nullable null kept; a property's null
        // defaulted, or pruned without a default.
        assert_eq!(
            value,
            json!({
                "labels": {"app": "a"},
                "sizes": {"a": 1},
                "tags": ["x", "y"],
                "note": null,
                "tier": "gold",
            })
        );
    }
}
