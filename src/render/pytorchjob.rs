//! `kubeflow.org/v1 PyTorchJob` for the Kubeflow Training Operator (v1.7 to v1.9).
//!
//! The operator's webhook wants a container named `pytorch` in every replica
//! and a `Master` with `replicas: 1` written out; it names pods and their
//! Services `<name>-master-0` and `<name>-worker-<i>`, labels them
//! `training.kubeflow.org/job-name`, `replica-type` (lowercase) and
//! `replica-index` on every version, and from v1.8.0 marks worker 0 of a job
//! without a Master with `training.kubeflow.org/job-role: master` (v1.7.0
//! marks only a Master: `IsMasterRole` in
//! `pkg/controller.v1/pytorch/pytorchjob_controller.go`). It injects
//! `PET_NNODES`, `PET_NPROC_PER_NODE`, `PET_NODE_RANK`, `PET_MASTER_ADDR` and
//! `PET_MASTER_PORT` (and `PET_RDZV_*` when elastic), from which torchrun
//! takes its topology.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::pod::{self, PodShape, Role};
use super::{Object, metadata};
use crate::cluster::pytorchjob::{
    API_VERSION, CONTAINER, KIND, LABEL_REPLICA_INDEX, LABEL_REPLICA_TYPE, PORT, PORT_NAME,
};
use crate::cluster::torchrun::LOCAL_ADDR_ENV;
use crate::model::{Model, Nodes};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    #[serde(skip_serializing_if = "RunPolicy::is_empty")]
    run_policy: RunPolicy,
    #[serde(skip_serializing_if = "Option::is_none")]
    elastic_policy: Option<ElasticPolicy>,
    /// Always a string: `"8"`, `"auto"`, `"cpu"`.
    nproc_per_node: String,
    pytorch_replica_specs: BTreeMap<&'static str, ReplicaSpec>,
}

#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct RunPolicy {
    #[serde(skip_serializing_if = "Option::is_none")]
    clean_pod_policy: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl_seconds_after_finished: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    active_deadline_seconds: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    backoff_limit: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    suspend: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scheduling_policy: Option<SchedulingPolicy>,
}

impl RunPolicy {
    fn is_empty(&self) -> bool {
        self.clean_pod_policy.is_none()
            && self.ttl_seconds_after_finished.is_none()
            && self.active_deadline_seconds.is_none()
            && self.backoff_limit.is_none()
            && self.suspend.is_none()
            && self.scheduling_policy.is_none()
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SchedulingPolicy {
    #[serde(skip_serializing_if = "Option::is_none")]
    min_available: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    queue: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    priority_class: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ElasticPolicy {
    min_replicas: u32,
    max_replicas: u32,
    rdzv_backend: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    rdzv_host: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rdzv_port: Option<u16>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    rdzv_conf: Vec<RdzvConf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_restarts: Option<u32>,
}

#[derive(Serialize)]
struct RdzvConf {
    key: String,
    value: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReplicaSpec {
    replicas: u32,
    restart_policy: String,
    // The template is moved in after the job is serialised (see `render`).
}

/// Labels that select the rank-0 pod: the Master, or worker 0 of an elastic
/// job, by the replica type and index every supported operator version
/// (v1.7.0–v1.9.4, `pkg/controller.v1/common/pod.go` `createNewPod`) puts on
/// its pods. Not `job-role: master`, which v1.7.0 gives a Master only, so
/// that on an elastic job it would select nothing.
pub fn rank0_selector(model: &Model) -> BTreeMap<String, String> {
    let mut selector = super::own_pods(model);
    let kind = if model.elastic.is_some() {
        "worker"
    } else {
        "master"
    };
    selector.insert(LABEL_REPLICA_TYPE.to_owned(), kind.to_owned());
    selector.insert(LABEL_REPLICA_INDEX.to_owned(), "0".to_owned());
    selector
}

pub(super) fn render(model: &Model) -> Object {
    let shape = PodShape {
        container: CONTAINER,
        fixed_ports: &[(PORT_NAME, i32::from(PORT))],
        job_selector: super::own_pods(model),
    };
    let replica = |replicas: u32| ReplicaSpec {
        replicas,
        restart_policy: model.policy.restart_policy.clone(),
    };
    let mut replica_specs = BTreeMap::new();
    match model.nodes {
        Nodes::Fixed(n) => {
            let mut master = replica(1);
            if let Some(own) = &model.master {
                master.restart_policy.clone_from(&own.restart_policy);
            }
            replica_specs.insert("Master", master);
            if n > 1 {
                replica_specs.insert("Worker", replica(n - 1));
            }
        }
        // Elastic jobs have workers only; start as many as the spec says
        // (by default all that are allowed) and let rendezvous admit whoever
        // arrives between min and max.
        Nodes::Elastic { max, .. } => {
            let start = model.elastic.as_ref().map_or(max, |e| e.start);
            replica_specs.insert("Worker", replica(start));
        }
    }
    let s = &model.scheduling;
    let p = &model.policy;
    let run_policy = RunPolicy {
        clean_pod_policy: p.clean_pod_policy.clone(),
        ttl_seconds_after_finished: p.ttl_seconds_after_finished,
        active_deadline_seconds: p.active_deadline_seconds,
        backoff_limit: p.backoff_limit,
        suspend: p.suspend.then_some(true),
        // The operator reads schedulingPolicy only when it runs with gang
        // scheduling, for the PodGroup it then creates for every job: its
        // minMember, its Volcano queue (else `default`) and priority
        // (kubeflow/trainer v1.9.4, pkg/controller.v1/common/job.go). The
        // Volcano queue is never the Kueue LocalQueue: Volcano's PodGroup
        // webhook rejects a queue that does not exist (volcano-sh/volcano
        // v1.10.0+, pkg/webhooks/admission/podgroups/validate).
        scheduling_policy: (s.gang || s.volcano_queue.is_some()).then(|| SchedulingPolicy {
            min_available: s.gang.then(|| model.nodes.min()),
            queue: s.volcano_queue.clone(),
            priority_class: s.priority_class_name.clone(),
        }),
    };
    let elastic_policy = model.elastic.as_ref().map(|e| ElasticPolicy {
        min_replicas: e.min,
        max_replicas: e.max,
        rdzv_backend: e.rdzv_backend.clone(),
        // Without a host and port the operator points PET_RDZV_ENDPOINT at
        // `<name>-worker-0` on the Worker's `pytorchjob-port` (kubeflow/trainer
        // v1.9.4, pkg/controller.v1/pytorch/elastic.go).
        rdzv_host: e.rdzv_endpoint.as_ref().map(|(host, _)| host.clone()),
        rdzv_port: e.rdzv_endpoint.as_ref().map(|(_, port)| *port),
        rdzv_conf: e
            .rdzv_conf
            .iter()
            .map(|(key, value)| RdzvConf {
                key: key.clone(),
                value: value.clone(),
            })
            .collect(),
        max_restarts: e.max_restarts,
    });
    let job = super::Resource {
        api_version: API_VERSION,
        kind: KIND,
        metadata: metadata(model, &model.name, &model.job_labels),
        spec: Spec {
            run_policy,
            elastic_policy,
            nproc_per_node: model.nproc_per_node.text(),
            pytorch_replica_specs: replica_specs,
        },
    };
    let mut object = Object::new(KIND, &model.name, &job);
    // Master and Worker run the same pod, unless `[master]` sets the
    // Master's apart: the operator makes each replica type's pods from that
    // replica's own template and restart policy (kubeflow/trainer v1.7.0 and
    // v1.9.2, `pkg/controller.v1/common/pod.go` `createNewPod`:
    // `spec.Template.DeepCopy()`, then `core.SetRestartPolicy`). Its template goes in as JSON, made once and moved into
    // place: serialising it inside the job would copy it again, and a pod
    // with thousands of volumes is large.
    let mut template = replica_template(model, Role::of(model), &shape);
    let master = model
        .master
        .as_ref()
        .map(|own| replica_template(model, Role::master(own), &shape));
    if let Some(specs) = object
        .value
        .pointer_mut("/spec/pytorchReplicaSpecs")
        .and_then(Value::as_object_mut)
    {
        let workers = specs.contains_key("Worker");
        if let Some(spec) = specs.get_mut("Master").and_then(Value::as_object_mut) {
            let own = match master {
                Some(own) => own,
                None if workers => template.clone(),
                None => std::mem::take(&mut template),
            };
            spec.insert("template".to_owned(), own);
        }
        if let Some(spec) = specs.get_mut("Worker").and_then(Value::as_object_mut) {
            spec.insert("template".to_owned(), template);
        }
    }
    object
}

/// One replica's pod template, as JSON.
fn replica_template(model: &Model, role: Role<'_>, shape: &PodShape<'_>) -> Value {
    let mut template = pod::template_as(model, role, shape);
    if model.elastic.is_some()
        && model.pod.host_network
        && let Some(container) = template
            .spec
            .as_mut()
            .and_then(|s| s.containers.first_mut())
    {
        let env = container.env.get_or_insert_with(Vec::new);
        if !env.iter().any(|e| e.name == LOCAL_ADDR_ENV) {
            env.push(pod::field_var(LOCAL_ADDR_ENV, "status.podIP"));
        }
    }
    serde_json::to_value(template).expect("a pod template serialises to JSON")
}
