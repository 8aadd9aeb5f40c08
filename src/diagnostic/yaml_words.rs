//! A help written in TOML's words, said in YAML's for a YAML file: the
//! rules name a fix as TOML writes it (`replicas = 2`, `nProcPerNode =
//! "gpu"` in `[master]`), and a spec written in YAML is answered in its own
//! syntax (`replicas: 2`, under `master`). Only code spans of the form
//! `KEY = VALUE` and table names in brackets change; prose and commands
//! stay as they are.

/// `help`, a TOML-worded text, in YAML's words.
pub fn in_yaml(help: &str) -> String {
    let mut out = String::with_capacity(help.len());
    let mut rest = help;
    while let Some(open) = rest.find('`') {
        let (before, after) = rest.split_at(open);
        let Some(close) = after[1..].find('`') else {
            break;
        };
        let code = &after[1..=close];
        out.push_str(&table_words(before, code));
        out.push('`');
        out.push_str(&said(code));
        out.push('`');
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    out
}

/// One code span in YAML's words, or as it is.
fn said(code: &str) -> String {
    if let Some(text) = entry(code) {
        return text;
    }
    // `[master] nProcPerNode = "gpu"`: the key nested in its table.
    if let Some((header, line)) = code.split_once("] ")
        && let Some(name) = table(&format!("{header}]"))
        && let Some(text) = entry(&format!("{name}.{line}"))
    {
        return text;
    }
    // `{ configMap = "c", key = "k" }`: an inline table alone.
    if code.starts_with('{') && code.contains(" = ") {
        return flow(code).unwrap_or_else(|| code.to_owned());
    }
    table(code).unwrap_or(code).to_owned()
}

/// The prose before a code span: TOML's "in `[table]`" is YAML's "under".
fn table_words(before: &str, code: &str) -> String {
    match before.strip_suffix("in ") {
        Some(head) if table(code).is_some() => format!("{head}under "),
        _ => before.to_owned(),
    }
}

/// `[table]` or `[[list]]`: the table's dotted name.
fn table(code: &str) -> Option<&str> {
    let name = code
        .strip_prefix("[[")
        .and_then(|c| c.strip_suffix("]]"))
        .or_else(|| code.strip_prefix('[').and_then(|c| c.strip_suffix(']')))?;
    name.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .then_some(name)
        .filter(|n| !n.is_empty())
}

/// `key = value` (a dotted key nested) as YAML writes it on one line.
fn entry(code: &str) -> Option<String> {
    let (key, value) = code.split_once(" = ")?;
    let bare = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
    };
    let quoted = key.len() >= 2 && key.starts_with('"') && key.ends_with('"');
    let parts: Vec<&str> = if quoted {
        vec![key]
    } else {
        key.split('.').collect()
    };
    if !quoted && !parts.iter().all(|p| bare(p)) {
        return None;
    }
    let mut text = flow(value)?;
    for part in parts.iter().skip(1).rev() {
        text = format!("{{{part}: {text}}}");
    }
    Some(format!("{}: {text}", parts[0]))
}

/// A TOML inline value as a YAML flow value: `{ a = "b" }` as `{a: "b"}`;
/// strings, numbers, booleans and arrays are written alike. `None` for
/// an unclosed string (not a value).
fn flow(value: &str) -> Option<String> {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            out.push(c);
            if c == '\\' && q == '"' {
                out.extend(chars.next());
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => {
                quote = Some(c);
                out.push(c);
            }
            '{' if chars.peek() == Some(&' ') => {
                chars.next();
                out.push('{');
            }
            ' ' if chars.peek() == Some(&'}') => {}
            ' ' if chars.peek() == Some(&'=') => {
                chars.next();
                if chars.peek() == Some(&' ') {
                    chars.next();
                }
                out.push_str(": ");
            }
            _ => out.push(c),
        }
    }
    quote.is_none().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::in_yaml;

    #[test]
    fn toml_words_are_said_in_yaml() {
        for (toml, yaml) in [
            (
                "drop the quotes: `replicas = 2`",
                "drop the quotes: `replicas: 2`",
            ),
            (
                "write `nProcPerNode = \"gpu\"` in `[master]`",
                "write `nProcPerNode: \"gpu\"` under `master`",
            ),
            (
                "`HF_TOKEN = { secret = \"s\", key = \"k\" }`",
                "`HF_TOKEN: {secret: \"s\", key: \"k\"}`",
            ),
            (
                "set `master.resources.gpus = 8`",
                "set `master: {resources: {gpus: 8}}`",
            ),
            (
                "`unset = [\"master.resources.gpus\"]`",
                "`unset: [\"master.resources.gpus\"]`",
            ),
            (
                "use `[master] nProcPerNode = \"gpu\"`, or `{ field = \"metadata.name\" }`",
                "use `master: {nProcPerNode: \"gpu\"}`, or `{field: \"metadata.name\"}`",
            ),
            (
                "`rdzvConf = { join_timeout = \"a = b\" }` and `[resources]`",
                "`rdzvConf: {join_timeout: \"a = b\"}` and `resources`",
            ),
        ] {
            assert_eq!(in_yaml(toml), yaml);
        }
        // Prose, commands and a lone backtick stay.
        for same in [
            "`trainc build SPEC > out.yaml`",
            "`echo 'warnings = \"error\"' > strict.toml`",
            "a `[table]` header`",
            "NAME = value, not a list",
        ] {
            assert_eq!(in_yaml(same), same.replace("`[table]`", "`table`"));
        }
    }
}
