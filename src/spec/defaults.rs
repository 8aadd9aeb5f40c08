//! Every default trainc applies, and the names trainc keeps for itself: what
//! the spec means where it says nothing. Resolve applies them; the rules,
//! describe and the bind stage read the same values.

use super::{ApiLevel, RuntimeKind, Target};

pub const TARGET: Target = Target::Pytorchjob;
pub const REPLICAS: u32 = 1;
/// The extended resource GPUs are requested as.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";
/// The Training Operator's own default, written out so the output says it.
pub const RESTART_POLICY: &str = "OnFailure";
/// A Job's pods are never restarted in place, and a failed pod is not
/// replaced: the first failure fails the Job (see [`crate::resolve::job_launch`]).
pub const JOB_RESTART_POLICY: &str = "Never";
pub const JOB_BACKOFF_LIMIT: u32 = 0;
/// How long torchrun on a Job's pods waits for all of them to join the
/// static rendezvous. torchrun's own 600 s (pytorch
/// `torch/distributed/elastic/rendezvous/static_tcp_rendezvous.py`
/// `_default_timeout_seconds`) is too short for a Job: it has no gang
/// scheduling, so one pod Pending for a GPU node, or pulling a large
/// image on a new one, starts late, and the ranks that gave up fail the
/// whole Job, which a PyTorchJob would restart.
pub const JOB_JOIN_TIMEOUT_SECONDS: u64 = 30 * 60;
/// torchrun's own join timeout, as `describe` states it.
pub const TORCHRUN_JOIN_TIMEOUT_SECONDS: u64 = 600;
/// Where torchrun's static rendezvous listens on a Job's pod 0: the port
/// Kubeflow Trainer's torch runtime uses too (kubeflow/trainer v2.3.0,
/// `pkg/constants/constants.go` `ContainerTrainerPort`), and torchrun's
/// own default `--master_port`.
pub const JOB_RENDEZVOUS_PORT: u16 = 29500;
pub const RDZV_BACKEND: &str = "c10d";
pub const TRAINJOB_RUNTIME: &str = "torch-distributed";
pub const TRAINJOB_RUNTIME_KIND: RuntimeKind = RuntimeKind::ClusterTrainingRuntime;
pub const TRAINJOB_API_LEVEL: ApiLevel = ApiLevel::V2_3;
/// Access mode of a new claim mounted by one pod, and by several.
pub const ACCESS_MODE_SINGLE: &str = "ReadWriteOnce";
pub const ACCESS_MODE_SHARED: &str = "ReadWriteMany";
/// Istio's sidecar keeps a finished training pod running forever, so the
/// job never completes; trainc opts pods out unless the spec says otherwise.
/// With `hostNetwork`, a pod's `ClusterFirst` falls back to the node's
/// resolver, where the job's peers (`<name>-master-0`, JobSet's
/// `<name>-node-0-0.<name>`) do not resolve and rendezvous never
/// happens; `ClusterFirstWithHostNet` keeps cluster DNS (Kubernetes
/// `pkg/kubelet/network/dns/dns.go`, `getPodDNSType`).
pub const DNS_POLICY_HOST_NETWORK: &str = "ClusterFirstWithHostNet";
pub const POD_ANNOTATIONS: &[(&str, &str)] = &[("sidecar.istio.io/inject", "false")];

/// The training container's name in `[podTemplate]`, on every target (the
/// operators call it `pytorch` and `node`).
pub const TRAINER_CONTAINER: &str = "trainer";
/// The annotation that carries a kustomize plugin build's warnings on the job.
pub const WARNINGS_ANNOTATION: &str = "trainc.dev/warnings";
/// The labels trainc writes on every object it builds (Kubernetes'
/// recommended labels), and Kueue's, from `[scheduling] queue` and
/// `priorityClass`.
pub const LABEL_NAME: &str = "app.kubernetes.io/name";
pub const LABEL_MANAGED_BY: &str = "app.kubernetes.io/managed-by";
pub const LABEL_KUEUE_QUEUE: &str = "kueue.x-k8s.io/queue-name";
pub const LABEL_KUEUE_PRIORITY: &str = "kueue.x-k8s.io/priority-class";
