//! What to write instead, for a TOML or YAML syntax error: the parsers say
//! what they expected, which a user who wrote YAML in a TOML file (or the
//! reverse) cannot act on. Each help is read from the line the error is on.

/// The line holding `offset` (without its newline), and where it starts.
fn line_at(text: &str, offset: usize) -> (&str, usize) {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    (text[start..end].trim_end_matches('\r'), start)
}

/// The line written fixed, when short enough to read in a help.
fn written(line: &str) -> Option<&str> {
    let line = line.trim();
    (!line.is_empty() && line.chars().count() <= 60 && !line.contains('`')).then_some(line)
}

/// `key: value` in a TOML file: the key, and the value after the colon.
fn yaml_style_pair(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.trim().split_once(':')?;
    let key = key.trim();
    let bare = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    (!key.is_empty() && key.chars().all(bare)).then(|| (key, value.trim()))
}

/// Help for `toml`'s `message` at `range` of `text`.
pub(super) fn toml_help(
    message: &str,
    text: &str,
    range: std::ops::Range<usize>,
) -> Option<String> {
    let (line, line_start) = line_at(text, range.start);
    let token = text.get(range.clone()).unwrap_or("").trim();
    let here = text.get(range.start..).unwrap_or("");
    if let Some(comment) = here.strip_prefix("//") {
        let comment = comment.lines().next().unwrap_or("").trim();
        return Some(match written(&format!("# {comment}")) {
            Some(fixed) => format!("TOML comments start with `#`, not `//`: write `{fixed}`"),
            None => "TOML comments start with `#`, not `//`".to_owned(),
        });
    }
    if let Some(help) = unquoted_key(message, line, range.start - line_start) {
        return Some(help);
    }
    if !line.contains('=')
        && let Some((key, value)) = yaml_style_pair(line)
    {
        let typed = value.parse::<f64>().is_ok()
            || matches!(value, "true" | "false")
            || value.starts_with(['"', '\'', '[', '{']);
        let fixed = if value.is_empty() {
            format!("[{key}]")
        } else if typed {
            format!("{key} = {value}")
        } else {
            format!("{key} = \"{value}\"")
        };
        return Some(match written(&fixed) {
            Some(fixed) => {
                format!("TOML sets a key with `=`, not `:` (that is YAML): write `{fixed}`")
            }
            None => {
                "TOML sets a key with `=`, not `:` (that is YAML): write `key = value`".to_owned()
            }
        });
    }
    if message.contains("expected `=`") && !line.contains('=') {
        let mut parts = line.trim().splitn(2, char::is_whitespace);
        return Some(match (parts.next(), parts.next().map(str::trim)) {
            (Some(key), Some(value)) if !value.is_empty() => {
                match written(&format!("{key} = {value}")) {
                    Some(fixed) => {
                        format!("a key and its value are joined by `=`: write `{fixed}`")
                    }
                    None => "a key and its value are joined by `=`: write `key = value`".to_owned(),
                }
            }
            _ => {
                "a key needs a value: write `key = value`, or `[name]` to start a table".to_owned()
            }
        });
    }
    value_help(message, token).or_else(|| unclosed_help(message, line))
}

/// A bare key with `/` (a label's or a resource's name, `nvidia.com/gpu`):
/// TOML takes it quoted, and a bare dotted key makes nested tables.
fn unquoted_key(message: &str, line: &str, at: usize) -> Option<String> {
    if !message.contains("invalid unquoted key") {
        return None;
    }
    let before = line.get(..at)?;
    let start = before.rfind(['{', ',']).map_or(0, |i| i + 1);
    let rest = line.get(start..)?;
    let key = rest.split('=').next()?.trim();
    if key.is_empty() || key.contains(['"', '\'', ' ']) || !key.contains(['/', '.']) {
        return None;
    }
    Some(format!(
        "a key with `/` or `.` in its name goes in quotes: `\"{key}\"` (a bare `a.b` is the key `b` of a table `a`)"
    ))
}

/// "missing comma" at the start of a line that starts a key or a table: the
/// array above it was never closed, and the fix is a `]`, not a `,`. The
/// help, and where that array opens (its `[`), where the error belongs.
pub(super) fn array_left_open(message: &str, text: &str, offset: usize) -> Option<(String, usize)> {
    let (line, start) = line_at(text, offset);
    let indent = line.len() - line.trim_start().len();
    if !message.contains("missing comma") || offset != start + indent {
        return None;
    }
    let body = line.trim();
    let key = body.split_once('=').map(|(k, _)| k.trim()).filter(|k| {
        !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '"' | '\''))
    });
    let header = body.starts_with('[') && body.ends_with(']') && !body.contains([',', '"']);
    if key.is_none() && !header {
        return None;
    }
    let above = text[..start]
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .last()?;
    let (last, open) = (above.0 + 1, above.1.trim_end());
    let opened = unmatched_bracket(&text[..start]).unwrap_or(start);
    let number = text[..opened].matches('\n').count() + 1;
    let next = key.map_or_else(|| format!("`{body}`"), |k| format!("`{k}`"));
    let close = match written(&format!("{open}]")) {
        Some(closed) => format!("`{closed}`"),
        None => "with `]`".to_owned(),
    };
    let help = if number == last {
        format!("this array has no `]`, so {next} was read as one more element: close it, {close}")
    } else {
        format!(
            "this array has no `]`, so {next} was read as one more element: close it after its last element, on line {last}: {close}"
        )
    };
    Some((help, opened))
}

/// The offset of the last `[` in `text` that no `]` closes, outside quoted
/// strings and comments.
fn unmatched_bracket(text: &str) -> Option<usize> {
    let mut open: Vec<usize> = Vec::new();
    for (line_start, line) in text.split_inclusive('\n').scan(0, |at, l| {
        let start = *at;
        *at += l.len();
        Some((start, l))
    }) {
        let mut quote: Option<char> = None;
        for (i, c) in line.char_indices() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (None, '"' | '\'') => quote = Some(c),
                (None, '#') => break,
                (None, '[') => open.push(line_start + i),
                (None, ']') => {
                    open.pop();
                }
                // Inside a string, or any other character.
                _ => {}
            }
        }
    }
    open.pop()
}

/// Help for a value TOML does not know (`True`, a bare word).
fn value_help(message: &str, token: &str) -> Option<String> {
    if message.contains("invalid boolean") {
        return Some(match token {
            "True" | "TRUE" | "False" | "FALSE" => format!(
                "TOML's booleans are lowercase: write `{}`",
                token.to_ascii_lowercase()
            ),
            "yes" | "Yes" | "on" | "On" => {
                "TOML's booleans are `true` and `false`: write `true`".to_owned()
            }
            "no" | "No" | "off" | "Off" => {
                "TOML's booleans are `true` and `false`: write `false`".to_owned()
            }
            _ if !token.is_empty()
                && token.chars().count() <= 60
                && !token.contains(['"', '`']) =>
            {
                format!("text goes in double quotes: `\"{token}\"`")
            }
            _ => "text goes in double quotes: `key = \"text\"`".to_owned(),
        });
    }
    None
}

/// Help for a header, array, table or string left open.
fn unclosed_help(message: &str, line: &str) -> Option<String> {
    if message.contains("unclosed table") {
        let header = line.trim().trim_end_matches(']');
        return Some(match written(header) {
            Some(header) if header.starts_with("[[") => {
                format!("close the header: `{header}]]`")
            }
            Some(header) => format!("close the header: `{header}]`"),
            None => "a table header is one line: `[name]`".to_owned(),
        });
    }
    if message.contains("unclosed array") {
        return Some(
            "close the array with `]`; it may span lines, with a `,` after each element".to_owned(),
        );
    }
    if message.contains("unclosed inline table") {
        return Some("close the inline table with `}`: `{ key = \"value\" }`".to_owned());
    }
    let apostrophe = line.matches('\'').count() % 2 == 1
        && (message.contains("missing comma") || message.contains("quote"));
    if apostrophe
        || message.contains("missing opening quote")
        || message.contains("invalid literal string")
    {
        return Some(
            "a '…' string cannot hold `'`: put that text in double quotes, `\"it's\"`".to_owned(),
        );
    }
    if message.contains("missing comma") {
        return Some("separate the elements with `,`: `[\"a\", \"b\"]`".to_owned());
    }
    if message.contains("invalid basic string") {
        return Some(
            "close the string with `\"` on the same line; text over several lines goes in `\"\"\"…\"\"\"`"
                .to_owned(),
        );
    }
    None
}

/// The indentation (in spaces) of the nearest line above `start` that is
/// not blank or a comment.
fn indent_above(text: &str, start: usize) -> Option<usize> {
    text[..start].lines().rev().find_map(|l| {
        let body = l.trim_start_matches(' ');
        (!body.trim().is_empty() && !body.starts_with('#')).then(|| l.len() - body.len())
    })
}

/// Help for the YAML parser's `message` at `offset` of `text`.
pub(super) fn yaml_help(message: &str, text: &str, offset: usize) -> Option<String> {
    let (line, start) = line_at(text, offset);
    if message.contains("found a tab") || (line.contains('\t') && message.contains("indentation")) {
        return Some(
            "YAML indents with spaces, never tabs: replace the tab with spaces".to_owned(),
        );
    }
    if message.contains("simple key expected ':'")
        || message.contains("could not find expected ':'")
    {
        if let Some((key, value)) = line.trim().split_once('=') {
            return Some(
                match written(&format!("{}: {}", key.trim(), value.trim())) {
                    Some(fixed) => format!(
                        "YAML sets a key with `: `, not `=` (that is TOML): write `{fixed}`"
                    ),
                    None => "YAML sets a key with `: `, not `=` (that is TOML): write `key: value`"
                        .to_owned(),
                },
            );
        }
        return Some("a key is followed by `: ` and its value: `key: value`".to_owned());
    }
    if message.contains("did not find expected key")
        || message.contains("did not find expected '-' indicator")
    {
        let here = line.len() - line.trim_start_matches(' ').len();
        return Some(match indent_above(text, start) {
            Some(above) if above != here => format!(
                "this line is indented {here} space{} and the line above {above}: a key of the same mapping lines up with its siblings",
                if here == 1 { "" } else { "s" }
            ),
            _ => {
                "this line does not line up with a key above it: indent each key like its siblings"
                    .to_owned()
            }
        });
    }
    if message.contains("mapping values are not allowed") {
        let value = line.split_once(": ").map(|(_, v)| v.trim());
        return Some(match value.and_then(written) {
            Some(value) if !value.contains('"') => {
                format!("a value holding `: ` must be quoted: `\"{value}\"`")
            }
            _ => "a value holding `: ` must be quoted: `key: \"a: b\"`".to_owned(),
        });
    }
    if message.contains("block sequence entries are not allowed") {
        return Some(
            "a `- item` list starts on the next line, indented under its key; or write it on one line, `[a, b]`"
                .to_owned(),
        );
    }
    if message.contains("unclosed bracket '{'")
        || message.contains("did not find expected ',' or '}'")
    {
        return Some(
            "close the mapping with `}`, with a `,` between entries: `{a: 1, b: 2}`".to_owned(),
        );
    }
    if message.contains("unclosed bracket") || message.contains("did not find expected ',' or ']'")
    {
        return Some("close the list with `]`, with a `,` between elements: `[a, b]`".to_owned());
    }
    if message.contains("quoted scalar") {
        return Some(
            "a quoted string runs to its closing quote: close each `\"` and `'`".to_owned(),
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toml(text: &str, token: &str, message: &str) -> String {
        let at = text.find(token).unwrap();
        toml_help(message, text, at..at + token.len()).unwrap()
    }

    #[test]
    fn toml_helps_write_the_line_fixed() {
        assert!(toml("replicas: 2\n", ":", "invalid unquoted key").ends_with("`replicas = 2`"));
        assert!(toml("image: a/b:1\n", ":", "x").ends_with("`image = \"a/b:1\"`"));
        assert!(toml("[resources\n", "\n", "unclosed table").ends_with("`[resources]`"));
        assert!(toml("a = True\n", "True", "invalid boolean").ends_with("`true`"));
        assert!(toml("a = two\n", "two", "invalid boolean").ends_with("`\"two\"`"));
        assert!(toml("args = ['it's']\n", "s", "missing comma").contains("double quotes"));
        assert!(
            toml("replicas 2\n", "2", "key with no value, expected `=`")
                .ends_with("`replicas = 2`")
        );
    }

    #[test]
    fn yaml_helps_read_the_line() {
        let help = yaml_help("simple key expected ':'", "spec:\n  replicas = 2\n", 8).unwrap();
        assert!(help.ends_with("`replicas: 2`"), "{help}");
        let text = "spec:\n  a: 1\n   b: 2\n";
        let help = yaml_help("did not find expected key", text, text.find('b').unwrap()).unwrap();
        assert!(
            help.contains("indented 3 spaces and the line above 2"),
            "{help}"
        );
        let text = "command: torchrun: x\n";
        let help = yaml_help("mapping values are not allowed", text, 17).unwrap();
        assert!(help.ends_with("`\"torchrun: x\"`"), "{help}");
    }
}
