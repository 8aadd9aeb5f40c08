//! What a template may contain, checked on its text before minijinja parses
//! it.
//!
//! minijinja bounds loops with fuel, but not the memory a single step can
//! claim (`"x" * 100000000`), nor the stack its parser and compiler use on
//! deeply nested expressions. Spec templates are substitutions: a name, a
//! var, a condition, a loop over a list. So the language is narrowed to
//! what keeps every value small and every expression shallow:
//!
//! - statements: `if` / `elif` / `else` and `for` (not `recursive`), and
//!   `raw`; no `set`, `filter` or `with` blocks, which could build a value
//!   step by step or capture a loop's output unbounded;
//! - `*` multiplies numbers only (literals, `replicas`, numeric `vars`), so
//!   it cannot repeat a string or a list;
//! - at most [`MAX_PARTS`] parts per tag and [`MAX_NESTING`] brackets deep;
//! - at most [`MAX_JOINS`] `~` and `+` per template.
//!
//! With filters bounded in [`super::bounded`] and output capped, no value a
//! template builds can exceed its limit by more than a small factor.

use crate::diagnostic::{Diagnostic, codes};
use crate::source::Span;

/// Tokens in one `{{ }}` or `{% %}`: a long `args` expression has 30.
pub(super) const MAX_PARTS: usize = 256;
/// Parentheses, brackets and braces inside one another.
pub(super) const MAX_NESTING: usize = 16;
/// `~` and `+` in one template: each can at most add two values' lengths.
pub(super) const MAX_JOINS: usize = 64;
/// A template string's own length.
pub(super) const MAX_TEMPLATE_BYTES: usize = 64 * 1024;

const STATEMENTS: [&str; 8] = [
    "if", "elif", "else", "endif", "for", "endfor", "raw", "endraw",
];

#[derive(Debug, Clone, PartialEq)]
enum Token<'t> {
    Name(&'t str),
    Number,
    Text,
    Punct(&'t str),
}

/// Checks `text`, a template string at `span`; `numeric` says whether a
/// dotted name (`replicas`, `vars.gpus`) holds a number in the context.
pub(super) fn check(text: &str, span: Span, numeric: &dyn Fn(&str) -> bool) -> Option<Diagnostic> {
    if text.len() > MAX_TEMPLATE_BYTES {
        return Some(limit(
            span,
            format!("the template is {} KiB long", text.len() / 1024),
            format!(
                "a template string holds at most {} KiB; keep long text outside `{{{{ }}}}`",
                MAX_TEMPLATE_BYTES / 1024
            ),
        ));
    }
    let mut joins = 0;
    let mut rest = text;
    while let Some(open) = find_open(rest) {
        let kind = &rest[open..open + 2];
        let body_start = open + 2;
        let close = match kind {
            "{#" => rest[body_start..].find("#}").map(|c| (c, c + 2)),
            _ => find_close(&rest[body_start..], if kind == "{{" { "}}" } else { "%}" }),
        };
        // An unclosed tag is minijinja's syntax error to report.
        let (end, after) = close?;
        let body = &rest[body_start..body_start + end];
        rest = &rest[body_start + after..];
        if kind == "{#" {
            continue;
        }
        let Ok(tokens) = tokenize(body) else {
            return None;
        };
        if let Some(problem) = check_tag(kind, &tokens, span, numeric) {
            return Some(problem);
        }
        joins += tokens
            .iter()
            .filter(|t| matches!(t, Token::Punct("~" | "+")))
            .count();
        if kind == "{%" && tokens.first() == Some(&Token::Name("raw")) {
            // Everything up to `{% endraw %}` is text.
            match rest.find("endraw") {
                Some(at) => rest = &rest[at..],
                None => return None,
            }
        }
    }
    (joins > MAX_JOINS).then(|| {
        unsupported(
            span,
            format!("the template joins values with `~` or `+` {joins} times"),
            format!("a template joins at most {MAX_JOINS} times; build long text from a list with `join`"),
        )
    })
}

fn check_tag(
    kind: &str,
    tokens: &[Token<'_>],
    span: Span,
    numeric: &dyn Fn(&str) -> bool,
) -> Option<Diagnostic> {
    if tokens.len() > MAX_PARTS {
        return Some(unsupported(
            span,
            format!("a template expression has {} parts", tokens.len()),
            format!(
                "an expression has at most {MAX_PARTS}; split the value, or compute it in `[vars]`"
            ),
        ));
    }
    let mut depth = 0usize;
    for token in tokens {
        match token {
            Token::Punct("(" | "[" | "{") => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(unsupported(
                        span,
                        format!(
                            "a template expression nests brackets more than {MAX_NESTING} deep"
                        ),
                        "flatten the expression".to_owned(),
                    ));
                }
            }
            Token::Punct(")" | "]" | "}") => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if kind == "{%" {
        let statement = match tokens.first() {
            Some(Token::Name(name)) => *name,
            _ => "",
        };
        if !STATEMENTS.contains(&statement) {
            return Some(unsupported(
                span,
                format!("`{{% {} %}}` is not available in spec templates", crate::diagnostic::escape_for_terminal(statement)),
                "spec templates have `if`/`elif`/`else`, `for` and `raw`; compute other values in `[vars]` or with `--set`".to_owned(),
            ));
        }
        if statement == "for" && tokens.contains(&Token::Name("recursive")) {
            return Some(unsupported(
                span,
                "recursive loops are not available in spec templates".to_owned(),
                "loop over a flat list".to_owned(),
            ));
        }
    }
    for (i, token) in tokens.iter().enumerate() {
        let called = tokens.get(i + 1) == Some(&Token::Punct("("))
            && (i == 0 || tokens[i - 1] != Token::Punct("."));
        if *token == Token::Name("debug") && called {
            return Some(unsupported(
                span,
                "`debug` is not available in spec templates".to_owned(),
                "it prints the template engine's state, not a value; name the value you want, e.g. `{{ vars.lr }}`".to_owned(),
            ));
        }
        if *token == Token::Punct("*")
            && !(numeric_before(&tokens[..i], numeric) && numeric_after(&tokens[i + 1..], numeric))
        {
            return Some(unsupported(
                span,
                "`*` in a spec template multiplies numbers only".to_owned(),
                "multiply number literals, `replicas` or numeric `vars`; to repeat text, write it out".to_owned(),
            ));
        }
    }
    None
}

/// Whether the operand ending the tokens is a number.
fn numeric_before(tokens: &[Token<'_>], numeric: &dyn Fn(&str) -> bool) -> bool {
    match tokens.last() {
        Some(Token::Number) => true,
        Some(Token::Name(_)) => {
            let start = path_start(tokens);
            numeric(&path_text(&tokens[start..]))
        }
        Some(Token::Punct(")")) => {
            let mut depth = 0usize;
            for (i, token) in tokens.iter().enumerate().rev() {
                match token {
                    Token::Punct(")") => depth += 1,
                    Token::Punct("(") => {
                        depth -= 1;
                        if depth == 0 {
                            // A call's parentheses (`f(x)`) are not a group.
                            let call = matches!(
                                tokens[..i].last(),
                                Some(Token::Name(_) | Token::Punct(")" | "]"))
                            );
                            return !call
                                && group_is_numeric(&tokens[i + 1..tokens.len() - 1], numeric);
                        }
                    }
                    _ => {}
                }
            }
            false
        }
        _ => false,
    }
}

/// Whether the operand starting the tokens is a number.
fn numeric_after(tokens: &[Token<'_>], numeric: &dyn Fn(&str) -> bool) -> bool {
    let tokens = match tokens.first() {
        Some(Token::Punct("-" | "+")) => &tokens[1..],
        _ => tokens,
    };
    match tokens.first() {
        Some(Token::Number) => true,
        Some(Token::Name(_)) => {
            let end = path_end(tokens, 0);
            // `vars.n | int` or `vars.f(x)` is not a plain name.
            !matches!(tokens.get(end), Some(Token::Punct("|" | "(" | "[")))
                && numeric(&path_text(&tokens[..end]))
        }
        Some(Token::Punct("(")) => {
            let mut depth = 0usize;
            for (i, token) in tokens.iter().enumerate() {
                match token {
                    Token::Punct("(") => depth += 1,
                    Token::Punct(")") => {
                        depth -= 1;
                        if depth == 0 {
                            return group_is_numeric(&tokens[1..i], numeric);
                        }
                    }
                    _ => {}
                }
            }
            false
        }
        _ => false,
    }
}

/// Numbers, numeric names and arithmetic only.
fn group_is_numeric(tokens: &[Token<'_>], numeric: &dyn Fn(&str) -> bool) -> bool {
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Number | Token::Punct("+" | "-" | "*" | "/" | "//" | "%" | "**" | "(" | ")") => {
                i += 1;
            }
            Token::Name(_) => {
                let end = path_end(tokens, i);
                if !numeric(&path_text(&tokens[i..end])) {
                    return false;
                }
                i = end;
            }
            _ => return false,
        }
    }
    true
}

/// Where the dotted name starting at `start` ends.
fn path_end(tokens: &[Token<'_>], start: usize) -> usize {
    let mut end = start + 1;
    while let (Some(Token::Punct(".")), Some(Token::Name(_))) =
        (tokens.get(end), tokens.get(end + 1))
    {
        end += 2;
    }
    end
}

/// Where the dotted name ending `tokens` starts.
fn path_start(tokens: &[Token<'_>]) -> usize {
    let mut start = tokens.len() - 1;
    while start >= 2
        && tokens[start - 1] == Token::Punct(".")
        && matches!(tokens[start - 2], Token::Name(_))
    {
        start -= 2;
    }
    start
}

fn path_text(tokens: &[Token<'_>]) -> String {
    tokens
        .iter()
        .map(|t| match t {
            Token::Name(n) | Token::Punct(n) => *n,
            _ => "",
        })
        .collect()
}

/// The next `{{`, `{%` or `{#`.
fn find_open(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    (0..bytes.len().saturating_sub(1))
        .find(|&i| bytes[i] == b'{' && matches!(bytes[i + 1], b'{' | b'%' | b'#'))
}

/// The end of a tag's body and the position after its closing delimiter,
/// skipping string literals.
fn find_close(body: &str, close: &str) -> Option<(usize, usize)> {
    let bytes = body.as_bytes();
    let mut i = 0;
    let mut quote = None;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) if b == b'\\' => i += 1,
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None if bytes[i..].starts_with(close.as_bytes()) => {
                let end = if i > 0 && matches!(bytes[i - 1], b'-' | b'+') {
                    i - 1
                } else {
                    i
                };
                return Some((end, i + close.len()));
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn tokenize(body: &str) -> Result<Vec<Token<'_>>, ()> {
    let body = body.strip_prefix(['-', '+']).unwrap_or(body);
    let bytes = body.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() {
            i += 1;
        } else if b == b'"' || b == b'\'' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            tokens.push(Token::Text);
            i = j + 1;
        } else if b.is_ascii_digit() {
            let mut j = i;
            while j < bytes.len()
                && (bytes[j].is_ascii_alphanumeric()
                    || bytes[j] == b'_'
                    || bytes[j] == b'.' && bytes.get(j + 1).is_some_and(u8::is_ascii_digit))
            {
                j += 1;
            }
            tokens.push(Token::Number);
            i = j;
        } else if b.is_ascii_alphabetic() || b == b'_' || b >= 0x80 {
            let mut j = i;
            while j < bytes.len()
                && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_' || bytes[j] >= 0x80)
            {
                j += 1;
            }
            tokens.push(Token::Name(&body[i..j]));
            i = j;
        } else {
            let two = body.get(i..i + 2).unwrap_or("");
            let len = if ["**", "//", "==", "!=", "<=", ">="].contains(&two) {
                2
            } else {
                1
            };
            let Some(punct) = body.get(i..i + len) else {
                return Err(());
            };
            tokens.push(Token::Punct(punct));
            i += len;
        }
    }
    Ok(tokens)
}

fn unsupported(span: Span, message: String, help: String) -> Diagnostic {
    Diagnostic::error(codes::TEMPLATE_UNSUPPORTED, span, message).with_help(help)
}

fn limit(span: Span, message: String, help: String) -> Diagnostic {
    Diagnostic::error(codes::TEMPLATE_FUEL, span, message).with_help(help)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceId;

    fn verdict(text: &str) -> Option<&'static str> {
        let numeric = |name: &str| ["replicas", "vars.gpus"].contains(&name);
        check(text, Span::new(SourceId(0), 0, 0), &numeric).map(|d| d.code)
    }

    #[test]
    fn ordinary_templates_pass() {
        for text in [
            "{{ name }}-{{ vars.tag | default('x') }}",
            "{{ replicas * 8 }}",
            "{{ (replicas + 1) * vars.gpus }}",
            "{{ 2 * -3 }}",
            "{% if vars.debug %}--debug{% else %}{% endif %}",
            "{% for a in vars.args %}{{ a }} {% endfor %}",
            "{% raw %}{% set x = 1 %}{{ y }}{% endraw %}",
            "{# a comment with {% set %} #}{{ name }}",
            "{{ '}}' ~ name }}",
            "{{- name -}}",
            "{{ '\u{feff}é' ~ name }}é{{ \"ü\" }}",
        ] {
            assert_eq!(verdict(text), None, "{text}");
        }
    }

    #[test]
    fn amplifiers_and_deep_expressions_are_refused() {
        let deep = format!("{{{{ {}1 }}}}", "-".repeat(20_000));
        let chained = format!("{{{{ name{} }}}}", "|string".repeat(5_000));
        let joined = format!("{{{{ name{} }}}}", " ~ name".repeat(100));
        let nested = format!("{{{{ {}1{} }}}}", "(".repeat(40), ")".repeat(40));
        for text in [
            "{{ 'x' * 100000 }}",
            "{{ name * 3 }}",
            "{{ [1] * 1000 }}",
            "{{ replicas * vars.tag }}",
            "{{ (name) * 2 }}",
            "{{ vars.gpus | string * 2 }}",
            "{% set a = 'x' %}",
            "{% filter upper %}x{% endfilter %}",
            "{% for x in y recursive %}{% endfor %}",
            "{% with a = 1 %}{% endwith %}",
            &deep,
            &chained,
            &joined,
            &nested,
        ] {
            assert_eq!(
                verdict(text),
                Some(codes::TEMPLATE_UNSUPPORTED),
                "{}",
                &text[..text.len().min(60)]
            );
        }
    }
}
