//! YAML text into a [`Node`] tree, through [`crate::yaml`]'s reader.
//!
//! YAML 1.2 rules, strict where YAML 1.1 reads the same text differently:
//! only `true` and `false` are booleans (`yes`, `on` stay strings), `010` is an
//! error rather than 10 or 8, tags other than the core ones are errors, and so
//! are duplicate keys. Limits bound nesting, aliases and documents.

use std::collections::HashMap;

use crate::diagnostic::{Diagnostic, codes};
use crate::source::{SourceId, Span};
use crate::tree::{Entry, Node, Value};
use crate::yaml::scalar::{self, Problem};
use crate::yaml::{self, Body, Limits, LoadError, Raw};

use super::lowercase_first;

/// Values in one spec once aliases are expanded: a real spec has a few
/// hundred; this is far past any of them and still quick to refuse.
const MAX_SPEC_NODES: usize = 100_000;
/// Bytes of text aliases may repeat in a spec: a spec's anchors share a few
/// labels or an env block; 1 MiB of repeats is far past any of them.
const MAX_SPEC_ALIASED_BYTES: usize = 1024 * 1024;
/// Bytes of text aliases may repeat in a stream of manifests (`verify`,
/// `import`): as much as a large hand-written file holds.
pub(crate) const MAX_OBJECTS_ALIASED_BYTES: usize = 4 * 1024 * 1024;

pub(super) fn parse_yaml(
    id: SourceId,
    text: &str,
    max_depth: usize,
) -> Result<Node, Vec<Diagnostic>> {
    let limits = Limits {
        depth: max_depth + 1,
        documents: 1,
        nodes: MAX_SPEC_NODES,
        object_nodes: MAX_SPEC_NODES,
        aliased: MAX_SPEC_NODES,
        aliased_bytes: MAX_SPEC_ALIASED_BYTES,
    };
    let documents = yaml::load(id, text, limits)
        .map_err(|e| vec![load_error(id, text, &e, max_depth, Subject::Spec)])?;
    match documents.into_iter().next() {
        Some(root) if !root.is_empty_null() => {
            let mut node = to_node(&root)?;
            node.span = Span::new(id, 0, text.len());
            Ok(node)
        }
        _ => Ok(Node::new(Value::Table(Vec::new()), Span::new(id, 0, 0))),
    }
}

/// Every document of a YAML stream (`---`-separated), each with spans into
/// the whole text; empty documents are skipped. At most `max_documents`.
pub(super) fn parse_manifest_stream(
    id: SourceId,
    text: &str,
    max_depth: usize,
    max_documents: usize,
) -> Result<super::ManifestStream, Vec<Diagnostic>> {
    let limits = Limits {
        depth: max_depth + 1,
        documents: max_documents,
        nodes: MAX_SPEC_NODES.saturating_mul(max_documents),
        object_nodes: crate::yaml::MAX_OBJECT_VALUES,
        aliased: MAX_SPEC_NODES,
        aliased_bytes: MAX_OBJECTS_ALIASED_BYTES,
    };
    let documents = yaml::load(id, text, limits)
        .map_err(|e| vec![load_error(id, text, &e, max_depth, Subject::Objects)])?;
    let mut reader = Reader::new(true);
    let documents = documents
        .iter()
        .filter(|document| !document.is_empty_null())
        .map(|document| reader.convert(document))
        .collect();
    if reader.problems.is_empty() {
        Ok(super::ManifestStream {
            documents,
            readings: reader.readings,
        })
    } else {
        Err(reader.problems)
    }
}

/// A [`Raw`] tree as a [`Node`] tree, every scalar resolved as a spec's
/// (YAML 1.2, strictly); all problems at once.
pub(super) fn to_node(raw: &Raw<'_>) -> Result<Node, Vec<Diagnostic>> {
    let mut reader = Reader::new(false);
    let node = reader.convert(raw);
    if reader.problems.is_empty() {
        Ok(node)
    } else {
        Err(reader.problems)
    }
}

/// How scalars are read, and what was found reading them.
struct Reader {
    /// As Kubernetes reads a manifest (YAML 1.1, see
    /// [`crate::yaml::kubernetes`]), noting in `readings` each scalar a
    /// YAML 1.2 reader reads otherwise; else as a spec (YAML 1.2).
    kubernetes: bool,
    problems: Vec<Diagnostic>,
    readings: Vec<Diagnostic>,
}

impl Reader {
    fn new(kubernetes: bool) -> Reader {
        Reader {
            kubernetes,
            problems: Vec::new(),
            readings: Vec::new(),
        }
    }

    fn scalar(&mut self, raw: &Raw<'_>) -> Value {
        let resolved = if self.kubernetes {
            let reading = crate::yaml::kubernetes::resolve(raw);
            if let (Ok(value), Some(other)) = (&reading.value, &reading.differs) {
                self.readings.push(two_readings(raw, value, other));
            }
            reading.value
        } else {
            if let Some(problem) = pyyaml_number(raw) {
                self.problems.push(problem);
                return Value::Null;
            }
            scalar::resolve(raw)
        };
        match resolved {
            Ok(scalar::Value::Null) => Value::Null,
            Ok(scalar::Value::Bool(b)) => Value::Bool(b),
            Ok(scalar::Value::Integer(i)) => Value::Integer(i),
            Ok(scalar::Value::Float(f)) => Value::Float(f),
            Ok(scalar::Value::Str(s)) => Value::String(s.to_owned()),
            Err(problem) => {
                self.problems.push(scalar_problem(raw, &problem));
                Value::Null
            }
        }
    }

    fn convert(&mut self, raw: &Raw<'_>) -> Node {
        let value = match &raw.body {
            Body::Scalar(..) => self.scalar(raw),
            Body::Seq(items) => Value::Array(items.iter().map(|i| self.convert(i)).collect()),
            Body::Map(entries) => {
                // `1` and `"1"` are two YAML keys but one key of a spec or an
                // object, whose keys are text: the second would silently win.
                let mut seen: HashMap<String, Span> = HashMap::with_capacity(entries.len());
                Value::Table(
                    entries
                        .iter()
                        .map(|(key, value)| {
                            let text = key_text(key, &mut self.problems);
                            if let Some(first) = seen.insert(text.clone(), key.span) {
                                self.problems.push(same_text_keys(&text, first, key.span));
                            }
                            Entry {
                                key: text,
                                key_span: key.span,
                                value: self.convert(value),
                            }
                        })
                        .collect(),
                )
            }
        };
        if let Some(problem) = scalar::container_tag_problem(raw) {
            self.problems.push(scalar_problem(raw, &problem));
        }
        Node::new(value, raw.span)
    }
}

/// A scalar of a manifest that Kubernetes (YAML 1.1) and a YAML 1.2 reader
/// read differently: accepted as Kubernetes reads it, with a warning.
fn two_readings(
    raw: &Raw<'_>,
    value: &scalar::Value<'_>,
    other: &Result<scalar::Value<'_>, Problem>,
) -> Diagnostic {
    let text = crate::diagnostic::quoted_value(raw.scalar().unwrap_or_default(), 40);
    let shown = |value: &scalar::Value<'_>| match value {
        scalar::Value::Null => "null".to_owned(),
        scalar::Value::Bool(b) => format!("the boolean `{b}`"),
        scalar::Value::Integer(i) => format!("the number {i}"),
        scalar::Value::Float(f) => format!("the number {f}"),
        scalar::Value::Str(s) => format!("the text \"{}\"", crate::diagnostic::quoted_value(s, 40)),
    };
    let theirs = match other {
        Ok(value) => shown(value),
        Err(Problem::LeadingZero) => format!(
            "the number {}",
            decimal_reading(raw.scalar().unwrap_or_default())
        ),
        Err(_) => "no value".to_owned(),
    };
    let fix = match value {
        scalar::Value::Integer(i) => format!("write `{i}`"),
        scalar::Value::Float(f) => format!("write `{f}`"),
        scalar::Value::Bool(b) => format!("write `{b}`"),
        _ => "write it plainly".to_owned(),
    };
    Diagnostic::warning(
        codes::PARSE_YAML,
        raw.span,
        format!(
            "`{text}` is {} to Kubernetes (YAML 1.1, as kubectl reads it) but {theirs} to a YAML 1.2 reader",
            shown(value)
        ),
    )
    .with_label("read two ways")
    .with_help(format!("{fix}, which every reader reads alike; quote it (`\"{text}\"`) if you mean the text"))
}

/// A plain scalar of a spec that YAML 1.2 (trainc) and YAML 1.1 as PyYAML
/// reads it (the reader of most Python tools that write or check specs)
/// read as different values where one of them is a number: `0o10`, the
/// number 8 to YAML 1.2 and the text "0o10" to YAML 1.1; `1:30`, text to
/// YAML 1.2 and the base-60 number 90 to YAML 1.1. An error, as `010` is:
/// a spec means one thing.
fn pyyaml_number(raw: &Raw<'_>) -> Option<Diagnostic> {
    if raw.tag.is_some() || !matches!(raw.body, Body::Scalar(_, granit_parser::ScalarStyle::Plain))
    {
        return None;
    }
    let text = raw.scalar()?;
    let shown = crate::diagnostic::quoted_value(text, 40);
    let (ours, theirs, help) = if let Some(digits) = text.strip_prefix("0o") {
        let n = i64::from_str_radix(digits, 8).ok()?;
        (
            format!("the number {n}"),
            format!("the text \"{shown}\""),
            format!(
                "write `{n}`, which every reader reads alike; quote it (`\"{shown}\"`) if you mean the text"
            ),
        )
    } else {
        let n = sexagesimal(text)?;
        (
            format!("the text \"{shown}\""),
            format!("the number {n} (base 60)"),
            format!(
                "quote it (`\"{shown}\"`), which every reader reads as text; write `{n}` if you mean the number"
            ),
        )
    };
    Some(
        Diagnostic::error(
            codes::PARSE_YAML,
            raw.span,
            format!("`{shown}` is {ours} to YAML 1.2 (trainc) but {theirs} to YAML 1.1 (PyYAML)"),
        )
        .with_label("read two ways")
        .with_help(help),
    )
}

/// A YAML 1.1 base-60 integer (`[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+`): its
/// value, when it fits.
fn sexagesimal(text: &str) -> Option<i64> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let mut parts = unsigned.split(':');
    let first = parts.next()?;
    if !first.starts_with(|c: char| matches!(c, '1'..='9'))
        || !first.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    {
        return None;
    }
    let mut value: i64 = first.replace('_', "").parse().ok()?;
    let mut any = false;
    for part in parts {
        let digit: i64 = match part.as_bytes() {
            [d @ b'0'..=b'9'] => i64::from(d - b'0'),
            [t @ b'0'..=b'5', d @ b'0'..=b'9'] => i64::from((t - b'0') * 10 + (d - b'0')),
            _ => return None,
        };
        value = value.checked_mul(60)?.checked_add(digit)?;
        any = true;
    }
    any.then_some(if negative { -value } else { value })
}

/// A key as text: specs and resources key their mappings by strings; `1:` or
/// `true:` is read as the text it shows, a container as a key is an error.
fn key_text(key: &Raw<'_>, problems: &mut Vec<Diagnostic>) -> String {
    if let Body::Scalar(text, _) = &key.body {
        if let Some(tag) = key.tag.as_deref().filter(|_| scalar::resolve(key).is_err()) {
            problems.push(scalar_problem(key, &Problem::Tag(tag.original())));
        }
        return text.to_string();
    }
    problems.push(
        Diagnostic::error(
            codes::PARSE_YAML,
            key.span,
            "a mapping key is itself a list or mapping",
        )
        .with_help("write keys as plain text"),
    );
    String::new()
}

fn same_text_keys(key: &str, first: Span, again: Span) -> Diagnostic {
    let key = crate::diagnostic::quoted_value(key, 60);
    Diagnostic::error(
        codes::PARSE_YAML,
        point(again),
        format!("duplicate key `{key}`: written once as text and once as a number or boolean, it is one key to Kubernetes"),
    )
    .with_label("set again here")
    .with_secondary(point(first), "first set here")
    .with_help("a key may appear once per mapping; remove one of them")
}

/// A number written with leading zeros (`0644`, `-010`) as YAML 1.2 reads
/// it: the decimal number without them (`644`, `-10`).
fn decimal_reading(text: &str) -> String {
    let digits = text.trim_start_matches(['-', '+']).trim_start_matches('0');
    format!(
        "{}{}",
        if text.starts_with('-') { "-" } else { "" },
        if digits.is_empty() { "0" } else { digits }
    )
}

fn scalar_problem(raw: &Raw<'_>, problem: &Problem) -> Diagnostic {
    let text = raw.scalar().unwrap_or_default();
    let shown = crate::diagnostic::quoted_value(text, 40);
    match problem {
        Problem::LeadingZero => {
            let unsigned = text.trim_start_matches(['-', '+']);
            let sign = if text.starts_with('-') { "-" } else { "" };
            let decimal = decimal_reading(text);
            let octal = i64::from_str_radix(unsigned, 8)
                .ok()
                .map(|n| format!("{sign}{n}"));
            let help = match octal {
                // A number too long to read back: the rule, not the rewrite.
                _ if text.len() > 40 => {
                    "write it without the leading zeros; quote it if you mean the text".to_owned()
                }
                // Both readings are one number: only the zeros are in the way.
                Some(octal) if octal == decimal => {
                    format!("write `{decimal}`; quote it (`\"{text}\"`) if you mean the text")
                }
                Some(octal) => format!(
                    "write `{decimal}` for {decimal}, or `{octal}` if you mean octal; quote it (`\"{text}\"`) if you mean the text"
                ),
                None => format!("write `{decimal}`; quote it (`\"{text}\"`) if you mean the text"),
            };
            Diagnostic::error(
                codes::PARSE_YAML,
                raw.span,
                format!("`{shown}` has a leading zero: YAML 1.2 reads it as a decimal number and YAML 1.1 (kubectl) as an octal one"),
            )
            .with_label("ambiguous number")
            .with_help(help)
        }
        Problem::NotFinite => Diagnostic::error(
            codes::PARSE_YAML,
            raw.span,
            format!("`{shown}` is not a number a spec can use"),
        )
        .with_help("write a finite number; quote it if you mean the text"),
        Problem::Tag(tag) => Diagnostic::error(
            codes::PARSE_YAML,
            raw.span,
            format!(
                "the tag `{}` has no meaning in a spec",
                crate::diagnostic::quoted_value(tag, 40)
            ),
        )
        .with_help(
            "remove the tag; a spec's values are text, numbers, booleans, lists and mappings",
        ),
        Problem::NotOfTag(kind) => Diagnostic::error(
            codes::PARSE_YAML,
            raw.span,
            format!("`{shown}` is tagged `!!{kind}` but does not read as one"),
        )
        .with_help("remove the tag, or write a value of that type"),
    }
}

/// What the YAML was meant to be, for the words of a limit's diagnostic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Subject {
    Spec,
    /// Kubernetes objects: a ResourceList, or manifests to verify.
    Objects,
}

pub(super) fn load_error(
    id: SourceId,
    text: &str,
    error: &LoadError,
    max_depth: usize,
    subject: Subject,
) -> Diagnostic {
    if subject == Subject::Objects
        && let Some(d) = objects_limit(error, max_depth)
    {
        return d;
    }
    match error {
        LoadError::Syntax { offset, message } => {
            let message = message
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .trim_end_matches('.');
            let message = message.split(" at line ").next().unwrap_or(message);
            let mut offset = (*offset).min(text.len());
            // The scanner reports a tab at the end of the line before it.
            if message.contains("found a tab")
                && let Some(tab) = text[offset..].find('\t')
            {
                offset += tab;
            }
            let d = Diagnostic::error(
                codes::PARSE_YAML,
                Span::new(id, offset, offset),
                format!("invalid YAML: {}", lowercase_first(message)),
            );
            match super::syntax_help::yaml_help(message, text, offset) {
                Some(help) => d.with_help(help),
                None => d,
            }
        }
        LoadError::DuplicateKey { key, again, .. } => {
            let key = crate::diagnostic::quoted_value(key, 60);
            Diagnostic::error(
                codes::PARSE_YAML,
                point(*again),
                format!("duplicate key `{key}`"),
            )
            .with_label("set again here")
            .with_help("a key may appear once per mapping; remove one of them")
        }
        LoadError::TooDeep { span } => Diagnostic::error(
            codes::PARSE_TOO_DEEP,
            point(*span),
            format!("the document nests deeper than {max_depth} levels"),
        )
        .with_help("no spec nests this deep; check that this is a training spec"),
        LoadError::TooManyDocuments { span } => Diagnostic::error(
            codes::PARSE_YAML,
            point(*span),
            "the file holds more than one YAML document",
        )
        .with_help("a spec is one document: remove the `---` and what follows, or split the file; a manifest of built objects is checked with `trainc verify FILE`"),
        LoadError::TooManyNodes { span, .. } | LoadError::TooLargeObject { span, .. } => Diagnostic::error(
            codes::PARSE_YAML,
            point(*span),
            "the YAML expands to far more than any spec (anchors and aliases repeat their values)",
        )
        .with_help("write the values out, or use fewer aliases to aliases"),
        LoadError::TooManyBytes { span, limit } => Diagnostic::error(
            codes::PARSE_YAML,
            point(*span),
            format!(
                "the YAML's aliases repeat more than {} of text, far more than any spec",
                size(*limit)
            ),
        )
        .with_help("write the values out, or repeat long values fewer times"),
        LoadError::RecursiveAlias { span } => Diagnostic::error(
            codes::PARSE_YAML,
            point(*span),
            "an alias refers to the anchor that contains it",
        )
        .with_help("a spec cannot contain itself; write the value out"),
    }
}

/// The limits of a ResourceList or a manifest stream, in their own terms.
fn objects_limit(error: &LoadError, max_depth: usize) -> Option<Diagnostic> {
    Some(match error {
        LoadError::TooDeep { span } => Diagnostic::error(
            codes::PARSE_TOO_DEEP,
            point(*span),
            format!("the YAML nests deeper than {max_depth} levels, deeper than any Kubernetes object"),
        )
        .with_help("check that the input holds Kubernetes objects"),
        LoadError::TooManyNodes { span, limit } => Diagnostic::error(
            codes::PARSE_YAML,
            point(*span),
            format!(
                "the YAML holds more than {} values (scalars, lists and mappings) once its aliases are expanded",
                thousands(*limit)
            ),
        )
        .with_help("split the package, or write out values that aliases repeat many times over"),
        LoadError::TooLargeObject { span, limit } => Diagnostic::error(
            codes::PARSE_YAML,
            point(*span),
            format!(
                "one object holds more than {} values (scalars, lists and mappings); trainc reads no more, and no real Kubernetes object comes near (etcd stores at most 1.5 MiB of one)",
                thousands(*limit)
            ),
        )
        .with_help("check that the input holds Kubernetes objects: a long list of values belongs in a file a volume mounts, not in an object"),
        LoadError::TooManyBytes { span, limit } => Diagnostic::error(
            codes::PARSE_YAML,
            point(*span),
            format!(
                "the YAML's aliases repeat more than {} of text once expanded",
                size(*limit)
            ),
        )
        .with_help("split the input, or write out long values that aliases repeat many times over"),
        _ => return None,
    })
}

/// A byte limit in words: `4 MiB`, `512 KiB`, or bytes.
fn size(bytes: usize) -> String {
    if bytes >= 1024 * 1024 && bytes.is_multiple_of(1024 * 1024) {
        format!("{} MiB", bytes / (1024 * 1024))
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

/// `12000000` as `12,000,000`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The start of a span, for errors about where something begins.
fn point(span: Span) -> Span {
    Span::new(span.source, span.start, span.start)
}
