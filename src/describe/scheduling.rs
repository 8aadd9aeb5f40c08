//! `scheduling`: where the pods may run and how they are admitted: queues
//! (Kueue, Volcano), gang scheduling, priority, scheduler, node selection,
//! tolerations, one pod per node.

use super::Model;
use crate::cluster::{pytorchjob, trainjob};
use crate::spec::Target;

/// Gang scheduling: a PyTorchJob's PodGroup (the operator's, when it runs
/// with a gang scheduler) counts its pods; a TrainJob's is its runtime's,
/// which counts the pods of every job of the runtime
/// ([`crate::trainer::runtime::Runtime::pod_group_sum`]).
fn gang(model: &Model) -> Option<String> {
    let s = &model.scheduling;
    if model.target != Target::Trainjob {
        return s.gang.then(|| {
            format!(
                "gang: no pod starts until {} can (with the operator's gang scheduler)",
                model.nodes.min()
            )
        });
    }
    let t = &model.trainjob;
    let runtime = t
        .bound
        .as_ref()
        .and_then(crate::trainer::bind::Bound::runtime);
    let written = t.write_runtime
        && crate::trainer::written_pod_group(
            t.api_level.release(),
            s.gang,
            s.volcano_queue.is_some(),
            s.scheduler_name.as_deref(),
        )
        .is_some();
    if !written && !runtime.is_some_and(crate::trainer::runtime::Runtime::has_pod_group_policy) {
        return None;
    }
    let nodes = model.nodes.max();
    let Some(runtime) = runtime else {
        return Some(format!(
            "gang: no pod starts until {nodes} can (the runtime's PodGroup)"
        ));
    };
    let (total, terms) = runtime.pod_group_sum(nodes);
    Some(format!(
        "gang: no pod starts until all {total} can ({terms}: the runtime's PodGroup counts every job's pods)"
    ))
}

/// The port every pod declares on the host network: the Training
/// Operator's `pytorchjob-port`, or the torch plugin's 29500 on a TrainJob
/// (kubeflow/trainer v2.0.0–v2.3.0, `plugins/torch/torch.go`
/// `EnforceMLPolicy` adds it to the `node` container).
fn host_port(model: &Model) -> Option<u16> {
    if !model.pod.host_network {
        return None;
    }
    match model.target {
        Target::Pytorchjob => Some(pytorchjob::PORT),
        Target::Trainjob => {
            let runtime = model
                .trainjob
                .bound
                .as_ref()
                .and_then(crate::trainer::bind::Bound::runtime);
            let torch = runtime.is_none_or(|r| {
                matches!(
                    r.policy.framework,
                    crate::trainer::runtime::Framework::Torch { .. }
                )
            });
            torch.then_some(trainjob::TRAINER_PORT)
        }
        Target::Job | Target::Jobset => None,
    }
}

pub(super) fn scheduling(model: &Model) -> Vec<String> {
    let s = &model.scheduling;
    let mut lines = Vec::new();
    if let Some(queue) = &s.queue {
        // Kueue admits a PyTorchJob's replicas as written (kubernetes-sigs/
        // kueue v0.14–v0.19, `pkg/controller/jobs/kubeflow/kubeflowjob`
        // `PodSets`: each replica type's `replicas`), whatever the elastic
        // range: the quota is held for them all while the job runs.
        let holds = match (&model.elastic, model.target) {
            (Some(elastic), Target::Pytorchjob) => format!(
                ", then holds quota for all {} Worker pods it starts with, even while fewer run",
                elastic.start
            ),
            _ => String::new(),
        };
        lines.push(format!(
            "Kueue LocalQueue {queue} (the job waits suspended until admitted{holds})"
        ));
        // Kueue v0.19.0's default configuration leaves the Training
        // Operator's integrations out (see the rule `kueue_integration`).
        if model.target == Target::Pytorchjob {
            lines.push(
                "Kueue v0.19 and later ignore the queue of a PyTorchJob unless their configuration lists `kubeflow.org/pytorchjob` (off by default): then the job runs at once".to_owned(),
            );
        }
    }
    if let Some(queue) = &s.volcano_queue {
        lines.push(format!("Volcano queue {queue}"));
    }
    lines.extend(gang(model));
    if let Some(class) = &s.priority_class_name {
        lines.push(format!("priority class {class}"));
    }
    if let Some(scheduler) = &s.scheduler_name {
        lines.push(format!("scheduler {scheduler}"));
    }
    if !s.node_selector.is_empty() {
        let pairs: Vec<String> = s
            .node_selector
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        lines.push(format!("nodes with {}", pairs.join(", ")));
    }
    for t in &s.tolerations {
        let what = match (&t.key, &t.value) {
            (Some(k), Some(v)) => format!("{k}={v}"),
            (Some(k), None) => k.clone(),
            _ => "every taint".to_owned(),
        };
        lines.push(format!(
            "tolerates {what}{}",
            t.effect
                .as_deref()
                .map_or_else(String::new, |e| format!(" ({e})"))
        ));
    }
    if let Some(key) = &s.exclusive_topology {
        lines.push(format!(
            "all pods in one domain of the node label {key}, which no other JobSet's pods share (JobSet's exclusive placement)"
        ));
    }
    if s.spread_across_nodes {
        lines.push("one pod per node".to_owned());
    } else if let Some(port) = host_port(model) {
        // The operator, or Trainer's torch plugin, declares its port on every
        // pod, which on the host network becomes a hostPort (kubernetes
        // `pkg/apis/core/v1/defaults.go` `defaultHostNetworkPorts`).
        let whose = if model.target == Target::Trainjob {
            "the torch runtime's"
        } else {
            "the operator's"
        };
        lines.push(format!(
            "one pod per node: on the host network {whose} port {port} is a host port"
        ));
    }
    if let Some(account) = &s.service_account_name {
        lines.push(format!("service account {account}"));
    }
    if lines.is_empty() {
        lines.push("the cluster's default scheduler, any node".to_owned());
    }
    lines
}
