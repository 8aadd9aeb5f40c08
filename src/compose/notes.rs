//! What an overlay does that its author may not mean, said as warnings:
//! an `unset` entry that removes nothing for a typo of a key the spec sets, a
//! variable set to `""` where the spec's was to be removed, and a list that
//! replaces the spec's and drops some of its entries (an overlay has no
//! append). Each is read before the overlay is merged.

use std::collections::{HashMap, HashSet};

use crate::diagnostic::{Diagnostic, codes, suggest};
use crate::source::Span;
use crate::tree::{Node, Value};

/// Lists whose order is their meaning, which an overlay replaces whole on
/// purpose: a command line.
const ORDERED: [&str; 3] = ["args", "command", "master.args"];

/// The `unset` entries and `null`s that remove nothing, past which no more
/// are looked at for a near spelling: each look reads the whole table.
const MAX_LOOKED_AT: usize = 100;

/// A table's entries by key, for a lookup in constant time: an overlay of
/// thousands of keys over a spec of thousands is read in linear time.
fn by_key(node: &Node) -> HashMap<&str, &Node> {
    node.as_table()
        .unwrap_or_default()
        .iter()
        .map(|e| (e.key.as_str(), &e.value))
        .collect()
}

/// How many dropped entries a warning shows.
const SHOWN: usize = 2;

/// The `unset` entries (or, with `nulls`, the keys set to `null`) that name
/// nothing in `base` but for a near spelling of a key it sets.
pub(super) fn removes_nothing(
    base: &Node,
    paths: &[(Vec<String>, Span)],
    nulls: bool,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    // Each table's index, made the first time a path goes through it.
    let mut tables: HashMap<*const Node, HashMap<&str, &Node>> = HashMap::new();
    let mut looked_at = 0;
    for (path, span) in paths {
        let mut node = base;
        let mut missing = None;
        for (depth, key) in path.iter().enumerate() {
            let index = tables
                .entry(std::ptr::from_ref(node))
                .or_insert_with(|| by_key(node));
            let Some(inner) = index.get(key.as_str()) else {
                missing = Some((depth, node));
                break;
            };
            node = inner;
        }
        let Some((depth, table)) = missing else {
            continue;
        };
        looked_at += 1;
        if looked_at > MAX_LOOKED_AT {
            break;
        }
        // A key the spec does not set is removed in case it does: an overlay
        // serves many specs. Only a near spelling of one it sets is a typo.
        let keys = table.as_table().unwrap_or_default();
        let Some(best) = suggest(&path[depth], keys.iter().map(|e| e.key.as_str())) else {
            continue;
        };
        let dotted = path.join(".");
        let what = if nulls {
            format!("`{dotted}: null`")
        } else {
            format!("`unset` entry `{dotted}`")
        };
        let mut meant = path[..depth].to_vec();
        meant.push(best.to_owned());
        out.push(
            Diagnostic::warning(
                codes::OVERLAY_UNSET_NOTHING,
                *span,
                format!("{what} removes nothing: the spec has no `{dotted}`"),
            )
            .with_help(format!("did you mean `{}`?", meant.join("."))),
        );
    }
    out
}

/// Lists that replace `base`'s and drop entries, and variables set to
/// `""` over the spec's, anywhere in `overlay`.
pub(super) fn replaced(base: &Node, overlay: &Node) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    walk(base, overlay, &mut Vec::new(), &mut out);
    out
}

fn walk(base: &Node, overlay: &Node, at: &mut Vec<String>, out: &mut Vec<Diagnostic>) {
    let Some(entries) = overlay.as_table() else {
        return;
    };
    let index = by_key(base);
    for entry in entries {
        let Some(was) = index.get(entry.key.as_str()) else {
            continue;
        };
        at.push(entry.key.clone());
        match (&was.value, &entry.value.value) {
            (Value::Table(_), Value::Table(_)) => walk(was, &entry.value, at, out),
            // An argument vector is replaced whole on purpose: its order is its meaning.
            (Value::Array(_), Value::Array(_)) if ORDERED.contains(&at.join(".").as_str()) => {}
            (Value::Array(old), Value::Array(new)) => {
                let kept: HashSet<String> = new.iter().map(|n| n.to_json().to_string()).collect();
                let dropped: Vec<String> = old
                    .iter()
                    .map(|n| n.to_json().to_string())
                    .filter(|item| !kept.contains(item))
                    .collect();
                if !dropped.is_empty() {
                    out.push(list_dropped(at, entry.key_span, old.len(), &dropped));
                }
            }
            (_, Value::String(text)) if text.is_empty() && at.len() == 2 && at[0] == "env" => {
                let dotted = format!("env.{}", entry.key);
                out.push(
                    Diagnostic::warning(
                        codes::OVERLAY_EMPTY_VARIABLE,
                        entry.value.span,
                        format!(
                            "`{dotted}` is set to the empty string: the pods still have `{}`, empty",
                            entry.key
                        ),
                    )
                    .with_help(format!(
                        "to remove the spec's variable, list it in `unset = [\"{dotted}\"]` at the top of the overlay; to set it empty on purpose, add `trainc::overlay::empty_variable` to `allowWarnings`"
                    )),
                );
            }
            _ => {}
        }
        at.pop();
    }
}

fn list_dropped(at: &[String], span: Span, had: usize, dropped: &[String]) -> Diagnostic {
    let dotted = at.join(".");
    let shown: Vec<String> = dropped
        .iter()
        .take(SHOWN)
        .map(|d| format!("`{d}`"))
        .collect();
    let more = if dropped.len() > SHOWN {
        format!(" and {} more", dropped.len() - SHOWN)
    } else {
        String::new()
    };
    Diagnostic::warning(
        codes::OVERLAY_LIST_REPLACED,
        span,
        format!(
            "`{dotted}` replaces the spec's list, dropping {} of its {had} entries: {}{more}",
            dropped.len(),
            shown.join(", ")
        ),
    )
    .with_help("an overlay's list replaces the spec's whole (there is no append): repeat the entries to keep, or `unset` the list first to say the replacement is meant")
}

/// An overlay given where the spec goes: it has `unset` (an overlay's own
/// key), or no `name` where an overlay given with `-O` is a whole spec. Said
/// once, before the keys an overlay lacks are reported one by one.
pub(crate) fn given_as_spec(
    spec: &Node,
    overlays: &[Node],
    sources: &crate::source::Sources,
) -> Option<Diagnostic> {
    let name = |node: &Node| sources.get(node.span.source).name.clone();
    let unset = spec.get(super::UNSET);
    let whole = |node: &Node| {
        node.get("name").is_some()
            && crate::spec::WHOLE_SPEC_KEYS
                .iter()
                .any(|k| node.get(k).is_some())
    };
    let swapped = overlays
        .iter()
        .find(|o| whole(o) && o.get(super::UNSET).is_none());
    let at = unset.map_or(Span::new(spec.span.source, 0, 0), |e| e.key_span);
    match (unset, swapped) {
        (_, Some(real)) if unset.is_some() || spec.get("name").is_none() => Some(
            Diagnostic::error(
                codes::OVERLAY_AS_SPEC,
                at,
                format!(
                    "`{}` is an overlay and `{}` a spec: they are given the other way round",
                    name(spec),
                    name(real)
                ),
            )
            .with_help(format!(
                "give the spec first and the overlay with `-O`: `trainc check {} -O {}`",
                name(real),
                name(spec)
            )),
        ),
        (Some(_), None) => Some(
            Diagnostic::error(
                codes::OVERLAY_AS_SPEC,
                at,
                format!(
                    "`{}` is an overlay (`unset` is an overlay's key), given where a spec goes",
                    name(spec)
                ),
            )
            .with_help(format!(
                "check it alone with `trainc check --as-overlay {0}`, or over the spec it changes: `trainc check SPEC -O {0}`",
                name(spec)
            )),
        ),
        _ => None,
    }
}
