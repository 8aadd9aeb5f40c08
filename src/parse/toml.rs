//! TOML text into a [`Node`] tree, through `toml`'s spanned `DeTable`.

use crate::diagnostic::{Diagnostic, codes};
use crate::source::{SourceId, Span};
use crate::tree::{Entry, Node, Value};

use super::{MAX_DEPTH, lowercase_first};

pub(super) fn parse_toml(id: SourceId, text: &str) -> Result<Node, Vec<Diagnostic>> {
    let (table, errors) = toml::de::DeTable::parse_recoverable(text);
    if !errors.is_empty() {
        let mut seen = std::collections::HashSet::new();
        // A string or array left open swallows what follows, and every error
        // after it is that one again: the rest is checked once it is closed.
        let mut errors = errors;
        errors.sort_by_key(|e| e.span().map_or(0, |r| r.start));
        let open_until = errors
            .iter()
            .position(|e| {
                let m = e.message();
                m.contains("unclosed")
                    || m.contains("invalid basic string")
                    || m.contains("invalid literal string")
                    || super::syntax_help::array_left_open(
                        &lowercase_first(m),
                        text,
                        e.span().map_or(0, |r| r.start),
                    )
                    .is_some()
            })
            .map_or(errors.len(), |i| i + 1);
        return Err(errors[..open_until]
            .iter()
            .filter_map(|error| {
                let message = lowercase_first(error.message().trim().trim_end_matches('.'));
                let range = match error.span() {
                    Some(range) => range,
                    // The parser's own limit on a dotted key of thousands of
                    // parts comes without a place: find the key.
                    None if message.contains("recursion") => longest_dotted_key(text),
                    None => 0..0,
                };
                // The parser goes on after an error, and what it finds next on
                // the same line is that error again: one per line.
                let line = text
                    .get(..range.start)
                    .map_or(0, |t| t.matches('\n').count());
                seen.insert(line).then(|| {
                    if message.contains("duplicate key") {
                        return duplicate_key(id, text, &table, range.clone());
                    }
                    // An array left open, read on into the next key: say so, as
                    // the parser says it of one left open at the end.
                    let left_open =
                        super::syntax_help::array_left_open(&message, text, range.start);
                    if let Some((help, opened)) = left_open {
                        return Diagnostic::error(
                            codes::PARSE_TOML,
                            Span::new(id, opened, opened + 1),
                            "invalid TOML: this array is never closed",
                        )
                        .with_secondary(
                            Span::new(id, range.start, range.end),
                            "read as one more element",
                        )
                        .with_help(help);
                    }
                    let d = Diagnostic::error(
                        codes::PARSE_TOML,
                        Span::new(id, range.start, range.end),
                        format!("invalid TOML: {message}"),
                    );
                    let written = text.get(range.clone()).unwrap_or("").trim();
                    if message.contains("recursion") {
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
                        // The value written out quoted, when it is short enough to
                        // read on one line; a long run of text gets the rule only.
                        if written.contains('\n') || written.chars().nth(60).is_some() {
                            d.with_help("put text in double quotes: `key = \"text\"`")
                        } else {
                            d.with_help(format!("quote it: `\"{written}\"`"))
                        }
                    } else {
                        match super::syntax_help::toml_help(&message, text, range) {
                            Some(help) => d.with_help(help),
                            None => d,
                        }
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

/// The key (of a `key = value` line or a `[table]` header) with the most
/// dots outside quotes: where a dotted key nests too deep.
fn longest_dotted_key(text: &str) -> std::ops::Range<usize> {
    let mut best = (0, 0..0);
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let (mut dots, mut quote, mut end) = (0usize, None, line.len());
        for (i, c) in line.char_indices() {
            match (quote, c) {
                (None, '"' | '\'') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, '.') => dots += 1,
                (None, '=' | ']' | '#') => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        if dots > best.0 {
            let start = line.len() - line.trim_start().len();
            best = (dots, offset + start..offset + end.max(start));
        }
        offset += line.len();
    }
    best.1
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

/// A key set twice: named, with where it was first set. toml's partial
/// table still holds the first one.
fn duplicate_key(
    id: SourceId,
    text: &str,
    table: &toml::Spanned<toml::de::DeTable<'_>>,
    range: std::ops::Range<usize>,
) -> Diagnostic {
    let written = text.get(range.clone()).unwrap_or("").trim();
    let key = written
        .trim_start_matches('[')
        .trim_end_matches(']')
        .rsplit('.')
        .next()
        .unwrap_or(written)
        .trim()
        .trim_matches('"')
        .trim_matches('\'');
    let mut first = None;
    earlier(table.get_ref(), key, range.start, &mut first);
    // A table header set twice keeps the later header's span in the table:
    // find the first header with the same text.
    if first.is_none() {
        let header = format!("[{written}]");
        let mut offset = 0;
        for line in text[..range.start.min(text.len())].split_inclusive('\n') {
            let trimmed = line.trim();
            if trimmed == header || trimmed.starts_with(&format!("{header} ")) {
                let start = offset + line.find('[').unwrap_or(0) + 1;
                first = Some(start..start + written.len());
                break;
            }
            offset += line.len();
        }
    }
    let d = Diagnostic::error(
        codes::PARSE_TOML,
        Span::new(id, range.start, range.end),
        format!("`{key}` is set twice"),
    )
    .with_label("set again here")
    .with_help("a key may be set once per table: remove one of them");
    match first {
        Some(first) => d.with_secondary(Span::new(id, first.start, first.end), "first set here"),
        None => d,
    }
}

/// The last place before `before` where `key` is a key, anywhere in `table`.
fn earlier(
    table: &toml::de::DeTable<'_>,
    key: &str,
    before: usize,
    found: &mut Option<std::ops::Range<usize>>,
) {
    for (k, value) in table {
        let span = k.span();
        if k.get_ref() == key
            && span.start < before
            && found.as_ref().is_none_or(|f| f.start < span.start)
        {
            *found = Some(span);
        }
        match value.get_ref() {
            toml::de::DeValue::Table(inner) => earlier(inner, key, before, found),
            toml::de::DeValue::Array(items) => {
                for item in items {
                    if let toml::de::DeValue::Table(inner) = item.get_ref() {
                        earlier(inner, key, before, found);
                    }
                }
            }
            _ => {}
        }
    }
}
