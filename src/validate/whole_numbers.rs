//! Validation pass 1, with the schema: whole numbers written as decimals.
//!
//! JSON Schema counts `2.0` as an integer, so the schema alone lets
//! `replicas = 2.0` through to the typed spec, which rejects it without saying
//! where. This reports it at the value instead, with the integer to write.

use std::fmt::Write as _;

use crate::diagnostic::{Diagnostic, codes};
use crate::source::Sources;
use crate::spec::schema_lookup::takes_only_integers;
use crate::tree::field_path;
use crate::tree::{Node, Value, push_segment};

/// `replicas = 2.0`: JSON Schema counts a whole float as an integer, but the
/// value is written as a decimal number and Kubernetes wants an integer, so a
/// field that takes only integers reports it here, at the value, with the fix.
/// An integer too large for 64 bits (YAML reads it as a float) is left to
/// the range check, which names the limit.
pub(super) fn check(
    node: &Node,
    sources: &Sources,
    out: &mut Vec<Diagnostic>,
    invalid: &mut Vec<String>,
) {
    // Most specs have no whole decimal at all: then no pointer is spelled out.
    fn any_whole_float(node: &Node) -> bool {
        match &node.value {
            Value::Float(f) => f.fract() == 0.0,
            Value::Table(entries) => entries.iter().any(|e| any_whole_float(&e.value)),
            Value::Array(items) => items.iter().any(any_whole_float),
            _ => false,
        }
    }
    if any_whole_float(node) {
        check_at(node, &mut String::new(), sources, out, invalid);
    }
}

fn check_at(
    node: &Node,
    pointer: &mut String,
    sources: &Sources,
    out: &mut Vec<Diagnostic>,
    invalid: &mut Vec<String>,
) {
    let written = || {
        let span = node.span;
        sources
            .get(span.source)
            .text
            .get(span.start..span.end)
            .unwrap_or("")
    };
    match &node.value {
        Value::Float(f)
            if f.fract() == 0.0
                && f.abs() < 9_007_199_254_740_992.0 // 2^53: beyond it, the range check speaks
                && takes_only_integers(pointer)
                && written().contains(['.', 'e', 'E']) =>
        {
            out.push(
                Diagnostic::error(
                    codes::SCHEMA_TYPE,
                    node.span,
                    format!(
                        "`{}` must be an integer, found a decimal number",
                        field_path(pointer)
                    ),
                )
                .with_help(format!("write it without a fraction: `{f:.0}`")),
            );
            invalid.push(pointer.to_owned());
        }
        Value::Table(entries) => {
            // One buffer for every pointer: a spec's values cost no allocation.
            let len = pointer.len();
            for entry in entries {
                pointer.push('/');
                push_segment(pointer, &entry.key);
                check_at(&entry.value, pointer, sources, out, invalid);
                pointer.truncate(len);
            }
        }
        Value::Array(items) => {
            let len = pointer.len();
            for (i, item) in items.iter().enumerate() {
                let _ = write!(pointer, "/{i}");
                check_at(item, pointer, sources, out, invalid);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}
