//! What the targets of one Indexed Job (`job`, `jobset`) cannot express,
//! and what only a JobSet can.

use super::{Rules, cannot_express};
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::Target;

/// What a plain Job cannot do for a distributed run (see `render::job`): pods
/// that join and leave, a PodGroup for gang scheduling or a Volcano queue,
/// the Training Operator's pod cleanup, and restarting or replacing one rank,
/// which cannot rejoin the others' rendezvous.
pub(super) fn unsupported(r: &mut Rules<'_>) {
    let spec = r.spec;
    let scheduling = spec.scheduling.as_ref();
    let policy = spec.policy.as_ref();
    let pods = r.max_replicas();
    let restart = policy
        .and_then(|p| p.restart_policy)
        .filter(|p| *p != crate::spec::RestartPolicy::Never);
    let retries = policy
        .and_then(|p| p.backoff_limit)
        .filter(|n| *n > 0 && pods > 1);
    let jobset = r.target() == Target::Jobset;
    let no_pod_group = if jobset {
        "JobSet creates no PodGroup"
    } else {
        "no operator creates a PodGroup for a plain Job"
    };
    let fields: [(bool, &str, String, &str); 7] = [
        (
            r.is_elastic(),
            "/replicas",
            "elastic `replicas`".to_owned(),
            "use a fixed `replicas`, or `target = \"pytorchjob\"` for elastic training, whose pods may join and leave",
        ),
        (
            spec.elastic.is_some(),
            "/elastic",
            "`[elastic]`".to_owned(),
            "remove `[elastic]`, or use `target = \"pytorchjob\"` for elastic training",
        ),
        (
            scheduling.is_some_and(|s| s.gang == Some(true)),
            "/scheduling/gang",
            format!("`scheduling.gang`: {no_pod_group}"),
            "with Kueue, `scheduling.queue` admits all the job's pods at once; or use `target = \"pytorchjob\"` with the Training Operator's gang scheduling",
        ),
        (
            scheduling.is_some_and(|s| s.volcano_queue.is_some()),
            "/scheduling/volcanoQueue",
            format!(
                "`scheduling.volcanoQueue`: a Volcano queue comes with a PodGroup, and {no_pod_group}"
            ),
            "use Kueue's `scheduling.queue`, or `target = \"pytorchjob\"`",
        ),
        (
            policy.is_some_and(|p| p.clean_pod_policy.is_some()),
            "/policy/cleanPodPolicy",
            "`policy.cleanPodPolicy`".to_owned(),
            if jobset {
                "remove it: `policy.ttlAfterFinished` deletes a finished JobSet with its jobs and pods"
            } else {
                "remove it: a failed Job's running pods are stopped anyway, and `policy.ttlAfterFinished` deletes a finished Job with its pods"
            },
        ),
        (
            restart.is_some(),
            "/policy/restartPolicy",
            format!(
                "`restartPolicy = \"{}\"`: a rank restarted alone cannot rejoin the others' rendezvous, so {} the first failure fails the run",
                restart.map(|p| format!("{p:?}")).unwrap_or_default(),
                if jobset { "in its Job" } else { "on a Job" }
            ),
            if jobset {
                "remove `policy.restartPolicy`: `policy.groupRestarts` restarts every pod together after a failure, at a new rendezvous"
            } else {
                "remove `policy.restartPolicy` (a Job's pods are never restarted), or use `target = \"pytorchjob\"`"
            },
        ),
        (
            retries.is_some(),
            "/policy/backoffLimit",
            format!(
                "`backoffLimit = {}` for {pods} pods: a replacement pod cannot rejoin ranks that are still running, which then wait in a collective until NCCL's timeout",
                retries.unwrap_or_default()
            ),
            if jobset {
                "remove `policy.backoffLimit`: the first failed pod fails the job, and `policy.groupRestarts` restarts every pod together; a single-pod job may keep its retries"
            } else {
                "remove `policy.backoffLimit`: the first failed pod fails the Job and stops the others, and you rerun it; a single-pod job may keep its retries"
            },
        ),
    ];
    for (set, pointer, what, help) in fields {
        if set {
            cannot_express(r, pointer, &what, help);
        }
    }
    master_restart(r);
    if pods > MAX_INDEXED_JOB_PARALLELISM && !r.is_elastic() {
        r.push(
            Diagnostic::error(
                codes::TARGET_UNSUPPORTED,
                r.value("/replicas"),
                format!("target `{}` runs {pods} pods in one Indexed Job; the API server rejects a `parallelism` above {MAX_INDEXED_JOB_PARALLELISM}", r.target().as_str()),
            )
            .with_help(format!("use at most {MAX_INDEXED_JOB_PARALLELISM} `replicas`, or `target = \"pytorchjob\"`")),
        );
    }
}

/// A JobSet's Master restarted alone (`[master] restartPolicy`), as
/// `policy.restartPolicy` for every pod.
fn master_restart(r: &mut Rules<'_>) {
    let restart = r
        .spec
        .master_role()
        .and_then(|m| m.restart_policy)
        .filter(|p| *p != crate::spec::RestartPolicy::Never);
    if let Some(restart) = restart {
        cannot_express(
            r,
            "/master/restartPolicy",
            &format!(
                "`[master] restartPolicy = \"{restart:?}\"`: the Master restarted alone cannot rejoin the Workers' rendezvous, so in its job the first failure fails the run"
            ),
            "remove `[master] restartPolicy`: `policy.groupRestarts` restarts every pod together after a failure, at a new rendezvous",
        );
    }
}

/// An Indexed Job's `parallelism` (trainc writes `replicas`) is at most this:
/// kubernetes/kubernetes `pkg/apis/batch/validation/validation.go`
/// `validateJobSpec`, `maxParallelismForIndexedJob` (read at commit
/// 3989b18586203eb366257fa4c8e9c0d605ec41df).
const MAX_INDEXED_JOB_PARALLELISM: u32 = 100_000;

/// What only a JobSet expresses: restarting the whole job, exclusive
/// placement; the error on another target says where else it is written.
pub(super) fn jobset_only(r: &mut Rules<'_>) {
    let target = r.target();
    if target == Target::Jobset {
        return;
    }
    let restarts = r.spec.policy.as_ref().and_then(|p| p.group_restarts);
    if restarts.is_some() {
        let help = match target {
            Target::Trainjob => {
                "a TrainJob's runtime holds its JobSet's `failurePolicy.maxRestarts`: set it there, or use `target = \"jobset\"`"
            }
            Target::Pytorchjob => {
                "the Training Operator restarts failed pods (`policy.restartPolicy`, `backoffLimit`), never the whole job: use `target = \"jobset\"` to restart it as a group"
            }
            _ => {
                "a Job fails at its first failed pod and is never restarted as a whole: use `target = \"jobset\"` to restart it as a group"
            }
        };
        cannot_express(r, "/policy/groupRestarts", "`policy.groupRestarts`", help);
    }
    let exclusive = r
        .spec
        .scheduling
        .as_ref()
        .is_some_and(|s| s.exclusive_topology.is_some());
    if exclusive {
        let help = match target {
            Target::Trainjob => {
                "a TrainJob's JobSet takes the annotation `alpha.jobset.sigs.k8s.io/exclusive-topology` from its runtime's template: set it there, or use `target = \"jobset\"`"
            }
            _ => {
                "exclusive placement is JobSet's: use `target = \"jobset\"`, or place the pods with `nodeSelector` and `spreadAcrossNodes`"
            }
        };
        cannot_express(
            r,
            "/scheduling/exclusiveTopology",
            "`scheduling.exclusiveTopology`",
            help,
        );
    }
}
