//! Embedded resources (`x-kubernetes-embedded-resource`) as the API server
//! checks them (apiextensions-apiserver v0.36.3 `pkg/apiserver/schema/
//! objectmeta/validation.go`): `apiVersion` and `kind` given, each a
//! string, the version a group/version, the kind a DNS-1035 label in any
//! case; `metadata` decoded as an ObjectMeta and checked as one
//! (k8s.io/apimachinery v0.36.3 `pkg/api/validation/objectmeta.go`): its
//! name and generateName path segments, its namespace a DNS-1123 label,
//! its generation not negative, its labels' keys and values, its
//! annotations' keys and size. Owner references, finalizers and managed
//! fields are not checked here.

use serde_json::{Map, Value as Json};

use super::field::{ErrorType, FieldError, child, index, key};
use crate::verify::cel::named_format_errors;

/// Deeper than any object the API server decodes.
const MAX_DEPTH: usize = 256;
/// `TotalAnnotationSizeLimitB`.
const ANNOTATIONS_BYTES: usize = 256 * 1024;

/// The errors of `value`'s embedded resources against `schema` (a CRD
/// version's `openAPIV3Schema`); `root` makes the value one itself.
pub(in crate::verify) fn validate(schema: &Json, value: &Json, root: bool) -> Vec<FieldError> {
    let mut out = Vec::new();
    walk("", value, schema, root, &mut out, 0);
    out
}

fn walk(
    path: &str,
    value: &Json,
    schema: &Json,
    embedded: bool,
    out: &mut Vec<FieldError>,
    depth: usize,
) {
    if depth > MAX_DEPTH || !(schema.is_object() || embedded) {
        return;
    }
    match value {
        Json::Object(fields) => {
            if embedded || schema["x-kubernetes-embedded-resource"] == true {
                resource(path, fields, out);
            }
            for (k, v) in fields {
                if let Some(property) = schema["properties"].get(k) {
                    walk(&child(path, k), v, property, false, out, depth + 1);
                } else if schema["additionalProperties"].is_object() {
                    let more = &schema["additionalProperties"];
                    walk(&key(path, k), v, more, false, out, depth + 1);
                }
            }
        }
        Json::Array(items) => {
            for (n, item) in items.iter().enumerate() {
                walk(
                    &index(path, n),
                    item,
                    &schema["items"],
                    false,
                    out,
                    depth + 1,
                );
            }
        }
        _ => {}
    }
}

fn invalid(field: String, value: &Json, detail: impl Into<String>) -> FieldError {
    FieldError::new(ErrorType::Invalid, Some(field), Some(value), detail.into())
}

/// `validateEmbeddedResource`.
fn resource(path: &str, fields: &Map<String, Json>, out: &mut Vec<FieldError>) {
    for name in ["apiVersion", "kind"] {
        if !fields.contains_key(name) {
            out.push(FieldError::new(
                ErrorType::Required,
                Some(child(path, name)),
                None,
                String::new(),
            ));
        }
    }
    match fields.get("apiVersion") {
        Some(Json::String(v)) if v.is_empty() => {
            out.push(invalid(
                child(path, "apiVersion"),
                &Json::from(""),
                "must not be empty",
            ));
        }
        Some(Json::String(v)) if v.matches('/').count() > 1 => out.push(invalid(
            child(path, "apiVersion"),
            &Json::from(v.as_str()),
            format!("unexpected GroupVersion string: {v}"),
        )),
        Some(Json::String(_)) | None => {}
        Some(other) => out.push(invalid(
            child(path, "apiVersion"),
            other,
            "must be a string",
        )),
    }
    match fields.get("kind") {
        Some(Json::String(k)) if k.is_empty() => {
            out.push(invalid(
                child(path, "kind"),
                &Json::from(""),
                "must not be empty",
            ));
        }
        Some(Json::String(k)) => {
            let errors = named_format_errors("dns1035Label", &k.to_lowercase());
            if !errors.is_empty() {
                out.push(invalid(
                    child(path, "kind"),
                    &Json::from(k.as_str()),
                    format!(
                        "may have mixed case, but should otherwise match: {}",
                        errors.join(",")
                    ),
                ));
            }
        }
        None => {}
        Some(other) => out.push(invalid(child(path, "kind"), other, "must be a string")),
    }
    if let Some(meta) = fields.get("metadata") {
        metadata(&child(path, "metadata"), meta, out);
    }
}

/// Go's name of a JSON value's type, as `encoding/json` words a mismatch.
fn json_type(value: &Json) -> &'static str {
    match value {
        Json::String(_) => "string",
        Json::Number(_) => "number",
        Json::Bool(_) => "bool",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
        Json::Null => "null",
    }
}

/// The fields of an ObjectMeta checked here, decoded.
struct Meta<'m> {
    name: &'m str,
    generate_name: &'m str,
    namespace: &'m str,
    labels: Vec<(&'m String, &'m str)>,
    annotations: Vec<(&'m String, &'m str)>,
}

/// `GetObjectMeta`: the fields as `encoding/json` decodes them into an
/// ObjectMeta, or its error.
fn decoded(meta: &Json) -> Result<Option<Meta<'_>>, String> {
    let Json::Object(fields) = meta else {
        if meta.is_null() {
            return Ok(None);
        }
        return Err(format!(
            "json: cannot unmarshal {} into Go value of type v1.ObjectMeta",
            json_type(meta)
        ));
    };
    let undecodable = |field: &str, go_type: &str, value: &Json| {
        format!(
            "json: cannot unmarshal {} into Go struct field ObjectMeta.{field} of type {go_type}",
            json_type(value)
        )
    };
    let text = |name: &str| -> Result<&str, String> {
        match fields.get(name) {
            None | Some(Json::Null) => Ok(""),
            Some(Json::String(s)) => Ok(s),
            Some(other) => Err(undecodable(name, "string", other)),
        }
    };
    let strings = |name: &str| -> Result<Vec<(&String, &str)>, String> {
        match fields.get(name) {
            None | Some(Json::Null) => Ok(Vec::new()),
            Some(Json::Object(map)) => map
                .iter()
                .map(|(k, v)| match v {
                    Json::String(s) => Ok((k, s.as_str())),
                    Json::Null => Ok((k, "")),
                    other => Err(undecodable(name, "string", other)),
                })
                .collect(),
            Some(other) => Err(undecodable(name, "map[string]string", other)),
        }
    };
    Ok(Some(Meta {
        name: text("name")?,
        generate_name: text("generateName")?,
        namespace: text("namespace")?,
        labels: strings("labels")?,
        annotations: strings("annotations")?,
    }))
}

/// `GetObjectMeta` (a value `encoding/json` cannot decode as an
/// ObjectMeta is refused with its error), then `ValidateObjectMeta`.
fn metadata(path: &str, meta: &Json, out: &mut Vec<FieldError>) {
    let decoded = match decoded(meta) {
        Ok(Some(decoded)) => decoded,
        Ok(None) => return,
        Err(why) => {
            out.push(invalid(path.to_owned(), meta, why));
            return;
        }
    };
    let at = |name: &str| child(path, name);
    if !decoded.generate_name.is_empty() {
        for why in path_segment(decoded.generate_name, true) {
            out.push(invalid(
                at("generateName"),
                &Json::from(decoded.generate_name),
                why,
            ));
        }
    }
    // An empty name is given one (`fakename`), which is valid.
    for why in path_segment(decoded.name, false) {
        out.push(invalid(at("name"), &Json::from(decoded.name), why));
    }
    if !decoded.namespace.is_empty() {
        for why in named_format_errors("dns1123Label", decoded.namespace) {
            out.push(invalid(
                at("namespace"),
                &Json::from(decoded.namespace),
                why,
            ));
        }
    }
    if let Some(generation) = meta.get("generation").and_then(Json::as_i64)
        && generation < 0
    {
        let why = "must be greater than or equal to 0";
        out.push(invalid(at("generation"), &Json::from(generation), why));
    }
    for (k, v) in decoded.labels {
        for why in named_format_errors("qualifiedName", k) {
            out.push(invalid(at("labels"), &Json::from(k.as_str()), why));
        }
        for why in named_format_errors("labelValue", v) {
            out.push(invalid(at("labels"), &Json::from(v), why));
        }
    }
    let mut size = 0;
    for (k, v) in decoded.annotations {
        size += k.len() + v.len();
        for why in named_format_errors("qualifiedName", &k.to_lowercase()) {
            out.push(invalid(at("annotations"), &Json::from(k.as_str()), why));
        }
    }
    if size > ANNOTATIONS_BYTES {
        let detail = format!("may not be more than {ANNOTATIONS_BYTES} bytes");
        out.push(FieldError::new(
            ErrorType::TooLong,
            Some(at("annotations")),
            None,
            detail,
        ));
    }
}

/// `content.IsPathSegmentName` (`IsPathSegmentPrefix` for a prefix).
fn path_segment(name: &str, prefix: bool) -> Vec<String> {
    if !prefix && (name == "." || name == "..") {
        return vec![format!("may not be '{name}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|c| name.contains(**c))
        .map(|c| format!("may not contain '{c}'"))
        .collect()
}
