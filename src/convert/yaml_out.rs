//! A document as block YAML, as Kubernetes manifests are written: two
//! spaces a level, a list's `-` under its key, short lists of values on one
//! line, every comment above or after what it was above or after.

use std::fmt::Write as _;

use serde_json::Value as Json;

use super::comments::{Comments, Notes, Place};
use crate::tree::{Entry, Node, Value};

/// Longest list of values kept on one line, from the line's start.
const FLOW_WIDTH: usize = 88;

pub(super) fn write(entries: &[Entry], comments: &Comments, schema: Option<&str>) -> String {
    let mut writer = Writer {
        out: String::new(),
        comments,
    };
    if let Some(schema) = schema {
        let _ = writeln!(writer.out, "# yaml-language-server: $schema={schema}");
    }
    writer.lines(&comments.header, 0);
    if !comments.header.is_empty() {
        writer.out.push('\n');
    }
    if entries.is_empty() {
        writer.out.push_str("{}\n");
    }
    writer.entries(entries, 0, false);
    if !comments.footer.is_empty() {
        writer.out.push('\n');
        writer.lines(&comments.footer, 0);
    }
    writer.out
}

struct Writer<'c> {
    out: String,
    comments: &'c Comments,
}

impl Writer<'_> {
    fn notes(&self, place: Place) -> Notes {
        self.comments.of(place).cloned().unwrap_or_default()
    }

    /// Comment lines at `column` (a blank line for an empty one).
    fn lines(&mut self, lines: &[String], column: usize) {
        for line in lines {
            if !line.is_empty() {
                pad(&mut self.out, column);
                self.out.push_str(line);
            }
            self.out.push('\n');
        }
    }

    fn after(&mut self, after: Option<&str>) {
        if let Some(comment) = after {
            self.out.push_str("  ");
            self.out.push_str(comment);
        }
        self.out.push('\n');
    }

    /// A mapping's entries, keys at `column`; the first continues the line
    /// (after `- `) when `inline_first`.
    fn entries(&mut self, entries: &[Entry], column: usize, inline_first: bool) {
        for (i, entry) in entries.iter().enumerate() {
            let notes = self.notes(Place::Key(entry.key_span.start));
            if i > 0 || !inline_first {
                self.lines(&notes.above, column);
                pad(&mut self.out, column);
            }
            self.out.push_str(&key(&entry.key));
            self.out.push(':');
            self.value(&entry.value, column, notes.after.as_deref());
        }
    }

    /// What follows a key's `:` (or a list's `-`): a scalar on the line,
    /// else the collection's lines below it.
    fn value(&mut self, node: &Node, column: usize, after: Option<&str>) {
        match &node.value {
            Value::Table(entries) if !entries.is_empty() => {
                self.after(after);
                self.entries(entries, column + 2, false);
            }
            Value::Array(items) if !items.is_empty() => {
                let flow = flow(node, self.comments);
                match flow {
                    Some(text) if column + text.len() < FLOW_WIDTH => {
                        self.out.push(' ');
                        self.out.push_str(&text);
                        self.after(after);
                    }
                    _ => {
                        self.after(after);
                        self.sequence(items, column);
                    }
                }
            }
            Value::String(s) if block_literal(s) => {
                self.out
                    .push_str(if s.ends_with('\n') { " |" } else { " |-" });
                self.after(after);
                for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
                    if !line.is_empty() {
                        pad(&mut self.out, column + 2);
                        self.out.push_str(line);
                    }
                    self.out.push('\n');
                }
            }
            _ => {
                self.out.push(' ');
                self.out.push_str(&scalar(node));
                self.after(after);
            }
        }
    }

    /// A list's items, each `- ` at `column`.
    fn sequence(&mut self, items: &[Node], column: usize) {
        for item in items {
            let notes = self.notes(Place::Item(item.span.start));
            self.lines(&notes.above, column);
            match &item.value {
                Value::Table(entries) if !entries.is_empty() => {
                    // The first key shares the `-` line: its comments, and
                    // the item's own, go above it.
                    let first = self.notes(Place::Key(entries[0].key_span.start));
                    self.lines(&first.above, column);
                    self.lines(notes.after.as_slice(), column);
                    pad(&mut self.out, column);
                    self.out.push_str("- ");
                    self.entries(entries, column + 2, true);
                }
                Value::Array(inner) if !inner.is_empty() && flow(item, self.comments).is_none() => {
                    pad(&mut self.out, column);
                    self.out.push('-');
                    self.after(notes.after.as_deref());
                    self.sequence(inner, column + 2);
                }
                _ => {
                    pad(&mut self.out, column);
                    self.out.push('-');
                    self.value(item, column, notes.after.as_deref());
                }
            }
        }
    }
}

fn pad(out: &mut String, column: usize) {
    out.extend(std::iter::repeat_n(' ', column));
}

/// A list of values on one line (`["--epochs", "90"]`), if it is one and
/// no comment is inside it.
fn flow(node: &Node, comments: &Comments) -> Option<String> {
    let Value::Array(items) = &node.value else {
        return None;
    };
    if comments.inside(node) {
        return None;
    }
    let mut parts = Vec::with_capacity(items.len());
    for item in items {
        match &item.value {
            Value::Table(_) | Value::Array(_) => return None,
            Value::String(s) if s.contains(['\n', '\r']) => return None,
            Value::String(s) if plain_in_flow(s) => parts.push(s.clone()),
            Value::String(s) => parts.push(Json::String(s.clone()).to_string()),
            _ => parts.push(scalar(item)),
        }
    }
    Some(format!("[{}]", parts.join(", ")))
}

/// Plain in a flow list too: no `,`, brackets or braces (the writer's plain
/// text has none), and not a word a reader takes for something else.
fn plain_in_flow(s: &str) -> bool {
    crate::yaml::values::plainly_plain(s)
}

/// A string kept as its lines (`|`): several lines, none with a leading
/// space on the first, nothing a block cannot hold.
fn block_literal(s: &str) -> bool {
    s.contains('\n')
        && !s.starts_with([' ', '\t', '\n'])
        && !s.ends_with("\n\n")
        && !s
            .chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{feff}')
        && !s.split('\n').any(|l| l.ends_with([' ', '\t']))
}

/// A key, plain when it can be.
fn key(text: &str) -> String {
    if crate::yaml::values::plainly_plain(text) && !text.contains(':') {
        text.to_owned()
    } else {
        Json::String(text.to_owned()).to_string()
    }
}

/// A scalar (or an empty collection) on one line.
fn scalar(node: &Node) -> String {
    match &node.value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => one_line(&serde_json::json!(f)).unwrap_or_else(|| format!("{f:?}")),
        Value::String(s) if crate::yaml::values::plainly_plain(s) => s.clone(),
        Value::String(s) => {
            let json = Json::String(s.clone());
            one_line(&json).unwrap_or_else(|| json.to_string())
        }
        Value::Table(_) => "{}".to_owned(),
        Value::Array(_) => "[]".to_owned(),
    }
}

/// serde-saphyr's text for one scalar, when it is one line.
fn one_line(value: &Json) -> Option<String> {
    let text = serde_saphyr::to_string(value).ok()?;
    let line = text.strip_suffix('\n')?;
    (!line.contains('\n')).then(|| line.to_owned())
}
