//! What changes for a job moved from the Training Operator to Trainer, said
//! at the line of the PyTorchJob that the change is about. Each entry reads
//! the two controllers' pods as the cluster makes them
//! ([`crate::cluster::pytorchjob`], [`crate::cluster::trainjob`]), not
//! trainc's model, so what it says is what `describe --pods` and
//! `trainc run` show for each.

use serde_json::Value as Json;

use super::compare::{self, Aspect, Difference};
use crate::cluster::{self, Pod, Workload, trainjob};
use crate::diagnostic::{Diagnostic, codes};
use crate::import::ImportedJob;
use crate::source::Span;
use crate::spec::Spec;
use crate::tree::Node;

/// Where in the PyTorchJob: the span of the value at `pointer`, else of the
/// nearest field above it.
pub(super) fn at(job: &ImportedJob, pointer: &str) -> Span {
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

/// Every difference the two clusters' stories show ([`compare`]), said at
/// the PyTorchJob's lines, one entry per aspect. A field of the pod or a
/// label that the Master and its Workers had apart (some ranks differ,
/// others not) is a refusal: a TrainJob runs every node from one template,
/// and would drop what some of them need.
pub(super) fn behaviour(job: &ImportedJob, before: &Workload, after: &Workload) -> Vec<Diagnostic> {
    said(job, before.total, &compare::differences(before, after))
}

/// The diagnostics of `differences`, one per aspect; `total`, the
/// PyTorchJob's pods.
pub(super) fn said(job: &ImportedJob, total: u64, differences: &[Difference]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut aspects: Vec<Aspect> = differences.iter().map(|d| d.aspect).collect();
    aspects.sort();
    aspects.dedup();
    for aspect in aspects {
        let found: Vec<&Difference> = differences.iter().filter(|d| d.aspect == aspect).collect();
        // Each subject once, with the ranks it was found on.
        let mut groups: Vec<(&Difference, Vec<u64>)> = Vec::new();
        for d in &found {
            match groups
                .iter_mut()
                .find(|(g, _)| g.subject == d.subject && g.before == d.before && g.after == d.after)
            {
                Some((_, ranks)) => ranks.extend(d.rank),
                None => groups.push((d, d.rank.into_iter().collect())),
            }
        }
        let ranked: Vec<u64> = found.iter().filter_map(|d| d.rank).collect();
        let partial = groups.iter().any(|(_, ranks)| {
            !ranks.is_empty()
                && (ranks.len() as u64) < total.min(crate::cluster::MADE_AT_MOST as u64)
        });
        let items: Vec<String> = groups
            .iter()
            .take(6)
            .map(|(d, ranks)| match aspect {
                Aspect::Names => format!("{} become {}", d.before, d.after),
                Aspect::Success => format!(
                    "the PyTorchJob succeeded {}; the TrainJob succeeds {}",
                    d.before, d.after
                ),
                _ => format!(
                    "{} {} becomes {}{}",
                    d.subject,
                    d.before,
                    d.after,
                    on(ranks, total, job)
                ),
            })
            .chain((groups.len() > 6).then(|| format!("and {} more", groups.len() - 6)))
            .collect();
        let first_rank = ranked.first().copied().unwrap_or(0);
        let replica = replica_of(job, first_rank);
        let container = trainer_index(job, &replica);
        let listed = items.join("; ");
        let place = Place {
            replica: &replica,
            container,
            groups: &groups,
        };
        let diagnostic = entry(job, aspect, partial, &listed, &place);
        out.push(diagnostic);
    }
    out
}

/// Where in the PyTorchJob an aspect's entry points: the replica of the
/// first rank it was found on, its training container, the differences.
struct Place<'a> {
    replica: &'a str,
    container: usize,
    groups: &'a [(&'a Difference, Vec<u64>)],
}

/// The entry of one aspect, `listed` its differences in words; `partial`,
/// found on some pods only.
fn entry(
    job: &ImportedJob,
    aspect: Aspect,
    partial: bool,
    listed: &str,
    place: &Place<'_>,
) -> Diagnostic {
    match aspect {
        Aspect::Names => Diagnostic::warning(
            codes::MIGRATE_POD_NAMES,
            at(job, "/metadata/name"),
            format!("the pods are named anew: {listed}"),
        )
        .with_help("update what names the old pods (dashboards, log queries, a Service or script that reaches the Master)"),
        Aspect::World => Diagnostic::warning(
            codes::MIGRATE_WORLD,
            at(job, "/spec/nprocPerNode"),
            format!("the job's world changes: {listed}"),
        )
        .with_help(if listed.contains("`PET_NPROC_PER_NODE` unset") {
            // The Training Operator v1.7 sets it only with a Master.
            "the Training Operator gave these pods no `PET_NPROC_PER_NODE` (v1.7 sets it only on a job with a Master), so a torchrun the image starts ran 1 process on each; set `nprocPerNode: \"1\"` to keep that world, or keep the count written to run it"
        } else {
            "set `nprocPerNode` to the number of processes each pod starts, so that both count the same world"
        }),
        Aspect::CommandLine => Diagnostic::warning(
            codes::MIGRATE_COMMAND,
            at(job, &format!("{}/template/spec/containers/{}/command", place.replica, place.container)),
            format!("the training container starts differently: {listed}"),
        )
        .with_help("set what the command reads in the container's `env`, or write the values in the command"),
        Aspect::Env => Diagnostic::warning(
            codes::MIGRATE_ENV,
            at(job, &format!("{}/template/spec/containers/{}/env", place.replica, place.container)),
            format!("the variables the training processes read change: {listed}"),
        )
        .with_help("set what the command reads in the container's `env`"),
        Aspect::Labels | Aspect::Pod if partial => Diagnostic::error(
            codes::MIGRATE,
            pod_place(job, aspect, place.replica, place.groups),
            format!(
                "PyTorchJob `{}`'s pods are not alike, and a TrainJob runs every node from one template: {listed}",
                job.name
            ),
        )
        .with_help("give the Master and the Workers the same pod template (what one of them needs, the other can have too), then migrate it"),
        Aspect::Labels => Diagnostic::warning(
            codes::MIGRATE_LABELS,
            pod_place(job, aspect, place.replica, place.groups),
            format!("the pods' labels and annotations change: {listed}"),
        )
        .with_help("set them in the TrainJob's pod template (`[podTemplate]` of its spec)"),
        Aspect::Pod => Diagnostic::warning(
            codes::MIGRATE_POD,
            pod_place(job, aspect, place.replica, place.groups),
            format!("the pods change: {listed}"),
        )
        .with_help("set what the pods need in the TrainJob's runtime or its pod template"),
        Aspect::Restarts | Aspect::Deadline => Diagnostic::warning(
            codes::MIGRATE_RESTARTS,
            restart_place(job, place.replica, aspect),
            format!("what happens when the job fails changes: {listed}"),
        )
        .with_help("set `runPolicy.backoffLimit` (and `restartPolicy`) to what the job should tolerate; trainc writes it into the TrainJob's runtime"),
        Aspect::Success => Diagnostic::warning(
            codes::MIGRATE_SUCCESS,
            at(job, &replica_of(job, 0)),
            format!("the job succeeds at another moment: {listed}"),
        )
        .with_help("a Worker that exits with an error after the Master finished now fails the job"),
    }
}

/// Where the ranks are: "on every pod", "on rank 0 (the Master)", "on
/// ranks 1 to 3".
fn on(ranks: &[u64], total: u64, job: &ImportedJob) -> String {
    let master = has_master(job);
    match ranks {
        [] => String::new(),
        _ if ranks.len() as u64 >= total.min(crate::cluster::MADE_AT_MOST as u64) => {
            " (every pod)".to_owned()
        }
        [0] if master => " (rank 0, the Master)".to_owned(),
        [one] => format!(" (rank {one})"),
        [first, .., last] => format!(" (ranks {first} to {last})"),
    }
}

fn has_master(job: &ImportedJob) -> bool {
    job.object["spec"]["pytorchReplicaSpecs"]
        .as_object()
        .is_some_and(|r| r.keys().any(|k| k.eq_ignore_ascii_case("master")))
}

/// The pointer of the replica spec that makes the pod of `rank`, its type
/// as written.
fn replica_of(job: &ImportedJob, rank: u64) -> String {
    let want = if rank == 0 && has_master(job) {
        "master"
    } else {
        "worker"
    };
    let written = job.object["spec"]["pytorchReplicaSpecs"]
        .as_object()
        .and_then(|r| r.keys().find(|k| k.eq_ignore_ascii_case(want)).cloned())
        .unwrap_or_else(|| "Worker".to_owned());
    format!("/spec/pytorchReplicaSpecs/{written}")
}

/// The index of the `pytorch` container in the replica's template.
fn trainer_index(job: &ImportedJob, replica: &str) -> usize {
    job.object
        .pointer(&format!("{replica}/template/spec/containers"))
        .and_then(Json::as_array)
        .and_then(|c| {
            c.iter()
                .position(|c| c["name"] == crate::cluster::pytorchjob::CONTAINER)
        })
        .unwrap_or(0)
}

/// Where a pod's difference is: its field in the first replica that has it.
fn pod_place(
    job: &ImportedJob,
    aspect: Aspect,
    replica: &str,
    groups: &[(&Difference, Vec<u64>)],
) -> Span {
    let Some((first, _)) = groups.first() else {
        return at(job, replica);
    };
    let pointer = match aspect {
        Aspect::Labels => {
            let field = if first.subject.starts_with("label") {
                "labels"
            } else {
                "annotations"
            };
            format!("{replica}/template/metadata/{field}")
        }
        _ => format!(
            "{replica}/template/spec/{}",
            first.subject.replace('.', "/")
        ),
    };
    // The replica that has the field, else the one of the first rank.
    let other = if replica.ends_with("aster") {
        replica_of(job, 1)
    } else {
        replica_of(job, 0)
    };
    let alternative = pointer.replacen(replica, &other, 1);
    if job.object.pointer(&pointer).is_none() && job.object.pointer(&alternative).is_some() {
        return at(job, &alternative);
    }
    at(job, &pointer)
}

fn restart_place(job: &ImportedJob, replica: &str, aspect: Aspect) -> Span {
    let run_policy = |field: &str| format!("/spec/runPolicy/{field}");
    let pointer = match aspect {
        Aspect::Deadline => run_policy("activeDeadlineSeconds"),
        _ if job.object.pointer(&run_policy("backoffLimit")).is_some() => {
            run_policy("backoffLimit")
        }
        _ if job
            .object
            .pointer(&format!("{replica}/restartPolicy"))
            .is_some() =>
        {
            format!("{replica}/restartPolicy")
        }
        _ => replica.to_owned(),
    };
    at(job, &pointer)
}

/// A Service that selects by the Training Operator's labels but no job's
/// name: the pods of every PyTorchJob of its namespace, left as it is.
fn unnamed_service(job: &ImportedJob, name: &str, node: &Node) -> Diagnostic {
    Diagnostic::warning(
        codes::MIGRATE_SERVICE,
        node.span_at("/spec/selector"),
        format!(
            "Service `{name}` selects pods by the Training Operator's labels without a job's name, so the pods of every PyTorchJob of its namespace (`{}`'s among them); the TrainJob's pods do not have those labels, and it is left as it is",
            job.name
        ),
    )
    .with_help(format!(
        "select the TrainJob's pods by JobSet's labels: `{}: {}` (every pod), with `{}: 0` for rank 0",
        trainjob::LABEL_JOBSET_NAME,
        job.name,
        trainjob::LABEL_COMPLETION_INDEX
    ))
}

/// The training pods of a workload (a TrainJob's initializers train nothing).
fn trainers(w: &Workload) -> Vec<&Pod> {
    w.pods
        .iter()
        .filter(|p| w.trainer_of(p).is_some())
        .collect()
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
        let chosen: Vec<&str> = b
            .iter()
            .filter(|p| service.selects(p))
            .map(|p| p.name.as_str())
            .collect();
        let operator_labels = service
            .selector
            .iter()
            .any(|(k, _)| k.starts_with(cluster::pytorchjob::LABEL_PREFIX));
        let namespace = after.pods.first().map_or("", |p| p.namespace.as_str());
        if !operator_labels || chosen.is_empty() || service.namespace != namespace {
            continue;
        }
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let mut selector = vec![
            (trainjob::LABEL_JOBSET_NAME, job.name.clone()),
            (trainjob::LABEL_REPLICATED_JOB, trainjob::NODE.to_owned()),
        ];
        let named = service
            .selector
            .iter()
            .any(|(k, v)| k == cluster::pytorchjob::LABEL_JOB_NAME && *v == job.name);
        if !named {
            said.push(unnamed_service(job, name, node));
            continue;
        }
        // The one pod chosen, by its rank (its place among the pods made,
        // all of them made).
        let single = (chosen.len() == 1 && before.pods.len() as u64 == before.total)
            .then(|| b.iter().position(|p| p.name == chosen[0]))
            .flatten();
        let what_rank;
        let (what, want) = if chosen.len() == b.len() && before.pods.len() as u64 == before.total {
            ("every pod", a.len())
        } else if let Some(rank) = single.filter(|r| *r < a.len()) {
            selector.push((trainjob::LABEL_JOB_INDEX, "0".to_owned()));
            selector.push((trainjob::LABEL_COMPLETION_INDEX, rank.to_string()));
            what_rank = format!("rank {rank}");
            (what_rank.as_str(), 1)
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
