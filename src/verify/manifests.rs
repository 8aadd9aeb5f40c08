//! `trainc verify FILE...`: any multi-document YAML of the kinds trainc knows,
//! hand-written or generated, against the same strict schemas, webhook rules
//! and cross-object rules as `build --verify`, with every problem located at
//! its line: file, document, object and field.
//!
//! A `v1 List` (what `kubectl get -o yaml` and `trainc build -o json` print)
//! is checked item by item. A kind with no schema (a CRD other than
//! Kubeflow's) is not checked: a note at its first object and a count in
//! the summary, never a silent pass, and an error under `--require-schemas`.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value as Json;

pub use super::reader::{MAX_DEPTH, MAX_DOCUMENTS};
use super::stream::Kept;
pub use super::stream::ONE_OBJECT_EACH;
use crate::diagnostic::{Diagnostic, codes};
use crate::source::{SourceId, Sources, Span};
use crate::spec::ApiLevel;

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
#[derive(Clone, Copy)]
pub struct Options<'a> {
    /// An object of a kind without a schema is an error, not a note.
    pub require_schemas: bool,
    /// The cluster's Training Operator (for PyTorchJobs) and JobSet (for
    /// JobSets).
    pub releases: super::Releases,
    /// CRDs whose kinds are checked by their own schemas and rules (`--crd`).
    pub crds: &'a super::crd::Crds,
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            require_schemas: false,
            releases: super::Releases::default(),
            crds: &super::crd::NONE,
        }
    }
}

/// What `trainc verify` checks, and what it does with the rest.
pub(super) const UNCHECKED_HELP: &str = "trainc checks every built-in kind of Kubernetes (1.36, or the `--kubernetes-version` given), Kubeflow's PyTorchJob, TrainJob, TrainingRuntime and ClusterTrainingRuntime, and JobSet; objects of other kinds are counted as not checked unless `--crd` gives their CustomResourceDefinition";

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

/// Every problem of the objects in `id`, a TrainJob checked for Trainer `level`.
/// `runtimes` are the cluster's (`--runtimes`), for TrainJobs whose runtime
/// the file does not hold.
pub fn verify_file(
    sources: &Sources,
    id: SourceId,
    level: ApiLevel,
    runtimes: &[crate::trainer::runtime::Runtime],
    options: Options<'_>,
) -> Verified {
    let mut diagnostics = Vec::new();
    let counted = verify_file_into(sources, id, level, runtimes, options, &mut |d| {
        diagnostics.push(d);
    });
    Verified {
        objects: counted.objects,
        unchecked: counted.unchecked,
        diagnostics,
    }
}

/// What [`verify_file_into`] found besides the problems it handed out.
#[derive(Default)]
pub struct Counted {
    /// Objects found (List items counted one by one).
    pub objects: usize,
    /// Of those, objects not checked, by `apiVersion` and `kind`.
    pub unchecked: BTreeMap<(String, String), usize>,
}

/// [`verify_file`], each problem handed to `sink` as soon as it is found:
/// a window of documents at a time, each window's in the order of the
/// file, then those of objects together. What is held is a window's, not
/// the file's problems, however many there are.
pub fn verify_file_into(
    sources: &Sources,
    id: SourceId,
    level: ApiLevel,
    runtimes: &[crate::trainer::runtime::Runtime],
    options: Options<'_>,
    sink: &mut dyn FnMut(Diagnostic),
) -> Counted {
    if crate::parse::is_spec(sources.get(id)) {
        sink(spec_not_manifest(
            sources,
            id,
            codes::VERIFY_SCHEMA,
            "verify",
        ));
        return Counted::default();
    }
    let text = &sources.get(id).text;
    let mut out = Out {
        sink,
        unchecked: BTreeMap::new(),
        require_schemas: options.require_schemas,
    };
    let read = super::stream::read(
        text,
        id,
        level,
        options.releases,
        options.crds,
        &mut |batch| out.batch(batch),
    );
    let read = match read {
        Ok(read) => read,
        Err(diagnostics) => {
            diagnostics.into_iter().for_each(&mut *out.sink);
            return Counted {
                objects: 0,
                unchecked: out.unchecked,
            };
        }
    };
    // Two objects of one id: said once, at the second. (Problems find
    // their object by its place in the stream, not by its id.)
    let mut by_id: HashMap<&str, &Kept> = HashMap::with_capacity(read.objects.len());
    // In the objects' order: printed as found, not held.
    for object in read.objects.iter().filter(|o| o.identified) {
        match by_id.entry(&object.id) {
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(object);
            }
            std::collections::hash_map::Entry::Occupied(first) => {
                (out.sink)(twice(first.get(), object));
            }
        }
    }
    let (together, with_runtimes) = together(&read, level, runtimes);
    let mut found: Vec<Diagnostic> = Vec::new();
    for found_one in super::stream::locate_together(text, id, &read, &together)
        .into_iter()
        .chain(super::stream::locate_together(
            text,
            id,
            &read,
            &with_runtimes,
        ))
    {
        found.extend(out.kept(found_one));
    }
    crate::diagnostic::sort(&mut found);
    found.into_iter().for_each(&mut *out.sink);
    Counted {
        objects: read.objects.len(),
        unchecked: out.unchecked,
    }
}

/// Where a file's problems go, and the count of objects not checked.
struct Out<'s> {
    sink: &'s mut dyn FnMut(Diagnostic),
    unchecked: BTreeMap<(String, String), usize>,
    require_schemas: bool,
}

impl Out<'_> {
    /// A batch's problems, in the order of the file.
    fn batch(&mut self, batch: super::stream::Batch) {
        let mut diagnostics = batch.not_objects;
        for found in batch.found {
            diagnostics.extend(self.kept(found));
        }
        diagnostics.extend(batch.readings);
        crate::diagnostic::sort(&mut diagnostics);
        diagnostics.into_iter().for_each(&mut *self.sink);
    }

    /// A problem as it is said: an object of a kind not checked is counted,
    /// and noted at its kind's first object (an error under
    /// `--require-schemas`, at every one).
    fn kept(&mut self, found: super::stream::Found) -> Option<Diagnostic> {
        let mut diagnostic = found.diagnostic;
        // An object with neither `apiVersion` nor `kind` has its error
        // already; it is no kind to count as not checked.
        if found
            .unchecked
            .as_ref()
            .is_some_and(|(version, kind)| version.is_empty() && kind.is_empty())
        {
            return None;
        }
        if let Some(key) = found.unchecked {
            let count = self.unchecked.entry(key).or_insert(0);
            *count += 1;
            if self.require_schemas {
                diagnostic.severity = crate::diagnostic::Severity::Error;
                diagnostic.help = Some(format!(
                    "{}; without `--require-schemas`, objects trainc cannot check are counted, not failed",
                    diagnostic.help.unwrap_or_default()
                ));
            } else if *count > 1 {
                return None;
            }
        }
        Some(diagnostic)
    }
}

/// The problems of the objects together (their indices among
/// `read.objects`), a namespace at a time: a job reaches Services of its own
/// namespace only, and may name a runtime of any (a ClusterTrainingRuntime
/// has none). Then each TrainJob's with the runtime it names: among the
/// objects, else among the cluster's `runtimes`.
fn together(
    read: &super::stream::Read,
    level: ApiLevel,
    runtimes: &[crate::trainer::runtime::Runtime],
) -> (Vec<super::Problem>, Vec<super::Problem>) {
    let own: Vec<Json> = (read.objects.iter())
        .filter(|o| o.runtime)
        .filter_map(Kept::together)
        .collect();
    let own: Vec<&Json> = own.iter().collect();
    let given = super::runtimes::given(&own, runtimes);
    let mut namespaces: BTreeMap<Option<&str>, Vec<usize>> = BTreeMap::new();
    for (index, object) in read.objects.iter().enumerate() {
        namespaces
            .entry(object.namespace.as_deref())
            .or_default()
            .push(index);
    }
    let mut together = Vec::new();
    let mut with_runtimes = Vec::new();
    for indices in namespaces.into_values() {
        let kept: Vec<Json> = indices
            .iter()
            .map(|&i| read.objects[i].together().unwrap_or_default())
            .collect();
        let values: Vec<&Json> = kept.iter().collect();
        let start = together.len();
        super::objects::check_among(&values, &own, &mut together);
        for problem in &mut together[start..] {
            problem.index = problem.index.map(|i| indices[i]);
        }
        for (&index, value) in indices.iter().zip(&kept) {
            if read.objects[index].trainjob {
                super::runtimes::job_problems(index, value, level, &given, &mut with_runtimes);
            }
        }
    }
    // In the TrainJobs' order, as the checks of the whole stream find them.
    with_runtimes.sort_by_key(|p| p.index);
    (together, with_runtimes)
}

/// The same object written twice: applied, the later silently replaces the
/// earlier (kustomize refuses such a stream; a hand-written one is not
/// checked by anything else).
fn twice(first: &Kept, again: &Kept) -> Diagnostic {
    Diagnostic::warning(
        codes::VERIFY_DUPLICATE,
        again.start,
        format!(
            "document {}: {} again (first in document {}): applied, this one replaces that one",
            again.document, first.id, first.document
        ),
    )
    .with_secondary(first.start, "first here")
    .with_help("give one of them another name (or namespace), or remove the copy")
}
