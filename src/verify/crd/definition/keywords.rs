//! What `ValidateCustomResourceDefinitionOpenAPISchema` refuses in each
//! node of a CRD's schema (apiextensions-apiserver v0.36.3
//! `pkg/apis/apiextensions/validation/validation.go`): the keywords
//! `specStandardValidatorV3` forbids, `uniqueItems`, `additionalProperties`
//! beside `properties`, and the list and map extensions' own rules
//! (`validateMapListKeysMapSet` among them).

use serde_json::{Map, Value as Json};

use super::{At, Errors, MAX_DEPTH, flag};
use crate::verify::crd::field::ErrorType;

/// What the validator carries down the schema.
#[derive(Clone, Default)]
struct Context {
    root: bool,
    /// Why a default is not allowed here, if it is not.
    no_defaults: Option<String>,
    inside_resource_meta: bool,
}

/// The OpenAPI types a CRD's schema may name.
const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// Every node of `schema`, its root a resource's.
pub(super) fn check(schema: &Json, errors: &mut Errors<'_>) {
    let root = Context {
        root: true,
        ..Context::default()
    };
    node(schema, &At::default(), &root, errors, 0);
}

/// One node and what is below it.
fn node(schema: &Json, at: &At, context: &Context, errors: &mut Errors<'_>, depth: usize) {
    let Json::Object(node) = schema else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    let ty = node.get("type").and_then(Json::as_str).unwrap_or("");
    standard(node, ty, at, context, errors);
    if flag(schema, "uniqueItems") {
        errors.forbidden(
            &at.child("uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        );
    }
    below(node, at, context, errors, depth);
    if node.get("x-kubernetes-preserve-unknown-fields") == Some(&Json::Bool(false)) {
        errors.invalid(
            &at.child("x-kubernetes-preserve-unknown-fields"),
            &Json::Bool(false),
            "must be true or undefined",
        );
    }
    types(node, ty, at, errors);
    map_keys(node, at, errors);
}

/// `specStandardValidatorV3.validate`: what `NewStructural` cannot read
/// (and then the schema is not made structural), an unknown type, a
/// default where none may be.
fn standard(
    node: &Map<String, Json>,
    ty: &str,
    at: &At,
    context: &Context,
    errors: &mut Errors<'_>,
) {
    if !ty.is_empty() && !TYPES.contains(&ty) {
        let supported: Vec<String> = TYPES.iter().map(|t| format!("\"{t}\"")).collect();
        errors.push(
            &at.child("type"),
            ErrorType::NotSupported,
            Some(&Json::from(ty)),
            format!("supported values: {}", supported.join(", ")),
        );
    }
    if node.contains_key("default")
        && let Some(reason) = &context.no_defaults
    {
        errors.forbidden(&at.child("default"), format!("must not be set {reason}"));
    }
    for keyword in [
        "id",
        "additionalItems",
        "patternProperties",
        "definitions",
        "dependencies",
        "$ref",
    ] {
        let given = match node.get(keyword) {
            None | Some(Json::Null) => false,
            Some(Json::Object(map)) if matches!(keyword, "patternProperties" | "definitions") => {
                !map.is_empty()
            }
            Some(Json::String(s)) if keyword == "id" => !s.is_empty(),
            Some(_) => true,
        };
        if given {
            errors.forbidden(&at.child(keyword), format!("{keyword} is not supported"));
            errors.convertible = false;
        }
    }
    if ty == "null" {
        errors.forbidden(
            &at.child("type"),
            "type cannot be set to null, use nullable as an alternative",
        );
    }
    if node.get("items").is_some_and(Json::is_array) {
        errors.forbidden(
            &at.child("items"),
            "items must be a schema object and not an array",
        );
        errors.convertible = false;
    }
    if context.inside_resource_meta
        && node.get("x-kubernetes-embedded-resource") == Some(&Json::Bool(true))
    {
        errors.forbidden(
            &at.child("x-kubernetes-embedded-resource"),
            "must not be used inside of resource meta",
        );
    }
}

/// The schemas below a node, each with what the validator carries to it.
fn below(
    node: &Map<String, Json>,
    at: &At,
    context: &Context,
    errors: &mut Errors<'_>,
    depth: usize,
) {
    let nested = Context {
        root: false,
        ..context.clone()
    };
    let properties = node.get("properties").and_then(Json::as_object);
    if let Some(additional) = node.get("additionalProperties").filter(|a| !a.is_null()) {
        additional_properties(additional, properties, at, context, errors, depth);
    }
    let embedded = node.get("x-kubernetes-embedded-resource") == Some(&Json::Bool(true));
    for (name, child) in properties.into_iter().flatten() {
        let mut sub = nested.clone();
        if (context.root || embedded) && matches!(name.as_str(), "metadata" | "kind" | "apiVersion")
        {
            sub.inside_resource_meta = true;
            if context.root {
                sub.no_defaults = Some(format!("in top-level {name}"));
            }
        }
        self::node(
            child,
            &at.child("properties").key(name),
            &sub,
            errors,
            depth + 1,
        );
    }
    if let Some(not) = node.get("not") {
        self::node(not, &at.child("not"), &nested, errors, depth + 1);
    }
    for junctor in ["allOf", "oneOf", "anyOf"] {
        for (n, sub) in node
            .get(junctor)
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            self::node(sub, &at.child(junctor).index(n), &nested, errors, depth + 1);
        }
    }
    for (name, sub) in node
        .get("definitions")
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
    {
        self::node(
            sub,
            &at.child("definitions").key(name),
            &nested,
            errors,
            depth + 1,
        );
    }
    match node.get("items") {
        Some(items @ Json::Object(_)) => {
            self::node(items, &at.child("items"), &nested, errors, depth + 1);
        }
        Some(Json::Array(all)) => {
            for (n, items) in all.iter().enumerate() {
                self::node(
                    items,
                    &at.child("items").index(n),
                    &nested,
                    errors,
                    depth + 1,
                );
            }
        }
        _ => {}
    }
    for (name, sub) in node
        .get("dependencies")
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
    {
        self::node(
            sub,
            &at.child("dependencies").key(name),
            &nested,
            errors,
            depth + 1,
        );
    }
}

/// `additionalProperties`: not beside `properties` (but `true`), and its
/// schema, where defaults may not be below a resource's metadata.
fn additional_properties(
    additional: &Json,
    properties: Option<&Map<String, Json>>,
    at: &At,
    context: &Context,
    errors: &mut Errors<'_>,
    depth: usize,
) {
    if properties.is_some_and(|p| !p.is_empty()) && *additional != Json::Bool(true) {
        errors.forbidden(
            &at.child("additionalProperties"),
            "additionalProperties and properties are mutual exclusive",
        );
    }
    let mut sub = Context {
        root: false,
        ..context.clone()
    };
    if context.inside_resource_meta {
        sub.no_defaults = Some("inside additionalProperties applying to object metadata".into());
    }
    node(
        additional,
        &at.child("additionalProperties"),
        &sub,
        errors,
        depth + 1,
    );
}

/// The types the map and list extensions need, and their values.
fn types(node: &Map<String, Json>, ty: &str, at: &At, errors: &mut Errors<'_>) {
    if let Some(map_type) = node.get("x-kubernetes-map-type").and_then(Json::as_str) {
        if ty != "object" {
            errors.type_must_be(ty, "object if x-kubernetes-map-type is specified", at);
        }
        if map_type != "atomic" && map_type != "granular" {
            let value = Json::from(map_type);
            let supported = "supported values: \"atomic\", \"granular\"";
            errors.push(
                &at.child("x-kubernetes-map-type"),
                ErrorType::NotSupported,
                Some(&value),
                supported,
            );
        }
    }
    let Some(list_type) = node.get("x-kubernetes-list-type").and_then(Json::as_str) else {
        return;
    };
    if ty != "array" {
        errors.type_must_be(ty, "array if x-kubernetes-list-type is specified", at);
    } else if let Some(items) = node.get("items").filter(|i| i.is_object())
        && list_type == "set"
    {
        // The server shows the items' list type, whichever the error
        // (`is.XListType`), `null` where they have none.
        let shown = items
            .get("x-kubernetes-list-type")
            .cloned()
            .unwrap_or(Json::Null);
        let atomic = "must be atomic as item of a list with x-kubernetes-list-type=set";
        let item_type = items["type"].as_str().unwrap_or("");
        if item_type == "array"
            && items["x-kubernetes-list-type"]
                .as_str()
                .is_some_and(|t| t != "atomic")
        {
            errors.invalid(
                &at.child("items").child("x-kubernetes-list-type"),
                &shown,
                atomic,
            );
        }
        if item_type == "object" && items["x-kubernetes-map-type"] != "atomic" {
            errors.invalid(
                &at.child("items").child("x-kubernetes-map-type"),
                &shown,
                atomic,
            );
        }
    }
    if !matches!(list_type, "atomic" | "set" | "map") {
        let value = Json::from(list_type);
        let supported = "supported values: \"atomic\", \"set\", \"map\"";
        errors.push(
            &at.child("x-kubernetes-list-type"),
            ErrorType::NotSupported,
            Some(&value),
            supported,
        );
    }
}

/// A map list's keys: named by the list type, properties of its one
/// object item, scalar, each once, required or defaulted, not nullable;
/// a set's or map's items not nullable.
fn map_keys(node: &Map<String, Json>, at: &At, errors: &mut Errors<'_>) {
    let list_type = node.get("x-kubernetes-list-type").and_then(Json::as_str);
    let written = node
        .get("x-kubernetes-list-map-keys")
        .cloned()
        .unwrap_or(Json::Null);
    let keys: Vec<&str> = written
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    let must_be_map = "must be map if x-kubernetes-list-map-keys is non-empty";
    match list_type {
        _ if keys.is_empty() => {}
        None => errors.required(&at.child("x-kubernetes-list-type"), must_be_map),
        Some("map") => {}
        Some(other) => errors.invalid(
            &at.child("x-kubernetes-list-type"),
            &Json::from(other),
            must_be_map,
        ),
    }
    let items = node.get("items").filter(|i| !i.is_null());
    if list_type == Some("map") {
        if keys.is_empty() {
            errors.required(
                &at.child("x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            );
        }
        match items {
            None => errors.required(
                &at.child("items"),
                "must have a schema if x-kubernetes-list-type is map",
            ),
            Some(many @ Json::Array(_)) => {
                errors.invalid(
                    &at.child("items"),
                    many,
                    "must only have a single schema if x-kubernetes-list-type is map",
                );
            }
            Some(items) if items["type"] != "object" => errors.invalid(
                &at.child("items").child("type"),
                &Json::from(items["type"].as_str().unwrap_or("")),
                "must be object if parent array's x-kubernetes-list-type is map",
            ),
            Some(items) => {
                let mut seen = std::collections::HashSet::new();
                for key in &keys {
                    match items["properties"].get(*key) {
                        Some(property)
                            if matches!(property["type"].as_str(), Some("array" | "object")) =>
                        {
                            errors.invalid(
                                &at.child("items").child("properties").key(key).child("type"),
                                &Json::from("object"),
                                "must be a scalar type if parent array's x-kubernetes-list-type is map",
                            );
                        }
                        Some(_) => {}
                        None => errors.invalid(
                            &at.child("x-kubernetes-list-map-keys"),
                            &written,
                            "entries must all be names of item properties",
                        ),
                    }
                    if !seen.insert(*key) {
                        errors.invalid(
                            &at.child("x-kubernetes-list-map-keys"),
                            &written,
                            "must not contain duplicate entries",
                        );
                    }
                }
            }
        }
    }
    if let (Some(list_type @ ("set" | "map")), Some(items @ Json::Object(_))) = (list_type, items) {
        keys_set(list_type, items, &keys, at, errors);
    }
}

/// `validateMapListKeysMapSet`: a set's or a map's items not nullable, a
/// map's keys required or defaulted, and not nullable.
fn keys_set(list_type: &str, items: &Json, keys: &[&str], at: &At, errors: &mut Errors<'_>) {
    if flag(items, "nullable") {
        errors.forbidden(
            &at.child("items").child("nullable"),
            format!("cannot be nullable when x-kubernetes-list-type is {list_type}"),
        );
    }
    if list_type != "map" {
        return;
    }
    let required: Vec<&str> = items["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    for &key in keys {
        let Some(property) = items["properties"].get(key) else {
            continue;
        };
        let at = at.child("items").child("properties").key(key);
        if !required.contains(&key) && property.get("default").is_none() {
            errors.required(
                &at.child("default"),
                "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
            );
        }
        if flag(property, "nullable") {
            errors.forbidden(
                &at.child("nullable"),
                "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
            );
        }
    }
}
