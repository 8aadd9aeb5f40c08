//! The spec's sections about how the job runs on the cluster: elastic
//! training, the run policy, scheduling, and the TrainJob's settings.

use std::collections::BTreeMap;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Duration;

/// Elastic training (with `replicas = "min:max"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Elastic {
    /// Worker pods the job starts with; default the maximum. torchrun's rendezvous admits any number from the minimum to the maximum, so more may join later (by the operator's autoscaling, or a `kubectl` scale).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = i32::MAX))]
    pub start_replicas: Option<u32>,
    /// How many times torchrun restarts the workers before the job fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = i32::MAX))]
    pub max_restarts: Option<u32>,
    /// Rendezvous backend. Default `c10d`, hosted by the first worker; `etcd` and `etcd-v2` need `rdzvEndpoint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rdzv_backend: Option<RdzvBackend>,
    /// `host:port` of the rendezvous server, e.g. an etcd service `etcd.infra:2379`. Default: the first worker, on the Training Operator's port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rdzv_endpoint: Option<String>,
    /// Extra rendezvous settings, e.g. `{ join_timeout = "1200" }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rdzv_conf: Option<BTreeMap<String, String>>,
}

impl Elastic {
    /// `host:port` as a host and a port from 1 to 65535; `None` when it is not one.
    pub fn parse_endpoint(text: &str) -> Option<(String, u16)> {
        let (host, port) = text.rsplit_once(':')?;
        let port: u16 = port.parse().ok().filter(|p| *p > 0)?;
        (!host.is_empty()).then(|| (host.to_owned(), port))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RdzvBackend {
    C10d,
    Etcd,
    EtcdV2,
}

/// Failure, completion and time limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Policy {
    /// When a failed pod is restarted: `Never`, `OnFailure`, `Always`, or `ExitCode` (retryable exit codes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<RestartPolicy>,
    /// Retries before the job is marked failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = i32::MAX))]
    pub backoff_limit: Option<u32>,
    /// Delete the finished job after this long: seconds or `"1h"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_after_finished: Option<Duration>,
    /// Fail the job if it runs longer than this: seconds or `"24h"`. On target `jobset` it is each Job's deadline: with `groupRestarts`, a Job past it fails and the restart gives every attempt a fresh one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_deadline: Option<Duration>,
    /// Which pods to delete when the job finishes: `None`, `Running`, `All`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clean_pod_policy: Option<CleanPodPolicy>,
    /// Target `jobset`: after a failure, stop every pod and start the whole job again, up to this many times (JobSet's `failurePolicy.maxRestarts`). Every rank starts afresh and meets the others at a new rendezvous, so resume from your own checkpoints. Unset: the first failure fails the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = i32::MAX))]
    pub group_restarts: Option<u32>,
    /// Create the job suspended; it starts when unsuspended (or admitted by Kueue).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
    /// How long torchrun on each pod waits for every pod to join its static rendezvous before it gives up: seconds or `"30m"`. On targets `job` and `jobset`, where one pod that gives up fails the run, 30 minutes unless set; elsewhere torchrun's own 10 minutes unless set. Not for an elastic job (`elastic.rdzvConf` `join_timeout`) or a `command` (pass `--rdzv_conf=timeout=SECONDS` to your torchrun).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join_timeout: Option<Duration>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum RestartPolicy {
    Never,
    OnFailure,
    Always,
    ExitCode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum CleanPodPolicy {
    None,
    Running,
    All,
}

/// Scheduling: queues, priorities, placement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scheduling {
    /// Kueue LocalQueue (in the job's namespace); becomes the `kueue.x-k8s.io/queue-name` label on the job object. Not a Volcano queue: see `volcanoQueue`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// Kueue WorkloadPriorityClass of the job; becomes the `kueue.x-k8s.io/priority-class` label on the job object. It orders and preempts workloads in Kueue's queues; it does not set the pods' priority (that is `priorityClassName`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload_priority_class: Option<String>,
    /// Volcano Queue (a cluster-scoped object that must exist and be open) for the PodGroup of a PyTorchJob: `runPolicy.schedulingPolicy.queue`. Used only when the Training Operator runs with `--gang-scheduler-name=volcano`, which otherwise puts the PodGroup in Volcano's `default` queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volcano_queue: Option<String>,
    /// PriorityClass of the pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<String>,
    /// Scheduler of the pods, e.g. `volcano`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler_name: Option<String>,
    /// All-or-nothing scheduling: no pod starts until all can (`runPolicy.schedulingPolicy.minAvailable` = all replicas, or the minimum of an elastic range). Takes effect only when the Training Operator runs with gang scheduling (`--gang-scheduler-name=volcano` or `scheduler-plugins`), which then gang-schedules every job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gang: Option<bool>,
    /// Only nodes with these labels, e.g. `{ "nvidia.com/gpu.product" = "NVIDIA-H100-80GB-HBM3" }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<BTreeMap<String, String>>,
    /// Taints the pods tolerate, e.g. `{ key = "nvidia.com/gpu", operator = "Exists", effect = "NoSchedule" }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerations: Option<Vec<Toleration>>,
    /// Target `jobset`: a node label that divides the cluster into domains, e.g. `cloud.google.com/gke-nodepool` or a rack label; all the job's pods run in one domain that no other JobSet's pods share (JobSet's exclusive placement, the `alpha.jobset.sigs.k8s.io/exclusive-topology` annotation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclusive_topology: Option<String>,
    /// At most one pod of this job per node (pod anti-affinity on the hostname).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread_across_nodes: Option<bool>,
    /// ServiceAccount the pods run as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// Secrets used to pull the image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_secrets: Option<Vec<String>>,
}

/// A Kubernetes toleration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Toleration {
    /// Taint key; empty with `operator = "Exists"` tolerates everything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// `Equal` (default) or `Exists`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<TolerationOperator>,
    /// Taint value, with `operator = "Equal"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`; empty matches all effects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<TaintEffect>,
    /// With `NoExecute`: how long the pod stays bound after the taint appears.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = i64::MIN, max = i64::MAX))]
    pub toleration_seconds: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum TolerationOperator {
    Equal,
    Exists,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum TaintEffect {
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

/// Settings for Kubeflow Trainer v2.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrainJobOptions {
    /// Name of the training runtime to use: a DNS-1123 subdomain. Default `torch-distributed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// Kind of the runtime: `ClusterTrainingRuntime` (cluster-wide, the default) or `TrainingRuntime` (in the TrainJob's namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_kind: Option<RuntimeKind>,
    /// Kubeflow Trainer release of the cluster: `v2.3` (the default, the newest this trainc knows; for a later release, `v2.3` and `trainc verify --crd` with its CRD), `v2.2` (both customise pods with runtimePatches), `v2.1` (podTemplateOverrides) or `v2.0` (podSpecOverrides).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_level: Option<ApiLevel>,
    /// Jobs that download the dataset and the pre-trained model before training (`spec.initializer`); the runtime must have `dataset-initializer` and `model-initializer` jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initializer: Option<Initializers>,
    /// The cluster's runtimes, relative to this file: the output of `kubectl get clustertrainingruntimes,trainingruntimes -A -o yaml`. The TrainJob is checked against the runtime it names there (else against what its Trainer release ships). `--runtimes FILE` wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtimes_file: Option<String>,
    /// Write a TrainingRuntime named after the job, in its namespace: `runtime` (Kubeflow's or the runtimes file's) with the pod the spec describes in its `node` job, and run the TrainJob on it. It carries what a TrainJob's patches cannot: host network and DNS policy, init containers and sidecars, priority class and scheduler, image pull policy, envFrom, working directory, security contexts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_runtime: Option<bool>,
}

/// The TrainJob's initializers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Initializers {
    /// Downloads the dataset, in the runtime's `dataset-initializer` job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<Initializer>,
    /// Downloads the pre-trained model, in the runtime's `model-initializer` job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Initializer>,
}

/// One initializer: where to download from, with what settings and credentials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Initializer {
    /// `scheme://path` of what to download, e.g. `hf://meta-llama/Llama-3.2-1B-Instruct`, `s3://bucket/data`.
    pub storage_uri: String,
    /// Environment variables of the initializer container, as in `[env]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<IndexMap<String, super::EnvValue>>,
    /// Name of a Secret (in the job's namespace) whose keys become the initializer's environment: the credentials, e.g. `ACCESS_TOKEN` for Hugging Face.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

// The runtime kinds Trainer's TrainJob webhook resolves `runtimeRef` to; any
// other is "unsupported runtime" (kubeflow/trainer v2.0.0–v2.3.0,
// `pkg/webhooks/trainjob_webhook.go`, `pkg/runtime/runtime.go`
// `RuntimeRefToRuntimeRegistryKey`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum RuntimeKind {
    ClusterTrainingRuntime,
    TrainingRuntime,
}

impl RuntimeKind {
    /// The kind, as Kubernetes spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            RuntimeKind::ClusterTrainingRuntime => "ClusterTrainingRuntime",
            RuntimeKind::TrainingRuntime => "TrainingRuntime",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ApiLevel {
    #[serde(rename = "v2.3")]
    V2_3,
    #[serde(rename = "v2.2")]
    V2_2,
    #[serde(rename = "v2.1")]
    V2_1,
    #[serde(rename = "v2.0")]
    V2_0,
}

impl ApiLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            ApiLevel::V2_3 => "v2.3",
            ApiLevel::V2_2 => "v2.2",
            ApiLevel::V2_1 => "v2.1",
            ApiLevel::V2_0 => "v2.0",
        }
    }

    /// Whether a TrainJob customises the runtime's pods with `runtimePatches`
    /// (v2.2 and later), rather than v2.1's `podTemplateOverrides` or v2.0's
    /// `podSpecOverrides`.
    pub fn has_runtime_patches(self) -> bool {
        matches!(self, ApiLevel::V2_2 | ApiLevel::V2_3)
    }

    /// The Trainer release whose runtimes and rules this level stands for.
    pub fn release(self) -> crate::trainer::Release {
        use crate::trainer::Release;
        match self {
            ApiLevel::V2_3 => Release::V2_3,
            ApiLevel::V2_2 => Release::V2_2,
            ApiLevel::V2_1 => Release::V2_1,
            ApiLevel::V2_0 => Release::V2_0,
        }
    }
}
