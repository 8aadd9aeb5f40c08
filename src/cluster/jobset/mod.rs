//! JobSet (kubernetes-sigs/jobset v0.8.0–v0.12.0) as it makes a JobSet's
//! jobs and pods, whether the JobSet is written by hand, by trainc's target
//! `jobset`, or by Kubeflow Trainer from a TrainJob's runtime
//! ([`super::trainjob`] builds its JobSet and hands it here):
//!
//! - the webhook's defaults (`pkg/webhooks/jobset_webhook.go` `Default`, the
//!   same at v0.8.0 and v0.12.0): `successPolicy` `All`, `startupPolicy`
//!   `AnyOrder`, each job `Indexed` with the pods' `restartPolicy`
//!   `OnFailure` when unset, `network.enableDNSHostnames` and
//!   `publishNotReadyAddresses` `true`, failure policy rules named
//!   `failurePolicyRule<i>` ([`defaulted`]).
//! - the jobs (`pkg/controllers/jobset_controller.go` `constructJob`,
//!   `labelAndAnnotateObject`; `pkg/util/placement/placement.go`
//!   `GenJobName`, `GenPodName`): copy `i` of replicated job `r` is the Job
//!   `<jobset>-<r>-<i>`, its pod `k` the hostname `<jobset>-<r>-<i>-<k>`
//!   (the Job controller's `<job>-<k>`), with the pods' `subdomain` the
//!   JobSet's name (or `network.subdomain`; none with `enableDNSHostnames:
//!   false`), and on every pod the labels and annotations below; a JobSet's
//!   `alpha.jobset.sigs.k8s.io/exclusive-topology` annotation is copied onto
//!   every job and pod.
//! - the headless Service (`createHeadlessSvcIfNecessary`): named as the
//!   subdomain, selecting `jobset.sigs.k8s.io/jobset-name`, publishing pods
//!   that are not ready unless `publishNotReadyAddresses: false`.
//! - order (`startup_policy.go`, `depends_on.go`): a replicated job with
//!   `dependsOn` is created when the jobs it names are `Complete` (or
//!   `Ready`).
//! - the end (`failure_policy.go` `executeFailurePolicy`,
//!   `success_policy.go`): with no `failurePolicy`, the first failed job
//!   fails the JobSet; with one, its rules decide ([`failure`]). It
//!   succeeds when every job succeeds (the default `successPolicy`).

pub mod failure;
mod pods;
pub mod release;
pub mod webhook;

pub use failure::Group;
pub(super) use pods::pods;

use serde_json::Value as Json;

use super::{Success, Workload};

pub const API_VERSION: &str = "jobset.x-k8s.io/v1alpha2";
pub const KIND: &str = "JobSet";
/// Labels (and annotations of the same name and value) JobSet puts on each
/// job and pod (`api/jobset/v1alpha2/jobset_types.go`, v0.8.0–v0.12.0).
pub const LABEL_JOBSET_NAME: &str = "jobset.sigs.k8s.io/jobset-name";
pub const LABEL_REPLICATED_JOB: &str = "jobset.sigs.k8s.io/replicatedjob-name";
pub const LABEL_REPLICATED_JOB_REPLICAS: &str = "jobset.sigs.k8s.io/replicatedjob-replicas";
pub const LABEL_GLOBAL_REPLICAS: &str = "jobset.sigs.k8s.io/global-replicas";
/// The job's copy number within its replicated job, `0..replicas`.
pub const LABEL_JOB_INDEX: &str = "jobset.sigs.k8s.io/job-index";
/// The job's number across the whole JobSet: the replicas of the replicated
/// jobs before it, plus its job index.
pub const LABEL_JOB_GLOBAL_INDEX: &str = "jobset.sigs.k8s.io/job-global-index";
/// How many times the JobSet has been restarted (`pkg/constants`).
pub const LABEL_RESTART_ATTEMPT: &str = "jobset.sigs.k8s.io/restart-attempt";
/// Exclusive placement: the JobSet's annotation whose value is a node label
/// (a topology key); each job's pods then run in one domain of that key that
/// no other job's pods share (`ExclusiveKey`).
pub const EXCLUSIVE_TOPOLOGY: &str = "alpha.jobset.sigs.k8s.io/exclusive-topology";

/// The replicated job of a JobSet trainc writes (target `jobset`): one
/// Indexed Job of every node, named as Kubeflow Trainer's torch runtimes
/// name theirs, so its pods are a TrainJob's (`<job>-node-0-<i>`).
pub const NODE: &str = "node";
/// The replicated jobs of a JobSet trainc writes for a spec with
/// `[master]`: the Master, one job of one pod, and the Workers.
pub const MASTER: &str = "master";
pub const WORKER: &str = "worker";
/// The training container: the name `[podTemplate]` uses on every target.
pub const CONTAINER: &str = crate::spec::defaults::TRAINER_CONTAINER;

/// How a JobSet trainc writes lays out its nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One replicated job, [`NODE`], of one Indexed Job whose pod `i` is
    /// node rank `i` (its completion index): every pod runs one template.
    Nodes,
    /// `[master]`: the replicated job [`MASTER`], one job of one pod, node
    /// rank 0, with a template of its own; and [`WORKER`], `nodes - 1`
    /// jobs of one pod each. A pod's node rank is its job's global index
    /// (the master's 0, worker job `j`'s `j + 1`), which JobSet writes on
    /// every pod ([`LABEL_JOB_GLOBAL_INDEX`]; `globalJobIndex`, v0.8.0 and
    /// v0.12.0): a job of several pods could not give them `index + 1`,
    /// since the kubelet expands `$(VAR)` but does no arithmetic.
    MasterWorkers,
}

impl Layout {
    /// The layout of a job with a Master apart (`[master]` and more than
    /// one node) or without.
    pub fn of(master: bool) -> Layout {
        if master {
            Layout::MasterWorkers
        } else {
            Layout::Nodes
        }
    }

    /// The replicated job of node rank 0.
    pub const fn rank0_job(self) -> &'static str {
        match self {
            Layout::Nodes => NODE,
            Layout::MasterWorkers => MASTER,
        }
    }

    /// The labels of rank 0's pod, beside the JobSet's name: pod 0 of job
    /// 0 of [`Layout::rank0_job`].
    pub const fn rank0_labels(self) -> [(&'static str, &'static str); 3] {
        [
            (LABEL_REPLICATED_JOB, self.rank0_job()),
            (LABEL_JOB_INDEX, "0"),
            (super::job::LABEL_COMPLETION_INDEX, "0"),
        ]
    }

    /// The variable that holds a pod's node rank, and the `fieldRef` it
    /// is read from.
    pub fn node_rank(self) -> (&'static str, &'static str) {
        match self {
            Layout::Nodes => (
                super::job::COMPLETION_INDEX_ENV,
                super::job::COMPLETION_INDEX_FIELD,
            ),
            Layout::MasterWorkers => (GLOBAL_INDEX_ENV, GLOBAL_INDEX_FIELD),
        }
    }
}

/// The labels of rank 0's pod in a JobSet of one `node` job (trainc's
/// without a Master, and the torch runtimes' of a TrainJob).
pub const RANK0_LABELS: [(&str, &str); 3] = Layout::Nodes.rank0_labels();

/// Where the ranks of a JobSet trainc writes meet: pod 0 of job 0 of the
/// rank-0 replicated job, under JobSet's headless Service.
pub fn rank0_address(name: &str, layout: Layout) -> String {
    format!("{}.{name}", pod_name(name, layout.rank0_job(), 0, 0))
}

/// The variable that holds the JobSet's name in a JobSet trainc writes,
/// read from the annotation JobSet puts on every pod: the rendezvous
/// address is made of it when the pod starts, so it follows the JobSet
/// when kustomize's `namePrefix` or `nameSuffix` renames it.
pub const NAME_ENV: &str = "JOBSET_NAME";
/// Where [`NAME_ENV`] is read from (a `fieldRef`).
pub const NAME_FIELD: &str = "metadata.annotations['jobset.sigs.k8s.io/jobset-name']";
/// The variable that holds a pod's node rank in a JobSet trainc writes
/// with a Master ([`Layout::MasterWorkers`]), and where it is read from.
pub const GLOBAL_INDEX_ENV: &str = "JOB_GLOBAL_INDEX";
pub const GLOBAL_INDEX_FIELD: &str = "metadata.annotations['jobset.sigs.k8s.io/job-global-index']";

/// [`rank0_address`] as the kubelet expands it from [`NAME_ENV`]: what a
/// JobSet trainc writes tells torchrun.
pub fn rank0_address_expanded(layout: Layout) -> String {
    let name = format!("$({NAME_ENV})");
    rank0_address(&name, layout)
}

/// What trainc sets in the training container of a JobSet beside what it
/// sets in a Job's ([`super::job::RESERVED_ENV`]).
pub const RESERVED_ENV: &[&str] = &[NAME_ENV, GLOBAL_INDEX_ENV];

/// A JobSet as its webhook defaults it before the API server stores it.
/// What is not there is left out, never made (`IndexMut` would make it).
pub fn defaulted(jobset: &Json) -> Json {
    let mut jobset = jobset.clone();
    let Some(spec) = jobset.get_mut("spec").and_then(Json::as_object_mut) else {
        return jobset;
    };
    default(
        spec,
        "successPolicy",
        serde_json::json!({ "operator": "All" }),
    );
    default(
        spec,
        "startupPolicy",
        serde_json::json!({ "startupPolicyOrder": "AnyOrder" }),
    );
    let rjobs = spec.get_mut("replicatedJobs").and_then(Json::as_array_mut);
    for rjob in rjobs.into_iter().flatten() {
        let Some(job) = rjob
            .pointer_mut("/template/spec")
            .and_then(Json::as_object_mut)
        else {
            continue;
        };
        default(job, "completionMode", Json::from("Indexed"));
        if let Some(pod) = job
            .get_mut("template")
            .and_then(|t| t.get_mut("spec"))
            .and_then(Json::as_object_mut)
            && pod
                .get("restartPolicy")
                .is_none_or(|policy| policy.is_null() || policy == "")
        {
            pod.insert("restartPolicy".to_owned(), Json::from("OnFailure"));
        }
    }
    default(spec, "network", serde_json::json!({}));
    if let Some(network) = spec.get_mut("network").and_then(Json::as_object_mut) {
        for key in ["enableDNSHostnames", "publishNotReadyAddresses"] {
            default(network, key, Json::Bool(true));
        }
    }
    let rules = spec
        .get_mut("failurePolicy")
        .and_then(|p| p.get_mut("rules"))
        .and_then(Json::as_array_mut);
    for (i, rule) in rules.into_iter().flatten().enumerate() {
        // A name of another type is the schema's to refuse (the webhook
        // cannot decode it), not one to fill in.
        if let Some(rule) = rule.as_object_mut()
            && rule
                .get("name")
                .is_none_or(|name| name.is_null() || name == "")
        {
            rule.insert(
                "name".to_owned(),
                Json::String(format!("failurePolicyRule{i}")),
            );
        }
    }
    jobset
}

/// Sets `key` where it is absent or null (a Go pointer left nil).
fn default(map: &mut serde_json::Map<String, Json>, key: &str, value: Json) {
    if map.get(key).is_none_or(Json::is_null) {
        map.insert(key.to_owned(), value);
    }
}

/// The DNS subdomain of the JobSet `name`'s pods, and the name of the
/// headless Service JobSet creates for them: `network.subdomain` when set,
/// else the JobSet's name; `None` with `network.enableDNSHostnames: false`
/// (`GetSubdomain`, `dnsHostnamesEnabled`, after the webhook's default).
pub fn pod_domain(name: &str, spec: &Json) -> Option<String> {
    let network = &spec["network"];
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

/// Copy `job` of replicated job `rjob` of the JobSet `jobset`: the Job's
/// name (`GenJobName`).
pub fn job_name(jobset: &str, rjob: &str, job: u64) -> String {
    format!("{jobset}-{rjob}-{job}")
}

/// Pod `pod` of copy `job` of replicated job `rjob` of the JobSet `jobset`
/// (`GenPodName`, without the random suffix): its hostname.
pub fn pod_name(jobset: &str, rjob: &str, job: u64, pod: u64) -> String {
    format!("{}-{pod}", job_name(jobset, rjob, job))
}

/// The pods of a JobSet object.
pub fn workload(object: &Json) -> Result<Workload, String> {
    let name = super::text(object, "/metadata/name", "the JobSet")?;
    let namespace = super::namespace_of(object);
    let jobset = defaulted(object);
    let spec = &jobset["spec"];
    let made = pods(name, namespace, &jobset)?;
    let trainer = spec["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"]
        [0]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let (group, mut notes) = group(spec);
    let success = &spec["successPolicy"];
    let targets = success["targetReplicatedJobs"]
        .as_array()
        .is_some_and(|t| !t.is_empty());
    if success["operator"] == "Any" || targets {
        notes.push(
            "the JobSet's successPolicy ends it when some of its jobs succeed; trainc run waits for every pod".to_owned(),
        );
    }
    Ok(Workload {
        job: format!("JobSet/{name}"),
        suffixed: true,
        made_by: "the JobSet controller",
        trainer,
        pods: made.pods,
        total: made.total,
        success: Success::AllPods,
        deadline: None,
        group,
        services: made.services,
        notes,
    })
}

/// What JobSet does after a job fails ([`failure`]), and what of it
/// `trainc run` does otherwise.
pub(super) fn group(spec: &Json) -> (Option<Group>, Vec<String>) {
    let group = Group::of(spec);
    let notes = group.as_ref().map(|g| g.policy.notes()).unwrap_or_default();
    (group, notes)
}

#[cfg(test)]
mod tests;
