//! Stage 3, compose: overlays and command-line settings on top of the base spec.
//!
//! An overlay is a partial spec, deep-merged over the base in order: tables
//! merge key by key, scalars and arrays replace. Every merged value keeps the
//! span of the file that set it, so a diagnostic about it points into that
//! overlay. Two ways remove what the base set:
//!
//! - `unset = ["resources.gpus", "scheduling.tolerations"]` at the top of an
//!   overlay (TOML or YAML) removes those keys before the overlay's own values
//!   are merged, so an overlay can also replace a whole table;
//! - in a YAML overlay, a key set to `null` (`gpus: ~`) is removed, as in a
//!   JSON merge patch.
//!
//! A value set on the command line (`--target trainjob`, `--set tag=1.5`)
//! becomes a source of its own named `<command line>`, so a diagnostic about it
//! points at the flag rather than at a file that never mentioned it.

mod notes;

pub(crate) use notes::given_as_spec;

use std::collections::{HashMap, HashSet};

use crate::diagnostic::suggest;
use crate::diagnostic::{Diagnostic, codes};
use crate::source::{SourceId, Sources, Span};
use crate::spec::schema_lookup;
use crate::tree::field_path;
use crate::tree::{Entry, Node, Value};

/// The overlay-only key that lists paths to remove.
pub(crate) const UNSET: &str = "unset";

/// Merges `overlay` over `base`; returns the problems with its `unset` list
/// and what the overlay does silently ([`notes`]): an `unset` entry that
/// removes nothing, an empty string where a variable was to be removed, a
/// list that drops the spec's entries.
pub fn merge_overlay(base: &mut Node, mut overlay: Node) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    if let Value::Table(entries) = &mut overlay.value
        && let Some(i) = entries.iter().position(|e| e.key == UNSET)
    {
        let unset = entries.remove(i);
        let paths = unset_paths(&unset, &mut problems);
        problems.extend(notes::removes_nothing(base, &paths, false));
        let paths: Vec<Vec<String>> = paths.into_iter().map(|(path, _)| path).collect();
        remove_all(base, &paths);
    }
    // A YAML `null` removes its key as an `unset` entry does, held to the same rules.
    let nulls = null_paths(&overlay, &mut problems);
    problems.extend(notes::removes_nothing(base, &nulls, true));
    problems.extend(notes::replaced(base, &overlay));
    merge(base, overlay);
    problems
}

/// An overlay's `unset` entries as written (`"resources.gpus"`), with their
/// spans: what a rule that finds the field unset points back to.
pub(crate) fn unset_entries(overlay: &Node) -> Vec<(String, crate::source::Span)> {
    let items = overlay
        .get(UNSET)
        .and_then(|e| match &e.value.value {
            Value::Array(items) => Some(items),
            _ => None,
        })
        .into_iter()
        .flatten();
    items
        .filter_map(|item| Some((item.as_str()?.to_owned(), item.span)))
        .collect()
}

/// The problems with an overlay's `unset` list and its `null`s, without
/// applying them.
pub(crate) fn check_unset(overlay: &Node) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    if let Value::Table(entries) = &overlay.value
        && let Some(unset) = entries.iter().find(|e| e.key == UNSET)
    {
        unset_paths(unset, &mut problems);
    }
    null_paths(overlay, &mut problems);
    problems
}

/// The keys a YAML overlay sets to `null` (which removes them), each checked
/// to name a field of the spec as an `unset` entry is, with its place.
fn null_paths(overlay: &Node, problems: &mut Vec<Diagnostic>) -> Vec<(Vec<String>, Span)> {
    fn walk(node: &Node, at: &mut Vec<String>, out: &mut Vec<(Vec<String>, Span)>) {
        for entry in node.as_table().unwrap_or_default() {
            at.push(entry.key.clone());
            match entry.value.value {
                Value::Null => out.push((at.clone(), entry.key_span)),
                Value::Table(_) => walk(&entry.value, at, out),
                _ => {}
            }
            at.pop();
        }
    }
    let mut out = Vec::new();
    walk(overlay, &mut Vec::new(), &mut out);
    out.retain(|(path, span)| match unknown_field(path, *span) {
        Some(mut problem) => {
            problem.message = format!(
                "`{}: null` removes a key, and `{}` is not a field of the spec",
                path.join("."),
                path.join(".")
            );
            problems.push(problem);
            false
        }
        None => true,
    });
    out
}

fn merge(base: &mut Node, overlay: Node) {
    let (Value::Table(base_entries), Value::Table(overlay_entries)) =
        (&mut base.value, overlay.value)
    else {
        return;
    };
    // Each key's place, so that a large overlay merges in linear time.
    let mut places: HashMap<String, usize> = base_entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.key.clone(), i))
        .collect();
    let mut removed = vec![false; base_entries.len()];
    for entry in overlay_entries {
        match (places.get(&entry.key).copied(), &entry.value.value) {
            (Some(i), Value::Null) => {
                removed[i] = true;
                places.remove(&entry.key);
            }
            (None, Value::Null) => {}
            (Some(i), Value::Table(_))
                if matches!(base_entries[i].value.value, Value::Table(_)) =>
            {
                merge(&mut base_entries[i].value, entry.value);
            }
            (Some(i), _) => base_entries[i] = entry,
            (None, _) => {
                // A new table's `null`s remove nothing, and stay out.
                let mut entry = entry;
                drop_nulls(&mut entry.value);
                places.insert(entry.key.clone(), base_entries.len());
                base_entries.push(entry);
                removed.push(false);
            }
        }
    }
    if removed.contains(&true) {
        let mut removed = removed.into_iter();
        base_entries.retain(|_| !removed.next().unwrap_or(false));
    }
}

/// Removes the keys set to `null` in the tables of `node`, at any depth.
fn drop_nulls(node: &mut Node) {
    if let Value::Table(entries) = &mut node.value {
        entries.retain(|e| !matches!(e.value.value, Value::Null));
        for entry in entries {
            drop_nulls(&mut entry.value);
        }
    }
}

/// The paths of an `unset` list, each checked to name a field of the spec,
/// with where each is written.
fn unset_paths(unset: &Entry, problems: &mut Vec<Diagnostic>) -> Vec<(Vec<String>, Span)> {
    let help = "`unset` lists dotted paths of keys to remove, e.g. `unset = [\"resources.gpus\", \"scheduling.tolerations\"]`";
    let Value::Array(items) = &unset.value.value else {
        problems.push(
            Diagnostic::error(
                codes::OVERLAY_UNSET,
                unset.value.span,
                "`unset` must be an array of paths",
            )
            .with_help(help),
        );
        return Vec::new();
    };
    let mut paths = Vec::new();
    for item in items {
        let Some(text) = item.as_str() else {
            problems.push(
                Diagnostic::error(
                    codes::OVERLAY_UNSET,
                    item.span,
                    "each `unset` entry must be a path string",
                )
                .with_help(help),
            );
            continue;
        };
        let path = match split_path(text) {
            Ok(path) => path,
            Err(why) => {
                problems.push(
                    Diagnostic::error(
                        codes::OVERLAY_UNSET,
                        item.span,
                        format!("`{text}` is not a path: {why}"),
                    )
                    .with_help(help),
                );
                continue;
            }
        };
        if let Some(problem) = unknown_field(&path, item.span) {
            problems.push(problem);
            continue;
        }
        paths.push((path, item.span));
    }
    paths
}

/// An error when `path` names no field of the spec (keys of maps such as
/// `env` or `labels` are free).
fn unknown_field(path: &[String], span: Span) -> Option<Diagnostic> {
    let mut pointer = String::new();
    for segment in path {
        let parent = schema_lookup::schema_at_pointer(&pointer)?;
        let free = parent
            .get("additionalProperties")
            .is_some_and(serde_json::Value::is_object);
        let known: Vec<&str> = parent
            .get("properties")
            .and_then(|p| p.as_object())
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        if !free && !known.contains(&segment.as_str()) {
            let place = if pointer.is_empty() {
                "the spec".to_owned()
            } else {
                format!("`{}`", field_path(&pointer))
            };
            let d = Diagnostic::error(
                codes::OVERLAY_UNSET,
                span,
                format!("`unset` names `{segment}`, which is not a field of {place}"),
            );
            return Some(match suggest(segment, known.iter().copied()) {
                Some(best) => d.with_help(format!("did you mean `{best}`?")),
                None => d.with_help(format!(
                    "fields there: {}",
                    known
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            });
        }
        pointer.push('/');
        pointer.push_str(&crate::tree::pointer_segment(segment));
    }
    None
}

/// `resources.gpus` → `["resources", "gpus"]`; `labels."app.kubernetes.io/name"`
/// keeps a quoted key whole.
pub(crate) fn split_path(text: &str) -> Result<Vec<String>, String> {
    let mut segments = Vec::new();
    let mut rest = text;
    loop {
        let segment;
        if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted.find('"').ok_or("a quoted key is not closed")?;
            segment = quoted[..end].to_owned();
            rest = &quoted[end + 1..];
        } else {
            let end = rest.find('.').unwrap_or(rest.len());
            segment = rest[..end].to_owned();
            rest = &rest[end..];
        }
        if segment.is_empty() {
            return Err("it has an empty key".to_owned());
        }
        segments.push(segment);
        match rest.strip_prefix('.') {
            Some(after) => rest = after,
            None if rest.is_empty() => return Ok(segments),
            None => return Err("keys are separated by `.`".to_owned()),
        }
    }
}

/// Removes every path of `paths` from `node`, visiting only the tables on
/// the way to one: linear in the paths and the tables they name.
fn remove_all(node: &mut Node, paths: &[Vec<String>]) {
    let whole: HashSet<&[String]> = paths.iter().map(Vec::as_slice).collect();
    let on_the_way: HashSet<&[String]> = paths
        .iter()
        .flat_map(|p| (1..p.len()).map(move |n| &p[..n]))
        .collect();
    let mut at = Vec::new();
    remove_under(node, &mut at, &whole, &on_the_way);
}

fn remove_under(
    node: &mut Node,
    at: &mut Vec<String>,
    whole: &HashSet<&[String]>,
    on_the_way: &HashSet<&[String]>,
) {
    let Value::Table(entries) = &mut node.value else {
        return;
    };
    entries.retain(|e| {
        at.push(e.key.clone());
        let keep = !whole.contains(at.as_slice());
        at.pop();
        keep
    });
    for entry in entries {
        at.push(entry.key.clone());
        if on_the_way.contains(at.as_slice()) {
            remove_under(&mut entry.value, at, whole, on_the_way);
        }
        at.pop();
    }
}

/// Sets the value at `path` (`["trainjob", "apiLevel"]`) to the string
/// `value`, as written right after `flag` (`"--api-level "`, `"--set tag="`),
/// replacing what the spec said and creating tables on the way as needed.
pub(crate) fn set_from_command_line(
    tree: &mut Node,
    sources: &mut Sources,
    flag: &str,
    path: &[&str],
    value: &str,
    typed: bool,
) {
    let text = format!("{flag}{value}");
    let id: SourceId = sources.add(crate::source::COMMAND_LINE, text.clone());
    let key_span = Span::new(id, 0, flag.trim_end().len());
    let value_span = Span::new(id, flag.len(), text.len());
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = tree;
    for key in parents {
        let Value::Table(entries) = &mut node.value else {
            return;
        };
        let index = entries
            .iter()
            .position(|e| e.key == *key)
            .unwrap_or_else(|| {
                entries.push(Entry {
                    key: (*key).to_owned(),
                    key_span,
                    value: Node::new(Value::Table(Vec::new()), key_span),
                });
                entries.len() - 1
            });
        node = &mut entries[index].value;
    }
    let Value::Table(entries) = &mut node.value else {
        return;
    };
    let value = if typed {
        command_line_value(value, value_span)
    } else {
        Node::new(Value::String(value.to_owned()), value_span)
    };
    let entry = Entry {
        key: (*last).to_owned(),
        key_span,
        value,
    };
    match entries.iter_mut().find(|e| e.key == *last) {
        Some(existing) => *existing = entry,
        None => entries.push(entry),
    }
}

/// A `--set` value read as a TOML value, so that `--set n=8` is the integer
/// 8 as `[vars] n = 8` is: `8`, `1_000`, `1.5`, `true`, `[1, 2]`, `"quoted"`
/// (a string that would read as something else). Anything that is not a
/// TOML value is the text itself (`--set run=lr-sweep-3`), and a number
/// that would not read back as written (`1.10`, `1e3`), alone or in a
/// list, is its text, as in `[vars]` (`tree::numbers_as_written`).
fn command_line_value(text: &str, span: Span) -> Node {
    // Read on its own, so that each number of a list has its own written
    // text (the command line's source holds the value as one span).
    let mut scratch = Sources::new();
    let id = scratch.add("--set value", format!("v = {text}"));
    let parsed = crate::parse::parse(id, scratch.get(id))
        .ok()
        .and_then(|root| match root.value {
            Value::Table(mut entries) if entries.len() == 1 => Some(entries.remove(0).value),
            _ => None,
        });
    match parsed {
        Some(mut node) => {
            crate::tree::numbers_as_written(&mut node, &scratch);
            placed_at(&mut node, span);
            node
        }
        None => Node::new(Value::String(text.to_owned()), span),
    }
}

/// Every span of a `--set` value: its place on the command line.
fn placed_at(node: &mut Node, span: Span) {
    node.span = span;
    match &mut node.value {
        Value::Array(items) => {
            for item in items {
                placed_at(item, span);
            }
        }
        Value::Table(entries) => {
            for entry in entries {
                entry.key_span = span;
                placed_at(&mut entry.value, span);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Sources;

    fn parse(sources: &mut Sources, name: &str, text: &str) -> Node {
        let id = sources.add(name, text);
        crate::parse::parse(id, sources.get(id)).unwrap()
    }

    #[test]
    fn tables_merge_and_scalars_and_arrays_replace_in_order() {
        let mut sources = Sources::new();
        let mut base = parse(
            &mut sources,
            "base.toml",
            "name = \"a\"\nargs = [\"1\", \"2\"]\n[env]\nA = \"1\"\nB = \"2\"\n",
        );
        let first = parse(
            &mut sources,
            "one.toml",
            "args = [\"3\"]\n[env]\nB = \"two\"\nC = \"3\"\n",
        );
        let second = parse(
            &mut sources,
            "two.toml",
            "name = \"b\"\n[env]\nC = \"three\"\n",
        );
        assert!(merge_overlay(&mut base, first).is_empty());
        assert!(merge_overlay(&mut base, second).is_empty());
        assert_eq!(
            base.to_json(),
            serde_json::json!({"name": "b", "args": ["3"], "env": {"A": "1", "B": "two", "C": "three"}})
        );
        // Each value remembers the file that set it.
        assert_eq!(
            sources
                .get(base.pointer("/env/B").unwrap().0.span.source)
                .name,
            "one.toml"
        );
        assert_eq!(
            sources
                .get(base.pointer("/env/C").unwrap().0.span.source)
                .name,
            "two.toml"
        );
        assert_eq!(
            sources
                .get(base.pointer("/env/A").unwrap().0.span.source)
                .name,
            "base.toml"
        );
    }

    #[test]
    fn unset_and_yaml_null_remove_keys() {
        let mut sources = Sources::new();
        let mut base = parse(
            &mut sources,
            "b.toml",
            "name = \"a\"\n[resources]\ngpus = 4\ncpu = 8\n[labels]\n\"a.io/x\" = \"1\"\ny = \"2\"\n",
        );
        let overlay = parse(
            &mut sources,
            "o.toml",
            "unset = [\"resources.gpus\", 'labels.\"a.io/x\"']\n[resources]\ngpus = 1\n",
        );
        assert!(merge_overlay(&mut base, overlay).is_empty());
        assert_eq!(
            base.to_json()["resources"],
            serde_json::json!({"cpu": 8, "gpus": 1})
        );
        assert_eq!(base.to_json()["labels"], serde_json::json!({"y": "2"}));
        let yaml = parse(&mut sources, "o.yaml", "resources:\n  gpus: ~\n");
        assert!(merge_overlay(&mut base, yaml).is_empty());
        assert_eq!(base.to_json()["resources"], serde_json::json!({"cpu": 8}));
    }

    #[test]
    fn unset_paths_are_checked() {
        let mut sources = Sources::new();
        let mut base = parse(&mut sources, "b.toml", "name = \"a\"\n");
        let overlay = parse(
            &mut sources,
            "o.toml",
            "unset = [\"resource.gpus\", \"env.ANY\", \"a..b\", 3]\n",
        );
        let problems = merge_overlay(&mut base, overlay);
        let messages: Vec<&str> = problems.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(problems.len(), 3, "{messages:?}");
        assert_eq!(
            problems[0].help.as_deref(),
            Some("did you mean `resources`?")
        );
        assert!(messages[1].contains("not a path"));
        assert!(messages[2].contains("path string"));
    }
}
