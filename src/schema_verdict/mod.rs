//! A quick answer to "does this instance satisfy this JSON Schema?" for the
//! common case, where it does.
//!
//! Compiling a schema with the `jsonschema` crate costs far more than checking
//! one instance: about 10 M instructions for the spec's schema and 70 M for
//! the strict Kubernetes ones, against well under 1 M to walk a spec or a
//! PyTorchJob. A valid instance needs none of the error machinery, so the
//! schema pass and `--verify` ask here first; this walks the schema as JSON,
//! visiting only the parts the instance reaches. Only when the answer is not
//! [`Verdict::Valid`] do they compile the schema and report its errors exactly
//! as before.
//!
//! The answer is conservative. `Valid` and `Invalid` are given only where
//! every keyword met is one this module evaluates exactly as `jsonschema`
//! does; anything else (a keyword it does not know, a whole float where an
//! integer is wanted, a pattern over text that is not printable ASCII, a
//! format `jsonschema` would assert) makes the answer `Unknown`, which costs
//! time but never changes what a user sees.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde_json::{Number, Value as Json};

mod json;

pub use json::SchemaJson;

/// What a walk of the schema found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Valid,
    Invalid,
    /// The walk met something it does not evaluate exactly: ask `jsonschema`.
    Unknown,
}

/// The draft a schema is compiled with; it decides how `$ref` treats its
/// siblings and whether `format` is an assertion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Draft {
    /// Draft 7, as the strict Kubernetes schemas are compiled: `$ref` replaces
    /// its siblings, and `jsonschema` asserts the formats it knows.
    Draft7,
    /// Draft 2020-12, as the spec's schema is: `format` is an annotation.
    Draft2020,
}

/// The validator of `root`, compiled into `cell` on first use, for the
/// errors of an instance whose verdict was not [`Verdict::Valid`]. Every
/// stage that reports schema errors gets its validator here, and each call
/// is counted ([`fallbacks`]): a valid spec must make none.
pub fn validator(
    cell: &'static OnceLock<jsonschema::Validator>,
    root: &Json,
    draft: Draft,
) -> &'static jsonschema::Validator {
    FALLBACKS.with(|count| count.set(count.get() + 1));
    cell.get_or_init(|| {
        match draft {
            Draft::Draft7 => jsonschema::draft7::new(root),
            Draft::Draft2020 => jsonschema::draft202012::new(root),
        }
        .expect("bundled schemas compile")
    })
}

thread_local! {
    static FALLBACKS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many times this thread has needed a compiled validator.
pub fn fallbacks() -> usize {
    FALLBACKS.with(std::cell::Cell::get)
}

/// An embedded schema as the quick check reads it, parsed on first use.
pub fn embedded(
    cell: &'static OnceLock<SchemaJson<'static>>,
    text: &'static str,
) -> &'static SchemaJson<'static> {
    cell.get_or_init(|| SchemaJson::parse(text).expect("embedded schemas are JSON"))
}

/// An embedded schema as `jsonschema` and the error reports read it, parsed on first use.
pub fn embedded_json(cell: &'static OnceLock<Json>, text: &str) -> &'static Json {
    cell.get_or_init(|| serde_json::from_str(text).expect("embedded schemas are JSON"))
}

/// Whether `instance` satisfies the schema `root`, compiled as `draft`.
pub fn verdict(root: &SchemaJson<'_>, instance: &Json, draft: Draft) -> Verdict {
    let defs = root.get("$defs");
    Walk { root, defs, draft }.check(root, instance, 0)
}

/// Deeper than this (through `$ref`s or nesting), the walk gives up.
const MAX_DEPTH: usize = 128;

/// Formats `jsonschema` checks when it asserts formats; any other is ignored.
const ASSERTED_FORMATS: &[&str] = &[
    "date",
    "date-time",
    "duration",
    "email",
    "hostname",
    "idn-email",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "iri",
    "iri-reference",
    "json-pointer",
    "regex",
    "relative-json-pointer",
    "time",
    "uri",
    "uri-reference",
    "uri-template",
    "uuid",
];

/// Keywords that never make an instance invalid.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$comment",
    "$defs",
    "definitions",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];

struct Walk<'s, 'a> {
    root: &'s SchemaJson<'a>,
    /// The root's `$defs`, where nearly every `$ref` points.
    defs: Option<&'s SchemaJson<'a>>,
    draft: Draft,
}

type Members<'s, 'a> = &'s [(std::borrow::Cow<'a, str>, SchemaJson<'a>)];

impl<'s, 'a> Walk<'s, 'a> {
    fn check(&self, schema: &'s SchemaJson<'a>, value: &Json, depth: usize) -> Verdict {
        let keywords = match schema {
            SchemaJson::Bool(true) => return Verdict::Valid,
            SchemaJson::Bool(false) => return Verdict::Invalid,
            SchemaJson::Object(keywords) => keywords.as_slice(),
            _ => return Verdict::Unknown,
        };
        if depth > MAX_DEPTH {
            return Verdict::Unknown;
        }
        if self.draft == Draft::Draft7
            && let Some(reference) = schema.get("$ref")
        {
            return self.reference(reference, value, depth);
        }
        let mut verdict = Verdict::Valid;
        for (keyword, argument) in keywords {
            match self.keyword(keywords, keyword, argument, value, depth) {
                Verdict::Invalid => return Verdict::Invalid,
                Verdict::Unknown => verdict = Verdict::Unknown,
                Verdict::Valid => {}
            }
        }
        verdict
    }

    fn keyword(
        &self,
        keywords: Members<'s, 'a>,
        keyword: &str,
        argument: &'s SchemaJson<'a>,
        value: &Json,
        depth: usize,
    ) -> Verdict {
        let deeper = depth + 1;
        let sibling = |name: &str| keywords.iter().find(|(k, _)| k == name).map(|(_, v)| v);
        match keyword {
            "$ref" => self.reference(argument, value, depth),
            "$id" if std::ptr::eq(keywords, self.root.members().unwrap_or(keywords)) => {
                Verdict::Valid
            }
            "properties" => match (argument, value) {
                (SchemaJson::Object(_), Json::Object(fields)) => all(
                    fields
                        .iter()
                        .filter_map(|(key, field)| Some((argument.get(key)?, field))),
                    |(schema, field)| self.check(schema, field, deeper),
                ),
                (SchemaJson::Object(_), _) => Verdict::Valid,
                _ => Verdict::Unknown,
            },
            "additionalProperties" => match value {
                Json::Object(_) if sibling("patternProperties").is_some() => Verdict::Unknown,
                Json::Object(fields) => {
                    let known = sibling("properties");
                    all(
                        fields
                            .iter()
                            .filter(|(key, _)| known.and_then(|k| k.get(key)).is_none()),
                        |(_, field)| self.check(argument, field, deeper),
                    )
                }
                _ => Verdict::Valid,
            },
            "items" => match value {
                Json::Array(_)
                    if !matches!(argument, SchemaJson::Object(_) | SchemaJson::Bool(_)) =>
                {
                    Verdict::Unknown
                }
                Json::Array(items) => all(items, |item| self.check(argument, item, deeper)),
                _ => Verdict::Valid,
            },
            "propertyNames" => match value {
                Json::Object(fields) => all(fields.keys(), |key| {
                    self.check(argument, &Json::String(key.clone()), deeper)
                }),
                _ => Verdict::Valid,
            },
            "allOf" => branches(argument, |branches| {
                all(branches, |branch| self.check(branch, value, deeper))
            }),
            "anyOf" => branches(argument, |branches| {
                any(branches, |branch| self.check(branch, value, deeper))
            }),
            "oneOf" => branches(argument, |branches| {
                one(branches, |branch| self.check(branch, value, deeper))
            }),
            "not" => match self.check(argument, value, deeper) {
                Verdict::Valid => Verdict::Invalid,
                Verdict::Invalid => Verdict::Valid,
                Verdict::Unknown => Verdict::Unknown,
            },
            _ => assertion(self.draft, keyword, argument, value),
        }
    }

    /// `$ref` to a place in the same document (`#/$defs/Name`, `#/...`).
    fn reference(&self, reference: &'s SchemaJson<'a>, value: &Json, depth: usize) -> Verdict {
        let pointer = reference
            .as_str()
            .and_then(|r| r.strip_prefix('#'))
            .filter(|pointer| !pointer.contains('%'));
        let target = match pointer.and_then(|p| p.strip_prefix("/$defs/")) {
            Some(name) if !name.contains(['/', '~']) => self.defs.and_then(|d| d.get(name)),
            _ => pointer.and_then(|p| self.root.pointer(p)),
        };
        match target {
            Some(schema) => self.check(schema, value, depth + 1),
            None => Verdict::Unknown,
        }
    }
}

/// `allOf`, `anyOf`, `oneOf`: a non-empty list of schemas.
fn branches<'s, 'a>(
    argument: &'s SchemaJson<'a>,
    combine: impl FnOnce(&'s [SchemaJson<'a>]) -> Verdict,
) -> Verdict {
    match argument.as_array() {
        Some(branches) if !branches.is_empty() => combine(branches),
        _ => Verdict::Unknown,
    }
}

/// A keyword that looks at the value itself, not into it.
fn assertion(draft: Draft, keyword: &str, argument: &SchemaJson<'_>, value: &Json) -> Verdict {
    match keyword {
        "type" => type_verdict(argument, value),
        "enum" => argument
            .as_array()
            .map_or(Verdict::Unknown, |options| member(options, value)),
        "const" => member(std::slice::from_ref(argument), value),
        "required" => match (argument.as_array(), value) {
            (None, _) => Verdict::Unknown,
            (Some(keys), Json::Object(fields)) => certain(
                keys.iter()
                    .all(|key| key.as_str().is_some_and(|key| fields.contains_key(key))),
            ),
            _ => Verdict::Valid,
        },
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
            bound(keyword, argument, value)
        }
        "minLength" | "maxLength" => match value {
            Json::String(text) => count(keyword, argument, text.chars().count()),
            _ => Verdict::Valid,
        },
        "minItems" | "maxItems" => match value {
            Json::Array(items) => count(keyword, argument, items.len()),
            _ => Verdict::Valid,
        },
        "minProperties" | "maxProperties" => match value {
            Json::Object(fields) => count(keyword, argument, fields.len()),
            _ => Verdict::Valid,
        },
        "uniqueItems" => match (argument, value) {
            (SchemaJson::Bool(false), _) => Verdict::Valid,
            (_, Json::Array(items)) if items.len() > 1 => Verdict::Unknown,
            _ => Verdict::Valid,
        },
        "pattern" => match (argument.as_str(), value) {
            (None, _) => Verdict::Unknown,
            (Some(pattern), Json::String(text)) => pattern_verdict(pattern, text),
            _ => Verdict::Valid,
        },
        "format" => match (argument.as_str(), value) {
            (Some(format), Json::String(_))
                if draft == Draft::Draft7 && ASSERTED_FORMATS.contains(&format) =>
            {
                Verdict::Unknown
            }
            _ => Verdict::Valid,
        },
        _ if ANNOTATIONS.contains(&keyword) || keyword.starts_with("x-") => Verdict::Valid,
        _ => Verdict::Unknown,
    }
}

fn certain(holds: bool) -> Verdict {
    if holds {
        Verdict::Valid
    } else {
        Verdict::Invalid
    }
}

/// Valid when every part is; invalid as soon as one is.
fn all<T>(parts: impl IntoIterator<Item = T>, mut check: impl FnMut(T) -> Verdict) -> Verdict {
    let mut verdict = Verdict::Valid;
    for part in parts {
        match check(part) {
            Verdict::Invalid => return Verdict::Invalid,
            Verdict::Unknown => verdict = Verdict::Unknown,
            Verdict::Valid => {}
        }
    }
    verdict
}

/// Valid as soon as one branch is; invalid when every branch is.
fn any<T>(branches: impl IntoIterator<Item = T>, mut check: impl FnMut(T) -> Verdict) -> Verdict {
    let mut verdict = Verdict::Invalid;
    for branch in branches {
        match check(branch) {
            Verdict::Valid => return Verdict::Valid,
            Verdict::Unknown => verdict = Verdict::Unknown,
            Verdict::Invalid => {}
        }
    }
    verdict
}

/// Valid when exactly one branch is valid and the others are surely not.
fn one<'s, 'a>(
    branches: &'s [SchemaJson<'a>],
    mut check: impl FnMut(&'s SchemaJson<'a>) -> Verdict,
) -> Verdict {
    let (mut valid, mut unknown) = (0, false);
    for branch in branches {
        match check(branch) {
            Verdict::Valid => valid += 1,
            Verdict::Unknown => unknown = true,
            Verdict::Invalid => {}
        }
        if valid > 1 {
            return Verdict::Invalid;
        }
    }
    match (valid, unknown) {
        (_, true) => Verdict::Unknown,
        (1, false) => Verdict::Valid,
        _ => Verdict::Invalid,
    }
}

fn type_verdict(argument: &SchemaJson<'_>, value: &Json) -> Verdict {
    match argument {
        SchemaJson::String(name) => one_type(name, value),
        SchemaJson::Array(names) if !names.is_empty() => any(names, |name| {
            name.as_str()
                .map_or(Verdict::Unknown, |name| one_type(name, value))
        }),
        _ => Verdict::Unknown,
    }
}

fn one_type(name: &str, value: &Json) -> Verdict {
    match (name, value) {
        ("null", Json::Null)
        | ("boolean", Json::Bool(_))
        | ("string", Json::String(_))
        | ("array", Json::Array(_))
        | ("object", Json::Object(_))
        | ("number", Json::Number(_)) => Verdict::Valid,
        ("integer", Json::Number(number)) if number.is_i64() || number.is_u64() => Verdict::Valid,
        // `2.0` is an integer to JSON Schema; let `jsonschema` decide.
        ("integer", Json::Number(number)) if number.as_f64().is_some_and(|f| f.fract() == 0.0) => {
            Verdict::Unknown
        }
        ("null" | "boolean" | "string" | "array" | "object" | "number" | "integer", _) => {
            Verdict::Invalid
        }
        _ => Verdict::Unknown,
    }
}

/// `enum` and `const`: JSON equality, where numbers compare by value (`1` is
/// `1.0`) and serde_json's `==` by representation, so a number that matches
/// no option exactly is left to `jsonschema`.
fn member(options: &[SchemaJson<'_>], value: &Json) -> Verdict {
    fn has_number(value: &Json) -> bool {
        match value {
            Json::Number(_) => true,
            Json::Array(items) => items.iter().any(has_number),
            Json::Object(fields) => fields.values().any(has_number),
            _ => false,
        }
    }
    if options.iter().any(|option| option.equals(value)) {
        Verdict::Valid
    } else if has_number(value) && options.iter().any(SchemaJson::has_number) {
        Verdict::Unknown
    } else {
        Verdict::Invalid
    }
}

fn bound(keyword: &str, limit: &SchemaJson<'_>, value: &Json) -> Verdict {
    let Json::Number(number) = value else {
        return Verdict::Valid;
    };
    let SchemaJson::Number(limit) = limit else {
        return Verdict::Unknown;
    };
    let Some(ordering) = compare(number, limit) else {
        return Verdict::Unknown;
    };
    certain(match keyword {
        "minimum" => ordering != Ordering::Less,
        "maximum" => ordering != Ordering::Greater,
        "exclusiveMinimum" => ordering == Ordering::Greater,
        _ => ordering == Ordering::Less,
    })
}

/// Exact for integers; for floats, only when the two are clearly apart.
fn compare(a: &Number, b: &Number) -> Option<Ordering> {
    let whole = |n: &Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    if let (Some(a), Some(b)) = (whole(a), whole(b)) {
        return Some(a.cmp(&b));
    }
    let (a, b) = (a.as_f64()?, b.as_f64()?);
    let close = (a - b).abs() <= 4.0 * f64::EPSILON * a.abs().max(b.abs());
    if close { None } else { a.partial_cmp(&b) }
}

fn count(keyword: &str, limit: &SchemaJson<'_>, actual: usize) -> Verdict {
    let Some(limit) = limit.as_u64().and_then(|l| usize::try_from(l).ok()) else {
        return Verdict::Unknown;
    };
    certain(if keyword.starts_with("min") {
        actual >= limit
    } else {
        actual <= limit
    })
}

/// `pattern`, for printable ASCII text: there, ECMA-262 regular expressions
/// (what JSON Schema names) and the `regex` crate agree on every construct
/// `regex` compiles, `\d`, `\w`, `\s`, `.` and case folding included.
fn pattern_verdict(pattern: &str, text: &str) -> Verdict {
    if !text.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Verdict::Unknown;
    }
    matches(pattern, text).map_or(Verdict::Unknown, certain)
}

/// Whether `text` matches `pattern`, compiled once per process; `None`
/// when the `regex` crate cannot compile it.
fn matches(pattern: &str, text: &str) -> Option<bool> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<regex::Regex>>>> = OnceLock::new();
    let mut cache = CACHE
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !cache.contains_key(pattern) {
        // Unicode classes are not needed for ASCII text and cost time to build.
        let regex = regex::RegexBuilder::new(pattern)
            .unicode(false)
            .build()
            .or_else(|_| regex::Regex::new(pattern))
            .ok();
        cache.insert(pattern.to_owned(), regex);
    }
    cache[pattern].as_ref().map(|regex| regex.is_match(text))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Draft, SchemaJson, Verdict};

    fn verdict(schema: &serde_json::Value, value: &serde_json::Value, draft: Draft) -> Verdict {
        let text = schema.to_string();
        super::verdict(&SchemaJson::parse(&text).unwrap(), value, draft)
    }

    fn check(schema: &serde_json::Value, value: &serde_json::Value) -> Verdict {
        verdict(schema, value, Draft::Draft2020)
    }

    #[test]
    fn objects() {
        let schema = json!({
            "type": "object",
            "properties": { "a": { "type": "integer", "minimum": 1 }, "b": { "type": "string" } },
            "required": ["a"],
            "additionalProperties": false,
        });
        assert_eq!(check(&schema, &json!({"a": 1, "b": "x"})), Verdict::Valid);
        assert_eq!(check(&schema, &json!({"a": 0})), Verdict::Invalid);
        assert_eq!(check(&schema, &json!({"b": "x"})), Verdict::Invalid);
        assert_eq!(check(&schema, &json!({"a": 1, "c": 1})), Verdict::Invalid);
        assert_eq!(check(&schema, &json!({"a": 1.0})), Verdict::Unknown);
        assert_eq!(check(&schema, &json!({"a": 1.5})), Verdict::Invalid);
    }

    #[test]
    fn combinators_and_references() {
        let schema = json!({
            "$defs": { "n": { "oneOf": [ { "type": "integer" }, { "enum": ["gpu", "auto"] } ] } },
            "type": "object",
            "additionalProperties": { "$ref": "#/$defs/n" },
        });
        assert_eq!(check(&schema, &json!({"x": 2, "y": "gpu"})), Verdict::Valid);
        assert_eq!(check(&schema, &json!({"x": "cpu"})), Verdict::Invalid);
        let dangling = json!({ "$ref": "#/$defs/missing" });
        assert_eq!(check(&dangling, &json!(1)), Verdict::Unknown);
        let both = json!({ "oneOf": [ { "type": "number" }, { "type": "integer" } ] });
        assert_eq!(check(&both, &json!(1)), Verdict::Invalid);
    }

    #[test]
    fn unknown_keywords_and_loops_are_left_to_jsonschema() {
        assert_eq!(
            check(&json!({ "if": {"type": "string"} }), &json!(1)),
            Verdict::Unknown
        );
        let looped = json!({ "$defs": { "a": { "$ref": "#/$defs/a" } }, "$ref": "#/$defs/a" });
        assert_eq!(check(&looped, &json!(1)), Verdict::Unknown);
    }

    #[test]
    fn patterns_only_on_printable_ascii() {
        let schema = json!({ "pattern": "^[a-z]+$" });
        assert_eq!(check(&schema, &json!("abc")), Verdict::Valid);
        assert_eq!(check(&schema, &json!("ab1")), Verdict::Invalid);
        assert_eq!(check(&schema, &json!("abç")), Verdict::Unknown);
        assert_eq!(check(&schema, &json!("ab\n")), Verdict::Unknown);
    }

    #[test]
    fn draft7_formats_and_references() {
        let schema = json!({ "type": "string", "format": "date-time" });
        assert_eq!(
            verdict(&schema, &json!("x"), Draft::Draft7),
            Verdict::Unknown
        );
        assert_eq!(
            verdict(&schema, &json!("x"), Draft::Draft2020),
            Verdict::Valid
        );
        let int32 = json!({ "type": "integer", "format": "int32" });
        assert_eq!(verdict(&int32, &json!(5), Draft::Draft7), Verdict::Valid);
        // Draft 7: `$ref` replaces its siblings.
        let referenced = json!({ "$defs": { "s": { "type": "string" } }, "$ref": "#/$defs/s", "type": "integer" });
        assert_eq!(
            verdict(&referenced, &json!("x"), Draft::Draft7),
            Verdict::Valid
        );
        assert_eq!(
            verdict(&referenced, &json!("x"), Draft::Draft2020),
            Verdict::Invalid
        );
    }
}
