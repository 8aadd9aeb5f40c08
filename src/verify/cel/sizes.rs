//! How large the API server assumes a schema node's values may be when it
//! estimates a rule's cost at CRD creation (k8s.io/apiserver v0.36.3
//! `pkg/cel/common/schemas.go`, `SchemaDeclType`; `pkg/cel/types.go`,
//! `limits.go`): a string's `maxLength` (times 4, bytes per character),
//! a list's `maxItems`, a map's `maxProperties`; where none is written,
//! as many as fit in one request of 3 MiB given the smallest value the
//! schema allows (`MinSerializedSize`). And how many times a rule may run
//! for one object (`maxCardinality`, apiextensions-apiserver v0.36.3
//! `pkg/apiserver/schema/cel/compilation.go`).

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::Value as Json;

use super::types::{declares_object_meta, embedded, escape};

/// The largest request the API server takes (`MaxRequestSizeBytes`).
const MAX_REQUEST: i64 = 3 * 1024 * 1024;

/// A string's smallest JSON (`""`), a bool's, a number's, a duration's,
/// a date's and a date-time's (`limits.go`).
const MIN_STRING: i64 = 2;
const MIN_BOOL: i64 = 4;
const MIN_NUMBER: i64 = 1;
const MIN_DURATION: i64 = 3;
const DATE: i64 = 12;
const MIN_DATE_TIME: i64 = 21;
/// The longest duration and date-time strings.
const MAX_DURATION: i64 = 32;
const MAX_DATE_TIME: i64 = 32;

/// A schema node as `SchemaDeclType` declares it.
#[derive(Clone, Copy)]
enum Decl<'a> {
    /// A value with no parts: its `MaxElements` (a string's length, 0
    /// for a number) and `MinSerializedSize`.
    Simple {
        max: i64,
        min: i64,
    },
    List {
        items: &'a Json,
        root: bool,
        max: i64,
    },
    Map {
        values: &'a Json,
        root: bool,
        max: i64,
    },
    Object {
        schema: &'a Json,
        root: bool,
    },
}

/// One schema's sizes, each node's smallest value computed once.
pub(super) struct Sizes<'a> {
    schema: &'a Json,
    root: bool,
    smallest: RefCell<HashMap<(usize, bool), i64>>,
    /// Each path's estimate once made: a node's rules read the same few
    /// paths, and a CRD may hold a hundred thousand rules.
    estimates: RefCell<HashMap<Vec<String>, Option<u64>>>,
}

fn zero_if_negative(v: i64) -> i64 {
    v.max(0)
}

impl<'a> Sizes<'a> {
    /// The sizes of `schema`'s values; `root` when it is a resource's.
    pub(super) fn new(schema: &'a Json, root: bool) -> Sizes<'a> {
        Sizes {
            schema,
            root,
            smallest: RefCell::new(HashMap::new()),
            estimates: RefCell::new(HashMap::new()),
        }
    }

    /// The most times a rule on this node may run for one object: as many
    /// of its smallest values as fit in a request, each with a comma.
    pub(super) fn max_cardinality(&self) -> u64 {
        let min = self
            .decl(self.schema, self.root, 0)
            .map_or(0, |d| self.min(d, 0));
        (MAX_REQUEST / (min + 1)) as u64
    }

    /// The size the server estimates for the value at `path` (a variable,
    /// then fields, `@items`, `@values` or `@keys`): from 0 to its
    /// `MaxElements`; `None` where the path leads nowhere the schema
    /// declares (`sizeEstimator.EstimateSize`).
    pub(super) fn estimate(&self, path: &[String]) -> Option<u64> {
        if let Some(known) = self.estimates.borrow().get(path) {
            return *known;
        }
        let estimate = self.estimate_afresh(path);
        (self.estimates.borrow_mut()).insert(path.to_vec(), estimate);
        estimate
    }

    fn estimate_afresh(&self, path: &[String]) -> Option<u64> {
        if path.is_empty() {
            return None;
        }
        let mut at = self.decl(self.schema, self.root, 0)?;
        for (depth, step) in path[1..].iter().enumerate() {
            at = match (step.as_str(), at) {
                ("@items" | "@values", Decl::List { items, root, .. }) => {
                    self.decl(items, root, depth)?
                }
                ("@items" | "@values", Decl::Map { values, root, .. }) => {
                    self.decl(values, root, depth)?
                }
                // A map's keys are strings of no `MaxElements`.
                ("@keys", Decl::Map { .. }) => Decl::Simple {
                    max: 0,
                    min: MIN_STRING,
                },
                (field, Decl::Object { schema, root }) => {
                    let (child, child_root) = property(schema, root, field)?;
                    self.decl(child, child_root, depth)?
                }
                _ => return None,
            };
        }
        Some(match at {
            Decl::Simple { max, .. } | Decl::List { max, .. } | Decl::Map { max, .. } => max as u64,
            Decl::Object { .. } => 0,
        })
    }

    /// What `SchemaDeclType` makes of `schema`; `None` where it declares
    /// nothing (no `type`, an array without `items`).
    fn decl(&self, schema: &'a Json, root: bool, depth: usize) -> Option<Decl<'a>> {
        if depth > super::MAX_DEPTH {
            return None;
        }
        let max_length = schema["maxLength"].as_i64();
        if schema["x-kubernetes-int-or-string"].as_bool() == Some(true) {
            let max = max_length.map_or(MAX_REQUEST - 2, |n| zero_if_negative(n) * 4);
            return Some(Decl::Simple { max, min: 1 });
        }
        let kind = schema["type"].as_str().or(root.then_some("object"));
        Some(match kind? {
            "array" => {
                let items = &schema["items"];
                if !items.is_object() {
                    return None;
                }
                let root = embedded(items);
                let item = self.decl(items, root, depth + 1)?;
                let max = match schema["maxItems"].as_i64() {
                    Some(n) => zero_if_negative(n),
                    None => (MAX_REQUEST - 2) / (self.min(item, depth + 1) + 1),
                };
                Decl::List { items, root, max }
            }
            "object" => {
                let values = &schema["additionalProperties"];
                if values.is_object() {
                    let root = embedded(values);
                    let value = self.decl(values, root, depth + 1)?;
                    let max = match schema["maxProperties"].as_i64() {
                        Some(n) => zero_if_negative(n),
                        None => (MAX_REQUEST - 2) / (self.min(value, depth + 1) + 6),
                    };
                    Decl::Map { values, root, max }
                } else {
                    Decl::Object { schema, root }
                }
            }
            "string" => {
                let (min, longest) = match schema["format"].as_str() {
                    Some("duration") => (MIN_DURATION, Some(MAX_DURATION)),
                    Some("date") => (DATE, Some(DATE)),
                    Some("date-time") => (MIN_DATE_TIME, Some(MAX_DATE_TIME)),
                    _ => (MIN_STRING, None),
                };
                let max = match (longest, schema["format"].as_str(), max_length) {
                    // A duration's or a time's `maxLength` is not read.
                    (Some(longest), _, _) => longest,
                    (None, Some("byte"), Some(n)) => zero_if_negative(n),
                    (None, _, Some(n)) => zero_if_negative(n) * 4,
                    (None, _, None) => match schema["enum"].as_array() {
                        Some(values) if !values.is_empty() => values
                            .iter()
                            .filter_map(Json::as_str)
                            .map(|s| s.len() as i64)
                            .max()
                            .unwrap_or(0),
                        _ => MAX_REQUEST - 2,
                    },
                };
                Decl::Simple { max, min }
            }
            "boolean" => Decl::Simple {
                max: 0,
                min: MIN_BOOL,
            },
            "number" | "integer" => Decl::Simple {
                max: 0,
                min: MIN_NUMBER,
            },
            _ => return None,
        })
    }

    /// The smallest JSON a value of `decl` can be (`MinSerializedSize`):
    /// an object's `{}` and each required property without a default.
    fn min(&self, decl: Decl<'a>, depth: usize) -> i64 {
        let (schema, root) = match decl {
            Decl::Simple { min, .. } => return min,
            Decl::List { .. } | Decl::Map { .. } => return 2,
            Decl::Object { schema, root } => (schema, root),
        };
        let key = (std::ptr::from_ref(schema) as usize, root);
        if let Some(known) = self.smallest.borrow().get(&key) {
            return *known;
        }
        let required: Vec<&str> = (schema["required"].as_array().into_iter().flatten())
            .filter_map(Json::as_str)
            .collect();
        let mut size = 2;
        for (name, child, child_root) in properties(schema, root) {
            if !required.contains(&name) || !child.get("default").is_none_or(Json::is_null) {
                continue;
            }
            if let Some(d) = self.decl(child, child_root, depth + 1) {
                size += name.len() as i64 + self.min(d, depth + 1) + 4;
            }
        }
        self.smallest.borrow_mut().insert(key, size);
        size
    }
}

/// An object's properties, each with its schema and whether it is a
/// resource's root; a resource's `apiVersion`, `kind` and `metadata`
/// (`name`, `generateName`) its own unless the schema declares them all
/// (`WithTypeAndObjectMeta`).
fn properties(schema: &Json, root: bool) -> Vec<(&str, &Json, bool)> {
    static STRING: std::sync::LazyLock<Json> =
        std::sync::LazyLock::new(|| serde_json::json!({"type": "string"}));
    static META: std::sync::LazyLock<Json> = std::sync::LazyLock::new(|| {
        serde_json::json!({"type": "object", "properties": {
            "name": {"type": "string"}, "generateName": {"type": "string"}}})
    });
    let replaced = root && !declares_object_meta(schema);
    let mut out: Vec<(&str, &Json, bool)> = (schema["properties"].as_object().into_iter())
        .flatten()
        .filter(|(name, _)| {
            !replaced || !matches!(name.as_str(), "kind" | "apiVersion" | "metadata")
        })
        .map(|(name, child)| (name.as_str(), child, embedded(child)))
        .collect();
    if replaced {
        out.push(("kind", &STRING, false));
        out.push(("apiVersion", &STRING, false));
        out.push(("metadata", &META, false));
    }
    out
}

/// The property whose escaped name is `field`, as the server's
/// `DeclType.Fields` holds it.
fn property<'a>(schema: &'a Json, root: bool, field: &str) -> Option<(&'a Json, bool)> {
    properties(schema, root)
        .into_iter()
        .find(|(name, _, _)| escape(name).as_deref() == Some(field))
        .map(|(_, child, child_root)| (child, child_root))
}
