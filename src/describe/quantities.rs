//! Requests and limits as `describe` states them: per pod, and summed over
//! the pods of a job whose Master may differ from its Workers.

use std::collections::BTreeMap;

use crate::model::Container;

/// Pods alike in their resources, and how many there are.
#[derive(Clone, Copy)]
pub(super) struct Pods<'a> {
    requests: &'a BTreeMap<String, String>,
    limits: &'a BTreeMap<String, String>,
    shm: Option<&'a str>,
    count: u32,
}

impl<'a> Pods<'a> {
    pub(super) fn of(container: &'a Container, shm: Option<&'a str>, count: u32) -> Pods<'a> {
        Pods {
            requests: &container.requests,
            limits: &container.limits,
            shm,
            count,
        }
    }

    /// Requests (and limits where they differ) of these pods, plus
    /// /dev/shm.
    pub(super) fn text(self) -> String {
        let mut parts = parts(&[self]);
        parts.extend(
            self.shm
                .map(|shm| format!("/dev/shm {shm} (counts against memory)")),
        );
        joined(&parts)
    }
}

/// Requests (and limits where they differ) of every pod of `groups`.
pub(super) fn total(groups: &[Pods<'_>]) -> String {
    joined(&parts(groups))
}

fn joined(parts: &[String]) -> String {
    if parts.is_empty() {
        "nothing requested (the cluster's defaults)".to_owned()
    } else {
        parts.join(", ")
    }
}

/// Each resource's requests (and limits where they differ) summed over the
/// pods of `groups`.
fn parts(groups: &[Pods<'_>]) -> Vec<String> {
    let mut names: Vec<&String> = groups
        .iter()
        .flat_map(|g| g.requests.keys().chain(g.limits.keys()))
        .collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let having: Vec<&Pods<'_>> = groups
                .iter()
                .filter(|g| g.requests.contains_key(name) || g.limits.contains_key(name))
                .collect();
            let request = having
                .iter()
                .any(|g| g.requests.contains_key(name))
                .then(|| {
                    let terms: Vec<(&str, u32)> = having
                        .iter()
                        .filter_map(|g| Some((g.requests.get(name)?.as_str(), g.count)))
                        .collect();
                    sum(&terms)
                });
            // A limit in total only where every pod has one.
            let limit = having
                .iter()
                .map(|g| Some((g.limits.get(name)?.as_str(), g.count)))
                .collect::<Option<Vec<_>>>()
                .map(|terms| sum(&terms));
            match (request, limit) {
                (Some(r), Some(l)) if r == l => format!("{name} {r}"),
                (Some(r), Some(l)) => format!("{name} {r} (limit {l})"),
                (Some(r), None) => format!("{name} {r} (no limit)"),
                (None, Some(l)) => format!("{name} {l} (limit)"),
                (None, None) => String::new(),
            }
        })
        .collect()
}

/// `q × n + …`, in the quantities' own suffix when they share one:
/// `64Gi` × 4 = `256Gi`, `8Gi` + `64Gi` × 2 = `136Gi`.
fn sum(terms: &[(&str, u32)]) -> String {
    let parsed: Option<Vec<(f64, &str)>> = terms
        .iter()
        .map(|(q, n)| {
            let parsed = crate::syntax::quantity::parse(q).ok()?;
            let number: f64 = q[..q.len() - parsed.suffix.len()].parse().ok()?;
            Some((number * f64::from(*n), &q[q.len() - parsed.suffix.len()..]))
        })
        .collect();
    match parsed.as_deref() {
        Some([(_, suffix), rest @ ..]) if rest.iter().all(|(_, s)| s == suffix) => {
            let value: f64 = parsed.iter().flatten().map(|(v, _)| v).sum();
            format!("{}{suffix}", number(value))
        }
        _ => terms
            .iter()
            .map(|(q, n)| match n {
                1 => (*q).to_owned(),
                n => format!("{n} × {q}"),
            })
            .collect::<Vec<_>>()
            .join(" + "),
    }
}

fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        let text = format!("{value:.3}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}
