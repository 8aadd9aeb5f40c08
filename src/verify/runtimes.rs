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
use crate::cluster::trainjob;
use crate::spec::ApiLevel;
use crate::trainer::bind::{Bound, bind};
use crate::trainer::runtime::{ANCESTOR_LABEL, Framework, Kind, Runtime};

pub(super) fn check(
    values: &[&Value],
    level: ApiLevel,
    file: &[Runtime],
    problems: &mut Vec<Problem>,
) {
    let given = given(values, file);
    for (index, job) in values.iter().enumerate() {
        if is_trainjob(job) {
            job_problems(index, job, level, &given, problems);
        }
    }
}

/// The runtimes a TrainJob may name: the objects' own first (they are what
/// is being applied), then the cluster's (`file`).
pub(super) fn given(values: &[&Value], file: &[Runtime]) -> Vec<Runtime> {
    values
        .iter()
        .filter(|v| v["apiVersion"] == trainjob::API_VERSION)
        .filter_map(|v| Runtime::from_json(v).ok())
        .chain(file.iter().cloned())
        .collect()
}

pub(super) fn is_trainjob(value: &Value) -> bool {
    value["apiVersion"] == trainjob::API_VERSION && value["kind"] == trainjob::KIND
}

/// The problems of the TrainJob `job`, object `index` of those verified,
/// with the runtime it names among `given`.
pub(super) fn job_problems(
    index: usize,
    job: &Value,
    level: ApiLevel,
    given: &[Runtime],
    problems: &mut Vec<Problem>,
) {
    let start = problems.len();
    one_job(job, level, level.release(), given, problems);
    // Every problem found here is the TrainJob's.
    for problem in &mut problems[start..] {
        problem.index = Some(index);
    }
}

/// The problems of one TrainJob with the runtime it names among `given`.
fn one_job(
    job: &Value,
    level: ApiLevel,
    release: crate::trainer::Release,
    given: &[Runtime],
    problems: &mut Vec<Problem>,
) {
    let reference = &job["spec"]["runtimeRef"];
    let Some(name) = reference["name"].as_str() else {
        return;
    };
    // Unset is the CRD's default, a ClusterTrainingRuntime.
    let Some(kind) = reference["kind"]
        .as_str()
        .map_or(Some(Kind::Cluster), Kind::from_kind)
    else {
        return;
    };
    let namespace = job["metadata"]["namespace"].as_str();
    let bound = bind(kind, name, namespace, release, Some(given));
    let framework = bound.runtime().map(|r| &r.policy.framework);
    super::webhooks::reserved_env(&id(job), job, framework, level, problems);
    // torchrun's, on a torch runtime (or one trainc does not know).
    if matches!(framework, None | Some(Framework::Torch { .. })) {
        super::webhooks::zero_procs(&id(job), job, "/spec/trainer/numProcPerNode", problems);
    }
    if let Some(runtime) = bound.runtime() {
        if crate::trainer::webhook::deprecated(&runtime.object, release) {
            problems.push(Problem::admitted(
                &id(job),
                "/spec/runtimeRef",
                format!(
                    "Trainer warns that {} is deprecated and will be removed in a future release of Kubeflow Trainer ({})",
                    bound.describe(),
                    crate::trainer::webhook::DEPRECATION_POLICY
                ),
            ));
        }
        together(&id(job), job, &bound, runtime, level, problems);
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
    for rejection in crate::trainer::webhook::plugin_rejections(job, runtime, release) {
        problems.push(Problem::webhook(id, &rejection.path, rejection.message));
    }
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
    // torchrun forms its world from the `PET_*` variables only the torch
    // plugin sets (kubeflow/trainer `pkg/runtime/framework/plugins/torch`).
    let torchrun = job.pointer("/spec/trainer/command/0") == Some(&Value::from("torchrun"));
    if torchrun && !matches!(runtime.policy.framework, Framework::Torch { .. }) {
        problems.push(Problem::operator(
            id,
            "/spec/trainer/command",
            format!("{named} has no `torch` ML policy: Trainer sets none of the `PET_*` variables torchrun forms its world from"),
        ));
    }
    if runtime.trainer_job().is_none() {
        problems.push(Problem::operator(
            id,
            "/spec/trainer",
            format!(
                "no job of {named} is labelled as the trainer's (`{ANCESTOR_LABEL}: trainer`): Trainer puts this `trainer` on none of its pods"
            ),
        ));
    } else if job.pointer("/spec/trainer/image").is_none() && bound.image().is_none() {
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
        // Trainer merges a TrainJob's patches into the runtime before its
        // webhook looks for the jobs and containers they name (kubeflow/trainer
        // `pkg/runtime/core/trainingruntime.go` `ValidateObjects` →
        // `newRuntimeInfo`: v2.0.0 `mergePodSpecOverrides` and v2.1.0
        // `mergePodTemplateOverrides`, strategic merges into the pod of each
        // job a patch targets; v2.2.0–v2.3.0 `mergeRuntimePatches`, a
        // strategic merge of the whole JobSet spec). So a patch's new
        // container, and from v2.2 its new job, are admitted (the real v2.3.0
        // webhook admits both) and added as written: with no image, which a
        // patch cannot give.
        let Some(target) = runtime.job(&job_name) else {
            let message = format!("{named} has no replicated job `{job_name}` for this patch");
            if release >= crate::trainer::Release::V2_2 {
                problems.push(Problem::operator(
                    id,
                    &path,
                    format!(
                        "{message}: Trainer admits the TrainJob and adds the job to its JobSet as the patch writes it, with no container image, so the JobSet or its Job is refused and no training runs"
                    ),
                ));
            } else {
                problems.push(Problem::webhook(id, &path, message));
            }
            continue;
        };
        for (container_path, container) in containers {
            if target.container(&container).is_none() {
                problems.push(Problem::operator(
                    id,
                    &container_path,
                    format!(
                        "the `{job_name}` job of {named} has no container `{container}`: Trainer admits the TrainJob and adds the container as the patch writes it, with no image (a patch cannot give one), so Kubernetes refuses the Job and no pod runs"
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

/// Each replicated job a pod patch names, with the containers it patches.
fn patches(job: &Value) -> Vec<Patched> {
    let mut out = Vec::new();
    for patch in super::webhooks::pod_patches(job) {
        let mut containers = Vec::new();
        for list in ["containers", "initContainers"] {
            let items = patch.pod[list].as_array().into_iter().flatten().enumerate();
            for (i, c) in items {
                if let Some(name) = c["name"].as_str() {
                    containers.push((format!("{}/{list}/{i}/name", patch.at), name.to_owned()));
                }
            }
        }
        for (at, job) in patch.jobs {
            out.push(Patched {
                at,
                job,
                containers: containers.clone(),
            });
        }
    }
    out
}
