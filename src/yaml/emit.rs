//! Writes a [`Raw`] node back as block YAML with the same meaning: every
//! scalar keeps its tag and its text, and a plain scalar stays plain, so that
//! any YAML reader (1.1 or 1.2) resolves it as it resolved the input.
//!
//! Layout may change (flow collections become block ones, anchors are
//! expanded, comments are dropped); values never do. Past [`FLOW_FROM`]
//! columns a collection is written in flow style on one line, so that the
//! output grows with the input, not with the square of its depth.

use std::fmt::Write as _;

use granit_parser::{ScalarStyle, Tag};

use super::{Body, Raw};

/// The column past which collections are written in flow style (`{a: [1]}`):
/// block style indents every line by its depth, so a document nested a few
/// hundred levels deep would take hundreds of times its size.
pub const FLOW_FROM: usize = 64;

/// Appends `node` as a block sequence entry (`- ...`) at column `column`.
pub fn write_entry(out: &mut String, node: &Raw<'_>, column: usize) {
    write_indicated(out, "-", node, column, true);
}

/// `- node` or `? node` at `column`: the indicator, then the node indented
/// under it. `pad` is false when the line already reaches `column`.
fn write_indicated(
    out: &mut String,
    indicator: &str,
    node: &Raw<'_>,
    column: usize,
    pad_now: bool,
) {
    if pad_now {
        pad(out, column);
    }
    out.push_str(indicator);
    match &node.body {
        Body::Map(_) | Body::Seq(_) if column >= FLOW_FROM && flow_ok(node) => {
            out.push(' ');
            write_flow_tagged(out, node);
            out.push('\n');
        }
        Body::Map(entries) if !entries.is_empty() && node.tag.is_none() => {
            out.push(' ');
            write_entries(out, entries, column + 2, false);
        }
        Body::Seq(items) if !items.is_empty() && node.tag.is_none() => {
            out.push(' ');
            for (i, item) in items.iter().enumerate() {
                write_indicated(out, "-", item, column + 2, i > 0);
            }
        }
        _ => write_value(out, node, column + 2),
    }
}

/// The entries of a mapping, keys at `column`; the first one continues the
/// current line unless `pad_first`.
fn write_entries(out: &mut String, entries: &[(Raw<'_>, Raw<'_>)], column: usize, pad_first: bool) {
    for (i, (key, value)) in entries.iter().enumerate() {
        let pad_now = pad_first || i > 0;
        if let Some(key) = simple_key(key) {
            if pad_now {
                pad(out, column);
            }
            out.push_str(&key);
        } else {
            write_indicated(out, "?", key, column, pad_now);
            pad(out, column);
        }
        out.push(':');
        write_value(out, value, column + 2);
    }
}

/// After `key:`, `-` or `?`: a scalar or empty container on the same line, a
/// mapping or sequence on the following lines at `column`. Ends with a newline.
fn write_value(out: &mut String, node: &Raw<'_>, column: usize) {
    if let Some(tag) = &node.tag {
        out.push(' ');
        out.push_str(&tag_text(tag));
    }
    match &node.body {
        Body::Scalar(text, style) => {
            // Nothing after the key (or the tag): an empty plain scalar,
            // which an untagged reader takes as null.
            if text.is_empty() && *style == ScalarStyle::Plain {
                out.push('\n');
                return;
            }
            out.push(' ');
            write_scalar(out, text, *style, column);
        }
        Body::Map(_) | Body::Seq(_) if column >= FLOW_FROM && flow_ok(node) => {
            out.push(' ');
            write_flow(out, node);
            out.push('\n');
        }
        Body::Map(entries) if entries.is_empty() => out.push_str(" {}\n"),
        Body::Seq(items) if items.is_empty() => out.push_str(" []\n"),
        Body::Map(entries) => {
            out.push('\n');
            write_entries(out, entries, column, true);
        }
        Body::Seq(items) => {
            out.push('\n');
            for item in items {
                write_entry(out, item, column);
            }
        }
    }
}

/// Whether `node` can be written in flow style: every mapping key in it a
/// scalar.
fn flow_ok(node: &Raw<'_>) -> bool {
    match &node.body {
        Body::Scalar(..) => true,
        Body::Seq(items) => items.iter().all(flow_ok),
        Body::Map(entries) => entries
            .iter()
            .all(|(key, value)| matches!(key.body, Body::Scalar(..)) && flow_ok(value)),
    }
}

/// `node` in flow style, without its tag (written before it) and without a
/// newline. A plain scalar stays plain where flow context allows its text;
/// otherwise it is double-quoted, which keeps its meaning: a plain scalar
/// with a flow indicator (`,[]{}`) or a `:` is text to every reader.
fn write_flow(out: &mut String, node: &Raw<'_>) {
    match &node.body {
        Body::Scalar(text, style) => write_flow_scalar(out, text, *style),
        Body::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_flow_tagged(out, item);
            }
            out.push(']');
        }
        Body::Map(entries) => {
            out.push('{');
            for (i, (key, value)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_flow_tagged(out, key);
                out.push_str(": ");
                write_flow_tagged(out, value);
            }
            out.push('}');
        }
    }
}

fn write_flow_tagged(out: &mut String, node: &Raw<'_>) {
    if let Some(tag) = &node.tag {
        out.push_str(&tag_text(tag));
        out.push(' ');
    }
    write_flow(out, node);
}

fn write_flow_scalar(out: &mut String, text: &str, style: ScalarStyle) {
    let flow_plain = |text: &str| plain_ok(text) && !text.contains([',', '[', ']', '{', '}', ':']);
    match style {
        // An empty plain scalar: nothing, as in block style.
        ScalarStyle::Plain if text.is_empty() => {}
        ScalarStyle::Plain if flow_plain(text) => out.push_str(text),
        ScalarStyle::SingleQuoted if single_ok(text) => {
            out.push('\'');
            out.push_str(&text.replace('\'', "''"));
            out.push('\'');
        }
        _ => double_quoted(out, text),
    }
}

/// A scalar and its newline. Plain stays plain, single-quoted and
/// double-quoted stay quoted, block scalars become literal blocks, each where
/// the text allows; otherwise it is double-quoted, which holds any text.
fn write_scalar(out: &mut String, text: &str, style: ScalarStyle, indent: usize) {
    match style {
        ScalarStyle::Plain if plain_ok(text) => out.push_str(text),
        ScalarStyle::SingleQuoted if single_ok(text) => {
            out.push('\'');
            out.push_str(&text.replace('\'', "''"));
            out.push('\'');
        }
        ScalarStyle::Literal | ScalarStyle::Folded if literal_ok(text) => {
            write_literal(out, text, indent);
            return;
        }
        _ => double_quoted(out, text),
    }
    out.push('\n');
}

fn write_literal(out: &mut String, text: &str, indent: usize) {
    out.push('|');
    if text.starts_with(' ') {
        out.push('2');
    }
    let body = text.trim_end_matches('\n');
    match text.len() - body.len() {
        0 => out.push('-'),
        1 => {}
        _ => out.push('+'),
    }
    out.push('\n');
    for line in text.split_inclusive('\n') {
        if line != "\n" {
            pad(out, indent);
        }
        out.push_str(line);
    }
    if !text.ends_with('\n') {
        out.push('\n');
    }
}

/// A mapping key that fits on its line: a plain, single- or double-quoted
/// scalar, with its tag.
fn simple_key(key: &Raw<'_>) -> Option<String> {
    let Body::Scalar(text, style) = &key.body else {
        return None;
    };
    let mut out = String::new();
    if let Some(tag) = &key.tag {
        out.push_str(&tag_text(tag));
        out.push(' ');
    }
    if key.is_empty_null() {
        return None;
    }
    match style {
        ScalarStyle::Plain if plain_ok(text) => out.push_str(text),
        ScalarStyle::SingleQuoted if single_ok(text) => {
            let _ = write!(out, "'{}'", text.replace('\'', "''"));
        }
        _ => double_quoted(&mut out, text),
    }
    (out.len() < 1024).then_some(out)
}

/// The tag as a reader resolves it without `%TAG` directives.
fn tag_text(tag: &Tag) -> String {
    match tag.handle() {
        "tag:yaml.org,2002:" if tag_chars_ok(tag.suffix()) => format!("!!{}", tag.suffix()),
        "!" if tag_chars_ok(tag.suffix()) => format!("!{}", tag.suffix()),
        handle => format!("!<{handle}{}>", tag.suffix()),
    }
}

fn tag_chars_ok(suffix: &str) -> bool {
    suffix
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_.:/;?@&=+$#".contains(&b))
}

/// Text a plain scalar can carry in block context and give back unchanged.
pub fn plain_ok(text: &str) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    let second_is_space = text[first.len_utf8()..]
        .chars()
        .next()
        .is_none_or(|c| c == ' ' || c == '\t');
    let starts_ok = match first {
        '-' | '?' | ':' => !second_is_space,
        ',' | '[' | ']' | '{' | '}' | '#' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%'
        | '@' | '`' => false,
        _ => true,
    };
    starts_ok
        && !text.starts_with(' ')
        && !text.ends_with([' ', '\t', ':'])
        && !text.contains(": ")
        && !text.contains(":\t")
        && !text.contains(" #")
        && !text.contains("\t#")
        && text
            .chars()
            .all(|c| printable(c) && c != '\t' && c != '\u{feff}')
}

fn single_ok(text: &str) -> bool {
    !text.starts_with([' ', '\t'])
        && !text.ends_with([' ', '\t'])
        && text
            .chars()
            .all(|c| printable(c) && c != '\t' && c != '\u{feff}')
}

/// Text a literal block holds exactly: printable, no carriage return, no
/// line of only spaces (a literal block reads those as empty), and no
/// leading newline or tab.
fn literal_ok(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with(['\n', '\t'])
        && text
            .chars()
            .all(|c| c == '\n' || c == '\t' || (printable(c) && c != '\u{feff}'))
        && text
            .split('\n')
            .all(|line| line.is_empty() || !line.bytes().all(|b| b == b' ' || b == b'\t'))
}

/// YAML's printable set, without line breaks: not NEL (U+0085), which YAML
/// 1.2 prints but YAML 1.1 readers (PyYAML, go-yaml, so kyaml and kpt) read
/// as a line break, nor the line and paragraph separators.
fn printable(c: char) -> bool {
    matches!(c, ' '..='~' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
        && !matches!(c, '\u{2028}' | '\u{2029}')
}

/// `"text"` with every character outside YAML's printable set escaped.
pub fn double_quoted(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c if printable(c) && c != '\u{feff}' => out.push(c),
            c => crate::syntax::push_hex_escape(out, c),
        }
    }
    out.push('"');
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceId;
    use crate::yaml::{Limits, load};

    const LIMITS: Limits = Limits {
        depth: 100,
        documents: 1,
        nodes: 100_000,
        object_nodes: 100_000,
        aliased: 100_000,
        aliased_bytes: 1024 * 1024,
    };

    /// What a reader takes from a node: tags, and each scalar's text with
    /// whether it is plain (plain text is resolved by its content).
    fn meaning(raw: &Raw<'_>) -> String {
        let tag = raw
            .tag
            .as_ref()
            .map(|t| format!("{}{} ", t.handle(), t.suffix()));
        let tag = tag.unwrap_or_default();
        match &raw.body {
            Body::Scalar(text, style) => {
                // Text with a line break is a string in every YAML version,
                // however it is written.
                let plain =
                    *style == ScalarStyle::Plain && raw.tag.is_none() && !text.contains('\n');
                format!("{tag}{}{text:?}", if plain { "plain " } else { "" })
            }
            Body::Seq(items) => {
                let items: Vec<String> = items.iter().map(meaning).collect();
                format!("{tag}[{}]", items.join(", "))
            }
            Body::Map(entries) => {
                let entries: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{}: {}", meaning(k), meaning(v)))
                    .collect();
                format!("{tag}{{{}}}", entries.join(", "))
            }
        }
    }

    pub(crate) fn round_trip(text: &str) -> (String, String, String) {
        let before = load(SourceId(0), text, LIMITS).expect("test input is YAML");
        let mut out = String::new();
        write_entry(&mut out, &before[0], 0);
        let after = load(SourceId(0), &out, LIMITS)
            .unwrap_or_else(|e| panic!("output is not YAML: {e:?}\n{out}"));
        let Body::Seq(items) = &after[0].body else {
            panic!("not a list: {out}")
        };
        (meaning(&before[0]), meaning(&items[0]), out)
    }

    /// Past [`FLOW_FROM`] columns the rest is one flow line: a document
    /// 90 levels deep stays within three times its size, with its values.
    #[test]
    fn deep_nesting_is_written_in_flow_style_with_the_same_values() {
        let mut text = String::from("{a: 0644, b: [x, 'y z', \"q\\n\", ~, yes, ''], c: {}, d: []}");
        for _ in 0..90 {
            text = format!(
                "{{k: {text}, s: [plain, 'it''s', !!str 1, !!binary aGk=, a:b, '1,2', \"\"]}}"
            );
        }
        let deep = format!("top: {text}\n");
        let (before, after, out) = round_trip(&deep);
        // `a:b` is text to every reader, plain or quoted (it is quoted in flow).
        let text = |m: String| m.replace("plain \"a:b\"", "\"a:b\"");
        assert_eq!(text(before), text(after), "\n{out}");
        assert!(
            out.len() < 3 * deep.len(),
            "{} bytes for {}",
            out.len(),
            deep.len()
        );
    }

    #[test]
    fn every_value_comes_back_as_it_came_in() {
        let cases = [
            "a: 0644\nb: 010\nc: 0o17\nd: 0x1F\ne: 123456789012345678901234567890\n",
            "k: !!binary aGVsbG8=\nt: !!timestamp 2001-12-14\nl: !local x\nv: !<tag:example.com,2000:x> y\n",
            "yes: on\nno: off\n~: null\n'': \"\"\nempty:\nq: 'it''s'\nd: \"tab\\there\\u0000nul\"\n",
            "lit: |\n  line1\n    line2\n\nkeep: |+\n  a\n\n\nstrip: |-\n  a\nfold: >\n  folded\n  text\n\n  para\nindented: |2\n    starts with spaces\n",
            "flow: {a: [1, 2, {b: c}], 'x y': [], e: {}}\nnested: [[1, [2, []]], [], [{}]]\n",
            "? [complex, key]\n: value\n? {a: b}\n: - x\n  - y\n",
            "s: '- not a list'\nc: 'a: b'\nh: '# not a comment'\nt: \"trailing \"\ncolon: 'x:'\ndash: '-'\nq: '?'\nstar: '*x'\n",
            "multi: plain\n  continued\n\n  with a break\nspaces: '  '\nnl: \"\\n\"\ncr: \"a\\rb\"\nbidi: \"\\u202e\"\nc1: \"\\u009b\"\nbom: \"\\ufeff\"\n",
            "list:\n- - a\n  - b\n- !!map {x: 1}\n- !!seq [1]\n- !!str\n- \n- ~\n- !!binary\n- !odd(tag x\n",
            "anchors: &a {x: [1, 2]}\nagain: *a\n",
            "doc: ---\nend: ...\npct: '%x'\nat: '@x'\nbq: '`x'\nlong: \"a very long line that goes on and on and on and on and on and on and on and on and on and on and on\"\n",
        ];
        for case in cases {
            let (before, after, out) = round_trip(case);
            assert_eq!(before, after, "\ninput:\n{case}\noutput:\n{out}");
        }
    }
}
