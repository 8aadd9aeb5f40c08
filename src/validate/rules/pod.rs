//! Rules on the container and pod settings beyond what runs: extended
//! resources, the security context, `envFrom`, host networking and DNS.

use super::{Rules, at};
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::DnsPolicy;
use crate::spec::Resources;
use crate::spec::defaults;
use crate::syntax::names;

/// Linux capabilities (capabilities(7), Linux 6.x) as Kubernetes names them,
/// without `CAP_`; `ALL` adds every one. A name the container runtime does
/// not know fails the container at start (containerd, CRI-O: "unknown capability").
const CAPABILITIES: &[&str] = &[
    "ALL",
    "AUDIT_CONTROL",
    "AUDIT_READ",
    "AUDIT_WRITE",
    "BLOCK_SUSPEND",
    "BPF",
    "CHECKPOINT_RESTORE",
    "CHOWN",
    "DAC_OVERRIDE",
    "DAC_READ_SEARCH",
    "FOWNER",
    "FSETID",
    "IPC_LOCK",
    "IPC_OWNER",
    "KILL",
    "LEASE",
    "LINUX_IMMUTABLE",
    "MAC_ADMIN",
    "MAC_OVERRIDE",
    "MKNOD",
    "NET_ADMIN",
    "NET_BIND_SERVICE",
    "NET_BROADCAST",
    "NET_RAW",
    "PERFMON",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYSLOG",
    "SYS_ADMIN",
    "SYS_BOOT",
    "SYS_CHROOT",
    "SYS_MODULE",
    "SYS_NICE",
    "SYS_PACCT",
    "SYS_PTRACE",
    "SYS_RAWIO",
    "SYS_RESOURCE",
    "SYS_TIME",
    "SYS_TTY_CONFIG",
    "WAKE_ALARM",
];

pub(super) fn check(r: &mut Rules<'_>) {
    extended(r);
    security(r);
    env_from(r);
    network(r);
}

fn extended(r: &mut Rules<'_>) {
    let spec = r.spec;
    if let Some(resources) = &spec.resources {
        extended_of(r, "/resources", resources, resources);
    }
    // The Master's own table, against its GPUs: its own, else the Workers'.
    if let Some(master) = &spec.master
        && let Some(own) = &master.resources
        && let Some(pod) = master.resources(spec.resources.as_ref())
    {
        extended_of(r, "/master/resources", own, &pod);
    }
}

/// `[resources.extended]` of the table at `table` (`written`), on a pod
/// whose resources are `pod`.
fn extended_of(r: &mut Rules<'_>, table: &str, written: &Resources, pod: &Resources) {
    let gpu = pod
        .gpu_resource
        .as_deref()
        .unwrap_or(defaults::GPU_RESOURCE);
    let field = &table[1..].replace('/', ".");
    for (name, count) in written.extended.iter().flatten() {
        let pointer = at(&format!("{table}/extended"), name);
        let native = match name.as_str() {
            "cpu" | "memory" | "ephemeral-storage" => Some(name.as_str()),
            _ => None,
        };
        if let Some(native) = native {
            let key = if native == "ephemeral-storage" {
                "ephemeralStorage"
            } else {
                native
            };
            r.push(
                Diagnostic::error(
                    codes::RESOURCE_EXTENDED,
                    r.key(&pointer),
                    format!("`{name}` is not an extended resource"),
                )
                .with_help(format!("set it as `{field}.{key}`")),
            );
        } else if let Err(why) = names::extended_resource(name) {
            r.push(
                Diagnostic::error(
                    codes::RESOURCE_EXTENDED,
                    r.key(&pointer),
                    format!("`{name}` is not an extended resource name: {why}"),
                )
                .with_help("write the name the device plugin advertises, e.g. `rdma/rdma_shared_device_a` or `vpc.amazonaws.com/efa`"),
            );
        } else if pod.gpus.is_none() && names::is_gpu_resource(name) {
            // `gpus` is what the process count, the idle-GPU and the
            // NCCL checks read; GPUs asked for here would bypass them all.
            let named = if name == defaults::GPU_RESOURCE {
                String::new()
            } else {
                format!(" and `gpuResource = \"{name}\"`")
            };
            r.push(
                Diagnostic::error(
                    codes::RESOURCE_EXTENDED,
                    r.key(&pointer),
                    format!("`{name}` is a GPU: request GPUs with `{field}.gpus`, which the processes per pod are checked against"),
                )
                .with_help(format!("write `gpus = {}`{named} in `[{field}]`, and remove `{name}` from `[{field}.extended]`", count.0)),
            );
        } else if name == gpu && pod.gpus.is_some() {
            // Written in this table, else (for the Master) in `[resources]`.
            let written = |key: &str| {
                [format!("{table}/{key}"), format!("/resources/{key}")]
                    .into_iter()
                    .find(|at| r.tree_has(at))
            };
            let gpus = written("gpus").unwrap_or_else(|| format!("{table}/gpus"));
            let mut d = Diagnostic::error(
                codes::RESOURCE_EXTENDED,
                r.key(&pointer),
                format!(
                    "`{name}` is the GPU resource, already requested by `{}`",
                    crate::tree::field_path(&gpus)
                ),
            )
            .with_secondary(r.entry(&gpus), "GPUs are requested here")
            .with_help(format!("remove `{name}` from `[{field}.extended]`"));
            if let Some(at) = written("gpuResource") {
                d = d.with_secondary(r.entry(&at), "named here");
            }
            r.push(d);
        }
    }
}

fn security(r: &mut Rules<'_>) {
    let Some(s) = &r.spec.security_context else {
        return;
    };
    for (i, capability) in s.capabilities.iter().flatten().enumerate() {
        let pointer = format!("/securityContext/capabilities/{i}");
        if CAPABILITIES.contains(&capability.as_str()) {
            continue;
        }
        let bare = capability
            .strip_prefix("CAP_")
            .unwrap_or(capability)
            .to_ascii_uppercase();
        let help = if CAPABILITIES.contains(&bare.as_str()) {
            format!("write `{bare}`: Kubernetes names capabilities in capitals, without `CAP_`")
        } else if let Some(near) = crate::diagnostic::suggest(&bare, CAPABILITIES.iter().copied()) {
            format!("did you mean `{near}`?")
        } else {
            "see capabilities(7), e.g. `IPC_LOCK` to pin memory for RDMA".to_owned()
        };
        r.push(
            Diagnostic::error(
                codes::SECURITY_CONTEXT,
                r.value(&pointer),
                format!("`{capability}` is not a Linux capability the container runtime knows"),
            )
            .with_help(help),
        );
    }
    // k8s.io/kubernetes pkg/apis/core/validation `ValidateSecurityContext`.
    if s.privileged == Some(true) && s.allow_privilege_escalation == Some(false) {
        r.push(
            Diagnostic::error(
                codes::SECURITY_CONTEXT,
                r.entry("/securityContext/allowPrivilegeEscalation"),
                "a privileged container always escalates privileges: Kubernetes rejects `allowPrivilegeEscalation = false` with `privileged = true`",
            )
            .with_secondary(r.entry("/securityContext/privileged"), "privileged here")
            .with_help("remove one of the two"),
        );
    }
    // The kubelet refuses to start it: "container's runAsUser breaks non-root policy".
    if s.run_as_non_root == Some(true) && s.run_as_user == Some(0) {
        r.push(
            Diagnostic::error(
                codes::SECURITY_CONTEXT,
                r.entry("/securityContext/runAsUser"),
                "`runAsUser = 0` is root, which `runAsNonRoot = true` forbids: the container would never start",
            )
            .with_secondary(r.entry("/securityContext/runAsNonRoot"), "set here")
            .with_help("run as a non-zero user ID, or remove `runAsNonRoot`"),
        );
    }
}

fn env_from(r: &mut Rules<'_>) {
    let Some(list) = &r.spec.env_from else { return };
    for (i, source) in list.iter().enumerate() {
        let pointer = format!("/envFrom/{i}");
        match (&source.secret, &source.config_map) {
            (Some(_), Some(_)) => r.push(
                Diagnostic::error(
                    codes::ENV_FROM,
                    r.key(&format!("{pointer}/configMap")),
                    format!("`envFrom[{i}]` names both a `secret` and a `configMap`; it takes one"),
                )
                .with_secondary(r.key(&format!("{pointer}/secret")), "`secret` is here")
                .with_help(
                    "write each as its own entry: `[{ secret = \"s\" }, { configMap = \"c\" }]`",
                ),
            ),
            (None, None) => r.push(
                Diagnostic::error(
                    codes::ENV_FROM,
                    r.value(&pointer),
                    format!("`envFrom[{i}]` names no `secret` or `configMap`"),
                )
                .with_help("write `{ secret = \"name\" }` or `{ configMap = \"name\" }`"),
            ),
            _ => {}
        }
        for (key, name) in [
            ("secret", &source.secret),
            ("configMap", &source.config_map),
        ] {
            if let Some(name) = name
                && let Err(bad) = names::Syntax::Dns1123Subdomain.check(name)
            {
                r.push(super::name_error(
                    codes::ENV_FROM,
                    r.value(&format!("{pointer}/{key}")),
                    format!("`{name}` is not a valid {key} name: {}", bad.why),
                    &bad,
                ));
            }
        }
        if let Some(prefix) = &source.prefix
            && let Err(why) = names::env_name(prefix)
        {
            r.push(
                Diagnostic::error(
                    codes::ENV_FROM,
                    r.value(&format!("{pointer}/prefix")),
                    format!("`{prefix}` cannot start an environment variable name: {why}"),
                )
                .with_help("use letters, digits and `_`, e.g. `APP_`"),
            );
        }
    }
}

/// `hostNetwork` needs `ClusterFirstWithHostNet` to resolve the job's peers;
/// trainc sets it by default, so only an explicit other policy is a problem.
fn network(r: &mut Rules<'_>) {
    let spec = r.spec;
    let host = spec.host_network == Some(true);
    match spec.dns_policy {
        Some(policy @ (DnsPolicy::ClusterFirst | DnsPolicy::Default)) if host => {
            let why = if policy == DnsPolicy::ClusterFirst {
                "on the host network Kubernetes treats `ClusterFirst` as `Default`, the node's resolver"
            } else {
                "`Default` is the node's resolver"
            };
            r.push(
                Diagnostic::warning(
                    codes::DNS_POLICY,
                    r.value("/dnsPolicy"),
                    format!("{why}: the pods cannot resolve each other's names, and rendezvous at rank 0 fails"),
                )
                .with_secondary(r.entry("/hostNetwork"), "host network here")
                .with_help("remove `dnsPolicy`: with `hostNetwork = true` trainc sets `ClusterFirstWithHostNet`"),
            );
        }
        Some(DnsPolicy::None) if !has_dns_config(r) => {
            r.push(
                Diagnostic::error(
                    codes::DNS_POLICY,
                    r.value("/dnsPolicy"),
                    "`dnsPolicy = \"None\"` needs nameservers in `podTemplate.spec.dnsConfig`; Kubernetes rejects the pod without them",
                )
                .with_help("add `[podTemplate.spec.dnsConfig]` with `nameservers = [\"10.96.0.10\"]`, or use `ClusterFirst`"),
            );
        }
        _ => {}
    }
}

fn has_dns_config(r: &Rules<'_>) -> bool {
    r.spec
        .pod_template
        .as_ref()
        .and_then(|t| t.spec.as_ref())
        .and_then(|s| s.get("dnsConfig"))
        .and_then(|c| c.get("nameservers"))
        .and_then(serde_json::Value::as_array)
        .is_some_and(|n| !n.is_empty())
}
