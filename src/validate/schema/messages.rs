//! What the schema's errors say, in trainc's words: the types and values a
//! field takes, and what was written instead.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, ValidationError};
use serde_json::Value as Json;

use crate::diagnostic::Diagnostic;
use crate::spec::schema_lookup::description;
use crate::tree::field_path;
use crate::tree::{Node, Value};

/// Adds the field's documentation as help: it says what the field takes.
pub(super) fn with_description(d: Diagnostic, pointer: &str) -> Diagnostic {
    match description(pointer) {
        Some(text) => d.with_help(format!("`{}`: {text}", field_path(pointer))),
        None => d,
    }
}

/// Whether `error` says the value at `pointer` has the wrong type (directly or
/// in every branch of a nested `anyOf`).
pub(super) fn is_type_mismatch(error: &ValidationError<'_>, pointer: &str) -> bool {
    if error.instance_path().as_str() != pointer {
        return false;
    }
    match error.kind() {
        ValidationErrorKind::Type { .. } => true,
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            context
                .iter()
                .all(|branch| branch.iter().any(|e| is_type_mismatch(e, pointer)))
        }
        _ => false,
    }
}

/// The allowed values, when every error of a branch at `pointer` is an `enum`
/// or `const` mismatch (possibly through nested `oneOf`s).
pub(super) fn value_options(errors: &[ValidationError<'_>], pointer: &str) -> Option<Vec<String>> {
    let mut options = Vec::new();
    for error in errors
        .iter()
        .filter(|e| e.instance_path().as_str() == pointer)
    {
        match error.kind() {
            ValidationErrorKind::Constant { expected_value } => {
                options.push(value_text(expected_value));
            }
            ValidationErrorKind::Enum { options: values } => {
                options.extend(values.as_array()?.iter().map(value_text));
            }
            ValidationErrorKind::AnyOf { context }
            | ValidationErrorKind::OneOfNotValid { context } => {
                for branch in context {
                    options.extend(value_options(branch, pointer)?);
                }
            }
            _ => return None,
        }
    }
    (!options.is_empty()).then_some(options)
}

pub(super) fn value_text(value: &Json) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}

pub(super) fn describe_branch(errors: &[ValidationError<'_>], pointer: &str) -> Option<String> {
    errors
        .iter()
        .filter(|e| e.instance_path().as_str() == pointer)
        .find_map(describe_expectation)
}

pub(super) fn describe_expectation(error: &ValidationError<'_>) -> Option<String> {
    match error.kind() {
        ValidationErrorKind::Type { kind } => Some(describe_types(kind)),
        ValidationErrorKind::Enum { options } => {
            let list: Vec<String> = options
                .as_array()?
                .iter()
                .filter_map(Json::as_str)
                .map(|o| format!("`{o}`"))
                .collect();
            Some(format!("one of {}", list.join(", ")))
        }
        ValidationErrorKind::AnyOf { context } => {
            let parts: Vec<String> = context
                .iter()
                .filter_map(|b| b.iter().find_map(|e| describe_expectation(e)))
                .collect();
            Some(parts.join(" or "))
        }
        _ => None,
    }
}

pub(super) fn describe_types(kind: &TypeKind) -> String {
    let one = |t: JsonType| match t {
        JsonType::Null => "null",
        JsonType::Boolean => "`true` or `false`",
        JsonType::Integer => "an integer",
        JsonType::Number => "a number",
        JsonType::String => "a string",
        JsonType::Array => "an array",
        JsonType::Object => "a table",
    };
    match kind {
        TypeKind::Single(t) => one(*t).to_owned(),
        TypeKind::Multiple(set) => set.iter().map(one).collect::<Vec<_>>().join(" or "),
    }
}

pub(super) fn describe_node(node: &Node) -> &'static str {
    match node.value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a decimal number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

/// The short forms kubectl prints for values a spec must spell out: the
/// access modes (Kubernetes documentation, "Persistent Volumes", "Access
/// Modes": "In the CLI, the access modes are abbreviated to").
pub(super) const ABBREVIATIONS: &[(&str, &str)] = &[
    ("RWO", "ReadWriteOnce"),
    ("ROX", "ReadOnlyMany"),
    ("RWX", "ReadWriteMany"),
    ("RWOP", "ReadWriteOncePod"),
];
