//! `x-kubernetes-list-type` lists as the API server checks them
//! (apiextensions-apiserver v0.36.3 `pkg/apiserver/schema/listtype/
//! validation.go`, called from the custom resource strategy's
//! `Validate`): a `set`'s items, and a `map`'s items' keys, each given
//! once; the second of each value is the `Duplicate value`. A `map`
//! list's item must be an object.

use std::collections::HashMap;

use serde_json::{Map, Value as Json};

use super::field::{ErrorType, FieldError, child, index, key};
use crate::verify::gofmt::go_json;

/// Deeper than any object the API server decodes.
const MAX_DEPTH: usize = 256;

/// The errors of `value`'s lists against `schema` (a CRD version's
/// `openAPIV3Schema`), the fields under `root` (`""` for none).
pub(in crate::verify) fn validate(schema: &Json, value: &Json, root: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Json::Object(fields) = value {
        object(root, schema, fields, &mut errors, 0);
    }
    errors
}

fn object(
    path: &str,
    schema: &Json,
    fields: &Map<String, Json>,
    out: &mut Vec<FieldError>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    if schema["additionalProperties"].is_object() {
        for (k, v) in fields {
            walk(
                &key(path, k),
                &schema["additionalProperties"],
                v,
                out,
                depth + 1,
            );
        }
    }
    if let Some(properties) = schema["properties"].as_object() {
        for (k, v) in fields {
            if let Some(sub) = properties.get(k) {
                walk(&child(path, k), sub, v, out, depth + 1);
            }
        }
    }
}

fn walk(path: &str, schema: &Json, value: &Json, out: &mut Vec<FieldError>, depth: usize) {
    match value {
        Json::Object(fields) => object(path, schema, fields, out, depth),
        Json::Array(items) => array(path, schema, items, out, depth),
        _ => {}
    }
}

fn array(path: &str, schema: &Json, items: &[Json], out: &mut Vec<FieldError>, depth: usize) {
    match schema["x-kubernetes-list-type"].as_str() {
        Some("set") => {
            for (n, first) in repeated(items.iter().map(Some)) {
                let field = Some(index(path, n));
                let error =
                    FieldError::new(ErrorType::Duplicate, field, Some(&items[n]), String::new());
                out.push(noted(error, first));
            }
        }
        Some("map") => map_list(path, schema, items, out),
        _ => {}
    }
    if schema["items"].is_object() {
        for (n, item) in items.iter().enumerate() {
            walk(&index(path, n), &schema["items"], item, out, depth + 1);
        }
    }
}

/// `validateListSet`: the index of each value's second occurrence (a third
/// is not reported again), with its first's. Values compare as Go compares them: scalars of
/// one type by value (an `int64` is not a `float64`), objects and lists
/// by their JSON; `None` is a value no other equals but another `None`.
fn repeated<'v>(values: impl Iterator<Item = Option<&'v Json>>) -> Vec<(usize, usize)> {
    let mut seen: HashMap<String, (usize, usize)> = HashMap::new();
    let mut out = Vec::new();
    for (n, value) in values.enumerate() {
        let identity = match value {
            None => "unspecified".to_owned(),
            Some(Json::Number(x)) if x.is_f64() => {
                format!("f{}", go_json(&Json::Number(x.clone())))
            }
            Some(Json::Number(x)) => format!("i{x}"),
            Some(Json::String(s)) => format!("s{s}"),
            Some(Json::Bool(b)) => format!("b{b}"),
            Some(Json::Null) => "null".to_owned(),
            Some(compound) => format!("c{}", go_json(compound)),
        };
        let (first, times) = seen.entry(identity).or_insert((n, 0));
        *times += 1;
        if *times == 2 {
            out.push((n, *first));
        }
    }
    out
}

/// `validateListMap`.
fn map_list<'v>(path: &str, schema: &'v Json, items: &'v [Json], out: &mut Vec<FieldError>) {
    if let Some(n) = items.iter().position(|x| !x.is_null() && !x.is_object()) {
        let detail = "must be an object for an array of list-type map".to_owned();
        out.push(FieldError::new(
            ErrorType::Invalid,
            Some(index(path, n)),
            Some(&items[n]),
            detail,
        ));
        return;
    }
    if items.len() <= 1 {
        return;
    }
    let keys: Vec<&str> = (schema["x-kubernetes-list-map-keys"].as_array())
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    // An item that leaves a key out has the key's default: the server
    // defaults an object before it validates it (an object checked here
    // is defaulted already but for the operators' kinds, whose skeleton
    // keeps just the keys' defaults).
    let key = |item: &'v Json, k: &str| {
        item.get(k)
            .or_else(|| schema["items"]["properties"][k].get("default"))
    };
    let duplicate = |(n, first): (usize, usize), shown: Json| {
        let error = FieldError::new(
            ErrorType::Duplicate,
            Some(index(path, n)),
            Some(&shown),
            String::new(),
        );
        noted(error, first)
    };
    if let [only] = keys.as_slice() {
        let values: Vec<Option<&Json>> = items.iter().map(|x| key(x, only)).collect();
        for (n, first) in repeated(values.iter().copied()) {
            let shown = match values[n] {
                Some(v) => Json::Object(Map::from_iter([((*only).to_owned(), v.clone())])),
                None => Json::Object(Map::new()),
            };
            out.push(duplicate((n, first), shown));
        }
        return;
    }
    let values: Vec<Json> = items
        .iter()
        .map(|x| {
            Json::Object(
                keys.iter()
                    .filter_map(|k| key(x, k).map(|v| ((*k).to_owned(), v.clone())))
                    .collect(),
            )
        })
        .collect();
    for (n, first) in repeated(values.iter().map(Some)) {
        out.push(duplicate((n, first), values[n].clone()));
    }
}

/// A duplicate with where its value was first.
fn noted(mut error: FieldError, first: usize) -> FieldError {
    error.note = Some(format!("item {first} has it too"));
    error
}
