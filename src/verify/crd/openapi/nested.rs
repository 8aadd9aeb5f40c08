//! kube-openapi's validators of what holds other values: `allOf`,
//! `anyOf`, `oneOf` and `not` (`schema_props.go`), a list's items and
//! size (`slice_validator.go`), an object's fields, size and required
//! fields (`object_validator.go`).

use serde_json::{Map, Value as Json};

use super::{Code, Error, Found, check};
use crate::verify::gofmt::go_quoted;

/// `schemaPropsValidator.Validate`.
pub(super) fn combined(schema: &Json, path: &str, data: &Json, depth: usize) -> Found {
    let branches = |key: &str| schema[key].as_array().filter(|b| !b.is_empty());
    let quoted = go_quoted(path);
    let mut main = Found::default();
    if let Some(any) = branches("anyOf") {
        let mut best: Option<Found> = None;
        let mut success: Option<Found> = None;
        for branch in any {
            let found = check(branch, path, data, depth + 1);
            if found.is_valid() {
                best = None;
                success = Some(found);
                break;
            }
            if best.as_ref().is_none_or(|b| found.count > b.count) {
                best = Some(found);
            }
        }
        if success.is_none() {
            main.add(Error::other(format!(
                "{quoted} must validate at least one schema (anyOf)"
            )));
        }
        if let Some(found) = best.or(success) {
            main.merge(found);
        }
    }
    if let Some(one) = branches("oneOf") {
        let mut best: Option<Found> = None;
        let mut success: Option<Found> = None;
        let mut validated = 0;
        for branch in one {
            let found = check(branch, path, data, depth + 1);
            if found.is_valid() {
                validated += 1;
                best = None;
                success.get_or_insert(found);
                continue;
            }
            if validated == 0 && best.as_ref().is_none_or(|b| found.count > b.count) {
                best = Some(found);
            }
        }
        if validated != 1 {
            let more = if validated == 0 {
                "Found none valid".to_owned()
            } else {
                format!("Found {validated} valid alternatives")
            };
            main.add(Error::other(format!(
                "{quoted} must validate one and only one schema (oneOf). {more}"
            )));
            if let Some(found) = best {
                main.merge(found);
            }
        } else if let Some(found) = success {
            main.merge(found);
        }
    }
    if let Some(all) = branches("allOf") {
        let mut validated = 0;
        for branch in all {
            let found = check(branch, path, data, depth + 1);
            if found.is_valid() {
                validated += 1;
            }
            main.merge(found);
        }
        if validated != all.len() {
            let none = if validated == 0 {
                ". None validated"
            } else {
                ""
            };
            main.add(Error::other(format!(
                "{quoted} must validate all the schemas (allOf){none}"
            )));
        }
    }
    if schema["not"].is_object() && check(&schema["not"], path, data, depth + 1).is_valid() {
        main.add(Error::other(format!(
            "{quoted} must not validate the schema (not)"
        )));
    }
    main.count += 1;
    main
}

/// `schemaSliceValidator.Validate`.
pub(super) fn slice_check(schema: &Json, path: &str, items: &[Json], depth: usize) -> Found {
    let mut result = Found::default();
    if schema["items"].is_object() {
        for (n, item) in items.iter().enumerate() {
            result.merge(check(
                &schema["items"],
                &format!("{path}[{n}]"),
                item,
                depth + 1,
            ));
        }
    }
    count_check(schema, path, items.len(), Counted::ITEMS, &mut result);
    if schema["uniqueItems"] == true
        && items
            .iter()
            .enumerate()
            .any(|(n, item)| items[..n].contains(item))
    {
        let message = format!("{path} in body shouldn't contain duplicates");
        result.add(Error::of(Code::Other, path, None, message));
    }
    result.count += 1;
    result
}

/// What a count limit counts: its keywords, the noun its messages use and
/// the code the server gives one too many.
#[derive(Clone, Copy)]
struct Counted {
    keywords: [&'static str; 2],
    noun: &'static str,
    too_many: Code,
}

impl Counted {
    const ITEMS: Counted = Counted {
        keywords: ["minItems", "maxItems"],
        noun: "items",
        too_many: Code::MaxItems,
    };
    const PROPERTIES: Counted = Counted {
        keywords: ["minProperties", "maxProperties"],
        noun: "properties",
        too_many: Code::TooManyProperties,
    };
}

/// `minItems`/`maxItems` (`schemaSliceValidator`) and
/// `minProperties`/`maxProperties` (`objectValidator`), worded alike.
fn count_check(schema: &Json, path: &str, len: usize, counted: Counted, result: &mut Found) {
    let size = i64::try_from(len).unwrap_or(i64::MAX);
    let [min, max] = counted.keywords.map(|keyword| schema[keyword].as_i64());
    let noun = counted.noun;
    if let Some(min) = min
        && size < min
    {
        let message = format!("{path} in body should have at least {min} {noun}");
        result.add(Error::of(
            Code::Other,
            path,
            Some(Json::from(size)),
            message,
        ));
    }
    if let Some(max) = max
        && size > max
    {
        let message = format!("{path} in body should have at most {max} {noun}");
        let error = Error::of(counted.too_many, path, Some(Json::from(size)), message);
        result.add(error.limited(max));
    }
}

/// `objectValidator.Validate`.
pub(super) fn object_check(
    schema: &Json,
    path: &str,
    fields: &Map<String, Json>,
    depth: usize,
) -> Found {
    let mut result = Found::default();
    count_check(schema, path, fields.len(), Counted::PROPERTIES, &mut result);
    let properties = schema["properties"].as_object();
    let named = |key: &str| properties.is_some_and(|p| p.contains_key(key));
    match &schema["additionalProperties"] {
        Json::Bool(false) => {
            for key in fields.keys().filter(|k| !named(k)) {
                let message = format!("{path}.{key} in body is a forbidden property");
                result.add(Error::of(
                    Code::Other,
                    path,
                    Some(Json::from(key.as_str())),
                    message,
                ));
            }
        }
        more @ Json::Object(_) => {
            for (key, value) in fields.iter().filter(|(k, _)| !named(k)) {
                result.merge(check(more, &format!("{path}.{key}"), value, depth + 1));
            }
        }
        _ => {}
    }
    for (name, property) in properties.into_iter().flatten() {
        if let Some(value) = fields.get(name) {
            let at = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            result.merge(check(property, &at, value, depth + 1));
        }
    }
    for key in schema["required"].as_array().into_iter().flatten() {
        let Some(key) = key.as_str() else { continue };
        if !fields.contains_key(key) {
            let at = format!("{path}.{key}");
            let message = format!("{at} in body is required");
            result.add(Error::of(Code::Required, &at, None, message));
        }
    }
    result
}
