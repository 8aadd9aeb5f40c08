//! A document's comments, each tied to the key or list item it stands above
//! or beside, so that a writer of another format puts it back there.
//!
//! TOML and YAML both write `#` comments on their own lines and after a
//! value. A comment block belongs to the first key or item below it (blank
//! lines kept between comments); a comment after a value on its line belongs
//! to that key or item. A comment left over (after the last key, or inside a
//! table written on one line) goes above the next key, or to the end of the
//! file. The comments above the first key, up to a blank line, are the
//! file's own; a `#:schema` (taplo) or `yaml-language-server` line names the
//! JSON Schema and is written back in the target's form.

use std::collections::HashMap;

use crate::tree::{Node, Value};

/// The comments tied to one key or item.
#[derive(Debug, Default, Clone)]
pub(super) struct Notes {
    /// Comment lines (from `#`) above it; an empty line for a blank line.
    pub(super) above: Vec<String>,
    /// The comment after its value on its line (from `#`).
    pub(super) after: Option<String>,
}

/// What comments tie to: a key (by its offset) or a list's item (by its
/// offset, which a YAML item shares with its first key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Place {
    Key(usize),
    Item(usize),
}

#[derive(Debug, Default)]
pub(super) struct Comments {
    at: HashMap<Place, Notes>,
    /// The file's own comments, before everything.
    pub(super) header: Vec<String>,
    /// Comments after the last key.
    pub(super) footer: Vec<String>,
    /// The JSON Schema a schema line named, as written (`../schemas/x.json`).
    pub(super) schema: Option<String>,
}

impl Comments {
    pub(super) fn of(&self, place: Place) -> Option<&Notes> {
        self.at.get(&place)
    }

    /// The notes of `offset`, taken out (a writer that drops the key keeps
    /// its comments by giving them to another).
    pub(super) fn take(&mut self, place: Place) -> Notes {
        self.at.remove(&place).unwrap_or_default()
    }

    pub(super) fn put(&mut self, place: Place, notes: Notes) {
        let slot = self.at.entry(place).or_default();
        slot.above.extend(notes.above);
        if slot.after.is_none() {
            slot.after = notes.after;
        }
    }

    /// Whether any key or item under `node` (itself excluded) has comments.
    pub(super) fn inside(&self, node: &Node) -> bool {
        match &node.value {
            Value::Table(entries) => entries.iter().any(|e| {
                self.at.contains_key(&Place::Key(e.key_span.start)) || self.inside(&e.value)
            }),
            Value::Array(items) => items
                .iter()
                .any(|i| self.at.contains_key(&Place::Item(i.span.start)) || self.inside(i)),
            _ => false,
        }
    }
}

/// A place comments tie to: where it starts, where the text after which a
/// comment on its line is its own ends, and its line.
struct Anchor {
    place: Place,
    offset: usize,
    after_from: usize,
    /// Inside a table or list written in brackets on its parent's line
    /// (`limits = { cpu = "none" }`): a comment above is the parent's.
    bracketed: bool,
}

/// The comments of `text`, tied to the keys and items of `root` (parsed from
/// `text`).
pub(super) fn read(text: &str, root: &Node) -> Comments {
    let lines = Lines::new(text);
    let mut anchors = Vec::new();
    collect(text, root, &mut anchors);
    let mut comments = Comments::default();
    let mut claimed = vec![false; lines.starts.len()];
    let mut after_taken = vec![false; lines.starts.len()];
    // Line by line; of the keys and items sharing a line (`[volumes.data]`,
    // `- key: a`), the innermost first: the comment above is about it.
    let mut order: Vec<(usize, bool, std::cmp::Reverse<usize>)> = anchors
        .iter()
        .enumerate()
        .map(|(i, a)| (lines.of(a.offset), a.bracketed, std::cmp::Reverse(i)))
        .collect();
    order.sort_unstable();
    for &(_, _, std::cmp::Reverse(i)) in &order {
        let anchor = &anchors[i];
        let line = lines.of(anchor.offset);
        let mut notes = Notes::default();
        // The block above: comment and blank lines up to other text.
        let mut l = line;
        let mut block = Vec::new();
        while l > 0 {
            l -= 1;
            let t = lines.text(text, l).trim();
            if claimed[l] || !(t.is_empty() || t.starts_with('#')) {
                break;
            }
            claimed[l] = true;
            block.push(t.to_owned());
        }
        block.reverse();
        notes.above = tidy(block);
        // After the value on its line, once per line (a parent's key and
        // its child's can share one: `[volumes.data]`).
        let after_line = lines.of(anchor.after_from);
        if !after_taken[after_line] {
            let rest = &text[anchor.after_from..lines.end(text, after_line)];
            let rest = rest.trim_start_matches([' ', '\t', ':', ']', ',']);
            if rest.starts_with('#') {
                notes.after = Some(rest.trim_end().to_owned());
                after_taken[after_line] = true;
            }
        }
        if !notes.above.is_empty() || notes.after.is_some() {
            comments.put(anchor.place, notes);
        }
    }
    let first = order
        .first()
        .map(|&(_, _, std::cmp::Reverse(i))| anchors[i].place);
    leftovers(text, &lines, &anchors, &mut claimed, &mut comments);
    split_header(first, &mut comments);
    comments
}

/// Blank lines at the block's start dropped, runs of them made one.
fn tidy(block: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in block {
        if line.is_empty() && out.last().is_none_or(String::is_empty) {
            continue;
        }
        out.push(line);
    }
    out
}

/// Comment lines no key or item took: above the next key, or at the end.
fn leftovers(
    text: &str,
    lines: &Lines,
    anchors: &[Anchor],
    claimed: &mut [bool],
    comments: &mut Comments,
) {
    let mut starts: Vec<(usize, Place)> = anchors
        .iter()
        .map(|a| (lines.of(a.offset), a.place))
        .collect();
    starts.sort_by_key(|&(line, _)| line);
    let mut pending: HashMap<Place, Vec<String>> = HashMap::new();
    for (l, taken) in claimed.iter_mut().enumerate() {
        let t = lines.text(text, l).trim();
        if *taken || !t.starts_with('#') {
            continue;
        }
        *taken = true;
        let next = starts.partition_point(|&(line, _)| line <= l);
        match starts.get(next) {
            Some(&(_, place)) => pending.entry(place).or_default().push(t.to_owned()),
            None => comments.footer.push(t.to_owned()),
        }
    }
    for (place, mut lines) in pending {
        let notes = comments.at.entry(place).or_default();
        lines.append(&mut notes.above);
        notes.above = lines;
    }
}

/// The first key's comments up to the last blank line are the file's; the
/// schema line, among them or just above the first key, is kept apart.
fn split_header(first: Option<Place>, comments: &mut Comments) {
    match first.and_then(|place| comments.at.get_mut(&place)) {
        Some(notes) => {
            if let Some(blank) = notes.above.iter().rposition(String::is_empty) {
                let rest = notes.above.split_off(blank + 1);
                notes.above.pop();
                comments.header = std::mem::replace(&mut notes.above, rest);
            }
            if !comments.header.iter().any(|l| schema_of(l).is_some())
                && let Some(i) = notes.above.iter().position(|l| schema_of(l).is_some())
            {
                let line = notes.above.remove(i);
                comments.header.push(line);
            }
        }
        None if first.is_none() => comments.header = std::mem::take(&mut comments.footer),
        None => {}
    }
    take_schema(comments);
}

fn take_schema(comments: &mut Comments) {
    if let Some(i) = comments.header.iter().position(|l| schema_of(l).is_some()) {
        let line = comments.header.remove(i);
        comments.schema = schema_of(&line).map(str::to_owned);
        while comments.header.first().is_some_and(String::is_empty) {
            comments.header.remove(0);
        }
    }
}

/// The schema a comment line names: `#:schema PATH` (taplo, even-better-toml)
/// or `# yaml-language-server: $schema=PATH`.
pub(super) fn schema_of(line: &str) -> Option<&str> {
    if let Some(path) = line.strip_prefix("#:schema") {
        return Some(path.trim()).filter(|p| !p.is_empty());
    }
    let rest = line.strip_prefix('#')?.trim_start();
    let path = rest
        .strip_prefix("yaml-language-server:")?
        .trim_start()
        .strip_prefix("$schema=")?;
    Some(path.trim()).filter(|p| !p.is_empty())
}

/// Every key and item under `node`, parents before children.
fn collect(text: &str, node: &Node, out: &mut Vec<Anchor>) {
    collect_under(text, node, None, out);
}

/// [`collect`], `bracket` the span of the bracketed collection the keys are
/// in, if any.
fn collect_under(text: &str, node: &Node, bracket: Option<(usize, usize)>, out: &mut Vec<Anchor>) {
    let inner = if starts_bracketed(text, node) {
        Some((node.span.start, node.span.end))
    } else {
        bracket
    };
    let bracketed =
        |offset: usize| inner.is_some_and(|(start, end)| offset > start && offset < end);
    match &node.value {
        Value::Table(entries) => {
            for entry in entries {
                out.push(Anchor {
                    place: Place::Key(entry.key_span.start),
                    offset: entry.key_span.start,
                    after_from: after_from(text, entry.key_span.end, &entry.value),
                    bracketed: bracketed(entry.key_span.start),
                });
                collect_under(text, &entry.value, inner, out);
            }
        }
        Value::Array(items) => {
            for item in items {
                out.push(Anchor {
                    place: Place::Item(item.span.start),
                    offset: item.span.start,
                    after_from: after_from(text, item.span.start, item),
                    bracketed: bracketed(item.span.start),
                });
                collect_under(text, item, inner, out);
            }
        }
        _ => {}
    }
}

fn starts_bracketed(text: &str, node: &Node) -> bool {
    matches!(node.value, Value::Table(_) | Value::Array(_))
        && text
            .as_bytes()
            .get(node.span.start)
            .is_some_and(|b| matches!(b, b'[' | b'{'))
}

/// Where a comment of this value's own starts to be looked for: after a
/// scalar or a collection written in brackets, else after its key.
fn after_from(text: &str, key_end: usize, value: &Node) -> usize {
    let flow = match &value.value {
        Value::Table(_) | Value::Array(_) => starts_bracketed(text, value),
        _ => true,
    };
    let end = if flow { value.span.end } else { key_end };
    end.max(key_end).min(text.len())
}

/// Line starts of a text.
struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        if starts.last() == Some(&text.len()) && !text.is_empty() {
            starts.pop();
        }
        Lines { starts }
    }

    fn of(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    }

    fn end(&self, text: &str, line: usize) -> usize {
        self.starts
            .get(line + 1)
            .map_or(text.len(), |next| next - 1)
    }

    fn text<'t>(&self, text: &'t str, line: usize) -> &'t str {
        let start = self.starts[line];
        text[start..self.end(text, line)].trim_end_matches('\r')
    }
}
