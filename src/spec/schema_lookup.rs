//! Finding the part of the spec's JSON Schema that describes a value: which
//! keys a table has (for did-you-mean), and what a field is documented as (for
//! help lines). Used by the schema pass and by overlays' `unset`.

use std::sync::OnceLock;

use serde_json::Value as Json;

/// The spec's schema, as committed; parsed once per process.
pub fn schema() -> &'static Json {
    static SCHEMA: OnceLock<Json> = OnceLock::new();
    crate::schema_verdict::embedded_json(&SCHEMA, crate::spec::SPEC_SCHEMA)
}

/// The first sentence of a field's description (a `.` before a capital letter ends it).
pub fn description(pointer: &str) -> Option<String> {
    let text = property_schema(schema(), pointer)?
        .get("description")?
        .as_str()?;
    let mut end = text.len();
    for (i, _) in text.match_indices(". ") {
        if text[i + 2..].starts_with(|c: char| c.is_uppercase()) {
            end = i;
            break;
        }
    }
    Some(text[..end].trim_end_matches('.').to_owned())
}

/// Whether the spec key at `pointer` holds a Kubernetes quantity.
pub fn is_quantity(pointer: &str) -> bool {
    property_schema(schema(), pointer)
        .and_then(|s| s.get("$ref"))
        .and_then(Json::as_str)
        .is_some_and(|r| r.ends_with("/Quantity"))
}

/// Whether `name` (`target`, `replicas`) is a top-level key of the spec.
pub fn is_spec_key(name: &str) -> bool {
    schema()["properties"].get(name).is_some()
}

/// The object schema of the spec that describes the value at `pointer`.
pub fn schema_at_pointer(pointer: &str) -> Option<&'static Json> {
    schema_at(schema(), pointer)
}

/// The object schema that describes the value at `pointer`, following `$ref`,
/// `properties`, `additionalProperties`, `items` and object branches of `anyOf`.
pub fn schema_at<'a>(root: &'a Json, pointer: &str) -> Option<&'a Json> {
    let resolve = |mut node: &'a Json| -> Option<&'a Json> {
        for _ in 0..16 {
            if let Some(reference) = node.get("$ref").and_then(Json::as_str) {
                let name = reference.strip_prefix("#/$defs/")?;
                node = root.get("$defs")?.get(name)?;
            } else if let Some(branches) = node.get("anyOf").and_then(Json::as_array) {
                node = branches
                    .iter()
                    .find(|b| b.get("$ref").is_some() || b.get("properties").is_some())?;
            } else {
                return Some(node);
            }
        }
        None
    };
    let mut node = resolve(root)?;
    for segment in pointer.split('/').skip(1) {
        let segment = crate::tree::segment_key(segment);
        let next = node
            .get("properties")
            .and_then(|p| p.get(&segment))
            .or_else(|| node.get("additionalProperties").filter(|a| a.is_object()))
            .or_else(|| node.get("items"))?;
        node = resolve(next)?;
    }
    Some(node)
}

/// Whether the field at `pointer` takes whole numbers and no other numbers
/// (`replicas`, but not a quantity such as `cpu`, which also takes `0.5`).
pub fn takes_only_integers(pointer: &str) -> bool {
    let root = schema();
    let resolve = |node: &'static Json| -> &'static Json {
        node.get("$ref")
            .and_then(Json::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .and_then(|name| root.get("$defs")?.get(name))
            .unwrap_or(node)
    };
    let kind = |node: &Json| node.get("type").and_then(Json::as_str).map(str::to_owned);
    let Some(node) = property_schema(root, pointer).map(resolve) else {
        return false;
    };
    match node.get("anyOf").and_then(Json::as_array) {
        Some(branches) => {
            let numeric: Vec<String> = branches
                .iter()
                .filter_map(|b| kind(resolve(b)))
                .filter(|t| t == "integer" || t == "number")
                .collect();
            !numeric.is_empty() && numeric.iter().all(|t| t == "integer")
        }
        None => kind(node).as_deref() == Some("integer"),
    }
}

/// The JSON types the field at `pointer` takes (`integer`, `string`, ...):
/// its `type`, `enum` or `const`, or those of every `anyOf`/`oneOf` branch,
/// through `$ref`s. Empty where the schema does not say.
pub fn types_at(pointer: &str) -> Vec<&'static str> {
    let root = schema();
    let mut types: Vec<&'static str> = Vec::new();
    let mut add = |t: &'static str| {
        if !types.contains(&t) {
            types.push(t);
        }
    };
    let mut pending: Vec<&'static Json> = property_schema(root, pointer).into_iter().collect();
    // Bounded: `$ref`s could in principle cycle.
    for _ in 0..64 {
        let Some(node) = pending.pop() else { break };
        if let Some(name) = node
            .get("$ref")
            .and_then(Json::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
        {
            pending.extend(root.get("$defs").and_then(|d| d.get(name)));
        }
        for key in ["anyOf", "oneOf"] {
            pending.extend(node.get(key).and_then(Json::as_array).into_iter().flatten());
        }
        match node.get("type") {
            Some(Json::String(t)) => add(json_type(t)),
            Some(Json::Array(ts)) => ts
                .iter()
                .filter_map(Json::as_str)
                .for_each(|t| add(json_type(t))),
            _ => {}
        }
        for value in node
            .get("enum")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .chain(node.get("const"))
        {
            add(match value {
                Json::String(_) => "string",
                Json::Bool(_) => "boolean",
                Json::Number(n) if n.is_i64() || n.is_u64() => "integer",
                Json::Number(_) => "number",
                _ => "null",
            });
        }
    }
    types
}

/// A JSON Schema type name as a `'static` string.
fn json_type(name: &str) -> &'static str {
    [
        "integer", "number", "string", "boolean", "object", "array", "null",
    ]
    .into_iter()
    .find(|t| *t == name)
    .unwrap_or("null")
}

/// The schema written at the property for `pointer` (where its description is),
/// before following its `$ref`.
fn property_schema<'a>(root: &'a Json, pointer: &str) -> Option<&'a Json> {
    let (parent, last) = pointer.rsplit_once('/')?;
    let last = crate::tree::segment_key(last);
    let parent = schema_at(root, parent)?;
    let node = parent.get("properties").and_then(|p| p.get(&last));
    node.or_else(|| parent.get("additionalProperties").filter(|a| a.is_object()))
        .or_else(|| parent.get("items"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_at_follows_refs_and_maps() {
        let root = schema();
        assert!(
            schema_at(root, "/volumes/data").unwrap()["properties"]
                .get("mountPath")
                .is_some()
        );
        assert!(
            schema_at(root, "/scheduling/tolerations/0").unwrap()["properties"]
                .get("effect")
                .is_some()
        );
        assert!(
            schema_at(root, "/env/X").unwrap()["properties"]
                .get("secret")
                .is_some()
        );
    }

    #[test]
    fn types_at_unions_the_branches() {
        assert_eq!(types_at("/resources/gpus"), ["integer"]);
        assert_eq!(types_at("/hostNetwork"), ["boolean"]);
        let replicas = types_at("/replicas");
        assert!(
            replicas.contains(&"integer") && replicas.contains(&"string"),
            "{replicas:?}"
        );
        assert_eq!(types_at("/args/0"), ["string"]);
        assert!(types_at("/no/such/field").is_empty());
    }

    #[test]
    fn integer_fields_are_told_from_numeric_ones() {
        for pointer in [
            "/replicas",
            "/nProcPerNode",
            "/resources/gpus",
            "/policy/ttlAfterFinished",
            "/ports/tb",
        ] {
            assert!(takes_only_integers(pointer), "{pointer}");
        }
        for pointer in ["/resources/cpu", "/vars/x", "/image", "/volumes/a/size"] {
            assert!(!takes_only_integers(pointer), "{pointer}");
        }
    }
}
