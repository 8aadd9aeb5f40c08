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
use super::readings::{pyyaml_number, scalar_problem, two_readings};

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
            let mut node = to_node(root)?;
            node.span = Span::new(id, 0, text.len());
            Ok(node)
        }
        _ => Ok(Node::new(Value::Table(Vec::new()), Span::new(id, 0, 0))),
    }
}

/// Every document of the bytes `part` of a YAML stream (`---`-separated),
/// each with spans into the whole text; empty documents are skipped. At
/// most `max_documents`.
pub(super) fn parse_manifest_stream(
    id: SourceId,
    text: &str,
    part: std::ops::Range<usize>,
    max_depth: usize,
    max_documents: usize,
) -> Result<super::ManifestStream, Vec<Diagnostic>> {
    let mut documents = Vec::new();
    let readings = each_manifest(id, text, part, max_depth, max_documents, &mut |_, node| {
        documents.push(node);
    })?;
    Ok(super::ManifestStream {
        documents,
        readings,
    })
}

/// [`parse_manifest_stream`], each document given to `f` (with its number,
/// from 1) as it is made and not held after: a stream of 10,000 CRDs is
/// never a tree of 10,000 documents at once. The whole stream is read
/// first, so a syntax error anywhere gives no document; a scalar that
/// cannot be read is found as its document is made, after the documents
/// before it were given, and then is the `Err` with every such problem.
/// `Ok` holds the values read two ways.
pub(super) fn each_manifest(
    id: SourceId,
    text: &str,
    part: std::ops::Range<usize>,
    max_depth: usize,
    max_documents: usize,
    f: &mut dyn FnMut(usize, Node),
) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    let limits = Limits {
        depth: max_depth + 1,
        documents: max_documents,
        nodes: MAX_SPEC_NODES.saturating_mul(max_documents),
        object_nodes: crate::yaml::MAX_OBJECT_VALUES,
        aliased: MAX_SPEC_NODES,
        aliased_bytes: MAX_OBJECTS_ALIASED_BYTES,
    };
    let documents = yaml::load_at(id, &text[part.clone()], part.start, limits)
        .map_err(|e| vec![load_error(id, text, &e, max_depth, Subject::Objects)])?;
    let mut reader = Reader::new(true);
    // Each document given up as it is converted: a `v1 List` of a million
    // items is not held twice.
    let documents = documents
        .into_iter()
        .filter(|document| !document.is_empty_null());
    for (n, document) in documents.enumerate() {
        let node = reader.convert_owned(document);
        if reader.problems.is_empty() {
            f(n + 1, node);
        }
    }
    if reader.problems.is_empty() {
        let mut readings = reader.readings;
        if reader.readings_past > 0 {
            // Said once, where the first one not said is.
            readings.push(Diagnostic::note(
                codes::PARSE_YAML,
                Span::new(id, reader.first_past, reader.first_past),
                format!(
                    "{} more values from here on read two ways (YAML 1.2 and Kubernetes' YAML 1.1); trainc says the first {MAX_READINGS} of a document one by one",
                    reader.readings_past
                ),
            ));
        }
        Ok(readings)
    } else {
        Err(reader.problems)
    }
}

/// A [`Raw`] tree as a [`Node`] tree, every scalar resolved as a spec's
/// (YAML 1.2, strictly); all problems at once.
pub(super) fn to_node(raw: Raw<'_>) -> Result<Node, Vec<Diagnostic>> {
    let mut reader = Reader::new(false);
    let node = reader.convert_owned(raw);
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
    /// At most [`MAX_READINGS`]; past them, how many more, and where the
    /// first of those is.
    readings: Vec<Diagnostic>,
    readings_past: usize,
    first_past: usize,
}

/// Values read two ways said one by one in a part of a stream: a file of
/// 400,000 `yes` would otherwise hold as many warnings in memory.
const MAX_READINGS: usize = 1000;

impl Reader {
    fn new(kubernetes: bool) -> Reader {
        Reader {
            kubernetes,
            problems: Vec::new(),
            readings: Vec::new(),
            readings_past: 0,
            first_past: 0,
        }
    }

    fn scalar(&mut self, raw: &Raw<'_>) -> Value {
        let resolved = if self.kubernetes {
            let reading = crate::yaml::kubernetes::resolve(raw);
            if let (Ok(value), Some(other)) = (&reading.value, &reading.differs) {
                if self.readings.len() < MAX_READINGS {
                    self.readings.push(two_readings(raw, value, other));
                } else {
                    if self.readings_past == 0 {
                        self.first_past = raw.span.start;
                    }
                    self.readings_past += 1;
                }
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

    /// `raw` as a [`Node`], each part of it given up once it is converted
    /// (a `v1 List` of a million items is not held twice).
    fn convert_owned(&mut self, raw: Raw<'_>) -> Node {
        let tag_problem = scalar::container_tag_problem(&raw).map(|p| scalar_problem(&raw, &p));
        let span = raw.span;
        let value = match raw.body {
            Body::Scalar(..) => self.scalar(&raw),
            Body::Seq(items) => Value::Array(
                items
                    .into_iter()
                    .map(|item| self.convert_owned(item))
                    .collect(),
            ),
            Body::Map(entries) => {
                // `1` and `"1"` are two YAML keys but one key of a spec or an
                // object, whose keys are text: the second would silently win.
                let mut seen: HashMap<String, Span> = HashMap::with_capacity(entries.len());
                Value::Table(
                    entries
                        .into_iter()
                        .map(|(key, value)| {
                            let text = key_text(&key, &mut self.problems);
                            if let Some(first) = seen.insert(text.clone(), key.span) {
                                self.problems.push(same_text_keys(&text, first, key.span));
                            }
                            Entry {
                                key: text,
                                key_span: key.span,
                                value: self.convert_owned(value),
                            }
                        })
                        .collect(),
                )
            }
        };
        self.problems.extend(tag_problem);
        Node::new(value, span)
    }
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
        LoadError::TooManyDocuments { span, .. } => Diagnostic::error(
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
        LoadError::TooManyDocuments { span, limit } => Diagnostic::error(
            codes::PARSE_YAML,
            point(*span),
            format!(
                "the stream holds more than {} documents, the most trainc reads from one file",
                thousands(*limit)
            ),
        )
        .with_help("split the stream into several files and pass them all (or their directory)"),
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
