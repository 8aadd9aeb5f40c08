//! Text no process or path can carry: a NUL ends a C string (every
//! argument, variable and path the container runtime passes on), and other
//! control characters in a command line or a variable are almost always a
//! paste accident that the job would misread. Paths take no line breaks or
//! tabs either. And `{ name }` naming a template variable with one brace a
//! side is no template: it stays as written (trainc's are `{{ name }}`).

use super::Rules;
use crate::diagnostic::{Diagnostic, codes};
use crate::tree::{Node, Value};

pub(super) fn check(rules: &mut Rules<'_>) {
    let vars: Vec<&str> = match rules.tree.get("vars").map(|e| &e.value.value) {
        Some(Value::Table(entries)) => entries.iter().map(|e| e.key.as_str()).collect(),
        _ => Vec::new(),
    };
    let mut stack: Vec<(&Node, bool)> = vec![(rules.tree, false)];
    while let Some((node, is_path)) = stack.pop() {
        match &node.value {
            Value::String(text) => {
                if let Some(c) = text.chars().find(|&c| forbidden(c, is_path)) {
                    rules.out.push(problem(node, c, is_path));
                }
                if let Some(name) = single_braces(text, &vars) {
                    rules.out.push(
                        Diagnostic::warning(
                            codes::TEMPLATE_SINGLE_BRACES,
                            node.span,
                            format!("`{{ {name} }}` is left as written: trainc's templates take two braces"),
                        )
                        .with_help(format!("write `{{{{ {name} }}}}` to put the value of `{name}` here")),
                    );
                }
            }
            Value::Array(items) => stack.extend(items.iter().map(|n| (n, is_path))),
            Value::Table(entries) => stack.extend(
                entries
                    .iter()
                    .filter(|e| e.key != "vars")
                    .map(|e| (&e.value, is_path_key(&e.key))),
            ),
            _ => {}
        }
    }
}

/// Keys whose values are paths (`files` holds a list of them).
fn is_path_key(key: &str) -> bool {
    key.ends_with("Path") || matches!(key, "path" | "script" | "workingDir" | "files")
}

fn forbidden(c: char, is_path: bool) -> bool {
    match c {
        '\t' | '\n' | '\r' => is_path,
        c => c.is_control(),
    }
}

fn problem(node: &Node, c: char, is_path: bool) -> Diagnostic {
    let what = match c {
        '\0' => "a NUL character, which ends the text for the container runtime".to_owned(),
        '\n' | '\r' | '\t' => format!(
            "the control character `{}`, which no path holds",
            c.escape_default()
        ),
        c => format!("the control character U+{:04X}", u32::from(c)),
    };
    let help = if is_path {
        "write the path on one line, without control characters"
    } else {
        "remove the character: arguments and variables hold printable text, tabs and line breaks"
    };
    Diagnostic::error(
        codes::TEXT_CONTROL,
        node.span,
        format!("the value holds {what}"),
    )
    .with_help(help)
}

/// The template variable a single-braced `{ name }` in `text` names (a
/// `[vars]` key, or `vars.KEY`), which trainc leaves as written: its
/// templates are `{{ name }}`. `${name}` (a shell's) and `{{ … }}` are not.
fn single_braces(text: &str, vars: &[&str]) -> Option<String> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(open) = text[from..].find('{').map(|i| i + from) {
        from = open + 1;
        let doubled = bytes.get(open + 1) == Some(&b'{') || (open > 0 && bytes[open - 1] == b'{');
        if doubled || (open > 0 && bytes[open - 1] == b'$') {
            continue;
        }
        let Some(close) = text[open..].find('}').map(|i| i + open) else {
            break;
        };
        if bytes.get(close + 1) == Some(&b'}') {
            continue;
        }
        let inner = text[open + 1..close].trim();
        let key = inner.strip_prefix("vars.").unwrap_or(inner);
        if vars.contains(&key) {
            return Some(inner.to_owned());
        }
    }
    None
}
