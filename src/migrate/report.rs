//! What changes for a job moved from the Training Operator to Trainer, said
//! at the line of the PyTorchJob that the change is about. Each entry reads
//! the two controllers' pods as the cluster makes them
//! ([`crate::cluster::pytorchjob`], [`crate::cluster::trainjob`]), not
//! trainc's model, so what it says is what `describe --pods` and
//! `trainc run` show for each.

use std::collections::BTreeSet;

use serde_json::Value as Json;

use crate::cluster::{self, Pod, Success, Workload, trainjob};
use crate::diagnostic::{Diagnostic, codes};
use crate::import::ImportedJob;
use crate::source::Span;
use crate::spec::{Spec, Starter};
use crate::tree::Node;

/// Where in the PyTorchJob: the span of the value at `pointer`, else of the
/// nearest field above it.
fn at(job: &ImportedJob, pointer: &str) -> Span {
    job.node.span_at(pointer)
}

/// An elastic PyTorchJob, which no TrainJob can be: Trainer's torch plugin
/// runs a fixed `numNodes` ("TODO: Add support for PyTorch elastic when
/// JobSet supports Elastic Jobs", kubeflow/trainer v2.0.0–v2.3.0,
/// `pkg/runtime/framework/plugins/torch/torch.go` `EnforceMLPolicy`), and a
/// JobSet's jobs have a fixed number of pods.
pub(super) fn elastic(job: &ImportedJob) -> Option<Diagnostic> {
    let policy = job.object["spec"]
        .get("elasticPolicy")
        .filter(|p| !p.is_null())?;
    let bounds = match (
        policy["minReplicas"].as_u64(),
        policy["maxReplicas"].as_u64(),
    ) {
        (Some(min), Some(max)) => format!(" ({min} to {max} nodes)"),
        _ => String::new(),
    };
    Some(
        Diagnostic::error(
            codes::MIGRATE,
            at(job, "/spec/elasticPolicy"),
            format!(
                "PyTorchJob `{}` is elastic{bounds}, and a TrainJob is not: Trainer runs a fixed number of nodes (JobSet has no elastic jobs)",
                job.name
            ),
        )
        .with_help("keep it on the Training Operator, or remove `elasticPolicy` and give the Workers the number of nodes to run on, then migrate it"),
    )
}

/// A Master unlike its Workers (import's `[master]`), which no TrainJob can
/// have: every node of a TrainJob is one pod template, the runtime's `node`
/// job (kubeflow/trainer v2.0.0–v2.3.0, `plugins/jobset` `Build`).
pub(super) fn master(job: &ImportedJob) -> Option<Diagnostic> {
    let master = job.spec.master.as_ref()?;
    let differs: Vec<String> = serde_json::to_value(master)
        .ok()?
        .as_object()?
        .keys()
        .map(|k| format!("`{k}`"))
        .collect();
    Some(
        Diagnostic::error(
            codes::MIGRATE,
            at(job, "/spec/pytorchReplicaSpecs/Master"),
            format!(
                "PyTorchJob `{}`'s Master is not like its Workers ({} differ), and a TrainJob runs every node from one pod template",
                job.name,
                crate::diagnostic::listed(&differs)
            ),
        )
        .with_help("give the Master the Workers' template (or drop the Master: Worker 0 becomes rank 0), then migrate it"),
    )
}

/// A gang-scheduled PyTorchJob (`schedulingPolicy.minAvailable`) whose
/// pods name no scheduler: the Training Operator gangs them with the one
/// its `--gang-scheduler-name` names (kubeflow/trainer v1.9.2,
/// `cmd/training-operator.v1/main.go`), which the manifest does not say; a
/// TrainJob gangs them through its runtime's `podGroupPolicy`, which must
/// name it (`plugins/coscheduling`, `plugins/volcano`).
pub(super) fn gang_without_scheduler(job: &ImportedJob) -> Diagnostic {
    Diagnostic::error(
        codes::MIGRATE,
        at(job, "/spec/runPolicy/schedulingPolicy/minAvailable"),
        format!(
            "PyTorchJob `{}` is gang-scheduled, by the scheduler the Training Operator's `--gang-scheduler-name` names; a TrainJob's runtime must name it, and the manifest does not",
            job.name
        ),
    )
    .with_help("pass `--gang-scheduler volcano` (or the name of your scheduler-plugins scheduler), or set `schedulerName` in the PyTorchJob's pod template")
}

/// What the spec drops before it is built, because a TrainJob has no place
/// for it at all (not even in a runtime trainc writes).
pub(super) fn before_build(job: &ImportedJob, spec: &mut Spec) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    // `None` leaves a finished job's pods, as a JobSet does: nothing to say.
    if let Some(policy) = spec.policy.as_mut()
        && let Some(clean) = policy.clean_pod_policy.take()
        && clean != crate::spec::CleanPodPolicy::None
    {
        out.push(
            Diagnostic::warning(
                codes::MIGRATE_DROPPED,
                at(job, "/spec/runPolicy/cleanPodPolicy"),
                format!(
                    "`cleanPodPolicy: {clean:?}` has no TrainJob equivalent and is left out: what becomes of a finished TrainJob's pods is its runtime's JobSet's"
                ),
            )
            .with_help("to have the finished job deleted with its pods, set `runPolicy.ttlSecondsAfterFinished` (trainc writes it into the runtime)"),
        );
    }
    out
}

/// The TrainingRuntime trainc writes beside the TrainJob, and why: the
/// build's errors that only a runtime answers.
pub(super) fn written_runtime(job: &ImportedJob, why: &[String]) -> Diagnostic {
    // "target `trainjob` cannot express `policy.backoffLimit`": the field.
    let reasons: Vec<&str> = why
        .iter()
        .map(|w| {
            w.strip_prefix("target `trainjob` cannot express ")
                .and_then(|r| r.split(' ').next())
                .unwrap_or(w)
        })
        .collect();
    Diagnostic::warning(
        codes::MIGRATE_RUNTIME,
        at(job, "/metadata/name"),
        format!(
            "a TrainingRuntime `{}` is written before the TrainJob, which runs on it: a TrainJob's patches cannot carry what the job sets ({}, as its spec names them)",
            job.name,
            reasons.join("; ")
        ),
    )
    .with_help("apply the runtime with the TrainJob; it is the base runtime with this job's pod in its `node` job")
}

/// The differences between the PyTorchJob's pods (`before`) and the
/// TrainJob's (`after`); `starter` is what starts the processes.
pub(super) fn behaviour(
    job: &ImportedJob,
    starter: Starter,
    before: &Workload,
    after: &Workload,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    out.extend(pod_names(job, before, after));
    out.extend(world(job, starter, before, after));
    out.extend(env(
        job,
        !matches!(starter, Starter::Plain | Starter::Image),
        before,
        after,
    ));
    out.extend(success(job, before, after));
    out
}

/// The training pods of a workload (a TrainJob's initializers train nothing).
fn trainers(w: &Workload) -> Vec<&Pod> {
    w.pods
        .iter()
        .filter(|p| w.trainer_of(p).is_some())
        .collect()
}

fn names(pods: &[&Pod], total: u64) -> String {
    let mut shown: Vec<String> = pods
        .iter()
        .take(3)
        .map(|p| format!("`{}`", p.name))
        .collect();
    if total > 3 {
        shown.push(format!("… ({total} in all)"));
    }
    shown.join(", ")
}

fn pod_names(job: &ImportedJob, before: &Workload, after: &Workload) -> Option<Diagnostic> {
    let (b, a) = (trainers(before), trainers(after));
    let count = |w: &Workload, pods: &[&Pod]| {
        if w.pods.len() == pods.len() {
            w.total
        } else {
            pods.len() as u64
        }
    };
    Some(
        Diagnostic::warning(
            codes::MIGRATE_POD_NAMES,
            at(job, "/metadata/name"),
            format!(
                "the pods are named anew: {} become {}; rank 0 is `{}`, at `{}`",
                names(&b, count(before, &b)),
                names(&a, count(after, &a)),
                a.first()?.name,
                after.dns_names(0, &after.services(&[])).first().cloned().unwrap_or_else(|| a[0].hostname.clone()),
            ),
        )
        .with_help("update what names the old pods (dashboards, log queries, a Service or script that reaches the Master)"),
    )
}

/// A container's env as name → value (the value, or how it is filled).
fn env_of(w: &Workload, pod: &Pod) -> Vec<(String, String)> {
    let container = w.trainer_of(pod);
    let vars = container.and_then(|c| c["env"].as_array());
    vars.into_iter()
        .flatten()
        .filter_map(|v| {
            let name = v["name"].as_str()?.to_owned();
            let value = v["value"]
                .as_str()
                .map_or_else(|| "(from a field)".to_owned(), str::to_owned);
            Some((name, value))
        })
        .collect()
}

/// The world the job forms, as its processes learn it: torchrun's nodes
/// and processes per node under a launcher (as torchrun reads them: a flag
/// over its `PET_*` variable, [`crate::cluster::torchrun::read`]), else
/// `WORLD_SIZE`; from the first training pod.
fn world(
    job: &ImportedJob,
    starter: Starter,
    before: &Workload,
    after: &Workload,
) -> Option<Diagnostic> {
    // `auto` under torchrun is one process per GPU on a pod with GPUs.
    let get = |w: &Workload, key: &str| -> Option<String> {
        let pod = trainers(w).into_iter().next()?;
        let container = w.trainer_of(pod)?;
        let env = env_of(w, pod);
        let argv: Vec<String> = ["command", "args"]
            .iter()
            .flat_map(|k| container[k].as_array().into_iter().flatten())
            .filter_map(|a| a.as_str().map(str::to_owned))
            .collect();
        let value = match (key, crate::cluster::torchrun::read(&argv, &env)) {
            ("PET_NNODES", Some(launch)) => launch.nnodes,
            ("PET_NPROC_PER_NODE", Some(launch)) => launch.nproc_per_node,
            _ => env.into_iter().find(|(k, _)| k == key).map(|(_, v)| v)?,
        };
        let gpus = crate::trainer::torch::gpus(&container["resources"]);
        Some(if value == "auto" && gpus > 0 {
            gpus.to_string()
        } else {
            value
        })
    };
    let keys: &[&str] = match starter {
        Starter::Plain | Starter::Image => &["WORLD_SIZE"],
        _ => &["PET_NNODES", "PET_NPROC_PER_NODE"],
    };
    let say = |v: Option<String>| v.map_or_else(|| "unset".to_owned(), |v| format!("`{v}`"));
    let changed: Vec<String> = keys
        .iter()
        .filter_map(|key| {
            let (b, a) = (get(before, key), get(after, key));
            (b != a).then(|| format!("`{key}` {} becomes {}", say(b), say(a)))
        })
        .collect();
    if changed.is_empty() {
        return None;
    }
    Some(
        Diagnostic::warning(
            codes::MIGRATE_WORLD,
            at(job, "/spec/nprocPerNode"),
            format!("the job's world changes: {}", changed.join(", ")),
        )
        .with_help("set `nprocPerNode` to the number of processes each pod starts, so that both count the same world"),
    )
}

/// The variables torchrun sets for each process it starts, over the pod's.
const TORCHRUN_SETS: [&str; 4] = ["MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"];

/// The variables the Training Operator set that Trainer does not.
fn env(
    job: &ImportedJob,
    launcher: bool,
    before: &Workload,
    after: &Workload,
) -> Option<Diagnostic> {
    let (b, a) = (trainers(before), trainers(after));
    let names = |w: &Workload, pod: &Pod| -> BTreeSet<String> {
        env_of(w, pod).into_iter().map(|(k, _)| k).collect()
    };
    let (had, has) = (names(before, b.first()?), names(after, a.first()?));
    let gone: Vec<String> = had
        .difference(&has)
        .filter(|k| !(launcher && TORCHRUN_SETS.contains(&k.as_str())))
        .map(|k| format!("`{k}`"))
        .collect();
    if gone.is_empty() {
        return None;
    }
    Some(
        Diagnostic::warning(
            codes::MIGRATE_ENV,
            at(job, "/spec/pytorchReplicaSpecs"),
            format!(
                "the Training Operator set {} in the pods; Trainer does not",
                crate::diagnostic::listed(&gone)
            ),
        )
        .with_help("set what the command reads in the container's `env`"),
    )
}

/// When the job succeeds.
fn success(job: &ImportedJob, before: &Workload, after: &Workload) -> Option<Diagnostic> {
    let Success::Pod(master) = &before.success else {
        return None;
    };
    (after.success == Success::AllPods).then(|| {
        Diagnostic::warning(
            codes::MIGRATE_SUCCESS,
            at(job, "/spec/pytorchReplicaSpecs/Master"),
            format!(
                "the PyTorchJob succeeded when its Master (`{master}`) did; the TrainJob succeeds when every node's pod does"
            ),
        )
        .with_help("a Worker that exits with an error after the Master finished now fails the job")
    })
}

/// The input's Services that select the job's pods by the Training
/// Operator's labels (`services`: each object with where it was written),
/// rewritten to select the same pods of the TrainJob by JobSet's labels:
/// rank 0, or every node. One that selected some other set (the Workers
/// alone) has no such selector, and is said to select nothing now.
pub(super) fn services(
    job: &ImportedJob,
    services: &[(Json, Node)],
    before: &Workload,
    after: &Workload,
) -> (Vec<(crate::source::Span, Json)>, Vec<Diagnostic>) {
    let mut rewritten = Vec::new();
    let mut said = Vec::new();
    let (b, a) = (trainers(before), trainers(after));
    for (object, node) in services {
        let Some(service) = cluster::Service::from_object(object) else {
            continue;
        };
        let operator_labels = service
            .selector
            .iter()
            .any(|(k, v)| k == cluster::pytorchjob::LABEL_JOB_NAME && *v == job.name);
        if !operator_labels
            || service.namespace != after.pods.first().map_or("", |p| p.namespace.as_str())
        {
            continue;
        }
        let chosen: Vec<&str> = b
            .iter()
            .filter(|p| service.selects(p))
            .map(|p| p.name.as_str())
            .collect();
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let mut selector = vec![
            (trainjob::LABEL_JOBSET_NAME, job.name.clone()),
            (trainjob::LABEL_REPLICATED_JOB, trainjob::NODE.to_owned()),
        ];
        let (what, want) = if chosen.len() == b.len() && before.pods.len() as u64 == before.total {
            ("every pod", a.len())
        } else if chosen.len() == 1 && b.first().is_some_and(|p| p.name == chosen[0]) {
            selector.push((trainjob::LABEL_JOB_INDEX, "0".to_owned()));
            selector.push((trainjob::LABEL_COMPLETION_INDEX, "0".to_owned()));
            ("rank 0", 1)
        } else {
            said.push(
                Diagnostic::warning(
                    codes::MIGRATE_SERVICE,
                    node.span_at("/spec/selector"),
                    format!(
                        "Service `{name}` selects {} of `{}`'s pods by the Training Operator's labels, which the TrainJob's pods do not have: it selects no pod after the migration, and no label of JobSet's picks the same pods",
                        chosen.len(),
                        job.name
                    ),
                )
                .with_help(format!(
                    "JobSet labels every pod `{}: {}`, and each with its `{}`",
                    trainjob::LABEL_JOBSET_NAME,
                    job.name,
                    trainjob::LABEL_COMPLETION_INDEX
                )),
            );
            continue;
        };
        let new = cluster::Service {
            selector: selector
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
            ..service
        };
        if a.iter().filter(|p| new.selects(p)).count() != want {
            continue;
        }
        let mut object = object.clone();
        object["spec"]["selector"] = selector
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Json::from(v.clone())))
            .collect::<serde_json::Map<_, _>>()
            .into();
        said.push(
            Diagnostic::warning(
                codes::MIGRATE_SERVICE,
                node.span_at("/spec/selector"),
                format!(
                    "Service `{name}` selected {what} of `{}` by the Training Operator's labels; its selector is rewritten to select the TrainJob's {what} by JobSet's ({})",
                    job.name,
                    selector
                        .iter()
                        .map(|(k, v)| format!("`{k}: {v}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .with_help("the rest of the Service is as it was, written again (its comments are not kept)"),
        );
        rewritten.push((node.span, object));
    }
    (rewritten, said)
}
