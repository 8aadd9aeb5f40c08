//! Stage 3b, templates: `{{ ... }}` in string values, rendered with minijinja
//! after overlays are merged and before validation.
//!
//! A template sees `name`, `namespace`, `replicas`, `target` and `vars` (the
//! spec's `[vars]`, with `--set` on top). It is strict: an undefined name is an
//! error at the string that used it. It can read no file (the environment has
//! no loader) and no environment variable, and a fuel limit stops runaway
//! loops. Only strings that contain `{{`, `{%` or `{#` are rendered, so every
//! other string is left exactly as written; keys and `[vars]` values are never
//! rendered. A literal `{{` is written `{{ "{{" }}`, or inside
//! `{% raw %}...{% endraw %}`.

use minijinja::{Environment, ErrorKind, UndefinedBehavior};

use crate::diagnostic::{Diagnostic, codes};
use crate::source::Span;
use crate::tree::{Node, Value};

/// Enough for any real template (a few dozen steps), small enough that a
/// runaway loop stops within milliseconds.
pub const FUEL: u64 = 50_000;

/// Renders every template string in `tree`; returns the errors.
pub fn render(tree: &mut Node) -> Vec<Diagnostic> {
    if !has_template(tree) {
        return Vec::new();
    }
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_fuel(Some(FUEL));
    let context = context(tree);
    let defined: Vec<String> = context
        .get("vars")
        .and_then(serde_json::Value::as_object)
        .map(|vars| vars.keys().map(|k| format!("`vars.{k}`")).collect())
        .unwrap_or_default();
    let context = minijinja::Value::from(minijinja::value::Serde(&context));
    let mut problems = Vec::new();
    walk(tree, false, &mut |node| {
        let Value::String(text) = &node.value else {
            return;
        };
        match env.render_str(text, context.clone()) {
            Ok(rendered) => node.value = Value::String(rendered),
            Err(error) => problems.push(diagnostic(&error, text, node.span, &defined)),
        }
    });
    problems
}

fn has_template(node: &Node) -> bool {
    match &node.value {
        Value::String(text) => is_template(text),
        Value::Array(items) => items.iter().any(has_template),
        Value::Table(entries) => entries
            .iter()
            .any(|e| e.key != "vars" && has_template(&e.value)),
        _ => false,
    }
}

fn is_template(text: &str) -> bool {
    text.contains("{{") || text.contains("{%") || text.contains("{#")
}

/// Calls `visit` on every template string outside `[vars]`.
fn walk(node: &mut Node, in_vars: bool, visit: &mut impl FnMut(&mut Node)) {
    match &mut node.value {
        Value::String(text) if !in_vars && is_template(text) => visit(node),
        Value::Array(items) => items.iter_mut().for_each(|item| walk(item, in_vars, visit)),
        Value::Table(entries) => {
            for entry in entries {
                let in_vars = in_vars || entry.key == "vars";
                walk(&mut entry.value, in_vars, visit);
            }
        }
        _ => {}
    }
}

/// What templates see: the spec's identity as written, and its vars.
fn context(tree: &Node) -> serde_json::Value {
    let json = tree.to_json();
    let field = |key: &str| json.get(key).cloned().unwrap_or(serde_json::Value::Null);
    serde_json::json!({
        "name": field("name"),
        "namespace": field("namespace"),
        "replicas": field("replicas"),
        "target": json.get("target").cloned().unwrap_or_else(|| serde_json::json!("pytorchjob")),
        "vars": json.get("vars").cloned().unwrap_or_else(|| serde_json::json!({})),
    })
}

fn diagnostic(error: &minijinja::Error, text: &str, span: Span, defined: &[String]) -> Diagnostic {
    // The part of the template at fault, when minijinja knows it.
    let at = error
        .range()
        .and_then(|r| text.get(r))
        .map(str::trim)
        .filter(|s| !s.is_empty());
    match error.kind() {
        ErrorKind::UndefinedError => {
            let what = at.map_or_else(|| "a value".to_owned(), |a| format!("`{a}`"));
            let help = if defined.is_empty() {
                "no vars are defined: add them in `[vars]`, or pass `--set NAME=VALUE`".to_owned()
            } else {
                format!(
                    "defined: `name`, `namespace`, `replicas`, `target`, {}; add vars in `[vars]` or with `--set NAME=VALUE`",
                    defined.join(", ")
                )
            };
            Diagnostic::error(
                codes::TEMPLATE_UNDEFINED,
                span,
                format!("the template uses {what}, which is not defined"),
            )
            .with_label("in this string")
            .with_help(help)
        }
        ErrorKind::OutOfFuel => Diagnostic::error(
            codes::TEMPLATE_FUEL,
            span,
            "the template ran too long and was stopped",
        )
        .with_help(format!(
            "templates get {FUEL} steps; a loop this long is almost certainly a mistake"
        )),
        ErrorKind::SyntaxError => {
            let detail = error.detail().unwrap_or("invalid syntax");
            Diagnostic::error(codes::TEMPLATE_SYNTAX, span, format!("template syntax error: {detail}"))
                .with_help("to write a literal `{{`, use `{{ \"{{\" }}` or wrap the text in `{% raw %}...{% endraw %}`")
        }
        _ => {
            let detail = error
                .detail()
                .map_or_else(|| error.kind().to_string(), str::to_owned);
            let at = at.map(|a| format!(" in `{a}`")).unwrap_or_default();
            Diagnostic::error(
                codes::TEMPLATE_ERROR,
                span,
                format!("the template failed{at}: {detail}"),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Sources;

    fn tree(text: &str) -> Node {
        let mut sources = Sources::new();
        let id = sources.add("t.toml", text);
        crate::parse::parse(id, sources.get(id)).unwrap()
    }

    #[test]
    fn renders_strings_with_the_context() {
        let mut t = tree(
            "name = \"demo\"\nreplicas = 3\nimage = \"x:{{ vars.tag }}\"\nargs = [\"--n={{ replicas }}\", \"{{ name }}-{{ target }}\", \"plain {not}\"]\n[vars]\ntag = \"1.4\"\nraw = \"{{ not rendered }}\"\n",
        );
        assert!(render(&mut t).is_empty());
        let json = t.to_json();
        assert_eq!(json["image"], "x:1.4");
        assert_eq!(
            json["args"],
            serde_json::json!(["--n=3", "demo-pytorchjob", "plain {not}"])
        );
        assert_eq!(json["vars"]["raw"], "{{ not rendered }}");
    }

    #[test]
    fn literal_braces_can_be_written() {
        let mut t = tree("a = '{{ \"{{\" }} x }}'\nb = \"{% raw %}{{ y }}{% endraw %}\"\n");
        assert!(render(&mut t).is_empty());
        assert_eq!(
            t.to_json(),
            serde_json::json!({"a": "{{ x }}", "b": "{{ y }}"})
        );
    }

    #[test]
    fn undefined_fuel_and_syntax_are_errors() {
        let mut t = tree(
            "a = \"{{ vars.nope }}\"\nb = \"{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\"\nc = \"{{ oops\"\nd = \"{{ vars.n | default('4') }}\"\n",
        );
        let problems = render(&mut t);
        let codes: Vec<&str> = problems.iter().map(|d| d.code).collect();
        assert_eq!(
            codes,
            [
                codes::TEMPLATE_UNDEFINED,
                codes::TEMPLATE_FUEL,
                codes::TEMPLATE_SYNTAX
            ]
        );
        assert!(
            problems[0].message.contains("`vars.nope`"),
            "{}",
            problems[0].message
        );
        assert_eq!(t.to_json()["d"], "4", "`default` works in strict mode");
    }

    #[test]
    fn no_file_or_environment_access() {
        let mut t = tree("a = \"{% include 'x' %}\"\nb = \"{{ env.HOME }}\"\n");
        let problems = render(&mut t);
        assert_eq!(problems.len(), 2);
    }
}
