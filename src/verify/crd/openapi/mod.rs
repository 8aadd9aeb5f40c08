//! A custom resource checked against its CRD's schema as the API server
//! checks it, errors in its words: kube-openapi's schema validator
//! (`pkg/validation/validate`: `schema.go`, `type.go`, `validator.go`,
//! `schema_props.go`, `object_validator.go`, `slice_validator.go`,
//! `values.go`, and `pkg/validation/errors/schema.go` for the words) over
//! the schema as apiextensions-apiserver v0.36.3 converts it
//! (`pkg/apiserver/validation/validation.go`, `ConvertJSONSchemaProps`:
//! an int-or-string is `[integer, string]`, unsupported formats dropped),
//! its errors made field errors as `kubeOpenAPIResultToFieldErrors` makes
//! them.
//!
//! The validator runs every check that applies to a value, its path built
//! as `a.b[0].c`; `anyOf` keeps the errors of the branch that matched
//! most; an error worded as one already found is dropped.

use serde_json::Value as Json;

use super::field::{ErrorType, FieldError};
use super::strfmt;
use crate::verify::gofmt::{go_json, go_quoted, go_v};

/// The kinds of kube-openapi's errors that are made other than `Invalid`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Code {
    Required,
    Enum,
    TooLong,
    MaxItems,
    TooManyProperties,
    InvalidType,
    Other,
}

/// One error: kube-openapi's `*errors.Validation` (`Some(name)`), or any
/// other error (`None`: an `anyOf` none of whose branches matched …).
#[derive(Debug)]
struct Error {
    code: Code,
    name: Option<String>,
    value: Option<Json>,
    limit: i64,
    values: Vec<Json>,
    message: String,
}

impl Error {
    fn of(code: Code, name: &str, value: Option<Json>, message: String) -> Error {
        Error {
            code,
            name: Some(name.to_owned()),
            value,
            limit: -1,
            values: Vec::new(),
            message,
        }
    }

    fn other(message: String) -> Error {
        Error {
            code: Code::Other,
            name: None,
            value: None,
            limit: -1,
            values: Vec::new(),
            message,
        }
    }

    fn limited(mut self, limit: i64) -> Error {
        self.limit = limit;
        self
    }
}

/// kube-openapi's `Result`: the errors, and how many checks ran (the
/// `anyOf` branch that ran most checks is the one reported).
#[derive(Debug, Default)]
struct Found {
    errors: Vec<Error>,
    count: usize,
}

impl Found {
    fn one(error: Error) -> Found {
        Found {
            errors: vec![error],
            count: 0,
        }
    }

    fn add(&mut self, error: Error) {
        if !self.errors.iter().any(|e| e.message == error.message) {
            self.errors.push(error);
        }
    }

    fn merge(&mut self, other: Found) {
        for error in other.errors {
            self.add(error);
        }
        self.count += other.count;
    }

    fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }
}

/// Deeper than any object the API server decodes.
const MAX_DEPTH: usize = 256;

/// The errors of `value` against `schema` (a CRD version's
/// `openAPIV3Schema` as written), as the API server reports them.
pub(in crate::verify) fn validate(schema: &Json, value: &Json) -> Vec<FieldError> {
    let found = check(schema, "", value, 0);
    found.errors.into_iter().map(field_error).collect()
}

/// `kubeOpenAPIResultToFieldErrors`.
fn field_error(error: Error) -> FieldError {
    let Some(name) = error.name else {
        return FieldError::new(
            ErrorType::Invalid,
            None,
            Some(&Json::String(String::new())),
            error.message,
        );
    };
    let field = (!name.is_empty() && name != ".")
        .then(|| name.strip_prefix('.').unwrap_or(&name).to_owned());
    let value = error.value.unwrap_or_else(|| Json::String(String::new()));
    match error.code {
        Code::Required => FieldError::new(ErrorType::Required, field, None, String::new()),
        Code::Enum => {
            let allowed: Vec<String> = error
                .values
                .iter()
                .map(|v| match v {
                    Json::String(s) => go_quoted(s),
                    other => go_quoted(&go_json(other)),
                })
                .collect();
            let detail = if allowed.is_empty() {
                String::new()
            } else {
                format!("supported values: {}", allowed.join(", "))
            };
            FieldError::new(ErrorType::NotSupported, field, Some(&value), detail)
        }
        Code::TooLong => {
            let detail = limit_detail(
                error.limit,
                "may not be more than",
                "byte",
                "value is too long",
            );
            FieldError::new(ErrorType::TooLong, field, None, detail)
        }
        Code::MaxItems | Code::TooManyProperties => {
            let detail = limit_detail(
                error.limit,
                "must have at most",
                "item",
                "has too many items",
            );
            FieldError::new(ErrorType::TooMany, field, Some(&value), detail)
        }
        Code::InvalidType => {
            FieldError::new(ErrorType::TypeInvalid, field, Some(&value), error.message)
        }
        Code::Other => FieldError::new(ErrorType::Invalid, field, Some(&value), error.message),
    }
}

/// The detail of `field.TooLong` and `field.TooMany`: `may not be more
/// than 1 byte`, `must have at most 3 items`; `unknown` where the limit is
/// not known (negative).
fn limit_detail(limit: i64, bound: &str, unit: &str, unknown: &str) -> String {
    match limit {
        1 => format!("{bound} 1 {unit}"),
        0.. => format!("{bound} {limit} {unit}s"),
        _ => unknown.to_owned(),
    }
}

/// The schema's types as the server converts them.
fn types(schema: &Json) -> Vec<&str> {
    if schema["x-kubernetes-int-or-string"] == true {
        return vec!["integer", "string"];
    }
    match schema["type"].as_str() {
        Some(t) if !t.is_empty() => vec![t],
        _ => Vec::new(),
    }
}

/// The schema's format, or `""` where the server drops it
/// (`StripUnsupportedFormatsPostProcessorForVersion`).
fn format<'s>(schema: &'s Json, types: &[&str]) -> &'s str {
    let format = schema["format"].as_str().unwrap_or("");
    let kept = match types {
        [] | ["string"] => strfmt::supported(format),
        ["integer"] => matches!(format, "int32" | "int64"),
        ["number"] => matches!(format, "float" | "double"),
        [_] => false,
        _ => strfmt::supported(format),
    };
    if kept { format } else { "" }
}

/// `SchemaValidator.Validate`.
fn check(schema: &Json, path: &str, data: &Json, depth: usize) -> Found {
    let mut result = Found::default();
    if depth > MAX_DEPTH || !schema.is_object() {
        return result;
    }
    let types = types(schema);
    let format = format(schema, &types);
    if data.is_null() {
        result.merge(type_check(schema, &types, format, path, data));
        result.merge(enum_check(schema, path, data));
        return result;
    }
    let ran = |result: &mut Found, found: Found| {
        result.merge(found);
        result.count += 1;
    };
    if !types.is_empty() || !format.is_empty() {
        ran(&mut result, type_check(schema, &types, format, path, data));
    }
    ran(&mut result, combined(schema, path, data, depth));
    if let Json::String(text) = data {
        ran(&mut result, string_check(schema, path, text));
        if !format.is_empty() {
            let mut found = Found::default();
            if !strfmt::valid(format, text) {
                found.add(invalid_type(path, format, data.clone()));
            }
            ran(&mut result, found);
        }
    }
    if let Json::Number(number) = data {
        ran(&mut result, number_check(schema, &types, path, number));
    }
    if let Json::Array(items) = data {
        ran(&mut result, slice_check(schema, path, items, depth));
    }
    ran(&mut result, enum_check(schema, path, data));
    if let Json::Object(fields) = data {
        ran(&mut result, object_check(schema, path, fields, depth));
    }
    result.count += 1;
    result
}

/// `errors.InvalidType` with a value: `x in body must be of type T: "v"`.
fn invalid_type(path: &str, type_name: &str, value: Json) -> Error {
    let shown = match &value {
        Json::String(s) => format!(": {}", go_quoted(s)),
        _ => String::new(),
    };
    Error::of(
        Code::InvalidType,
        path,
        Some(value),
        format!("{path} in body must be of type {type_name}{shown}"),
    )
}

/// The kind of a decoded JSON value, and its format, as kube-openapi
/// tells them (`schemaInfoForType`): an integer is an `int64`.
fn kind_of(data: &Json) -> (&'static str, &'static str) {
    match data {
        Json::Bool(_) => ("boolean", ""),
        Json::String(_) => ("string", ""),
        Json::Number(n) if n.is_f64() => ("number", "float64"),
        Json::Number(_) => ("integer", "int64"),
        Json::Array(_) => ("array", ""),
        Json::Object(_) => ("object", ""),
        Json::Null => ("", ""),
    }
}

/// swag's `IsFloat64AJSONInteger` (exact comparisons, as Go's).
#[allow(clippy::float_cmp)]
fn is_json_integer(f: f64) -> bool {
    const LIMIT: f64 = 9_007_199_254_740_991.0;
    if !f.is_finite() || !(-LIMIT..=LIMIT).contains(&f) {
        return false;
    }
    let whole = f.trunc();
    if f == whole {
        return true;
    }
    (f - whole).abs() / (f.abs() + whole.abs()) < 1e-9
}

/// `typeValidator.Validate`.
fn type_check(schema: &Json, types: &[&str], format: &str, path: &str, data: &Json) -> Found {
    let ok = Found {
        errors: Vec::new(),
        count: 1,
    };
    if data.is_null() {
        let nullable = schema["nullable"] == true;
        if !types.is_empty() && !types.contains(&"null") && !nullable {
            let error = invalid_type(path, &types.join(","), Json::from("null"));
            return Found::one(error);
        }
        return ok;
    }
    let (kind, kind_format) = kind_of(data);
    let float_int = kind == "number"
        && types.contains(&"integer")
        && data.as_f64().is_some_and(is_json_integer);
    let int_float = kind == "integer" && types.contains(&"number");
    let text_or_list = matches!(data, Json::String(_) | Json::Array(_));
    let of_type = types.contains(&kind) || float_int || int_float;
    if !(text_or_list || format.is_empty() || of_type || kind_format == format) {
        return Found::one(invalid_type(path, format, Json::from(kind_format)));
    }
    let numeric = types.contains(&"number") || types.contains(&"integer");
    if text_or_list && !numeric && !format.is_empty() {
        return ok;
    }
    if !of_type {
        return Found::one(invalid_type(path, &types.join(","), Json::from(kind)));
    }
    ok
}

/// `basicCommonValidator.Validate`: a value the `enum` holds, compared as
/// Go's reflection converts it to each allowed value's type.
fn enum_check(schema: &Json, path: &str, data: &Json) -> Found {
    let Some(allowed) = schema["enum"].as_array().filter(|a| !a.is_empty()) else {
        return Found::default();
    };
    if allowed.iter().any(|a| converts_equal(data, a)) {
        return Found::default();
    }
    let shown: Vec<String> = allowed.iter().map(go_v).collect();
    let mut error = Error::of(
        Code::Enum,
        path,
        Some(data.clone()),
        format!("{path} in body should be one of [{}]", shown.join(" ")),
    );
    error.values.clone_from(allowed);
    Found::one(error)
}

#[allow(clippy::float_cmp, clippy::cast_possible_truncation)]
fn converts_equal(data: &Json, allowed: &Json) -> bool {
    use Json::{Array, Bool, Number, Object, String};
    match (data, allowed) {
        (String(a), String(b)) => a == b,
        (Bool(a), Bool(b)) => a == b,
        (Number(a), Number(b)) => match (a.as_i64(), b.as_i64(), a.as_f64(), b.as_f64()) {
            (Some(a), Some(b), _, _) => a == b,
            // A float64 cut to an int64; an int64 made a float64.
            (None, Some(b), Some(a), _) => a.trunc() as i64 == b,
            (_, _, Some(a), Some(b)) => a == b,
            _ => false,
        },
        // Go converts an integer to a string as the character it codes.
        (Number(n), String(s)) if !n.is_f64() => {
            let c = n
                .as_i64()
                .and_then(|i| u32::try_from(i).ok())
                .and_then(char::from_u32)
                .unwrap_or('\u{fffd}');
            s.chars().eq(std::iter::once(c))
        }
        (Array(_), Array(_)) | (Object(_), Object(_)) => data == allowed,
        _ => false,
    }
}

/// `stringValidator.Validate`: the first of its errors.
fn string_check(schema: &Json, path: &str, text: &str) -> Found {
    let length = i64::try_from(text.chars().count()).unwrap_or(i64::MAX);
    let value = || Some(Json::from(text));
    if let Some(max) = schema["maxLength"].as_i64()
        && length > max
    {
        let message = format!("{path} in body should be at most {max} chars long");
        return Found::one(Error::of(Code::TooLong, path, value(), message).limited(max));
    }
    if let Some(min) = schema["minLength"].as_i64()
        && length < min
    {
        let message = format!("{path} in body should be at least {min} chars long");
        return Found::one(Error::of(Code::Other, path, value(), message));
    }
    if let Some(pattern) = schema["pattern"].as_str().filter(|p| !p.is_empty()) {
        let failed = match crate::verify::cel::go_match(pattern, text) {
            Ok(true) => None,
            Ok(false) => Some(pattern.to_owned()),
            Err(why) => Some(format!("{pattern}, but pattern is invalid: {why}")),
        };
        if let Some(shown) = failed {
            let message = format!("{path} in body should match '{shown}'");
            return Found::one(Error::of(Code::Other, path, value(), message));
        }
    }
    Found::default()
}

mod nested;
mod numbers;

use nested::{combined, object_check, slice_check};
use numbers::number_check;
