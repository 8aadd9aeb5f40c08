//! `batch/v1 Job` in Indexed completion mode and the headless `v1 Service`
//! that names its pods, for `target = "job"`: distributed PyTorch on any
//! Kubernetes 1.28 or later, with no operator installed.
//!
//! What Kubernetes does with them (kubernetes `pkg/controller/job/`,
//! `job_controller.go` `manageJob` and `indexed_job_utils.go`):
//!
//! - The Job controller creates pod `i` for completion index `i`, with the
//!   hostname `<job>-<i>`, the annotation (and, from 1.28, the label)
//!   `batch.kubernetes.io/job-completion-index: "i"`, and the variable
//!   `JOB_COMPLETION_INDEX=i` in every container. With the pod's `subdomain`
//!   set to the Service, pod `i` is `<job>-<i>.<job>` in the namespace's DNS.
//! - The Service publishes pods that are not ready yet
//!   (`publishNotReadyAddresses`): ranks must reach pod 0 while they start,
//!   long before any of them could pass a readiness check.
//! - torchrun on each pod is given the whole topology by trainc (see
//!   [`crate::resolve::job_launch`]); a `command` gets the variables a script
//!   reads instead ([`command_env`]).
//!
//! Failure: a rank that fails cannot rejoin the others (the static
//! rendezvous has closed, and they wait in a collective until NCCL's
//! timeout), so one failed pod fails the Job, and the Job controller then
//! stops every other pod at once:
//!
//! - `restartPolicy: Never` and `backoffLimit: 0` (the spec may raise the
//!   limit on a single-node job only; see `validate::rules::target`).
//! - `podFailurePolicy` fails the Job at once when the training container
//!   exits non-zero, whatever the limit. Its other effect matters as much:
//!   with a pod failure policy, a replacement pod is created only once the
//!   pod it replaces has terminated (`onlyReplaceFailedPods`), so two pods
//!   never hold one hostname, `<job>-<i>`, at the same time.
//! - Not `backoffLimitPerIndex`: it retries one index while the others keep
//!   running, which is what a distributed run must not do, and before 1.29 it
//!   is behind a feature gate that is off, so the API server would drop it.
//! - A Job suspended (by Kueue, or `policy.suspend`) is not failed by it: the
//!   controller removes its tracking finalizer from the pods it deletes
//!   before deleting them, so they are never counted (`deleteJobPods`).

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1 as batch;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::pod::{self, PodShape, Role};
use super::{Object, metadata, own_pods};
use crate::cluster::job::{
    COMPLETION_INDEX_ENV, COMPLETION_INDEX_FIELD, CONTAINER, KIND, LABEL_COMPLETION_INDEX,
    PORT_NAME, Told,
};
use crate::cluster::jobset::{GLOBAL_INDEX_ENV, GLOBAL_INDEX_FIELD, Layout, NAME_ENV, NAME_FIELD};
use crate::model::{Master, Model};
use crate::spec::defaults::JOB_RENDEZVOUS_PORT;

/// Labels that select pod 0, the rank-0 pod.
pub fn rank0_selector(model: &Model) -> BTreeMap<String, String> {
    let mut selector = own_pods(model);
    selector.insert(LABEL_COMPLETION_INDEX.to_owned(), "0".to_owned());
    selector
}

/// The headless Service that gives pod `i` its name `<job>-<i>.<job>`.
pub(super) fn service(model: &Model) -> Object {
    let service = core::Service {
        metadata: metadata(model, &model.name, &model.labels),
        spec: Some(core::ServiceSpec {
            cluster_ip: Some("None".to_owned()),
            publish_not_ready_addresses: Some(true),
            selector: Some(own_pods(model)),
            ports: Some(vec![core::ServicePort {
                name: Some(PORT_NAME.to_owned()),
                port: i32::from(JOB_RENDEZVOUS_PORT),
                target_port: Some(IntOrString::Int(i32::from(JOB_RENDEZVOUS_PORT))),
                protocol: Some("TCP".to_owned()),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        status: None,
    };
    Object::new("Service", &model.name, &service)
}

pub(super) fn render(model: &Model) -> Object {
    let job = batch::Job {
        metadata: metadata(model, &model.name, &model.job_labels),
        spec: Some(spec(model, Standalone::Yes, Pods::Every)),
        status: None,
    };
    Object::new(KIND, &model.name, &job)
}

/// Whether the Job stands alone, or is a JobSet's job template (the JobSet
/// holds the subdomain, suspension and time to live).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Standalone {
    Yes,
    InJobSet,
}

/// Which pods a Job runs: every node, or in a JobSet with a Master
/// ([`Layout::MasterWorkers`]) the Master's one pod, with its own template
/// and restart policy, or one Worker's.
#[derive(Clone, Copy)]
pub(super) enum Pods<'a> {
    Every,
    Master(&'a Master),
    Worker,
}

/// The Indexed Job of `pods`: its pod template and failure policy.
pub(super) fn spec(model: &Model, standalone: Standalone, pods: Pods<'_>) -> batch::JobSpec {
    let alone = standalone == Standalone::Yes;
    let shape = PodShape {
        container: CONTAINER,
        // The Service reaches the rendezvous port by number; declared on the
        // host network it would become a hostPort (see `pod::container`).
        fixed_ports: if model.pod.host_network {
            &[]
        } else {
            &[(PORT_NAME, i32::from(JOB_RENDEZVOUS_PORT))]
        },
        job_selector: own_pods(model),
    };
    let (role, restart_policy) = match pods {
        Pods::Master(own) => (Role::master(own), &own.restart_policy),
        Pods::Every | Pods::Worker => (Role::of(model), &model.policy.restart_policy),
    };
    let layout = Layout::of(model.master.is_some());
    let mut template = pod::template_as(model, role, &shape);
    if let Some(spec) = template.spec.as_mut() {
        // JobSet sets its jobs' subdomain itself (`constructJob`).
        if alone {
            spec.subdomain = Some(model.name.clone());
        }
        spec.restart_policy = Some(restart_policy.clone());
        // trainc's variables come before `[env]`, so that a `$(RANK)` or
        // `$(JOB_COMPLETION_INDEX)` in a value of `[env]` expands: the
        // kubelet expands only variables declared earlier. The Job
        // controller adds `JOB_COMPLETION_INDEX` only to a container that
        // lacks it, at the end (kubernetes `pkg/controller/job/
        // indexed_job_utils.go` `addCompletionIndexEnvVariable`).
        if let Some(container) = spec.containers.first_mut() {
            let mut env = vec![index_var(COMPLETION_INDEX_ENV)];
            if !alone {
                if layout == Layout::MasterWorkers {
                    env.push(pod::field_var(GLOBAL_INDEX_ENV, GLOBAL_INDEX_FIELD));
                }
                env.push(pod::field_var(NAME_ENV, NAME_FIELD));
            }
            if model.container.verbatim {
                env.extend(command_env(model));
            }
            env.extend(container.env.take().unwrap_or_default());
            container.env = Some(env);
        }
    }
    let nodes = match pods {
        Pods::Every => i32_of(model.nodes.max()),
        Pods::Master(_) | Pods::Worker => 1,
    };
    let p = &model.policy;
    batch::JobSpec {
        completion_mode: Some("Indexed".to_owned()),
        completions: Some(nodes),
        parallelism: Some(nodes),
        backoff_limit: p.backoff_limit.map(i32_of),
        pod_failure_policy: Some(batch::PodFailurePolicy {
            rules: vec![batch::PodFailurePolicyRule {
                action: "FailJob".to_owned(),
                on_exit_codes: Some(batch::PodFailurePolicyOnExitCodesRequirement {
                    container_name: Some(CONTAINER.to_owned()),
                    operator: "NotIn".to_owned(),
                    values: vec![0],
                }),
                on_pod_conditions: None,
            }],
        }),
        active_deadline_seconds: p
            .active_deadline_seconds
            .map(|s| i64::try_from(s).unwrap_or(i64::MAX)),
        ttl_seconds_after_finished: p
            .ttl_seconds_after_finished
            .filter(|_| alone)
            .map(|s| i32::try_from(s).unwrap_or(i32::MAX)),
        suspend: (alone && p.suspend).then_some(true),
        template,
        ..Default::default()
    }
}

/// Validation keeps counts within an int32.
pub(super) fn i32_of(n: u32) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// A variable holding the pod's completion index.
fn index_var(name: &str) -> core::EnvVar {
    pod::field_var(name, COMPLETION_INDEX_FIELD)
}

/// For a `command`: the variables a script or a launcher of its own reads
/// ([`crate::cluster::job::command_env`]).
pub fn command_env(model: &Model) -> Vec<core::EnvVar> {
    let rendezvous = crate::derived::rendezvous(&model.name, model.target, model.master.is_some());
    let told = crate::cluster::job::command_env(
        &rendezvous.master,
        model.nodes.max(),
        &model.nproc_per_node.text(),
    );
    told.into_iter()
        .map(|(name, told)| match told {
            Told::Value(value) => core::EnvVar {
                name: name.to_owned(),
                value: Some(value),
                value_from: None,
            },
            Told::NodeRank => pod::field_var(name, rendezvous.node_rank_field),
        })
        .collect()
}
