//! `jobset.x-k8s.io/v1alpha2 JobSet`, for `target = "jobset"`: distributed
//! PyTorch on any cluster with the JobSet controller (v0.8 to v0.12), with
//! no training operator.
//!
//! One replicated job, `node`, of one Indexed Job that runs every node: the
//! Job target's job ([`super::job::spec`]), torchrun launched the same way,
//! with JobSet in the place of trainc's headless Service. What JobSet does
//! with it is in [`crate::cluster::jobset`]: the job `<job>-node-0`, pod
//! `i` the host `<job>-node-0-<i>` under JobSet's headless Service `<job>`
//! (the same pods a TrainJob on Kubeflow's torch runtimes has), rank 0 at
//! `<job>-node-0-0.<job>`.
//!
//! With `[master]` (and more than one node) rank 0 has a pod of its own:
//! the replicated job `master`, one job of one pod with the Master's
//! template and restart policy, and `worker`, a job of one pod for each
//! Worker, `<job>-worker-<j>-0`. A pod's node rank is then its job's global
//! index (0 the Master's, `j + 1` worker job `j`'s), which JobSet writes on
//! every pod ([`crate::cluster::jobset::Layout`]); rank 0 is at
//! `<job>-master-0-0.<job>`.
//!
//! What JobSet adds to the Job:
//!
//! - `failurePolicy.maxRestarts` (`policy.groupRestarts`): a failed job
//!   (its first failed pod fails it, as on target `job`) makes JobSet delete
//!   every pod and recreate the job, all ranks meeting at a new rendezvous;
//!   without it, the first failure fails the JobSet. No rules: every
//!   failure counts (`failure_policy.go`, the default `RestartJobSet`).
//! - the success policy is JobSet's default, every job succeeds: written out
//!   so the object says what it does.
//! - `network`: JobSet's headless Service, publishing pods that are not yet
//!   ready (ranks must reach pod 0 while they start), written out as its
//!   webhook would default it.
//! - the JobSet carries the Job's time to live and suspension (JobSet sets
//!   its jobs' `suspend` from its own), the Kueue labels (Kueue admits the
//!   JobSet as one workload, every pod at once), and exclusive placement
//!   (`scheduling.exclusiveTopology`): JobSet's annotation, copied onto the
//!   job and its pods, which JobSet's pod webhook turns into affinities that
//!   keep the job's pods in one topology domain and other jobs out of it.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1 as batch;
use serde::Serialize;

use super::job::{Pods, Standalone};
use super::{Object, Resource, metadata, own_pods};
use crate::cluster::jobset::{API_VERSION, EXCLUSIVE_TOPOLOGY, KIND, Layout, MASTER, NODE, WORKER};
use crate::model::Model;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    #[serde(skip_serializing_if = "Option::is_none")]
    failure_policy: Option<FailurePolicy>,
    network: Network,
    replicated_jobs: Vec<ReplicatedJob>,
    success_policy: SuccessPolicy,
    #[serde(skip_serializing_if = "Option::is_none")]
    suspend: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl_seconds_after_finished: Option<i32>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FailurePolicy {
    max_restarts: i32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Network {
    #[serde(rename = "enableDNSHostnames")]
    enable_dns_hostnames: bool,
    publish_not_ready_addresses: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReplicatedJob {
    name: &'static str,
    replicas: i32,
    template: JobTemplate,
}

#[derive(Serialize)]
struct JobTemplate {
    spec: batch::JobSpec,
}

#[derive(Serialize)]
struct SuccessPolicy {
    operator: &'static str,
}

/// Labels that select the rank-0 pod: pod 0 of job 0 of the `node`
/// replicated job, or of the `master` one.
pub fn rank0_selector(model: &Model) -> BTreeMap<String, String> {
    let mut selector = own_pods(model);
    for (key, value) in Layout::of(model.master.is_some()).rank0_labels() {
        selector.insert(key.to_owned(), value.to_owned());
    }
    selector
}

/// The replicated jobs of the [`Layout`]: `node`, one Indexed Job of every
/// node; or with a Master apart `master`, one job of its one pod, and
/// `worker`, a job of one pod for each Worker.
fn replicated_jobs(model: &Model) -> Vec<ReplicatedJob> {
    let job = |name, replicas, pods| ReplicatedJob {
        name,
        replicas,
        template: JobTemplate {
            spec: super::job::spec(model, Standalone::InJobSet, pods),
        },
    };
    match &model.master {
        None => vec![job(NODE, 1, Pods::Every)],
        Some(own) => vec![
            job(MASTER, 1, Pods::Master(own)),
            job(
                WORKER,
                super::job::i32_of(model.nodes.max().saturating_sub(1)),
                Pods::Worker,
            ),
        ],
    }
}

pub(super) fn render(model: &Model) -> Object {
    let mut meta = metadata(model, &model.name, &model.job_labels);
    if let Some(key) = &model.scheduling.exclusive_topology {
        meta.annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(EXCLUSIVE_TOPOLOGY.to_owned(), key.clone());
    }
    let p = &model.policy;
    let jobset = Resource {
        api_version: API_VERSION,
        kind: KIND,
        metadata: meta,
        spec: Spec {
            failure_policy: p.group_restarts.map(|n| FailurePolicy {
                max_restarts: super::job::i32_of(n),
            }),
            network: Network {
                enable_dns_hostnames: true,
                publish_not_ready_addresses: true,
            },
            replicated_jobs: replicated_jobs(model),
            success_policy: SuccessPolicy { operator: "All" },
            suspend: p.suspend.then_some(true),
            ttl_seconds_after_finished: p
                .ttl_seconds_after_finished
                .map(|s| i32::try_from(s).unwrap_or(i32::MAX)),
        },
    };
    Object::new(KIND, &model.name, &jobset)
}
