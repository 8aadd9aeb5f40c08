//! A document as TOML, as people write specs: the top level's values first,
//! then a `[section]` per table; small tables and lists inline, unless a
//! comment inside one needs lines of its own.

use std::fmt::Write as _;

use super::comments::{Comments, Notes, Place};
use crate::tree::{Entry, Node, Value};

/// Longest inline table or list kept on one line.
const INLINE_WIDTH: usize = 88;

pub(super) fn write(entries: &[Entry], comments: &Comments, schema: Option<&str>) -> String {
    let mut writer = Writer {
        out: String::new(),
        comments,
        pending: Vec::new(),
    };
    if let Some(schema) = schema {
        let _ = writeln!(writer.out, "#:schema {schema}");
    }
    writer.comment_lines(&comments.header);
    if !comments.header.is_empty() {
        writer.out.push('\n');
    }
    writer.table(&[], entries, false, None);
    let pending = std::mem::take(&mut writer.pending);
    writer.comment_lines(&pending);
    if !comments.footer.is_empty() {
        writer.out.push('\n');
        writer.comment_lines(&comments.footer);
    }
    while writer.out.ends_with("\n\n") {
        writer.out.pop();
    }
    writer.out
}

struct Writer<'c> {
    out: String,
    comments: &'c Comments,
    /// Comments of a table that has no header of its own (`[a]` holding only
    /// `[a.b]`), written above the next header.
    pending: Vec<String>,
}

impl Writer<'_> {
    fn notes(&self, place: Place) -> Option<&Notes> {
        self.comments.of(place)
    }

    fn comment_lines(&mut self, lines: &[String]) {
        for line in lines {
            self.out.push_str(line);
            self.out.push('\n');
        }
    }

    /// Whether `node` goes on its key's line.
    fn inline(&self, node: &Node, at_top: bool) -> bool {
        match &node.value {
            Value::Table(entries) if entries.is_empty() => true,
            Value::Table(_) if at_top => false,
            Value::Array(items) if items.is_empty() => true,
            Value::Table(_) => fits(node) && !self.comments.inside(node),
            Value::Array(items) if items.iter().all(is_table) => {
                fits(node) && !self.comments.inside(node)
            }
            _ => true,
        }
    }

    fn table(&mut self, path: &[String], entries: &[Entry], array_item: bool, own: Option<&Notes>) {
        let header = !path.is_empty();
        let (lines, nested): (Vec<&Entry>, Vec<&Entry>) = entries
            .iter()
            .filter(|e| !matches!(e.value.value, Value::Null))
            .partition(|e| self.inline(&e.value, !header));
        let own = own.cloned().unwrap_or_default();
        if header && (!lines.is_empty() || array_item || nested.is_empty()) {
            let mut above = std::mem::take(&mut self.pending);
            above.extend(own.above.iter().cloned());
            if !self.out.is_empty() && !self.out.ends_with("\n\n") {
                self.out.push('\n');
            }
            self.comment_lines(&above);
            let name: Vec<String> = path.iter().map(|k| key(k)).collect();
            let (open, close) = if array_item { ("[[", "]]") } else { ("[", "]") };
            let _ = write!(self.out, "{open}{}{close}", name.join("."));
            self.after(own.after.as_deref());
        } else if header {
            self.pending.extend(own.above.iter().cloned());
            self.pending.extend(own.after.iter().cloned());
        }
        for entry in &lines {
            let notes = self
                .notes(Place::Key(entry.key_span.start))
                .cloned()
                .unwrap_or_default();
            let mut above = std::mem::take(&mut self.pending);
            above.extend(notes.above);
            self.comment_lines(&above);
            let _ = write!(self.out, "{} = ", key(&entry.key));
            self.value(&entry.value);
            self.after(notes.after.as_deref());
        }
        if !lines.is_empty() || (header && array_item) {
            self.out.push('\n');
        }
        for entry in nested {
            let mut sub = path.to_vec();
            sub.push(entry.key.clone());
            let notes = self.notes(Place::Key(entry.key_span.start)).cloned();
            match &entry.value.value {
                Value::Table(inner) => self.table(&sub, inner, false, notes.as_ref()),
                Value::Array(items) => {
                    if let Some(notes) = notes {
                        self.pending.extend(notes.above);
                        self.pending.extend(notes.after);
                    }
                    for item in items {
                        if let Value::Table(inner) = &item.value {
                            let notes = self.notes(Place::Item(item.span.start)).cloned();
                            self.table(&sub, inner, true, notes.as_ref());
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn after(&mut self, after: Option<&str>) {
        if let Some(comment) = after {
            self.out.push_str("  ");
            self.out.push_str(comment);
        }
        self.out.push('\n');
    }

    /// A value after `key = `: on its line, or a list over lines when its
    /// items have comments.
    fn value(&mut self, node: &Node) {
        match &node.value {
            Value::String(s) if s.contains('\n') => self.out.push_str(&multi_line(s)),
            Value::Array(items) if self.comments.inside(node) || !fits(node) => {
                self.out.push('[');
                self.out.push('\n');
                for item in items {
                    let notes = self
                        .notes(Place::Item(item.span.start))
                        .cloned()
                        .unwrap_or_default();
                    for line in &notes.above {
                        if !line.is_empty() {
                            let _ = writeln!(self.out, "  {line}");
                        }
                    }
                    let _ = write!(self.out, "  {},", inline(item));
                    self.after(notes.after.as_deref());
                }
                self.out.push(']');
            }
            _ => self.out.push_str(&inline(node)),
        }
    }
}

fn is_table(node: &Node) -> bool {
    matches!(node.value, Value::Table(_))
}

fn fits(node: &Node) -> bool {
    inline(node).len() <= INLINE_WIDTH
}

/// A value on one line: strings quoted, tables as `{ k = v }`.
fn inline(node: &Node) -> String {
    match &node.value {
        Value::Null => "\"\"".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => format!("{f:?}"),
        Value::String(s) => quoted(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Table(entries) => {
            let entries: Vec<String> = entries
                .iter()
                .filter(|e| !matches!(e.value.value, Value::Null))
                .map(|e| format!("{} = {}", key(&e.key), inline(&e.value)))
                .collect();
            if entries.is_empty() {
                "{}".to_owned()
            } else {
                format!("{{ {} }}", entries.join(", "))
            }
        }
    }
}

fn key(text: &str) -> String {
    let bare = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare { text.to_owned() } else { quoted(text) }
}

/// A TOML basic string.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        escape(c, &mut out);
    }
    out.push('"');
    out
}

fn escape(c: char, out: &mut String) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        c if c.is_control() => {
            let _ = write!(out, "\\u{:04X}", c as u32);
        }
        c => out.push(c),
    }
}

/// A multi-line basic string (`"""`), its lines as written.
fn multi_line(text: &str) -> String {
    let mut out = String::from("\"\"\"\n");
    let mut quotes = 0;
    for c in text.chars() {
        match c {
            '\n' => out.push('\n'),
            // Three quotes in a row would close the string.
            '"' if quotes == 2 => {
                out.push_str("\\\"");
                quotes = 0;
                continue;
            }
            '"' => out.push('"'),
            c => escape(c, &mut out),
        }
        quotes = if c == '"' { quotes + 1 } else { 0 };
    }
    // A quote last would run into the closing ones.
    if out.ends_with('"') {
        out.pop();
        out.push_str("\\\"");
    }
    out.push_str("\"\"\"");
    out
}
