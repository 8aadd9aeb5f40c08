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

mod bounded;
mod errors;
mod guard;
mod written;

use errors::{diagnostic, overflowed, spent};
pub(crate) use written::keep_written;

/// Enough for any real template (a few dozen steps), small enough that a
/// runaway loop stops within milliseconds.
pub(crate) const FUEL: u64 = 50_000;
/// Steps for all the templates of one spec together, each string costing
/// [`STRING_COST`] on top of its own steps: a spec of 100,000 template
/// strings stops as surely as one long loop.
pub(crate) const TOTAL_FUEL: u64 = 1_000_000;
const STRING_COST: u64 = 20;
/// What all the templates of one spec may render to together: the size of
/// the largest spec file.
pub(crate) const MAX_TOTAL_OUTPUT: usize = 4 * 1024 * 1024;

/// The spec fields templates see, in the order they are rendered: each may
/// use those before it (and `vars`), so every later string sees its
/// rendered value, never its template.
const IDENTITY: [&str; 4] = ["target", "replicas", "namespace", "name"];

/// What rendering found: its errors, and each rendered string's span with
/// the vars it read (for [`explain`]).
#[derive(Default)]
pub struct Rendered {
    pub problems: Vec<Diagnostic>,
    pub strings: Vec<(Span, Vec<String>)>,
}

/// A var that some template must read: one given with `--set`, or in an
/// overlay's `[vars]` (which has no other use).
pub enum Required {
    Set(String),
    Overlay(String),
}

impl Required {
    fn name(&self) -> &str {
        match self {
            Required::Set(name) | Required::Overlay(name) => name,
        }
    }

    /// This var, as a message names it.
    fn described(&self) -> String {
        match self {
            Required::Set(name) => format!("`--set {name}`"),
            Required::Overlay(name) => format!("the overlay's var `{name}`"),
        }
    }

    /// The var `other` given the way this one was.
    fn written_as(&self, other: &str) -> String {
        match self {
            Required::Set(_) => format!("--set {other}=..."),
            Required::Overlay(_) => other.to_owned(),
        }
    }
}

/// Renders every template string in `tree`; each of `required` must be read
/// by some template.
pub fn render(tree: &mut Node, required: &[Required]) -> Rendered {
    if !has_template(tree) && required.is_empty() {
        return Rendered::default();
    }
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // A boolean prints as the spec writes it (`true`), not as Python does
    // (`True`): `--amp={{ vars.amp }}` with `amp = true` gives `--amp=true`.
    env.set_formatter(|out, state, value| {
        if value.kind() == minijinja::value::ValueKind::Bool {
            return Ok(out.write_str(if value.is_true() { "true" } else { "false" })?);
        }
        minijinja::escape_formatter(out, state, value)
    });
    env.set_fuel(Some(FUEL));
    // minijinja's `namespace()` would stand in for an unset `namespace` and
    // print as `minijinja::functions::builtins::namespace`.
    env.remove_global("namespace");
    // `debug()` prints the engine's state (every var, its closures), not a value.
    env.remove_global("debug");
    bounded::install(&mut env);
    let json = tree.to_json();
    let mut context = serde_json::json!({
        "target": "pytorchjob",
        "vars": json.get("vars").cloned().unwrap_or_else(|| serde_json::json!({})),
    });
    let mut renderer = Renderer {
        env,
        used: Used::default(),
        problems: Vec::new(),
        strings: Vec::new(),
        fuel_left: TOTAL_FUEL,
        output_left: MAX_TOTAL_OUTPUT,
    };
    // The identity fields, each with what is known so far.
    for key in IDENTITY {
        let Some(entry) = tree
            .as_table_mut()
            .and_then(|t| t.iter_mut().find(|e| e.key == key))
        else {
            continue;
        };
        let node = &mut entry.value;
        if matches!(&node.value, Value::String(text) if is_template(text)) {
            let value = minijinja::Value::from(minijinja::value::Serde(&context));
            let scope = Scope {
                value: &value,
                json: &context,
                defined: &defined_names(&context),
            };
            renderer.render(&scope, node, &format!("/{key}"));
        }
        context[key] = node.to_json();
    }
    let defined = defined_names(&context);
    let value = minijinja::Value::from(minijinja::value::Serde(&context));
    let scope = Scope {
        value: &value,
        json: &context,
        defined: &defined,
    };
    walk(tree, "", &mut |node, pointer| {
        if !IDENTITY.iter().any(|k| pointer == format!("/{k}")) {
            renderer.render(&scope, node, pointer);
        }
    });
    let Renderer {
        used,
        mut problems,
        strings,
        ..
    } = renderer;
    unused_vars(tree, required, &used, &mut problems);
    Rendered { problems, strings }
}

/// Says, on each diagnostic about a rendered string, what the vars it read
/// were and where they were set (`--set nodes=four`, or the file and line):
/// the value the diagnostic is about was not written where it points.
pub(crate) fn explain(
    diagnostics: &mut [Diagnostic],
    strings: &[(Span, Vec<String>)],
    tree: &Node,
    sources: &crate::source::Sources,
) {
    let read_at: std::collections::HashMap<Span, &Vec<String>> =
        strings.iter().map(|(span, read)| (*span, read)).collect();
    let vars: std::collections::HashMap<&str, &crate::tree::Entry> = tree
        .get("vars")
        .and_then(|e| e.value.as_table())
        .into_iter()
        .flatten()
        .map(|e| (e.key.as_str(), e))
        .collect();
    for d in diagnostics.iter_mut() {
        let Some(read) = read_at.get(&d.primary.span) else {
            continue;
        };
        let said: Vec<String> = read
            .iter()
            .filter_map(|name| {
                let entry = vars.get(name.as_str())?;
                let source = sources.get(entry.value.span.source);
                let written = source
                    .text
                    .get(entry.value.span.start..entry.value.span.end)
                    .unwrap_or("");
                let written = crate::diagnostic::quoted_value(written, 40);
                Some(if source.name == crate::source::COMMAND_LINE {
                    let set = crate::diagnostic::quoted_value(&source.text, 60);
                    format!("`vars.{name}` is `{written}`, from `{set}`")
                } else {
                    let (line, _) = source.line_col(entry.value.span.start);
                    format!("`vars.{name}` is `{written}`, from {}:{line}", source.name)
                })
            })
            .collect();
        if said.is_empty() {
            continue;
        }
        d.add_to_label(&said.join("; "));
    }
}

/// Renders template strings one at a time, noting the vars they read and
/// their errors.
struct Renderer<'env> {
    env: Environment<'env>,
    used: Used,
    problems: Vec<Diagnostic>,
    strings: Vec<(Span, Vec<String>)>,
    /// Steps and output left for the rest of the spec's templates.
    fuel_left: u64,
    output_left: usize,
}

/// What a template sees: the context as minijinja and JSON values, and the
/// names defined in it (for the help of an undefined one).
struct Scope<'a> {
    value: &'a minijinja::Value,
    json: &'a serde_json::Value,
    defined: &'a [String],
}

impl Scope<'_> {
    /// Whether a dotted name (`replicas`, `vars.gpus`) is a number here.
    fn is_number(&self, path: &str) -> bool {
        let pointer = path.split('.').fold(String::new(), |mut pointer, part| {
            pointer.push('/');
            pointer.push_str(part);
            pointer
        });
        self.json
            .pointer(&pointer)
            .is_some_and(serde_json::Value::is_number)
    }
}

impl Renderer<'_> {
    /// Renders the string `node` at `pointer` in `scope`.
    fn render(&mut self, scope: &Scope<'_>, node: &mut Node, pointer: &str) {
        let Value::String(text) = &node.value else {
            return;
        };
        let text = text.clone();
        let text = text.as_str();
        if let Some(problem) = guard::check(text, node.span, &|path| scope.is_number(path)) {
            self.problems.push(problem);
            return;
        }
        if self.fuel_left <= STRING_COST || self.output_left == 0 {
            // Said once, at the first string left unrendered.
            if self.fuel_left > 0 || self.output_left > 0 {
                self.problems.push(spent(node.span));
                self.fuel_left = 0;
                self.output_left = 0;
            }
            return;
        }
        self.fuel_left -= STRING_COST;
        self.env.set_fuel(Some(FUEL.min(self.fuel_left)));
        let mut output = bounded::Capped::default();
        // Compiled once: for the vars it reads, then to render.
        let mut read = Vec::new();
        let result = self.env.template_from_str(text).and_then(|template| {
            read = self.used.record(&template);
            template.render_captured_to(scope.value.clone(), &mut output)
        });
        let result =
            result.map(|captured| captured.state().fuel_levels().map_or(0, |(used, _)| used));
        match result {
            Ok(used) => {
                self.fuel_left = self.fuel_left.saturating_sub(used);
                self.output_left = self.output_left.saturating_sub(output.text.len());
                let rendered = String::from_utf8_lossy(&output.text).into_owned();
                self.strings.push((node.span, read));
                node.value = if is_whole_expression(text) {
                    typed(&rendered, pointer)
                } else {
                    Value::String(rendered)
                };
            }
            Err(_) if output.overflowed => {
                // What a failed string did counts against the spec's totals too.
                self.fuel_left = self.fuel_left.saturating_sub(FUEL);
                self.output_left = self.output_left.saturating_sub(output.text.len());
                self.problems.push(overflowed(node.span));
            }
            Err(error) if error.kind() == ErrorKind::OutOfFuel && self.fuel_left < FUEL => {
                self.fuel_left = 0;
                self.output_left = 0;
                self.problems.push(spent(node.span));
            }
            Err(error) => {
                self.fuel_left = self.fuel_left.saturating_sub(FUEL);
                self.problems
                    .push(diagnostic(&error, text, node.span, pointer, scope.defined));
            }
        }
    }
}

/// Which vars the templates read: by name, or all of them (`vars[name]`).
#[derive(Default)]
struct Used {
    names: std::collections::BTreeSet<String>,
    all: bool,
}

impl Used {
    /// Notes the vars `template` reads; returns their names.
    fn record(&mut self, template: &minijinja::Template<'_, '_>) -> Vec<String> {
        let mut read = Vec::new();
        for name in template.undeclared_variables(true) {
            match name.strip_prefix("vars.") {
                Some(var) => {
                    self.names.insert(var.to_owned());
                    read.push(var.to_owned());
                }
                None if name == "vars" => self.all = true,
                None => {}
            }
        }
        read.sort();
        read
    }
}

fn defined_names(context: &serde_json::Value) -> Vec<String> {
    let mut defined: Vec<String> = IDENTITY
        .iter()
        .rev()
        .filter(|k| context.get(**k).is_some_and(|v| !v.is_null()))
        .map(|k| format!("`{k}`"))
        .collect();
    defined.extend(
        context["vars"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| format!("`vars.{k}`")),
    );
    defined
}

/// `{{ expr }}` and nothing else: the template is the whole value.
fn is_whole_expression(text: &str) -> bool {
    let inner = text.trim();
    inner.starts_with("{{")
        && inner.ends_with("}}")
        && !inner[2..inner.len() - 2].contains("{{")
        && !inner.contains("{%")
}

/// A whole-value template's output as the number or boolean its field
/// takes, where the spec's schema allows one there; otherwise the text.
fn typed(rendered: &str, pointer: &str) -> Value {
    let as_text = || Value::String(rendered.to_owned());
    let types = crate::spec::schema_lookup::types_at(pointer);
    let has = |t: &str| types.contains(&t);
    let trimmed = rendered.trim();
    if (has("integer") || has("number"))
        && let Ok(n) = trimmed.parse::<i64>()
    {
        return Value::Integer(n);
    }
    if has("number")
        && let Ok(x) = trimmed.parse::<f64>()
        && x.is_finite()
    {
        return Value::Float(x);
    }
    // minijinja prints booleans as Python does: `True`, `False`.
    if has("boolean")
        && ["true", "false"]
            .iter()
            .any(|b| trimmed.eq_ignore_ascii_case(b))
    {
        return Value::Bool(trimmed.eq_ignore_ascii_case("true"));
    }
    as_text()
}

/// A `--set NAME`, or an overlay's var, that no template reads: a typo, or
/// a var that does nothing. The closest var a template reads is offered
/// (only those: a spec may hold thousands of vars).
fn unused_vars(tree: &Node, required: &[Required], used: &Used, problems: &mut Vec<Diagnostic>) {
    /// The most names the help lists.
    const LISTED: usize = 20;
    if used.all {
        return;
    }
    let entries: std::collections::HashMap<&str, Span> = tree
        .get("vars")
        .and_then(|e| e.value.as_table())
        .into_iter()
        .flatten()
        .map(|e| (e.key.as_str(), e.key_span))
        .collect();
    let mut read: Vec<String> = used
        .names
        .iter()
        .take(LISTED)
        .map(|n| format!("`{n}`"))
        .collect();
    if used.names.len() > LISTED {
        read.push(format!("and {} more", used.names.len() - LISTED));
    }
    let read = read.join(", ");
    let mut said = std::collections::BTreeSet::new();
    for var in required {
        let name = var.name();
        if used.names.contains(name) || !said.insert(name) {
            continue;
        }
        let Some(&span) = entries.get(name) else {
            continue;
        };
        let mut help = crate::diagnostic::suggest(name, used.names.iter().map(String::as_str))
            .map(|close| format!("did you mean `{}`? ", var.written_as(close)))
            .unwrap_or_default();
        if matches!(var, Required::Set(_)) && crate::spec::schema_lookup::is_spec_key(name) {
            help = spec_field_help(name);
        } else if read.is_empty() {
            help.push_str("no template reads any var: use it as `{{ vars.NAME }}` in a string");
        } else {
            help.push_str("the templates read ");
            help.push_str(&read);
        }
        problems.push(
            Diagnostic::error(
                codes::TEMPLATE_UNUSED_SET,
                span,
                format!("{} is not used by any template", var.described()),
            )
            .with_help(help),
        );
    }
}

/// `--set` of a spec field: `--set` gives template vars only.
fn spec_field_help(name: &str) -> String {
    // A `--set` name is one word, so `target` is the field a flag also sets.
    let flag = if name == "target" {
        " (or `--target VALUE`)"
    } else {
        ""
    };
    format!(
        "`{name}` is a field of the spec, and `--set` sets template vars only: set it in the spec, or in an overlay given with `-O`{flag}"
    )
}

/// Whether any string outside the root's `vars` is a template.
fn has_template(tree: &Node) -> bool {
    match tree.as_table() {
        Some(entries) => entries
            .iter()
            .any(|e| e.key != "vars" && contains_template(&e.value)),
        None => contains_template(tree),
    }
}

fn contains_template(node: &Node) -> bool {
    match &node.value {
        Value::String(text) => is_template(text),
        Value::Array(items) => items.iter().any(contains_template),
        Value::Table(entries) => entries.iter().any(|e| contains_template(&e.value)),
        _ => false,
    }
}

/// `{{`, `{%` or `{#` anywhere in `text` (one pass: this runs on every string).
fn is_template(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes
        .iter()
        .zip(bytes.iter().skip(1))
        .any(|(&a, &b)| a == b'{' && matches!(b, b'{' | b'%' | b'#'))
}

/// Calls `visit` on every template string outside `[vars]`, with its JSON pointer.
fn walk(node: &mut Node, pointer: &str, visit: &mut impl FnMut(&mut Node, &str)) {
    match &mut node.value {
        Value::String(text) if is_template(text) => visit(node, pointer),
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                walk(item, &format!("{pointer}/{i}"), visit);
            }
        }
        Value::Table(entries) => {
            for entry in entries {
                if pointer.is_empty() && entry.key == "vars" {
                    continue;
                }
                let key = crate::tree::pointer_segment(&entry.key);
                walk(&mut entry.value, &format!("{pointer}/{key}"), visit);
            }
        }
        _ => {}
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
        assert!(render(&mut t, &[]).problems.is_empty());
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
        assert!(render(&mut t, &[]).problems.is_empty());
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
        let problems = render(&mut t, &[]).problems;
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
        let problems = render(&mut t, &[]).problems;
        assert_eq!(problems.len(), 2);
    }
}
