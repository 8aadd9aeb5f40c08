//! A manifest stream read a document at a time: each document parsed,
//! checked on its own and its problems located at their lines while its
//! tree is at hand, then dropped, keeping only what the checks of objects
//! together read ([`super::objects::kept`]). The documents are found by
//! their markers ([`crate::yaml::parts`]) and read on every core; where the
//! parts do not read as predicted (a syntax error, a directive, a part that
//! holds another number of documents than its text shows), the stream is
//! read as one part, exactly as a reader of the whole reads it. A problem of objects together is located
//! by reading its object's part again.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value as Json;

use super::Problem;
use super::crd::Crds;
use crate::diagnostic::{Diagnostic, codes};
use crate::source::{SourceId, Span};
use crate::spec::ApiLevel;
use crate::tree::{Node, field_path};

/// Deep enough for any Kubernetes object (a PyTorchJob's container fields sit
/// about 12 levels down; CRDs with embedded templates go further).
pub const MAX_DEPTH: usize = 64;
/// More documents than a large repository's whole rendered output holds
/// (the benchmark verifies 10,000 in one stream).
pub const MAX_DOCUMENTS: usize = 200_000;

/// What each document of a manifest is.
pub const ONE_OBJECT_EACH: &str = "each `---`-separated document of a manifest is one object";

/// What stays of an object once its document is dropped.
pub(super) struct Kept {
    /// 1-based, among the stream's non-empty documents.
    pub document: usize,
    /// Its part of the stream ([`Read::parts`]), and which object of it.
    part: usize,
    ordinal: usize,
    /// Where the object begins.
    pub start: Span,
    /// `Kind/name (namespace ns)`.
    pub id: String,
    /// Whether it is a TrainJob, checked with the runtime it names once
    /// every runtime among the objects is known.
    pub trainjob: bool,
    /// Its namespace: the checks of objects together take a namespace at
    /// a time.
    pub namespace: Option<String>,
    /// Whether it is one of Trainer's runtimes, which TrainJobs of every
    /// namespace may name.
    pub runtime: bool,
    /// What the checks of objects together read of it, as JSON text: read
    /// back a namespace at a time, what a stream of thousands of jobs
    /// keeps is a few hundred bytes each, not the kilobytes of a tree.
    together: Option<String>,
}

impl Kept {
    /// What the checks of objects together read of the object; `None` for
    /// a kind they do not read.
    pub(super) fn together(&self) -> Option<Json> {
        serde_json::from_str(self.together.as_deref()?).ok()
    }
}

/// What each object is checked for.
struct Checks<'a> {
    level: ApiLevel,
    releases: super::Releases,
    crds: &'a Crds,
}

/// A problem at its line.
pub(super) struct Found {
    pub diagnostic: Diagnostic,
    /// The span of the value it is about, where it has one (a reading of
    /// that value joins the error).
    pub value: Option<Span>,
    /// The object's `apiVersion` and `kind`, for one it did not check.
    pub unchecked: Option<(String, String)>,
}

/// Everything a stream's objects are on their own.
#[derive(Default)]
pub(super) struct Read {
    /// The stream's parts, each read on its own.
    parts: Vec<Range<usize>>,
    pub objects: Vec<Kept>,
    /// Documents that are no objects.
    pub not_objects: Vec<Diagnostic>,
    /// Objects without `apiVersion`, `kind` or a name.
    pub identity: Vec<Diagnostic>,
    /// Each object's own problems, in the objects' order.
    pub found: Vec<Found>,
    /// Scalars a YAML 1.2 reader reads otherwise than Kubernetes.
    pub readings: Vec<Diagnostic>,
}

impl Read {
    /// `more`'s objects and problems after these (its parts are these).
    fn append(&mut self, more: Read) {
        self.objects.extend(more.objects);
        self.not_objects.extend(more.not_objects);
        self.identity.extend(more.identity);
        self.found.extend(more.found);
        self.readings.extend(more.readings);
    }
}

/// The objects of `text` read and checked one by one; the stream's parse
/// errors if it is not YAML.
pub(super) fn read(
    text: &str,
    id: SourceId,
    level: ApiLevel,
    releases: super::Releases,
    crds: &Crds,
) -> Result<Read, Vec<Diagnostic>> {
    let split = crate::yaml::parts(text)
        .filter(|parts| parts.len() > 1 && parts.len() <= MAX_DOCUMENTS)
        .and_then(|parts| read_parts(text, id, &parts, level, releases, crds));
    if let Some(read) = split {
        return Ok(read);
    }
    let mut read = Read {
        parts: std::iter::once(0..text.len()).collect(),
        ..Read::default()
    };
    let checks = Checks {
        level,
        releases,
        crds,
    };
    read_part(text, id, 0, 0..text.len(), 1, &checks, &mut read)?;
    Ok(read)
}

/// The parts read on every core, in order; `None` where one does not read
/// as one document (or none, for an empty one) or does not read at all.
fn read_parts(
    text: &str,
    id: SourceId,
    parts: &[crate::yaml::Part],
    level: ApiLevel,
    releases: super::Releases,
    crds: &Crds,
) -> Option<Read> {
    let checks = Checks {
        level,
        releases,
        crds,
    };
    // Each part's first document number, from the documents before it.
    let mut first = Vec::with_capacity(parts.len());
    let mut documents = 1;
    for part in parts {
        first.push(documents);
        documents += usize::from(!part.empty);
    }
    let failed = AtomicBool::new(false);
    let chunks = super::in_order(parts, |offset, chunk| {
        let mut read = Read::default();
        for (i, part) in chunk.iter().enumerate() {
            let index = offset + i;
            let found = (!failed.load(Ordering::Relaxed))
                .then(|| {
                    let range = part.range.clone();
                    read_part(text, id, index, range, first[index], &checks, &mut read).ok()
                })
                .flatten();
            if found != Some(usize::from(!part.empty)) {
                failed.store(true, Ordering::Relaxed);
                return None;
            }
        }
        Some(read)
    });
    let mut read = Read {
        parts: parts.iter().map(|p| p.range.clone()).collect(),
        ..Read::default()
    };
    for chunk in chunks {
        read.append(chunk?);
    }
    Some(read)
}

/// The objects of part `index` (the bytes `range`, its first document
/// numbered `first`) checked and added to `read`; how many non-empty
/// documents it held.
fn read_part(
    text: &str,
    id: SourceId,
    index: usize,
    range: Range<usize>,
    first: usize,
    checks: &Checks<'_>,
    read: &mut Read,
) -> Result<usize, Vec<Diagnostic>> {
    let stream = crate::parse::parse_manifest_part(id, text, range, MAX_DEPTH, MAX_DOCUMENTS)?;
    let (objects, not_objects) = crate::parse::stream_objects(&stream.documents);
    let numbered = |document: usize| first + document - 1;
    read.not_objects.extend(crate::parse::not_objects_errors(
        not_objects
            .into_iter()
            .map(|(document, node)| (numbered(document), node))
            .collect(),
        codes::VERIFY_SCHEMA,
        "",
        ONE_OBJECT_EACH,
    ));
    // A `v1 List` of thousands of items is one part: its items are checked
    // on every core too.
    let checked = super::in_order(&objects, |offset, chunk| {
        let mut read = Read::default();
        for (i, object) in chunk.iter().enumerate() {
            let located = Located {
                document: numbered(object.document),
                node: object.node,
                json: object.node.to_json(),
            };
            read.identity.extend(missing_identity(&located));
            let mut problems = Vec::new();
            super::one_object(
                &located.json,
                checks.level,
                checks.releases,
                checks.crds,
                &mut problems,
            );
            read.found
                .extend(problems.iter().map(|p| found(p, Some(&located), id)));
            read.objects.push(Kept {
                document: located.document,
                part: index,
                ordinal: offset + i,
                start: located.start(),
                id: super::id(&located.json),
                namespace: located.json["metadata"]["namespace"]
                    .as_str()
                    .map(str::to_owned),
                runtime: super::objects::is_runtime(&located.json),
                trainjob: super::runtimes::is_trainjob(&located.json),
                together: super::objects::kept(located.json).map(|kept| kept.to_string()),
            });
        }
        read
    });
    for chunk in checked {
        read.append(chunk);
    }
    read.readings.extend(stream.readings);
    Ok(stream.documents.len())
}

/// Problems found once every document was dropped (each with its
/// object's index among `read.objects`), located: each part that holds
/// their objects read again, once, on every core.
pub(super) fn locate_together(
    text: &str,
    id: SourceId,
    read: &Read,
    problems: &[Problem],
) -> Vec<Found> {
    let mut by_part: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (n, problem) in problems.iter().enumerate() {
        if let Some(kept) = problem.index.and_then(|i| read.objects.get(i)) {
            by_part.entry(kept.part).or_default().push(n);
        }
    }
    let by_part: Vec<(usize, Vec<usize>)> = by_part.into_iter().collect();
    let located = super::in_order(&by_part, |_, chunk| {
        let mut located = Vec::new();
        for (part, wanted) in chunk {
            let range = read.parts[*part].clone();
            let Ok(stream) =
                crate::parse::parse_manifest_part(id, text, range, MAX_DEPTH, MAX_DOCUMENTS)
            else {
                continue;
            };
            let (objects, _) = crate::parse::stream_objects(&stream.documents);
            for &n in wanted {
                let problem = &problems[n];
                let kept = &read.objects[problem.index.unwrap_or_default()];
                if let Some(object) = objects.get(kept.ordinal) {
                    let object = Located {
                        document: kept.document,
                        node: object.node,
                        json: object.node.to_json(),
                    };
                    located.push((n, found(problem, Some(&object), id)));
                }
            }
        }
        located
    });
    let mut placed: Vec<Option<Found>> = problems.iter().map(|_| None).collect();
    for (n, found) in located.into_iter().flatten() {
        placed[n] = Some(found);
    }
    placed
        .into_iter()
        .zip(problems)
        .map(|(placed, problem)| placed.unwrap_or_else(|| found(problem, None, id)))
        .collect()
}

/// A problem at its line in `object`.
fn found(problem: &Problem, object: Option<&Located<'_>>, id: SourceId) -> Found {
    let value = object
        .and_then(|o| o.node.pointer(&problem.path))
        .map(|(value, _)| value.span);
    let unchecked = (!problem.contract.checked()).then(|| {
        object.map_or_else(Default::default, |o| {
            (
                o.json["apiVersion"].as_str().unwrap_or("").to_owned(),
                o.json["kind"].as_str().unwrap_or("").to_owned(),
            )
        })
    });
    Found {
        diagnostic: locate(problem, object, id),
        value,
        unchecked,
    }
}

/// One object of the file: where it is and what it says.
struct Located<'a> {
    /// 1-based, among the file's non-empty documents.
    document: usize,
    node: &'a Node,
    json: Json,
}

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
