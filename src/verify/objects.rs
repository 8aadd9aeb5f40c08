//! What the operators do with the objects together, which no single object's
//! schema or webhook shows: the names their controllers take for their own
//! Services, and the ports a Service can reach on the job's pods.

use serde_json::Value;

use super::{Problem, id};
use crate::cluster::{job, pytorchjob, trainjob};

pub(super) fn check(values: &[&Value], problems: &mut Vec<Problem>) {
    // The runtimes among the objects, found once (a stream of thousands of
    // TrainJobs must not search it for each).
    let runtimes: Vec<&Value> = values.iter().copied().filter(|v| is_runtime(v)).collect();
    check_among(values, &runtimes, problems);
}

/// Whether `value` is one of Trainer's runtimes.
pub(super) fn is_runtime(value: &Value) -> bool {
    value["apiVersion"] == trainjob::API_VERSION
        && (value["kind"] == "TrainingRuntime" || value["kind"] == "ClusterTrainingRuntime")
}

/// [`check`] of `values` (the objects of one namespace, or all of them),
/// TrainJobs finding their runtimes among `runtimes`.
pub(super) fn check_among(values: &[&Value], runtimes: &[&Value], problems: &mut Vec<Problem>) {
    let of_kind = |kind: &str| -> Vec<&Value> {
        values
            .iter()
            .copied()
            .filter(|v| v["kind"] == kind)
            .collect()
    };
    // A job reaches, and its operator creates, Services of its own
    // namespace: grouped once, so that a stream of thousands of jobs and
    // Services costs their number, not its square.
    let mut by_namespace: std::collections::HashMap<Option<&str>, Vec<&Value>> =
        std::collections::HashMap::new();
    for service in of_kind("Service") {
        by_namespace
            .entry(service["metadata"]["namespace"].as_str())
            .or_default()
            .push(service);
    }
    for job in of_kind(trainjob::KIND) {
        let ports = runtime_port_names(job, runtimes);
        trainjob_services(values, job, beside(&by_namespace, job), &ports, problems);
    }
    for job in of_kind(pytorchjob::KIND) {
        pytorchjob_services(values, job, beside(&by_namespace, job), problems);
    }
    for job in of_kind(job::KIND) {
        job_service(values, job, beside(&by_namespace, job), problems);
    }
}

/// What the checks of objects together read of `value` (those here, and
/// [`super::runtimes`]), so that a long stream keeps that much of each
/// object and drops the rest once it is checked on its own: Trainer's
/// objects (TrainJobs and runtimes) whole; of a Service, its name,
/// selector, ports and how it publishes them; of a Job or a PyTorchJob,
/// its name, the labels its pod templates give and what finds its pods (a
/// Job's `subdomain`, a PyTorchJob's replica counts and container ports);
/// nothing of another kind. A check that reads more of an object must keep
/// it here (the test `kept_is_what_the_checks_read` compares).
pub(super) fn kept(value: Value) -> Option<Value> {
    let kind = value["kind"].as_str()?;
    if value["apiVersion"] == trainjob::API_VERSION {
        return Some(value);
    }
    let fields: &[&str] = match kind {
        "Service" => &[
            "/spec/selector",
            "/spec/clusterIP",
            "/spec/publishNotReadyAddresses",
            "/spec/ports",
        ],
        job::KIND => &[
            "/spec/template/metadata/labels",
            "/spec/template/spec/subdomain",
        ],
        pytorchjob::KIND => &[],
        _ => return None,
    };
    let identity = [
        "/apiVersion",
        "/kind",
        "/metadata/name",
        "/metadata/namespace",
    ];
    let mut kept = pick(&value, &[identity.as_slice(), fields].concat());
    if kind == pytorchjob::KIND {
        let replicas: serde_json::Map<String, Value> = value
            .pointer("/spec/pytorchReplicaSpecs")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(name, replica)| {
                let mut kept = pick(replica, &["/replicas", "/template/metadata/labels"]);
                if let Some(containers) = replica
                    .pointer("/template/spec/containers")
                    .and_then(Value::as_array)
                {
                    let containers = containers
                        .iter()
                        .map(|c| pick(c, &["/name", "/ports"]))
                        .collect();
                    kept["template"]["spec"]["containers"] = Value::Array(containers);
                }
                (name.clone(), kept)
            })
            .collect();
        kept["spec"]["pytorchReplicaSpecs"] = Value::Object(replicas);
    }
    Some(kept)
}

/// The fields of `value` at `paths` (JSON pointers through mappings, none
/// a prefix of another, so every step on the way is a mapping), and nothing
/// else.
fn pick(value: &Value, paths: &[&str]) -> Value {
    let mut kept = Value::Object(serde_json::Map::new());
    for path in paths {
        let Some(found) = value.pointer(path) else {
            continue;
        };
        let mut at = &mut kept;
        for key in path.split('/').skip(1) {
            at = &mut at[key];
        }
        *at = found.clone();
    }
    kept
}

/// The Services of `job`'s namespace.
fn beside<'v>(
    by_namespace: &'v std::collections::HashMap<Option<&str>, Vec<&'v Value>>,
    job: &'v Value,
) -> &'v [&'v Value] {
    by_namespace
        .get(&job["metadata"]["namespace"].as_str())
        .map_or(&[], Vec::as_slice)
}

/// A problem with `value`, one of `values`, found there by identity: two
/// objects of one `Kind/name` each get their own.
fn operator(values: &[&Value], value: &Value, path: &str, message: String) -> Problem {
    let mut problem = Problem::operator(&id(value), path, message);
    problem.index = values.iter().position(|v| std::ptr::eq(*v, value));
    problem
}

/// A Job's pods are `<hostname>.<subdomain>` only under a headless Service
/// named like the subdomain that selects them, and only before they are
/// ready if it publishes them then (Kubernetes DNS for Services and Pods):
/// without it, ranks never find pod 0 and wait until the rendezvous times
/// out. A Job without a `subdomain` asks for nothing.
fn job_service(values: &[&Value], job: &Value, services: &[&Value], problems: &mut Vec<Problem>) {
    let template = &job["spec"]["template"];
    let Some(subdomain) = template.pointer("/spec/subdomain").and_then(Value::as_str) else {
        return;
    };
    let Some(service) = services.iter().find(|s| name(s) == subdomain) else {
        problems.push(operator(
            values,
            job,
            "/spec/template/spec/subdomain",
            format!("no Service `{subdomain}` among the objects: the pods' names `<hostname>.{subdomain}` will not resolve"),
        ));
        return;
    };
    let labels = template
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let checks = [
        (
            service.pointer("/spec/clusterIP") == Some(&Value::from("None")),
            "/spec/clusterIP",
            "is not headless (`clusterIP: None`): the pods get no names under it",
        ),
        (
            selects(service, &labels),
            "/spec/selector",
            "does not select the Job's pods: they get no names under it",
        ),
        (
            service.pointer("/spec/publishNotReadyAddresses") == Some(&Value::Bool(true)),
            "/spec/publishNotReadyAddresses",
            "does not publish pods before they are ready: ranks cannot reach pod 0 while they start",
        ),
    ];
    for (holds, path, what) in checks {
        if !holds {
            problems.push(operator(
                values,
                service,
                path,
                format!(
                    "this Service names Job `{}`'s pods (their `subdomain`) but {what}",
                    name(job)
                ),
            ));
        }
    }
}

fn name(value: &Value) -> &str {
    value["metadata"]["name"].as_str().unwrap_or("")
}

/// Whether `service` selects pods carrying `label: value`.
/// Whether the Service's selector picks a pod with `labels`.
fn selects(service: &Value, labels: &serde_json::Map<String, Value>) -> bool {
    service
        .pointer("/spec/selector")
        .and_then(Value::as_object)
        .is_some_and(|selector| {
            !selector.is_empty() && selector.iter().all(|(k, v)| labels.get(k) == Some(v))
        })
}

/// Every `metadata.labels` under `value`: the labels its pod templates give.
fn template_labels(value: &Value, into: &mut serde_json::Map<String, Value>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(labels)) = map.get("metadata").and_then(|m| m.get("labels")) {
                into.extend(labels.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            map.values().for_each(|v| template_labels(v, into));
        }
        Value::Array(items) => items.iter().for_each(|v| template_labels(v, into)),
        _ => {}
    }
}

/// The port names the `node` container of `job`'s runtime declares, when
/// the runtime is among `runtimes` (a ClusterTrainingRuntime, or a
/// TrainingRuntime of the job's namespace).
fn runtime_port_names(job: &Value, runtimes: &[&Value]) -> Vec<String> {
    let reference = &job["spec"]["runtimeRef"];
    let kind = reference["kind"]
        .as_str()
        .unwrap_or("ClusterTrainingRuntime");
    let runtime = runtimes.iter().find(|v| {
        v["kind"] == kind
            && v["metadata"]["name"] == reference["name"]
            && (kind != "TrainingRuntime"
                || v["metadata"]["namespace"] == job["metadata"]["namespace"])
    });
    let jobs = runtime.and_then(|r| r.pointer("/spec/template/spec/replicatedJobs")?.as_array());
    jobs.into_iter()
        .flatten()
        .filter(|j| j["name"] == trainjob::NODE)
        .flat_map(|j| {
            j.pointer("/template/spec/template/spec/containers")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .filter(|c| c["name"] == trainjob::NODE)
        .flat_map(|c| c["ports"].as_array().into_iter().flatten())
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect()
}

/// JobSet creates the headless Service behind `<job>-node-0-0.<job>` (the
/// `PET_MASTER_ADDR` the torch runtime sets) only when no Service named
/// `<job>` exists, and adopts none (kubernetes-sigs/jobset v0.12.0,
/// `pkg/controllers/jobset_controller.go`, `createHeadlessSvcIfNecessary`).
/// The TrainJob cannot declare container ports (no TrainJob API level patches
/// them), so a Service reaches its pods by port number, or by a name the
/// runtime's `node` container declares (`ports`, for a runtime among the
/// objects: one `trainc migrate` or `writeRuntime` writes).
fn trainjob_services(
    values: &[&Value],
    job: &Value,
    services: &[&Value],
    ports: &[String],
    problems: &mut Vec<Problem>,
) {
    let job_name = name(job);
    // What node 0 is labelled: by the patches, by JobSet and by Kubernetes.
    let mut rank0 = serde_json::Map::new();
    template_labels(&job["spec"], &mut rank0);
    let jobset_name = [(trainjob::LABEL_JOBSET_NAME, job_name)];
    for (key, value) in jobset_name
        .into_iter()
        .chain(crate::cluster::jobset::RANK0_LABELS)
    {
        rank0.insert(key.to_owned(), Value::String(value.to_owned()));
    }
    for service in services {
        if name(service) == job_name {
            problems.push(operator(
                values,
                service,
                "/metadata/name",
                format!(
                    "JobSet creates its headless Service `{job_name}` only when no Service of that name exists; this one would take its place, and rank 0's address `{job_name}-{node}-0-0.{job_name}` would never resolve",
                    node = trainjob::NODE
                ),
            ));
        }
        if !selects(service, &rank0) {
            continue;
        }
        for (i, port) in service_ports(service) {
            if port["targetPort"]
                .as_str()
                .is_some_and(|p| !ports.iter().any(|n| n == p))
            {
                problems.push(operator(
                    values,
                    service,
                    &format!("/spec/ports/{i}/targetPort"),
                    "a TrainJob's node container has no port of this name (a TrainJob cannot declare one; its runtime's `node` container can): target the port by number".to_owned(),
                ));
            }
        }
    }
}

/// The Training Operator creates a headless Service per pod, named like the
/// pod (`<job>-master-0`, `<job>-worker-<i>`; kubeflow/trainer v1.9.4,
/// `pkg/controller.v1/common/service.go`). A Service exposing the rank-0 pod
/// must target by name only ports its `pytorch` container declares.
fn pytorchjob_services(
    values: &[&Value],
    job: &Value,
    services: &[&Value],
    problems: &mut Vec<Problem>,
) {
    let job_name = name(job);
    let replicas = job
        .pointer("/spec/pytorchReplicaSpecs")
        .and_then(Value::as_object);
    // Whether the operator names one of this job's pod Services `service`.
    let operator_service = |service: &str| {
        replicas.into_iter().flatten().any(|(kind, spec)| {
            let prefix = format!("{job_name}-{}-", kind.to_ascii_lowercase());
            service
                .strip_prefix(&prefix)
                .filter(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|i| i.parse::<u64>().ok())
                .is_some_and(|i| i < spec["replicas"].as_u64().unwrap_or(0))
        })
    };
    // Rank 0: the Master, or worker 0 of an elastic job without one.
    let rank0 = replicas.and_then(|r| r.get("Master").or_else(|| r.get("Worker")));
    // What rank 0 is labelled: by its template and by the operator.
    let mut rank0_labels = rank0
        .and_then(|r| r.pointer("/template/metadata/labels"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let rank0_type = replicas
        .and_then(|r| r.keys().find(|k| k.eq_ignore_ascii_case("master")))
        .map_or("worker", |_| "master");
    for (key, value) in [
        (pytorchjob::LABEL_JOB_NAME, job_name),
        (pytorchjob::LABEL_REPLICA_TYPE, rank0_type),
        (pytorchjob::LABEL_REPLICA_INDEX, "0"),
    ] {
        rank0_labels.insert(key.to_owned(), Value::String(value.to_owned()));
    }
    // Every version marks a Master `job-role: master`; worker 0 of a job
    // without one only from v1.8.0 (see `render::pytorchjob`).
    if rank0_type == "master" {
        rank0_labels.insert(
            pytorchjob::LABEL_JOB_ROLE.to_owned(),
            Value::String("master".to_owned()),
        );
    }
    let declared: Vec<&Value> = rank0
        .and_then(|r| r.pointer("/template/spec/containers"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c["name"] == pytorchjob::CONTAINER)
        .filter_map(|c| c["ports"].as_array())
        .flatten()
        .collect();
    // Looked up by name: a Service may target thousands.
    let declared_names: std::collections::HashSet<&str> =
        declared.iter().filter_map(|p| p["name"].as_str()).collect();
    for service in services {
        if operator_service(name(service)) {
            problems.push(operator(
                values,
                service,
                "/metadata/name",
                format!(
                    "the Training Operator names one of `{job_name}`'s pod Services `{}`; this Service would collide with it",
                    name(service)
                ),
            ));
        }
        if !selects(service, &rank0_labels) {
            continue;
        }
        for (i, port) in service_ports(service) {
            // Without a targetPort, a Service targets its own port number.
            let target = match &port["targetPort"] {
                Value::Null => &port["port"],
                target => target,
            };
            // A port number reaches whatever listens on it, declared or not
            // (on the host network trainc declares none: see
            // `render::pod::container`); a name must be declared.
            let found = match target {
                Value::String(port_name) => declared_names.contains(port_name.as_str()),
                _ => true,
            };
            if !found {
                problems.push(operator(
                    values,
                    service,
                    &format!("/spec/ports/{i}/targetPort"),
                    format!(
                        "targets port {target} of `{job_name}`'s rank-0 pod, which its `{}` container does not declare",
                        pytorchjob::CONTAINER
                    ),
                ));
            }
        }
    }
}

fn service_ports(service: &Value) -> impl Iterator<Item = (usize, &Value)> {
    service
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
}
