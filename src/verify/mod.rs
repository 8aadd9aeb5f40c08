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

use crate::render::{Object, pytorchjob, trainjob};
use crate::spec::ApiLevel;

pub mod compact;
pub mod manifests;
mod objects;
pub(crate) mod schema;
mod webhooks;

/// One problem with one generated object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// `Kind/name` of the object.
    pub object: String,
    /// Where in the object, as a JSON pointer (`/spec/...`); empty for the whole.
    pub path: String,
    pub message: String,
    /// Which contract the object breaks: `schema`, `webhook`, or `operator`
    /// (what a controller does with the objects together).
    pub contract: &'static str,
}

impl Problem {
    fn new(contract: &'static str, object: &str, path: &str, message: String) -> Problem {
        Problem {
            object: object.to_owned(),
            path: path.to_owned(),
            message,
            contract,
        }
    }

    /// The diagnostic code of the contract the problem breaks.
    pub fn code(&self) -> &'static str {
        match self.contract {
            "webhook" => crate::diagnostic::codes::VERIFY_WEBHOOK,
            "operator" => crate::diagnostic::codes::VERIFY_OPERATOR,
            _ => crate::diagnostic::codes::VERIFY_SCHEMA,
        }
    }

    fn schema(object: &str, path: &str, message: String) -> Problem {
        Problem::new("schema", object, path, message)
    }

    fn webhook(object: &str, path: &str, message: String) -> Problem {
        Problem::new("webhook", object, path, message)
    }

    fn operator(object: &str, path: &str, message: String) -> Problem {
        Problem::new("operator", object, path, message)
    }
}

/// Every problem of every object; a TrainJob is checked for Trainer `level`.
pub fn verify(objects: &[Object], level: ApiLevel) -> Vec<Problem> {
    let values: Vec<&Value> = objects.iter().map(|o| &o.value).collect();
    verify_values(&values, level)
}

/// Every problem of every object given as JSON (as read back from YAML).
pub fn verify_values(values: &[&Value], level: ApiLevel) -> Vec<Problem> {
    let mut problems = Vec::new();
    for value in values {
        let id = id(value);
        schema::check(&id, value, level, &mut problems);
        // A webhook serves its own API version only.
        match (
            value["apiVersion"].as_str().unwrap_or(""),
            value["kind"].as_str().unwrap_or(""),
        ) {
            (pytorchjob::API_VERSION, pytorchjob::KIND) => {
                webhooks::pytorchjob(&id, value, &mut problems);
            }
            (trainjob::API_VERSION, trainjob::KIND) => {
                webhooks::trainjob(&id, value, &mut problems);
            }
            _ => {}
        }
    }
    objects::check(values, &mut problems);
    problems
}

/// `Kind/name` of an object.
fn id(value: &Value) -> String {
    format!(
        "{}/{}",
        value["kind"].as_str().unwrap_or("?"),
        value["metadata"]["name"].as_str().unwrap_or("?")
    )
}

#[cfg(test)]
mod tests;
