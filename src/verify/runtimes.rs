//! A TrainJob together with the runtime it names: a TrainingRuntime or
//! ClusterTrainingRuntime among the objects verified, else one the Trainer
//! release ships ([`crate::trainer::bind`]). The facts are the ones `build`
//! checks a spec against: what Trainer's TrainJob webhook rejects
//! (kubeflow/trainer v2.0.0–v2.3.0,
//! `pkg/runtime/framework/plugins/jobset/jobset.go` `Validate`: initializers
//! without their job, container or, from v2.3.0, `initializer` mount; a
//! patch of a job or container the runtime lacks) and what fails once
//! admitted (a trainer with no image; an initializer URI its image cannot
//! read). A runtime that neither the input nor the catalogue knows is not
//! checked here.

use serde_json::Value;

use super::{Problem, id};
use crate::render::trainjob;
use crate::spec::ApiLevel;
use crate::trainer::bind::{Bound, bind};
use crate::trainer::runtime::{Kind, Runtime};

pub(super) fn check(
    values: &[&Value],
    level: ApiLevel,
    file: &[Runtime],
    problems: &mut Vec<Problem>,
) {
    // The objects' own runtimes first: they are what is being applied.
    let given: Vec<Runtime> = values
        .iter()
        .filter(|v| v["apiVersion"] == trainjob::API_VERSION)
        .filter_map(|v| Runtime::from_json(v).ok())
        .chain(file.iter().cloned())
        .collect();
    let release = level.release();
    for job in values
        .iter()
        .filter(|v| v["apiVersion"] == trainjob::API_VERSION && v["kind"] == trainjob::KIND)
    {
        let reference = &job["spec"]["runtimeRef"];
        let Some(name) = reference["name"].as_str() else {
            continue;
        };
        let kind = match reference["kind"].as_str() {
            Some("TrainingRuntime") => Kind::Namespaced,
            // The CRD's default.
            None | Some("ClusterTrainingRuntime") => Kind::Cluster,
            Some(_) => continue,
        };
        let namespace = job["metadata"]["namespace"].as_str();
        let bound = bind(kind, name, namespace, release, Some(&given));
        if let Some(runtime) = bound.runtime() {
            together(&id(job), job, &bound, runtime, level, problems);
        }
    }
}

fn together(
    id: &str,
    job: &Value,
    bound: &Bound,
    runtime: &Runtime,
    level: ApiLevel,
    problems: &mut Vec<Problem>,
) {
    let release = level.release();
    let named = bound.describe();
    for kind in ["dataset", "model"] {
        let Some(init) = job.pointer(&format!("/spec/initializer/{kind}")) else {
            continue;
        };
        let path = format!("/spec/initializer/{kind}");
        if let Some(gap) = runtime.initializer_gap(release, kind) {
            problems.push(Problem::webhook(id, &path, gap.message(kind, &named)));
            continue;
        }
        let uri = init["storageUri"].as_str().unwrap_or("");
        if let Some(image_release) = runtime.kubeflow_initializer(kind, release)
            && let Some(allowed) = crate::trainer::scheme_refused(image_release, kind, uri)
        {
            problems.push(Problem::operator(
                id,
                &format!("{path}/storageUri"),
                format!(
                    "the {kind} initializer of Trainer {} downloads from {allowed} only; `{uri}` fails its Job, and no training runs",
                    image_release.tag()
                ),
            ));
        }
    }
    if job.pointer("/spec/trainer/image").is_none() && bound.image().is_none() {
        problems.push(Problem::operator(
            id,
            "/spec/trainer",
            format!(
                "no `trainer.image`, and {named} gives its `{}` container none: Kubernetes rejects the pod",
                trainjob::NODE
            ),
        ));
    }
    for Patched {
        at: path,
        job: job_name,
        containers,
    } in patches(job)
    {
        let Some(target) = runtime.job(&job_name) else {
            problems.push(Problem::webhook(
                id,
                &path,
                format!("{named} has no replicated job `{job_name}` for this patch"),
            ));
            continue;
        };
        for (container_path, container) in containers {
            if target.container(&container).is_none() {
                problems.push(Problem::webhook(
                    id,
                    &container_path,
                    format!(
                        "the `{job_name}` job of {named} has no container `{container}`; a patch cannot add one"
                    ),
                ));
            }
        }
    }
}

/// One replicated job a pod patch names.
struct Patched {
    /// Where the job's name is.
    at: String,
    job: String,
    /// The containers and init containers it patches: (where, name).
    containers: Vec<(String, String)>,
}

/// Each replicated job a pod patch names: `runtimePatches` (v2.2 and
/// later), `podTemplateOverrides` (v2.1), `podSpecOverrides` (v2.0).
fn patches(job: &Value) -> Vec<Patched> {
    let spec = &job["spec"];
    let mut out = Vec::new();
    let names = |pod: &Value, at: &str| -> Vec<(String, String)> {
        let mut found = Vec::new();
        for list in ["containers", "initContainers"] {
            for (i, c) in pod[list].as_array().into_iter().flatten().enumerate() {
                if let Some(name) = c["name"].as_str() {
                    found.push((format!("{at}/{list}/{i}/name"), name.to_owned()));
                }
            }
        }
        found
    };
    let items = |key: &str| spec[key].as_array().into_iter().flatten().enumerate();
    for (p, patch) in items("runtimePatches") {
        let jobs = patch.pointer("/trainingRuntimeSpec/template/spec/replicatedJobs");
        for (j, rjob) in jobs
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = format!(
                "/spec/runtimePatches/{p}/trainingRuntimeSpec/template/spec/replicatedJobs/{j}"
            );
            let pod = rjob
                .pointer("/template/spec/template/spec")
                .unwrap_or(&Value::Null);
            if let Some(name) = rjob["name"].as_str() {
                let containers = names(pod, &format!("{at}/template/spec/template/spec"));
                out.push(Patched {
                    at: format!("{at}/name"),
                    job: name.to_owned(),
                    containers,
                });
            }
        }
    }
    for (key, pod_at) in [("podTemplateOverrides", "/spec"), ("podSpecOverrides", "")] {
        for (o, patch) in items(key) {
            let at = format!("/spec/{key}/{o}");
            let pod = if pod_at.is_empty() {
                patch
            } else {
                &patch["spec"]
            };
            let containers = names(pod, &format!("{at}{pod_at}"));
            for (t, target) in patch["targetJobs"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                if let Some(name) = target["name"].as_str() {
                    out.push(Patched {
                        at: format!("{at}/targetJobs/{t}/name"),
                        job: name.to_owned(),
                        containers: containers.clone(),
                    });
                }
            }
        }
    }
    out
}
