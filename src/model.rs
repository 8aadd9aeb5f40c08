//! The resolved model: what the renderers read. Every default is applied and
//! every decision made (names, the Master/Worker split, processes per node,
//! which volumes become claims), so a renderer only translates.
//!
//! `Option` here never means "not decided yet": it means "leave it to the
//! cluster", and a renderer writes nothing for it (no namespace, no deadline).
//! [`crate::resolve`] builds this from a validated spec.

use std::collections::BTreeMap;

use crate::code::Code;

use crate::spec::{ApiLevel, NProc, Target};

#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The job's name; every object name derives from it.
    pub name: String,
    pub namespace: Option<String>,
    pub target: Target,
    pub container: Container,
    pub nodes: Nodes,
    pub nproc_per_node: NProc,
    /// The Master pod where `[master]` sets it apart from the Workers, on a
    /// PyTorchJob with a Master; `None`: every pod is alike.
    pub master: Option<Master>,
    /// Total processes, when both the node count and processes per node are known.
    pub world_size: Option<u32>,
    /// Present exactly when `nodes` is elastic.
    pub elastic: Option<Elastic>,
    pub policy: Policy,
    pub scheduling: Scheduling,
    /// Mounted into the training container, in the order written.
    pub volumes: Vec<Volume>,
    /// New PersistentVolumeClaims, one per volume with a `size`.
    pub claims: Vec<Claim>,
    /// Size of the memory-backed `/dev/shm`, when asked for.
    pub shm: Option<String>,
    /// Ports exposed on the rank-0 pod through the Service `ports_service`.
    pub ports: Vec<Port>,
    /// Name of the Service for `ports` (see [`crate::derived`]).
    pub ports_service: String,
    /// On every object and every pod template.
    pub labels: BTreeMap<String, String>,
    /// On every object.
    pub annotations: BTreeMap<String, String>,
    /// On every pod template: the annotations plus trainc's pod defaults.
    pub pod_annotations: BTreeMap<String, String>,
    /// Labels of the job object alone: the common labels plus Kueue's queue
    /// and workload priority class.
    pub job_labels: BTreeMap<String, String>,
    pub trainjob: TrainJob,
    /// Pod-level settings beyond scheduling.
    pub pod: Pod,
    /// Local code: the ConfigMap that carries it, mounted at [`Code::MOUNT`].
    pub code: Option<Code>,
    /// The spec's `[podTemplate]`, merged into every pod template last; its
    /// training container is [`crate::spec::defaults::TRAINER_CONTAINER`].
    pub pod_template: Option<serde_json::Value>,
}

/// The Master of a PyTorchJob, where it differs from the Workers: the pod
/// of [`Model::container`] and [`Model::shm`] with these in their place.
#[derive(Debug, Clone, PartialEq)]
pub struct Master {
    /// The Workers' container with the Master's image, resources and
    /// processes (torchrun's `--nproc_per_node`).
    pub container: Container,
    pub shm: Option<String>,
    pub nproc: NProc,
    pub restart_policy: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pod {
    pub host_network: bool,
    pub dns_policy: Option<String>,
    pub fs_group: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvFrom {
    /// `true`: a Secret; `false`: a ConfigMap.
    pub secret: bool,
    pub name: String,
    pub prefix: Option<String>,
    pub optional: Option<bool>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Container {
    /// `None` only on a TrainJob that runs its runtime's image.
    pub image: Option<String>,
    pub command: Vec<String>,
    /// Whether `command` is the spec's own, run as written (no torchrun of
    /// trainc's wraps it).
    pub verbatim: bool,
    pub args: Vec<String>,
    pub working_dir: Option<String>,
    pub env: Vec<EnvVar>,
    pub env_from: Vec<EnvFrom>,
    pub image_pull_policy: Option<String>,
    /// The training container's security context, as Kubernetes spells
    /// it; `None` when the spec sets none of its fields.
    pub security: Option<k8s_openapi::api::core::v1::SecurityContext>,
    /// Resource name to quantity; empty when the spec names no resources.
    pub requests: BTreeMap<String, String>,
    pub limits: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvVar {
    pub name: String,
    pub value: EnvValue,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvValue {
    Literal(String),
    Key(KeyRef),
    Field(String),
}

/// One key of a Secret (`secret`) or of a ConfigMap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRef {
    pub secret: bool,
    pub name: String,
    pub key: String,
    pub optional: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nodes {
    Fixed(u32),
    Elastic { min: u32, max: u32 },
}

impl Nodes {
    /// The most pods that can run at once.
    pub fn max(self) -> u32 {
        match self {
            Nodes::Fixed(n) => n,
            Nodes::Elastic { max, .. } => max,
        }
    }

    /// The fewest pods the job runs with.
    pub fn min(self) -> u32 {
        match self {
            Nodes::Fixed(n) => n,
            Nodes::Elastic { min, .. } => min,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Elastic {
    pub min: u32,
    pub max: u32,
    /// The Worker pods the job starts with (`replicas` of the Worker).
    pub start: u32,
    pub max_restarts: Option<u32>,
    pub rdzv_backend: String,
    /// Host and port of the rendezvous server; `None`: the first worker.
    pub rdzv_endpoint: Option<(String, u16)>,
    pub rdzv_conf: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(clippy::struct_field_names)] // named as Kubernetes spells the fields
pub struct Policy {
    pub restart_policy: String,
    pub backoff_limit: Option<u32>,
    pub ttl_seconds_after_finished: Option<u64>,
    pub active_deadline_seconds: Option<u64>,
    pub clean_pod_policy: Option<String>,
    pub suspend: bool,
    /// How many times JobSet restarts the whole job (target `jobset`).
    pub group_restarts: Option<u32>,
    /// What torchrun is told to wait for every pod to join, when trainc
    /// launches it and says so (`--rdzv_conf=timeout=`).
    pub join_timeout_seconds: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scheduling {
    /// Kueue LocalQueue.
    pub queue: Option<String>,
    /// Volcano Queue of the PyTorchJob's PodGroup.
    pub volcano_queue: Option<String>,
    pub priority_class_name: Option<String>,
    pub scheduler_name: Option<String>,
    /// All-or-nothing: the job's pods start together or not at all.
    pub gang: bool,
    pub node_selector: BTreeMap<String, String>,
    pub tolerations: Vec<Toleration>,
    pub spread_across_nodes: bool,
    /// The node label whose domains JobSet gives a job each (target `jobset`).
    pub exclusive_topology: Option<String>,
    pub service_account_name: Option<String>,
    pub image_pull_secrets: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(clippy::struct_field_names)] // named as Kubernetes spells the fields
pub struct Toleration {
    pub key: Option<String>,
    pub operator: Option<String>,
    pub value: Option<String>,
    pub effect: Option<String>,
    pub toleration_seconds: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Volume {
    pub name: String,
    pub mount_path: String,
    pub read_only: bool,
    pub sub_path: Option<String>,
    pub source: VolumeSource,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VolumeSource {
    /// A claim: one trainc creates (see [`Model::claims`]) or an existing one.
    Claim(String),
    EmptyDir {
        size_limit: Option<String>,
    },
    ConfigMap(String),
    Secret(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub name: String,
    pub size: String,
    pub access_modes: Vec<String>,
    pub storage_class: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Port {
    pub name: String,
    pub port: u16,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrainJob {
    /// Name of the runtime.
    pub runtime: String,
    /// `ClusterTrainingRuntime` or `TrainingRuntime`.
    pub runtime_kind: String,
    pub api_level: ApiLevel,
    pub dataset_initializer: Option<Initializer>,
    pub model_initializer: Option<Initializer>,
    /// The runtime and what trainc knows of it (for describe); with
    /// `write_runtime`, the base of the one trainc writes.
    pub bound: Option<crate::trainer::bind::Bound>,
    /// `[trainjob] writeRuntime`: trainc writes the TrainingRuntime the
    /// TrainJob runs on (`runtime`, named after the job), from `bound`.
    pub write_runtime: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Initializer {
    pub storage_uri: String,
    pub env: Vec<EnvVar>,
    pub secret: Option<String>,
}
