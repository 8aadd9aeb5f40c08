//! What the API server's own validation rejects that no JSON Schema says:
//! an object's name and namespace, and the names and paths of every pod
//! spec an object holds ([`crate::syntax::pod`]): a Pod's own, a workload's
//! template, and the templates the operators make pods from (a PyTorchJob's
//! replicas, a JobSet's jobs, a training runtime's jobs, a TrainJob's
//! patches). For a custom resource the API server takes the object, and
//! rejects the pods its operator makes from the template: an operator's
//! problem, found on the real control plane (tests/cluster's differential
//! suite: a JobSet or PyTorchJob with a bad volume name is admitted).

use serde_json::Value;

use super::Problem;
use super::kubernetes::Release;
use crate::syntax::names;
use crate::syntax::pod::{self, Extent};

/// The name syntax the API server of `release` holds an object of `group`
/// and `kind` to (kubernetes v1.36.3, `pkg/apis/*/validation`: a
/// Namespace's name is a DNS-1123 label; a Service's a DNS-1035 label up to
/// 1.35, a DNS-1123 label from 1.36, where `RelaxedServiceNameValidation`
/// is on by default (`pkg/features/kube_features.go`, `ValidateService`);
/// the other kinds of these groups, and every custom resource, a DNS-1123
/// subdomain). `None` for a group whose kinds name themselves otherwise
/// (RBAC's path segments).
fn name_syntax(group: &str, kind: &str, release: Release) -> Option<names::Syntax> {
    match (group, kind) {
        ("", "Service") if release.minor() >= 36 => Some(names::Syntax::Dns1123Label),
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
pub(super) fn kubernetes_group(group: &str) -> bool {
    !group.contains('.') || group.ends_with(".k8s.io") || group.ends_with(".kubernetes.io")
}

/// The problems of one object.
pub(super) fn check(id: &str, value: &Value, release: Release, problems: &mut Vec<Problem>) {
    let api_version = value["apiVersion"].as_str().unwrap_or_default();
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    let kind = value["kind"].as_str().unwrap_or_default();
    if let (Some(syntax), Some(name)) = (
        name_syntax(group, kind, release),
        value["metadata"]["name"].as_str(),
    ) && let Err(bad) = syntax.check(name)
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
        && !namespace.is_empty()
        && let Err(why) = names::dns1123_label(namespace)
    {
        problems.push(Problem::apiserver(
            id,
            "/metadata/namespace",
            format!("the namespace `{namespace}` is not a DNS-1123 label: {why}"),
        ));
    }
    metadata(id, &value["metadata"], "/metadata", problems);
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
        if kubernetes_group(group) {
            quantities(id, &at, spec, problems);
            required(id, &at, spec, problems);
            // A template's own labels and annotations (a Pod's are the
            // object's, checked above).
            if let Some(template) = at.strip_suffix("/spec").filter(|t| !t.is_empty()) {
                let meta = value
                    .pointer(&format!("{template}/metadata"))
                    .unwrap_or(&Value::Null);
                metadata(id, meta, &format!("{template}/metadata"), problems);
            }
        }
        // A custom resource's template is not the API server's to check:
        // it admits the object and refuses what its operator makes of it.
        let custom = !kubernetes_group(group);
        for problem in pod::check(spec, extent) {
            let at = format!("{at}{}", problem.at);
            if custom {
                let message = format!(
                    "{}; the API server admits the {kind} but rejects the pods its operator makes from this template",
                    problem.message
                );
                problems.push(Problem::operator(id, &at, message));
            } else {
                problems.push(Problem::apiserver(id, &at, problem.message));
            }
        }
    }
}

/// A built-in kind's resource amounts, which the API server reads as
/// quantities: one that is not is refused whole, and a container may not
/// request more than its limit (kubernetes v1.36.3 `pkg/apis/core/validation`
/// `ValidateContainerResourceRequirements`). A custom resource's schema
/// gives its amounts a pattern of their own.
fn quantities(id: &str, at: &str, spec: &Value, problems: &mut Vec<Problem>) {
    let amount = |value: &Value| match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let mut refuse = |pointer: String, message: String| {
        problems.push(Problem::apiserver(id, &pointer, message));
    };
    for list in ["initContainers", "containers"] {
        let containers = spec[list].as_array().into_iter().flatten().enumerate();
        for (c, container) in containers {
            let resources = &container["resources"];
            let base = format!("{at}/{list}/{c}/resources");
            for side in ["limits", "requests"] {
                for (resource, value) in resources[side].as_object().into_iter().flatten() {
                    let Some(text) = amount(value) else { continue };
                    let pointer =
                        format!("{base}/{side}/{}", crate::tree::pointer_segment(resource));
                    match crate::syntax::quantity::parse(&text) {
                        Err(bad) => refuse(
                            pointer,
                            format!("`{text}` is not a quantity: {}", bad.reason),
                        ),
                        Ok(_) if side == "requests" => {
                            let limit = amount(&resources["limits"][resource]);
                            if let Some((at_limits, why)) =
                                over_limit(resource, &text, limit.as_deref())
                            {
                                refuse(
                                    if at_limits {
                                        format!("{base}/limits")
                                    } else {
                                        pointer
                                    },
                                    why,
                                );
                            }
                        }
                        Ok(_) => {}
                    }
                }
            }
        }
    }
    for (v, volume) in spec["volumes"].as_array().into_iter().flatten().enumerate() {
        if let Some(text) = amount(&volume["emptyDir"]["sizeLimit"])
            && let Err(bad) = crate::syntax::quantity::parse(&text)
        {
            refuse(
                format!("{at}/volumes/{v}/emptyDir/sizeLimit"),
                format!("`{text}` is not a quantity: {}", bad.reason),
            );
        }
    }
}

/// Why a container's request of `resource` exceeds what its limit allows,
/// and whether the limit is the field at fault: a device or huge pages
/// cannot be overcommitted, so there the request is the limit
/// (`IsOvercommitAllowed`); elsewhere it may not be more.
fn over_limit(resource: &str, request: &str, limit: Option<&str>) -> Option<(bool, String)> {
    let exact = (resource.contains('/') && !resource.contains("kubernetes.io/"))
        || resource.starts_with("hugepages-");
    let asked = crate::syntax::quantity::parse(request).ok()?.value;
    let Some(written) = limit else {
        return exact.then(|| {
            (
                true,
                format!("`{resource}` is requested with no limit: a device is given by its limit, which must be set and equal the request"),
            )
        });
    };
    let limit = crate::syntax::quantity::parse(written).ok()?.value;
    if exact && (asked - limit).abs() > f64::EPSILON * limit.abs().max(1.0) {
        Some((
            false,
            format!(
                "the request of `{request}` {resource} must equal its limit of `{written}`: a device is not shared"
            ),
        ))
    } else if asked > limit {
        Some((
            false,
            format!(
                "the request of `{request}` {resource} is more than the limit of `{written}`: a container may not ask for more than it may use"
            ),
        ))
    } else {
        None
    }
}

/// What a built-in kind's pod spec must give that its schema leaves
/// optional (kubernetes v1.36.3 `pkg/apis/core/validation`: a container's
/// `image`, the name of an `envFrom` source, the key of a variable's
/// ConfigMap or Secret and the path of its `fieldRef`, a claim volume's
/// `claimName`) or allows only some values of (`dnsPolicy`), found on the
/// real control plane. An operator's template may
/// leave them to the operator (a runtime's image comes from the TrainJob).
fn required(id: &str, at: &str, spec: &Value, problems: &mut Vec<Problem>) {
    if let Some(policy) = spec["dnsPolicy"].as_str()
        && !["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"].contains(&policy)
    {
        problems.push(Problem::apiserver(
            id,
            &format!("{at}/dnsPolicy"),
            format!("`dnsPolicy` `{policy}` is not one of `ClusterFirst`, `ClusterFirstWithHostNet`, `Default`, `None`"),
        ));
    }
    let mut need = |pointer: String, what: &str| {
        problems.push(Problem::apiserver(
            id,
            &pointer,
            format!("{what} is required, and empty here"),
        ));
    };
    let empty = |value: &Value| value.as_str().is_none_or(str::is_empty);
    let mut unsupported = Vec::new();
    for list in ["initContainers", "containers"] {
        let containers = spec[list].as_array().into_iter().flatten().enumerate();
        for (c, container) in containers {
            let base = format!("{at}/{list}/{c}");
            if empty(&container["image"]) {
                need(format!("{base}/image"), "a container's `image`");
            }
            for (e, from) in container["envFrom"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                for source in ["configMapRef", "secretRef"] {
                    if from[source].is_object() && empty(&from[source]["name"]) {
                        need(
                            format!("{base}/envFrom/{e}/{source}/name"),
                            "the name of an `envFrom` source",
                        );
                    }
                }
            }
            for (e, var) in container["env"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                // A null item is a variable with no name to Go's decoder.
                if var.is_null() {
                    need(format!("{base}/env/{e}/name"), "a variable's `name`");
                }
                let from = &var["valueFrom"];
                let at = format!("{base}/env/{e}/valueFrom");
                if from["fieldRef"].is_object() && empty(&from["fieldRef"]["fieldPath"]) {
                    need(
                        format!("{at}/fieldRef/fieldPath"),
                        "a `fieldRef`'s `fieldPath`",
                    );
                } else if let Some(path) = from["fieldRef"]["fieldPath"].as_str()
                    && !crate::syntax::pod::env_field_path(path)
                {
                    unsupported.push((format!("{at}/fieldRef/fieldPath"), path.to_owned()));
                }
                for source in ["configMapKeyRef", "secretKeyRef"] {
                    for field in ["name", "key"] {
                        if from[source].is_object() && empty(&from[source][field]) {
                            need(
                                format!("{at}/{source}/{field}"),
                                &format!("the `{field}` of a variable's `{source}`"),
                            );
                        }
                    }
                }
            }
        }
    }
    for (v, volume) in spec["volumes"].as_array().into_iter().flatten().enumerate() {
        let claim = &volume["persistentVolumeClaim"];
        if claim.is_object() && empty(&claim["claimName"]) {
            need(
                format!("{at}/volumes/{v}/persistentVolumeClaim/claimName"),
                "a claim volume's `claimName`",
            );
        }
    }
    for (pointer, path) in unsupported {
        problems.push(Problem::apiserver(
            id,
            &pointer,
            format!(
                "a variable cannot read the pod's `{path}`: it reads one of {}, or `metadata.labels['KEY']`, `metadata.annotations['KEY']`",
                crate::syntax::pod::ENV_FIELD_PATHS.map(|p| format!("`{p}`")).join(", ")
            ),
        ));
    }
}

/// An object's labels and annotations, which the API server checks for
/// every kind, custom resources too (k8s.io/apimachinery v0.36
/// `pkg/api/validation` `ValidateObjectMeta`: labels' keys and values,
/// annotations' keys).
fn metadata(id: &str, meta: &Value, at: &str, problems: &mut Vec<Problem>) {
    for (key, value) in meta["labels"].as_object().into_iter().flatten() {
        let pointer = format!("{at}/labels/{}", crate::tree::pointer_segment(key));
        let why = names::qualified_name(key)
            .map_err(|why| format!("the label key `{key}` is not a qualified name: {why}"))
            .and_then(|()| {
                names::label_value(value.as_str().unwrap_or_default()).map_err(|why| {
                    format!("the value of the label `{key}` is not a label value: {why}")
                })
            });
        if let Err(why) = why {
            problems.push(Problem::apiserver(id, &pointer, why));
        }
    }
    for key in meta["annotations"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
    {
        if let Err(why) = names::qualified_name(&key.to_lowercase()) {
            problems.push(Problem::apiserver(
                id,
                &format!("{at}/annotations/{}", crate::tree::pointer_segment(key)),
                format!("the annotation key `{key}` is not a qualified name: {why}"),
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

/// The PyTorchJob CRD's scale subresource reads the Workers' `replicas`
/// (kubeflow/trainer v1.7.0–v1.9.4 `manifests/base/crds/kubeflow.org_pytorchjobs.yaml`,
/// `specReplicasPath`), which the API server holds to 0..2^31-1 on every
/// create (apiextensions-apiserver v0.36.3
/// `pkg/registry/customresource/validator.go` `ValidateScaleSpec`), before
/// the webhook sees it.
pub(super) fn scale_replicas(id: &str, value: &Value, problems: &mut Vec<Problem>) {
    const AT: &str = "/spec/pytorchReplicaSpecs/Worker/replicas";
    let Some(replicas) = value.pointer(AT).and_then(Value::as_i64) else {
        return;
    };
    let why = if replicas < 0 {
        "should be a non-negative integer"
    } else if replicas > i64::from(i32::MAX) {
        "should be at most 2147483647"
    } else {
        return;
    };
    problems.push(Problem::apiserver(
        id,
        AT,
        format!("the Workers' `replicas` {replicas} {why} (the CRD's scale subresource reads it)"),
    ));
}
