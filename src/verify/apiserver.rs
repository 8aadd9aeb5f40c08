//! What the API server's own validation rejects that no JSON Schema says:
//! an object's name and namespace, and the names and paths of every pod
//! spec an object holds ([`crate::syntax::pod`]): a Pod's own, a workload's
//! template, and the templates the operators make pods from (a PyTorchJob's
//! replicas, a JobSet's jobs, a training runtime's jobs, a TrainJob's
//! patches). For a custom resource the API server takes the object, and
//! rejects the pods its operator makes from the template.

use serde_json::Value;

use super::Problem;
use crate::syntax::names;
use crate::syntax::pod::{self, Extent};

/// The name syntax the API server holds an object of `group` and `kind` to
/// (kubernetes v1.30.0, `pkg/apis/*/validation`: a Service's name is a
/// DNS-1035 label, a Namespace's a DNS-1123 label; the other kinds of
/// these groups, and every custom resource, a DNS-1123 subdomain). `None`
/// for a group whose kinds name themselves otherwise (RBAC's path segments).
fn name_syntax(group: &str, kind: &str) -> Option<names::Syntax> {
    match (group, kind) {
        ("", "Service") => Some(names::Syntax::Dns1035),
        ("", "Namespace") => Some(names::Syntax::Dns1123Label),
        ("" | "apps" | "batch" | "policy" | "scheduling.k8s.io" | "storage.k8s.io", _) => {
            Some(names::Syntax::Dns1123Subdomain)
        }
        _ if !kubernetes_group(group) => Some(names::Syntax::Dns1123Subdomain),
        _ => None,
    }
}

/// Whether `group` is Kubernetes' own rather than a custom resource's: a
/// CRD's group must hold a dot (apiextensions-apiserver's validation), and
/// `*.k8s.io` and `*.kubernetes.io` are kept for Kubernetes' own.
fn kubernetes_group(group: &str) -> bool {
    !group.contains('.') || group.ends_with(".k8s.io") || group.ends_with(".kubernetes.io")
}

/// The problems of one object.
pub(super) fn check(id: &str, value: &Value, problems: &mut Vec<Problem>) {
    let api_version = value["apiVersion"].as_str().unwrap_or_default();
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    let kind = value["kind"].as_str().unwrap_or_default();
    if let (Some(syntax), Some(name)) =
        (name_syntax(group, kind), value["metadata"]["name"].as_str())
        && let Err(bad) = syntax.check(name)
    {
        problems.push(Problem::apiserver(
            id,
            "/metadata/name",
            format!(
                "the name `{name}` is not {}: {}",
                syntax.described(),
                bad.why
            ),
        ));
    }
    if let Some(namespace) = value["metadata"]["namespace"].as_str()
        && let Err(why) = names::dns1123_label(namespace)
    {
        problems.push(Problem::apiserver(
            id,
            "/metadata/namespace",
            format!("the namespace `{namespace}` is not a DNS-1123 label: {why}"),
        ));
    }
    let keyed: &[&str] = match (group, kind) {
        ("", "ConfigMap") => &["data", "binaryData"],
        ("", "Secret") => &["data", "stringData"],
        _ => &[],
    };
    for field in keyed {
        for key in value[field]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
        {
            if let Err(why) = names::config_map_key(key) {
                problems.push(Problem::apiserver(
                    id,
                    &format!("/{field}/{}", crate::tree::pointer_segment(key)),
                    format!("the key `{key}` is not a key Kubernetes accepts: {why}; each key is a file name in a volume"),
                ));
            }
        }
    }
    for (at, spec, extent) in pod_specs(group, kind, value) {
        devices(id, &at, spec, problems);
        let custom = !kubernetes_group(group);
        for problem in pod::check(spec, extent) {
            let message = if custom {
                format!(
                    "{}; the API server rejects the pods the operator makes from this template",
                    problem.message
                )
            } else {
                problem.message
            };
            problems.push(Problem::apiserver(
                id,
                &format!("{at}{}", problem.at),
                message,
            ));
        }
    }
}

/// A container asking for a device resource no plugin advertises, one
/// letter from one that does ([`names::misspelt_device`]): admitted, and
/// Pending forever.
fn devices(id: &str, at: &str, spec: &Value, problems: &mut Vec<Problem>) {
    for list in ["containers", "initContainers"] {
        for (c, container) in spec[list].as_array().into_iter().flatten().enumerate() {
            for which in ["limits", "requests"] {
                let names = container["resources"][which]
                    .as_object()
                    .into_iter()
                    .flatten();
                for (name, _) in names {
                    if let Some(near) = names::misspelt_device(name) {
                        problems.push(Problem::admitted(
                            id,
                            &format!(
                                "{at}/{list}/{c}/resources/{which}/{}",
                                crate::tree::pointer_segment(name)
                            ),
                            format!("no device plugin advertises `{name}` (did you mean `{near}`?): the pod would wait for a node that has it forever"),
                        ));
                    }
                }
            }
        }
    }
}

/// Every pod spec `value` holds: where (a JSON pointer), the spec, and
/// whether it is whole or a patch.
fn pod_specs<'v>(group: &str, kind: &str, value: &'v Value) -> Vec<(String, &'v Value, Extent)> {
    let mut found = Vec::new();
    let extent = match group {
        // Trainer adds volumes of its own to a runtime's pods (the
        // initializers' `initializer`), as JobSet does for its
        // `volumeClaimPolicies`: a template there may mount what it lacks.
        "jobset.x-k8s.io" | "trainer.kubeflow.org" => Extent::Patch,
        _ => Extent::Whole,
    };
    let at = |pointer: String, found: &mut Vec<(String, &'v Value, Extent)>| {
        if let Some(spec) = value.pointer(&pointer).filter(|s| s.is_object()) {
            found.push((pointer, spec, extent));
        }
    };
    let each = |pointer: &str| -> Vec<String> {
        match value.pointer(pointer) {
            Some(Value::Array(items)) => {
                (0..items.len()).map(|i| format!("{pointer}/{i}")).collect()
            }
            Some(Value::Object(items)) => items
                .keys()
                .map(|k| format!("{pointer}/{}", crate::tree::pointer_segment(k)))
                .collect(),
            _ => Vec::new(),
        }
    };
    match (group, kind) {
        ("", "Pod") => at("/spec".to_owned(), &mut found),
        ("", "PodTemplate") => at("/template/spec".to_owned(), &mut found),
        ("", "ReplicationController")
        | ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet")
        | ("batch", "Job") => at("/spec/template/spec".to_owned(), &mut found),
        ("batch", "CronJob") => at(
            "/spec/jobTemplate/spec/template/spec".to_owned(),
            &mut found,
        ),
        ("kubeflow.org", "PyTorchJob") => {
            for replica in each("/spec/pytorchReplicaSpecs") {
                at(format!("{replica}/template/spec"), &mut found);
            }
        }
        ("jobset.x-k8s.io", "JobSet") => {
            for job in each("/spec/replicatedJobs") {
                at(format!("{job}/template/spec/template/spec"), &mut found);
            }
        }
        ("trainer.kubeflow.org", "TrainingRuntime" | "ClusterTrainingRuntime") => {
            for job in each("/spec/template/spec/replicatedJobs") {
                at(format!("{job}/template/spec/template/spec"), &mut found);
            }
        }
        ("trainer.kubeflow.org", "TrainJob") => {
            for patch in super::webhooks::pod_patches(value) {
                if patch.pod.is_object() {
                    found.push((patch.at, patch.pod, Extent::Patch));
                }
            }
        }
        _ => {}
    }
    found
}
