//! The spec as users write it: every field optional except `name` (and `image`,
//! which only a TrainJob on a runtime with one may leave out),
//! camelCase keys, unknown keys rejected.
//!
//! These types are the source of `schemas/trainspec.schema.json` (through
//! schemars: doc comments become descriptions, so keep them user-facing). They
//! carry no defaults and no cross-field logic: defaults live in the resolve
//! stage, cross-field rules in `validate::rules`. Value formats that a JSON
//! Schema can only describe poorly (quantities, durations, names) are plain
//! strings here and checked by the rules, which can say how to fix them.

use std::collections::BTreeMap;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A distributed PyTorch training run, compiled by trainc into Kubernetes objects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(title = "trainc TrainSpec")]
pub struct Spec {
    /// Name of the job: a DNS-1035 label (lowercase letters, digits, `-`; starts with a letter), short enough that the pod and service names the target derives from it stay within 63 characters.
    pub name: String,
    /// Namespace of every generated object. Omit it to let `kubectl apply -n` or kustomize decide.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// What to generate: `pytorchjob` (Kubeflow Training Operator, the default), `trainjob` (Kubeflow Trainer v2), `job` (an Indexed Job and a headless Service, for a cluster without an operator) or `jobset` (a JobSet, for a cluster with the JobSet controller).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    /// Container image that runs the training code, e.g. `ghcr.io/acme/train:1.4`. Pin a tag or digest. Required, except on a TrainJob whose runtime gives its trainer an image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// When the kubelet pulls `image`: `Always`, `IfNotPresent` or `Never`. Default: Kubernetes decides (`Always` for `:latest` or no tag, else `IfNotPresent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<ImagePullPolicy>,
    /// Python script to run under torchrun: `torchrun SCRIPT ARGS`. Exactly one of `script`, `module`, `command`, `imageEntrypoint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// Python module to run under torchrun: `torchrun -m MODULE ARGS`. Exactly one of `script`, `module`, `command`, `imageEntrypoint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    /// Command run verbatim, without torchrun (it must start the distributed processes itself). Exactly one of `script`, `module`, `command`, `imageEntrypoint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// `true`: run the image's own ENTRYPOINT, with `args` in place of its CMD, as `command` runs: without torchrun, so the entrypoint starts the processes itself from the variables the target sets (`MASTER_ADDR`, `WORLD_SIZE`, `RANK` on a PyTorchJob, a Job or a JobSet; torchrun's `PET_*` on every target). `nProcPerNode` is then the count the entrypoint is told, not one trainc starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_entrypoint: Option<bool>,
    /// Local code to run without building an image: the files ship in a ConfigMap and run under torchrun. Replaces `script`, `module` and `command`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<Code>,
    /// Arguments passed after the script, module or command; with `imageEntrypoint`, the image's entrypoint gets them in place of its CMD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// Working directory of the container: an absolute path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    /// Number of pods (nodes), at least 1; or `"min:max"` for an elastic job that runs with any count in that range. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<Replicas>,
    /// Processes per pod: an integer, `"gpu"` (one per GPU), `"auto"` or `"cpu"` (decided by torchrun on the node). Default: the GPU count when `resources.gpus` > 0, else 1. With `command` or `imageEntrypoint`, which start their own processes, it is the count they are told (`PET_NPROC_PER_NODE`, and `WORLD_SIZE` = pods × count on a PyTorchJob, Job or JobSet): 1 for one plain `python` process per pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_proc_per_node: Option<NProcPerNode>,
    /// Compute resources of each pod. Requests equal limits (Guaranteed QoS) unless `[resources.limits]` says otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
    /// The Master pod of a PyTorchJob or a JobSet where it differs from the Workers: `image`, `nProcPerNode`, `[master.resources]` (laid over `[resources]`) and `restartPolicy`. A CPU-only coordinator is `[master.resources] gpus = 0`; a bigger rank 0, `[master.resources] memory = "512Gi"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master: Option<Master>,
    /// Environment variables of the training container, in the order written: a string, or `{ secret, key }`, `{ configMap, key }`, `{ field }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<IndexMap<String, EnvValue>>,
    /// Every key of these Secrets and ConfigMaps as environment variables: `[{ secret = "name" }, { configMap = "name", prefix = "APP_" }]`. `[env]` wins over a key of the same name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_from: Option<Vec<EnvFrom>>,
    /// Security settings of the training container (`capabilities`, `privileged`, `runAsUser`, ...) and of its pod (`fsGroup`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_context: Option<SecurityContext>,
    /// Run the pods in the node's network namespace (RDMA/InfiniBand without a CNI for it). trainc then sets `dnsPolicy = "ClusterFirstWithHostNet"` so the pods still find each other by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_network: Option<bool>,
    /// How the pods resolve names: `ClusterFirst` (the default), `ClusterFirstWithHostNet` (the default with `hostNetwork`), `Default` or `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns_policy: Option<DnsPolicy>,
    /// Volumes keyed by name, each with a `mountPath` and exactly one source: `size` (a new PVC), `claim`, `emptyDir`, `configMap` or `secret`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volumes: Option<IndexMap<String, Volume>>,
    /// Elastic training settings; only with `replicas = "min:max"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elastic: Option<Elastic>,
    /// What happens when pods fail, finish or run too long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<Policy>,
    /// Where and how the pods are scheduled: queues, priorities, node selection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling: Option<Scheduling>,
    /// Container ports exposed on the rank-0 pod through a Service named after the job: port name to port number, e.g. `tensorboard = 6006`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<IndexMap<String, u16>>,
    /// Labels put on every generated object and every pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Annotations put on every generated object and every pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// A fragment of a Kubernetes PodTemplateSpec merged into every pod the job creates: `[podTemplate.metadata]`, `[podTemplate.spec]`, `[[podTemplate.spec.initContainers]]` (a sidecar is one with `restartPolicy = "Always"`: stopped when training ends, where a second entry of `containers` keeps the pod running until it exits). Lists of named things merge by name; the training container is named `trainer`. Fields trainc sets from the spec are set there, not here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_template: Option<PodTemplate>,
    /// Settings for `target = "trainjob"` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trainjob: Option<TrainJobOptions>,
    /// What a warning does: `"report"` (the default: it is said, and the build goes on; as a kustomize plugin, whose stderr kubectl shows only on failure, trainc also puts the warnings on the job in the annotation `trainc.dev/warnings`) or `"error"` (any warning fails `check` and `build`, in every mode, and nothing is written). For CI and GitOps pipelines that must not let a warning pass unseen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Warnings>,
    /// Warnings this spec acknowledges, by code (`["trainc::scheduling::kueue_tolerations"]`): `check` and `build` no longer say them, and `warnings = "error"` does not count them; `describe` still lists them, marked allowed. Only warnings: an error with such a code still fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_warnings: Option<Vec<String>>,
    /// Template values, used in strings as `{{ vars.NAME }}` and overridden with `--set NAME=VALUE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vars: Option<BTreeMap<String, VarValue>>,
}

impl Spec {
    /// The job starts its own processes: the spec's `command` or the image's
    /// entrypoint runs as written, and trainc neither launches it with
    /// torchrun nor wraps it for `[code]`.
    pub fn runs_as_written(&self) -> bool {
        (self.command.is_some() || self.runs_image_entrypoint()) && self.code.is_none()
    }

    /// What starts the training container's processes.
    pub fn starter(&self) -> Starter {
        let spec = self;
        if !spec.runs_as_written() {
            return Starter::Trainc;
        }
        let Some(command) = &spec.command else {
            return Starter::Image;
        };
        Starter::of_command(command)
    }

    /// The Master's settings, when `[master]` is written on a target and
    /// job that has a Master (a fixed-size PyTorchJob, a JobSet); validation
    /// refuses it anywhere else.
    pub fn master_role(&self) -> Option<&Master> {
        let fixed = !self.replicas.as_ref().is_some_and(Replicas::is_elastic);
        let target = self.target.unwrap_or(Target::Pytorchjob);
        self.master
            .as_ref()
            .filter(|_| fixed && matches!(target, Target::Pytorchjob | Target::Jobset))
    }

    /// `imageEntrypoint = true`, and nothing else to run (a spec that also
    /// sets one has that error): the container has no `command`.
    pub fn runs_image_entrypoint(&self) -> bool {
        self.image_entrypoint == Some(true)
            && self.script.is_none()
            && self.module.is_none()
            && self.command.is_none()
            && self.code.is_none()
    }
}

/// What a warning does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Warnings {
    /// Said, and the build goes on.
    Report,
    /// Fails the check and the build.
    Error,
}

/// The kind of objects trainc generates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// `kubeflow.org/v1 PyTorchJob` for the Kubeflow Training Operator (v1.7 to v1.9).
    Pytorchjob,
    /// `trainer.kubeflow.org/v1alpha1 TrainJob` for Kubeflow Trainer v2.
    Trainjob,
    /// `batch/v1 Job` (Indexed) and a headless `Service`: any cluster, no operator.
    Job,
    /// `jobset.x-k8s.io/v1alpha2 JobSet`: one Indexed Job of every node (with `[master]`, a job for each pod), restarted as a group; any cluster with JobSet v0.8 or later.
    Jobset,
}

impl Target {
    pub fn as_str(self) -> &'static str {
        match self {
            Target::Pytorchjob => "pytorchjob",
            Target::Trainjob => "trainjob",
            Target::Job => "job",
            Target::Jobset => "jobset",
        }
    }
}

/// A fixed pod count, or an elastic `"min:max"` range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Replicas {
    /// Exactly this many pods.
    Fixed(#[schemars(range(min = 1, max = i32::MAX))] u32),
    /// Elastic: `"min:max"`, e.g. `"2:4"`.
    Elastic(String),
}

impl Replicas {
    /// The `(min, max)` of an elastic `"min:max"`; `Err` says what is wrong.
    pub fn parse_elastic(text: &str) -> Result<(u32, u32), String> {
        fn number(part: &str) -> Option<&str> {
            let part = part.trim();
            (!part.is_empty() && part.bytes().all(|b| b.is_ascii_digit())).then_some(part)
        }
        // elasticPolicy.minReplicas and maxReplicas are int32s (PyTorchJob CRD,
        // kubeflow/trainer v1.9.4).
        let bounded = |digits: &str| {
            digits
                .parse::<u32>()
                .ok()
                .filter(|n| i32::try_from(*n).is_ok())
                .ok_or_else(|| {
                    format!(
                        "`{digits}` is larger than {}, the most pods a job can have",
                        i32::MAX
                    )
                })
        };
        match text.split_once(':') {
            Some((min, max)) => match (number(min), number(max)) {
                (Some(min), Some(max)) => Ok((bounded(min)?, bounded(max)?)),
                _ => Err(format!("`{text}` is not two whole numbers `min:max`")),
            },
            None => Err(format!("`{text}` is neither a number nor `min:max`")),
        }
    }

    /// The most pods the job can run (1 when an elastic range is unreadable).
    pub fn max(&self) -> u32 {
        match self {
            Replicas::Fixed(n) => *n,
            Replicas::Elastic(text) => Self::parse_elastic(text).map_or(1, |(_, max)| max),
        }
    }

    /// Whether it is a readable elastic range (an unreadable one has its own
    /// error, and is nothing else).
    pub fn is_elastic(&self) -> bool {
        matches!(self, Replicas::Elastic(text) if Self::parse_elastic(text).is_ok())
    }
}

/// Processes per pod.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum NProcPerNode {
    /// Exactly this many processes.
    Count(#[schemars(range(min = 1, max = i32::MAX))] u32),
    /// Decided per node.
    Keyword(NProcKeyword),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NProcKeyword {
    /// One process per GPU in `resources.gpus`; trainc writes the number.
    Gpu,
    /// torchrun decides on the node: the GPU count, else the host's CPU count.
    Auto,
    /// torchrun starts one process per host CPU.
    Cpu,
}

/// A Kubernetes quantity such as `500m`, `8`, `32Gi`, `1e3`; numbers are accepted too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Quantity {
    Text(String),
    Number(serde_json::Number),
}

/// The word of `[resources.limits]` that leaves a limit out.
pub const NO_LIMIT: &str = "none";

/// The keys that make a file read as a whole spec rather than an overlay:
/// its image, or what it runs. A file with none of them and no `name` is
/// taken for an overlay given where a spec goes.
pub const WHOLE_SPEC_KEYS: [&str; 5] = ["image", "script", "module", "command", "code"];

impl Quantity {
    /// `"none"` in `[resources.limits]`: no limit at all.
    pub fn is_no_limit(&self) -> bool {
        matches!(self, Quantity::Text(text) if text == NO_LIMIT)
    }

    /// The quantity as Kubernetes would see it in YAML.
    pub fn text(&self) -> String {
        match self {
            Quantity::Text(text) => text.clone(),
            Quantity::Number(number) => number.to_string(),
        }
    }
}

/// A duration: integer seconds, or a string such as `90s`, `15m`, `1h30m`, `2d`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Duration {
    Seconds(#[schemars(range(max = i64::MAX))] u64),
    Text(String),
}

/// Per-pod compute resources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Resources {
    /// CPU cores per pod: `8`, `"500m"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Quantity>,
    /// Memory per pod: `"32Gi"`, `"500Mi"` (binary suffixes `Ki Mi Gi Ti`, decimal `k M G T`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Quantity>,
    /// GPUs per pod, requested as `gpuResource`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = i32::MAX))]
    pub gpus: Option<u32>,
    /// Extended resource name of the GPUs. Default `nvidia.com/gpu`; e.g. `amd.com/gpu`, `nvidia.com/mig-1g.10gb`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_resource: Option<String>,
    /// Size of `/dev/shm` (a memory-backed emptyDir), needed by NCCL and DataLoader workers: `"8Gi"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shm: Option<Quantity>,
    /// Local ephemeral storage per pod: `"50Gi"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral_storage: Option<Quantity>,
    /// Extended resources per pod by name, requested and limited alike: `{ "rdma/rdma_shared_device_a" = 1, "vpc.amazonaws.com/efa" = 4 }`. GPUs go in `gpus`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended: Option<IndexMap<String, ExtendedCount>>,
    /// Limits that differ from the requests above (Burstable QoS), or `"none"` for no limit; anything not named keeps limit = request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<ResourceLimits>,
}

/// Limits that differ from the requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceLimits {
    /// CPU limit per pod; at least the request. `"none"`: no CPU limit (the pod may use idle CPUs; many GPU clusters run so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Quantity>,
    /// Memory limit per pod; at least the request. `"none"`: no memory limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Quantity>,
    /// Ephemeral storage limit per pod; at least the request. `"none"`: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral_storage: Option<Quantity>,
}

/// An environment variable's value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum EnvValue {
    /// A literal value. Kubernetes env values are strings: quote numbers (`"4"`).
    Literal(String),
    /// A value read from a Secret, a ConfigMap or the pod's own fields.
    Source(EnvSource),
}

/// Exactly one of `secret` (with `key`), `configMap` (with `key`) or `field`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EnvSource {
    /// Name of a Secret in the job's namespace (secretKeyRef).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// Name of a ConfigMap in the job's namespace (configMapKeyRef).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<String>,
    /// Key inside the Secret or ConfigMap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// A pod field (fieldRef), e.g. `metadata.name`, `status.podIP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// With `secret` or `configMap`: start the pod even if it or the key is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

/// A volume mounted into every pod.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Volume {
    /// Absolute path where the volume appears in the container.
    pub mount_path: String,
    /// Source: a new PersistentVolumeClaim `<name>-<volume>` of this size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Quantity>,
    /// Source: an existing PersistentVolumeClaim; nothing is generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<String>,
    /// Source: a scratch directory on the node, `true` or a size limit such as `"50Gi"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empty_dir: Option<EmptyDir>,
    /// Source: a ConfigMap, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<String>,
    /// Source: a Secret, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// With `size`: access modes of the new claim. Default `ReadWriteMany` when replicas > 1, else `ReadWriteOnce`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_modes: Option<Vec<AccessMode>>,
    /// With `size`: storage class of the new claim. Default: the cluster's default class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_class: Option<String>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// Mount only this relative path inside the volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_path: Option<String>,
}

/// `true` or a size limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum EmptyDir {
    Enabled(bool),
    SizeLimit(Quantity),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum AccessMode {
    ReadWriteOnce,
    ReadOnlyMany,
    ReadWriteMany,
    ReadWriteOncePod,
}

/// A template value: a boolean, number or string, or a list of those (for
/// `{% for %}` and `join`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum VarValue {
    Bool(bool),
    Number(serde_json::Number),
    Text(String),
    List(Vec<VarItem>),
}

/// One element of a list in `[vars]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum VarItem {
    Bool(bool),
    Number(serde_json::Number),
    Text(String),
}

/// A count of an extended resource: a whole number from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct ExtendedCount(#[schemars(range(min = 1, max = i32::MAX))] pub u32);

/// A fragment of a PodTemplateSpec (`metadata` and `spec`), checked against Kubernetes' schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PodTemplate {
    /// Pod labels and annotations (ObjectMeta).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
    /// Fields of the pod's spec (PodSpec), e.g. `initContainers`, `dnsConfig`, `runtimeClassName`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Processes per pod, as far as trainc can know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NProc {
    Count(u32),
    /// torchrun decides on the node (the GPU count, else the host's CPU count).
    Auto,
    /// torchrun starts one process per host CPU.
    Cpu,
}

impl NProc {
    /// `nProcPerNode` as written, on a pod with `gpus` GPUs: `"gpu"` and
    /// no count at all are one process per GPU, and 1 without GPUs.
    pub fn of(written: Option<&NProcPerNode>, gpus: u32) -> NProc {
        match written {
            Some(NProcPerNode::Count(n)) => NProc::Count(*n),
            Some(NProcPerNode::Keyword(NProcKeyword::Gpu)) => NProc::Count(gpus.max(1)),
            Some(NProcPerNode::Keyword(NProcKeyword::Auto)) => NProc::Auto,
            Some(NProcPerNode::Keyword(NProcKeyword::Cpu)) => NProc::Cpu,
            None if gpus > 0 => NProc::Count(gpus),
            None => NProc::Count(1),
        }
    }

    /// As torchrun and the operators spell it: `"8"`, `"auto"`, `"cpu"`.
    pub fn text(self) -> String {
        match self {
            NProc::Count(n) => n.to_string(),
            NProc::Auto => "auto".to_owned(),
            NProc::Cpu => "cpu".to_owned(),
        }
    }
}

/// What starts the processes of the training container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Starter {
    /// trainc's torchrun (`script`, `module`, `[code]`).
    Trainc,
    /// A `command` that runs a launcher: whether it is torchrun (which
    /// reads `PET_NPROC_PER_NODE`), whether it passes the count.
    Launcher { torchrun: bool, says_count: bool },
    /// A `command` with no launcher in it: one process, unless it spawns.
    Plain,
    /// The image's entrypoint, which trainc cannot see.
    Image,
}

impl Starter {
    /// What starts the processes of a `command` run as written.
    pub fn of_command(command: &[String]) -> Starter {
        let has = |words: &[&str]| command.iter().any(|p| words.iter().any(|w| p.contains(w)));
        // torchtune's `tune run`, which Trainer's torch plugin turns into a
        // distributed launch that reads `PET_*` as torchrun does
        // ([`crate::trainer::torchtune`]).
        // `torch.distributed.launch` is torchrun's parser and agent with one
        // option more (torch `distributed/launch.py`).
        let torchrun = has(&[
            "torchrun",
            "torch.distributed.run",
            "torch.distributed.launch",
        ]) || crate::trainer::torchtune::is_tune_run(command);
        if !torchrun && !has(&["deepspeed", "accelerate"]) {
            return Starter::Plain;
        }
        Starter::Launcher {
            torchrun,
            says_count: has(&[
                "nproc_per_node",
                "nproc-per-node",
                "num_gpus",
                "num_processes",
            ]),
        }
    }
}

mod container;
pub mod defaults;
mod master;
mod run;
mod schema;
pub mod schema_lookup;

pub use container::{Code, DnsPolicy, EnvFrom, ImagePullPolicy, SecurityContext};
pub use master::{LIMITED, Master, Origin, PodQuantity};

pub use run::{
    ApiLevel, CleanPodPolicy, Elastic, Initializer, Initializers, Policy, RdzvBackend,
    RestartPolicy, RuntimeKind, Scheduling, TaintEffect, Toleration, TolerationOperator,
    TrainJobOptions,
};
pub use schema::{
    KRM_PATCH_SCHEMA, KRM_SCHEMA, OVERLAY_SCHEMA, SPEC_SCHEMA, json_schema, json_schema_text,
    krm_patch_schema, krm_schema, overlay_schema, schema_text,
};
