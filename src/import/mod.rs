//! `trainc import`: Kubernetes manifests back into specs.
//!
//! The inverse of resolve and render, for the objects teams already have:
//! PyTorchJobs (`kubeflow.org/v1`), TrainJobs (`trainer.kubeflow.org/
//! v1alpha1`, every patch form) and JobSets of one Indexed Job
//! (`jobset.x-k8s.io/v1alpha2`), with the PersistentVolumeClaims and Services
//! that belong to them. Each job becomes the shortest spec that builds the
//! same run: a value trainc would write anyway is left out.
//!
//! Nothing is dropped silently. Every field of the input is mapped to a spec
//! field, carried in `[podTemplate]` (which trainc merges into every pod), or
//! reported as a warning at its line. trainc's own additions to what it
//! builds (its labels, the `/dev/shm` volume, the Istio annotation, the
//! operator's port) are recognised and left out, so that importing what
//! trainc built gives back the spec it was built from.
//!
//! The stage reads the input as a tree with spans and writes a typed
//! [`Spec`]; it never calls the build pipeline.

use std::fmt::Write as _;

use serde_json::Value as Json;

use crate::diagnostic::{Diagnostic, codes};
use crate::source::{SourceId, Sources, Span};
use crate::spec::Spec;
use crate::tree::Node;

mod container;
mod job;
mod jobset;
mod launch;
mod master;
mod metadata;
mod pod;
mod ports;
mod pytorchjob;
mod refused;
mod trainjob;
pub use trainjob::written_level;
mod volumes;
pub mod write;

pub(crate) use job::{Job, Others, Pod, duration, warn_at};

/// Deep enough for any Kubernetes object (a TrainJob's runtime patch puts a
/// container's fields 14 levels down).
const MAX_DEPTH: usize = 64;
const MAX_DOCUMENTS: usize = 10_000;

/// What one input held: a spec per job, and every warning and error.
#[derive(Debug)]
pub struct Imported {
    pub jobs: Vec<ImportedJob>,
    pub diagnostics: Vec<Diagnostic>,
    /// The objects no job used, a warning each (`trainc import` reports
    /// them; `trainc migrate` passes them through).
    pub left: Vec<Diagnostic>,
    /// The jobs of the kinds asked for that the input holds, those refused
    /// included.
    pub seen: usize,
}

#[derive(Debug)]
pub struct ImportedJob {
    /// The job's name: the spec's `name`, and the file name with `--output-dir`.
    pub name: String,
    pub spec: Spec,
    /// Where the job object starts, for messages about the spec as a whole.
    pub at: Span,
    /// TrainingRuntimes of the user's own that the job names, found in the
    /// input: the command writes them to a runtimes file beside the spec.
    pub runtimes: Vec<Json>,
    /// The job object as read, and where it was written.
    pub object: Json,
    pub node: Node,
}

/// Which jobs to import, and what becomes of the objects beside them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Jobs {
    /// PyTorchJobs and TrainJobs; the spec makes their claims and Services
    /// again (`trainc import`).
    All,
    /// PyTorchJobs only, the objects beside them kept as they are: claims
    /// used by name, Services named as they were (`trainc migrate`).
    PyTorchJobsKeepingObjects,
}

/// One object of the input.
struct Object<'a> {
    node: &'a Node,
    json: Json,
    /// 1-based among the input's documents.
    document: usize,
    used: bool,
}

impl Object<'_> {
    fn kind(&self) -> &str {
        self.json["kind"].as_str().unwrap_or("")
    }
    fn name(&self) -> &str {
        self.json["metadata"]["name"].as_str().unwrap_or("")
    }
    fn namespace(&self) -> Option<&str> {
        self.json["metadata"]["namespace"].as_str()
    }
    fn start(&self) -> Span {
        let s = self.node.span;
        Span::new(s.source, s.start, s.start)
    }
}

/// Every job of the manifests in `id`; a TrainJob for the Trainer release
/// `level` when given (a TrainJob's patch field tells v2.0 and v2.1 apart
/// from later releases, but not v2.2 from v2.3).
pub fn import(sources: &Sources, id: SourceId, level: Option<crate::spec::ApiLevel>) -> Imported {
    import_jobs(sources, id, level, Jobs::All)
}

/// [`import`] of the `which` jobs only.
pub fn import_jobs(
    sources: &Sources,
    id: SourceId,
    level: Option<crate::spec::ApiLevel>,
    which_jobs: Jobs,
) -> Imported {
    let text = &sources.get(id).text;
    if crate::parse::is_spec(sources.get(id)) {
        let command = if which_jobs == Jobs::All {
            "import"
        } else {
            "migrate"
        };
        let code = if which_jobs == Jobs::All {
            codes::IMPORT
        } else {
            codes::MIGRATE
        };
        return Imported {
            jobs: Vec::new(),
            diagnostics: vec![crate::verify::manifests::spec_not_manifest(
                sources, id, code, command,
            )],
            left: Vec::new(),
            seen: 0,
        };
    }
    let documents = match crate::parse::parse_yaml_stream(id, text, MAX_DEPTH, MAX_DOCUMENTS) {
        Ok(documents) => documents,
        Err(diagnostics) => {
            return Imported {
                jobs: Vec::new(),
                diagnostics,
                left: Vec::new(),
                seen: 0,
            };
        }
    };
    let mut documents = documents;
    documents.iter_mut().for_each(merge_keys);
    import_objects(sources, id, objects(&documents), level, which_jobs)
}

/// [`import_jobs`] of objects already read (`trainc migrate` reads the
/// stream with `verify`'s reader and keeps what import reads: the jobs,
/// claims and Services, merge keys applied), each with its document's
/// number.
pub fn import_nodes(
    sources: &Sources,
    id: SourceId,
    nodes: &[(usize, Node)],
    level: Option<crate::spec::ApiLevel>,
    which_jobs: Jobs,
) -> Imported {
    let objects = nodes
        .iter()
        .map(|(document, node)| Object {
            node,
            json: {
                // What the cluster stores: a custom resource's nulls pruned.
                let json = node.to_sent_json();
                crate::verify::nulls::stored(&json).unwrap_or(json)
            },
            document: *document,
            used: false,
        })
        .collect();
    import_objects(sources, id, objects, level, which_jobs)
}

/// Whether an object is one that import reads beside the jobs.
pub fn read_beside(kind: &str) -> bool {
    matches!(kind, "PersistentVolumeClaim" | "Service")
}

/// Every job of the `which_jobs` kinds among `objects`.
fn import_objects(
    sources: &Sources,
    id: SourceId,
    mut objects: Vec<Object<'_>>,
    level: Option<crate::spec::ApiLevel>,
    which_jobs: Jobs,
) -> Imported {
    let index = job::Index::new(&objects);
    let mut diagnostics = Vec::new();
    // A PyTorchJob its schema refuses is said in `verify`'s words (a
    // misspelt field with its did-you-mean) and not imported: what import
    // would make of it reads the misspelling as missing.
    // (`trainc migrate` refuses every PyTorchJob verify rejects itself, and
    // reads verify's errors once: not here again.)
    let refused: std::collections::HashMap<usize, Vec<Diagnostic>> = if which_jobs == Jobs::All {
        refused::schema_refused(sources, id, &objects)
            .into_iter()
            .collect()
    } else {
        std::collections::HashMap::new()
    };
    let mut jobs = Vec::new();
    let mut seen = 0;
    for i in 0..objects.len() {
        let kind = objects[i].kind().to_owned();
        let api_version = objects[i].json["apiVersion"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        let wanted = kind == "PyTorchJob"
            || (["TrainJob", "JobSet"].contains(&kind.as_str()) && which_jobs == Jobs::All);
        seen += usize::from(wanted);
        let which = match (kind.as_str(), api_version.as_str()) {
            ("PyTorchJob", pytorchjob::API_VERSION) => Some(Kind::PyTorchJob),
            ("TrainJob" | "JobSet", _) if which_jobs == Jobs::PyTorchJobsKeepingObjects => None,
            ("TrainJob", trainjob::API_VERSION) => Some(Kind::TrainJob),
            ("JobSet", jobset::API_VERSION) => Some(Kind::JobSet),
            ("PyTorchJob" | "TrainJob" | "JobSet", _) => {
                diagnostics.push(unsupported_version(&objects[i], &kind, &api_version));
                objects[i].used = true;
                None
            }
            _ => None,
        };
        let Some(which) = which else { continue };
        let start = objects[i].node.span.start;
        if let Some(errors) = refused.get(&start) {
            objects[i].used = true;
            diagnostics.extend(errors.iter().cloned());
            continue;
        }
        let migrating = which_jobs == Jobs::PyTorchJobsKeepingObjects;
        match one_job(&mut objects, &index, i, which, migrating, level) {
            Ok((job, mut found)) => {
                diagnostics.append(&mut found);
                jobs.push(job);
            }
            Err(mut found) => diagnostics.append(&mut found),
        }
    }
    let left = objects
        .iter()
        .filter(|o| !o.used)
        .map(|object| not_imported(object, jobs.is_empty()))
        .collect();
    if jobs.is_empty() && !diagnostics.iter().any(Diagnostic::is_error) {
        diagnostics.push(
            Diagnostic::error(codes::IMPORT, Span::new(id, 0, 0), "no PyTorchJob, TrainJob or JobSet to import")
                .with_help("trainc import reads PyTorchJobs (kubeflow.org/v1), TrainJobs (trainer.kubeflow.org/v1alpha1) and JobSets (jobset.x-k8s.io/v1alpha2), with their PersistentVolumeClaims and Services"),
        );
    }
    Imported {
        jobs,
        diagnostics,
        left,
        seen,
    }
}

/// The kinds of job import reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    PyTorchJob,
    TrainJob,
    JobSet,
}

/// The job `objects[i]` as a spec, with its warnings; `Err` with the errors
/// when it cannot be one.
fn one_job(
    objects: &mut [Object<'_>],
    index: &job::Index,
    i: usize,
    which: Kind,
    migrating: bool,
    level: Option<crate::spec::ApiLevel>,
) -> Result<(ImportedJob, Vec<Diagnostic>), Vec<Diagnostic>> {
    let kind = objects[i].kind().to_owned();
    objects[i].used = true;
    let mut job = Job::new(&objects[i]);
    job.migrating = migrating;
    if job.name.is_empty() {
        return Err(vec![
            Diagnostic::error(
                codes::IMPORT,
                objects[i].start(),
                format!(
                    "document {}: the {kind} has no `metadata.name`",
                    objects[i].document
                ),
            )
            .with_help("a spec is named after its job: give the job a name"),
        ]);
    }
    // The job's own JSON is needed only here; `Others` looks for claims
    // and Services, so the job object can give it up.
    let object = std::mem::take(&mut objects[i].json);
    job.unknown_keys(
        &object,
        "",
        &["apiVersion", "kind", "metadata", "spec", "status"],
        &format!("a {kind} has `metadata` and `spec`"),
    );
    let node = objects[i].node.clone();
    let mut others = Others { objects, index };
    match which {
        Kind::PyTorchJob => pytorchjob::import(&mut job, &object, &mut others),
        Kind::TrainJob => trainjob::import(&mut job, &object, &mut others, level),
        Kind::JobSet => jobset::import(&mut job, &object, &mut others),
    }
    let at = job.at;
    let name = job.name.clone();
    let runtimes = std::mem::take(&mut job.runtimes);
    let (spec, found) = job.finish()?;
    Ok((
        ImportedJob {
            name,
            spec,
            at,
            runtimes,
            object,
            node,
        },
        found,
    ))
}

/// The objects of the documents, a `v1 List`'s items one by one; empty
/// documents (between two `---`) are none.
fn objects(documents: &[Node]) -> Vec<Object<'_>> {
    let object = |node, document| Object {
        node,
        json: Node::to_json(node),
        document,
        used: false,
    };
    let mut objects = Vec::new();
    for (i, document) in documents.iter().enumerate() {
        let list_items = match document.get("items").map(|e| &e.value.value) {
            Some(crate::tree::Value::Array(items))
                if document.get("kind").and_then(|e| e.value.as_str()) == Some("List") =>
            {
                Some(items)
            }
            _ => None,
        };
        match list_items {
            Some(items) => objects.extend(items.iter().map(|item| object(item, i + 1))),
            None if matches!(document.value, crate::tree::Value::Null) => {}
            None => objects.push(object(document, i + 1)),
        }
    }
    objects
}

fn unsupported_version(object: &Object<'_>, kind: &str, api_version: &str) -> Diagnostic {
    let want = match kind {
        "PyTorchJob" => pytorchjob::API_VERSION,
        "JobSet" => jobset::API_VERSION,
        _ => trainjob::API_VERSION,
    };
    Diagnostic::error(
        codes::IMPORT,
        object.node.span_at("/apiVersion"),
        format!(
            "document {}: {kind} `{}` is `{api_version}`; trainc imports `{want}`",
            object.document,
            object.name()
        ),
    )
    .with_help(format!(
        "convert it to `{want}` first (the field names differ)"
    ))
}

fn not_imported(object: &Object<'_>, no_job: bool) -> Diagnostic {
    let trainc_code = object.kind() == "ConfigMap"
        && object.json["metadata"]["labels"][crate::spec::defaults::LABEL_MANAGED_BY] == "trainc";
    let what = match object.kind() {
        "ConfigMap" if trainc_code => {
            "it holds the local code (`[code]`) of a trainc job, whose files import cannot put back where they came from; add `[code]` to the spec again"
        }
        "PersistentVolumeClaim" | "Service" if !no_job => {
            "no job of the input uses it, so it is not part of any spec"
        }
        "" => "it is not a Kubernetes object with a `kind`",
        _ => "trainc imports jobs and their claims and services; this object is left as it is",
    };
    let object_name = if object.kind().is_empty() {
        "the document".to_owned()
    } else {
        format!("{} `{}`", object.kind(), object.name())
    };
    Diagnostic::warning(
        codes::IMPORT_DROPPED,
        object.start(),
        format!(
            "document {}: {object_name} is not imported: {what}",
            object.document
        ),
    )
    .with_help("apply it beside the spec's objects if the job still needs it")
}

/// Every string with `{{`, `{%` or `{#` in it, written so that trainc's
/// templates leave it as it is: `{{ "{{" }}`.
fn escape_templates(value: &mut Json) {
    match value {
        Json::String(text) if ["{{", "{%", "{#"].iter().any(|o| text.contains(o)) => {
            let mut out = String::with_capacity(text.len() + 16);
            let mut rest = text.as_str();
            while let Some(i) = rest.find('{') {
                out.push_str(&rest[..i]);
                let open = &rest[i..(i + 2).min(rest.len())];
                if ["{{", "{%", "{#"].contains(&open) {
                    let _ = write!(out, "{{{{ \"{open}\" }}}}");
                    rest = &rest[i + 2..];
                } else {
                    out.push('{');
                    rest = &rest[i + 1..];
                }
            }
            out.push_str(rest);
            *text = out;
        }
        Json::Array(items) => items.iter_mut().for_each(escape_templates),
        Json::Object(map) => map.values_mut().for_each(escape_templates),
        _ => {}
    }
}

/// YAML's merge keys, as Kubernetes' YAML reader applies them: the entries
/// of `<<: *base` (or of each mapping in `<<: [*a, *b]`, the first winning)
/// that the mapping does not set itself.
pub fn merge_keys(node: &mut Node) {
    use crate::tree::Value;
    match &mut node.value {
        Value::Table(entries) => {
            if let Some(i) = entries.iter().position(|e| e.key == "<<") {
                let merged = entries.remove(i).value;
                let sources: Vec<Node> = match merged.value {
                    Value::Array(items) => items,
                    _ => vec![merged],
                };
                for source in sources {
                    if let Value::Table(more) = source.value {
                        for entry in more {
                            if !entries.iter().any(|e| e.key == entry.key) {
                                entries.push(entry);
                            }
                        }
                    }
                }
            }
            for entry in entries.iter_mut() {
                merge_keys(&mut entry.value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(merge_keys),
        _ => {}
    }
}

/// `key` of a JSON object as text, if it is a string.
pub(crate) fn text(value: &Json, key: &str) -> Option<String> {
    value.get(key).and_then(Json::as_str).map(str::to_owned)
}
