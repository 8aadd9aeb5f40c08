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
//! through byte for byte ([`segments`]), except the Services that selected
//! the job's pods by the Training Operator's labels, whose selector is
//! rewritten to the TrainJob's pods.
//!
//! What changes for the running job is reported as warnings located in the
//! input ([`report`]), each with a `trainc::migrate::*` code; a job that
//! cannot be a TrainJob (elastic, a Master unlike its Workers) is an error
//! with the reason, and the build's own diagnostics of the spec made of it.

use serde_json::Value as Json;

use crate::diagnostic::{Diagnostic, codes};
use crate::import::{ImportedJob, Jobs};
use crate::render::Object;
use crate::source::{SourceId, Sources};
use crate::spec::{ApiLevel, Spec, Target, TrainJobOptions};

mod input;
mod report;
mod segments;
mod world;

/// What the command line asks of a migration.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The Trainer release of the cluster (the TrainJob's patch form).
    pub api_level: Option<ApiLevel>,
    /// The runtime every TrainJob names, instead of `torch-distributed`.
    pub runtime: Option<String>,
    /// `--runtimes FILE`, read into the sources: the cluster's runtimes.
    pub runtimes: Option<SourceId>,
    /// `--gang-scheduler NAME`: the scheduler that gangs a job's pods on the
    /// cluster (the Training Operator's `--gang-scheduler-name`), for a
    /// gang-scheduled PyTorchJob that names none.
    pub gang_scheduler: Option<String>,
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
    /// original starts, and the new object.
    services: Vec<(usize, Json)>,
    spec_text: String,
}

/// Every PyTorchJob of the manifests in `id`, migrated.
pub fn migrate(sources: &mut Sources, id: SourceId, options: &Options) -> Migrated {
    let text = sources.get(id).text.clone();
    let file = sources.get(id).name.clone();
    let imported = crate::import::import_jobs(
        sources,
        id,
        options.api_level,
        Jobs::PyTorchJobsKeepingObjects,
    );
    let mut out = Migrated {
        jobs: imported.seen,
        failed: imported.seen - imported.jobs.len(),
        ..Migrated::default()
    };
    let objects = input::objects(id, &text);
    let objects_found = objects.len();
    // A PyTorchJob the cluster would refuse is said in `verify`'s words,
    // and what import says of it gives way.
    let (refused, invalid) = input::invalid_jobs(sources, id, &objects);
    let in_refused = |d: &Diagnostic| {
        d.primary.span.source == id && refused.iter().any(|r| r.contains(&d.primary.span.start))
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
    out.diagnostics.extend(input::other_workloads(&objects));
    let segments = segments::split(&text);
    let mut parts: Vec<String> = segments
        .iter()
        .map(|s| text[s.start..s.end].to_owned())
        .collect();
    // The Services a migration may rewrite: whole documents, not a List's items.
    let services: Vec<(Json, crate::tree::Node)> = objects
        .into_iter()
        .filter(|(o, _)| o["kind"] == "Service" && o["apiVersion"] == "v1")
        .filter(|(_, node)| {
            segments::holding(&segments, node.span.start).is_some_and(|s| !in_list(&parts[s]))
        })
        .collect();
    // The jobs of each `v1 List` segment, written again item by item.
    let mut lists: Vec<(usize, Vec<Json>)> = Vec::new();
    for job in &imported.jobs {
        let Some(segment) = segments::holding(&segments, job.at.start) else {
            continue;
        };
        if refused.iter().any(|r| r.contains(&job.node.span.start)) {
            out.failed += 1;
            continue;
        }
        let Some(done) = migrate_job(
            sources,
            &file,
            job,
            &services,
            options,
            &mut out.diagnostics,
        ) else {
            out.failed += 1;
            continue;
        };
        if job.node.span.start > segments[segment].start && in_list(&parts[segment]) {
            lists.push((segment, done.objects));
        } else {
            parts[segment] = yaml(&done.objects);
        }
        for (offset, service) in done.services {
            if let Some(at) = segments::holding(&segments, offset) {
                parts[at] = yaml(&[service]);
            }
        }
        out.specs.push((job.name.clone(), done.spec_text));
    }
    for (segment, part) in parts.iter_mut().enumerate() {
        let jobs: Vec<&Vec<Json>> = lists
            .iter()
            .filter(|(s, _)| *s == segment)
            .map(|(_, o)| o)
            .collect();
        if !jobs.is_empty() {
            *part = relisted(sources, part, &jobs);
        }
    }
    if objects_found == 0 && !out.diagnostics.iter().any(Diagnostic::is_error) {
        // `kubectl get ... | trainc migrate -` where kubectl failed: an
        // empty stream must not pass as a migrated one.
        out.diagnostics.push(
            Diagnostic::error(
                codes::MIGRATE,
                crate::source::Span::new(id, 0, 0),
                "the input holds no Kubernetes object",
            )
            .with_help("if a command feeds trainc migrate, check that it succeeded (`set -o pipefail` makes a shell pipeline fail with it)"),
        );
    } else if out.jobs == 0 && !out.diagnostics.iter().any(Diagnostic::is_error) {
        out.diagnostics.push(Diagnostic::note(
            codes::MIGRATE_PASSED,
            crate::source::Span::new(id, 0, 0),
            "no PyTorchJob (`kubeflow.org/v1`) here: its objects pass through as they are",
        ));
    }
    out.text = segments::join(&parts);
    out
}

/// Whether a segment is a `v1 List` (whose items import reads one by one).
fn in_list(part: &str) -> bool {
    part.lines().any(|l| l.trim_end() == "kind: List")
}

/// A `v1 List` that held migrated jobs, its PyTorchJobs replaced in order
/// by what each became.
fn relisted(sources: &mut Sources, part: &str, jobs: &[&Vec<Json>]) -> String {
    let id = sources.add("<list>", part.to_owned());
    let Ok(documents) = crate::parse::parse_yaml_stream(id, part, 64, 1) else {
        return part.to_owned();
    };
    let Some(mut list) = documents.first().map(crate::tree::Node::to_json) else {
        return part.to_owned();
    };
    let mut migrated = jobs.iter();
    let mut items = Vec::new();
    for item in list["items"].as_array().into_iter().flatten() {
        let is_job = item["kind"] == crate::cluster::pytorchjob::KIND
            && item["apiVersion"] == crate::cluster::pytorchjob::API_VERSION;
        match migrated.next().filter(|_| is_job) {
            Some(objects) => items.extend(objects.iter().cloned()),
            None => items.push(item.clone()),
        }
    }
    list["items"] = Json::Array(items);
    yaml(&[list])
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
    said.extend(world::keep(job, &mut spec));
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
    services: &[(Json, crate::tree::Node)],
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
        crate::cluster::pytorchjob::workload(&job.object),
        crate::cluster::workload(&values, &runtimes, release),
    );
    let (Ok(before), Ok(after)) = workloads else {
        return Some(Done {
            objects: values,
            services: Vec::new(),
            spec_text,
        });
    };
    let mut found = report::behaviour(job, spec.starter(), &before, &after);
    // The process count chosen for the TrainJob says its own change.
    if world_said {
        found.retain(|d| d.code != codes::MIGRATE_WORLD);
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
        runtimes: options.runtimes,
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
