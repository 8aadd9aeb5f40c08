//! Kubeflow Trainer (v2.0.0–v2.3.0) and JobSet as they make a TrainJob's
//! pods, from the TrainJob and the runtime it names:
//!
//! - the runtime (`pkg/runtime/core/trainingruntime.go` `NewObjects`): the
//!   TrainingRuntime or ClusterTrainingRuntime of `runtimeRef` (default
//!   kind ClusterTrainingRuntime), its JobSet template's replicated jobs.
//! - the trainer (`pkg/runtime/framework/plugins/jobset/builder.go`
//!   `Trainer`): in the job labelled
//!   `trainer.kubeflow.org/trainjob-ancestor-step: trainer`, the container
//!   `node` takes the TrainJob's `image`, `command`, `args`,
//!   `resourcesPerNode`; its `env` is upserted into the container's; the
//!   job runs `numNodes` pods (else the runtime's `mlPolicy.numNodes`).
//! - the torch plugin (`plugins/torch/torch.go` `EnforceMLPolicy`, the same
//!   variables at v2.0.0, v2.1.0 and v2.3.0): upserts `PET_NNODES`,
//!   `PET_NPROC_PER_NODE` ([`crate::trainer::torch::procs_per_node`]),
//!   `PET_NODE_RANK` from the pod's completion index, `PET_MASTER_ADDR`
//!   `<job>-node-0-0.<job>` and `PET_MASTER_PORT` 29500
//!   (`pkg/constants/constants.go` `ContainerTrainerPort`), and the port.
//!   For the torchtune entrypoint (`tune run`) it rewrites the command
//!   instead; trainc run does not emulate that.
//! - the pod patches, by API level: v2.0 `podSpecOverrides`, v2.1–v2.2
//!   `podTemplateOverrides` (`targetJobs`), v2.3 `runtimePatches`
//!   (`trainingRuntimeSpec.template.spec.replicatedJobs[name]`), merged as
//!   strategic merge does: containers, volumes and env by name, mounts by
//!   path, other lists replaced.
//! - JobSet (kubernetes-sigs/jobset v0.8–v0.12, `jobset_controller.go`
//!   `constructJob`, `GenJobName`): job `i` of replicated job `r` is
//!   `<job>-<r>-<i>`, Indexed, its pods' subdomain the TrainJob's name (or
//!   the runtime's `network.subdomain`; none with `enableDNSHostnames:
//!   false`, [`pod_domain`]), with a headless Service of that name selecting
//!   `jobset.sigs.k8s.io/jobset-name`; a replicated job with `dependsOn`
//!   starts when those jobs are `Complete` (or `Ready`). The JobSet
//!   succeeds when every job does (the default `successPolicy`).

use serde_json::Value as Json;

use super::job::COMPLETION_INDEX_FIELD;
use super::{Success, Workload};
use crate::trainer::Release;
use crate::trainer::runtime::{ANCESTOR_LABEL, Runtime};

pub const API_VERSION: &str = "trainer.kubeflow.org/v1alpha1";
/// The API group of TrainJobs and the runtimes they name.
pub const GROUP: &str = "trainer.kubeflow.org";
pub const KIND: &str = "TrainJob";
/// The replicated job and container of the torch runtime that patches target.
pub const NODE: &str = "node";
/// The torch runtime's `ContainerTrainerPort`: `PET_MASTER_PORT`, where rank 0
/// serves the TCPStore, and the port it adds to the `node` container
/// (kubeflow/trainer v2.0.0–v2.3.0, `pkg/constants/constants.go` and
/// `pkg/runtime/framework/plugins/torch/torch.go`).
pub const TRAINER_PORT: u16 = 29500;
/// The env the torch runtime sets on the `node` container itself; its webhook
/// rejects a TrainJob whose `trainer.env` sets one (`TorchRunReservedEnvNames`,
/// kubeflow/trainer v2.0.0–v2.3.0, `pkg/constants/constants.go`).
pub const RESERVED_ENV: &[&str] = &[
    "PET_NNODES",
    "PET_NPROC_PER_NODE",
    "PET_NODE_RANK",
    "PET_MASTER_ADDR",
    "PET_MASTER_PORT",
];
/// Labels JobSet puts on every pod it creates.
pub use super::jobset::{LABEL_JOB_INDEX, LABEL_JOBSET_NAME, LABEL_REPLICATED_JOB};
/// Set by Kubernetes on the pods of an Indexed Job (the `node` job is one).
pub const LABEL_COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";

/// The trainer's port (`ContainerTrainerPort`).
const PORT: u64 = TRAINER_PORT as u64;

/// Where the torch plugin points torchrun's rendezvous: pod 0 of the first
/// `node` job under the TrainJob's own name, whatever the runtime's JobSet
/// network says (kubeflow/trainer v2.0.0–v2.3.0,
/// `pkg/runtime/framework/plugins/torch/torch.go` `EnforceMLPolicy`:
/// `<trainjob>-node-0-0.<trainjob>`).
pub fn master_addr(name: &str) -> String {
    format!("{name}-{NODE}-0-0.{name}")
}

/// The DNS subdomain JobSet gives the pods of the TrainJob `name` made from
/// a runtime's `spec`, and the name of the headless Service it creates for
/// them ([`super::jobset::pod_domain`] of the runtime's JobSet).
pub fn pod_domain(name: &str, runtime_spec: &Json) -> Option<String> {
    super::jobset::pod_domain(name, &runtime_spec["template"]["spec"])
}

/// The pods of a TrainJob on its runtime.
pub fn workload(
    job: &Json,
    objects: &[Json],
    runtimes: &[Runtime],
    release: Release,
) -> Result<Workload, String> {
    let name = super::text(job, "/metadata/name", "the TrainJob")?;
    let namespace = super::namespace_of(job);
    let spec = &job["spec"];
    let runtime = runtime(name, namespace, spec, objects, runtimes, release)?;
    let trainer = &spec["trainer"];
    let torch = runtime.object["spec"]["mlPolicy"]["torch"].is_object();
    let nodes = trainer["numNodes"]
        .as_u64()
        .or_else(|| runtime.object["spec"]["mlPolicy"]["numNodes"].as_u64())
        .unwrap_or(1);
    let mut replicated: Vec<Json> = runtime.object["spec"]["template"]["spec"]["replicatedJobs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if replicated.is_empty() {
        return Err(format!(
            "the runtime `{}` has no replicated jobs",
            runtime.name
        ));
    }
    let procs = crate::trainer::torch::procs_per_node(release, trainer, Some(&runtime));
    let procs = match procs {
        crate::trainer::torch::Procs::Count(n) => n.to_string(),
        crate::trainer::torch::Procs::Word(w) => w,
    };
    for rjob in &mut replicated {
        enforce_trainer(rjob, name, trainer, nodes, torch.then_some(procs.as_str()));
    }
    apply_patches(name, spec, &mut replicated)?;
    let template = &runtime.object["spec"]["template"];
    let mut jobset_spec = template["spec"].clone();
    jobset_spec["replicatedJobs"] = Json::Array(replicated);
    let jobset = super::jobset::defaulted(&serde_json::json!({
        "metadata": {
            "name": name,
            "namespace": namespace,
            "annotations": template["metadata"]["annotations"],
        },
        "spec": jobset_spec,
    }));
    let made = super::jobset::pods(name, namespace, &jobset)?;
    let (group, mut said) = super::jobset::group(&jobset["spec"]);
    if trainer["command"]
        .as_array()
        .is_some_and(|c| c == &[Json::from("tune"), Json::from("run")])
    {
        said.push("the torch plugin rewrites a `tune run` command (torchtune); trainc run runs it as written".to_owned());
    }
    Ok(Workload {
        job: format!("TrainJob/{name}"),
        suffixed: true,
        made_by: "JobSet for Kubeflow Trainer",
        trainer: NODE.to_owned(),
        pods: made.pods,
        total: made.total,
        success: Success::AllPods,
        deadline: spec["activeDeadlineSeconds"].as_u64(),
        group,
        services: made.services,
        notes: said,
    })
}

/// The trainer's job of the runtime (`rjob`, when it is the `trainer`
/// ancestor) as the jobset plugin and, with `procs` (a torch policy), the
/// torch plugin make it.
fn enforce_trainer(rjob: &mut Json, name: &str, trainer: &Json, nodes: u64, procs: Option<&str>) {
    if rjob["template"]["metadata"]["labels"][ANCESTOR_LABEL] != "trainer" {
        return;
    }
    rjob["template"]["spec"]["parallelism"] = Json::from(nodes);
    rjob["template"]["spec"]["completions"] = Json::from(nodes);
    let pod_spec = &mut rjob["template"]["spec"]["template"]["spec"];
    let Some(node) = pod_spec["containers"]
        .as_array_mut()
        .and_then(|c| c.iter_mut().find(|c| c["name"] == NODE))
    else {
        return;
    };
    apply_trainer(node, trainer);
    if let Some(procs) = procs {
        for var in [
            super::env_value("PET_NNODES", &nodes.to_string()),
            super::env_value("PET_NPROC_PER_NODE", procs),
            super::env_field("PET_NODE_RANK", COMPLETION_INDEX_FIELD),
            super::env_value("PET_MASTER_ADDR", &master_addr(name)),
            super::env_value("PET_MASTER_PORT", &PORT.to_string()),
        ] {
            super::upsert_env(node, var);
        }
        let ports = node["ports"].as_array().cloned().unwrap_or_default();
        if !ports.iter().any(|p| p["containerPort"] == PORT) {
            let mut ports = ports;
            ports.push(serde_json::json!({ "containerPort": PORT }));
            node["ports"] = Json::Array(ports);
        }
    }
}

/// The runtime the TrainJob names: among the objects, then the cluster's
/// runtimes, then (a ClusterTrainingRuntime) what `release` ships.
fn runtime(
    name: &str,
    namespace: &str,
    spec: &Json,
    objects: &[Json],
    runtimes: &[Runtime],
    release: Release,
) -> Result<Runtime, String> {
    let wanted = spec["runtimeRef"]["name"]
        .as_str()
        .ok_or_else(|| format!("TrainJob/{name} has no `spec.runtimeRef.name`"))?;
    let kind = spec["runtimeRef"]["kind"]
        .as_str()
        .unwrap_or("ClusterTrainingRuntime");
    let namespaced = kind == "TrainingRuntime";
    let in_objects = objects.iter().find(|o| {
        o["apiVersion"] == crate::cluster::trainjob::API_VERSION
            && o["kind"] == kind
            && o["metadata"]["name"] == wanted
            && (!namespaced || super::namespace_of(o) == namespace)
    });
    if let Some(object) = in_objects {
        return Runtime::from_json(object).map_err(|e| format!("the {kind} `{wanted}`: {e}"));
    }
    let from_file = runtimes.iter().find(|r| {
        r.name == wanted
            && r.kind.as_str() == kind
            && (!namespaced || r.namespace.as_deref().unwrap_or("default") == namespace)
    });
    if let Some(runtime) = from_file {
        return Ok(runtime.clone());
    }
    if let Some(runtime) = crate::trainer::catalogue::find(release, wanted).filter(|_| !namespaced)
    {
        return Ok(runtime.clone());
    }
    Err(format!(
        "TrainJob/{name} runs on the {kind} `{wanted}`, which neither the objects, the runtimes file (`--runtimes`) nor Trainer {} holds",
        release.tag()
    ))
}

/// The TrainJob's trainer fields onto the `node` container.
fn apply_trainer(node: &mut Json, trainer: &Json) {
    for (from, to) in [
        ("image", "image"),
        ("command", "command"),
        ("args", "args"),
        ("resourcesPerNode", "resources"),
    ] {
        if !trainer[from].is_null() {
            node[to] = trainer[from].clone();
        }
    }
    if let Some(env) = trainer["env"].as_array() {
        for var in env {
            super::upsert_env(node, var.clone());
        }
    }
}

/// Applies the TrainJob's pod patches to the replicated jobs they target.
fn apply_patches(name: &str, spec: &Json, replicated: &mut [Json]) -> Result<(), String> {
    let target = |rjob: &Json, patch: &Json| {
        patch["targetJobs"]
            .as_array()
            .is_some_and(|t| t.iter().any(|j| j["name"] == rjob["name"]))
    };
    for patch in spec["podSpecOverrides"].as_array().into_iter().flatten() {
        let mut fields = patch.clone();
        fields.as_object_mut().map(|f| f.remove("targetJobs"));
        for rjob in replicated.iter_mut().filter(|r| target(r, patch)) {
            merge(
                &mut rjob["template"]["spec"]["template"]["spec"],
                &fields,
                "",
            );
        }
    }
    for patch in spec["podTemplateOverrides"]
        .as_array()
        .into_iter()
        .flatten()
    {
        for rjob in replicated.iter_mut().filter(|r| target(r, patch)) {
            let pod = &mut rjob["template"]["spec"]["template"];
            merge(&mut pod["metadata"], &patch["metadata"], "");
            merge(&mut pod["spec"], &patch["spec"], "");
        }
    }
    for patch in spec["runtimePatches"].as_array().into_iter().flatten() {
        let jobs = &patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"];
        for job_patch in jobs.as_array().into_iter().flatten() {
            let rjob = replicated
                .iter_mut()
                .find(|r| r["name"] == job_patch["name"])
                .ok_or_else(|| {
                    format!(
                        "TrainJob/{name} patches the replicated job `{}`, which its runtime does not have",
                        job_patch["name"].as_str().unwrap_or("?")
                    )
                })?;
            merge(&mut rjob["template"], &job_patch["template"], "");
        }
    }
    Ok(())
}

/// The key that identifies an item of the list at `field`, as the
/// Kubernetes types' `patchMergeKey` says.
fn merge_key(field: &str) -> Option<&'static str> {
    match field {
        "containers" | "initContainers" | "volumes" | "env" | "imagePullSecrets" => Some("name"),
        "volumeMounts" => Some("mountPath"),
        "ports" => Some("containerPort"),
        _ => None,
    }
}

/// Merges `patch` into `base`: maps key by key, keyed lists item by item,
/// anything else replaced. `field` is the name `base` is found under.
pub fn merge(base: &mut Json, patch: &Json, field: &str) {
    match (base, patch) {
        (Json::Object(base), Json::Object(patch)) => {
            for (key, value) in patch {
                merge(base.entry(key.clone()).or_insert(Json::Null), value, key);
            }
        }
        (Json::Array(base), Json::Array(patch)) if merge_key(field).is_some() => {
            let key = merge_key(field).expect("checked");
            for item in patch {
                match base.iter_mut().find(|b| b[key] == item[key]) {
                    Some(existing) => merge(existing, item, ""),
                    None => base.push(item.clone()),
                }
            }
        }
        (base, patch) if !patch.is_null() => *base = patch.clone(),
        _ => {}
    }
}
