//! What goes wrong in a template, in trainc's words: minijinja's errors at
//! the string that holds the template, and the limits of one string and of
//! the whole spec.

use minijinja::ErrorKind;

use super::{FUEL, IDENTITY, MAX_TOTAL_OUTPUT, TOTAL_FUEL, bounded};
use crate::diagnostic::{Diagnostic, codes};
use crate::source::Span;

/// A template whose output passed the limit of one string.
pub(super) fn overflowed(span: Span) -> Diagnostic {
    Diagnostic::error(
        codes::TEMPLATE_FUEL,
        span,
        format!(
            "the template renders to more than {} KiB",
            bounded::MAX_OUTPUT / 1024
        ),
    )
    .with_help("a field value is far shorter; check the loops of this template")
}

/// The spec's templates have used up their steps or their output together.
pub(super) fn spent(span: Span) -> Diagnostic {
    Diagnostic::error(
        codes::TEMPLATE_FUEL,
        span,
        "the templates of this spec together do more work than trainc allows; this one was not rendered",
    )
    .with_help(format!(
        "a spec's templates get {TOTAL_FUEL} steps and {} MiB of output in all; no real spec comes close",
        MAX_TOTAL_OUTPUT / 1024 / 1024
    ))
}

/// A minijinja error in trainc's words, at the string (the value at
/// `pointer`); `defined` are the names a template may read, for a
/// did-you-mean.
pub(super) fn diagnostic(
    error: &minijinja::Error,
    text: &str,
    span: Span,
    pointer: &str,
    defined: &[String],
) -> Diagnostic {
    // The part of the template at fault, when minijinja knows it.
    let at = error
        .range()
        .and_then(|r| text.get(r))
        .map(str::trim)
        .filter(|s| !s.is_empty());
    match error.kind() {
        ErrorKind::UndefinedError => {
            let what = at.map_or_else(|| "a value".to_owned(), |a| format!("`{a}`"));
            let unset = at.filter(|a| IDENTITY.contains(a));
            let help = if let Some(field) = unset.filter(|f| pointer == format!("/{f}")) {
                // `name = "{{ name }}-cpu"`, in an overlay meant to extend the spec's.
                format!(
                    "`{field}` cannot be made from itself: templates read the spec with its overlays merged, where this string is the only `{field}` (an overlay's replaces the spec's); write the whole value, e.g. `{field} = \"NAME-cpu\"`"
                )
            } else if let Some(field) = unset {
                format!(
                    "`{field}` is not set in this spec: set it, or write `{{{{ {field} | default(\"...\") }}}}`"
                )
            } else {
                let names: Vec<&str> = defined.iter().map(|d| d.trim_matches('`')).collect();
                let close = at
                    .and_then(|a| crate::diagnostic::suggest(a, names.iter().copied()))
                    .map(|c| format!("did you mean `{c}`? "))
                    .unwrap_or_default();
                let vars = if defined.iter().any(|d| d.starts_with("`vars.")) {
                    ""
                } else {
                    "; no vars are defined"
                };
                format!(
                    "{close}defined: {}{vars}; add vars in `[vars]` or with `--set NAME=VALUE`",
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
        _ if error
            .detail()
            .is_some_and(|d| d.starts_with(bounded::LIMIT)) =>
        {
            let detail = error.detail().unwrap_or_default();
            let detail = detail.trim_start_matches(bounded::LIMIT).trim();
            Diagnostic::error(
                codes::TEMPLATE_FUEL,
                span,
                format!("the template stopped: {detail}"),
            )
            .with_help(
                "spec templates make short values; check the arguments of this filter or function",
            )
        }
        ErrorKind::SyntaxError => {
            let detail = error.detail().unwrap_or("invalid syntax");
            Diagnostic::error(codes::TEMPLATE_SYNTAX, span, format!("template syntax error: {detail}"))
                .with_help("to write a literal `{{`, use `{{ \"{{\" }}` or wrap the text in `{% raw %}...{% endraw %}`")
        }
        _ => {
            let detail = error
                .detail()
                .map_or_else(|| error.kind().to_string(), str::to_owned);
            let help = if detail.contains("unsupported types") {
                "`+` adds numbers; `~` joins values as text: `{{ replicas ~ \"x\" }}`"
            } else {
                "a template sees `name`, `namespace`, `replicas`, `target` and `vars.NAME`, and Jinja's filters (`{{ vars.n | int }}`)"
            };
            let at = at.map(|a| format!(" in `{a}`")).unwrap_or_default();
            Diagnostic::error(
                codes::TEMPLATE_ERROR,
                span,
                format!("the template failed{at}: {detail}"),
            )
            .with_help(help)
        }
    }
}
