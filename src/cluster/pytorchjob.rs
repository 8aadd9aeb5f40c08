//! The Training Operator (kubeflow/trainer v1.9.4, which holds the v1
//! Training Operator) as it makes a PyTorchJob's pods:
//!
//! - defaults (`pkg/apis/kubeflow.org/v1/pytorch_defaults.go`
//!   `SetDefaults_PyTorchJob`): 1 replica, restart policy `OnFailure`, the
//!   `pytorch` container's port `pytorchjob-port` 23456, `nprocPerNode`
//!   `auto` unless `elasticPolicy.nProcPerNode` is set, an elastic policy's
//!   missing min/max from the other or from the Worker replicas.
//! - pods (`pkg/controller.v1/common/pod.go` `createNewPod`): named
//!   `<job>-<master|worker>-<i>`, Masters first; labelled
//!   `training.kubeflow.org/job-name`, `operator-name`, `replica-type`,
//!   `replica-index`, and `job-role: master` on the Master, or on Worker 0
//!   when there is none (`IsMasterRole`); each with a headless Service of its
//!   own name selecting it (`common/service.go`), so `<pod>` resolves.
//! - env (`pkg/controller.v1/pytorch/envvar.go` `setPodEnv`, `master.go`,
//!   `elastic.go`), appended to every container's own: `PYTHONUNBUFFERED=1`;
//!   with a Master, `MASTER_PORT`, `PET_MASTER_PORT` (the Master's
//!   `pytorchjob-port`), `MASTER_ADDR`, `PET_MASTER_ADDR` (`<job>-master-0`),
//!   `WORLD_SIZE` (all replicas × `nprocPerNode`, 1 when not a number),
//!   `RANK` and `PET_NODE_RANK` (the index, +1 on Workers);
//!   `PET_NPROC_PER_NODE`; then on an elastic job `PET_RDZV_ENDPOINT`
//!   (`rdzvHost`, default `<job>-worker-0`, `:` `rdzvPort`, default the
//!   Worker's port), `PET_RDZV_BACKEND` (default `c10d`), `PET_NNODES`
//!   (`min:max`), `PET_MAX_RESTARTS`, `PET_NPROC_PER_NODE` (from
//!   `elasticPolicy.nProcPerNode`), `PET_RDZV_ID`, `PET_RDZV_CONF`
//!   (`k=v,…`), `PET_STANDALONE`; else `PET_NNODES` = all replicas.
//!   v1.7.0 sets `PET_NPROC_PER_NODE` with a Master only.
//! - status (`pytorchjob_controller.go` `UpdateJobStatus`): with a Master the
//!   job succeeds when the Master does; without, when every Worker does or,
//!   on an elastic job, when any Worker has; a failed replica fails the job
//!   when its restart policy is `Never`, else it is restarted up to the run
//!   policy's `backoffLimit`.
//!
//! Not emulated: the Workers' `init-pytorch` container
//! (`initcontainer.go`), which waits until the Master's name resolves; here
//! every name resolves from the start.

use serde_json::Value as Json;

use super::{Pod, Success, Workload};

pub const API_VERSION: &str = "kubeflow.org/v1";
pub const KIND: &str = "PyTorchJob";

/// A Training Operator release, for what admission takes: v1.7 validates a
/// PyTorchJob in its controller only (kubeflow/trainer v1.7.0,
/// `pkg/apis/kubeflow.org/v1/pytorch_validation.go`
/// `ValidateV1PyTorchJob`, called from `pytorchjob_controller.go`
/// `Reconcile`: the API server takes the job, the operator records a
/// `FailedValidation` event and never makes its pods); v1.8 and v1.9 in a
/// webhook (`pkg/webhooks/pytorch/pytorchjob_webhook.go`), v1.9 with more
/// rules (`managedBy`, Workers for an elastic job, Workers' replicas).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Release {
    V1_7,
    V1_8,
    #[default]
    V1_9,
}

impl Release {
    /// The tag its rules were read at.
    pub fn tag(self) -> &'static str {
        match self {
            Release::V1_7 => "v1.7.0",
            Release::V1_8 => "v1.8.0",
            Release::V1_9 => "v1.9.2",
        }
    }

    /// As a person names it: `v1.7`.
    pub fn name(self) -> &'static str {
        match self {
            Release::V1_7 => "v1.7",
            Release::V1_8 => "v1.8",
            Release::V1_9 => "v1.9",
        }
    }
}
/// The container the operator looks for.
pub const CONTAINER: &str = "pytorch";
/// The operator's rendezvous port and its required name: `MASTER_PORT` and
/// `PET_MASTER_PORT` on a job with a Master, the `PET_RDZV_ENDPOINT` port of an
/// elastic one (kubeflow/trainer v1.9.4, `pkg/apis/kubeflow.org/v1/pytorch_types.go`
/// and `pkg/controller.v1/pytorch/{master,elastic}.go`).
pub const PORT_NAME: &str = "pytorchjob-port";
pub const PORT: u16 = 23456;
/// On a job with a Master, every Worker gets the operator's `init-pytorch`
/// init container, which looks the Master's name (`<job>-master-0`) up at
/// most this many times, this many seconds apart, and fails when it never
/// resolves (kubeflow/trainer v1.7.0–v1.9.4,
/// `pkg/controller.v1/pytorch/initcontainer.go` `setInitContainer`,
/// `pkg/config/config.go` `PyTorchInitContainerMaxTriesDefault`, the
/// operator's `--pytorch-init-container-max-tries`). The Master's headless
/// Service does not publish pods that are not Ready
/// (`pkg/controller.v1/common/service.go`), so the name resolves only once
/// the Master is Ready: a Worker waits about 200 s for it.
pub const MASTER_LOOKUPS: u32 = 100;
/// That init container's name.
pub const INIT_CONTAINER: &str = "init-pytorch";
pub const MASTER_LOOKUP_INTERVAL_SECONDS: u32 = 2;
/// The prefix of every label the operator puts on its pods.
pub const LABEL_PREFIX: &str = "training.kubeflow.org/";
pub const LABEL_JOB_NAME: &str = "training.kubeflow.org/job-name";
pub const LABEL_JOB_ROLE: &str = "training.kubeflow.org/job-role";
pub const LABEL_REPLICA_TYPE: &str = "training.kubeflow.org/replica-type";
pub const LABEL_REPLICA_INDEX: &str = "training.kubeflow.org/replica-index";

/// The port the webhook gives the `pytorch` container when it has none
/// named `pytorchjob-port`.
const DEFAULT_PORT: u64 = PORT as u64;

/// The pods of a PyTorchJob, as the Training Operator v1.9 makes them.
pub fn workload(job: &Json) -> Result<Workload, String> {
    workload_at(job, Release::default())
}

/// The pods of a PyTorchJob, as the Training Operator of `release` makes
/// them: v1.7.0 sets `PET_NPROC_PER_NODE` only with a Master, before
/// `PET_NODE_RANK` (kubeflow/trainer v1.7.0 and v1.8.1,
/// `pkg/controller.v1/pytorch/envvar.go` `setPodEnv`).
pub fn workload_at(job: &Json, release: Release) -> Result<Workload, String> {
    let name = super::text(job, "/metadata/name", "the PyTorchJob")?;
    let namespace = super::namespace_of(job).to_owned();
    let spec = &job["spec"];
    let types = replica_types(name, spec)?;
    let replicas = |rtype: &str| -> Result<Option<u64>, String> {
        types
            .iter()
            .find(|(t, _)| *t == rtype)
            .map(|(_, r)| super::count(r, "/replicas", 1))
            .transpose()
    };
    let masters = replicas("Master")?;
    let workers = replicas("Worker")?;
    let total = masters.unwrap_or(0).saturating_add(workers.unwrap_or(0));
    let elastic = spec["elasticPolicy"]
        .is_object()
        .then(|| &spec["elasticPolicy"]);
    let nproc = match (&spec["nprocPerNode"], elastic) {
        (Json::String(s), _) => Some(s.clone()),
        (Json::Null, Some(e)) if !e["nProcPerNode"].is_null() => None,
        (Json::Null, _) => Some("auto".to_owned()),
        (other, _) => Some(other.to_string()),
    };
    let port_of = |rtype: &str| {
        types
            .iter()
            .find(|(t, _)| *t == rtype)
            .map_or(DEFAULT_PORT, |(_, r)| port(&r["template"]["spec"]))
    };
    let mut env = vec![super::env_value("PYTHONUNBUFFERED", "1")];
    if masters.is_some() {
        let port = port_of("Master").to_string();
        let addr = format!("{name}-master-0");
        let world =
            total.saturating_mul(nproc.as_deref().and_then(|n| n.parse().ok()).unwrap_or(1));
        env.extend([
            super::env_value("MASTER_PORT", &port),
            super::env_value("PET_MASTER_PORT", &port),
            super::env_value("MASTER_ADDR", &addr),
            super::env_value("PET_MASTER_ADDR", &addr),
            super::env_value("WORLD_SIZE", &world.to_string()),
        ]);
    }
    let nproc_env = nproc
        .as_deref()
        .map(|n| super::env_value("PET_NPROC_PER_NODE", n));
    let v1_7 = release == Release::V1_7;
    let mut tail = Vec::new();
    if !v1_7 {
        tail.extend(nproc_env.clone());
    }
    match elastic {
        Some(policy) => tail.extend(elastic_env(name, policy, workers, port_of("Worker"))?),
        None => tail.push(super::env_value("PET_NNODES", &total.to_string())),
    }
    let backoff = spec["runPolicy"]["backoffLimit"].as_u64();
    let mut pods = Vec::new();
    let mut base = 0u64;
    for (rtype, replica) in &types {
        let count = super::count(replica, "/replicas", 1)?;
        for index in super::made(base, count, total) {
            let rank = if *rtype == "Worker" && masters.is_some() {
                index + 1
            } else {
                index
            };
            let mut vars = env.clone();
            if masters.is_some() {
                vars.push(super::env_value("RANK", &rank.to_string()));
                if v1_7 {
                    vars.extend(nproc_env.clone());
                }
                vars.push(super::env_value("PET_NODE_RANK", &rank.to_string()));
            }
            vars.extend(tail.iter().cloned());
            let master_role = *rtype == "Master" || (masters.is_none() && index == 0);
            let mut made = pod(name, &namespace, rtype, replica, index, &vars, master_role);
            made.retries = retries(replica, backoff);
            pods.push(made);
        }
        base = base.saturating_add(count);
    }
    let (success, notes) = ending(name, spec, &types, masters.is_some(), elastic.is_some());
    let services = pods.iter().map(pod_service).collect();
    Ok(Workload {
        job: format!("PyTorchJob/{name}"),
        suffixed: false,
        made_by: "the Training Operator",
        trainer: CONTAINER.to_owned(),
        services,
        pods,
        total,
        success,
        deadline: spec["runPolicy"]["activeDeadlineSeconds"].as_u64(),
        group: None,
        notes,
    })
}

/// The replica specs, Master first, their types in the case the operator
/// gives them (`setPyTorchTypeNamesToCamelCase`).
fn replica_types<'a>(name: &str, spec: &'a Json) -> Result<Vec<(&'static str, &'a Json)>, String> {
    let replica_specs = spec["pytorchReplicaSpecs"]
        .as_object()
        .ok_or_else(|| format!("PyTorchJob/{name} has no `spec.pytorchReplicaSpecs`"))?;
    let mut types: Vec<(&'static str, &Json)> = Vec::new();
    for (written, replica) in replica_specs {
        let rtype = match written.to_lowercase().as_str() {
            "master" => "Master",
            "worker" => "Worker",
            _ => {
                return Err(format!(
                    "PyTorchJob/{name} has a replica type `{written}`; the operator knows Master and Worker"
                ));
            }
        };
        types.push((rtype, replica));
    }
    types.sort_by_key(|(rtype, _)| *rtype != "Master");
    Ok(types)
}

/// How the job ends (`UpdateJobStatus`), and what trainc run does not do
/// of it.
fn ending(
    name: &str,
    spec: &Json,
    types: &[(&str, &Json)],
    master: bool,
    elastic: bool,
) -> (Success, Vec<String>) {
    let success = match master {
        true => Success::Pod(format!("{name}-master-0")),
        false if elastic => Success::AnyPod,
        false => Success::AllPods,
    };
    let mut notes = Vec::new();
    let restarting = types
        .iter()
        .any(|(_, r)| !matches!(r["restartPolicy"].as_str(), Some("Never")));
    if restarting {
        let backoff = spec["runPolicy"]["backoffLimit"].as_u64().map_or_else(
            || "without a limit".to_owned(),
            |n| format!("up to {n} times (backoffLimit)"),
        );
        notes.push(format!(
            "the Training Operator would restart a failed pod {backoff}; trainc run ends the job at the first failure"
        ));
    }
    (success, notes)
}

/// How many failures of a replica's pod the operator tolerates
/// (kubeflow/trainer v1.9.2): under `restartPolicy: Never` the first failed
/// pod fails the job (`pytorchjob_controller.go` `UpdateJobStatus`: a
/// failed count above 0 with a policy of `Never`), and the backoff limit counts no pod of
/// such a replica (`pkg/core/job.go` `PastBackoffLimit`); under `OnFailure`,
/// `Always` and `ExitCode` the containers' restarts count against
/// `runPolicy.backoffLimit`, and without one there is no limit.
fn retries(replica: &Json, backoff: Option<u64>) -> Option<u64> {
    match replica["restartPolicy"].as_str() {
        Some("Never") => Some(0),
        _ => backoff,
    }
}

/// The `pytorchjob-port` of the `pytorch` container, else the default the
/// webhook adds.
fn port(pod_spec: &Json) -> u64 {
    pod_spec["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["name"] == CONTAINER)
        .flat_map(|c| c["ports"].as_array().into_iter().flatten())
        .find(|p| p["name"] == PORT_NAME)
        .and_then(|p| p["containerPort"].as_u64())
        .unwrap_or(DEFAULT_PORT)
}

/// `elastic.go` `Generate`, in its order.
fn elastic_env(
    name: &str,
    policy: &Json,
    workers: Option<u64>,
    worker_port: u64,
) -> Result<Vec<Json>, String> {
    let host = policy["rdzvHost"]
        .as_str()
        .map_or_else(|| format!("{name}-worker-0"), str::to_owned);
    let port = policy["rdzvPort"].as_u64().unwrap_or(worker_port);
    let mut env = vec![
        super::env_value("PET_RDZV_ENDPOINT", &format!("{host}:{port}")),
        super::env_value(
            "PET_RDZV_BACKEND",
            policy["rdzvBackend"].as_str().unwrap_or("c10d"),
        ),
    ];
    let workers =
        workers.ok_or_else(|| format!("PyTorchJob/{name} is elastic but has no Worker"))?;
    let (min, max) = match (
        policy["minReplicas"].as_u64(),
        policy["maxReplicas"].as_u64(),
    ) {
        (Some(min), Some(max)) => (min, max),
        (Some(one), None) | (None, Some(one)) => (one, one),
        (None, None) => (workers, workers),
    };
    env.push(super::env_value("PET_NNODES", &format!("{min}:{max}")));
    if let Some(restarts) = policy["maxRestarts"].as_u64() {
        env.push(super::env_value("PET_MAX_RESTARTS", &restarts.to_string()));
    }
    if let Some(n) = policy["nProcPerNode"].as_u64() {
        env.push(super::env_value("PET_NPROC_PER_NODE", &n.to_string()));
    }
    if let Some(id) = policy["rdzvId"].as_str() {
        env.push(super::env_value("PET_RDZV_ID", id));
    }
    if let Some(conf) = policy["rdzvConf"].as_array().filter(|c| !c.is_empty()) {
        let pairs: Vec<String> = conf
            .iter()
            .map(|kv| {
                format!(
                    "{}={}",
                    kv["key"].as_str().unwrap_or(""),
                    kv["value"].as_str().unwrap_or("")
                )
            })
            .collect();
        env.push(super::env_value("PET_RDZV_CONF", &pairs.join(",")));
    }
    if policy["standalone"] == true {
        env.push(super::env_value("PET_STANDALONE", ""));
    }
    Ok(env)
}

fn pod(
    job: &str,
    namespace: &str,
    rtype: &str,
    replica: &Json,
    index: u64,
    env: &[Json],
    master_role: bool,
) -> Pod {
    let lower = rtype.to_lowercase();
    let name = format!("{job}-{lower}-{index}");
    let template = &replica["template"];
    let mut labels = super::meta_map(template, "labels");
    let mut ours = vec![
        (LABEL_JOB_NAME, job.to_owned()),
        (
            "training.kubeflow.org/operator-name",
            "pytorchjob-controller".to_owned(),
        ),
        (LABEL_REPLICA_TYPE, lower.clone()),
        (LABEL_REPLICA_INDEX, index.to_string()),
    ];
    if master_role {
        ours.push((LABEL_JOB_ROLE, "master".to_owned()));
    }
    super::add_meta(&mut labels, &ours);
    let mut spec = template["spec"].clone();
    if let Some(containers) = spec["containers"].as_array_mut() {
        for container in containers {
            let has_port = container["ports"]
                .as_array()
                .is_some_and(|ports| ports.iter().any(|p| p["name"] == PORT_NAME));
            if container["name"] == CONTAINER && !has_port {
                let mut ports = container["ports"].as_array().cloned().unwrap_or_default();
                ports.push(serde_json::json!({ "name": PORT_NAME, "containerPort": DEFAULT_PORT }));
                container["ports"] = Json::Array(ports);
            }
            for var in env {
                super::append_env(container, var.clone());
            }
        }
    }
    // The replica's restart policy becomes the pod's (`ExitCode` is `Never`
    // to the kubelet, the operator deciding by the exit code).
    let policy = match replica["restartPolicy"].as_str().unwrap_or("OnFailure") {
        "ExitCode" => "Never",
        other => other,
    };
    spec["restartPolicy"] = Json::String(policy.to_owned());
    Pod {
        hostname: spec["hostname"]
            .as_str()
            .map_or_else(|| name.clone(), str::to_owned),
        name,
        namespace: namespace.to_owned(),
        role: format!("{rtype} {index}"),
        labels,
        annotations: super::meta_map(template, "annotations"),
        on_failure: super::restart_words(Some(policy)).to_owned(),
        retries: None,
        spec,
        stage: 0,
    }
}

/// The headless Service the operator makes for each pod, of the pod's name,
/// selecting it by job name, replica type and index (`common/service.go`
/// `CreateNewService`).
fn pod_service(pod: &Pod) -> super::Service {
    let selector = [LABEL_JOB_NAME, LABEL_REPLICA_TYPE, LABEL_REPLICA_INDEX]
        .iter()
        .map(|key| {
            let value = pod
                .labels
                .get(*key)
                .and_then(Json::as_str)
                .unwrap_or_default();
            ((*key).to_owned(), value.to_owned())
        })
        .collect();
    super::Service {
        name: pod.name.clone(),
        namespace: pod.namespace.clone(),
        selector,
        headless: true,
    }
}
