//! A stream's documents found by their markers alone, without parsing: so
//! that each can be read on its own (on any core, and dropped once checked).
//!
//! A line that begins with `---` or `...` followed by a space, a tab or its
//! end is a document marker wherever it stands: YAML 1.2 forbids such a
//! line inside any content (§9.1.2, `c-forbidden`), so a reader ends the
//! document there or fails. A directive (`%YAML`) belongs to the document
//! after it, which this split cannot tell from content; a stream with one
//! is not split. A guess here never decides a result: a caller reads the
//! whole stream as one part whenever the parts do not read as predicted.

use std::ops::Range;

/// One document's text in a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// Bytes of the stream: from its `---` line (if it has one) to the next
    /// document's, or to the end of its `...` line.
    pub range: Range<usize>,
    /// Whether it holds nothing but markers, comments and blank lines: a
    /// reader finds no value in it (an empty document, which is skipped).
    pub empty: bool,
}

/// The documents of `text`, in order; `None` for a stream with a directive.
pub fn parts(text: &str) -> Option<Vec<Part>> {
    let bytes = text.as_bytes();
    let mut parts = Vec::new();
    let mut start = 0;
    // Only a line that begins with `-`, `.` or `%` can be a marker or a
    // directive: the others are passed over at memchr's pace.
    let lines = std::iter::once(0).chain(memchr::memchr_iter(b'\n', bytes).map(|n| n + 1));
    for at in lines.filter(|&at| matches!(bytes.get(at), Some(b'-' | b'.' | b'%'))) {
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(text.len(), |n| at + n + 1);
        let line = &text[at..end];
        if line.starts_with('%') {
            return None;
        }
        if marker(line, "---").is_some() {
            if at > start {
                parts.push(part(text, start..at));
            }
            start = at;
        } else if marker(line, "...").is_some() {
            parts.push(part(text, start..end));
            start = end;
        }
    }
    if start < text.len() {
        parts.push(part(text, start..text.len()));
    }
    Some(parts)
}

/// The part of `text` at `range`, empty when no line of it holds a value
/// (read up to the first that does: most often the one after `---`).
fn part(text: &str, range: Range<usize>) -> Part {
    let mut lines = text[range.clone()].split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    let first = marker(first, "---").unwrap_or(first);
    let empty = blank(first) && lines.all(|line| blank(line) || marker(line, "...").is_some());
    Part { range, empty }
}

/// What follows a document marker `mark` at the start of `line`.
fn marker<'a>(line: &'a str, mark: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(mark)?;
    (rest.is_empty() || rest.starts_with([' ', '\t', '\r', '\n'])).then_some(rest)
}

/// Whether a line holds no value: blank, or a comment.
fn blank(line: &str) -> bool {
    let line = line.trim_start_matches([' ', '\t', '\r', '\n']);
    line.is_empty() || line.starts_with('#')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<(&str, bool)> {
        parts(text)
            .unwrap()
            .into_iter()
            .map(|p| (&text[p.range], p.empty))
            .collect()
    }

    #[test]
    fn a_stream_splits_at_its_markers() {
        assert_eq!(
            texts("a: 1\n---\nb: 2\n--- # c\n\n---\r\nc: |\n  --- x\n...\nd: 4"),
            [
                ("a: 1\n", false),
                ("---\nb: 2\n", false),
                ("--- # c\n\n", true),
                ("---\r\nc: |\n  --- x\n...\n", false),
                ("d: 4", false),
            ]
        );
        assert_eq!(texts("--- {a: 1}\n----\n"), [("--- {a: 1}\n----\n", false)]);
        assert_eq!(texts("# only\n"), [("# only\n", true)]);
        assert!(texts("").is_empty());
        assert_eq!(parts("%YAML 1.2\n---\na: 1\n"), None);
    }
}
