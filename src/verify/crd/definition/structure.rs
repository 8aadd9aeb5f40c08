//! What makes a CRD's schema structural (apiextensions-apiserver v0.36.3
//! `pkg/apiserver/schema/validation.go` `ValidateStructural`, with a
//! CRD's options: no `x-kubernetes-validations` and no
//! `additionalProperties` under a junctor; and `complete.go`): every
//! field and item typed, the resource's `metadata` left to the server,
//! the extensions consistent, and the schemas under `allOf`, `anyOf`,
//! `oneOf` and `not` saying nothing of the structure.

use serde_json::Value as Json;

use super::{At, Errors, MAX_DEPTH, flag};

/// Where a node of the structure is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// The structure of `schema` (its root a resource's), then the value
/// validations of its root.
pub(super) fn check(schema: &Json, errors: &mut Errors<'_>) {
    let root = At::default();
    invariants(schema, Level::Root, &root, errors, 0);
    completeness(schema, schema, &root, &root, errors, 0);
}

/// `validateStructuralInvariants` of a node of the structure (reached by
/// `properties`, `items` and `additionalProperties` alone).
fn invariants(s: &Json, level: Level, at: &At, errors: &mut Errors<'_>, depth: usize) {
    if !s.is_object() || depth > MAX_DEPTH {
        return;
    }
    let ty = s["type"].as_str().unwrap_or("");
    if ty == "array" && !s["items"].is_object() {
        errors.required(&at.child("items"), "must be specified");
    }
    if s["items"].is_object() {
        invariants(
            &s["items"],
            Level::Item,
            &at.child("items"),
            errors,
            depth + 1,
        );
    }
    for (name, child) in s["properties"].as_object().into_iter().flatten() {
        invariants(
            child,
            Level::Field,
            &at.child("properties").key(name),
            errors,
            depth + 1,
        );
    }
    let additional = s.get("additionalProperties").filter(|a| !a.is_null());
    if let Some(additional) = additional {
        if level == Level::Root {
            errors.forbidden(
                &at.child("additionalProperties"),
                "must not be used at the root",
            );
        }
        invariants(
            additional,
            Level::Field,
            &at.child("additionalProperties"),
            errors,
            depth + 1,
        );
    }
    let (int_or_string, preserve, embedded) = (
        flag(s, "x-kubernetes-int-or-string"),
        flag(s, "x-kubernetes-preserve-unknown-fields"),
        flag(s, "x-kubernetes-embedded-resource"),
    );
    for (set, name) in [
        (preserve, "x-kubernetes-preserve-unknown-fields"),
        (embedded, "x-kubernetes-embedded-resource"),
    ] {
        if int_or_string && set {
            errors.invalid(
                &at.child(name),
                &Json::Bool(true),
                "must be false if x-kubernetes-int-or-string is true",
            );
        }
    }
    // The int-or-string patterns' `anyOf` is left alone.
    let skip_any_of = is_int_or_string_any_of(&s["anyOf"]);
    let skip_first_all_of_any_of = s["allOf"]
        .as_array()
        .and_then(|all| all.first())
        .is_some_and(|first| is_int_or_string_any_of(&first["anyOf"]));
    value_validation(s, skip_any_of, skip_first_all_of_any_of, at, errors, depth);
    if embedded && ty != "object" {
        errors.type_must_be(ty, "object if x-kubernetes-embedded-resource is true", at);
    } else if ty.is_empty() && !int_or_string && !preserve {
        let detail = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errors.required(&at.child("type"), detail);
    }
    if embedded && additional.is_some() {
        errors.forbidden(
            &at.child("additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        );
    }
    if level == Level::Root && !ty.is_empty() && ty != "object" {
        errors.invalid(
            &at.child("type"),
            &Json::from(ty),
            "must be object at the root",
        );
    }
    resource_meta(s, level, embedded, at, errors);
    if embedded
        && !preserve
        && s["properties"]
            .as_object()
            .is_none_or(serde_json::Map::is_empty)
    {
        errors.required(
            &at.child("properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        );
    }
}

/// A resource's `kind` and `apiVersion` strings, its `metadata` an
/// object, and at the root no more said of `metadata` than its `name`
/// and `generateName` (`validateStructuralMetadataInvariants`).
fn resource_meta(s: &Json, level: Level, embedded: bool, at: &At, errors: &mut Errors<'_>) {
    let check_metadata = level == Level::Root || embedded;
    let type_of = |field: &Json| Json::from(field["type"].as_str().unwrap_or(""));
    for name in ["kind", "apiVersion"] {
        if let Some(field) = s["properties"].get(name)
            && check_metadata
            && field["type"] != "string"
        {
            errors.invalid(
                &at.child("properties").key(name).child("type"),
                &type_of(field),
                "must be string",
            );
        }
    }
    let Some(metadata) = s["properties"].get("metadata") else {
        return;
    };
    let at = at.child("properties").key("metadata");
    if check_metadata && metadata["type"] != "object" {
        errors.invalid(&at.child("type"), &type_of(metadata), "must be object");
    }
    if level == Level::Root && !only_names(metadata) {
        errors.forbidden(
            &at,
            "must not specify anything other than name and generateName, but metadata is implicitly specified",
        );
    }
}

/// Whether a resource's root `metadata` schema says nothing but its
/// type, its default, and properties that are `name` and `generateName`
/// alone: anything else is a field of the structural schema left set.
fn only_names(metadata: &Json) -> bool {
    let Json::Object(node) = metadata else {
        return true;
    };
    node.iter().all(|(key, value)| match key.as_str() {
        "type" | "default" => true,
        "properties" => value.as_object().is_none_or(|properties| {
            let names = ["name", "generateName"];
            properties.keys().all(|k| names.contains(&k.as_str()))
        }),
        "nullable"
        | "uniqueItems"
        | "x-kubernetes-preserve-unknown-fields"
        | "x-kubernetes-embedded-resource"
        | "x-kubernetes-int-or-string" => *value == Json::Bool(false),
        _ => match value {
            Json::Null => true,
            Json::String(s) => s.is_empty(),
            Json::Array(items) => items.is_empty(),
            _ => false,
        },
    })
}

/// `anyOf: [{type: integer}, {type: string}]`, written just so.
fn is_int_or_string_any_of(any_of: &Json) -> bool {
    let Some([a, b]) = any_of.as_array().map(Vec::as_slice) else {
        return false;
    };
    let only_type = |s: &Json, t: &str| {
        s.as_object()
            .is_some_and(|o| o.len() == 1 && o.get("type") == Some(&Json::from(t)))
    };
    only_type(a, "integer") && only_type(b, "string")
}

/// `validateValueValidation`: the junctors' nested value validations,
/// and the pattern, which Go's `regexp` must read.
fn value_validation(
    v: &Json,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    at: &At,
    errors: &mut Errors<'_>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let each = |junctor: &str| v[junctor].as_array().map_or(&[][..], Vec::as_slice);
    if !skip_any_of {
        for (n, sub) in each("anyOf").iter().enumerate() {
            nested(sub, false, &at.child("anyOf").index(n), errors, depth + 1);
        }
    }
    for (n, sub) in each("allOf").iter().enumerate() {
        let skip = skip_first_all_of_any_of && n == 0;
        nested(sub, skip, &at.child("allOf").index(n), errors, depth + 1);
    }
    for (n, sub) in each("oneOf").iter().enumerate() {
        nested(sub, false, &at.child("oneOf").index(n), errors, depth + 1);
    }
    if v["not"].is_object() {
        nested(&v["not"], false, &at.child("not"), errors, depth + 1);
    }
    if let Some(pattern) = v["pattern"].as_str().filter(|p| !p.is_empty())
        && let Err(why) = crate::verify::cel::go_match(pattern, "")
    {
        errors.invalid(
            &at.child("pattern"),
            &Json::from(pattern),
            format!("must be a valid regular expression, but isn't: {why}"),
        );
    }
}

/// `validateNestedValueValidation`: a schema under a junctor says nothing
/// of the structure.
fn nested(v: &Json, skip_any_of: bool, at: &At, errors: &mut Errors<'_>, depth: usize) {
    if !v.is_object() || depth > MAX_DEPTH {
        return;
    }
    value_validation(v, skip_any_of, false, at, errors, depth);
    if v["items"].is_object() {
        nested(&v["items"], false, &at.child("items"), errors, depth + 1);
    }
    for (name, child) in v["properties"].as_object().into_iter().flatten() {
        nested(
            child,
            false,
            &at.child("properties").key(name),
            errors,
            depth + 1,
        );
    }
    let given = |key: &str| v.get(key).is_some_and(|x| !x.is_null());
    let text = |key: &str| v[key].as_str().is_some_and(|t| !t.is_empty());
    let structural = [
        (text("type"), "type", "must be empty to be structural"),
        (
            given("additionalProperties"),
            "additionalProperties",
            "must be undefined to be structural",
        ),
        (
            given("default"),
            "default",
            "must be undefined to be structural",
        ),
        (text("title"), "title", "must be empty to be structural"),
        (
            text("description"),
            "description",
            "must be empty to be structural",
        ),
        (
            flag(v, "nullable"),
            "nullable",
            "must be false to be structural",
        ),
        (
            flag(v, "x-kubernetes-preserve-unknown-fields"),
            "x-kubernetes-preserve-unknown-fields",
            "must be false to be structural",
        ),
        (
            flag(v, "x-kubernetes-embedded-resource"),
            "x-kubernetes-embedded-resource",
            "must be false to be structural",
        ),
        (
            flag(v, "x-kubernetes-int-or-string"),
            "x-kubernetes-int-or-string",
            "must be false to be structural",
        ),
        (
            v["x-kubernetes-list-map-keys"]
                .as_array()
                .is_some_and(|k| !k.is_empty()),
            "x-kubernetes-list-map-keys",
            "must be empty to be structural",
        ),
        (
            v["x-kubernetes-list-type"].is_string(),
            "x-kubernetes-list-type",
            "must be undefined to be structural",
        ),
        (
            v["x-kubernetes-map-type"].is_string(),
            "x-kubernetes-map-type",
            "must be undefined to be structural",
        ),
        (
            v["x-kubernetes-validations"]
                .as_array()
                .is_some_and(|r| !r.is_empty()),
            "x-kubernetes-validations",
            "must be empty to be structural",
        ),
    ];
    for (set, name, detail) in structural {
        if set {
            errors.forbidden(&at.child(name), detail);
        }
    }
    if v["properties"].get("metadata").is_some() {
        errors.forbidden(
            &at.child("properties").key("metadata"),
            "must not be specified in a nested context",
        );
    }
}

/// `validateValueValidationCompleteness`: every property and items the
/// junctors of `v` name, the structure `s` has too. (The server starts at
/// the root's junctors alone.)
fn completeness(v: &Json, s: &Json, s_at: &At, v_at: &At, errors: &mut Errors<'_>, depth: usize) {
    if !v.is_object() || depth > MAX_DEPTH {
        return;
    }
    if v["not"].is_object() {
        nested_completeness(&v["not"], s, s_at, &v_at.child("not"), errors, depth + 1);
    }
    for junctor in ["allOf", "anyOf", "oneOf"] {
        for (n, sub) in v[junctor].as_array().into_iter().flatten().enumerate() {
            nested_completeness(
                sub,
                s,
                s_at,
                &v_at.child(junctor).index(n),
                errors,
                depth + 1,
            );
        }
    }
}

/// `validateNestedValueValidationCompleteness`.
fn nested_completeness(
    v: &Json,
    s: &Json,
    s_at: &At,
    v_at: &At,
    errors: &mut Errors<'_>,
    depth: usize,
) {
    if !v.is_object() || depth > MAX_DEPTH {
        return;
    }
    completeness(v, s, s_at, v_at, errors, depth);
    let mut below = |v: &Json, s: Option<&Json>, s_at: At, v_at: At| {
        if let Some(s) = s.filter(|s| s.is_object()) {
            nested_completeness(v, s, &s_at, &v_at, errors, depth + 1);
        } else {
            let detail = format!("because it is defined in {}", errors.name(&v_at));
            errors.required(&s_at, detail);
        }
    };
    if v["items"].is_object() {
        below(
            &v["items"],
            s.get("items"),
            s_at.child("items"),
            v_at.child("items"),
        );
    }
    for (name, sub) in v["properties"].as_object().into_iter().flatten() {
        let (s_field, v_field) = (
            s_at.child("properties").key(name),
            v_at.child("properties").key(name),
        );
        below(sub, s["properties"].get(name), s_field, v_field);
    }
}
