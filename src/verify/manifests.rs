//! `trainc verify FILE...`: any multi-document YAML of the kinds trainc knows,
//! hand-written or generated, against the same strict schemas, webhook rules
//! and cross-object rules as `build --verify`, with every problem located at
//! its line: file, document, object and field.
//!
//! A `v1 List` (what `kubectl get -o yaml` and `trainc build -o json` print)
//! is checked item by item. A document of a kind with no schema is an error,
//! never a silent pass.

use serde_json::Value as Json;

use super::Problem;
use crate::diagnostic::{Diagnostic, codes};
use crate::source::{SourceId, Sources, Span};
use crate::spec::ApiLevel;
use crate::tree::Node;
use crate::validate::field_path;

/// Deep enough for any Kubernetes object (a PyTorchJob's container fields sit
/// about 12 levels down; CRDs with embedded templates go further).
pub const MAX_DEPTH: usize = 64;
/// More documents than any manifest file holds.
pub const MAX_DOCUMENTS: usize = 10_000;

/// What one file held and what was wrong with it.
pub struct Verified {
    /// Objects found (List items counted one by one).
    pub objects: usize,
    pub diagnostics: Vec<Diagnostic>,
}

/// One object of the file: where it is and what it says.
struct Located<'a> {
    /// 1-based, among the file's non-empty documents.
    document: usize,
    node: &'a Node,
    json: Json,
}

/// What each document of a manifest is.
pub const ONE_OBJECT_EACH: &str = "each `---`-separated document of a manifest is one object";

/// Every problem of the objects in `id`, a TrainJob checked for Trainer `level`.
/// `runtimes` are the cluster's (`--runtimes`), for TrainJobs whose runtime
/// the file does not hold.
pub fn verify_file(
    sources: &Sources,
    id: SourceId,
    level: ApiLevel,
    runtimes: &[crate::trainer::runtime::Runtime],
) -> Verified {
    let text = &sources.get(id).text;
    let documents = match crate::parse::parse_yaml_stream(id, text, MAX_DEPTH, MAX_DOCUMENTS) {
        Ok(documents) => documents,
        Err(diagnostics) => {
            return Verified {
                objects: 0,
                diagnostics,
            };
        }
    };
    let (found, not_objects) = crate::parse::stream_objects(&documents);
    let mut diagnostics =
        crate::parse::not_objects_errors(not_objects, codes::VERIFY_SCHEMA, "", ONE_OBJECT_EACH);
    let objects: Vec<Located<'_>> = found
        .into_iter()
        .map(|o| Located {
            document: o.document,
            node: o.node,
            json: o.node.to_json(),
        })
        .collect();
    for object in &objects {
        if let Some(problem) = missing_identity(object) {
            diagnostics.push(problem);
        }
    }
    let values: Vec<&Json> = objects.iter().map(|o| &o.json).collect();
    for problem in super::verify_with_runtimes(&values, level, runtimes) {
        diagnostics.push(locate(&problem, &objects, id));
    }
    Verified {
        objects: objects.len(),
        diagnostics,
    }
}

/// An object without `apiVersion`, `kind` or a name gets one clear error
/// rather than a schema lookup for `?`.
fn missing_identity(object: &Located<'_>) -> Option<Diagnostic> {
    let missing: Vec<&str> = [
        ("apiVersion", object.json["apiVersion"].is_string()),
        ("kind", object.json["kind"].is_string()),
        ("metadata.name", object.json["metadata"]["name"].is_string()),
    ]
    .into_iter()
    .filter(|(_, present)| !present)
    .map(|(field, _)| field)
    .collect();
    (!missing.is_empty()).then(|| {
        Diagnostic::error(
            codes::VERIFY_SCHEMA,
            Span::new(
                object.node.span.source,
                object.node.span.start,
                object.node.span.start,
            ),
            format!(
                "document {}: the object has no {}",
                object.document,
                missing
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .with_help("every Kubernetes object names its `apiVersion`, `kind` and `metadata.name`")
    })
}

/// A problem as a diagnostic at the line of the field it is about: the value
/// when it exists, else the nearest enclosing one (a missing field is
/// reported at the object that should hold it).
fn locate(problem: &Problem, objects: &[Located<'_>], id: SourceId) -> Diagnostic {
    let code = problem.code();
    let object = objects
        .iter()
        .find(|o| super::id(&o.json) == problem.object);
    let (span, document) = match object {
        Some(o) => {
            let span = match o.node.pointer(&problem.path) {
                Some((_, Some(key))) => key,
                _ => o.node.span_at(&problem.path),
            };
            (span, o.document)
        }
        None => (Span::new(id, 0, 0), 0),
    };
    let field = if problem.path.is_empty() {
        String::new()
    } else {
        format!(", `{}`", field_path(&problem.path))
    };
    let document = if document == 0 {
        String::new()
    } else {
        format!("document {document}, ")
    };
    let help = match problem.contract {
        "webhook" => "the operator's admission webhook rejects this when the object is created",
        "operator" => "the operator would create or reach other objects than these say",
        _ if problem.message.starts_with("no schema for") => {
            "trainc verify knows PyTorchJob (kubeflow.org/v1), TrainJob, TrainingRuntime and ClusterTrainingRuntime (trainer.kubeflow.org/v1alpha1), Job (batch/v1), Service, PersistentVolumeClaim and ConfigMap (v1)"
        }
        _ => "the API server rejects objects that do not match the kind's schema",
    };
    Diagnostic::error(
        code,
        span,
        format!("{document}{}{field}: {}", problem.object, problem.message),
    )
    .with_help(help)
}
