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
pub const LABEL_JOBSET_NAME: &str = "jobset.sigs.k8s.io/jobset-name";
pub const LABEL_REPLICATED_JOB: &str = "jobset.sigs.k8s.io/replicatedjob-name";
pub const LABEL_JOB_INDEX: &str = "jobset.sigs.k8s.io/job-index";
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

/// The DNS subdomain JobSet gives the pods of the JobSet `name` made from a
/// runtime's `spec` (and the name of the headless Service it creates for
/// them): `network.subdomain` when set, else the JobSet's name; `None` when
/// `network.enableDNSHostnames` is `false`, which JobSet's webhook defaults
/// to `true` (kubernetes-sigs/jobset v0.8–v0.12,
/// `pkg/controllers/jobset_controller.go` `GetSubdomain` and
/// `constructJob`, `pkg/webhooks/jobset_webhook.go` `Default`).
pub fn pod_domain(name: &str, runtime_spec: &Json) -> Option<String> {
    let network = &runtime_spec["template"]["spec"]["network"];
    if network["enableDNSHostnames"] == false {
        return None;
    }
    Some(
        network["subdomain"]
            .as_str()
            .filter(|s| !s.is_empty())
            .unwrap_or(name)
            .to_owned(),
    )
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
    let stages = stages(&replicated)?;
    let mut pods = Vec::new();
    let mut total = 0u64;
    for rjob in &replicated {
        let copies = super::count(rjob, "/replicas", 1)?;
        let count = super::count(&rjob["template"], "/spec/completions", 1)?;
        total = total.saturating_add(copies.saturating_mul(count));
    }
    let domain = pod_domain(name, &runtime.object["spec"]);
    let claims = claim_templates(&runtime.object["spec"]);
    let mut base = 0u64;
    for (rjob, stage) in replicated.iter().zip(stages) {
        let rname = rjob["name"].as_str().unwrap_or_default();
        let copies = super::count(rjob, "/replicas", 1)?;
        let job_template = &rjob["template"];
        let count = super::count(job_template, "/spec/completions", 1)?;
        let all = copies.saturating_mul(count);
        for at in super::made(base, all, total) {
            let (copy, index) = (at / count, at % count);
            let job_name = format!("{name}-{rname}-{copy}");
            let template = jobset_pod(
                &job_template["spec"]["template"],
                name,
                rname,
                copy,
                domain.as_deref(),
                &claims,
            );
            let mut pod = super::job::pod(&job_name, namespace, &template, index, stage);
            pod.role = format!("{rname} job {copy}, index {index}");
            pods.push(pod);
        }
        base = base.saturating_add(all);
    }
    let mut said = Vec::new();
    if let Some(restarts) =
        runtime.object["spec"]["template"]["spec"]["failurePolicy"]["maxRestarts"].as_u64()
    {
        said.push(format!(
            "JobSet would recreate every job up to {restarts} times after a failure (failurePolicy.maxRestarts); trainc run ends the job at the first failure"
        ));
    }
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
        pods,
        total,
        success: Success::AllPods,
        deadline: spec["activeDeadlineSeconds"].as_u64(),
        services: domain
            .into_iter()
            .map(|domain| super::Service {
                name: domain,
                namespace: namespace.to_owned(),
                selector: vec![(LABEL_JOBSET_NAME.to_owned(), name.to_owned())],
                headless: true,
            })
            .collect(),
        notes: said,
    })
}

/// The names of the claim templates of the runtime's JobSet
/// (`volumeClaimPolicies[].templates[].metadata.name`).
fn claim_templates(runtime_spec: &Json) -> Vec<&str> {
    runtime_spec["template"]["spec"]["volumeClaimPolicies"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| p["templates"].as_array().into_iter().flatten())
        .filter_map(|t| t["metadata"]["name"].as_str())
        .collect()
}

/// A pod template of replicated job `rname`, copy `copy`, as JobSet makes
/// it: the pods' DNS subdomain ([`pod_domain`]), JobSet's labels, and the
/// restart policy its webhook defaults.
fn jobset_pod(
    template: &Json,
    name: &str,
    rname: &str,
    copy: u64,
    domain: Option<&str>,
    claims: &[&str],
) -> Json {
    let mut template = template.clone();
    // `volumeClaimPolicies` (JobSet v0.11 and later, `volume_claim_policy.go`
    // `addVolumes`): a pod that mounts a template's name gets the claim
    // `<template>-<jobset>` under it.
    let mounted = |volume: &str| {
        ["containers", "initContainers"].iter().any(|list| {
            template["spec"][*list]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| {
                    c["volumeMounts"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|m| m["name"] == volume)
                })
        })
    };
    let added: Vec<Json> = claims
        .iter()
        .filter(|claim| mounted(claim))
        .map(|claim| {
            serde_json::json!({
                "name": claim,
                "persistentVolumeClaim": { "claimName": format!("{claim}-{name}") }
            })
        })
        .collect();
    if !added.is_empty() {
        let volumes = &mut template["spec"]["volumes"];
        if !volumes.is_array() {
            *volumes = Json::Array(Vec::new());
        }
        if let Some(list) = volumes.as_array_mut() {
            list.extend(added);
        }
    }
    if let Some(domain) = domain {
        template["spec"]["subdomain"] = Json::String(domain.to_owned());
    }
    // JobSet's webhook defaults an unset restart policy to `OnFailure`
    // (kubernetes-sigs/jobset v0.8–v0.12, `pkg/webhooks/jobset_webhook.go`
    // `Default`).
    if template["spec"]["restartPolicy"]
        .as_str()
        .is_none_or(str::is_empty)
    {
        template["spec"]["restartPolicy"] = Json::from("OnFailure");
    }
    let mut labels = template["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    super::add_meta(
        &mut labels,
        &[
            (LABEL_JOBSET_NAME, name.to_owned()),
            (LABEL_REPLICATED_JOB, rname.to_owned()),
            (LABEL_JOB_INDEX, copy.to_string()),
        ],
    );
    template["metadata"]["labels"] = Json::Object(labels);
    template
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

/// Each replicated job's stage: after the jobs it waits to complete, with
/// the jobs it waits to be ready for. Each job is settled once, when every
/// job it depends on is (time linear in the jobs and their `dependsOn`).
fn stages(replicated: &[Json]) -> Result<Vec<u32>, String> {
    let index: std::collections::HashMap<&Json, usize> = replicated
        .iter()
        .enumerate()
        .rev()
        .map(|(i, r)| (&r["name"], i))
        .collect();
    // For each job, the (job, ready) pairs it waits on; for each job, those
    // that wait on it.
    let mut waits: Vec<Vec<(usize, bool)>> = Vec::with_capacity(replicated.len());
    let mut waited_by: Vec<Vec<usize>> = vec![Vec::new(); replicated.len()];
    for (i, rjob) in replicated.iter().enumerate() {
        let mut on = Vec::new();
        for dep in rjob["dependsOn"].as_array().into_iter().flatten() {
            let Some(&j) = index.get(&dep["name"]) else {
                return Err(format!(
                    "the replicated job `{}` depends on `{}`, which the runtime does not have",
                    rjob["name"].as_str().unwrap_or("?"),
                    dep["name"].as_str().unwrap_or("?")
                ));
            };
            on.push((j, dep["status"] == "Ready"));
            waited_by[j].push(i);
        }
        waits.push(on);
    }
    let mut unsettled: Vec<usize> = waits.iter().map(Vec::len).collect();
    let mut stage: Vec<Option<u32>> = vec![None; replicated.len()];
    let mut ready: Vec<usize> = (0..replicated.len())
        .filter(|&i| unsettled[i] == 0)
        .collect();
    while let Some(i) = ready.pop() {
        let at = waits[i]
            .iter()
            .map(|&(j, ready)| {
                let s = stage[j].expect("settled first");
                if ready { s } else { s.saturating_add(1) }
            })
            .max()
            .unwrap_or(0);
        stage[i] = Some(at);
        for &k in &waited_by[i] {
            unsettled[k] -= 1;
            if unsettled[k] == 0 {
                ready.push(k);
            }
        }
    }
    stage
        .into_iter()
        .map(|s| {
            s.ok_or_else(|| {
                "the runtime's replicated jobs depend on each other in a cycle".to_owned()
            })
        })
        .collect()
}
