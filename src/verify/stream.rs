//! A manifest stream checked as [`super::reader`] reads it, a window of
//! documents at a time: each object checked on its own and its problems
//! located at their lines ([`super::located`]) while its tree is at hand,
//! then dropped, keeping only what the checks of objects together read
//! ([`super::objects::kept`]). Each batch's problems go to the caller as
//! soon as its objects are checked ([`OBJECTS_PER_BATCH`] at a time, a `v1
//! List`'s items too), so what is held is a window's, however many
//! problems the stream has. A problem of objects together is located by
//! reading its object's part again.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use serde_json::Value as Json;

use super::Problem;
use super::crd::Crds;
use super::located::{Located, Placed, missing_identity, place};
use super::reader::{MAX_DEPTH, MAX_DOCUMENTS, Parsed, windows};
use crate::diagnostic::{Diagnostic, codes};
use crate::source::{SourceId, Span};
use crate::spec::ApiLevel;

/// Objects checked at a time (on every core): what a batch holds is their
/// problems.
const OBJECTS_PER_BATCH: usize = 512;

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
    /// `Kind/name (namespace ns)`. (Boxed strings: a stream of a million
    /// small objects keeps one of these each.)
    pub id: Box<str>,
    /// Whether it is a TrainJob, checked with the runtime it names once
    /// every runtime among the objects is known.
    pub trainjob: bool,
    /// Its namespace: the checks of objects together take a namespace at
    /// a time.
    pub namespace: Option<Box<str>>,
    /// Whether it is one of Trainer's runtimes, which TrainJobs of every
    /// namespace may name.
    pub runtime: bool,
    /// Whether it has an `apiVersion`, a `kind` and a name: one without is
    /// an error already, and no copy of another.
    pub identified: bool,
    /// What the checks of objects together read of it, as JSON text: read
    /// back a namespace at a time, what a stream of thousands of jobs
    /// keeps is a few hundred bytes each, not the kilobytes of a tree.
    together: Option<Box<str>>,
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
    /// The object's `apiVersion` and `kind`, for one it did not check.
    pub unchecked: Option<(String, String)>,
}

/// What a stream's objects are, once every window is read: what the checks
/// of objects together need.
#[derive(Default)]
pub(super) struct Read {
    /// The stream's parts, each read on its own.
    parts: Vec<Range<usize>>,
    pub objects: Vec<Kept>,
}

/// The problems of a batch of objects, handed out as soon as they are
/// found, in the stream's order.
#[derive(Default)]
pub(super) struct Batch {
    /// Documents that are no objects, objects without `apiVersion`, `kind`
    /// or a name.
    pub not_objects: Vec<Diagnostic>,
    /// Each object's own problems, in the objects' order; a value a YAML
    /// 1.2 reader reads otherwise than Kubernetes joined to its error.
    pub found: Vec<Found>,
    /// The other such values, said on their own.
    pub readings: Vec<Diagnostic>,
}

/// The objects of `text` read and checked window by window, each batch's
/// problems handed to `emit` as soon as they are found; the stream's parse
/// errors if it is not YAML (after the batches of the windows before the
/// error).
pub(super) fn read(
    text: &str,
    id: SourceId,
    level: ApiLevel,
    releases: super::Releases,
    crds: &Crds,
    emit: &mut dyn FnMut(Batch),
) -> Result<Read, Vec<Diagnostic>> {
    let checks = Checks {
        level,
        releases,
        crds,
    };
    let mut objects = Vec::new();
    let parts = windows(text, id, &mut |parsed| {
        check(parsed, id, &checks, &mut objects, emit);
    })?;
    Ok(Read { parts, objects })
}

/// The objects of the parts `parsed`, checked on every core a batch at a
/// time, each batch's problems handed to `emit`; what stays of each object
/// kept in `kept`.
fn check(
    parsed: &[Parsed],
    id: SourceId,
    checks: &Checks<'_>,
    kept: &mut Vec<Kept>,
    emit: &mut dyn FnMut(Batch),
) {
    // A value read two ways that is also wrong for its field: one error,
    // which says how Kubernetes read it; the readings left wait for the
    // window's last batch.
    let mut readings: HashMap<Span, Diagnostic> = parsed
        .iter()
        .flat_map(|p| p.stream.readings.iter().cloned())
        .map(|d| (d.primary.span, d))
        .collect();
    let mut out = Batch::default();
    let mut batch: Vec<Located<'_>> = Vec::with_capacity(OBJECTS_PER_BATCH);
    for part in parsed {
        let (found, none) = crate::parse::stream_objects(&part.stream.documents);
        let numbered = |document: usize| part.first + document - 1;
        out.not_objects.extend(crate::parse::not_objects_errors(
            none.into_iter()
                .map(|(d, node)| (numbered(d), node))
                .collect(),
            codes::VERIFY_SCHEMA,
            "",
            ONE_OBJECT_EACH,
        ));
        for (ordinal, object) in found.into_iter().enumerate() {
            batch.push(Located {
                part: part.index,
                ordinal,
                document: numbered(object.document),
                node: object.node,
            });
            if batch.len() == OBJECTS_PER_BATCH {
                check_batch(&batch, id, checks, kept, &mut readings, &mut out);
                emit(std::mem::take(&mut out));
                batch.clear();
            }
        }
    }
    check_batch(&batch, id, checks, kept, &mut readings, &mut out);
    out.readings = readings.into_values().collect();
    out.readings.sort_by_key(|d| d.primary.span.start);
    emit(out);
}

/// The objects of `batch` checked on every core into `out`, what stays of
/// each into `kept`; an error about a value `readings` holds says how
/// Kubernetes reads it (and the reading is said no more).
fn check_batch(
    batch: &[Located<'_>],
    id: SourceId,
    checks: &Checks<'_>,
    kept: &mut Vec<Kept>,
    readings: &mut HashMap<Span, Diagnostic>,
    out: &mut Batch,
) {
    let checked = super::in_order(batch, |_, chunk| {
        chunk
            .iter()
            .map(|object| checked(object, id, checks))
            .collect::<Vec<_>>()
    });
    for (object, problems, identity) in checked.into_iter().flatten() {
        kept.push(object);
        out.not_objects.extend(identity);
        for mut found in problems {
            if found.diagnostic.is_error()
                && let Some(reading) = found.value.and_then(|v| readings.remove(&v))
            {
                found.diagnostic.help = Some(format!(
                    "{}; {}",
                    reading.message,
                    found.diagnostic.help.take().unwrap_or_default()
                ));
            }
            out.found.push(Found {
                diagnostic: found.diagnostic,
                unchecked: found.unchecked,
            });
        }
    }
}

/// One object checked on its own: what stays of it, its problems (at most
/// [`super::MAX_PROBLEMS_PER_OBJECT`], then a note), and an error when it
/// has no identity.
fn checked(
    object: &Located<'_>,
    id: SourceId,
    checks: &Checks<'_>,
) -> (Kept, Vec<Placed>, Option<Diagnostic>) {
    let json = object.node.to_sent_json();
    let identity = missing_identity(object, &json);
    let mut problems = Vec::new();
    super::one_object(
        &json,
        checks.level,
        checks.releases,
        checks.crds,
        &mut problems,
    );
    let past = problems.len() > super::MAX_PROBLEMS_PER_OBJECT;
    problems.truncate(super::MAX_PROBLEMS_PER_OBJECT);
    let mut placed: Vec<Placed> = problems
        .iter()
        .map(|p| place(p, Some((object, &json)), id))
        .collect();
    // A CRD among the objects: what the API server refuses in its schema
    // and its rules, as `--crd` reads it.
    if json["kind"] == "CustomResourceDefinition" && json["apiVersion"] == "apiextensions.k8s.io/v1"
    {
        placed.extend(
            Crds::refusals(object.node, &json, object.document)
                .into_iter()
                .map(|diagnostic| Placed {
                    diagnostic,
                    value: None,
                    unchecked: None,
                }),
        );
    }
    let object_id = super::id(&json);
    if past {
        placed.push(Placed {
            diagnostic: Diagnostic::note(
                codes::VERIFY_SCHEMA,
                object.start(),
                format!(
                    "document {}, {}: more problems of this object are not reported; trainc reports the first {} of an object",
                    object.document,
                    super::shortened(object_id.clone(), super::MAX_SHOWN),
                    super::MAX_PROBLEMS_PER_OBJECT
                ),
            )
            .with_help("fix these and verify again to see the rest"),
            value: None,
            unchecked: None,
        });
    }
    let kept = Kept {
        document: object.document,
        part: object.part,
        ordinal: object.ordinal,
        start: object.start(),
        id: object_id.into(),
        namespace: json["metadata"]["namespace"].as_str().map(Into::into),
        runtime: super::objects::is_runtime(&json),
        identified: identity.is_none(),
        trainjob: super::runtimes::is_trainjob(&json),
        together: super::objects::kept(json).map(|kept| kept.to_string().into()),
    };
    (kept, placed, identity)
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
                        part: kept.part,
                        ordinal: kept.ordinal,
                        document: kept.document,
                        node: object.node,
                    };
                    let json = object.node.to_sent_json();
                    located.push((n, place(problem, Some((&object, &json)), id)));
                }
            }
        }
        located
    });
    let mut placed: Vec<Option<Placed>> = problems.iter().map(|_| None).collect();
    for (n, found) in located.into_iter().flatten() {
        placed[n] = Some(found);
    }
    placed
        .into_iter()
        .zip(problems)
        .map(|(placed, problem)| placed.unwrap_or_else(|| place(problem, None, id)))
        .map(|placed| Found {
            diagnostic: placed.diagnostic,
            unchecked: placed.unchecked,
        })
        .collect()
}
