//! A Kubernetes name written where the spec has its own key: the
//! `ttlSecondsAfterFinished`, `claimName` or `queueName` a newcomer knows,
//! answered with the spec's key and the line to write.
//!
//! Which field each spec key becomes is what render writes, so the names
//! are not listed here by hand: `schemas/kubernetes-names.tsv` holds, per
//! target, every object field a spec key's value lands in (and every
//! torchrun flag, `--nnodes=N`, in a command trainc writes), found by
//! building each key for every target and locked to the builds by
//! `tests/kubernetes_names.rs`. Beside a field's own name, a newcomer writes
//! it without Kubernetes' `Name` suffix (`serviceAccount`), the spec key with
//! another tool's suffix (`shmSize`), or the kind the key's description names
//! (`localQueue` for Kueue's LocalQueue), or its initials (`pvc`). Read only
//! when a key is unknown. A pod or container field with no spec key is
//! answered with `[podTemplate]` (`crate::validate::pod_template::pod_field`).

use std::collections::BTreeSet;
use std::sync::OnceLock;

use serde_json::Value as Json;

use crate::parse::Format;
use crate::spec::schema_lookup::description;
use crate::validate::kubernetes_forms::entry;

const TABLE: &str = include_str!("../../schemas/kubernetes-names.tsv");

/// Suffixes other tools and Kubernetes put after a name the spec writes bare.
const SUFFIXES: [&str; 3] = ["name", "size", "seconds"];

/// One row of the table: a spec key's value lands in `field` of a
/// `target`'s objects, a field named `name`.
#[derive(Clone, Copy)]
struct Row<'t> {
    target: &'t str,
    name: &'t str,
    /// Dotted, `*` for a table keyed by the user (`volumes.*.claim`).
    key: &'t str,
    /// How the field holds the spec's value.
    how: How,
    /// `Kind path.to.field`, from the object's `spec` on.
    field: &'t str,
}

/// How a field holds the spec's value: as it is, a duration as its
/// seconds, a number as text (a resource quantity).
#[derive(Clone, Copy, PartialEq, Eq)]
enum How {
    Same,
    Seconds,
    Text,
    /// No field: the target builds the key (its name is a spec word there).
    Builds,
}

/// The spec's value for `value`, the Kubernetes field's (as `how` holds it).
fn spec_value(value: &Json, how: How) -> Json {
    match (how, value) {
        (How::Seconds, Json::Number(n)) => n.as_u64().map_or_else(
            || value.clone(),
            |n| Json::String(crate::syntax::duration::written(n)),
        ),
        (How::Text, Json::String(text)) => text
            .parse::<u64>()
            .map_or_else(|_| value.clone(), Json::from),
        _ => value.clone(),
    }
}

/// The table's rows, read once per process: a spec of a thousand unknown
/// keys asks for each.
fn rows() -> impl Iterator<Item = Row<'static>> {
    static ROWS: OnceLock<Vec<Row<'static>>> = OnceLock::new();
    let rows = ROWS.get_or_init(|| {
        TABLE
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|line| {
                let mut cols = line.split('\t');
                Some(Row {
                    target: cols.next()?,
                    name: cols.next()?,
                    key: cols.next()?,
                    how: match cols.next()? {
                        "seconds" => How::Seconds,
                        "text" => How::Text,
                        "builds" => How::Builds,
                        _ => How::Same,
                    },
                    field: cols.next()?,
                })
            })
            .collect()
    });
    rows.iter().copied()
}

/// Lower case, letters and digits only: `queue-name` and `queueName` alike.
pub(super) fn norm(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

fn last(key: &str) -> &str {
    key.rsplit('.').next().unwrap_or(key)
}

/// How close a written name is to a row: its field's own name, the field
/// without Kubernetes' `Name`, the spec key with a suffix, or a kind in the
/// key's description.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Match {
    Field,
    /// The field's name without Kubernetes' `Name`.
    Short,
    /// The spec key with another tool's suffix.
    Suffixed,
    Described,
}

fn matches(written: &str, row: &Row<'_>) -> Option<Match> {
    if row.how == How::Builds {
        return None;
    }
    let name = norm(row.name);
    let own = norm(last(row.key));
    if name == written {
        return Some(Match::Field);
    }
    if name.strip_prefix(written) == Some("name") {
        return Some(Match::Short);
    }
    written
        .strip_prefix(own.as_str())
        .is_some_and(|rest| SUFFIXES.contains(&rest))
        .then_some(Match::Suffixed)
}

/// Each key of the table with the kinds its description names, words of
/// two capitals or more (`LocalQueue`), normalised: read once per process.
fn described() -> &'static [(&'static str, Vec<String>)] {
    static DESCRIBED: OnceLock<Vec<(&'static str, Vec<String>)>> = OnceLock::new();
    DESCRIBED.get_or_init(|| {
        let keys: BTreeSet<&str> = rows().map(|r| r.key).collect();
        keys.into_iter()
            .map(|key| {
                let pointer = format!("/{}", key.replace('.', "/"));
                let words = description(&pointer)
                    .map(|text| {
                        text.split(|c: char| !c.is_ascii_alphanumeric())
                            .filter(|w| w.chars().filter(char::is_ascii_uppercase).count() >= 2)
                            .flat_map(|w| {
                                // A kind's initials too: `pvc` for PersistentVolumeClaim.
                                let initials: String = w
                                    .chars()
                                    .filter(char::is_ascii_uppercase)
                                    .map(|c| c.to_ascii_lowercase())
                                    .collect();
                                let camel = w.chars().any(|c| c.is_ascii_lowercase());
                                [
                                    Some(norm(w)),
                                    (camel && initials.len() >= 3).then_some(initials),
                                ]
                            })
                            .flatten()
                            .collect()
                    })
                    .unwrap_or_default();
                (key, words)
            })
            .collect()
    })
}

/// Whether `written` (normalised) is the last word of a key a spec for
/// `target` may have. A spec key's own word (`queue`, `cpu`) said in another table is told where
/// it belongs apart, not taken for a field another key writes. The target's
/// words: JobSet's `maxRestarts` is a field of its own, where
/// `elastic.maxRestarts` is not.
fn is_spec_word(target: &str, written: &str) -> bool {
    rows().any(|r| r.target == target && norm_is(last(r.key), written))
}

/// Whether `name`, normalised, is `normalised` (without allocating).
fn norm_is(name: &str, normalised: &str) -> bool {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .eq(normalised.chars())
}

/// A candidate key, with the field it becomes (absent for a description's
/// word).
struct Candidate {
    key: String,
    how: Match,
    row: Option<Row<'static>>,
}

/// The spec keys `written` (in the table at `pointer`) may mean, best
/// first: the spec's target's before another's, the table's own before
/// another's, a Master's only inside `[master]`.
fn candidates(pointer: &str, written: &str, target: &str) -> Vec<Candidate> {
    let key = norm(written);
    if is_spec_word(target, &key) {
        return Vec::new();
    }
    let mut found: Vec<(bool, Candidate)> = Vec::new();
    for row in rows() {
        let Some(how) = matches(&key, &row) else {
            continue;
        };
        let other = row.target != target;
        if let Some(at) = found.iter_mut().find(|(_, c)| c.key == row.key) {
            if (other, how) < (at.0, at.1.how) {
                *at = (
                    other,
                    Candidate {
                        key: row.key.to_owned(),
                        how,
                        row: Some(row),
                    },
                );
            }
            continue;
        }
        found.push((
            other,
            Candidate {
                key: row.key.to_owned(),
                how,
                row: Some(row),
            },
        ));
    }
    for (spec_key, words) in described() {
        if !found.iter().any(|(_, c)| c.key == *spec_key) && words.contains(&key) {
            found.push((
                false,
                Candidate {
                    key: (*spec_key).to_owned(),
                    how: Match::Described,
                    row: None,
                },
            ));
        }
    }
    let in_master = pointer.starts_with("/master");
    let rank = |(other, c): &(bool, Candidate)| {
        let here = parent_of(&c.key, pointer).is_some();
        (
            c.key.starts_with("master.") != in_master,
            !here,
            *other,
            c.how,
        )
    };
    found.sort_by_key(|f| rank(f));
    if let Some(best) = found.first().map(rank) {
        // Only the closest matches: the target's own fields before another
        // target's, a description's word only alone.
        found.retain(|f| {
            let r = rank(f);
            r.0 == best.0
                && r.2 == best.2
                && (r.3 != Match::Described || best.3 == Match::Described)
        });
    }
    found.into_iter().map(|(_, c)| c).take(3).collect()
}

/// The key `dotted` with `*` filled from `pointer` where the key's table is
/// the one at `pointer` (`volumes.*.claim` in `/volumes/data`).
fn parent_of(dotted: &str, pointer: &str) -> Option<String> {
    let (parent, _) = dotted.rsplit_once('.').unwrap_or(("", dotted));
    let written: Vec<&str> = pointer.split('/').skip(1).collect();
    let pattern: Vec<&str> = if parent.is_empty() {
        Vec::new()
    } else {
        parent.split('.').collect()
    };
    (written.len() == pattern.len()
        && written
            .iter()
            .zip(&pattern)
            .all(|(w, p)| *p == "*" || w == p))
    .then(|| pointer.to_owned())
}

/// Where a key of `dotted` goes, said in the file's syntax.
fn place(dotted: &str, pointer: &str, format: Format) -> String {
    if parent_of(dotted, pointer).is_some() {
        return "instead".to_owned();
    }
    let Some((parent, _)) = dotted.rsplit_once('.') else {
        return "at the top level".to_owned();
    };
    let parent = parent.replace('*', "NAME");
    match format {
        Format::Toml => format!("in `[{parent}]`"),
        Format::Yaml => format!("under `{parent}`"),
    }
}

/// The object field `row` names: the kind's, from its pod's or its own
/// `spec` on.
fn shown(row: &Row<'_>) -> String {
    if row.name.starts_with("--") {
        return format!("torchrun's `{}`", row.name);
    }
    let (kind, path) = row.field.split_once(' ').unwrap_or(("", row.field));
    let path = path.rsplit_once(".spec.").map_or(path, |(_, p)| p);
    format!("the {kind}'s `{path}`")
}

/// The help for `written` (holding `value`), unknown in the table at
/// `pointer` of a spec for `target`, and the pointer of the key meant
/// (empty for a part of an object, which no one key makes).
pub(super) fn answer(
    pointer: &str,
    written: &str,
    value: &Json,
    target: &str,
    format: Format,
) -> Option<(String, String)> {
    let mut found = candidates(pointer, written, target);
    // Of several keys, the one spelt like the name written (`numProcPerNode`:
    // `nProcPerNode`, not `resources.gpus`, whose count it defaults to).
    if found.len() > 1
        && let Some(near) = crate::diagnostic::suggest(written, found.iter().map(|c| last(&c.key)))
    {
        let near = near.to_owned();
        found.retain(|c| last(&c.key) == near);
    }
    // Of several keys, not one the value cannot be (`size = "datasets"`).
    if found.len() > 1 {
        let fits = |c: &Candidate| {
            let text = value.as_str();
            !(text.is_some_and(|t| crate::syntax::quantity::parse(t).is_err())
                && crate::spec::schema_lookup::is_quantity(&format!(
                    "/{}",
                    c.key.replace('.', "/")
                )))
        };
        if found.iter().any(fits) {
            found.retain(fits);
        }
    }
    let Some(first) = found.first() else {
        return part_of_object(written, target);
    };
    let forms: Vec<(String, String)> = found
        .iter()
        .map(|c| {
            let value = c
                .row
                .map_or_else(|| value.clone(), |r| spec_value(value, r.how));
            let line = format!(
                "`{}` {}",
                entry(last(&c.key), &value, format),
                place(&c.key, pointer, format)
            );
            let what = match (c.how, &c.row) {
                (Match::Field, Some(row)) => shown(row),
                (Match::Short, Some(row)) => format!("short for {}", shown(row)),
                _ => String::new(),
            };
            (line, what)
        })
        .collect();
    let meant = parent_of(&first.key, pointer).map_or_else(
        || format!("/{}", first.key.replace('.', "/")),
        |p| format!("{p}/{}", last(&first.key)),
    );
    let help = if let [(line, what)] = forms.as_slice() {
        let key = first.key.replace('*', "NAME");
        if what.is_empty() {
            format!("the spec's key for `{written}` is `{key}`: write {line}")
        } else {
            format!("`{written}` is {what}; the spec's key is `{key}`: write {line}")
        }
    } else {
        let each: Vec<String> = found
            .iter()
            .zip(&forms)
            .map(|(c, (line, what))| {
                let what = if what.is_empty() {
                    String::new()
                } else {
                    format!(": {what}")
                };
                format!("`{}` ({line}{what})", c.key.replace('*', "NAME"))
            })
            .collect();
        let count = ["either of two", "any of three"][forms.len().min(3) - 2];
        format!(
            "`{written}` may mean {count} spec keys: {}",
            each.join(", or ")
        )
    };
    Some((help, meant))
}

/// `pytorchReplicaSpec(s)`, `runPolicy`, `replicatedJobs`: not a field but
/// a part of the object trainc writes, named by the spec's keys under it.
fn part_of_object(written: &str, target: &str) -> Option<(String, String)> {
    let key = norm(written);
    // A spec's own table or key, or nearly (`resource`): a typo, not a part.
    let plural = format!("{key}s");
    let singular = key.strip_suffix('s');
    let near = |segment: &str| {
        norm_is(segment, &key)
            || norm_is(segment, &plural)
            || singular.is_some_and(|one| norm_is(segment, one))
    };
    if rows().flat_map(|r| r.key.split('.')).any(near) {
        return None;
    }
    let part = |row: &Row<'_>| -> Option<String> {
        let (_, path) = row.field.split_once(' ')?;
        let segments: Vec<&str> = path.split('.').collect();
        // A part holds fields: not the path's last segment.
        segments[..segments.len().saturating_sub(1)]
            .iter()
            .map(|s| s.split('[').next().unwrap_or(s))
            .find(|s| {
                let n = norm(s);
                n == key || n == format!("{key}s") || format!("{n}s") == key
            })
            .map(str::to_owned)
    };
    let rows: Vec<(Row<'static>, String)> = rows()
        .filter(|r| r.target == target && r.how != How::Builds)
        .filter_map(|r| Some((r, part(&r)?)))
        .collect();
    let (row, segment) = rows.first()?;
    let kind = row.field.split_once(' ').map_or("", |(k, _)| k);
    // The spec's tables and keys that write it, those that write most first.
    let mut groups: Vec<(usize, String)> = Vec::new();
    for (r, _) in &rows {
        let group = match r.key.split_once('.') {
            Some((table, _)) => format!("`[{table}]`"),
            None => format!("`{}`", r.key),
        };
        match groups.iter_mut().find(|(_, g)| *g == group) {
            Some((count, _)) => *count += 1,
            None => groups.push((1, group)),
        }
    }
    groups.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let shown: Vec<String> = groups.into_iter().take(4).map(|(_, g)| g).collect();
    Some((
        format!(
            "`{written}` is a part of the {kind} trainc writes (`{segment}`), not a key of the spec: the spec says it with {}; to turn a {kind} you have into a spec, `trainc import FILE`",
            shown.join(", ")
        ),
        String::new(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_kubernetes_name_is_answered_with_the_spec_key() {
        let (help, meant) = answer(
            "",
            "ttlSecondsAfterFinished",
            &json!(3600),
            "pytorchjob",
            Format::Toml,
        )
        .unwrap();
        assert!(help.contains("`policy.ttlAfterFinished`"), "{help}");
        assert!(
            help.ends_with("write `ttlAfterFinished = \"1h\"` in `[policy]`"),
            "{help}"
        );
        assert_eq!(meant, "/policy/ttlAfterFinished");
        let (help, _) = answer(
            "/volumes/data",
            "claimName",
            &json!("d"),
            "job",
            Format::Yaml,
        )
        .unwrap();
        assert!(help.ends_with("write `claim: \"d\"` instead"), "{help}");
        let (help, _) = answer("", "localQueue", &json!("q"), "jobset", Format::Toml).unwrap();
        assert!(help.contains("`scheduling.queue`"), "{help}");
        assert!(answer("", "cpu", &json!("1"), "pytorchjob", Format::Toml).is_none());
        assert!(answer("", "banana", &json!("1"), "pytorchjob", Format::Toml).is_none());
    }
}
