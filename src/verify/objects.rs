//! What the operators do with the objects together, which no single object's
//! schema or webhook shows: the names their controllers take for their own
//! Services, and the ports a Service can reach on the job's pods.

use std::collections::HashMap;

use serde_json::Value;

use super::beside::{Indexed, Runtimes, Services};

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
    // A job reaches, and its operator creates, Services of its own
    // namespace: grouped and indexed once, so that a namespace of thousands
    // of jobs and Services costs their number, not its square.
    let mut by_namespace: HashMap<Option<&str>, Vec<(usize, &Value)>> = HashMap::new();
    for (index, service) in values.iter().enumerate() {
        if service["kind"] == "Service" {
            by_namespace
                .entry(service["metadata"]["namespace"].as_str())
                .or_default()
                .push((index, service));
        }
    }
    let services: HashMap<Option<&str>, Services<'_>> = by_namespace
        .into_iter()
        .map(|(namespace, list)| (namespace, Services::new(list)))
        .collect();
    let none = Services::new(Vec::new());
    let runtimes = Runtimes::new(runtimes);
    for (index, job) in values.iter().enumerate() {
        let beside = services
            .get(&job["metadata"]["namespace"].as_str())
            .unwrap_or(&none);
        let job = Indexed { index, value: job };
        match job.value["kind"].as_str() {
            Some(trainjob::KIND) => {
                let ports = runtime_port_names(job.value, &runtimes);
                trainjob_services(job, beside, &ports, problems);
            }
            Some(pytorchjob::KIND) => pytorchjob_services(job, beside, problems),
            Some(job::KIND) => job_service(job, beside, problems),
            _ => {}
        }
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

/// A problem with the object `value`, found there by its index: two
/// objects of one `Kind/name` each get their own.
fn operator(value: Indexed<'_>, path: &str, message: String) -> Problem {
    let mut problem = Problem::operator(&id(value.value), path, message);
    problem.index = Some(value.index);
    problem
}

/// A Job's pods are `<hostname>.<subdomain>` only under a headless Service
/// named like the subdomain that selects them, and only before they are
/// ready if it publishes them then (Kubernetes DNS for Services and Pods):
/// without it, ranks never find pod 0 and wait until the rendezvous times
/// out. A Job without a `subdomain` asks for nothing.
fn job_service(job: Indexed<'_>, services: &Services<'_>, problems: &mut Vec<Problem>) {
    let template = &job.value["spec"]["template"];
    let Some(subdomain) = template.pointer("/spec/subdomain").and_then(Value::as_str) else {
        return;
    };
    let Some(&service) = services.named(subdomain).first() else {
        problems.push(operator(
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
            service.value.pointer("/spec/clusterIP") == Some(&Value::from("None")),
            "/spec/clusterIP",
            "is not headless (`clusterIP: None`): the pods get no names under it",
        ),
        (
            selects(service.value, &labels),
            "/spec/selector",
            "does not select the Job's pods: they get no names under it",
        ),
        (
            service.value.pointer("/spec/publishNotReadyAddresses") == Some(&Value::Bool(true)),
            "/spec/publishNotReadyAddresses",
            "does not publish pods before they are ready: ranks cannot reach pod 0 while they start",
        ),
    ];
    for (holds, path, what) in checks {
        if !holds {
            problems.push(operator(
                service,
                path,
                format!(
                    "this Service names Job `{}`'s pods (their `subdomain`) but {what}",
                    name(job.value)
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
fn runtime_port_names(job: &Value, runtimes: &Runtimes<'_>) -> Vec<String> {
    let runtime = runtimes.named(job);
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
    job: Indexed<'_>,
    services: &Services<'_>,
    ports: &[String],
    problems: &mut Vec<Problem>,
) {
    let job_name = name(job.value);
    // What node 0 is labelled: by the patches, by JobSet and by Kubernetes.
    let mut rank0 = serde_json::Map::new();
    template_labels(&job.value["spec"], &mut rank0);
    let jobset_name = [(trainjob::LABEL_JOBSET_NAME, job_name)];
    for (key, value) in jobset_name
        .into_iter()
        .chain(crate::cluster::jobset::RANK0_LABELS)
    {
        rank0.insert(key.to_owned(), Value::String(value.to_owned()));
    }
    for &service in services.named(job_name) {
        problems.push(operator(
            service,
            "/metadata/name",
            format!(
                "JobSet creates its headless Service `{job_name}` only when no Service of that name exists; this one would take its place, and rank 0's address `{job_name}-{node}-0-0.{job_name}` would never resolve",
                node = trainjob::NODE
            ),
        ));
    }
    for service in services.selecting(&rank0) {
        for (i, port) in service_ports(service.value) {
            if port["targetPort"]
                .as_str()
                .is_some_and(|p| !ports.iter().any(|n| n == p))
            {
                problems.push(operator(
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
fn pytorchjob_services(job: Indexed<'_>, services: &Services<'_>, problems: &mut Vec<Problem>) {
    let job_name = name(job.value);
    let replicas = job
        .value
        .pointer("/spec/pytorchReplicaSpecs")
        .and_then(Value::as_object);
    // The Services named as the operator names one of this job's pod
    // Services: `<job>-<replica type>-<index>`, the index below its count.
    for (kind, spec) in replicas.into_iter().flatten() {
        let stem = format!("{job_name}-{}", kind.to_ascii_lowercase());
        let count = spec["replicas"].as_u64().unwrap_or(0);
        let named = services.stems.get(stem.as_str()).into_iter().flatten();
        for &service in named {
            let index = name(service.value)[stem.len() + 1..].parse::<u64>();
            if index.is_ok_and(|i| i < count) {
                problems.push(operator(
                    service,
                    "/metadata/name",
                    format!(
                        "the Training Operator names one of `{job_name}`'s pod Services `{}`; this Service would collide with it",
                        name(service.value)
                    ),
                ));
            }
        }
    }
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
    for service in services.selecting(&rank0_labels) {
        for (i, port) in service_ports(service.value) {
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
