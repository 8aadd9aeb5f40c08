//! `--verify`: the generated objects against the strict upstream schemas in
//! `schemas/k8s/` ([`schema`]), against the admission-webhook rules those
//! schemas cannot express ([`webhooks`]), and against what the operators do
//! with several objects together ([`objects`]: names they take, ports they
//! reach). A failure here is a bug in trainc, reported as an error rather
//! than handed to the cluster.
//!
//! Mirrors `validate.py`: a schema is chosen by `apiVersion` + `kind` (from
//! the schema's `x-kubernetes-group-version-kind`), and because CRD schemas
//! leave `metadata` open, a CRD's metadata is also checked against ObjectMeta.

use serde_json::Value;

use crate::cluster::{job, job_spec, jobset, pytorchjob, trainjob};
use crate::render::Object;
use crate::spec::ApiLevel;

mod apiserver;
mod beside;
mod cel;
pub mod compact;
pub mod crd;
mod gofmt;
pub mod kubernetes;
mod located;
pub mod manifests;
pub mod nulls;
mod objects;
pub(crate) mod reader;
mod runtimes;
pub(crate) mod schema;
mod stream;
mod webhooks;
mod wording;

/// One problem with one generated object.
/// Characters of a message, object name or path shown at most.
const MAX_SHOWN: usize = 300;

/// Problems of one object `trainc verify` reports, at most: a 6 MB object
/// can hold hundreds of thousands of wrong values, and the first hundred
/// say what is wrong with it (a note says that more are not reported).
pub const MAX_PROBLEMS_PER_OBJECT: usize = 100;

/// `text` escaped and, past `chars` characters, cut in the middle: a schema
/// error quotes the value it is about (which can be megabytes long) before
/// saying what is wrong with it.
fn shortened(text: String, chars: usize) -> String {
    let text = crate::diagnostic::escape_controls(text);
    let count = text.chars().count();
    if count <= chars {
        return text;
    }
    let head: String = text.chars().take(chars / 2).collect();
    let tail: String = text.chars().skip(count - chars / 2).collect();
    format!("{head} … {tail}")
}

/// Which contract an object breaks, or why it was not checked: it decides
/// the diagnostic's code, severity and help in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contract {
    /// Its kind's strict schema.
    Schema,
    /// A CEL rule of its kind's CRD.
    Rule,
    /// The API server's validation beyond the schema: names and paths.
    ApiServer,
    /// An operator's admission webhook.
    Webhook,
    /// What a controller does with the objects together.
    Operator,
    /// Admitted, but it will not run as written, or the webhook warns.
    Admitted,
    /// Not checked: no schema for its kind.
    Unchecked,
    /// Not checked: a built-in group's kind or version Kubernetes does not serve.
    Unserved,
}

impl Contract {
    /// The diagnostic code.
    pub fn code(self) -> &'static str {
        use crate::diagnostic::codes;
        match self {
            Contract::Schema => codes::VERIFY_SCHEMA,
            Contract::Rule => codes::VERIFY_RULE,
            Contract::ApiServer => codes::VERIFY_APISERVER,
            Contract::Webhook => codes::VERIFY_WEBHOOK,
            Contract::Operator => codes::VERIFY_OPERATOR,
            Contract::Admitted => codes::VERIFY_ADMITTED,
            Contract::Unchecked => codes::VERIFY_UNCHECKED,
            Contract::Unserved => codes::VERIFY_UNSERVED,
        }
    }

    /// How a problem of this contract is reported (`--require-schemas`
    /// makes the two that were not checked errors).
    pub fn severity(self) -> crate::diagnostic::Severity {
        use crate::diagnostic::Severity;
        match self {
            Contract::Admitted | Contract::Unserved => Severity::Warning,
            Contract::Unchecked => Severity::Note,
            _ => Severity::Error,
        }
    }

    /// Whether the object was checked at all.
    pub fn checked(self) -> bool {
        !matches!(self, Contract::Unchecked | Contract::Unserved)
    }

    /// What breaking it means, said once for every problem of the kind;
    /// `None` for the schema, whose help names the object's own fields.
    pub fn help(self) -> Option<&'static str> {
        Some(match self {
            Contract::Schema => return None,
            Contract::Rule => {
                "the API server evaluates the CRD's `x-kubernetes-validations` rules and rejects an object that fails one"
            }
            Contract::Webhook => {
                "the operator's admission webhook rejects this when the object is created"
            }
            Contract::Operator => {
                "the API server admits this object; what its operator makes of it is refused, or is not what the object says"
            }
            Contract::Admitted => {
                "the cluster accepts this object as it is; fix it so the job runs as written"
            }
            Contract::ApiServer => {
                "the API server validates more than the schema says (names and paths, which a node turns into paths of its own; a Job's counts and policies) and rejects the object"
            }
            Contract::Unchecked => manifests::UNCHECKED_HELP,
            Contract::Unserved => {
                "a cluster running that release rejects an API version it does not serve; a newer one may serve it, so the object is not checked"
            }
        })
    }
}

/// One problem with one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// `Kind/name` of the object.
    pub object: String,
    /// The object's place in the stream verified: what joins the problem
    /// to its lines (two objects may share a `Kind/name`).
    pub index: Option<usize>,
    /// Where in the object, as a JSON pointer (`/spec/...`); empty for the whole.
    pub path: String,
    pub message: String,
    pub contract: Contract,
}

impl Problem {
    fn new(contract: Contract, object: &str, path: &str, message: String) -> Problem {
        Problem {
            object: shortened(object.to_owned(), MAX_SHOWN),
            index: None,
            path: shortened(path.to_owned(), MAX_SHOWN),
            message: shortened(message, MAX_SHOWN),
            contract,
        }
    }

    /// The diagnostic code of the contract the problem breaks.
    pub fn code(&self) -> &'static str {
        self.contract.code()
    }

    fn schema(object: &str, path: &str, message: String) -> Problem {
        Problem::new(Contract::Schema, object, path, message)
    }

    fn webhook(object: &str, path: &str, message: String) -> Problem {
        Problem::new(Contract::Webhook, object, path, message)
    }

    fn admitted(object: &str, path: &str, message: String) -> Problem {
        Problem::new(Contract::Admitted, object, path, message)
    }

    fn apiserver(object: &str, path: &str, message: String) -> Problem {
        Problem::new(Contract::ApiServer, object, path, message)
    }

    fn operator(object: &str, path: &str, message: String) -> Problem {
        Problem::new(Contract::Operator, object, path, message)
    }
}

/// The releases of the cluster's Kubernetes and operators, for the kinds
/// whose API or rules differ between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Releases {
    /// The Training Operator, for PyTorchJobs.
    pub operator: pytorchjob::Release,
    /// JobSet, for JobSets.
    pub jobset: jobset::release::Release,
    /// Kubernetes, for its built-in kinds.
    pub kubernetes: kubernetes::Release,
}

/// Every problem of every object trainc builds; a TrainJob is checked for
/// Trainer `level`, a JobSet for JobSet v0.8, the oldest release trainc's
/// JobSets are for.
pub fn verify(
    objects: &[Object],
    level: ApiLevel,
    runtimes: &[crate::trainer::runtime::Runtime],
) -> Vec<Problem> {
    let values: Vec<&Value> = objects.iter().map(|o| &o.value).collect();
    let releases = Releases {
        jobset: jobset::release::Release::V0_8,
        ..Releases::default()
    };
    verify_at(&values, level, releases, runtimes)
}

/// Every problem of every object given as JSON (as read back from YAML).
pub fn verify_values(values: &[&Value], level: ApiLevel) -> Vec<Problem> {
    verify_with_runtimes(values, level, &[])
}

/// [`verify_values`], a TrainJob also checked against `runtimes` (the
/// cluster's, from a runtimes file) when the objects do not hold its runtime.
pub fn verify_with_runtimes(
    values: &[&Value],
    level: ApiLevel,
    runtimes: &[crate::trainer::runtime::Runtime],
) -> Vec<Problem> {
    verify_at(values, level, Releases::default(), runtimes)
}

/// [`verify_with_runtimes`], a PyTorchJob and a JobSet checked for the
/// `releases` of their operators.
pub fn verify_at(
    values: &[&Value],
    level: ApiLevel,
    releases: Releases,
    runtimes: &[crate::trainer::runtime::Runtime],
) -> Vec<Problem> {
    let mut problems: Vec<Problem> = in_order(values, |offset, chunk| {
        let mut problems = Vec::new();
        for (i, value) in chunk.iter().enumerate() {
            let start = problems.len();
            one_object(value, level, releases, &crd::NONE, &mut problems);
            for problem in &mut problems[start..] {
                problem.index = Some(offset + i);
            }
        }
        problems
    })
    .into_iter()
    .flatten()
    .collect();
    problems.extend(together(values, level, runtimes));
    problems
}

/// The problems of the objects together: what the operators do with them
/// ([`objects`]) and a TrainJob with its runtime ([`runtimes`]). `values`
/// may hold only what [`objects::kept`] keeps of each object.
fn together(
    values: &[&Value],
    level: ApiLevel,
    runtimes: &[crate::trainer::runtime::Runtime],
) -> Vec<Problem> {
    let mut problems = Vec::new();
    objects::check(values, &mut problems);
    runtimes::check(values, level, runtimes, &mut problems);
    problems
}

/// Items fewer than this are checked on one thread: a build's handful is
/// done before a second thread would start.
const PARALLEL_FROM: usize = 256;

/// `check` of `items` a chunk at a time (given the index of its first
/// item), the chunks' results in the items' order: on every core for a
/// long list, so that the output is the same on any machine.
fn in_order<T: Sync, R: Send>(items: &[T], check: impl Fn(usize, &[T]) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    if threads < 2 || items.len() < PARALLEL_FROM {
        return vec![check(0, items)];
    }
    let size = items.len().div_ceil(threads);
    let check = &check;
    std::thread::scope(|scope| {
        let running: Vec<_> = items
            .chunks(size)
            .enumerate()
            .map(|(n, chunk)| scope.spawn(move || check(n * size, chunk)))
            .collect();
        running
            .into_iter()
            .map(|thread| {
                thread
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// The checks of one object: its kind's schema, the API server's own rules,
/// and the webhook that serves its kind and version.
fn one_object(
    value: &Value,
    level: ApiLevel,
    releases: Releases,
    crds: &crd::Crds,
    problems: &mut Vec<Problem>,
) {
    let id = id(value);
    // JobSet's mutating webhook fills in what its schema requires (failure
    // policy rule names) before the API server checks the schema.
    let is_jobset = value["apiVersion"] == jobset::API_VERSION && value["kind"] == jobset::KIND;
    let start = problems.len();
    let pruned = nulls::pruned(&id, value, problems);
    if pruned.is_some() {
        nulls::unknown(
            &id,
            value,
            (level, releases.kubernetes),
            crds,
            start,
            problems,
        );
    }
    let value = pruned.as_ref().unwrap_or(value);
    let defaulted = is_jobset.then(|| jobset::defaulted(value));
    let value = defaulted.as_ref().unwrap_or(value);
    if schema::check(&id, value, (level, releases.kubernetes), crds, problems)
        == schema::Checked::NoSchema
    {
        problems.push(unchecked(&id, value, releases.kubernetes));
    }
    apiserver::check(&id, value, releases.kubernetes, problems);
    // A webhook serves its own API version only.
    match (
        value["apiVersion"].as_str().unwrap_or(""),
        value["kind"].as_str().unwrap_or(""),
    ) {
        (pytorchjob::API_VERSION, pytorchjob::KIND) => {
            webhooks::pytorchjob(&id, value, releases.operator, problems);
            apiserver::scale_replicas(&id, value, problems);
        }
        (trainjob::API_VERSION, trainjob::KIND) => {
            webhooks::trainjob(&id, value, level, problems);
        }
        (trainjob::API_VERSION, "TrainingRuntime" | "ClusterTrainingRuntime") => {
            webhooks::runtime(&id, value, level, problems);
            jobs_of_runtime(&id, value, problems);
        }
        (jobset::API_VERSION, jobset::KIND) => {
            let release = releases.jobset;
            let refused = jobset::release::refusals(value, release);
            for refusal in refused.into_iter().chain(jobset::webhook::refusals(value)) {
                problems.push(Problem::webhook(&id, &refusal.pointer, refusal.message));
            }
            jobs_of_jobset(&id, value, problems);
        }
        ("v1", "Service") => {
            for refused in crate::cluster::core_kinds::service(value) {
                problems.push(Problem::apiserver(&id, &refused.pointer, refused.message));
            }
        }
        ("v1", "PersistentVolumeClaim") => {
            for refused in crate::cluster::core_kinds::claim(value) {
                problems.push(Problem::apiserver(&id, &refused.pointer, refused.message));
            }
        }
        (job::API_VERSION, job::KIND) => {
            let spec = job_spec::refusals(&value["spec"])
                .into_iter()
                .map(|r| job_spec::Refused {
                    pointer: format!("/spec{}", r.pointer),
                    ..r
                });
            for refused in spec.chain(job_spec::object_refusals(value)) {
                problems.push(Problem::apiserver(&id, &refused.pointer, refused.message));
            }
        }
        _ => {}
    }
}

/// What the API server refuses in the Jobs JobSet makes of `value`'s
/// replicated jobs (as its webhook defaulted them), which JobSet's webhook
/// leaves to it: the JobSet is admitted and never runs those pods.
fn jobs_of_jobset(id: &str, value: &Value, problems: &mut Vec<Problem>) {
    jobs_refused(id, &value["spec"], "/spec", "the replicated job", problems);
}

/// The same for the JobSet Trainer makes of a training runtime's template,
/// as JobSet's webhook defaults it: Trainer writes each replicated job's
/// pod count into both `parallelism` and `completions` (kubeflow/trainer
/// v2.3.0, `pkg/runtime/framework/plugins/jobset/jobset.go`
/// `SyncParallelCount`), so a count is never missing there.
fn jobs_of_runtime(id: &str, value: &Value, problems: &mut Vec<Problem>) {
    // A template of another shape is the schema's to report.
    if !value["spec"]["template"]["spec"].is_object() {
        return;
    }
    let mut jobset = serde_json::json!({ "spec": value["spec"]["template"]["spec"].clone() });
    jobset = jobset::defaulted(&jobset);
    let rjobs = jobset["spec"]["replicatedJobs"].as_array_mut();
    for rjob in rjobs.into_iter().flatten() {
        let Some(job) = rjob
            .pointer_mut("/template/spec")
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        let count = (job.get("parallelism").and_then(Value::as_i64))
            .or_else(|| job.get("completions").and_then(Value::as_i64))
            .unwrap_or(1);
        job.insert("parallelism".to_owned(), Value::from(count));
        job.insert("completions".to_owned(), Value::from(count));
    }
    jobs_refused(
        id,
        &jobset["spec"],
        "/spec/template/spec",
        "the runtime's replicated job",
        problems,
    );
}

/// Each replicated job of the JobSet spec `spec` (at `at`) that the API
/// server's Job validation refuses.
fn jobs_refused(id: &str, spec: &Value, at: &str, whose: &str, problems: &mut Vec<Problem>) {
    let rjobs = spec["replicatedJobs"].as_array().into_iter().flatten();
    for (i, rjob) in rjobs.enumerate() {
        let name = rjob["name"].as_str().unwrap_or("");
        for refused in job_spec::refusals(&rjob["template"]["spec"]) {
            // JobSet's webhook writes `OnFailure` where the template has none.
            let defaulted = if refused.pointer == "/template/spec/restartPolicy" {
                " (JobSet's webhook sets `OnFailure` where none is written)"
            } else {
                ""
            };
            let pointer = format!("{at}/replicatedJobs/{i}/template/spec{}", refused.pointer);
            // Refused at admission already (a set's repeated item): said once.
            if problems.iter().any(|p| p.object == id && p.path == pointer) {
                continue;
            }
            problems.push(Problem::operator(
                id,
                &pointer,
                format!(
                    "{}{defaulted}: the API server refuses each Job JobSet makes of {whose} `{name}`, so none of its pods run",
                    refused.message
                ),
            ));
        }
    }
}

/// The operator that serves `kind` of `group`, and the one version it
/// serves it in (kubeflow/trainer v1.7.0–v1.9.4 and v2.0.0–v2.3.0,
/// `manifests/base/crds`: one served version each).
fn operator_version(group: &str, kind: &str) -> Option<(&'static str, &'static str)> {
    match (group, kind) {
        ("kubeflow.org", pytorchjob::KIND) => Some((
            "the Training Operator (v1.7 to v1.9)",
            pytorchjob::API_VERSION,
        )),
        ("trainer.kubeflow.org", trainjob::KIND | "TrainingRuntime" | "ClusterTrainingRuntime") => {
            Some(("Kubeflow Trainer (v2.0 to v2.3)", trainjob::API_VERSION))
        }
        ("jobset.x-k8s.io", jobset::KIND) => Some(("JobSet (v0.8 to v0.12)", jobset::API_VERSION)),
        _ => None,
    }
}

/// Why an object of a kind without a schema was not checked.
fn unchecked(id: &str, value: &Value, release: kubernetes::Release) -> Problem {
    let api_version = value["apiVersion"].as_str().unwrap_or("");
    let kind = value["kind"].as_str().unwrap_or("");
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    if let Some((operator, served)) = operator_version(group, kind)
        && served != api_version
    {
        return Problem::new(
            Contract::Unserved,
            id,
            "/apiVersion",
            format!("{operator} serves `{kind}` as `{served}` only, not `{api_version}`"),
        );
    }
    if kubernetes::built_in_group(release, api_version) {
        let instead = kubernetes::served_instead(release, api_version, kind)
            .map_or_else(String::new, |s| format!("; {s}"));
        return Problem::new(
            Contract::Unserved,
            id,
            "/apiVersion",
            format!("Kubernetes {release} serves no `{api_version}` `{kind}`{instead}"),
        );
    }
    Problem::new(
        Contract::Unchecked,
        id,
        "/kind",
        format!("not checked: trainc has no schema for `{api_version}` `{kind}`"),
    )
}

/// `Kind/name` of an object, and its namespace where it names one: the
/// same name in two namespaces is two objects.
fn id(value: &Value) -> String {
    let kind = value["kind"].as_str().unwrap_or("?");
    let name = value["metadata"]["name"].as_str().unwrap_or("?");
    match value["metadata"]["namespace"].as_str() {
        Some(namespace) => format!("{kind}/{name} (namespace {namespace})"),
        None => format!("{kind}/{name}"),
    }
}

#[cfg(test)]
mod tests;
