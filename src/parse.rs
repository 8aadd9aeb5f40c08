//! Stage 2, parse: TOML or YAML text into a [`Node`] tree with a span on every
//! key and value.
//!
//! YAML comes bare (the spec's fields at the top level) or wrapped as a KRM
//! object (`apiVersion: trainc.dev/v1alpha1`, `kind: TrainSpec`, `metadata`,
//! `spec`); both unwrap to the same tree. The format is chosen by extension,
//! else by content. This stage knows nothing about which keys a spec has.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

use crate::diagnostic::{Diagnostic, codes};
use crate::source::{Source, SourceId, Span};
use crate::tree::{Entry, Node, Value};

/// The KRM apiVersion and kind of a TrainSpec.
pub const KRM_API_VERSION: &str = "trainc.dev/v1alpha1";
pub const KRM_KIND: &str = "TrainSpec";

/// No valid spec nests deeper than 5 levels (`volumes.data.accessModes[0]`, one
/// more in the KRM form); anything past this is rejected before it is walked.
pub const MAX_DEPTH: usize = 12;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Toml,
    Yaml,
}

impl Format {
    /// By extension; otherwise a YAML-looking first line (`key: value`, `---`)
    /// means YAML and anything else TOML.
    pub fn detect(source: &Source) -> Format {
        let extension = std::path::Path::new(&source.name)
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("");
        if extension.eq_ignore_ascii_case("toml") {
            return Format::Toml;
        }
        if extension.eq_ignore_ascii_case("yaml") || extension.eq_ignore_ascii_case("yml") {
            return Format::Yaml;
        }
        let first = source
            .text
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty() && !line.starts_with('#'));
        match first {
            Some(line) if line.starts_with("---") || line.starts_with("- ") => Format::Yaml,
            Some(line) if line.starts_with('[') || line.starts_with('{') => Format::Toml,
            Some(line) => match (line.find(':'), line.find('=')) {
                (Some(colon), Some(eq)) if colon < eq => Format::Yaml,
                (Some(_), None) => Format::Yaml,
                _ => Format::Toml,
            },
            None => Format::Toml,
        }
    }
}

/// Parses one source into a tree whose root is a table of spec fields.
pub fn parse(id: SourceId, source: &Source) -> Result<Node, Vec<Diagnostic>> {
    match Format::detect(source) {
        Format::Toml => within_depth(parse_toml(id, &source.text)?),
        Format::Yaml => spec_from_node(parse_yaml(id, &source.text, MAX_DEPTH)?),
    }
}

/// A spec from a YAML node parsed elsewhere (a ResourceList's functionConfig):
/// bare or KRM form, nesting checked.
pub fn spec_from_node(node: Node) -> Result<Node, Vec<Diagnostic>> {
    within_depth(unwrap_krm(node)?)
}

/// Any single YAML document, with spans, nesting at most `max_depth` levels.
pub fn parse_yaml_document(
    id: SourceId,
    text: &str,
    max_depth: usize,
) -> Result<Node, Vec<Diagnostic>> {
    parse_yaml(id, text, max_depth)
}

fn within_depth(root: Node) -> Result<Node, Vec<Diagnostic>> {
    if let Some(deep) = root.deeper_than(MAX_DEPTH) {
        return Err(vec![
            Diagnostic::error(
                codes::PARSE_TOO_DEEP,
                deep,
                format!("the document nests deeper than {MAX_DEPTH} levels"),
            )
            .with_help("no spec nests this deep; check that this is a training spec"),
        ]);
    }
    Ok(root)
}

fn parse_toml(id: SourceId, text: &str) -> Result<Node, Vec<Diagnostic>> {
    let (table, errors) = toml::de::DeTable::parse_recoverable(text);
    if !errors.is_empty() {
        let mut seen = std::collections::HashSet::new();
        return Err(errors
            .iter()
            .filter_map(|error| {
                let range = error.span().unwrap_or(0..0);
                let message = lowercase_first(error.message().trim().trim_end_matches('.'));
                seen.insert((range.start, message.clone())).then(|| {
                    let d = Diagnostic::error(
                        codes::PARSE_TOML,
                        Span::new(id, range.start, range.end),
                        format!("invalid TOML: {message}"),
                    );
                    let written = text.get(range.clone()).unwrap_or("").trim();
                    if message.contains("recursion depth") {
                        Diagnostic::error(
                            codes::PARSE_TOO_DEEP,
                            Span::new(id, range.start, range.end),
                            format!("the document nests deeper than {MAX_DEPTH} levels"),
                        )
                        .with_help("no spec nests this deep; check that this is a training spec")
                    } else if message.contains("must be quoted")
                        && !written.is_empty()
                        && !written.contains('"')
                    {
                        d.with_help(format!("quote it: `\"{written}\"`"))
                    } else {
                        d
                    }
                })
            })
            .collect());
    }
    let whole = Span::new(id, 0, text.len());
    let mut problems = Vec::new();
    let entries = toml_table(id, table.get_ref(), &mut problems);
    if problems.is_empty() {
        Ok(Node::new(Value::Table(entries), whole))
    } else {
        Err(problems)
    }
}

fn toml_table(
    id: SourceId,
    table: &toml::de::DeTable<'_>,
    problems: &mut Vec<Diagnostic>,
) -> Vec<Entry> {
    table
        .iter()
        .map(|(key, value)| {
            let key_span = Span::new(id, key.span().start, key.span().end);
            let mut value = toml_value(id, value, problems);
            if value.span.is_empty() {
                value.span = key_span; // implicit tables (dotted keys) have no text of their own
            }
            Entry {
                key: key.get_ref().to_string(),
                key_span,
                value,
            }
        })
        .collect()
}

fn toml_value(
    id: SourceId,
    value: &toml::Spanned<toml::de::DeValue<'_>>,
    problems: &mut Vec<Diagnostic>,
) -> Node {
    use toml::de::DeValue;
    let span = Span::new(id, value.span().start, value.span().end);
    let value = match value.get_ref() {
        DeValue::String(s) => Value::String(s.to_string()),
        DeValue::Integer(i) => {
            if let Ok(i) = i64::from_str_radix(i.as_str(), i.radix()) {
                Value::Integer(i)
            } else {
                problems.push(unsupported(span, "this integer does not fit in 64 bits"));
                Value::Null
            }
        }
        DeValue::Float(f) => match f.as_str().parse::<f64>() {
            Ok(f) if f.is_finite() => Value::Float(f),
            _ => {
                problems.push(unsupported(
                    span,
                    "infinite and NaN numbers have no meaning in a spec",
                ));
                Value::Null
            }
        },
        DeValue::Boolean(b) => Value::Bool(*b),
        DeValue::Datetime(_) => {
            problems.push(
                unsupported(span, "TOML dates and times have no meaning in a spec")
                    .with_help("durations are written as strings such as `\"1h30m\"`; quote the value if it is text"),
            );
            Value::Null
        }
        DeValue::Array(items) => {
            Value::Array(items.iter().map(|v| toml_value(id, v, problems)).collect())
        }
        DeValue::Table(table) => Value::Table(toml_table(id, table, problems)),
    };
    Node::new(value, span)
}

fn unsupported(span: Span, message: &str) -> Diagnostic {
    Diagnostic::error(codes::PARSE_UNSUPPORTED_VALUE, span, message.to_owned())
}

fn parse_yaml(id: SourceId, text: &str, max_depth: usize) -> Result<Node, Vec<Diagnostic>> {
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

fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) if !chars.as_str().starts_with(|c: char| c.is_uppercase()) => {
            first.to_lowercase().chain(chars).collect()
        }
        _ => text.to_owned(),
    }
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

/// Turns the KRM form into the bare form; leaves a bare spec as it is.
///
/// `metadata.name` and `metadata.namespace` become `name` and `namespace`
/// (keeping their spans); other metadata (annotations kustomize adds, labels of
/// the config object itself) is not part of the spec.
fn unwrap_krm(root: Node) -> Result<Node, Vec<Diagnostic>> {
    let Some(entries) = root.as_table() else {
        return Err(vec![
            Diagnostic::error(codes::PARSE_NOT_A_TABLE, root.span, "a spec must be a mapping of fields")
                .with_help("start with `name: my-job` and `image: ...`, or use the KRM form with `apiVersion`, `kind` and `spec`"),
        ]);
    };
    if root.get("apiVersion").is_none() && root.get("kind").is_none() {
        return Ok(root);
    }
    let mut problems = Vec::new();
    let expect =
        |key: &str, expected: &str, code: &'static str, problems: &mut Vec<Diagnostic>| match root
            .get(key)
        {
            Some(entry) if entry.value.as_str() == Some(expected) => {}
            Some(entry) => problems.push(
                Diagnostic::error(
                    code,
                    entry.value.span,
                    format!("`{key}` of a TrainSpec must be `{expected}`"),
                )
                .with_help(format!("write `{key}: {expected}`")),
            ),
            None => problems.push(
                Diagnostic::error(
                    code,
                    root.span,
                    format!("the KRM form needs `{key}: {expected}`"),
                )
                .with_help(format!("add `{key}: {expected}` at the top level")),
            ),
        };
    expect(
        "apiVersion",
        KRM_API_VERSION,
        codes::KRM_API_VERSION,
        &mut problems,
    );
    expect("kind", KRM_KIND, codes::KRM_KIND, &mut problems);

    let mut spec = match root.get("spec") {
        Some(entry) if entry.value.as_table().is_some() => entry.value.clone(),
        Some(entry) if entry.value.value == Value::Null => {
            Node::new(Value::Table(Vec::new()), entry.key_span)
        }
        Some(entry) => {
            problems.push(Diagnostic::error(
                codes::PARSE_NOT_A_TABLE,
                entry.value.span,
                "`spec` must be a mapping of fields",
            ));
            Node::new(Value::Table(Vec::new()), entry.key_span)
        }
        None => Node::new(Value::Table(Vec::new()), root.span),
    };
    for entry in entries {
        if !matches!(
            entry.key.as_str(),
            "apiVersion" | "kind" | "metadata" | "spec"
        ) {
            problems.push(
                Diagnostic::error(codes::SCHEMA_UNKNOWN_KEY, entry.key_span, format!("unknown key `{}` in a TrainSpec object", entry.key))
                    .with_help("a TrainSpec object has `apiVersion`, `kind`, `metadata` and `spec`; spec fields go under `spec`"),
            );
        }
    }
    let metadata = root.get("metadata").map(|e| &e.value);
    for field in ["name", "namespace"] {
        let Some(from_metadata) = metadata.and_then(|m| m.get(field)) else {
            continue;
        };
        let Value::Table(spec_entries) = &mut spec.value else {
            unreachable!("spec is a table")
        };
        match spec_entries.iter().find(|e| e.key == field) {
            Some(in_spec) if in_spec.value.value != from_metadata.value.value => problems.push(
                Diagnostic::error(
                    codes::KRM_NAME_CONFLICT,
                    in_spec.value.span,
                    format!("`spec.{field}` differs from `metadata.{field}`"),
                )
                .with_secondary(
                    from_metadata.value.span,
                    format!("`metadata.{field}` is set here"),
                )
                .with_help(format!(
                    "remove `{field}` from `spec`; `metadata.{field}` names the job"
                )),
            ),
            Some(_) => {}
            None => spec_entries.insert(0, from_metadata.clone()),
        }
    }
    if problems.is_empty() {
        Ok(spec)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Sources;

    fn parse_text(name: &str, text: &str) -> Result<Node, Vec<Diagnostic>> {
        let mut sources = Sources::new();
        let id = sources.add(name, text);
        parse(id, sources.get(id))
    }

    #[test]
    fn toml_and_yaml_give_the_same_json() {
        let toml = parse_text("a.toml", "name = \"x\"\nreplicas = 2\n[env]\nA = \"1\"\n").unwrap();
        let yaml = parse_text("a.yaml", "name: x\nreplicas: 2\nenv:\n  A: \"1\"\n").unwrap();
        assert_eq!(toml.to_json(), yaml.to_json());
    }

    #[test]
    fn krm_form_unwraps_to_the_bare_form() {
        let krm = "apiVersion: trainc.dev/v1alpha1\nkind: TrainSpec\nmetadata:\n  name: x\n  annotations: {a: b}\nspec:\n  replicas: 2\n";
        let node = parse_text("k.yaml", krm).unwrap();
        assert_eq!(
            node.to_json(),
            serde_json::json!({"name": "x", "replicas": 2})
        );
        let (name, _) = node.pointer("/name").unwrap();
        assert_eq!(&krm[name.span.start..name.span.end], "x");
    }

    #[test]
    fn content_decides_without_an_extension() {
        assert!(parse_text("-", "name: x\n").unwrap().get("name").is_some());
        assert!(
            parse_text("-", "# c\nname = \"x\"\n")
                .unwrap()
                .get("name")
                .is_some()
        );
    }

    #[test]
    fn yaml_11_booleans_stay_strings() {
        let node = parse_text("a.yaml", "suspend: yes\n").unwrap();
        assert_eq!(node.to_json(), serde_json::json!({"suspend": "yes"}));
    }

    #[test]
    fn deep_nesting_is_rejected_not_a_crash() {
        for text in [
            format!("a = {}1{}", "[".repeat(100_000), "]".repeat(100_000)),
            format!("a: {}1{}", "[".repeat(100_000), "]".repeat(100_000)),
        ] {
            let name = if text.contains('=') {
                "d.toml"
            } else {
                "d.yaml"
            };
            assert!(parse_text(name, &text).is_err());
        }
        let dotted = format!(
            "{} = 1",
            (0..20)
                .map(|i| format!("k{i}"))
                .collect::<Vec<_>>()
                .join(".")
        );
        let errs = parse_text("d.toml", &dotted).unwrap_err();
        assert_eq!(errs[0].code, codes::PARSE_TOO_DEEP);
    }
}
