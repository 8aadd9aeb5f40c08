//! `trainc migrate`: PyTorchJobs into TrainJobs, the objects beside them
//! kept.
//!
//! Each PyTorchJob (`kubeflow.org/v1`) is imported into a spec with its
//! claims used by name and its Services named as they were
//! ([`crate::import::Jobs::PyTorchJobsKeepingObjects`]), the spec is
//! retargeted (`target = "trainjob"`, the API level and runtime asked for)
//! and built as `trainc build --verify` builds it. A spec that needs what a
//! TrainJob's patches cannot carry (a backoff limit, a restart policy, a
//! sidecar) gets `writeRuntime = true`, and the TrainingRuntime trainc
//! writes goes before the TrainJob. Everything else in the input passes
//! through byte for byte: the input is read by `verify`'s reader
//! ([`input`]), and only the bytes of a migrated job (or of the `v1 List`
//! that holds it) are replaced, and those of the Services that selected the
//! job's pods by the Training Operator's labels, whose selector is
//! rewritten to the TrainJob's pods.
//!
//! What changes for the running job is reported as warnings located in the
//! input ([`report`]), each with a `trainc::migrate::*` code; a job that
//! cannot be a TrainJob (elastic, a Master unlike its Workers) is an error
//! with the reason, and the build's own diagnostics of the spec made of it.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use serde_json::Value as Json;

use crate::diagnostic::{Diagnostic, codes};
use crate::import::{ImportedJob, Jobs};
use crate::render::Object;
use crate::source::{SourceId, Sources, Span};
use crate::spec::{ApiLevel, Spec, Target, TrainJobOptions};
use crate::tree::Node;

mod beyond;
mod compare;
mod input;
mod podspec;
mod report;
mod world;

/// What the command line asks of a migration.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The Trainer release of the cluster (the TrainJob's patch form).
    pub api_level: Option<ApiLevel>,
    /// The runtime every TrainJob names, instead of `torch-distributed`.
    pub runtime: Option<String>,
    /// `--runtimes FILE`, read into the sources: the cluster's runtimes,
    /// read once for every job.
    pub runtimes: Option<crate::trainer::file::RuntimesFile>,
    /// `--gang-scheduler NAME`: the scheduler that gangs a job's pods on the
    /// cluster (the Training Operator's `--gang-scheduler-name`), for a
    /// gang-scheduled PyTorchJob that names none.
    pub gang_scheduler: Option<String>,
    /// `--training-operator`: the release whose pods the TrainJob's are
    /// compared with.
    pub training_operator: crate::cluster::pytorchjob::Release,
}

/// One input file migrated.
#[derive(Debug, Default)]
pub struct Migrated {
    /// The file's objects in order, each PyTorchJob that migrated replaced
    /// (one that did not is kept as it was).
    pub text: String,
    /// Each migrated job's spec (`--spec`): its name and TOML text.
    pub specs: Vec<(String, String)>,
    pub diagnostics: Vec<Diagnostic>,
    /// PyTorchJobs found, and how many of them could not be migrated.
    pub jobs: usize,
    pub failed: usize,
}

/// One job's TrainJob and what came with it.
struct Done {
    /// Objects in apply order: the written runtime, then the TrainJob.
    objects: Vec<Json>,
    /// Services of the input rewritten for the TrainJob's pods: where the
    /// original is, and the new object.
    services: Vec<(Span, Json)>,
    spec_text: String,
}

/// Every PyTorchJob of the manifests in `id`, migrated.
pub fn migrate(sources: &mut Sources, id: SourceId, options: &Options) -> Migrated {
    if crate::parse::is_spec(sources.get(id)) {
        return Migrated {
            diagnostics: vec![crate::verify::manifests::spec_not_manifest(
                sources,
                id,
                codes::MIGRATE,
                "migrate",
            )],
            ..Migrated::default()
        };
    }
    let text = sources.get(id).text.clone();
    let file = sources.get(id).name.clone();
    let mut input = match input::read(&text, id) {
        Ok(input) => input,
        Err(diagnostics) => {
            return Migrated {
                diagnostics,
                ..Migrated::default()
            };
        }
    };
    let imported = crate::import::import_nodes(
        sources,
        id,
        &input.nodes,
        options.api_level,
        Jobs::PyTorchJobsKeepingObjects,
    );
    let mut out = Migrated {
        jobs: imported.seen,
        failed: imported.seen - imported.jobs.len(),
        ..Migrated::default()
    };
    // A PyTorchJob the cluster would refuse is said in `verify`'s words,
    // and what import says of it gives way.
    let (refused, invalid) =
        input::invalid_jobs(sources, id, &input.jobs, options.training_operator);
    let in_refused = |d: &Diagnostic| {
        d.primary.span.source == id
            && crate::source::range_holding(&refused, d.primary.span.start).is_some()
    };
    // An input without a job is said once, below.
    let no_job = |d: &Diagnostic| d.code == codes::IMPORT && d.message.starts_with("no PyTorchJob");
    out.diagnostics.extend(
        imported
            .diagnostics
            .into_iter()
            .filter(|d| !no_job(d) && !in_refused(d)),
    );
    out.diagnostics.extend(invalid);
    out.diagnostics.append(&mut input.workloads);
    out.diagnostics.append(&mut input.selectors);
    let services = rewritable_services(&input);
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    // The jobs of each `v1 List`, written again item by item.
    let mut lists: BTreeMap<(usize, usize), Vec<Relisted>> = BTreeMap::new();
    for job in &imported.jobs {
        if crate::source::range_holding(&refused, job.node.span.start).is_some() {
            out.failed += 1;
            continue;
        }
        let beside: Vec<(Json, Node)> = [job.name.as_str(), ""]
            .iter()
            .filter_map(|name| services.get(*name))
            .flatten()
            .cloned()
            .collect();
        out.diagnostics.extend(nulls(job));
        let Some(done) = migrate_job(sources, &file, job, &beside, options, &mut out.diagnostics)
        else {
            out.failed += 1;
            continue;
        };
        match input.lists.get(&job.node.span.start) {
            Some(list) => lists
                .entry((list.start, list.end))
                .or_default()
                .push((job.node.span.start, done.objects)),
            None => edits.push((span_range(job.node.span), yaml(&done.objects))),
        }
        for (span, service) in done.services {
            edits.push((span_range(span), yaml(&[service])));
        }
        out.specs.push((job.name.clone(), done.spec_text));
    }
    for ((start, end), jobs) in lists {
        if let Some(list) = relisted(&text, id, start..end, &jobs) {
            edits.push((start..end, list));
        }
    }
    out.diagnostics
        .extend(nothing_to_migrate(&out, input.objects, id));
    out.text = edited(&text, edits);
    out
}

/// What an input without a job to migrate gets: an error when it holds no
/// object at all (an empty pipe), a note when it holds no PyTorchJob.
fn nothing_to_migrate(out: &Migrated, objects: usize, id: SourceId) -> Option<Diagnostic> {
    if objects == 0 && !out.diagnostics.iter().any(Diagnostic::is_error) {
        // `kubectl get ... | trainc migrate -` where kubectl failed: an
        // empty stream must not pass as a migrated one.
        return Some(
            Diagnostic::error(
                codes::MIGRATE,
                crate::source::Span::new(id, 0, 0),
                "the input holds no Kubernetes object",
            )
            .with_help("if a command feeds trainc migrate, check that it succeeded (`set -o pipefail` makes a shell pipeline fail with it)"),
        );
    } else if out.jobs == 0
        && !out
            .diagnostics
            .iter()
            .any(|d| d.is_error() || d.code == codes::MIGRATE_WRAPPED)
    {
        return Some(Diagnostic::note(
            codes::MIGRATE_PASSED,
            crate::source::Span::new(id, 0, 0),
            "no PyTorchJob (`kubeflow.org/v1`) here: its objects pass through as they are",
        ));
    }
    None
}

/// Each null of the job, which the cluster pruned: the TrainJob is written
/// without it.
fn nulls(job: &ImportedJob) -> impl Iterator<Item = Diagnostic> + '_ {
    crate::verify::nulls::said_of(&job.node.to_sent_json())
        .into_iter()
        .map(|(path, said)| {
            Diagnostic::warning(codes::MIGRATE_DROPPED, job.node.span_at(&path), said)
                .with_help("give it a value, or remove it; the TrainJob is written without it, as the cluster ran the PyTorchJob")
        })
}

/// A job of a `v1 List` that migrated: where it starts, and what it became.
type Relisted = (usize, Vec<Json>);

/// The Services a migration may rewrite (those that select pods by a
/// Training Operator label: `job-name`, `job-role`, `replica-type`,
/// `replica-index`), by the job whose name their selector names, or under
/// `""` when it names none (such a Service may select the pods of any job of
/// its namespace): whole documents, not a List's items.
fn rewritable_services(input: &input::Input) -> HashMap<String, Vec<(Json, Node)>> {
    let mut services: HashMap<String, Vec<(Json, Node)>> = HashMap::new();
    for (_, node) in &input.nodes {
        let object = node.to_sent_json();
        if object["kind"] != "Service"
            || object["apiVersion"] != "v1"
            || input.lists.contains_key(&node.span.start)
        {
            continue;
        }
        let Some(selector) = object["spec"]["selector"].as_object() else {
            continue;
        };
        if !selector
            .keys()
            .any(|k| k.starts_with(crate::cluster::pytorchjob::LABEL_PREFIX))
        {
            continue;
        }
        let job = selector
            .get(crate::cluster::pytorchjob::LABEL_JOB_NAME)
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_owned();
        services
            .entry(job)
            .or_default()
            .push((object, node.clone()));
    }
    services
}

/// The bytes a node's span covers.
fn span_range(span: Span) -> Range<usize> {
    span.start..span.end
}

/// `text` with each edit's bytes replaced by its new YAML, everything else
/// as it was, byte for byte: the markers and comments around an object,
/// and every object not replaced. An object's trailing comment lines
/// (which its span takes in up to the next document) are kept; an object
/// that starts on its `---` line starts on the next.
fn edited(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    edits.sort_by_key(|(range, _)| range.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (range, new) in edits {
        if range.start < at {
            continue;
        }
        let end = content_end(text, range.clone());
        out.push_str(&text[at..range.start]);
        let line_start = text[..range.start].rfind('\n').map_or(0, |i| i + 1);
        if !text[line_start..range.start].trim().is_empty() {
            out.push('\n');
        }
        out.push_str(&new);
        if !new.ends_with('\n') {
            out.push('\n');
        }
        at = end;
        // What followed the object on its last line (a comment after a
        // flow mapping's `}`) starts a line of its own.
        if !text[..at].ends_with('\n') && at < text.len() {
            let rest = text[at..].split('\n').next().unwrap_or_default();
            if rest.trim().is_empty() {
                at += rest.len() + usize::from(at + rest.len() < text.len());
            }
        }
    }
    out.push_str(&text[at..]);
    out
}

/// Where the object at `range` ends: before the blank lines and the
/// comment lines (a `#` at the start of a line) that close its span.
fn content_end(text: &str, range: Range<usize>) -> usize {
    let mut end = range.end;
    let body = &text[range.start..range.end];
    if !body.ends_with('\n') {
        return end;
    }
    for line in body.split_inclusive('\n').rev() {
        if line.trim().is_empty() || line.starts_with('#') {
            end -= line.len();
        } else {
            break;
        }
    }
    end.max(range.start)
}

/// The `v1 List` at `range` of `text`, each of its PyTorchJobs that
/// migrated (by where each starts) replaced by what it became; `None` if
/// it does not read again.
fn relisted(text: &str, id: SourceId, range: Range<usize>, jobs: &[Relisted]) -> Option<String> {
    let stream =
        crate::parse::parse_manifest_part(id, text, range, crate::verify::manifests::MAX_DEPTH, 1)
            .ok()?;
    let list = stream.documents.first()?;
    let Some(crate::tree::Value::Array(items)) = list.get("items").map(|e| &e.value.value) else {
        return None;
    };
    let mut json = list.to_json();
    // The items as JSON (converted with the List), each by where it starts.
    let Json::Array(converted) = json["items"].take() else {
        return None;
    };
    let migrated: HashMap<usize, &Vec<Json>> = jobs
        .iter()
        .map(|(start, objects)| (*start, objects))
        .collect();
    let mut out = Vec::with_capacity(items.len());
    for (item, value) in items.iter().zip(converted) {
        match migrated.get(&item.span.start) {
            Some(objects) => out.extend(objects.iter().cloned()),
            None => out.push(value),
        }
    }
    json["items"] = Json::Array(out);
    Some(yaml(&[json]))
}

/// Objects as YAML documents.
fn yaml(objects: &[Json]) -> String {
    let objects: Vec<Object> = objects
        .iter()
        .map(|value| Object {
            kind: "",
            name: value["metadata"]["name"].as_str().unwrap_or("").to_owned(),
            value: value.clone(),
        })
        .collect();
    crate::emit::stream(&objects, crate::emit::Format::Yaml)
}

/// The job's spec as a TrainJob's, with what that changes (said only for a
/// job that becomes one); `Err` when no TrainJob can be what it is.
fn retargeted(
    job: &ImportedJob,
    options: &Options,
) -> Result<(Spec, Vec<Diagnostic>), Box<Diagnostic>> {
    if let Some(refused) = report::elastic(job).or_else(|| report::master(job)) {
        return Err(Box::new(refused));
    }
    let mut spec = job.spec.clone();
    if let Some(scheduling) = spec.scheduling.as_mut()
        && scheduling.gang == Some(true)
        && scheduling.scheduler_name.is_none()
        && scheduling.volcano_queue.is_none()
    {
        let Some(name) = &options.gang_scheduler else {
            return Err(Box::new(report::gang_without_scheduler(job)));
        };
        scheduling.scheduler_name = Some(name.clone());
    }
    let mut said = report::before_build(job, &mut spec);
    said.extend(beyond::pods_kept_after_failure(job));
    said.extend(beyond::queued(job));
    said.extend(world::keep(job, &mut spec));
    world::keep_failures(&mut spec);
    spec.target = Some(Target::Trainjob);
    let trainjob = spec.trainjob.get_or_insert_with(TrainJobOptions::default);
    trainjob.api_level = options.api_level.or(trainjob.api_level);
    if let Some(runtime) = &options.runtime {
        trainjob.runtime = Some(runtime.clone());
    }
    Ok((spec, said))
}

/// One PyTorchJob as a TrainJob, or `None` (with the errors said) when it
/// cannot be one.
fn migrate_job(
    sources: &mut Sources,
    file: &str,
    job: &ImportedJob,
    services: &[(Json, Node)],
    options: &Options,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Done> {
    let (spec, mut said) = match retargeted(job, options) {
        Ok(prepared) => prepared,
        Err(refused) => {
            diagnostics.push(*refused);
            return None;
        }
    };
    let (built, spec_text, id) = build(sources, file, job, &spec, options);
    let needs_runtime: Vec<&Diagnostic> = built
        .diagnostics
        .iter()
        .filter(|d| d.is_error() && asks_for_written_runtime(d))
        .collect();
    let (built, spec_text, id) = if needs_runtime.is_empty() {
        (built, spec_text, id)
    } else {
        let why: Vec<String> = needs_runtime.iter().map(|d| d.message.clone()).collect();
        let mut written = spec.clone();
        if let Some(t) = written.trainjob.as_mut() {
            t.write_runtime = Some(true);
        }
        let again = build(sources, file, job, &written, options);
        if again.0.objects.is_some() {
            said.push(report::written_runtime(job, &why));
        }
        again
    };
    let Some(objects) = built.objects else {
        let errors: Vec<&str> = built
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| d.message.as_str())
            .collect();
        diagnostics.push(
            Diagnostic::error(
                codes::MIGRATE,
                job.at,
                format!(
                    "PyTorchJob `{}` cannot be a TrainJob: {} (the spec made of it, `{}`, shows where)",
                    job.name,
                    errors.join("; "),
                    sources.get(id).name
                ),
            )
            .with_help("change the PyTorchJob where the errors point, or keep it on the Training Operator; `trainc import` writes it as a spec to start from"),
        );
        diagnostics.extend(built.diagnostics.into_iter().filter(Diagnostic::is_error));
        return None;
    };
    let world_said = said.iter().any(|d| d.code == codes::MIGRATE_WORLD);
    diagnostics.append(&mut said);
    diagnostics.extend(built.diagnostics);
    let values: Vec<Json> = objects.iter().map(|o| o.value.clone()).collect();
    let release = spec
        .trainjob
        .as_ref()
        .and_then(|t| t.api_level)
        .unwrap_or(crate::spec::defaults::TRAINJOB_API_LEVEL)
        .release();
    let runtimes: Vec<_> = built.trainjob.and_then(|(_, r)| r).into_iter().collect();
    let workloads = (
        crate::cluster::pytorchjob::workload_at(&job.object, options.training_operator),
        crate::cluster::workload(&values, &runtimes, release),
    );
    let (Ok(before), Ok(after)) = workloads else {
        return Some(Done {
            objects: values,
            services: Vec::new(),
            spec_text,
        });
    };
    let mut found = report::behaviour(job, &before, &after);
    // The process count chosen for the TrainJob says its own change.
    if world_said {
        found.retain(|d| d.code != codes::MIGRATE_WORLD);
    }
    if found.iter().any(Diagnostic::is_error) {
        // Pods unlike each other: the job is not migrated, and the refusal
        // names what differs in place of what import said of the job
        // (among it, "takes the Master's"), which no output carries.
        let inside = |d: &Diagnostic| {
            d.primary.span.source == job.node.span.source
                && (job.node.span.start..job.node.span.end).contains(&d.primary.span.start)
        };
        diagnostics.retain(|d| !(d.code == codes::IMPORT_DROPPED && inside(d)));
        diagnostics.extend(found.into_iter().filter(Diagnostic::is_error));
        return None;
    }
    diagnostics.extend(found);
    let (services, said) = report::services(job, services, &before, &after);
    diagnostics.extend(said);
    Some(Done {
        objects: values,
        services,
        spec_text,
    })
}

/// The spec built as `trainc build --verify` builds it, from its TOML text
/// (a source of its own, which the build's diagnostics point into).
fn build(
    sources: &mut Sources,
    file: &str,
    job: &ImportedJob,
    spec: &Spec,
    options: &Options,
) -> (crate::Built, String, SourceId) {
    let text = crate::import::write::write_as(
        spec,
        crate::import::write::Format::Toml,
        &format!(
            "The TrainJob `trainc migrate` made of PyTorchJob `{}` in `{file}`.",
            job.name
        ),
    );
    let id = sources.add(format!("{file} ({}.train.toml)", job.name), text.clone());
    let input = crate::Input {
        spec: id,
        overlays: Vec::new(),
        runtimes: options.runtimes.clone(),
    };
    let built = crate::build(
        sources,
        &input,
        &crate::Options {
            verify: true,
            ..crate::Options::default()
        },
    );
    (built, text, id)
}

/// Whether a build error says that a TrainingRuntime trainc writes would
/// carry what the TrainJob cannot (its help names `writeRuntime = true`).
fn asks_for_written_runtime(d: &Diagnostic) -> bool {
    d.help
        .as_deref()
        .is_some_and(|h| h.contains("writeRuntime = true"))
}

#[cfg(test)]
mod tests;
