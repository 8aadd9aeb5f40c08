//! Stage 4, validate: the composed tree against the JSON Schema, then the
//! semantic rules on the typed spec.
//!
//! Pass 1 ([`schema`]) checks shape: keys, types, enums, integer bounds. Only
//! when it finds no error is the tree deserialised into a [`Spec`] and pass 2
//! ([`rules`]) run: value formats, cross-field and target-specific rules, each
//! reported at the span the user wrote. Warnings never stop the pipeline.

use crate::diagnostic::{Diagnostic, codes};
use crate::source::Sources;
use crate::spec::Spec;
use crate::tree::Node;

pub mod knock_on;
mod kubernetes_forms;
mod kubernetes_names;
mod pod_template;
pub(crate) mod rules;
pub(crate) mod schema;
mod whole_numbers;

/// The outcome of validation: the typed spec when there were no errors, and
/// every diagnostic (errors and warnings) found on the way.
#[derive(Debug)]
pub struct Validated {
    pub spec: Option<Spec>,
    /// When there were errors, the spec the rules read (the invalid values
    /// set aside), so that the rules of later stages still find their problems.
    pub partial: Option<Spec>,
    pub diagnostics: Vec<Diagnostic>,
    /// The fields with a key or type error, whose absence later stages'
    /// rules must not report either.
    pub meant: knock_on::Meant,
}

/// Runs both passes over one composed document.
///
/// When the schema pass finds errors, the offending values are set aside and
/// the rules still run on what remains, so one run shows every problem; the
/// spec is returned only when there is no error at all.
pub fn validate(tree: &Node, sources: &Sources) -> Validated {
    let mut json = tree.to_json();
    let schema::Outcome {
        mut diagnostics,
        invalid,
        mut meant,
    } = schema::check(tree, &json, sources);
    let mut fragment = pod_template::check(tree, &json, sources);
    diagnostics.append(&mut fragment.diagnostics);
    meant.append(&mut fragment.meant);
    remove_pointers(&mut json, invalid.iter().chain(&fragment.invalid));
    let meant = knock_on::Meant::new(meant);
    let spec = match serde_json::from_value::<Spec>(json) {
        Ok(spec) => {
            let mut found = rules::check(&spec, tree, sources);
            meant.drop_knock_ons(&mut found);
            diagnostics.append(&mut found);
            Some(spec)
        }
        // A required key is missing or was invalid: nothing for the rules to read.
        Err(_) if diagnostics.iter().any(Diagnostic::is_error) => None,
        Err(error) => {
            // The schema is generated from the same types, so this means the two
            // disagree: report it rather than crash.
            diagnostics.push(Diagnostic::error(
                codes::SCHEMA_OTHER,
                tree.span,
                format!("invalid spec: {error}"),
            ));
            None
        }
    };
    // With no error nothing was set aside, so the spec the rules read is the whole spec.
    let failed = diagnostics.iter().any(Diagnostic::is_error);
    let (spec, partial) = if failed { (None, spec) } else { (spec, None) };
    Validated {
        spec,
        partial,
        diagnostics,
        meant,
    }
}

/// What the user wrote at `pointer`, as written (without TOML/YAML quotes;
/// `1e3`, not the number it reads as); a template's value as rendered.
pub(crate) fn written(tree: &Node, sources: &Sources, pointer: &str) -> String {
    let span = tree.span_at(pointer);
    let text = &sources.get(span.source).text;
    let written = text.get(span.start..span.end).unwrap_or("");
    if written.contains("{{")
        && let Some((node, _)) = tree.pointer(pointer)
    {
        return match node.to_json() {
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        };
    }
    written.trim_matches(|c| c == '"' || c == '\'').to_owned()
}

/// An overlay on its own: its keys and value types (`trainc check --as-overlay`).
pub(crate) fn validate_overlay(tree: &Node, sources: &Sources) -> Vec<Diagnostic> {
    // A key set to `null` is removed, as merging removes it (its path is
    // checked with the overlay's `unset` entries): not a value of the wrong type.
    let mut json = tree.to_json();
    drop_nulls(&mut json);
    schema::check_overlay(tree, &json, sources)
}

/// Removes every member whose value is `null`, at any depth of tables.
fn drop_nulls(json: &mut serde_json::Value) {
    if let serde_json::Value::Object(map) = json {
        map.retain(|_, v| !v.is_null());
        map.values_mut().for_each(drop_nulls);
    }
}

/// Removes the values at JSON pointers (keys from their tables; an array
/// item becomes null, which keeps the other items' pointers stable). The
/// keys of one table go in one pass, keeping the order of the rest: a table
/// with 20,000 unknown keys costs 20,000 steps, not 20,000 squared.
fn remove_pointers<'p>(json: &mut serde_json::Value, pointers: impl Iterator<Item = &'p String>) {
    let mut by_parent: std::collections::BTreeMap<&str, std::collections::HashSet<String>> =
        std::collections::BTreeMap::new();
    for pointer in pointers {
        if let Some((parent, last)) = pointer.rsplit_once('/') {
            by_parent
                .entry(parent)
                .or_default()
                .insert(crate::tree::segment_key(last));
        }
    }
    for (parent, keys) in by_parent {
        match json.pointer_mut(parent) {
            Some(serde_json::Value::Object(map)) => map.retain(|key, _| !keys.contains(key)),
            Some(serde_json::Value::Array(items)) => {
                for (i, item) in items.iter_mut().enumerate() {
                    if keys.contains(&i.to_string()) {
                        *item = serde_json::Value::Null;
                    }
                }
            }
            _ => {}
        }
    }
}
