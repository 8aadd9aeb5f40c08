//! Where a rule's values are in an object, and those values as CEL's,
//! typed by their schema as Kubernetes types them (k8s.io/apiserver
//! v0.36.3 `pkg/cel/common/valuesunstructured.go`, `UnstructuredToVal`):
//! a `date-time` string is a timestamp, `byte` bytes, an int-or-string an
//! int or a string, a `number` always a double, an object only its
//! declared properties (an embedded resource's `apiVersion`, `kind` and
//! `metadata.name`/`generateName` too), a list a set or a map list as its
//! `x-kubernetes-list-type` says; a value that does not fit its schema is
//! the server's error, raised where a rule reads it.

use std::fmt::Write as _;
use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::Value as Json;

use super::time::{Duration, Timestamp};
use super::value::{Key, List, ListKind, Map, Value};
use crate::verify::gofmt::go_type;

/// Where in an object a schema node's values are: keys, and `Each` for
/// every item of a list or value of a map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Step {
    Key(String),
    Each,
}

/// Calls `found` with every value at `path` below `value` and its pointer.
pub(super) fn each_value<'a>(
    value: &'a Json,
    path: &[Step],
    at: &mut String,
    found: &mut dyn FnMut(&str, &'a Json),
) {
    let Some((step, rest)) = path.split_first() else {
        found(at, value);
        return;
    };
    let len = at.len();
    match (step, value) {
        (Step::Key(key), Json::Object(fields)) => {
            if let Some(child) = fields.get(key) {
                at.push('/');
                at.push_str(&crate::tree::pointer_segment(key));
                each_value(child, rest, at, found);
            }
        }
        (Step::Each, Json::Array(items)) => {
            for (n, item) in items.iter().enumerate() {
                let _ = write!(at, "/{n}");
                each_value(item, rest, at, found);
                at.truncate(len);
            }
        }
        (Step::Each, Json::Object(fields)) => {
            for (key, child) in fields {
                at.push('/');
                at.push_str(&crate::tree::pointer_segment(key));
                each_value(child, rest, at, found);
                at.truncate(len);
            }
        }
        _ => {}
    }
    at.truncate(len);
}

/// A rule's `fieldPath` (`.spec.replicas`, `.labels['app/name']`,
/// `.items[0]`) as a JSON pointer.
pub(super) fn field_pointer(path: &str) -> Result<String, String> {
    let wrong =
        || format!("`fieldPath` `{path}` is not a path of fields (`.name`, `['key']`, `[0]`)");
    let mut pointer = String::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            if end == 0 {
                return Err(wrong());
            }
            pointer.push('/');
            pointer.push_str(&crate::tree::pointer_segment(&after[..end]));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix("['") {
            let end = after.find("']").ok_or_else(wrong)?;
            pointer.push('/');
            pointer.push_str(&crate::tree::pointer_segment(&after[..end]));
            rest = &after[end + 2..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']').ok_or_else(wrong)?;
            let index: usize = after[..end].parse().map_err(|_| wrong())?;
            let _ = write!(pointer, "/{index}");
            rest = &after[end + 1..];
        } else {
            return Err(wrong());
        }
    }
    Ok(pointer)
}

/// How deep a value is converted: deeper is the server's limit on
/// objects anyway.
const MAX_DEPTH: usize = 256;

fn invalid(message: impl Into<Arc<str>>) -> Value {
    Value::Error(message.into())
}

/// A JSON value as CEL's, typed by `schema`; `root` when it is a
/// resource's root (its `apiVersion`, `kind`, `metadata` readable).
pub(super) fn typed(value: &Json, schema: &Json, root: bool) -> Value {
    convert(value, schema, root, 0)
}

fn convert(value: &Json, schema: &Json, root: bool, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return invalid("invalid data, nested too deeply");
    }
    if value.is_null() {
        return if schema["nullable"].as_bool() == Some(true) {
            Value::Null
        } else {
            invalid("invalid data, got null for schema with nullable=false")
        };
    }
    if schema["x-kubernetes-int-or-string"].as_bool() == Some(true) {
        return match value {
            Json::String(s) => Value::string(s.as_str()),
            Json::Number(n) if n.is_i64() => Value::Int(n.as_i64().unwrap_or_default()),
            _ => invalid(
                "invalid data, expected XIntOrString value to be either a string or integer",
            ),
        };
    }
    match schema["type"].as_str() {
        Some("object") => object(value, schema, root, depth),
        Some("array") => array(value, schema, depth),
        Some("string") => {
            let Json::String(s) = value else {
                return invalid(format!(
                    "invalid data, expected string, got {}",
                    go_type(value)
                ));
            };
            match schema["format"].as_str() {
                Some("duration") => Duration::parse_openapi(s).map_or_else(
                    |error| invalid(format!("Invalid duration {s}: {error}")),
                    Value::Duration,
                ),
                Some("date") => Timestamp::parse_date(s).map_or_else(
                    || invalid(format!("Invalid date formatted string {s}")),
                    Value::Timestamp,
                ),
                Some("date-time") => Timestamp::parse(s).map_or_else(
                    || invalid(format!("Invalid date-time formatted string {s}")),
                    Value::Timestamp,
                ),
                Some("byte") => crate::syntax::base64::is_standard(s)
                    .then(|| crate::syntax::base64::decode(s))
                    .flatten()
                    .map_or_else(
                        || invalid(format!("Invalid byte formatted string {s}")),
                        |b| Value::Bytes(b.into()),
                    ),
                _ => Value::string(s.as_str()),
            }
        }
        Some("number") => match value.as_f64() {
            Some(d) if value.is_number() => Value::Double(d),
            _ => invalid(format!(
                "invalid data, expected float, got {}",
                go_type(value)
            )),
        },
        Some("integer") => match value.as_i64() {
            Some(n) => Value::Int(n),
            None => invalid(format!(
                "invalid data, expected int, got {}",
                go_type(value)
            )),
        },
        Some("boolean") => match value {
            Json::Bool(b) => Value::Bool(*b),
            _ => invalid(format!(
                "invalid data, expected bool, got {}",
                go_type(value)
            )),
        },
        _ => untyped(value, depth),
    }
}

fn object(value: &Json, schema: &Json, root: bool, depth: usize) -> Value {
    let Json::Object(fields) = value else {
        return invalid("invalid data, expected a map for the provided schema with type=object");
    };
    let embedded = root || schema["x-kubernetes-embedded-resource"].as_bool() == Some(true);
    let properties = schema["properties"].as_object();
    let open = schema["x-kubernetes-preserve-unknown-fields"].as_bool() == Some(true);
    if embedded || properties.is_some() {
        let mut map = IndexMap::new();
        for (key, child) in fields {
            let child_schema = match properties.and_then(|p| p.get(key)) {
                Some(s) => s,
                None if embedded && matches!(key.as_str(), "apiVersion" | "kind") => &STRING,
                None if embedded && key == "metadata" => &METADATA,
                None if open => {
                    map.insert(Key::String(key.as_str().into()), untyped(child, depth + 1));
                    continue;
                }
                None => continue,
            };
            // A property set to null is as good as absent to a rule:
            // `has()` is false and a selection `no such key`, as the
            // server says (nullable or not).
            if child.is_null() {
                continue;
            }
            map.insert(
                Key::String(key.as_str().into()),
                convert(child, child_schema, false, depth + 1),
            );
        }
        return Value::Map(Map {
            entries: Arc::new(map),
            object: Some("object".into()),
        });
    }
    let items = &schema["additionalProperties"];
    let mut map = IndexMap::new();
    for (key, child) in fields {
        let child = if items.is_object() {
            convert(child, items, false, depth + 1)
        } else {
            untyped(child, depth + 1)
        };
        map.insert(Key::String(key.as_str().into()), child);
    }
    Value::Map(Map::plain(map))
}

fn array(value: &Json, schema: &Json, depth: usize) -> Value {
    let Json::Array(items) = value else {
        return invalid("invalid data, expected an array for the provided schema with type=array");
    };
    let item_schema = &schema["items"];
    let kind = match schema["x-kubernetes-list-type"].as_str() {
        Some("set") => ListKind::Set,
        Some("map") => ListKind::Map(
            schema["x-kubernetes-list-map-keys"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str().map(str::to_owned))
                .collect(),
        ),
        _ => ListKind::Plain,
    };
    Value::List(List {
        items: Arc::new(
            items
                .iter()
                .map(|item| convert(item, item_schema, false, depth + 1))
                .collect(),
        ),
        kind,
        zero: zero_of(item_schema).map(Arc::new),
    })
}

/// The zero of the type a schema gives its values, where `sum()` has one.
fn zero_of(schema: &Json) -> Option<Value> {
    match (schema["type"].as_str(), schema["format"].as_str()) {
        (Some("integer"), _) => Some(Value::Int(0)),
        (Some("number"), _) => Some(Value::Double(0.0)),
        (Some("string"), Some("duration")) => Some(Value::Duration(Duration(0))),
        _ => None,
    }
}

/// A value no schema types (`x-kubernetes-preserve-unknown-fields`): as
/// JSON decodes it.
fn untyped(value: &Json, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return invalid("invalid data, nested too deeply");
    }
    match value {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Double(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::string(s.as_str()),
        Json::Array(items) => Value::list(items.iter().map(|i| untyped(i, depth + 1)).collect()),
        Json::Object(fields) => Value::Map(Map::plain(
            fields
                .iter()
                .map(|(k, v)| (Key::String(k.as_str().into()), untyped(v, depth + 1)))
                .collect(),
        )),
    }
}

static STRING: std::sync::LazyLock<Json> =
    std::sync::LazyLock::new(|| serde_json::json!({"type": "string"}));

/// What of an embedded resource's metadata a rule reads
/// (`model.WithTypeAndObjectMeta`).
static METADATA: std::sync::LazyLock<Json> = std::sync::LazyLock::new(|| {
    serde_json::json!({
        "type": "object",
        "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}}
    })
});

/// What of a schema types and defaults values, without what only
/// documents or validates them (`description`, `example`,
/// `x-kubernetes-validations`): the copy kept for an object's checks
/// is small whatever the CRD holds besides.
pub(super) fn lean(schema: &Json) -> Json {
    lean_node(schema, 0)
}

fn lean_node(schema: &Json, depth: usize) -> Json {
    let Json::Object(fields) = schema else {
        return schema.clone();
    };
    if depth > MAX_DEPTH {
        return Json::Object(serde_json::Map::new());
    }
    let mut out = serde_json::Map::new();
    for (key, value) in fields {
        let value = match key.as_str() {
            "description" | "example" | "examples" | "x-kubernetes-validations" => continue,
            "properties" | "patternProperties" | "definitions" => match value {
                Json::Object(children) => Json::Object(
                    children
                        .iter()
                        .map(|(name, child)| (name.clone(), lean_node(child, depth + 1)))
                        .collect(),
                ),
                other => other.clone(),
            },
            "items" | "additionalProperties" | "not" => lean_node(value, depth + 1),
            "allOf" | "anyOf" | "oneOf" => match value {
                Json::Array(all) => {
                    Json::Array(all.iter().map(|c| lean_node(c, depth + 1)).collect())
                }
                other => other.clone(),
            },
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    Json::Object(out)
}
