//! A default its own schema refuses (apiextensions-apiserver v0.36.3
//! `pkg/apiserver/schema/defaulting/validation.go` `ValidateDefaults`,
//! run once the schema is structural): a default with fields the schema
//! would prune (`must not have unknown fields`), and one its node's schema
//! does not admit, in the schema validator's words below `….default`.
//!
//! Not checked here: defaults within a resource's metadata (the root's
//! are refused outright by [`super::keywords`]), and the node's CEL rules
//! run on its default.

use serde_json::Value as Json;

use super::{At, Errors, MAX_DEPTH, flag};
use crate::verify::crd::openapi;

/// The defaults of `schema`, its root a resource's.
pub(super) fn check(schema: &Json, errors: &mut Errors<'_>) {
    walk(schema, &At::default(), true, false, errors, 0);
}

/// `validate` at a node: `resource` where it is a resource's root (the
/// schema's, or an embedded resource), `inside_meta` within its
/// `apiVersion`, `kind` or `metadata`.
fn walk(
    s: &Json,
    at: &At,
    resource: bool,
    inside_meta: bool,
    errors: &mut Errors<'_>,
    depth: usize,
) {
    if !s.is_object() || depth > MAX_DEPTH {
        return;
    }
    let resource = resource || flag(s, "x-kubernetes-embedded-resource");
    let inside_meta = inside_meta && !resource;
    if let Some(default) = s.get("default").filter(|d| !d.is_null())
        && !inside_meta
    {
        let at = at.child("default");
        if has_unknown(default, s, resource, 0) {
            errors.invalid(&at, default, "must not have unknown fields");
        }
        let name = errors.name(&at);
        for mut error in openapi::validate(s, default) {
            error.field = Some(match error.field.take() {
                Some(field) => format!("{name}.{field}"),
                None => name.clone(),
            });
            errors.out.push((at.pointer.clone(), error));
        }
    }
    // Defaults are not followed into additionalProperties.
    if s["items"].is_object() {
        walk(
            &s["items"],
            &at.child("items"),
            false,
            inside_meta,
            errors,
            depth + 1,
        );
    }
    for (name, sub) in s["properties"].as_object().into_iter().flatten() {
        let meta = inside_meta
            || (resource && matches!(name.as_str(), "apiVersion" | "kind" | "metadata"));
        walk(
            sub,
            &at.child("properties").key(name),
            false,
            meta,
            errors,
            depth + 1,
        );
    }
}

/// Whether pruning `value` by `s` (`pruning.Prune`) would drop a field:
/// one neither a property nor kept by `additionalProperties` or
/// `x-kubernetes-preserve-unknown-fields`; a resource (the node a default
/// is at, where `root`, or an embedded one) keeps its `apiVersion`,
/// `kind` and `metadata`.
fn has_unknown(value: &Json, s: &Json, root: bool, depth: usize) -> bool {
    if depth > MAX_DEPTH || !s.is_object() {
        return false;
    }
    let resource = root || flag(s, "x-kubernetes-embedded-resource");
    match value {
        Json::Object(fields) => fields.iter().any(|(key, field)| {
            if resource && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                return false;
            }
            if let Some(property) = s["properties"].get(key) {
                return has_unknown(field, property, false, depth + 1);
            }
            match &s["additionalProperties"] {
                additional @ Json::Object(_) => has_unknown(field, additional, false, depth + 1),
                Json::Bool(true) => false,
                _ => !flag(s, "x-kubernetes-preserve-unknown-fields"),
            }
        }),
        Json::Array(items) => items
            .iter()
            .any(|item| has_unknown(item, &s["items"], false, depth + 1)),
        _ => false,
    }
}
