//! An error as the API server words it: k8s.io/apimachinery v0.36.3
//! `pkg/util/validation/field/errors.go`, `Error.Error()`: the field's
//! path, the error type's words, the bad value as Go prints it, the
//! detail (`spec.port: Invalid value: "array": spec.port in body must be
//! of type integer,string: "array"`).

use serde_json::Value as Json;

use crate::verify::gofmt::{bad_value, error_body};

/// The error types the schema checks give (`field.ErrorType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::verify) enum ErrorType {
    Required,
    Invalid,
    TypeInvalid,
    NotSupported,
    TooLong,
    TooMany,
    Duplicate,
    Forbidden,
}

impl ErrorType {
    /// The type's name in the API's `Status` (`FieldValueInvalid`).
    #[cfg(test)]
    pub(in crate::verify) fn name(self) -> &'static str {
        match self {
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Forbidden => "FieldValueForbidden",
        }
    }

    fn words(self) -> &'static str {
        match self {
            ErrorType::Required => "Required value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Forbidden => "Forbidden",
        }
    }
}

/// One error: its type, its field as the server writes the path (`None`
/// where the server has no path: `<nil>`), the bad value as Go prints it
/// (`None` where the type shows none), the detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::verify) struct FieldError {
    pub kind: ErrorType,
    pub field: Option<String>,
    pub shown: Option<String>,
    pub detail: String,
    /// What trainc adds after the server's words (`item 0 has it too`).
    pub note: Option<String>,
}

impl FieldError {
    pub(in crate::verify) fn new(
        kind: ErrorType,
        field: Option<String>,
        value: Option<&Json>,
        detail: String,
    ) -> FieldError {
        let shown = match kind {
            ErrorType::Required | ErrorType::TooLong | ErrorType::Forbidden => None,
            _ => Some(value.map_or_else(|| "null".to_owned(), bad_value)),
        };
        FieldError {
            kind,
            field,
            shown,
            detail,
            note: None,
        }
    }

    /// The field as `Error()` writes it.
    #[cfg(test)]
    pub(in crate::verify) fn field_text(&self) -> &str {
        self.field.as_deref().unwrap_or("<nil>")
    }

    /// The words after the field (`ErrorBody`), and trainc's note.
    pub(in crate::verify) fn body(&self) -> String {
        let mut out = error_body(self.kind.words(), self.shown.as_deref(), &self.detail);
        if let Some(note) = &self.note {
            out.push_str(" (");
            out.push_str(note);
            out.push(')');
        }
        out
    }
}

/// The JSON pointer into `value` of a field the server names
/// (`spec.labels.app.kubernetes.io/name`, `spec.mounts[2]`): each name the
/// longest key of the object there that the path goes on with; a field
/// the value does not have is named by its path's words.
pub(in crate::verify) fn pointer(field: &str, value: &Json) -> String {
    let mut out = String::new();
    let mut at = Some(value);
    let mut rest = field;
    while !rest.is_empty() {
        let segment = if let Some(inner) = rest.strip_prefix('[') {
            let end = inner.find(']').unwrap_or(inner.len());
            rest = inner.get(end + 1..).unwrap_or("");
            &inner[..end]
        } else {
            let name = rest.strip_prefix('.').unwrap_or(rest);
            let ends = |k: &&String| {
                name.strip_prefix(k.as_str())
                    .is_some_and(|after| after.is_empty() || after.starts_with(['.', '[']))
            };
            let known = at
                .and_then(Json::as_object)
                .and_then(|fields| fields.keys().filter(ends).max_by_key(|k| k.len()));
            let end =
                known.map_or_else(|| name.find(['.', '[']).unwrap_or(name.len()), String::len);
            rest = &name[end..];
            &name[..end]
        };
        at = at.and_then(|v| match v {
            Json::Array(items) => segment.parse::<usize>().ok().and_then(|n| items.get(n)),
            other => other.get(segment),
        });
        out.push('/');
        crate::tree::push_segment(&mut out, segment);
    }
    out
}

/// Where an error is in `value`: its field, or for one the server gives
/// no field (`"spec.x" must validate at least one schema (anyOf)`), the
/// path its detail opens with quoted.
pub(in crate::verify) fn error_pointer(error: &FieldError, value: &Json) -> String {
    match &error.field {
        Some(field) => pointer(field, value),
        None => error
            .detail
            .strip_prefix('"')
            .and_then(|d| d.split_once('"'))
            .map_or_else(String::new, |(path, _)| pointer(path, value)),
    }
}

/// `field.Path`'s `Child`: `a.b`, or `b` at the root (`""`).
pub(in crate::verify) fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// `field.Path`'s `Index`: `a[0]`.
pub(in crate::verify) fn index(path: &str, n: usize) -> String {
    format!("{path}[{n}]")
}

/// `field.Path`'s `Key`: `a[k]`.
pub(in crate::verify) fn key(path: &str, key: &str) -> String {
    format!("{path}[{key}]")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::gofmt::{go_json, go_v};
    use serde_json::json;

    #[test]
    fn errors_read_as_the_servers() {
        let e = FieldError::new(
            ErrorType::TypeInvalid,
            Some("spec.port".into()),
            Some(&json!("array")),
            "spec.port in body must be of type integer,string: \"array\"".into(),
        );
        assert_eq!(
            format!("{}: {}", e.field_text(), e.body()),
            "spec.port: Invalid value: \"array\": spec.port in body must be of type integer,string: \"array\""
        );
        let e = FieldError::new(ErrorType::Required, Some("a.b".into()), None, String::new());
        assert_eq!(e.body(), "Required value");
        let e = FieldError::new(
            ErrorType::Duplicate,
            Some("x[2]".into()),
            Some(&json!({"z": 1, "a": 1.0})),
            String::new(),
        );
        assert_eq!(e.body(), "Duplicate value: {\"a\":1,\"z\":1}");
        assert_eq!(
            go_v(&json!(["a", 1, 1.5, {"x": 1}, null])),
            "[a 1 1.5 map[x:1] <nil>]"
        );
        assert_eq!(go_json(&json!([1e21, 0.5])), "[1e+21,0.5]");
        let value = json!({"spec": {"labels": {"app.kubernetes.io/name": "x"}, "m": [{"a": 1}]}});
        assert_eq!(
            pointer("spec.labels.app.kubernetes.io/name", &value),
            "/spec/labels/app.kubernetes.io~1name"
        );
        assert_eq!(pointer("spec.m[0].a", &value), "/spec/m/0/a");
        assert_eq!(pointer("spec.m[0].b.c", &value), "/spec/m/0/b/c");
    }
}
