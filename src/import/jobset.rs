//! A `jobset.x-k8s.io/v1alpha2 JobSet` back into a spec of `target =
//! "jobset"`: one replicated job of one Indexed Job that runs every node,
//! the shape trainc writes (`render::jobset`). A JobSet of several
//! replicated jobs, or of several copies of one, has no spec: it is refused,
//! with why. What JobSet's webhook defaults (`crate::cluster::jobset::
//! defaulted`) and what trainc writes anyway (its launch flags, the
//! variables it reads the topology from, the rendezvous port, the pod
//! failure policy, the network) is left out, so that importing what trainc
//! built gives back the spec it was built from.

use serde_json::{Map, Value as Json, json};

use super::{Job, Others, Pod, launch, pod};
use crate::cluster::job::{COMPLETION_INDEX_ENV, COMPLETION_INDEX_FIELD, PORT_NAME, Told};
use crate::cluster::jobset::{
    CONTAINER, EXCLUSIVE_TOPOLOGY, LABEL_JOBSET_NAME, NAME_ENV, NAME_FIELD, RANK0_LABELS,
};
use crate::spec::defaults::JOB_RENDEZVOUS_PORT;

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
    let Some(rjob) = one_job(job, spec) else {
        return;
    };
    jobset_policy(job, spec);
    let base = "/spec/replicatedJobs/0/template/spec";
    let Some(nodes) = indexed_job(job, &rjob["template"]["spec"], base) else {
        return;
    };
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
    let master = crate::cluster::jobset::rank0_address_expanded();
    let flag = launch::import_indexed(
        job,
        container.get("command"),
        container.get("args"),
        nodes,
        &master,
    );
    let nproc = flag
        .or_else(|| told_count(container))
        .unwrap_or(launch::NProc::Count(1));
    let topology = Topology::new(&master, nodes, &nproc, job.get("/command").is_some());
    let ours = without_trainc_env(job, container, &pointer, &topology);
    super::container::full(job, &ours, &pointer);
    launch::set_nproc(job, &nproc, &format!("{pointer}/command"));
    let mut labels = vec![(LABEL_JOBSET_NAME, job.name.clone())];
    labels.extend(RANK0_LABELS.map(|(k, v)| (k, v.to_owned())));
    let port = (PORT_NAME, JOB_RENDEZVOUS_PORT);
    super::ports::import_rank0(job, others, template, container, own, &labels, port);
}

/// The JobSet's one replicated job, of one copy; `None`, with the error,
/// for any other shape.
fn one_job(job: &mut Job<'_>, spec: &Json) -> Option<Json> {
    let rjobs: &[Json] = spec["replicatedJobs"].as_array().map_or(&[], Vec::as_slice);
    let copies = rjobs
        .first()
        .map_or(1, |r| r["replicas"].as_u64().unwrap_or(1));
    if let [rjob] = rjobs
        && copies == 1
    {
        job.unknown_keys(
            rjob,
            "/spec/replicatedJobs/0",
            &["name", "replicas", "template"],
            "a spec's JobSet has one replicated job of one Indexed Job",
        );
        if rjob["name"] != crate::cluster::jobset::NODE {
            job.warn(
                "/spec/replicatedJobs/0/name",
                format!(
                    "the replicated job `{}` becomes `{}`, which trainc names it: its pods are renamed with it",
                    rjob["name"].as_str().unwrap_or_default(),
                    crate::cluster::jobset::NODE
                ),
                "change what refers to the old pod names (logs, dashboards, Services)",
            );
        }
        return Some(rjob.clone());
    }
    let what = if rjobs.len() == 1 {
        format!("one replicated job of {copies} Jobs")
    } else {
        format!("{} replicated jobs", rjobs.len())
    };
    job.error(
        "/spec/replicatedJobs",
        format!("the JobSet has {what}; a spec's JobSet runs every node in one Indexed Job, so it has no spec"),
        "keep this JobSet as it is (`trainc verify` checks it), or write a spec for the job that trains: one Indexed Job of every node",
    );
    None
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

/// The Indexed Job of every node: the node count, the pods' retries and
/// deadline; `None`, with the error, when it is not one.
fn indexed_job(job: &mut Job<'_>, spec: &Json, base: &str) -> Option<u64> {
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
    if completions != 1 {
        job.set("/replicas", json!(completions));
    }
    match spec["backoffLimit"].as_u64() {
        Some(0) => {}
        Some(limit) => job.set("/policy/backoffLimit", json!(limit)),
        // Kubernetes' default: 6 retries, which a spec allows a single pod.
        None if completions == 1 => job.set("/policy/backoffLimit", json!(6)),
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
    Some(completions)
}

/// The pod failure policy trainc writes (`render::job`).
fn trainc_pod_failure_policy() -> Json {
    json!({ "rules": [{
        "action": "FailJob",
        "onExitCodes": { "containerName": CONTAINER, "operator": "NotIn", "values": [0] },
    }] })
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

/// What trainc gives a `command` on the job's pods
/// ([`crate::cluster::job::command_env`]), and whether it runs one.
struct Topology {
    told: Vec<(&'static str, Told)>,
    /// The container runs a `command`, which is given them as variables.
    command: bool,
}

impl Topology {
    fn new(master: &str, nodes: u64, nproc: &launch::NProc, command: bool) -> Topology {
        let nproc = match nproc {
            launch::NProc::Count(n) => n.to_string(),
            launch::NProc::Keyword(keyword) => keyword.clone(),
        };
        let nodes = u32::try_from(nodes).unwrap_or(u32::MAX);
        Topology {
            told: crate::cluster::job::command_env(master, nodes, &nproc),
            command,
        }
    }

    /// What trainc gives a `command` as `name`; `None` for a name it does
    /// not give one (to torchrun, which takes flags, it gives none but the
    /// index and the JobSet's name).
    fn told(&self, name: &str) -> Option<Told> {
        self.told
            .iter()
            .find(|(given, _)| *given == name)
            .map(|(_, told)| told.clone())
    }
}

/// The training container without the variables trainc sets on it: the
/// completion index and the JobSet's name, which the topology is read
/// from, and those a `command` is told. One of those names with a value
/// trainc would not give is left out too (trainc gives its own; a spec may
/// not set them), and the change is said.
fn without_trainc_env(
    job: &mut Job<'_>,
    container: &Json,
    pointer: &str,
    topology: &Topology,
) -> Json {
    let mut container = container.clone();
    let Some(env) = container.get_mut("env").and_then(Json::as_array_mut) else {
        return container;
    };
    let mut kept = Vec::new();
    for (i, var) in env.drain(..).enumerate() {
        let name = var["name"].as_str().unwrap_or_default();
        let field = var["valueFrom"]["fieldRef"]["fieldPath"].as_str();
        let reserved = crate::cluster::job::RESERVED_ENV.contains(&name)
            || crate::cluster::jobset::RESERVED_ENV.contains(&name);
        if !reserved {
            kept.push(var);
            continue;
        }
        let told = topology.told(name);
        let given = match (name, &told) {
            (COMPLETION_INDEX_ENV, _) => field == Some(COMPLETION_INDEX_FIELD),
            (NAME_ENV, _) => field == Some(NAME_FIELD),
            (_, Some(Told::CompletionIndex)) => {
                topology.command && field == Some(COMPLETION_INDEX_FIELD)
            }
            (_, Some(Told::Value(value))) => {
                topology.command && var["value"].as_str() == Some(value.as_str())
            }
            (_, None) => false,
        };
        if !given {
            let instead = match (topology.command, told) {
                (true, Some(Told::Value(value))) => {
                    format!("trainc gives the command `{name}={value}`")
                }
                (true, _) => {
                    format!("trainc gives the command `{name}` from the pod's completion index")
                }
                (false, _) => "trainc gives torchrun the topology as flags".to_owned(),
            };
            job.warn(
                &format!("{pointer}/env/{i}"),
                format!("env `{name}` is not imported: {instead}"),
                "check that the job finds its peers with trainc's topology (`trainc describe --pods`)",
            );
        }
    }
    *env = kept;
    container
}

/// The count a `command` is told (`PET_NPROC_PER_NODE`), which is its
/// `nProcPerNode`.
fn told_count(container: &Json) -> Option<launch::NProc> {
    let env = container["env"].as_array()?;
    let told = env.iter().find(|v| v["name"] == "PET_NPROC_PER_NODE")?;
    launch::NProc::parse(&told["value"])
}
