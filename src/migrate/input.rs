//! What the input holds beside its PyTorchJobs' specs: every object with
//! where it was written, which PyTorchJobs the cluster would refuse as they
//! are (`trainc verify`'s verdict, said in its words), and the other
//! workloads, which pass through.

use std::ops::Range;

use serde_json::Value as Json;

use crate::cluster::pytorchjob;
use crate::diagnostic::{Diagnostic, codes};
use crate::source::{SourceId, Sources};
use crate::tree::Node;

/// Every object of the input, a `v1 List`'s items one by one.
pub(super) fn objects(id: SourceId, text: &str) -> Vec<(Json, Node)> {
    let documents = crate::parse::parse_yaml_stream(id, text, 64, 10_000).unwrap_or_default();
    let mut out = Vec::new();
    for node in documents {
        let json = node.to_json();
        if json["kind"] == "List"
            && let Some(crate::tree::Value::Array(items)) =
                node.get("items").map(|e| e.value.value.clone())
        {
            out.extend(items.into_iter().map(|item| (item.to_json(), item)));
        } else if json.is_object() {
            out.push((json, node));
        }
    }
    out
}

/// The PyTorchJobs `trainc verify` rejects as written (where each is in
/// the text), with its errors: the cluster would not take them, so they are
/// not migrated.
pub(super) fn invalid_jobs(
    sources: &Sources,
    id: SourceId,
    objects: &[(Json, Node)],
) -> (Vec<Range<usize>>, Vec<Diagnostic>) {
    let jobs: Vec<Range<usize>> = objects
        .iter()
        .filter(|(o, _)| {
            o["kind"] == pytorchjob::KIND && o["apiVersion"] == pytorchjob::API_VERSION
        })
        .map(|(_, node)| node.span.start..node.span.end.max(node.span.start + 1))
        .collect();
    if jobs.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let errors = crate::verify::manifests::errors(sources, id);
    let mut bad = Vec::new();
    let mut said = Vec::new();
    for d in errors {
        let at = d.primary.span.start;
        if let Some(job) = jobs.iter().find(|r| r.contains(&at)) {
            if !bad.contains(job) {
                bad.push(job.clone());
            }
            said.push(d);
        }
    }
    (bad, said)
}

/// The Kubeflow and batch workloads that are not PyTorchJobs: `migrate`
/// moves PyTorchJobs only, and says that these pass through.
pub(super) fn other_workloads(objects: &[(Json, Node)]) -> Vec<Diagnostic> {
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
    objects
        .iter()
        .filter(|(o, _)| {
            KINDS.iter().any(|k| o["kind"] == *k)
                || (o["kind"] == pytorchjob::KIND && o["apiVersion"] != pytorchjob::API_VERSION)
        })
        .filter(|(o, _)| o["kind"] != pytorchjob::KIND)
        .map(|(o, node)| {
            let kind = o["kind"].as_str().unwrap_or_default();
            let name = o["metadata"]["name"].as_str().unwrap_or_default();
            let what = if kind == "TrainJob" {
                "already a TrainJob"
            } else {
                "not a PyTorchJob"
            };
            Diagnostic::note(
                codes::MIGRATE_PASSED,
                crate::source::Span::new(node.span.source, node.span.start, node.span.start),
                format!("{kind} `{name}` is {what}: it passes through as it is"),
            )
        })
        .collect()
}
