//! `--verify`: the generated objects against the strict upstream schemas in
//! `schemas/k8s/` ([`schema`]), against the admission-webhook rules those
//! schemas cannot express ([`webhooks`]), and against what the operators do
//! with several objects together ([`objects`]: names they take, ports they
//! reach). A failure here is a bug in trainc, reported as an error rather
//! than handed to the cluster.
//!
//! Mirrors `validate.py`: a schema is chosen by `apiVersion` + `kind` (from
//! the schema's `x-kubernetes-group-version-kind`), and because CRD schemas
//! leave `metadata` open, a CRD's metadata is also checked against ObjectMeta.

use serde_json::Value;

use crate::cluster::{pytorchjob, trainjob};
use crate::render::Object;
use crate::spec::ApiLevel;

mod apiserver;
pub mod compact;
pub mod kubernetes;
pub mod manifests;
mod objects;
mod runtimes;
pub(crate) mod schema;
mod webhooks;
mod wording;

/// One problem with one generated object.
/// Characters of a message, object name or path shown at most.
const MAX_SHOWN: usize = 300;

/// `text` escaped and, past `chars` characters, cut in the middle: a schema
/// error quotes the value it is about (which can be megabytes long) before
/// saying what is wrong with it.
fn shortened(text: String, chars: usize) -> String {
    let text = crate::diagnostic::escape_controls(text);
    let count = text.chars().count();
    if count <= chars {
        return text;
    }
    let head: String = text.chars().take(chars / 2).collect();
    let tail: String = text.chars().skip(count - chars / 2).collect();
    format!("{head} … {tail}")
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// `Kind/name` of the object.
    pub object: String,
    /// Where in the object, as a JSON pointer (`/spec/...`); empty for the whole.
    pub path: String,
    pub message: String,
    /// Which contract the object breaks: `schema`, `apiserver` (its
    /// validation beyond the schema: names and paths), `webhook`, or `operator`
    /// (what a controller does with the objects together); `admitted` (a
    /// warning: the cluster takes the object, but it will not run as written,
    /// or the webhook returns a warning); or why it was
    /// not checked: `unchecked` (no schema for its kind) or `unserved` (a
    /// built-in group's kind or version Kubernetes does not serve).
    pub contract: &'static str,
}

impl Problem {
    fn new(contract: &'static str, object: &str, path: &str, message: String) -> Problem {
        Problem {
            object: shortened(object.to_owned(), MAX_SHOWN),
            path: shortened(path.to_owned(), MAX_SHOWN),
            message: shortened(message, MAX_SHOWN),
            contract,
        }
    }

    /// The diagnostic code of the contract the problem breaks.
    pub fn code(&self) -> &'static str {
        match self.contract {
            "webhook" => crate::diagnostic::codes::VERIFY_WEBHOOK,
            "operator" => crate::diagnostic::codes::VERIFY_OPERATOR,
            "admitted" => crate::diagnostic::codes::VERIFY_ADMITTED,
            "apiserver" => crate::diagnostic::codes::VERIFY_APISERVER,
            "unchecked" => crate::diagnostic::codes::VERIFY_UNCHECKED,
            "unserved" => crate::diagnostic::codes::VERIFY_UNSERVED,
            _ => crate::diagnostic::codes::VERIFY_SCHEMA,
        }
    }

    fn schema(object: &str, path: &str, message: String) -> Problem {
        Problem::new("schema", object, path, message)
    }

    fn webhook(object: &str, path: &str, message: String) -> Problem {
        Problem::new("webhook", object, path, message)
    }

    fn admitted(object: &str, path: &str, message: String) -> Problem {
        Problem::new("admitted", object, path, message)
    }

    fn apiserver(object: &str, path: &str, message: String) -> Problem {
        Problem::new("apiserver", object, path, message)
    }

    fn operator(object: &str, path: &str, message: String) -> Problem {
        Problem::new("operator", object, path, message)
    }
}

/// Every problem of every object; a TrainJob is checked for Trainer `level`.
pub fn verify(
    objects: &[Object],
    level: ApiLevel,
    runtimes: &[crate::trainer::runtime::Runtime],
) -> Vec<Problem> {
    let values: Vec<&Value> = objects.iter().map(|o| &o.value).collect();
    verify_with_runtimes(&values, level, runtimes)
}

/// Every problem of every object given as JSON (as read back from YAML).
pub fn verify_values(values: &[&Value], level: ApiLevel) -> Vec<Problem> {
    verify_with_runtimes(values, level, &[])
}

/// [`verify_values`], a TrainJob also checked against `runtimes` (the
/// cluster's, from a runtimes file) when the objects do not hold its runtime.
pub fn verify_with_runtimes(
    values: &[&Value],
    level: ApiLevel,
    runtimes: &[crate::trainer::runtime::Runtime],
) -> Vec<Problem> {
    verify_at(values, level, pytorchjob::Release::default(), runtimes)
}

/// [`verify_with_runtimes`], a PyTorchJob checked for the Training
/// Operator `operator`.
pub fn verify_at(
    values: &[&Value],
    level: ApiLevel,
    operator: pytorchjob::Release,
    runtimes: &[crate::trainer::runtime::Runtime],
) -> Vec<Problem> {
    let mut problems = Vec::new();
    for value in values {
        let id = id(value);
        if schema::check(&id, value, level, &mut problems) == schema::Checked::NoSchema {
            problems.push(unchecked(&id, value));
        }
        apiserver::check(&id, value, &mut problems);
        // A webhook serves its own API version only.
        match (
            value["apiVersion"].as_str().unwrap_or(""),
            value["kind"].as_str().unwrap_or(""),
        ) {
            (pytorchjob::API_VERSION, pytorchjob::KIND) => {
                webhooks::pytorchjob(&id, value, operator, &mut problems);
            }
            (trainjob::API_VERSION, trainjob::KIND) => {
                webhooks::trainjob(&id, value, &mut problems);
            }
            (trainjob::API_VERSION, "TrainingRuntime" | "ClusterTrainingRuntime") => {
                webhooks::runtime(&id, value, level, &mut problems);
            }
            _ => {}
        }
    }
    objects::check(values, &mut problems);
    runtimes::check(values, level, runtimes, &mut problems);
    problems
}

/// The operator that serves `kind` of `group`, and the one version it
/// serves it in (kubeflow/trainer v1.7.0–v1.9.4 and v2.0.0–v2.3.0,
/// `manifests/base/crds`: one served version each).
fn operator_version(group: &str, kind: &str) -> Option<(&'static str, &'static str)> {
    match (group, kind) {
        ("kubeflow.org", pytorchjob::KIND) => Some((
            "the Training Operator (v1.7 to v1.9)",
            pytorchjob::API_VERSION,
        )),
        ("trainer.kubeflow.org", trainjob::KIND | "TrainingRuntime" | "ClusterTrainingRuntime") => {
            Some(("Kubeflow Trainer (v2.0 to v2.3)", trainjob::API_VERSION))
        }
        _ => None,
    }
}

/// Why an object of a kind without a schema was not checked.
fn unchecked(id: &str, value: &Value) -> Problem {
    let api_version = value["apiVersion"].as_str().unwrap_or("");
    let kind = value["kind"].as_str().unwrap_or("");
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    if let Some((operator, served)) = operator_version(group, kind)
        && served != api_version
    {
        return Problem::new(
            "unserved",
            id,
            "/apiVersion",
            format!("{operator} serves `{kind}` as `{served}` only, not `{api_version}`"),
        );
    }
    if kubernetes::built_in_group(api_version) {
        let instead = kubernetes::served_instead(api_version, kind)
            .map_or_else(String::new, |s| format!("; {s}"));
        return Problem::new(
            "unserved",
            id,
            "/apiVersion",
            format!(
                "Kubernetes {} serves no `{api_version}` `{kind}`{instead}",
                kubernetes::KUBERNETES
            ),
        );
    }
    Problem::new(
        "unchecked",
        id,
        "/kind",
        format!("not checked: trainc has no schema for `{api_version}` `{kind}`"),
    )
}

/// `Kind/name` of an object, and its namespace where it names one: the
/// same name in two namespaces is two objects.
fn id(value: &Value) -> String {
    let kind = value["kind"].as_str().unwrap_or("?");
    let name = value["metadata"]["name"].as_str().unwrap_or("?");
    match value["metadata"]["namespace"].as_str() {
        Some(namespace) => format!("{kind}/{name} (namespace {namespace})"),
        None => format!("{kind}/{name}"),
    }
}

#[cfg(test)]
mod tests;
