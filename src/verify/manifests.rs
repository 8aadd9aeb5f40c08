//! `trainc verify FILE...`: any multi-document YAML of the kinds trainc knows,
//! hand-written or generated, against the same strict schemas, webhook rules
//! and cross-object rules as `build --verify`, with every problem located at
//! its line: file, document, object and field.
//!
//! A `v1 List` (what `kubectl get -o yaml` and `trainc build -o json` print)
//! is checked item by item. A kind with no schema (a CRD other than
//! Kubeflow's) is not checked: a note at its first object and a count in
//! the summary, never a silent pass, and an error under `--require-schemas`.

use std::collections::HashMap;

use serde_json::Value as Json;

use super::Problem;
use crate::diagnostic::{Diagnostic, codes};
use crate::source::{SourceId, Sources, Span};
use crate::spec::ApiLevel;
use crate::tree::Node;
use crate::tree::field_path;

/// Deep enough for any Kubernetes object (a PyTorchJob's container fields sit
/// about 12 levels down; CRDs with embedded templates go further).
pub const MAX_DEPTH: usize = 64;
/// More documents than a large repository's whole rendered output holds
/// (the benchmark verifies 10,000 in one stream).
pub const MAX_DOCUMENTS: usize = 200_000;

/// What one file held and what was wrong with it.
#[derive(Default)]
pub struct Verified {
    /// Objects found (List items counted one by one).
    pub objects: usize,
    /// Of those, objects not checked, by `apiVersion` and `kind`.
    pub unchecked: std::collections::BTreeMap<(String, String), usize>,
    pub diagnostics: Vec<Diagnostic>,
}

/// How `trainc verify` treats what it cannot check.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// An object of a kind without a schema is an error, not a note.
    pub require_schemas: bool,
    /// The cluster's Training Operator, for PyTorchJobs.
    pub training_operator: crate::cluster::pytorchjob::Release,
}

/// One object of the file: where it is and what it says.
struct Located<'a> {
    /// 1-based, among the file's non-empty documents.
    document: usize,
    node: &'a Node,
    json: Json,
}

/// What `trainc verify` checks, and what it does with the rest.
pub(super) const UNCHECKED_HELP: &str = "trainc checks every built-in kind of Kubernetes 1.30, and Kubeflow's PyTorchJob, TrainJob, TrainingRuntime and ClusterTrainingRuntime; objects of other kinds are counted as not checked";

impl Located<'_> {
    /// Where the object begins: its diagnostics' place when they are about
    /// the whole object.
    fn start(&self) -> Span {
        Span::new(
            self.node.span.source,
            self.node.span.start,
            self.node.span.start,
        )
    }
}

/// The errors `trainc verify` finds in the objects of `id` as a cluster of
/// the default releases would take them (`import` and `migrate` read the
/// PyTorchJobs' among them).
pub fn errors(sources: &Sources, id: SourceId) -> Vec<Diagnostic> {
    let verified = verify_file(
        sources,
        id,
        crate::spec::defaults::TRAINJOB_API_LEVEL,
        &[],
        Options::default(),
    );
    verified
        .diagnostics
        .into_iter()
        .filter(Diagnostic::is_error)
        .collect()
}

/// A trainc spec given where manifests are read (`verify`, `import`,
/// `migrate`, whose name is `command`): what it is, and the command for it.
pub fn spec_not_manifest(
    sources: &Sources,
    id: SourceId,
    code: &'static str,
    command: &str,
) -> Diagnostic {
    let name = &sources.get(id).name;
    let shown = crate::syntax::shell::quote(name);
    Diagnostic::error(
        code,
        Span::new(id, 0, 0),
        format!("`{name}` is a trainc spec, not Kubernetes manifests: `trainc {command}` reads the objects a cluster is given"),
    )
    .with_help(format!(
        "check the spec with `trainc check {shown}`; `trainc build {shown} --verify` checks the objects it builds as `verify` does"
    ))
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
    options: Options,
) -> Verified {
    if crate::parse::is_spec(sources.get(id)) {
        return Verified {
            diagnostics: vec![spec_not_manifest(
                sources,
                id,
                codes::VERIFY_SCHEMA,
                "verify",
            )],
            ..Verified::default()
        };
    }
    verify_stream(sources, id, level, runtimes, options)
}

/// [`verify_file`] of a file that is no spec.
fn verify_stream(
    sources: &Sources,
    id: SourceId,
    level: ApiLevel,
    runtimes: &[crate::trainer::runtime::Runtime],
    options: Options,
) -> Verified {
    let text = &sources.get(id).text;
    let (documents, readings) =
        match crate::parse::parse_manifest_stream(id, text, MAX_DEPTH, MAX_DOCUMENTS) {
            Ok(stream) => (stream.documents, stream.readings),
            Err(diagnostics) => {
                return Verified {
                    diagnostics,
                    ..Verified::default()
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
    let mut unchecked = std::collections::BTreeMap::new();
    // Two objects of one id: said once, at the second. (Problems find
    // their object by its place in the stream, not by its id.)
    let mut by_id: HashMap<String, &Located<'_>> = HashMap::with_capacity(objects.len());
    for object in &objects {
        match by_id.entry(super::id(&object.json)) {
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(object);
            }
            std::collections::hash_map::Entry::Occupied(first) => {
                diagnostics.push(twice(first.key(), first.get(), object));
            }
        }
    }
    // Each error by the span of the value it is about (the diagnostic
    // points at the key), to meet the readings of those values below.
    let mut errors: HashMap<Span, usize> = HashMap::new();
    for problem in super::verify_at(&values, level, options.training_operator, runtimes) {
        let object = problem.index.and_then(|i| objects.get(i));
        let mut diagnostic = locate(&problem, object, id);
        let value = object
            .and_then(|o| o.node.pointer(&problem.path))
            .map(|(value, _)| value.span);
        if !problem.contract.checked() {
            let key = object.map_or_else(Default::default, |o| {
                (
                    o.json["apiVersion"].as_str().unwrap_or("").to_owned(),
                    o.json["kind"].as_str().unwrap_or("").to_owned(),
                )
            });
            let count = unchecked.entry(key).or_insert(0);
            *count += 1;
            if options.require_schemas {
                diagnostic.severity = crate::diagnostic::Severity::Error;
                diagnostic.help = Some(format!(
                    "{}; without `--require-schemas`, objects trainc cannot check are counted, not failed",
                    diagnostic.help.unwrap_or_default()
                ));
            } else if *count > 1 {
                continue;
            }
        }
        if let Some(value) = value {
            errors.insert(value, diagnostics.len());
        }
        diagnostics.push(diagnostic);
    }
    // A value read two ways that is also wrong for its field: one error,
    // which says how Kubernetes read it.
    for reading in readings {
        if let Some(error) = errors
            .get(&reading.primary.span)
            .map(|&i| &mut diagnostics[i])
            .filter(|d| d.is_error())
        {
            error.help = Some(format!(
                "{}; {}",
                reading.message,
                error.help.take().unwrap_or_default()
            ));
        } else {
            diagnostics.push(reading);
        }
    }
    Verified {
        objects: objects.len(),
        unchecked,
        diagnostics,
    }
}

/// The same object written twice: applied, the later silently replaces the
/// earlier (kustomize refuses such a stream; a hand-written one is not
/// checked by anything else).
fn twice(id: &str, first: &Located<'_>, again: &Located<'_>) -> Diagnostic {
    Diagnostic::warning(
        codes::VERIFY_DUPLICATE,
        again.start(),
        format!(
            "document {}: {id} again (first in document {}): applied, this one replaces that one",
            again.document, first.document
        ),
    )
    .with_secondary(first.start(), "first here")
    .with_help("give one of them another name (or namespace), or remove the copy")
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
            object.start(),
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
fn locate(problem: &Problem, object: Option<&Located<'_>>, id: SourceId) -> Diagnostic {
    let code = problem.code();
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
    let help = problem
        .contract
        .help()
        .map_or_else(|| schema_help(problem, object), str::to_owned);
    let mut diagnostic = Diagnostic::error(
        code,
        span,
        format!("{document}{}{field}: {}", problem.object, problem.message),
    )
    .with_help(help);
    diagnostic.severity = problem.contract.severity();
    diagnostic
}

/// Where to read what a field takes: `kubectl explain` of the object that
/// holds it (`deployment.spec.template.spec` for an unknown field there).
fn schema_help(problem: &Problem, object: Option<&Located<'_>>) -> String {
    let rejects = "the API server rejects an object that does not match its kind's schema";
    let Some(kind) = object.and_then(|o| o.json["kind"].as_str()) else {
        return rejects.to_owned();
    };
    let mut holder: Vec<String> = problem
        .path
        .split('/')
        .skip(1)
        .filter(|segment| segment.parse::<usize>().is_err())
        .map(crate::tree::segment_key)
        .collect();
    // A missing field is reported at the object that should hold it.
    if !problem.message.starts_with("missing required field") {
        holder.pop();
    }
    let explain = std::iter::once(kind.to_ascii_lowercase())
        .chain(holder)
        .collect::<Vec<_>>()
        .join(".");
    crate::diagnostic::escape_controls(format!(
        "{rejects}; `kubectl explain {explain}` lists the fields there and what each takes"
    ))
}
