//! An overlay's removals in the two forms that say them: TOML's `unset`
//! list of dotted paths, and a patch's `null`s (kustomize removes a key set
//! to `null`, as `trainc build -O` does).

use super::comments::{Comments, Notes, Place};
use super::{Bare, own_lines};
use crate::compose::{UNSET, split_path};
use crate::diagnostic::{Diagnostic, codes};
use crate::source::Span;
use crate::tree::{Entry, Node, Value};

/// An overlay's `null`s as entries of its `unset` list (TOML has no null).
pub(super) fn nulls_to_unset(doc: &mut Bare, comments: &mut Comments, synthetic: Span) {
    let mut paths = Vec::new();
    let mut carried = Notes::default();
    take_nulls(
        &mut doc.entries,
        &mut Vec::new(),
        &mut paths,
        comments,
        &mut carried,
    );
    if paths.is_empty() {
        return;
    }
    let items = paths
        .into_iter()
        .map(|p| Node::new(Value::String(p), synthetic));
    if let Some(unset) = doc.entries.iter_mut().find(|e| e.key == UNSET) {
        if let Value::Array(list) = &mut unset.value.value {
            list.extend(items);
        }
        comments.put(Place::Key(unset.key_span.start), carried);
        return;
    }
    let span = Span::new(synthetic.source, usize::MAX - 1, usize::MAX - 1);
    comments.put(Place::Key(span.start), carried);
    doc.entries.insert(
        0,
        Entry {
            key: UNSET.to_owned(),
            key_span: span,
            value: Node::new(Value::Array(items.collect()), synthetic),
        },
    );
}

pub(super) fn take_nulls(
    entries: &mut Vec<Entry>,
    at: &mut Vec<String>,
    paths: &mut Vec<String>,
    comments: &mut Comments,
    carried: &mut Notes,
) {
    entries.retain_mut(|entry| {
        at.push(entry.key.clone());
        let keep = match &mut entry.value.value {
            Value::Null => {
                paths.push(dotted(at));
                let own = comments.take(Place::Key(entry.key_span.start));
                carried.above.extend(own_lines(own));
                false
            }
            // A table that held nothing but `null`s is gone with them.
            Value::Table(inner) if !inner.is_empty() => {
                take_nulls(inner, at, paths, comments, carried);
                !inner.is_empty()
            }
            _ => true,
        };
        at.pop();
        keep
    });
}

/// `["labels", "acme.com/tier"]` as `unset` writes it: `labels."acme.com/tier"`.
pub(super) fn dotted(path: &[String]) -> String {
    let segments: Vec<String> = path
        .iter()
        .map(|s| {
            if s.is_empty() || s.contains(['.', '"']) {
                format!("\"{s}\"")
            } else {
                s.clone()
            }
        })
        .collect();
    segments.join(".")
}

/// An overlay's `unset` entries as a patch's `null`s (kustomize removes a
/// key set to `null`).
pub(super) fn unset_to_nulls(
    doc: &mut Bare,
    comments: &mut Comments,
    synthetic: Span,
) -> Result<(), Vec<Diagnostic>> {
    let Some(i) = doc.entries.iter().position(|e| e.key == UNSET) else {
        return Ok(());
    };
    let unset = doc.entries.remove(i);
    let own = comments.take(Place::Key(unset.key_span.start));
    comments.header.extend(own_lines(own));
    let Value::Array(items) = unset.value.value else {
        return Err(vec![Diagnostic::error(
            codes::OVERLAY_UNSET,
            unset.value.span,
            "`unset` must be an array of paths",
        )]);
    };
    let mut problems = Vec::new();
    for item in items {
        let Some(Ok(path)) = item.as_str().map(split_path) else {
            problems.push(Diagnostic::error(
                codes::OVERLAY_UNSET,
                item.span,
                "each `unset` entry must be a dotted path such as `\"resources.gpus\"`",
            ));
            continue;
        };
        let notes = comments.take(Place::Item(item.span.start));
        put_null(&mut doc.entries, &path, item.span, synthetic, &mut problems);
        comments.header.extend(own_lines(notes));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// `path` set to `null` in `entries`, the tables on the way made; a path
/// the overlay sets again as a table is a problem (a patch merges tables).
fn put_null(
    entries: &mut Vec<Entry>,
    path: &[String],
    written: Span,
    synthetic: Span,
    problems: &mut Vec<Diagnostic>,
) {
    let (key, rest) = path.split_first().expect("a path has a key");
    let at = entries
        .iter()
        .position(|e| &e.key == key)
        .unwrap_or_else(|| {
            let value = if rest.is_empty() {
                Value::Null
            } else {
                Value::Table(Vec::new())
            };
            entries.push(Entry {
                key: key.clone(),
                key_span: synthetic,
                value: Node::new(value, synthetic),
            });
            entries.len() - 1
        });
    match (&mut entries[at].value.value, rest.is_empty()) {
        (Value::Table(inner), false) => put_null(inner, rest, written, synthetic, problems),
        (Value::Table(_), true) => problems.push(Diagnostic::error(
            codes::CONVERT_NO_FORM,
            written,
            format!("`{}` is unset and then set again as a table, which a patch cannot say: kustomize merges the patch's table into the TrainSpec's", dotted(path)),
        )
        .with_help("set the keys to remove to `null` in the overlay's table instead, or keep this overlay in TOML for `trainc build -O`")),
        // `null` already, or set again as a value, which replaces the
        // TrainSpec's anyway.
        _ => {}
    }
}

/// Whether the overlay sets `path` to a value.
pub(super) fn is_set(entries: &[Entry], path: &[String]) -> bool {
    let Some((key, rest)) = path.split_first() else {
        return false;
    };
    match entries
        .iter()
        .find(|e| &e.key == key)
        .map(|e| &e.value.value)
    {
        None | Some(Value::Null) => false,
        Some(Value::Table(inner)) if !rest.is_empty() => is_set(inner, rest),
        Some(_) => rest.is_empty(),
    }
}
