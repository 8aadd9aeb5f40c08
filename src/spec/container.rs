//! The spec's settings of the training container and its pod beyond what
//! runs: pulling the image, privileges, env from whole objects, the network,
//! local code, and the pod-template escape hatch.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// When the kubelet pulls the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ImagePullPolicy {
    /// Every time a container starts.
    Always,
    /// Only when the node does not have it.
    IfNotPresent,
    /// Never; the image must already be on the node.
    Never,
}

/// Security settings of the training container, and the pod-level ones that go with them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SecurityContext {
    /// Linux capabilities added to the container, without `CAP_`, e.g. `["IPC_LOCK"]` for RDMA memory registration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Vec<String>>,
    /// Run the container privileged (all devices of the host). Prefer `capabilities` and `[resources.extended]` devices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub privileged: Option<bool>,
    /// User ID the container runs as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = i32::MAX))]
    pub run_as_user: Option<i64>,
    /// Group ID the container runs as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = i32::MAX))]
    pub run_as_group: Option<i64>,
    /// Refuse to start the container if it would run as root (UID 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_as_non_root: Option<bool>,
    /// Whether a process may gain more privileges than its parent (setuid binaries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_privilege_escalation: Option<bool>,
    /// Mount the container's root filesystem read-only. trainc then mounts an emptyDir at `/tmp` (unless a volume of the spec does), where torchrun and pip write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_root_filesystem: Option<bool>,
    /// Pod level: a group that owns the pod's volumes (and is added to the container's groups), so a non-root user can write to them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = i32::MAX))]
    pub fs_group: Option<i64>,
}

/// Every key of a Secret or ConfigMap as environment variables.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EnvFrom {
    /// Name of a Secret in the job's namespace. Exactly one of `secret` and `configMap`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// Name of a ConfigMap in the job's namespace. Exactly one of `secret` and `configMap`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<String>,
    /// Put before every variable name, e.g. `APP_`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Start the pod even if the Secret or ConfigMap is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

/// How the pods resolve names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum DnsPolicy {
    /// Cluster DNS (the Kubernetes default); with `hostNetwork` Kubernetes treats it as `Default`.
    ClusterFirst,
    /// Cluster DNS for a pod on the host network: what `hostNetwork = true` needs to reach its peers by name.
    ClusterFirstWithHostNet,
    /// The node's resolver; cluster names (the job's peers) do not resolve.
    Default,
    /// Only `podTemplate.spec.dnsConfig`.
    None,
}

/// Local code shipped with the job in a ConfigMap and run on the stock image, without an image build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Code {
    /// Files to ship, relative to the file that lists them, e.g. `["train_fn.py", "utils.py"]`. Each is mounted by its file name in one directory; without `function`, the first one runs as the script.
    pub files: Vec<String>,
    /// `FILE:FUNCTION` to call with no arguments in every process, e.g. `"train_fn.py:train"`; FILE is one of `files`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// pip requirements installed in each pod before training, e.g. `["torchvision==0.19.1"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packages: Option<Vec<String>>,
    /// Index pip installs `packages` from (`--index-url`). Default: PyPI, or the image's pip configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pip_index_url: Option<String>,
}
