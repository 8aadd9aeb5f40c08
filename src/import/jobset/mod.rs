//! A `jobset.x-k8s.io/v1alpha2 JobSet` back into a spec of `target =
//! "jobset"`: the shapes trainc writes (`render::jobset`), one replicated
//! job of one Indexed Job that runs every node, or a Master's job of one
//! pod and a job of one pod for each Worker (`[master]`, its differences
//! read as a PyTorchJob's Master's are, `import::master`). A JobSet of
//! other shapes has no spec: it is refused, with why. What JobSet's webhook defaults (`crate::cluster::jobset::
//! defaulted`) and what trainc writes anyway (its launch flags, the
//! variables it reads the topology from, the rendezvous port, the pod
//! failure policy, the network) is left out, so that importing what trainc
//! built gives back the spec it was built from.

use serde_json::{Map, Value as Json, json};

use super::{Job, Others, Pod, launch, master, pod};
use crate::cluster::job::PORT_NAME;
use crate::cluster::jobset::{
    CONTAINER, EXCLUSIVE_TOPOLOGY, LABEL_JOBSET_NAME, Layout, MASTER, NODE, WORKER,
};
use crate::spec::defaults::JOB_RENDEZVOUS_PORT;

mod topology;

pub(super) const API_VERSION: &str = crate::cluster::jobset::API_VERSION;

pub(super) fn import(job: &mut Job<'_>, object: &Json, others: &mut Others<'_, '_>) {
    job.set("/target", json!("jobset"));
    let spec = &object["spec"];
    job.unknown_keys(
        spec,
        "/spec",
        &[
            "replicatedJobs",
            "failurePolicy",
            "successPolicy",
            "startupPolicy",
            "network",
            "suspend",
            "ttlSecondsAfterFinished",
        ],
        "a spec's JobSet has one job of every node, its failure policy, suspension and time to live",
    );
    let Some(shape) = shape(job, spec) else {
        return;
    };
    jobset_policy(job, spec);
    let base = "/spec/replicatedJobs/0/template/spec";
    let rjob = &spec["replicatedJobs"][0];
    let (layout, workers) = match shape {
        Shape::Nodes => (Layout::Nodes, 0),
        Shape::MasterWorkers { copies } => (Layout::MasterWorkers, copies),
    };
    let Some(nodes) = indexed_job(job, &rjob["template"]["spec"], base, workers) else {
        return;
    };
    let pair = match layout {
        Layout::Nodes => None,
        Layout::MasterWorkers => Some(master::Pair {
            master: &rjob["template"]["spec"],
            master_at: base.to_owned(),
            worker: &spec["replicatedJobs"][1]["template"]["spec"],
            worker_at: "/spec/replicatedJobs/1/template/spec".to_owned(),
            container: trainer_name(&rjob["template"]["spec"]["template"]["spec"]),
            restart_policies: false,
        }),
    };
    if let Some(pair) = &pair {
        worker_jobs(job, pair);
    }
    let template = &rjob["template"]["spec"]["template"];
    let mut metadata = object["metadata"].clone();
    if let Some(key) = metadata["annotations"]
        .as_object_mut()
        .and_then(|a| a.remove(EXCLUSIVE_TOPOLOGY))
    {
        job.set("/scheduling/exclusiveTopology", key);
    }
    super::metadata::import(
        job,
        &metadata,
        Some((&template["metadata"], &format!("{base}/template/metadata"))),
    );
    let pod_spec = pod_spec(job, &template["spec"], &format!("{base}/template/spec"));
    let own = pod::own_labels(&job.name);
    let pod = Pod {
        spec: &pod_spec,
        base: format!("{base}/template/spec"),
        trainer: CONTAINER,
        max_nodes: nodes,
        own_labels: vec![
            own.clone(),
            Map::from_iter([(LABEL_JOBSET_NAME.to_owned(), json!(job.name.clone()))]),
        ],
    };
    let Some((container, pointer)) =
        pod::import_trainer(job, others, &pod, "a spec's JobSet trains in")
    else {
        return;
    };
    let nproc = topology::import(job, container, &pointer, nodes, layout);
    let (nproc, master_nproc) = match &pair {
        Some(pair) => master::split(job, pair, nproc),
        None => (nproc, None),
    };
    launch::set_nproc(job, &nproc, &format!("{pointer}/command"));
    if let Some(own) = master_nproc {
        master::set_nproc(job, &own);
    }
    let mut labels = vec![(LABEL_JOBSET_NAME, job.name.clone())];
    labels.extend(layout.rank0_labels().map(|(k, v)| (k, v.to_owned())));
    let port = (PORT_NAME, JOB_RENDEZVOUS_PORT);
    super::ports::import_rank0(job, others, template, container, own, &labels, port);
}

/// The shapes of JobSet a spec describes ([`Layout`]).
enum Shape {
    /// One replicated job of one Indexed Job of every node.
    Nodes,
    /// A replicated job of one job, the Master's, then one of `copies`
    /// jobs of one Worker pod each.
    MasterWorkers { copies: u64 },
}

/// The JobSet's shape; `None`, with the error, for one a spec cannot
/// describe.
fn shape(job: &mut Job<'_>, spec: &Json) -> Option<Shape> {
    let rjobs: &[Json] = spec["replicatedJobs"].as_array().map_or(&[], Vec::as_slice);
    let copies = |r: &Json| r["replicas"].as_u64().unwrap_or(1);
    // Each of a Job's pods, unless it says otherwise (Kubernetes' default).
    let one_pod = |r: &Json| {
        let job = &r["template"]["spec"];
        ["completions", "parallelism"]
            .iter()
            .all(|key| job[key].as_u64().unwrap_or(1) == 1)
    };
    let (shape, names): (Shape, &[&str]) = match rjobs {
        [rjob] if copies(rjob) == 1 => (Shape::Nodes, &[NODE]),
        [master, workers] if copies(master) == 1 && one_pod(master) && one_pod(workers) => (
            Shape::MasterWorkers {
                copies: copies(workers),
            },
            &[MASTER, WORKER],
        ),
        _ => {
            let what = match rjobs {
                [rjob] => format!("one replicated job of {} Jobs", copies(rjob)),
                _ => format!("{} replicated jobs", rjobs.len()),
            };
            job.error(
                "/spec/replicatedJobs",
                format!("the JobSet has {what}; a spec's JobSet runs every node in one Indexed Job, or a Master's job of one pod beside a job of one pod for each Worker, so it has no spec"),
                "keep this JobSet as it is (`trainc verify` checks it), or write a spec for the job that trains",
            );
            return None;
        }
    };
    for (i, (rjob, name)) in rjobs.iter().zip(names).enumerate() {
        let at = format!("/spec/replicatedJobs/{i}");
        job.unknown_keys(
            rjob,
            &at,
            &["name", "replicas", "template"],
            "a spec's JobSet's replicated jobs have a name, a count and a Job",
        );
        if rjob["name"] != *name {
            job.warn(
                &format!("{at}/name"),
                format!(
                    "the replicated job `{}` becomes `{name}`, which trainc names it: its pods are renamed with it",
                    rjob["name"].as_str().unwrap_or_default(),
                ),
                "change what refers to the old pod names (logs, dashboards, Services)",
            );
        }
    }
    Some(shape)
}

/// The Workers' jobs of a JobSet with a Master are as the Master's job,
/// whose fields the spec takes: what differs is said.
fn worker_jobs(job: &mut Job<'_>, pair: &master::Pair<'_>) {
    let (spec, at) = (pair.worker, &pair.worker_at);
    for key in [
        "completionMode",
        "backoffLimit",
        "podFailurePolicy",
        "activeDeadlineSeconds",
    ] {
        if spec[key] != pair.master[key] {
            job.warn(
                &format!("{at}/{key}"),
                format!("the Worker jobs' `{key}` differs from the Master's; the spec has one, the Master's"),
                "",
            );
        }
    }
}

/// The JobSet's own fields: its failure and success policies, network,
/// suspension and time to live.
fn jobset_policy(job: &mut Job<'_>, spec: &Json) {
    let failure = &spec["failurePolicy"];
    job.unknown_keys(
        failure,
        "/spec/failurePolicy",
        &["maxRestarts"],
        "a spec's JobSet restarts every pod after any failure (`policy.groupRestarts`); rules, which match a Job's failure reason, are not imported",
    );
    if let Some(restarts) = failure.get("maxRestarts").and_then(Json::as_u64)
        && restarts > 0
    {
        job.set("/policy/groupRestarts", json!(restarts));
    }
    let success = &spec["successPolicy"];
    let targets = success["targetReplicatedJobs"]
        .as_array()
        .is_some_and(|t| !t.is_empty());
    if success.is_object() && (success["operator"] != "All" || targets) {
        job.warn(
            "/spec/successPolicy",
            "the success policy is not imported: a spec's JobSet succeeds when every pod does",
            "",
        );
    }
    let network = &spec["network"];
    job.unknown_keys(
        network,
        "/spec/network",
        &["enableDNSHostnames", "publishNotReadyAddresses"],
        "a spec's JobSet names its pods under the headless Service of its own name",
    );
    for key in ["enableDNSHostnames", "publishNotReadyAddresses"] {
        if network[key] == false {
            job.warn(
                &format!("/spec/network/{key}"),
                format!("`network.{key}: false` is not imported: torchrun finds rank 0 by its name under JobSet's headless Service, which must publish the pods before they are ready"),
                "",
            );
        }
    }
    if spec["suspend"] == true {
        job.set("/policy/suspend", json!(true));
    }
    if let Some(seconds) = spec["ttlSecondsAfterFinished"].as_u64() {
        job.set("/policy/ttlAfterFinished", super::duration(seconds));
    }
}

/// The Indexed Job of every node, or the Master's job beside `others`
/// Worker pods: the node count, the pods' retries and deadline; `None`,
/// with the error, when it is not one.
fn indexed_job(job: &mut Job<'_>, spec: &Json, base: &str, others: u64) -> Option<u64> {
    job.unknown_keys(
        spec,
        base,
        &[
            "completionMode",
            "completions",
            "parallelism",
            "backoffLimit",
            "podFailurePolicy",
            "activeDeadlineSeconds",
            "template",
        ],
        "a spec's JobSet's job has its node count, retries and deadline",
    );
    // JobSet's webhook makes a job Indexed where it says nothing.
    if spec["completionMode"]
        .as_str()
        .is_some_and(|m| m != "Indexed")
    {
        job.error(
            &format!("{base}/completionMode"),
            "the job is not Indexed: its pods would have no index for torchrun's node rank",
            "use `completionMode: Indexed`",
        );
        return None;
    }
    let completions = spec["completions"].as_u64().unwrap_or(1);
    let parallelism = spec["parallelism"].as_u64().unwrap_or(1);
    if completions != parallelism {
        job.error(
            &format!("{base}/parallelism"),
            format!("the job runs {parallelism} of its {completions} pods at a time: a distributed job needs every pod at once"),
            "set `parallelism` to `completions`",
        );
        return None;
    }
    let nodes = completions.saturating_add(others);
    if nodes != 1 {
        job.set("/replicas", json!(nodes));
    }
    match spec["backoffLimit"].as_u64() {
        Some(0) => {}
        Some(limit) => job.set("/policy/backoffLimit", json!(limit)),
        // Kubernetes' default: 6 retries, which a spec allows a single pod.
        None if nodes == 1 => job.set("/policy/backoffLimit", json!(6)),
        None => job.warn(
            base,
            "the job has Kubernetes' default `backoffLimit` of 6; a spec's JobSet fails its job at the first failed pod (a replacement cannot rejoin the others) and restarts every pod instead (`policy.groupRestarts`)",
            "",
        ),
    }
    if !spec["podFailurePolicy"].is_null()
        && spec["podFailurePolicy"] != trainc_pod_failure_policy()
    {
        job.warn(
            &format!("{base}/podFailurePolicy"),
            "the pod failure policy is not imported: a spec's JobSet's job fails when the training container exits non-zero",
            "",
        );
    }
    if let Some(seconds) = spec["activeDeadlineSeconds"].as_u64() {
        job.set("/policy/activeDeadline", super::duration(seconds));
    }
    Some(nodes)
}

/// The pod failure policy trainc writes (`render::job`).
fn trainc_pod_failure_policy() -> Json {
    json!({ "rules": [{
        "action": "FailJob",
        "onExitCodes": { "containerName": CONTAINER, "operator": "NotIn", "values": [0] },
    }] })
}

/// The training container's name in a pod spec: its one container's,
/// whatever its name ([`pod_spec`] renames it), else `trainer`.
fn trainer_name(spec: &Json) -> &str {
    match spec["containers"].as_array().map(Vec::as_slice) {
        Some([only]) => only["name"].as_str().unwrap_or(CONTAINER),
        _ => CONTAINER,
    }
}

/// The pod spec without what JobSet and trainc set on every pod: the
/// subdomain (JobSet's headless Service), `restartPolicy: Never`. A pod of
/// one container, whatever its name, trains in it (JobSet looks for no
/// name): it is named `trainer`, as trainc names it.
fn pod_spec(job: &mut Job<'_>, spec: &Json, base: &str) -> Json {
    let mut spec = spec.clone();
    let Some(map) = spec.as_object_mut() else {
        return spec;
    };
    if let Some(Json::Array(containers)) = map.get_mut("containers")
        && let [only] = containers.as_mut_slice()
        && only["name"] != CONTAINER
    {
        job.warn(
            &format!("{base}/containers/0/name"),
            format!(
                "the container `{}` becomes `{CONTAINER}`, the name trainc gives the training container",
                only["name"].as_str().unwrap_or_default()
            ),
            "change what refers to the container by name (`kubectl logs -c`)",
        );
        only["name"] = json!(CONTAINER);
    }
    if let Some(policy) = map.remove("restartPolicy").filter(|p| p != "Never") {
        job.warn(
            &format!("{base}/restartPolicy"),
            format!("`restartPolicy: {}` is not imported: a spec's JobSet never restarts a pod alone (a rank restarted alone cannot rejoin the others)", policy.as_str().unwrap_or_default()),
            "`policy.groupRestarts` restarts every pod together",
        );
    }
    if let Some(subdomain) = map.remove("subdomain").filter(|s| *s != *job.name) {
        job.warn(
            &format!("{base}/subdomain"),
            format!("`subdomain: {}` is not imported: JobSet puts its pods under its headless Service, named after the JobSet", subdomain.as_str().unwrap_or_default()),
            "",
        );
    }
    spec
}
