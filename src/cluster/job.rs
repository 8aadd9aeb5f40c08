//! Kubernetes' Job controller (kubernetes v1.33, `pkg/controller/job`), as it
//! makes the pods of an Indexed Job:
//!
//! - `job_controller.go` `manageJob`: each pod of completion index `i` gets
//!   the annotation and (feature `PodIndexLabel`, on since v1.28) the label
//!   `batch.kubernetes.io/job-completion-index: i`, the hostname
//!   `<job>-<i>` and a generated name `<job>-<i>-<random>`; with the
//!   template's `subdomain`, the headless Service of that name gives it the
//!   DNS name `<job>-<i>.<subdomain>.<namespace>.svc`.
//! - `indexed_job_utils.go` `addCompletionIndexEnvVariables`: every
//!   container gets `JOB_COMPLETION_INDEX` from that annotation, appended
//!   after its own env unless it declares the name itself.
//! - the pod's labels `batch.kubernetes.io/job-name` and `job-name`
//!   (`pkg/apis/batch/v1` defaults, v1.27 and later).
//! - success: `completions` pods succeed; failure: a failed pod that
//!   `podFailurePolicy` says `FailJob` for, or more than `backoffLimit`
//!   failures (`job_controller.go` `syncJob`).

use serde_json::Value as Json;

use super::{Pod, Success, Workload};

pub const API_VERSION: &str = "batch/v1";
pub const KIND: &str = "Job";
/// The training container: the name `[podTemplate]` uses on every target.
pub const CONTAINER: &str = crate::spec::defaults::TRAINER_CONTAINER;
/// The rendezvous port's name on the container and the Service.
pub const PORT_NAME: &str = "rendezvous";
/// The label the Job controller puts on pod `i` (from Kubernetes 1.28,
/// `PodIndexLabel`), and the variable it sets in every container.
pub const LABEL_COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";
pub const LABEL_JOB_NAME: &str = "batch.kubernetes.io/job-name";
pub const COMPLETION_INDEX_ENV: &str = "JOB_COMPLETION_INDEX";
/// Where a pod's completion index can be read from (a `fieldRef`): the
/// annotation, which every Kubernetes version sets.
pub const COMPLETION_INDEX_FIELD: &str =
    "metadata.annotations['batch.kubernetes.io/job-completion-index']";
/// Where the variable the Job controller adds reads the index: the label,
/// with `PodIndexLabel` (beta and on from Kubernetes 1.28, GA in 1.32;
/// kubernetes v1.36.3 `pkg/controller/job/indexed_job_utils.go`
/// `addCompletionIndexEnvVariable`), as the real controller's pods show.
pub const CONTROLLER_INDEX_FIELD: &str =
    "metadata.labels['batch.kubernetes.io/job-completion-index']";
/// What trainc sets in the training container of a `command` on a Job, and
/// what the Job controller sets in every one: a spec that set one of these
/// would change the topology under torchrun's feet.
pub const RESERVED_ENV: &[&str] = &[
    COMPLETION_INDEX_ENV,
    "MASTER_ADDR",
    "MASTER_PORT",
    "WORLD_SIZE",
    "RANK",
    "NODE_RANK",
    "PET_NNODES",
    "PET_NPROC_PER_NODE",
    "PET_NODE_RANK",
    "PET_MASTER_ADDR",
    "PET_MASTER_PORT",
];

/// What a variable trainc gives a `command` on an Indexed Job holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Told {
    Value(String),
    /// The pod's node rank: its completion index ([`COMPLETION_INDEX_FIELD`]),
    /// or in a JobSet with a Master its job's global index
    /// ([`super::jobset::Layout::node_rank`]).
    NodeRank,
}

/// The variables trainc gives a `command` on an Indexed Job (targets `job`
/// and `jobset`), as the Training Operator sets them on a PyTorchJob, so the
/// same command runs on either: rank 0 at `master` (`MASTER_ADDR`,
/// `MASTER_PORT`), `WORLD_SIZE` (every process when `nproc`, the count per
/// pod, is a number, else the pods), `RANK` and `NODE_RANK` (the pod's
/// node rank), and the `PET_*` variables from which a bare `torchrun` takes its
/// flags. Render writes them; import recognises them.
pub fn command_env(master: &str, nodes: u32, nproc: &str) -> Vec<(&'static str, Told)> {
    let value = |text: String| Told::Value(text);
    let world = nproc
        .parse::<u32>()
        .map_or(nodes, |n| nodes.saturating_mul(n));
    let port = crate::spec::defaults::JOB_RENDEZVOUS_PORT.to_string();
    vec![
        ("MASTER_ADDR", value(master.to_owned())),
        ("MASTER_PORT", value(port.clone())),
        ("WORLD_SIZE", value(world.to_string())),
        ("RANK", Told::NodeRank),
        ("NODE_RANK", Told::NodeRank),
        ("PET_NNODES", value(nodes.to_string())),
        ("PET_NPROC_PER_NODE", value(nproc.to_owned())),
        ("PET_NODE_RANK", Told::NodeRank),
        ("PET_MASTER_ADDR", value(master.to_owned())),
        ("PET_MASTER_PORT", value(port)),
    ]
}

/// The pods of an Indexed Job.
pub fn workload(job: &Json) -> Result<Workload, String> {
    let name = super::text(job, "/metadata/name", "the Job")?;
    let spec = &job["spec"];
    if spec["completionMode"] != "Indexed" {
        return Err(format!(
            "Job/{name} is not Indexed (`completionMode: Indexed`): its pods have no index to find their rank by"
        ));
    }
    let completions = super::count(job, "/spec/completions", 1)?;
    let parallelism = super::count(job, "/spec/parallelism", 1)?;
    if parallelism < completions {
        return Err(format!(
            "Job/{name} runs {parallelism} of its {completions} pods at a time: a distributed job needs every pod at once (`parallelism` = `completions`)"
        ));
    }
    let namespace = super::namespace_of(job).to_owned();
    let template = &spec["template"];
    let retries = retries(spec)?;
    let pods = super::made(0, completions, completions)
        .map(|index| pod(name, &namespace, template, index, 0, retries))
        .collect();
    let mut notes = Vec::new();
    if let Some(backoff) = retries.filter(|n| *n > 0) {
        notes.push(format!(
            "the Job controller would replace a failed pod up to {backoff} times (backoffLimit); trainc run ends the job at the first failure"
        ));
    }
    Ok(Workload {
        job: format!("Job/{name}"),
        suffixed: true,
        made_by: "the Job controller",
        trainer: first_container(template),
        pods,
        total: completions,
        success: Success::AllPods,
        deadline: spec["activeDeadlineSeconds"].as_u64(),
        group: None,
        services: Vec::new(),
        notes,
    })
}

/// The name of the template's first container: a Job's controller knows no
/// roles, and trainc writes the trainer first.
fn first_container(template: &Json) -> String {
    template["spec"]["containers"][0]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// How many failures of a pod the Job of `spec` tolerates: none when its
/// pod failure policy fails it on any exit, else its `backoffLimit` (6 when
/// unset: `pkg/apis/batch/v1` defaults). Under `restartPolicy: OnFailure`
/// the restarts of a pod's containers count (`job_controller.go`
/// `getNewFinishedPods`, `pastBackoffLimitOnFailure`).
pub fn retries(spec: &Json) -> Result<Option<u64>, String> {
    if fails_on_any_exit(spec) {
        return Ok(Some(0));
    }
    super::count(spec, "/backoffLimit", 6).map(Some)
}

/// Pod `index` of the Job `job`, made from `template` (JobSet makes its
/// jobs' pods the same way, at `stage`); `retries` as [`retries`] counts.
pub fn pod(
    job: &str,
    namespace: &str,
    template: &Json,
    index: u64,
    stage: u32,
    retries: Option<u64>,
) -> Pod {
    let index_text = index.to_string();
    let mut labels = super::meta_map(template, "labels");
    super::add_meta(
        &mut labels,
        &[
            (LABEL_JOB_NAME, job.to_owned()),
            ("job-name", job.to_owned()),
            (LABEL_COMPLETION_INDEX, index_text.clone()),
        ],
    );
    let mut annotations = super::meta_map(template, "annotations");
    super::add_meta(&mut annotations, &[(LABEL_COMPLETION_INDEX, index_text)]);
    let mut spec = template["spec"].clone();
    for key in ["initContainers", "containers"] {
        if let Some(containers) = spec[key].as_array_mut() {
            for container in containers {
                let declared = container["env"]
                    .as_array()
                    .is_some_and(|env| env.iter().any(|e| e["name"] == COMPLETION_INDEX_ENV));
                if !declared {
                    super::append_env(
                        container,
                        super::env_field(COMPLETION_INDEX_ENV, CONTROLLER_INDEX_FIELD),
                    );
                }
            }
        }
    }
    let hostname = spec["hostname"]
        .as_str()
        .map_or_else(|| format!("{job}-{index}"), str::to_owned);
    spec["hostname"] = Json::String(hostname.clone());
    let on_failure = super::restart_words(spec["restartPolicy"].as_str()).to_owned();
    Pod {
        name: format!("{job}-{index}"),
        hostname,
        namespace: namespace.to_owned(),
        role: format!("Job {job}, index {index}"),
        labels,
        annotations,
        spec,
        on_failure,
        retries,
        stage,
    }
}

/// Whether the pod failure policy fails the Job on any non-zero exit (what
/// trainc writes: `FailJob` for exit codes `NotIn [0]`).
fn fails_on_any_exit(spec: &Json) -> bool {
    spec["podFailurePolicy"]["rules"]
        .as_array()
        .is_some_and(|rules| {
            rules.iter().any(|rule| {
                let codes = &rule["onExitCodes"];
                rule["action"] == "FailJob"
                    && codes["operator"] == "NotIn"
                    && codes["values"]
                        .as_array()
                        .is_some_and(|v| v == &[Json::from(0)])
            })
        })
}
