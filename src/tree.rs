//! The parsed document: a value tree in which every key and value keeps its span.
//!
//! Parsers (TOML, YAML) produce a [`Node`]; composition and templates rewrite
//! it; validation reads it through JSON pointers so that an error found on the
//! typed spec can still point at the exact characters the user wrote.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::OnceLock;

use crate::source::{Sources, Span};

#[derive(Debug, Clone)]
pub struct Node {
    pub value: Value,
    pub span: Span,
    /// Where each key of a large table is, built on the first lookup, so
    /// that finding thousands of keys (a diagnostic for each) is linear.
    /// A hit is checked against the entry; a miss, or a table changed since
    /// the index was built, is searched: never wrong, at worst slow.
    /// Boxed: few nodes are large tables, and every node carries the field
    /// (a manifest may hold millions of nodes).
    index: OnceLock<Box<KeyIndex>>,
}

/// A large table's keys and their places.
#[derive(Debug, Clone)]
struct KeyIndex {
    places: HashMap<String, usize>,
}

/// Tables up to this many entries are searched; larger ones are indexed.
const INDEXED_FROM: usize = 16;

impl PartialEq for Node {
    fn eq(&self, other: &Node) -> bool {
        self.value == other.value && self.span == other.span
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Integer(i64),
    Float(f64),
    String(String),
    Array(Vec<Node>),
    Table(Vec<Entry>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub key_span: Span,
    pub value: Node,
}

impl Node {
    pub fn new(value: Value, span: Span) -> Self {
        Node {
            value,
            span,
            index: OnceLock::new(),
        }
    }

    pub fn as_table(&self) -> Option<&[Entry]> {
        match &self.value {
            Value::Table(entries) => Some(entries),
            _ => None,
        }
    }

    pub fn as_table_mut(&mut self) -> Option<&mut Vec<Entry>> {
        match &mut self.value {
            Value::Table(entries) => Some(entries),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entry(self.as_table()?, key)
    }

    /// The entry of `entries` (this node's table) under `key`.
    fn entry<'a>(&self, entries: &'a [Entry], key: &str) -> Option<&'a Entry> {
        if entries.len() <= INDEXED_FROM {
            return entries.iter().find(|e| e.key == key);
        }
        let index = self.index.get_or_init(|| {
            let mut places = HashMap::with_capacity(entries.len());
            for (i, e) in entries.iter().enumerate() {
                places.entry(e.key.clone()).or_insert(i);
            }
            Box::new(KeyIndex { places })
        });
        match index.places.get(key).and_then(|&i| entries.get(i)) {
            Some(entry) if entry.key == key => Some(entry),
            // Not there, or the table changed since the index was built.
            _ => entries.iter().find(|e| e.key == key),
        }
    }

    /// The span of the first value nested more than `limit` containers deep
    /// (`{a = 1}` nests `1` one level deep), if any.
    pub fn deeper_than(&self, limit: usize) -> Option<Span> {
        // Iterative, so a pathological tree cannot overflow the stack here.
        let mut stack = vec![(self, 0usize)];
        while let Some((node, depth)) = stack.pop() {
            if depth > limit {
                return Some(node.span);
            }
            match &node.value {
                Value::Array(items) => stack.extend(items.iter().rev().map(|n| (n, depth + 1))),
                Value::Table(entries) => {
                    stack.extend(entries.iter().rev().map(|e| (&e.value, depth + 1)));
                }
                _ => {}
            }
        }
        None
    }

    /// The node at a JSON pointer (`/volumes/data/size`), and the span of the key
    /// that holds it (`None` for the root and for array items).
    pub fn pointer(&self, pointer: &str) -> Option<(&Node, Option<Span>)> {
        let mut node = self;
        let mut key_span = None;
        for segment in pointer.split('/').skip(1) {
            let segment = segment.replace("~1", "/").replace("~0", "~");
            match &node.value {
                Value::Table(entries) => {
                    let entry = node.entry(entries, &segment)?;
                    key_span = Some(entry.key_span);
                    node = &entry.value;
                }
                Value::Array(items) => {
                    node = items.get(segment.parse::<usize>().ok()?)?;
                    key_span = None;
                }
                _ => return None,
            }
        }
        Some((node, key_span))
    }

    /// The span of the value at `pointer`, or of its nearest existing ancestor.
    pub fn span_at(&self, pointer: &str) -> Span {
        let mut pointer = pointer;
        loop {
            if let Some((node, _)) = self.pointer(pointer) {
                return node.span;
            }
            match pointer.rfind('/') {
                Some(i) => pointer = &pointer[..i],
                None => return self.span,
            }
        }
    }

    /// The span of the key at `pointer` (falls back to the value's span).
    pub fn key_span_at(&self, pointer: &str) -> Span {
        match self.pointer(pointer) {
            Some((_, Some(key_span))) => key_span,
            _ => self.span_at(pointer),
        }
    }

    /// The span covering `key = value` at `pointer`.
    pub fn entry_span_at(&self, pointer: &str) -> Span {
        match self.pointer(pointer) {
            Some((node, Some(key)))
                if key.source == node.span.source && key.start <= node.span.start =>
            {
                Span::new(key.source, key.start, node.span.end)
            }
            _ => self.key_span_at(pointer),
        }
    }

    /// The JSON pointer of the deepest key or value that contains `span`'s
    /// start (same source), relative to this node; `None` when outside it.
    pub fn pointer_of(&self, span: Span) -> Option<String> {
        let inside = |s: Span| {
            s.source == span.source && s.start <= span.start && span.start <= s.end.max(s.start + 1)
        };
        let deeper = match &self.value {
            Value::Table(entries) => entries.iter().find_map(|e| {
                let rest = e
                    .value
                    .pointer_of(span)
                    .or_else(|| inside(e.key_span).then(String::new))?;
                Some(format!("/{}{rest}", pointer_segment(&e.key)))
            }),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, item)| Some(format!("/{i}{}", item.pointer_of(span)?))),
            _ => None,
        };
        deeper.or_else(|| inside(self.span).then(String::new))
    }

    /// The plain JSON value, for schema validation and typed deserialization.
    pub fn to_json(&self) -> serde_json::Value {
        self.json(false)
    }

    /// The JSON the API server receives for this node of a manifest, as
    /// kubectl sends it: YAML made JSON (sigs.k8s.io/yaml v1.6.0
    /// `YAMLToJSON`), a float written by Go's `encoding/json` (a whole one
    /// below 1e21 without a fraction), and a number without a fraction
    /// read back as an `int64` where it fits one. So `replicas: 2.0` and
    /// `12e3` are integers to the server, and to the checks of a manifest.
    pub fn to_sent_json(&self) -> serde_json::Value {
        self.json(true)
    }

    fn json(&self, sent: bool) -> serde_json::Value {
        use serde_json::Value as J;
        // Whole and within an int64 (a larger one stays a float64).
        const INT64: std::ops::Range<f64> =
            -9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0;
        match &self.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Integer(i) => J::from(*i),
            #[allow(clippy::cast_possible_truncation)] // whole and in range
            Value::Float(f) if sent && f.fract() == 0.0 && INT64.contains(f) => J::from(*f as i64),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
            Value::String(s) => J::String(s.clone()),
            Value::Array(items) => J::Array(items.iter().map(|item| item.json(sent)).collect()),
            Value::Table(entries) => J::Object(
                entries
                    .iter()
                    .map(|e| (e.key.clone(), e.value.json(sent)))
                    .collect(),
            ),
        }
    }
}

/// The key one JSON pointer segment stands for (`~1` is `/`, `~0` is `~`):
/// the inverse of [`pointer_segment`].
pub fn segment_key(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// Escapes one JSON pointer segment.
pub fn pointer_segment(key: &str) -> String {
    let mut segment = String::with_capacity(key.len());
    push_segment(&mut segment, key);
    segment
}

/// Appends `key` escaped as a JSON-pointer segment (`~` as `~0`, `/` as `~1`).
pub fn push_segment(pointer: &mut String, key: &str) {
    for c in key.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// Each number in `node` that does not read back as written made its
/// text: `[vars]` (`template::keep_written`), a `--set` value as it is
/// read (`compose::set_from_command_line`). A version `1.10` stays `1.10`.
pub fn numbers_as_written(node: &mut Node, sources: &Sources) {
    match &mut node.value {
        Value::Table(entries) => {
            for entry in entries {
                numbers_as_written(&mut entry.value, sources);
            }
        }
        Value::Array(items) => {
            for item in items {
                numbers_as_written(item, sources);
            }
        }
        Value::Integer(_) | Value::Float(_) => {
            let source = sources.get(node.span.source);
            let written = source
                .text
                .get(node.span.start..node.span.end)
                .unwrap_or("")
                .trim();
            // `--set` values were decided as they were read; a span that
            // holds more than the number is not its written form.
            let alone = !written.contains(|c: char| c.is_whitespace() || ",[]{}".contains(c));
            if source.name != crate::source::COMMAND_LINE
                && alone
                && !reads_back(&node.value, written)
            {
                node.value = Value::String(written.to_owned());
            }
        }
        _ => {}
    }
}

/// Whether `value` prints as `written` (digit separators and a `+` aside).
fn reads_back(value: &Value, written: &str) -> bool {
    let plain = written.trim_start_matches('+').replace('_', "");
    match value {
        Value::Integer(i) => plain == i.to_string(),
        Value::Float(x) => plain == toml::Value::Float(*x).to_string(),
        _ => true,
    }
}

/// A JSON pointer as users write the field: `/scheduling/tolerations/0/key` →
/// `scheduling.tolerations[0].key`; keys that are not identifiers are quoted.
pub fn field_path(pointer: &str) -> String {
    let mut out = String::new();
    for segment in pointer.split('/').skip(1) {
        let segment = segment_key(segment);
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
            let _ = write!(out, "[{segment}]");
            continue;
        }
        if !out.is_empty() {
            out.push('.');
        }
        if !segment.is_empty()
            && segment
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            out.push_str(&segment);
        } else {
            let _ = write!(out, "{segment:?}");
        }
    }
    if out.is_empty() {
        "the spec".to_owned()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_paths_read_like_the_spec() {
        assert_eq!(
            field_path("/scheduling/tolerations/0/key"),
            "scheduling.tolerations[0].key"
        );
        assert_eq!(
            field_path("/labels/app.kubernetes.io~1name"),
            "labels.\"app.kubernetes.io/name\""
        );
        assert_eq!(field_path(""), "the spec");
    }

    use crate::source::SourceId;

    fn span(start: usize, end: usize) -> Span {
        Span::new(SourceId(0), start, end)
    }

    #[test]
    fn pointer_walks_tables_and_arrays() {
        let leaf = Node::new(Value::String("x".into()), span(10, 13));
        let array = Node::new(Value::Array(vec![leaf]), span(8, 15));
        let root = Node::new(
            Value::Table(vec![Entry {
                key: "a/b".into(),
                key_span: span(0, 3),
                value: array,
            }]),
            span(0, 20),
        );
        assert_eq!(root.pointer("/a~1b/0").unwrap().0.span, span(10, 13));
        assert_eq!(root.key_span_at("/a~1b"), span(0, 3));
        assert_eq!(root.span_at("/a~1b/7"), span(8, 15));
        assert_eq!(root.entry_span_at("/a~1b"), span(0, 15));
        assert_eq!(root.deeper_than(1), Some(span(10, 13)));
        assert_eq!(root.pointer_of(span(11, 11)).as_deref(), Some("/a~1b/0"));
        assert_eq!(root.pointer_of(span(1, 1)).as_deref(), Some("/a~1b"));
        assert_eq!(root.pointer_of(span(30, 30)), None);
        assert_eq!(root.deeper_than(2), None);
    }

    #[test]
    fn only_numbers_that_print_as_written_stay_numbers() {
        assert!(reads_back(&Value::Float(1.5), "1.5"));
        assert!(reads_back(&Value::Integer(1000), "1_000"));
        assert!(reads_back(&Value::Integer(8), "+8"));
        assert!(!reads_back(&Value::Float(1.1), "1.10"));
        assert!(!reads_back(&Value::Float(1e-4), "1e-4"));
        assert!(!reads_back(
            &Value::Float(12_345_678_901_234_567_000.0),
            "12345678901234567890.0"
        ));
        assert!(!reads_back(&Value::Integer(8), "0o10"));
    }
}
