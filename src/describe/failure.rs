//! `on failure`: what the operator does when a pod fails, how long the
//! pods wait for each other, and the job's time limits.

use crate::model::Model;
use crate::spec::Target;

/// How the job fails: restarts and retries (on a Job, see `render::job`),
/// deadline, clean-up, suspension.
pub(super) fn failure(model: &Model) -> String {
    let p = &model.policy;
    let mut parts = Vec::new();
    match model.target {
        // With a Master, every pod of a JobSet is a Job of its own
        // (`cluster::jobset::Layout`); when the JobSet ends, JobSet deletes
        // the Jobs still running (`jobset_controller.go` `reconcile`).
        Target::Jobset if model.master.is_some() => {
            parts.push(
                "the first failed pod fails its Job (every pod is a Job of its own)".to_owned(),
            );
            parts.push(match p.group_restarts {
                None | Some(0) => "a failed Job fails the JobSet, which stops the other Jobs".to_owned(),
                Some(1) => "then JobSet restarts every pod together, once, before the JobSet fails".to_owned(),
                Some(n) => format!("then JobSet restarts every pod together, up to {n} times, before the JobSet fails"),
            });
        }
        Target::Job | Target::Jobset => {
            parts.push(match p.backoff_limit.unwrap_or(0) {
                0 => "the first failed pod fails the Job and stops the others".to_owned(),
                n => format!(
                    "a failed training process fails the Job; a pod lost otherwise (evicted, its node gone) is replaced up to {n} times"
                ),
            });
            // JobSet's failure policy (kubernetes-sigs/jobset v0.8–v0.12,
            // `failure_policy.go`): without one the first failed job fails
            // the JobSet; `maxRestarts` recreates every job instead.
            if model.target == Target::Jobset {
                parts.push(match p.group_restarts {
                    None | Some(0) => "a failed Job fails the JobSet".to_owned(),
                    Some(1) => "then JobSet restarts every pod together, once, before the JobSet fails".to_owned(),
                    Some(n) => format!("then JobSet restarts every pod together, up to {n} times, before the JobSet fails"),
                });
            }
        }
        Target::Trainjob => parts.push(jobset_failure(model)),
        Target::Pytorchjob => {
            parts.push(format!("restart policy {}", p.restart_policy));
            if let Some(master) = model
                .master
                .as_ref()
                .filter(|m| m.restart_policy != p.restart_policy)
            {
                parts[0] = format!(
                    "restart policy {} ({} on the Master)",
                    p.restart_policy, master.restart_policy
                );
            }
            if let Some(limit) = p.backoff_limit {
                parts.push(format!("up to {limit} retries"));
            }
        }
    }
    parts.extend(master_wait(model));
    if let Some(join) = join_wait(model) {
        parts.push(join);
    }
    if let Some(seconds) = p.active_deadline_seconds {
        parts.push(deadline(model, seconds));
    }
    if let Some(seconds) = p.ttl_seconds_after_finished {
        parts.push(format!("deleted {} after it finishes", duration(seconds)));
    }
    if p.suspend {
        parts.push("created suspended".to_owned());
    }
    parts.join(", ")
}

/// The time limit. On a JobSet it is each Job's `activeDeadlineSeconds`:
/// a Job past it fails (`DeadlineExceeded`) like any failed Job, the
/// failure policy's default action restarts the JobSet
/// (kubernetes-sigs/jobset v0.12.0, `pkg/controllers/failure_policy.go`
/// `defaultFailurePolicyRuleAction`), and the new Jobs start a fresh
/// deadline: each attempt has it, and the attempts add up.
fn deadline(model: &Model, seconds: u64) -> String {
    match (model.target, model.policy.group_restarts) {
        (Target::Jobset, Some(restarts)) if restarts > 0 => {
            let attempts = u64::from(restarts) + 1;
            format!(
                "each attempt stopped after {} (a Job past it fails, and a restart gives the new Jobs a fresh {}: up to {} over {attempts} attempts)",
                duration(seconds),
                duration(seconds),
                duration(seconds.saturating_mul(attempts))
            )
        }
        _ => format!("stopped after {}", duration(seconds)),
    }
}

/// How long the pods that started wait for the rest at torchrun's static
/// rendezvous, when trainc launches torchrun (not an elastic job, whose
/// c10d rendezvous has its own timeouts, nor a `command`).
fn join_wait(model: &Model) -> Option<String> {
    if model.container.verbatim || model.elastic.is_some() {
        return None;
    }
    let (seconds, whose) = match model.policy.join_timeout_seconds {
        Some(seconds) => (seconds, "policy.joinTimeout"),
        None => (
            crate::spec::defaults::TORCHRUN_JOIN_TIMEOUT_SECONDS,
            "torchrun's default",
        ),
    };
    Some(format!(
        "pods wait {} for every pod to join ({whose}), then fail",
        duration(seconds)
    ))
}

/// On a PyTorchJob with a Master and Workers, the Workers first wait for
/// the Master to be Ready, for a bounded time
/// ([`crate::cluster::pytorchjob::MASTER_LOOKUPS`]).
fn master_wait(model: &Model) -> Option<String> {
    use crate::cluster::pytorchjob::{MASTER_LOOKUP_INTERVAL_SECONDS, MASTER_LOOKUPS};
    // An elastic job has Workers alone: no Master to wait for.
    if model.target != Target::Pytorchjob || model.elastic.is_some() || model.nodes.max() < 2 {
        return None;
    }
    let seconds = u64::from(MASTER_LOOKUPS * MASTER_LOOKUP_INTERVAL_SECONDS);
    let then = if model.policy.restart_policy == "Never" {
        "or fail the job (restart policy Never)"
    } else {
        "or restart and wait again"
    };
    Some(format!(
        "Workers wait about {} for the Master to be Ready (the operator's init container), {then}",
        duration(seconds)
    ))
}

/// What JobSet does when a TrainJob's trainer fails: its webhook defaults
/// the pods' restart policy to `OnFailure` (kubernetes-sigs/jobset
/// `pkg/webhooks/jobset_webhook.go` `Default`), Kubernetes gives each Job a
/// `backoffLimit` of 6, and without a `failurePolicy` the first failed Job
/// fails the JobSet, so the TrainJob (`maxRestarts` restarts them all first).
/// The runtime's template says otherwise where it sets these.
fn jobset_failure(model: &Model) -> String {
    let template = model
        .trainjob
        .bound
        .as_ref()
        .and_then(|b| b.runtime())
        .map(|r| &r.object["spec"]["template"]["spec"]);
    let node = template.and_then(|t| {
        t["replicatedJobs"]
            .as_array()?
            .iter()
            .find(|j| j["name"] == crate::cluster::trainjob::NODE)
    });
    // A runtime trainc writes takes the spec's policy.
    let written = model.trainjob.write_runtime;
    let restart = if written {
        model.policy.restart_policy.as_str()
    } else {
        node.and_then(|j| j.pointer("/template/spec/template/spec/restartPolicy"))
            .and_then(serde_json::Value::as_str)
            .unwrap_or("OnFailure")
    };
    let backoff = match model.policy.backoff_limit {
        Some(limit) if written => u64::from(limit),
        _ => node
            .and_then(|j| j.pointer("/template/spec/backoffLimit"))
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(6),
    };
    let restarts = template
        .and_then(|t| t.pointer("/failurePolicy/maxRestarts"))
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    let known = if template.is_some() {
        ""
    } else {
        " (unless the runtime sets otherwise)"
    };
    let then = match restarts {
        0 => "then the Job fails, and with it the TrainJob".to_owned(),
        n => format!("then JobSet recreates every Job, up to {n} times, before the TrainJob fails"),
    };
    format!(
        "pod restart policy {restart}: a node's failures count against its Job's backoffLimit {backoff}; {then}{known}"
    )
}

fn duration(seconds: u64) -> String {
    match seconds {
        s if s % 86_400 == 0 => format!("{}d", s / 86_400),
        s if s % 3_600 == 0 => format!("{}h", s / 3_600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}
