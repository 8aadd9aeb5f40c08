//! A `kubeflow.org/v1 PyTorchJob` back into a spec.
//!
//! The Training Operator's defaults decide what a field left out means
//! (kubeflow/trainer v1.9.4, `pkg/apis/kubeflow.org/v1/pytorch_defaults.go`):
//! a replica's `replicas` is 1 and its `restartPolicy` `OnFailure`,
//! `nprocPerNode` is `auto`, replica types match case-insensitively
//! (`master`), and an elastic policy without bounds takes the Worker's count.

use serde_json::{Map, Value as Json, json};

use super::launch::{self, NProc};
use super::{Job, Others, Pod, master, pod};
use crate::cluster::pytorchjob::{
    CONTAINER, LABEL_JOB_NAME, LABEL_JOB_ROLE, LABEL_REPLICA_INDEX, LABEL_REPLICA_TYPE, PORT,
    PORT_NAME,
};
use crate::spec::defaults;

pub(super) const API_VERSION: &str = crate::cluster::pytorchjob::API_VERSION;

pub(super) fn import(job: &mut Job<'_>, object: &Json, others: &mut Others<'_, '_>) {
    let spec = &object["spec"];
    job.unknown_keys(
        spec,
        "/spec",
        &[
            "runPolicy",
            "elasticPolicy",
            "nprocPerNode",
            "pytorchReplicaSpecs",
        ],
        "not a field of a PyTorchJob the spec carries",
    );
    let replicas = replica_specs(job, &spec["pytorchReplicaSpecs"]);
    let Some((primary_type, primary)) = replicas.first().cloned() else {
        job.error(
            "/spec/pytorchReplicaSpecs",
            "the PyTorchJob has no Master or Worker",
            "add `pytorchReplicaSpecs.Master` or `Worker`",
        );
        return;
    };
    let base = format!("/spec/pytorchReplicaSpecs/{primary_type}");
    let elastic_policy = spec.get("elasticPolicy").is_some_and(Json::is_object);
    // A fixed-size job's Master may differ from its Workers (`[master]`);
    // an elastic job's pods are all Workers, alike.
    let pair = match replicas.as_slice() {
        [_, (worker_type, worker)] if !elastic_policy => Some(master::Pair {
            master: &primary,
            master_at: base.clone(),
            worker,
            worker_at: format!("/spec/pytorchReplicaSpecs/{worker_type}"),
            container: CONTAINER,
            restart_policies: true,
        }),
        [_, (worker_type, worker)] => {
            alike(job, &primary, worker_type, worker);
            None
        }
        _ => None,
    };
    let count = |r: &Json| r.get("replicas").and_then(Json::as_u64).unwrap_or(1);
    let fixed: u64 = replicas.iter().map(|(_, r)| count(r)).sum();
    let max_nodes = elastic(job, spec, &replicas, fixed);
    let restart = master::replica_restart(&primary);
    if restart != defaults::RESTART_POLICY {
        job.set("/policy/restartPolicy", json!(restart));
    }
    let pod_priority = primary
        .pointer("/template/spec/priorityClassName")
        .and_then(Json::as_str);
    run_policy(job, &spec["runPolicy"], max_nodes, pod_priority);
    let template = &primary["template"];
    super::metadata::import(
        job,
        &object["metadata"],
        Some((&template["metadata"], &format!("{base}/template/metadata"))),
    );
    let own = pod::own_labels(&job.name);
    let pod = Pod {
        spec: &template["spec"],
        base: format!("{base}/template/spec"),
        trainer: CONTAINER,
        max_nodes,
        own_labels: vec![
            own.clone(),
            Map::from_iter([(LABEL_JOB_NAME.to_owned(), json!(job.name.clone()))]),
        ],
    };
    let Some((container, pointer)) =
        pod::import_trainer(job, others, &pod, "the Training Operator runs")
    else {
        return;
    };
    super::container::full(job, container, &pointer);
    let flag = launch::import(job, container.get("command"), container.get("args"), true);
    let written = spec
        .get("nprocPerNode")
        .or_else(|| spec.pointer("/elasticPolicy/nProcPerNode"));
    let nproc = match (flag, written) {
        (Some(flag), _) => flag,
        (None, Some(value)) => NProc::parse(value).unwrap_or_else(|| {
            job.warn("/spec/nprocPerNode", format!("`nprocPerNode` {value} is not a count, `auto`, `cpu` or `gpu`; the spec says `auto`"), "");
            NProc::Keyword("auto".into())
        }),
        (None, None) => NProc::Keyword("auto".into()), // the operator's default
    };
    let (nproc, master_nproc) = match &pair {
        Some(pair) => master::split(job, pair, nproc),
        None => (nproc, None),
    };
    launch::set_nproc(job, &nproc, "/spec/nprocPerNode");
    if let Some(master_nproc) = master_nproc {
        master::set_nproc(job, &master_nproc);
    }
    ports(job, others, &primary_type, template, container, own);
}

/// `[ports]`: the Services that select the rank-0 pod, and the container
/// ports beyond the operator's own.
fn ports(
    job: &mut Job<'_>,
    others: &mut Others<'_, '_>,
    primary_type: &str,
    template: &Json,
    container: &Json,
    own: Map<String, Json>,
) {
    let labels = [
        (LABEL_JOB_NAME, job.name.clone()),
        (LABEL_JOB_ROLE, "master".to_owned()),
        (LABEL_REPLICA_TYPE, primary_type.to_lowercase()),
        (LABEL_REPLICA_INDEX, "0".to_owned()),
        (
            "training.kubeflow.org/operator-name",
            "pytorchjob-controller".to_owned(),
        ),
    ];
    super::ports::import_rank0(
        job,
        others,
        template,
        container,
        own,
        &labels,
        (PORT_NAME, PORT),
    );
}

/// The replica specs, the Master first; other types are reported.
fn replica_specs(job: &mut Job<'_>, specs: &Json) -> Vec<(String, Json)> {
    let mut found: Vec<(String, Json)> = Vec::new();
    for (key, value) in specs.as_object().into_iter().flatten() {
        match key.to_ascii_lowercase().as_str() {
            "master" | "worker" => found.push((key.clone(), value.clone())),
            _ => job.warn(
                &format!("/spec/pytorchReplicaSpecs/{key}"),
                format!(
                    "replica type `{key}` is not imported: a PyTorchJob has a Master and Workers"
                ),
                "",
            ),
        }
        job.unknown_keys(
            value,
            &format!("/spec/pytorchReplicaSpecs/{key}"),
            &["replicas", "restartPolicy", "template"],
            "a replica has `replicas`, `restartPolicy` and `template`",
        );
    }
    found.sort_by_key(|(key, _)| !key.eq_ignore_ascii_case("master"));
    found
}

/// The Master's and the Worker's pods, which a spec makes alike.
fn alike(job: &mut Job<'_>, primary: &Json, worker_type: &str, worker: &Json) {
    master::compare_templates(
        job,
        &primary["template"],
        &worker["template"],
        &format!("/spec/pytorchReplicaSpecs/{worker_type}/template"),
    );
    if master::replica_restart(primary) != master::replica_restart(worker) {
        job.warn(
            &format!("/spec/pytorchReplicaSpecs/{worker_type}/restartPolicy"),
            format!("the Worker's `restartPolicy` differs from the Master's; the spec has one, the Master's (`{}`)", master::replica_restart(primary)),
            "set `policy.restartPolicy` to the one you mean",
        );
    }
}

/// `replicas`: fixed from Master + Worker, or elastic `"min:max"`; returns
/// the most pods the job runs.
fn elastic(job: &mut Job<'_>, spec: &Json, replicas: &[(String, Json)], fixed: u64) -> u64 {
    let Some(policy) = spec.get("elasticPolicy").filter(|p| p.is_object()) else {
        if fixed != 1 {
            job.set("/replicas", json!(fixed));
        }
        // trainc builds a fixed-size job as a Master and Workers. Without a
        // Master the operator sets no MASTER_ADDR, RANK or WORLD_SIZE
        // (kubeflow/trainer v1.7.0–v1.9.4 `pkg/controller.v1/pytorch/
        // envvar.go` `setPodEnv`, `master.go` `Generate`): such a job's
        // command finds its peers its own way, and its pods are named
        // `<name>-worker-<i>` from 0.
        if !job.migrating
            && !replicas
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("master"))
        {
            let name = job.name.clone();
            job.warn(
                "/spec/pytorchReplicaSpecs",
                format!("a fixed-size job of Workers only is imported as a Master and {} Worker(s): the first pod becomes `{name}-master-0` (was `{name}-worker-0`), the Workers are renumbered from 0, and every pod gets the operator's MASTER_ADDR, RANK and WORLD_SIZE, which it sets only on a job with a Master", fixed.saturating_sub(1)),
                "check that the command runs with the operator's rendezvous (torchrun does), and change what refers to the old pod names (logs, dashboards, Services)",
            );
        }
        return fixed;
    };
    job.unknown_keys(
        policy,
        "/spec/elasticPolicy",
        &[
            "minReplicas",
            "maxReplicas",
            "rdzvBackend",
            "rdzvHost",
            "rdzvPort",
            "rdzvConf",
            "maxRestarts",
            "nProcPerNode",
        ],
        "the spec's `[elastic]` has the bounds, the rendezvous and `maxRestarts`",
    );
    if replicas
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("master"))
    {
        job.warn("/spec/elasticPolicy", "an elastic job with a Master is imported as Workers only: trainc's elastic jobs rendezvous among workers", "");
    }
    let bound = |key: &str| policy.get(key).and_then(Json::as_u64);
    let (min, max) = match (bound("minReplicas"), bound("maxReplicas")) {
        (Some(min), Some(max)) => (min, max),
        (Some(n), None) | (None, Some(n)) => (n, n),
        (None, None) => (fixed, fixed),
    };
    job.set("/replicas", json!(format!("{min}:{max}")));
    // The operator creates the Workers' `replicas`; trainc starts the
    // maximum unless told otherwise.
    if fixed != max {
        if (min..=max).contains(&fixed) {
            job.set("/elastic/startReplicas", json!(fixed));
        } else {
            job.warn(
                "/spec/pytorchReplicaSpecs",
                format!("the job starts {fixed} pods, outside its elastic range {min} to {max}; the spec starts {max}"),
                "",
            );
        }
    }
    if let Some(backend) = policy.get("rdzvBackend").and_then(Json::as_str)
        && backend != defaults::RDZV_BACKEND
    {
        job.set("/elastic/rdzvBackend", json!(backend));
    }
    match (
        policy.get("rdzvHost").and_then(Json::as_str),
        policy.get("rdzvPort").and_then(Json::as_u64),
    ) {
        (Some(host), Some(port)) => {
            job.set("/elastic/rdzvEndpoint", json!(format!("{host}:{port}")));
        }
        (None, None) => {}
        _ => job.warn(
            "/spec/elasticPolicy",
            "`rdzvHost` and `rdzvPort` go together; one alone is not imported",
            "set `[elastic] rdzvEndpoint = \"host:port\"`",
        ),
    }
    if let Some(conf) = policy.get("rdzvConf").and_then(Json::as_array) {
        let mut map = Map::new();
        for entry in conf {
            if let (Some(key), Some(value)) = (entry["key"].as_str(), entry["value"].as_str()) {
                map.insert(key.to_owned(), json!(value));
            }
        }
        if !map.is_empty() {
            job.set("/elastic/rdzvConf", Json::Object(map));
        }
    }
    if let Some(restarts) = policy.get("maxRestarts").filter(|r| r.is_u64()) {
        job.set("/elastic/maxRestarts", restarts.clone());
    }
    max
}

/// `runPolicy`: the spec's `[policy]`, gang scheduling and Volcano's queue.
fn run_policy(job: &mut Job<'_>, policy: &Json, max_nodes: u64, pod_priority: Option<&str>) {
    job.unknown_keys(
        policy,
        "/spec/runPolicy",
        &[
            "cleanPodPolicy",
            "ttlSecondsAfterFinished",
            "activeDeadlineSeconds",
            "backoffLimit",
            "suspend",
            "schedulingPolicy",
        ],
        "the spec's `[policy]` has the rest of `runPolicy`",
    );
    if let Some(clean) = policy.get("cleanPodPolicy").filter(|c| c.is_string()) {
        job.set("/policy/cleanPodPolicy", clean.clone());
    }
    for (key, field) in [
        ("ttlSecondsAfterFinished", "ttlAfterFinished"),
        ("activeDeadlineSeconds", "activeDeadline"),
    ] {
        if let Some(seconds) = policy.get(key).and_then(Json::as_u64) {
            job.set(&format!("/policy/{field}"), super::duration(seconds));
        }
    }
    if let Some(limit) = policy.get("backoffLimit").filter(|l| l.is_u64()) {
        job.set("/policy/backoffLimit", limit.clone());
    }
    if policy["suspend"] == true {
        job.set("/policy/suspend", json!(true));
    }
    let scheduling = &policy["schedulingPolicy"];
    job.unknown_keys(
        scheduling,
        "/spec/runPolicy/schedulingPolicy",
        &["minAvailable", "queue", "priorityClass"],
        "the spec says gang scheduling, the Volcano queue and the priority class",
    );
    if let Some(min) = scheduling.get("minAvailable").and_then(Json::as_u64) {
        job.set("/scheduling/gang", json!(true));
        let min_nodes = job
            .get("/replicas")
            .and_then(Json::as_str)
            .and_then(|r| r.split(':').next()?.parse::<u64>().ok())
            .unwrap_or(max_nodes);
        if min != min_nodes {
            job.warn("/spec/runPolicy/schedulingPolicy/minAvailable", format!("`minAvailable` {min} is not every pod; trainc's gang scheduling waits for all {min_nodes}"), "");
        }
    }
    if let Some(queue) = scheduling.get("queue").filter(|q| q.is_string()) {
        job.set("/scheduling/volcanoQueue", queue.clone());
    }
    // The operator gives `priorityClass` to the PodGroup alone (kubeflow/
    // trainer v1.9.4 `pkg/controller.v1/common/job.go`); the pods take
    // theirs from `priorityClassName`, which trainc writes into both. So a
    // PodGroup priority the pods do not share has no spec field: made the
    // pods' it would let them preempt.
    if let Some(class) = scheduling.get("priorityClass").and_then(Json::as_str)
        && pod_priority != Some(class)
    {
        let pods = pod_priority.map_or_else(
            || "the pods have none".to_owned(),
            |p| format!("the pods have `{p}`"),
        );
        job.warn(
            "/spec/runPolicy/schedulingPolicy/priorityClass",
            format!("`schedulingPolicy.priorityClass` `{class}` is the PodGroup's priority alone ({pods}); the spec has no field for it, so it is not imported"),
            "`scheduling.priorityClassName` gives the pods and the PodGroup one PriorityClass: set it if the pods should have that priority too (they may then preempt other pods)",
        );
    }
}
