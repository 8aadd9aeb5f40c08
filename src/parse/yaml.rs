//! YAML text into a [`Node`] tree, through serde-saphyr's `Spanned` values.
//!
//! YAML 1.2 rules: only `true` and `false` are booleans (`yes`, `on` stay
//! strings), duplicate keys and unknown tags are errors, and a budget bounds
//! nesting, aliases and documents (one document per file).

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

use crate::diagnostic::{Diagnostic, codes};
use crate::source::{SourceId, Span};
use crate::tree::{Entry, Node, Value};

use super::lowercase_first;

pub(super) fn parse_yaml(
    id: SourceId,
    text: &str,
    max_depth: usize,
) -> Result<Node, Vec<Diagnostic>> {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = max_depth + 1;
    budget.max_documents = 1;
    let options = serde_saphyr::options! {
        budget: Some(budget),
        strict_booleans: true,
        reject_unsupported_tags: true,
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::Error,
    };
    if text.trim().is_empty()
        || text
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        return Ok(Node::new(Value::Table(Vec::new()), Span::new(id, 0, 0)));
    }
    match serde_saphyr::from_str_with_options::<Spanned<Yaml>>(text, options) {
        Ok(root) => {
            let mut node = yaml_node(id, root);
            node.span = Span::new(id, 0, text.len());
            Ok(node)
        }
        Err(error) => Err(vec![yaml_error(id, text, &error, max_depth)]),
    }
}

/// Every document of a YAML stream (`---`-separated), each with spans into
/// the whole text; empty documents are skipped. At most `max_documents`.
pub(super) fn parse_yaml_stream(
    id: SourceId,
    text: &str,
    max_depth: usize,
    max_documents: usize,
) -> Result<Vec<Node>, Vec<Diagnostic>> {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = max_depth + 1;
    budget.max_documents = max_documents;
    let options = serde_saphyr::options! {
        budget: Some(budget),
        strict_booleans: true,
        reject_unsupported_tags: true,
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::Error,
    };
    match serde_saphyr::from_multiple_with_options::<Spanned<Yaml>>(text, options) {
        Ok(documents) => Ok(documents
            .into_iter()
            .map(|document| yaml_node(id, document))
            .collect()),
        Err(error) => Err(vec![yaml_error(id, text, &error, max_depth)]),
    }
}

fn yaml_error(
    id: SourceId,
    text: &str,
    error: &serde_saphyr::Error,
    max_depth: usize,
) -> Diagnostic {
    use serde_saphyr::budget::BudgetBreach;
    // serde-saphyr reports lines and columns in characters; byte offsets are not
    // always filled in, so convert from line and column.
    let offset = error
        .location()
        .filter(|loc| loc.line() > 0)
        .map_or(0, |loc| {
            offset_of(
                text,
                usize::try_from(loc.line()).unwrap_or(1),
                usize::try_from(loc.column()).unwrap_or(1),
            )
        });
    let span = Span::new(id, offset, offset);
    let mut error = error;
    while let serde_saphyr::Error::WithSnippet { error: inner, .. }
    | serde_saphyr::Error::AliasError { error: inner, .. } = error
    {
        error = inner;
    }
    match error {
        serde_saphyr::Error::DuplicateMappingKey { key, .. } => {
            let key = key
                .as_deref()
                .map_or_else(String::new, |k| format!(" `{k}`"));
            Diagnostic::error(codes::PARSE_YAML, span, format!("duplicate key{key}"))
                .with_label("set again here")
                .with_help("a key may appear once per mapping; remove one of them")
        }
        serde_saphyr::Error::Budget {
            breach: BudgetBreach::Depth { .. },
            ..
        } => Diagnostic::error(
            codes::PARSE_TOO_DEEP,
            span,
            format!("the document nests deeper than {max_depth} levels"),
        )
        .with_help("no spec nests this deep; check that this is a training spec"),
        serde_saphyr::Error::MultipleDocuments { .. }
        | serde_saphyr::Error::Budget {
            breach: BudgetBreach::Documents { .. },
            ..
        } => Diagnostic::error(
            codes::PARSE_YAML,
            span,
            "the file holds more than one YAML document",
        )
        .with_help("a spec is one document: remove the `---` and what follows, or split the file"),
        serde_saphyr::Error::Budget { .. } => Diagnostic::error(
            codes::PARSE_YAML,
            span,
            "the YAML expands to far more than any spec (anchors and aliases repeat their values)",
        )
        .with_help("write the values out, or use fewer aliases to aliases"),
        serde_saphyr::Error::NonFiniteFloat { value, .. } => Diagnostic::error(
            codes::PARSE_YAML,
            span,
            format!("`{value}` is not a number a spec can use"),
        )
        .with_help("write a finite number; quote it if you mean the text"),
        _ => {
            // serde-saphyr's text may start with `error: line N column M: `; the
            // location is already in the header, so keep only the description.
            let message = error.to_string();
            let mut message = message.lines().next().unwrap_or("").trim();
            message = message.strip_prefix("error: ").unwrap_or(message);
            if message.starts_with("line ")
                && let Some((_, rest)) = message.split_once(": ")
            {
                message = rest;
            }
            let message = message
                .split(" at line ")
                .next()
                .unwrap_or(message)
                .trim_end_matches('.');
            if message.contains("recursive references") {
                return Diagnostic::error(
                    codes::PARSE_YAML,
                    span,
                    "an alias refers to the anchor that contains it",
                )
                .with_help("a spec cannot contain itself; write the value out");
            }
            if message.contains("recursion limit") || message.contains("nesting") {
                return Diagnostic::error(
                    codes::PARSE_TOO_DEEP,
                    span,
                    format!("the document nests deeper than {max_depth} levels"),
                )
                .with_help("no spec nests this deep; check that this is a training spec");
            }
            Diagnostic::error(
                codes::PARSE_YAML,
                span,
                format!("invalid YAML: {}", lowercase_first(message)),
            )
        }
    }
}

/// Byte offset of a 1-based line and character column.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let rest = &text[line_start.min(text.len())..];
    line_start
        + rest
            .char_indices()
            .nth(column.saturating_sub(1))
            .map_or(rest.len(), |(i, _)| i)
}

/// A YAML value as serde-saphyr hands it over, before it gets our spans.
enum Yaml {
    Null,
    Bool(bool),
    Integer(i64),
    Float(f64),
    String(String),
    Seq(Vec<Spanned<Yaml>>),
    Map(Vec<(Spanned<String>, Spanned<Yaml>)>),
}

impl<'de> Deserialize<'de> for Yaml {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(YamlVisitor)
    }
}

struct YamlVisitor;

impl<'de> Visitor<'de> for YamlVisitor {
    type Value = Yaml;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Yaml, E> {
        Ok(Yaml::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Yaml, E> {
        Ok(Yaml::Integer(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Yaml, E> {
        i64::try_from(v)
            .map(Yaml::Integer)
            .map_err(|_| E::custom("integer does not fit in 64 bits"))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Yaml, E> {
        if v.is_finite() {
            Ok(Yaml::Float(v))
        } else {
            Err(E::custom(
                "infinite and NaN numbers have no meaning in a spec",
            ))
        }
    }
    fn visit_str<E>(self, v: &str) -> Result<Yaml, E> {
        Ok(Yaml::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Yaml, E> {
        Ok(Yaml::String(v))
    }
    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<Yaml, E> {
        Err(E::custom("binary values have no meaning in a spec"))
    }
    fn visit_unit<E>(self) -> Result<Yaml, E> {
        Ok(Yaml::Null)
    }
    fn visit_none<E>(self) -> Result<Yaml, E> {
        Ok(Yaml::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Yaml, D::Error> {
        Yaml::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Yaml, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Yaml::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Yaml, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key()? {
            entries.push((key, map.next_value()?));
        }
        Ok(Yaml::Map(entries))
    }
}

fn yaml_span(id: SourceId, location: serde_saphyr::Location) -> Span {
    let span = location.span();
    let start = span
        .byte_offset()
        .and_then(|o| usize::try_from(o).ok())
        .unwrap_or(0);
    let len = span
        .byte_len()
        .and_then(|l| usize::try_from(l).ok())
        .unwrap_or(0);
    Span::new(id, start, start + len)
}

fn yaml_node(id: SourceId, spanned: Spanned<Yaml>) -> Node {
    let span = yaml_span(id, spanned.referenced);
    let value = match spanned.value {
        Yaml::Null => Value::Null,
        Yaml::Bool(b) => Value::Bool(b),
        Yaml::Integer(i) => Value::Integer(i),
        Yaml::Float(f) => Value::Float(f),
        Yaml::String(s) => Value::String(s),
        Yaml::Seq(items) => {
            Value::Array(items.into_iter().map(|item| yaml_node(id, item)).collect())
        }
        Yaml::Map(entries) => Value::Table(
            entries
                .into_iter()
                .map(|(key, value)| Entry {
                    key_span: yaml_span(id, key.referenced),
                    key: key.value,
                    value: yaml_node(id, value),
                })
                .collect(),
        ),
    };
    Node::new(value, span)
}
