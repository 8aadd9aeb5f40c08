//! What `trainc migrate` reads of its input, in one pass of the reader
//! `verify` uses ([`crate::verify::reader::windows`]: the same documents,
//! the same limits, a window at a time): the objects import reads (the
//! PyTorchJobs, and the claims and Services beside them) kept whole, every
//! other object counted and dropped; which PyTorchJobs the cluster would
//! refuse as they are (`trainc verify`'s verdict, said in its words); and
//! the other workloads, which pass through.

use std::ops::Range;

use crate::cluster::pytorchjob;
use crate::diagnostic::{Diagnostic, codes};
use crate::source::{SourceId, Sources, Span};
use crate::tree::{Node, Value};

/// What the input holds, as far as a migration reads it.
#[derive(Default)]
pub(super) struct Input {
    /// The objects import reads, merge keys applied, each with its
    /// document's number.
    pub nodes: Vec<(usize, Node)>,
    /// Of each of `nodes` (by where it starts), the `v1 List` document it
    /// is an item of: where that document's mapping is.
    pub lists: std::collections::HashMap<usize, Range<usize>>,
    /// Objects found, a `v1 List`'s items one by one.
    pub objects: usize,
    /// Where each PyTorchJob (`kubeflow.org/v1`) is.
    pub jobs: Vec<Range<usize>>,
    /// A note at each other workload: it passes through; a warning at
    /// each PyTorchJob inside another object, which is not migrated.
    pub workloads: Vec<Diagnostic>,
    /// A warning at each selector that reads the Training Operator's labels
    /// (a Service's aside, which the migration rewrites or reports).
    pub selectors: Vec<Diagnostic>,
}

/// The input `text` (source `id`) read; its parse errors if it is not YAML.
pub(super) fn read(text: &str, id: SourceId) -> Result<Input, Vec<Diagnostic>> {
    let mut input = Input::default();
    crate::verify::reader::windows(text, id, &mut |parsed| {
        for part in parsed {
            for (i, document) in part.stream.documents.iter().enumerate() {
                let number = part.first + i;
                let items = match document.get("items").map(|e| &e.value.value) {
                    Some(Value::Array(items)) if kind(document) == "List" => Some(items),
                    _ => None,
                };
                match items {
                    Some(items) => {
                        let list = document.span.start..document.span.end;
                        for item in items {
                            input.object(item, number, Some(&list));
                        }
                    }
                    None if matches!(document.value, Value::Table(_)) => {
                        input.object(document, number, None);
                    }
                    None => {}
                }
            }
        }
    })?;
    Ok(input)
}

fn kind(node: &Node) -> &str {
    text(node, "kind")
}

fn text<'n>(node: &'n Node, key: &str) -> &'n str {
    node.get(key).and_then(|e| e.value.as_str()).unwrap_or("")
}

impl Input {
    /// One object, an item of the List at `list` or a document of its own.
    fn object(&mut self, node: &Node, document: usize, list: Option<&Range<usize>>) {
        self.objects += 1;
        let kind = kind(node);
        let api_version = text(node, "apiVersion");
        if kind == pytorchjob::KIND && api_version == pytorchjob::API_VERSION {
            self.jobs
                .push(node.span.start..node.span.end.max(node.span.start + 1));
        }
        if kind == pytorchjob::KIND || crate::import::read_beside(kind) {
            let mut kept = node.clone();
            crate::import::merge_keys(&mut kept);
            if let Some(list) = list {
                self.lists.insert(kept.span.start, list.clone());
            }
            self.nodes.push((document, kept));
        }
        if let Some(note) = passes_through(node, kind) {
            self.workloads.push(note);
        }
        if kind != pytorchjob::KIND {
            wrapped(node, node, 0, &mut self.workloads);
        }
        if kind != "Service" || api_version != "v1" {
            operator_selectors(node, node, false, &mut self.selectors);
        }
    }
}

fn name(node: &Node) -> &str {
    node.get("metadata")
        .and_then(|m| m.value.get("name"))
        .and_then(|e| e.value.as_str())
        .unwrap_or_default()
}

/// The PyTorchJobs inside `node` (Kueue's AppWrapper
/// `spec.components[].template`, a Katib Experiment's
/// `spec.trialTemplate.trialSpec`, any other wrapper): `migrate` moves the
/// objects of the input, not what another object holds, and says so at each.
fn wrapped(outer: &Node, node: &Node, depth: usize, out: &mut Vec<Diagnostic>) {
    if depth > 32 {
        return;
    }
    if depth > 0
        && kind(node) == pytorchjob::KIND
        && text(node, "apiVersion") == pytorchjob::API_VERSION
    {
        let inner = match name(node) {
            "" => "a PyTorchJob".to_owned(),
            named => format!("PyTorchJob `{named}`"),
        };
        out.push(
            Diagnostic::warning(
                codes::MIGRATE_WRAPPED,
                Span::new(node.span.source, node.span.start, node.span.start),
                format!(
                    "{inner} inside {} `{}` is not migrated: trainc migrate moves the objects of its input, not what another object holds",
                    kind(outer),
                    name(outer)
                ),
            )
            .with_help("migrate the PyTorchJob on its own (`trainc migrate` of a file that holds it), then put the TrainJob in its place: Kueue's AppWrapper and Katib's trial template take a TrainJob too"),
        );
        return;
    }
    match &node.value {
        Value::Table(entries) => entries
            .iter()
            .for_each(|e| wrapped(outer, &e.value, depth + 1, out)),
        Value::Array(items) => items.iter().for_each(|n| wrapped(outer, n, depth + 1, out)),
        _ => {}
    }
}

/// The keys of a label selector that hold labels: a Service's `selector`,
/// `matchLabels`, a NetworkPolicy's `podSelector`, an affinity term's
/// `labelSelector`, `matchExpressions` items' `key`.
const SELECTING: [&str; 4] = ["selector", "matchLabels", "podSelector", "labelSelector"];

/// Each selector under `node` that reads a Training Operator label
/// (`training.kubeflow.org/…`): the TrainJob's pods carry JobSet's labels,
/// so it selects none of them. `selecting` says that `node` is a selector's
/// map.
fn operator_selectors(object: &Node, node: &Node, selecting: bool, out: &mut Vec<Diagnostic>) {
    match &node.value {
        Value::Table(entries) => {
            for entry in entries {
                let label = if selecting {
                    Some(entry.key.as_str())
                } else if entry.key == "key" {
                    entry.value.as_str()
                } else {
                    None
                };
                if let Some(label) = label.filter(|l| l.starts_with(pytorchjob::LABEL_PREFIX)) {
                    out.push(
                        Diagnostic::warning(
                            codes::MIGRATE_LABELS,
                            entry.key_span,
                            format!(
                                "{} `{}` selects pods by the Training Operator's label `{label}`, which a TrainJob's pods do not have: once the job is a TrainJob, it selects none of its pods",
                                kind(object),
                                name(object)
                            ),
                        )
                        .with_help(format!(
                            "select the TrainJob's pods by JobSet's labels: `{}: <job>` (every pod), with `{}: <rank>` for one",
                            crate::cluster::trainjob::LABEL_JOBSET_NAME,
                            crate::cluster::trainjob::LABEL_COMPLETION_INDEX
                        )),
                    );
                    continue;
                }
                let inner = SELECTING.contains(&entry.key.as_str())
                    && !matches!(entry.value.value, Value::Array(_));
                operator_selectors(
                    object,
                    &entry.value,
                    inner && !has_selector_keys(&entry.value),
                    out,
                );
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|n| operator_selectors(object, n, false, out)),
        _ => {}
    }
}

/// Whether a selector's map is a `LabelSelector` (its labels under
/// `matchLabels` and `matchExpressions`), not a map of labels itself.
fn has_selector_keys(node: &Node) -> bool {
    node.get("matchLabels").is_some() || node.get("matchExpressions").is_some()
}

/// The PyTorchJobs (at `jobs`, in order) that `trainc verify
/// --training-operator` of `operator` rejects as written, where each is (in
/// order), with its errors: the cluster would not take them, so they are
/// not migrated. Verify reads the whole input, a window at a time, and only
/// the errors inside a job are kept.
pub(super) fn invalid_jobs(
    sources: &Sources,
    id: SourceId,
    jobs: &[Range<usize>],
    operator: crate::cluster::pytorchjob::Release,
) -> (Vec<Range<usize>>, Vec<Diagnostic>) {
    if jobs.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let mut bad: Vec<usize> = Vec::new();
    let mut said = Vec::new();
    crate::verify::manifests::verify_file_into(
        sources,
        id,
        crate::spec::defaults::TRAINJOB_API_LEVEL,
        &[],
        crate::verify::manifests::Options {
            releases: crate::verify::Releases {
                operator,
                ..crate::verify::Releases::default()
            },
            ..crate::verify::manifests::Options::default()
        },
        &mut |d| {
            if !d.is_error() {
                return;
            }
            // The jobs are in the input's order (a List's too).
            if let Some(job) = crate::source::range_holding(jobs, d.primary.span.start) {
                bad.push(job);
                said.push(d);
            }
        },
    );
    bad.sort_unstable();
    bad.dedup();
    (bad.into_iter().map(|i| jobs[i].clone()).collect(), said)
}

/// The Kubeflow and batch workloads that are not PyTorchJobs: `migrate`
/// moves PyTorchJobs only, and says that these pass through.
fn passes_through(node: &Node, kind: &str) -> Option<Diagnostic> {
    const KINDS: [&str; 9] = [
        "Job",
        "CronJob",
        "JobSet",
        "TrainJob",
        "TFJob",
        "MPIJob",
        "XGBoostJob",
        "PaddleJob",
        "JAXJob",
    ];
    if !KINDS.contains(&kind) {
        return None;
    }
    let name = node
        .get("metadata")
        .and_then(|m| m.value.get("name"))
        .and_then(|e| e.value.as_str())
        .unwrap_or_default();
    let what = if kind == "TrainJob" {
        "already a TrainJob"
    } else {
        "not a PyTorchJob"
    };
    Some(Diagnostic::note(
        codes::MIGRATE_PASSED,
        Span::new(node.span.source, node.span.start, node.span.start),
        format!("{kind} `{name}` is {what}: it passes through as it is"),
    ))
}
