//! What the migration changes beyond the pods' story ([`super::compare`]):
//! what becomes of a failed job's pods, and whether Kueue queues the job.

use crate::diagnostic::{Diagnostic, codes};
use crate::import::ImportedJob;

use super::report::at;

/// Before v1.9.4 the Training Operator deleted every pod of a job that
/// failed past its `backoffLimit` or `activeDeadlineSeconds`, whatever
/// `cleanPodPolicy` said: it set the job's Failed condition only after
/// deleting, so `cleanPodPolicy: None` (the default) was not heeded
/// (kubeflow/trainer 8e41c03c1, in v1.9.4,
/// `pkg/controller.v1/common/job.go` `ReconcileJobs`). A failed TrainJob's
/// pods stay, as a failed Job's do. Said where the job can fail that way:
/// a deadline, or a backoff limit on replicas that restart.
pub(super) fn pods_kept_after_failure(job: &ImportedJob) -> Option<Diagnostic> {
    let spec = &job.object["spec"];
    let policy = &spec["runPolicy"];
    if policy["cleanPodPolicy"]
        .as_str()
        .is_some_and(|c| c != "None")
    {
        return None;
    }
    let restarting = (spec["pytorchReplicaSpecs"]
        .as_object()
        .into_iter()
        .flatten())
    .any(|(_, replica)| replica["restartPolicy"] != "Never");
    let field = if !policy["activeDeadlineSeconds"].is_null() {
        "activeDeadlineSeconds"
    } else if !policy["backoffLimit"].is_null() && restarting {
        "backoffLimit"
    } else {
        return None;
    };
    Some(
        Diagnostic::note(
            codes::MIGRATE_RESTARTS,
            at(job, &format!("/spec/runPolicy/{field}")),
            format!("when the job fails past its `{field}`, the TrainJob's failed pods stay, with their logs; the Training Operator before v1.9.4 deleted every pod of such a job, whatever `cleanPodPolicy` said"),
        )
        .with_help("read a failed run's logs with `kubectl logs` on its pods; delete them with the TrainJob (`ttlSecondsAfterFinished` does it for you)"),
    )
}

/// A PyTorchJob queued by Kueue: Kueue v0.19.0's default configuration
/// leaves `kubeflow.org/pytorchjob` out of its integrations and lists
/// `trainer.kubeflow.org/trainjob` (kubernetes-sigs/kueue v0.19.0,
/// `config/components/manager/controller_manager_config.yaml`), so the
/// TrainJob, which keeps the label, is queued where the PyTorchJob may not
/// have been.
pub(super) fn queued(job: &ImportedJob) -> Option<Diagnostic> {
    let queue =
        job.object["metadata"]["labels"][crate::spec::defaults::LABEL_KUEUE_QUEUE].as_str()?;
    let pointer = format!(
        "/metadata/labels/{}",
        crate::tree::pointer_segment(crate::spec::defaults::LABEL_KUEUE_QUEUE)
    );
    Some(Diagnostic::note(
        codes::MIGRATE_LABELS,
        at(job, &pointer),
        format!(
            "the TrainJob keeps the queue `{queue}`, and Kueue manages TrainJobs in its default configuration; Kueue v0.19 and later manage PyTorchJobs only where their configuration lists `kubeflow.org/pytorchjob`, so on a default installation the PyTorchJob ran at once, outside the queue"
        ),
    ))
}
