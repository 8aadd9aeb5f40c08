//! What the cluster makes of the objects trainc emits: the pods each
//! controller creates, with the names, labels, environment and DNS records the
//! controller and Kubernetes give them, and how the controller decides that
//! the job succeeded or failed.
//!
//! This reads the emitted objects (what `kubectl apply` gets), never trainc's
//! model, so a hand-edited manifest runs as the cluster would run it.
//! `trainc run` starts these pods here; `describe --pods` prints them.
//!
//! One file per controller, each citing the source it follows:
//! [`job`] (Kubernetes' Job controller), [`jobset`] (JobSet),
//! [`pytorchjob`] (the Training Operator), [`trainjob`] (Kubeflow Trainer,
//! through the JobSet it makes), and [`kubelet`]
//! (what the kubelet does with a container's env, command and args).
//! Each controller's file also holds its names, read by every stage that
//! writes or checks its objects (render, the rules, verify, describe,
//! import): API version and kind, the container and port it looks for, the
//! labels it puts on pods, the env it reserves.

pub mod core_kinds;
pub mod given;
pub mod job;
pub mod job_spec;
pub mod jobset;
pub mod kubelet;
pub mod pytorchjob;
pub mod shell;
pub mod torchrun;
pub mod trainjob;

use serde_json::{Map, Value as Json};

use crate::trainer::runtime::Runtime;

/// The label prefixes the controllers own on the pods they make (the
/// Training Operator, Trainer, JobSet, the Job controller): a spec may not
/// set them, and a migration compares the pods without them.
pub const CONTROLLER_LABEL_PREFIXES: [&str; 4] = [
    pytorchjob::LABEL_PREFIX,
    "trainer.kubeflow.org/",
    "jobset.sigs.k8s.io/",
    "batch.kubernetes.io/",
];

/// Pods made one by one: a larger job's first `MADE_AT_MOST - 1` and its
/// last, the others counted ([`Workload::total`]), so a job of a million
/// pods costs no more than one of a hundred.
pub const MADE_AT_MOST: usize = 64;

/// The indices made of a group of `count` pods that starts at pod `base` of
/// a job of `total`: those among the job's first `MADE_AT_MOST - 1`, and the
/// job's last.
fn made(base: u64, count: u64, total: u64) -> impl Iterator<Item = u64> {
    let first = (MADE_AT_MOST as u64 - 1).saturating_sub(base).min(count);
    let last = (count > first && base.saturating_add(count) == total).then(|| count - 1);
    (0..first).chain(last)
}

/// How a pod's exit decides the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Success {
    /// Every pod must succeed (a Job; a JobSet's jobs).
    AllPods,
    /// The job succeeds when this pod does (a PyTorchJob's Master).
    Pod(String),
    /// The job succeeds when any pod does (an elastic PyTorchJob's Workers).
    AnyPod,
}

/// One pod as the controller creates it.
#[derive(Debug, Clone, PartialEq)]
pub struct Pod {
    pub name: String,
    /// `spec.hostname`, else the pod's name.
    pub hostname: String,
    pub namespace: String,
    /// Who made it and what it is: "Master, replica 0", "index 1".
    pub role: String,
    pub labels: Map<String, Json>,
    pub annotations: Map<String, Json>,
    /// The pod's spec, with what the controller wrote into it (env, ports).
    pub spec: Json,
    /// What the cluster does when it fails, in words (restart policy,
    /// backoff), for the report of a failed run.
    pub on_failure: String,
    /// How many failures of the pod (its containers restarted, or the pod
    /// replaced) its controller tolerates before the job fails; `None`:
    /// without limit.
    pub retries: Option<u64>,
    /// Pods of a later stage start when every pod of the earlier ones has
    /// succeeded (a JobSet's `dependsOn`).
    pub stage: u32,
}

impl Pod {
    /// The pod's containers (`initContainers` when `init`).
    pub fn containers(&self, init: bool) -> &[Json] {
        let key = if init { "initContainers" } else { "containers" };
        self.spec[key].as_array().map_or(&[], Vec::as_slice)
    }
}

/// The pods of one job and how it ends.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// `PyTorchJob/name`.
    pub job: String,
    /// The controller that makes the pods, in words: "the Job controller".
    pub made_by: &'static str,
    /// The container that trains (`pytorch`, `node`); a pod without one
    /// (a TrainJob's initializer) does not train.
    pub trainer: String,
    /// The pods' names on the cluster end in a random suffix (a Job's
    /// pods); `Pod::name` is without it, the hostname.
    pub suffixed: bool,
    /// The pods in the order the controller makes them: all of them, or a
    /// larger job's first and last ([`MADE_AT_MOST`]).
    pub pods: Vec<Pod>,
    /// How many pods the controller makes.
    pub total: u64,
    pub success: Success,
    /// `activeDeadlineSeconds`.
    pub deadline: Option<u64>,
    /// What a JobSet does after a job fails, restarting every pod or not
    /// (its `failurePolicy`); `None`: the first failure fails the job.
    pub group: Option<jobset::Group>,
    /// Services the controller makes (beside those among the objects).
    pub services: Vec<Service>,
    /// What the controller adds that is worth saying (retries trainc does not
    /// make, settings that differ by version).
    pub notes: Vec<String>,
}

/// A Service, as far as DNS goes: its name resolves to the pods it selects,
/// and a headless one named like a pod's `subdomain` gives the pod the name
/// `<hostname>.<service>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Service {
    pub name: String,
    pub namespace: String,
    pub selector: Vec<(String, String)>,
    pub headless: bool,
}

impl Service {
    /// A Service object's.
    pub fn from_object(object: &Json) -> Option<Service> {
        let selector = object["spec"]["selector"].as_object()?;
        Some(Service {
            name: object["metadata"]["name"].as_str()?.to_owned(),
            namespace: namespace_of(object).to_owned(),
            selector: selector
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                .collect(),
            headless: object["spec"]["clusterIP"] == "None",
        })
    }

    /// Whether it selects `pod`.
    pub fn selects(&self, pod: &Pod) -> bool {
        self.namespace == pod.namespace
            && !self.selector.is_empty()
            && self
                .selector
                .iter()
                .all(|(k, v)| pod.labels.get(k).and_then(Json::as_str) == Some(v))
    }
}

/// Things with a label selector (Services) found by the labels of the pods
/// they select: each under the one pair of its selector that the fewest of
/// them select by, so that a pod's labels find every one that may select
/// it, and little else; a namespace of thousands of jobs and Services then
/// costs their number, not its square.
pub struct BySelector<T> {
    /// By a selector's key, then its value's text (a label value is text;
    /// another value, which selects nothing, by its JSON).
    by_pair:
        std::collections::HashMap<String, std::collections::HashMap<String, Vec<Selecting<T>>>>,
}

/// An item of a [`BySelector`]: its place among them, and its selector.
type Selecting<T> = (usize, T, Map<String, Json>);

/// A selector's or a label's value as [`BySelector`] keys it.
fn value_text(value: &Json) -> std::borrow::Cow<'_, str> {
    match value {
        Json::String(text) => std::borrow::Cow::Borrowed(text),
        other => std::borrow::Cow::Owned(other.to_string()),
    }
}

impl<T: Clone> BySelector<T> {
    /// `items` with their selectors, in order; an empty selector selects
    /// nothing.
    pub fn new(items: impl IntoIterator<Item = (T, Map<String, Json>)>) -> BySelector<T> {
        let items: Vec<(T, Map<String, Json>)> = items.into_iter().collect();
        let mut counts: std::collections::HashMap<(&str, std::borrow::Cow<'_, str>), usize> =
            std::collections::HashMap::new();
        for (_, selector) in &items {
            for (key, value) in selector {
                *counts.entry((key.as_str(), value_text(value))).or_default() += 1;
            }
        }
        let rarest: Vec<Option<(String, String)>> = items
            .iter()
            .map(|(_, selector)| {
                selector
                    .iter()
                    .map(|(key, value)| (key.as_str(), value_text(value)))
                    .min_by(|a, b| (counts[a], a).cmp(&(counts[b], b)))
                    .map(|(key, value)| (key.to_owned(), value.into_owned()))
            })
            .collect();
        let mut by_pair: std::collections::HashMap<
            String,
            std::collections::HashMap<String, Vec<_>>,
        > = std::collections::HashMap::new();
        for (order, ((item, selector), rarest)) in items.into_iter().zip(rarest).enumerate() {
            if let Some((key, value)) = rarest {
                by_pair
                    .entry(key)
                    .or_default()
                    .entry(value)
                    .or_default()
                    .push((order, item, selector));
            }
        }
        BySelector { by_pair }
    }

    /// The items whose selector picks a pod labelled `labels`, in their order.
    pub fn selecting(&self, labels: &Map<String, Json>) -> Vec<T> {
        let mut found: Vec<(usize, T)> = labels
            .iter()
            .filter_map(|(key, value)| self.by_pair.get(key)?.get(value_text(value).as_ref()))
            .flatten()
            .filter(|(_, _, selector)| selector.iter().all(|(k, v)| labels.get(k) == Some(v)))
            .map(|(order, item, _)| (*order, item.clone()))
            .collect();
        found.sort_by_key(|(order, _)| *order);
        found.dedup_by_key(|(order, _)| *order);
        found.into_iter().map(|(_, item)| item).collect()
    }
}

impl Workload {
    /// The Services that name the pods: those among `objects` and the
    /// controller's.
    pub fn services(&self, objects: &[Json]) -> Vec<Service> {
        let mut services: Vec<Service> = objects
            .iter()
            .filter(|o| o["kind"] == "Service")
            .filter_map(Service::from_object)
            .collect();
        services.extend(self.services.iter().cloned());
        services
    }

    /// The pod's own DNS names in its namespace (Kubernetes' DNS
    /// specification for pods and Services): `<hostname>.<subdomain>` where a
    /// headless Service of the subdomain's name selects the pod, and each
    /// Service that selects it alone.
    pub fn dns_names(&self, index: usize, services: &[Service]) -> Vec<String> {
        let pod = &self.pods[index];
        let mut names = Vec::new();
        if let Some(subdomain) = pod.spec["subdomain"].as_str() {
            let headless = services
                .iter()
                .any(|s| s.name == subdomain && s.headless && s.selects(pod));
            if headless {
                names.push(format!("{}.{subdomain}", pod.hostname));
            }
        }
        for service in services {
            if self.selected(service) == [index] {
                names.push(service.name.clone());
            }
        }
        names.dedup();
        names
    }

    /// The indices of the pods `service` selects.
    pub fn selected(&self, service: &Service) -> Vec<usize> {
        (0..self.pods.len())
            .filter(|&i| service.selects(&self.pods[i]))
            .collect()
    }

    /// The pod's container that trains.
    pub fn trainer_of<'a>(&self, pod: &'a Pod) -> Option<&'a Json> {
        pod.containers(false)
            .iter()
            .find(|c| c["name"] == self.trainer.as_str())
    }
}

/// What the cluster runs: the objects' one job, as its controller runs it.
/// `runtimes` are the cluster's, for a TrainJob whose runtime the objects do
/// not hold; `release` the Trainer's.
pub fn workload(
    objects: &[Json],
    runtimes: &[Runtime],
    release: crate::trainer::Release,
) -> Result<Workload, String> {
    // A job is one of an API version its controller serves: a `Job` of
    // another group is no Job to the cluster.
    let served = [
        (crate::cluster::job::API_VERSION, "Job"),
        (crate::cluster::pytorchjob::API_VERSION, "PyTorchJob"),
        (crate::cluster::trainjob::API_VERSION, "TrainJob"),
        (crate::cluster::jobset::API_VERSION, "JobSet"),
    ];
    let jobs: Vec<&Json> = objects
        .iter()
        .filter(|o| {
            served
                .iter()
                .any(|(v, k)| o["apiVersion"] == *v && o["kind"] == *k)
        })
        .collect();
    let job = match jobs.as_slice() {
        [job] => *job,
        [] => {
            // Pods given as they are, with no job of theirs: run as written.
            if let Some(pods) = given::workload(objects) {
                return pods;
            }
            let unserved = objects
                .iter()
                .find(|o| served.iter().any(|(_, k)| o["kind"] == *k));
            return Err(match unserved {
                Some(o) => format!(
                    "{} is of `{}`, which no cluster serves: trainc run runs batch/v1 Jobs, kubeflow.org/v1 PyTorchJobs, trainer.kubeflow.org/v1alpha1 TrainJobs and jobset.x-k8s.io/v1alpha2 JobSets",
                    object_name(o),
                    o["apiVersion"].as_str().unwrap_or("no apiVersion")
                ),
                None => "the objects hold no Job, PyTorchJob, TrainJob or JobSet".to_owned(),
            });
        }
        many => {
            let names: Vec<String> = many.iter().map(|j| object_name(j)).collect();
            return Err(format!(
                "the objects hold {} jobs ({}); run one at a time",
                many.len(),
                names.join(", ")
            ));
        }
    };
    match job["kind"].as_str() {
        Some("Job") => job::workload(job),
        Some("PyTorchJob") => pytorchjob::workload(job),
        Some("JobSet") => jobset::workload(job),
        _ => trainjob::workload(job, objects, runtimes, release),
    }
}

/// `Kind/name`.
pub fn object_name(object: &Json) -> String {
    format!(
        "{}/{}",
        object["kind"].as_str().unwrap_or("?"),
        object["metadata"]["name"].as_str().unwrap_or("?")
    )
}

/// The object's namespace; `default` when it names none, as `kubectl apply`
/// without `-n` puts it.
pub fn namespace_of(object: &Json) -> &str {
    object["metadata"]["namespace"]
        .as_str()
        .unwrap_or("default")
}

/// A string field, or an error naming it.
fn text<'a>(object: &'a Json, pointer: &str, what: &str) -> Result<&'a str, String> {
    object
        .pointer(pointer)
        .and_then(Json::as_str)
        .ok_or_else(|| {
            format!(
                "{what} has no `{}`",
                pointer.trim_start_matches('/').replace('/', ".")
            )
        })
}

/// A count field (`replicas`, `completions`), `default` when absent.
fn count(object: &Json, pointer: &str, default: u64) -> Result<u64, String> {
    match object.pointer(pointer) {
        None | Some(Json::Null) => Ok(default),
        Some(value) => value.as_u64().ok_or_else(|| {
            format!(
                "`{}` is {value}, not a count",
                pointer.trim_start_matches('/').replace('/', ".")
            )
        }),
    }
}

/// Sets `name` to `value` in a container's env list: replaced where it is,
/// appended when absent (the Trainer's `apply.UpsertEnvVars`).
fn upsert_env(container: &mut Json, var: Json) {
    let env = env_list(container);
    match env.iter_mut().find(|e| e["name"] == var["name"]) {
        Some(existing) => *existing = var,
        None => env.push(var),
    }
}

/// Appends to a container's env list (the Training Operator's `append`).
fn append_env(container: &mut Json, var: Json) {
    env_list(container).push(var);
}

fn env_list(container: &mut Json) -> &mut Vec<Json> {
    if !container["env"].is_array() {
        container["env"] = Json::Array(Vec::new());
    }
    container["env"]
        .as_array_mut()
        .expect("made an array above")
}

/// `{name, value}`.
fn env_value(name: &str, value: &str) -> Json {
    serde_json::json!({ "name": name, "value": value })
}

/// `{name, valueFrom: {fieldRef: {fieldPath}}}`.
fn env_field(name: &str, field_path: &str) -> Json {
    serde_json::json!({ "name": name, "valueFrom": { "fieldRef": { "fieldPath": field_path } } })
}

/// Merges `labels` (or annotations) into a map field of `meta`.
fn add_meta(map: &mut Map<String, Json>, entries: &[(&str, String)]) {
    for (key, value) in entries {
        map.insert((*key).to_owned(), Json::String(value.clone()));
    }
}

/// The template's `metadata.<field>` as a map.
fn meta_map(template: &Json, field: &str) -> Map<String, Json> {
    template["metadata"][field]
        .as_object()
        .cloned()
        .unwrap_or_default()
}

/// What the kubelet does when a container fails, from the pod's restart
/// policy.
fn restart_words(policy: Option<&str>) -> &'static str {
    match policy {
        Some("OnFailure") => "the kubelet restarts the failed container (restartPolicy OnFailure)",
        Some("Always") => "the kubelet restarts the container (restartPolicy Always)",
        _ => "the pod is not restarted (restartPolicy Never)",
    }
}

#[cfg(test)]
mod tests;
