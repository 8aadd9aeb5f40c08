//! What the operators' admission webhooks (and the CRDs' CEL rules) reject,
//! object by object: rules a JSON Schema cannot express.

use serde_json::Value;

use super::Problem;
use crate::cluster::pytorchjob::{self, Release};
use crate::cluster::trainjob;
use crate::spec::ApiLevel;
use crate::syntax::names;

/// Both operators want the job name to be a DNS-1035 label.
fn job_name(id: &str, job: &Value, problems: &mut Vec<Problem>) {
    let name = job["metadata"]["name"].as_str().unwrap_or("");
    if let Err(why) = names::dns1035_label(name) {
        problems.push(Problem::webhook(
            id,
            "/metadata/name",
            format!("the job name is not a DNS-1035 label: {why}"),
        ));
    }
}

/// The `runPolicy.managedBy` values the Training Operator v1.9 accepts
/// (kubeflow/trainer v1.9.2, `pkg/apis/kubeflow.org/v1/common_types.go`
/// `KubeflowJobsController`, `MultiKueueController`).
const MANAGERS: [&str; 2] = [
    "kubeflow.org/training-operator",
    "kueue.x-k8s.io/multikueue",
];

/// The webhook's rules on the job's spec, beside its replicas
/// (kubeflow/trainer v1.9.2, `pkg/webhooks/pytorch/pytorchjob_webhook.go`
/// `validateSpec`; `pkg/common/util/webhooks.go` `ValidateRunPolicy`;
/// v1.8.0 lacks the two marked v1.9; v1.7.0's controller has only the
/// `nProcPerNode` pair, and no deprecation warning).
fn pytorchjob_spec(id: &str, job: &Value, release: Release, problems: &mut Vec<Problem>) {
    let v1_9 = release >= Release::V1_9;
    // The CRD gained `runPolicy.managedBy` with v1.9.0 (kubeflow/trainer
    // v1.8.1 and v1.9.0, `manifests/base/crds/kubeflow.org_pytorchjobs.yaml`;
    // no other field of the job's own came or went from v1.7.0 on).
    if !v1_9 && job.pointer("/spec/runPolicy/managedBy").is_some() {
        problems.push(Problem::schema(
            id,
            "/spec/runPolicy/managedBy",
            format!(
                "the Training Operator {} has no such field (it came with v1.9): the API server refuses it under `kubectl apply`'s strict field validation, and drops it otherwise, so the operator runs the job",
                release.name()
            ),
        ));
    }
    let mut reject =
        |path: &str, message: String| problems.push(Problem::webhook(id, path, message));
    if v1_9
        && let Some(manager) = job
            .pointer("/spec/runPolicy/managedBy")
            .and_then(Value::as_str)
        && !MANAGERS.contains(&manager)
    {
        reject(
            "/spec/runPolicy/managedBy",
            format!(
                "`managedBy` `{manager}` is not supported: the Training Operator v1.9 accepts {}",
                MANAGERS.map(|m| format!("`{m}`")).join(" or ")
            ),
        );
    }
    let elastic = job
        .pointer("/spec/elasticPolicy")
        .is_some_and(|p| !p.is_null());
    if v1_9 && elastic && job.pointer("/spec/pytorchReplicaSpecs/Worker").is_none() {
        reject(
            "/spec/pytorchReplicaSpecs/Worker",
            "an elastic job (`elasticPolicy`) must have Workers (the Training Operator v1.9 requires `pytorchReplicaSpecs.Worker`)".to_owned(),
        );
    }
    if job.pointer("/spec/elasticPolicy/nProcPerNode").is_some() {
        if job.pointer("/spec/nprocPerNode").is_some() {
            reject(
                "/spec/elasticPolicy/nProcPerNode",
                "`elasticPolicy.nProcPerNode` must not be used with `nprocPerNode`".to_owned(),
            );
        }
        if release == Release::V1_7 {
            return;
        }
        problems.push(Problem::admitted(
            id,
            "/spec/elasticPolicy/nProcPerNode",
            "the webhook warns that `elasticPolicy.nProcPerNode` is deprecated: use `spec.nprocPerNode`".to_owned(),
        ));
    }
}

/// What the Training Operator of `release` refuses: its webhook from
/// v1.8, its controller at v1.7 ([`Release`]), where the API server takes
/// the job and the operator never runs it.
pub(super) fn pytorchjob(id: &str, job: &Value, release: Release, problems: &mut Vec<Problem>) {
    if release > Release::V1_7 {
        return pytorchjob_rules(id, job, release, problems);
    }
    let mut found = Vec::new();
    pytorchjob_rules(id, job, release, &mut found);
    for mut problem in found {
        if problem.contract == super::Contract::Webhook {
            problem.contract = super::Contract::Operator;
            problem.message = super::shortened(
                format!(
                    "{}: the Training Operator v1.7 checks this in its controller, which takes the job, records a `FailedValidation` event and never makes its pods",
                    problem.message
                ),
                super::MAX_SHOWN,
            );
        }
        problems.push(problem);
    }
}

fn pytorchjob_rules(id: &str, job: &Value, release: Release, problems: &mut Vec<Problem>) {
    job_name(id, job, problems);
    pytorchjob_spec(id, job, release, problems);
    let name = job["metadata"]["name"].as_str().unwrap_or("");
    let mut unmade = Vec::new();
    let mut reject =
        |path: &str, message: String| problems.push(Problem::webhook(id, path, message));
    let Some(replicas) = job
        .pointer("/spec/pytorchReplicaSpecs")
        .and_then(Value::as_object)
    else {
        reject("/spec/pytorchReplicaSpecs", "no replica specs".to_owned());
        return;
    };
    for (kind, spec) in replicas {
        let path = format!("/spec/pytorchReplicaSpecs/{kind}");
        if kind != "Master" && kind != "Worker" {
            reject(
                &path,
                format!("replica type `{kind}` is neither Master nor Worker"),
            );
        }
        let count = spec["replicas"].as_u64();
        // v1.7.0 takes an unset count (the default, 1).
        let unset_taken = release == Release::V1_7 && count.is_none();
        if kind == "Master" && count != Some(1) && !unset_taken {
            reject(
                &format!("{path}/replicas"),
                match count {
                    Some(n) => format!("the Master must have `replicas: 1`, found {n}"),
                    None => "the Master must have `replicas: 1` written out; the webhook does not default it".to_owned(),
                },
            );
        }
        // The operator copies a replica's restart policy to its pods
        // (`ExitCode` as `Never`; kubeflow/trainer v1.7.0–v1.9.4
        // `pkg/core/pod.go` `SetRestartPolicy`), where the API server takes
        // only `Always`, `OnFailure` or `Never`: the CRD has no enum there.
        if let Some(policy) = spec["restartPolicy"].as_str()
            && !policy.is_empty()
            && !["Always", "OnFailure", "Never", "ExitCode"].contains(&policy)
        {
            unmade.push(Problem::operator(
                id,
                &format!("{path}/restartPolicy"),
                format!(
                    "the operator copies `restartPolicy` `{policy}` to every pod, and the API server rejects a pod whose restart policy is not `Always`, `OnFailure` or `Never`: no pod would ever be made (the replica also takes `ExitCode`)"
                ),
            ));
        }
        if release >= Release::V1_9 && kind == "Worker" && count.is_some_and(|n| n < 1) {
            reject(
                &format!("{path}/replicas"),
                "Workers must have `replicas` of at least 1".to_owned(),
            );
        }
        let containers = spec
            .pointer("/template/spec/containers")
            .and_then(Value::as_array);
        for (i, container) in containers.into_iter().flatten().enumerate() {
            if container["image"].as_str().is_none_or(str::is_empty) {
                reject(
                    &format!("{path}/template/spec/containers/{i}/image"),
                    "every container must have an `image`".to_owned(),
                );
            }
        }
        if !containers
            .into_iter()
            .flatten()
            .any(|c| c["name"] == pytorchjob::CONTAINER)
        {
            reject(
                &format!("{path}/template/spec/containers"),
                format!("no container named `{}`", pytorchjob::CONTAINER),
            );
        }
        let last = count.unwrap_or(1).saturating_sub(1);
        let derived = format!("{name}-{}-{last}", kind.to_ascii_lowercase());
        // Not a webhook rule: the operator's Service create fails.
        if derived.len() > names::MAX_LABEL {
            unmade.push(Problem::operator(
                id,
                "/metadata/name",
                format!(
                    "the operator would name a pod and Service `{derived}`, longer than {} characters: the API server refuses the Service, and the job never runs",
                    names::MAX_LABEL
                ),
            ));
        }
    }
    problems.append(&mut unmade);
}

/// What Trainer's webhook and the TrainJob CRD's CEL rules reject.
pub(super) fn trainjob(id: &str, job: &Value, level: ApiLevel, problems: &mut Vec<Problem>) {
    // From v2.1 the CRD's CEL rules check the name (super::schema::name_why).
    if level == ApiLevel::V2_0 {
        job_name(id, job, problems);
    }
    unique_mounts(id, job, problems);
    reserved_containers(id, job, problems);
    let mut reject =
        |path: &str, message: String| problems.push(Problem::webhook(id, path, message));
    // The webhook validates with the runtimes it registers, found by the
    // reference's group and kind, which the CRD defaults when `runtimeRef`
    // is given (kubeflow/trainer v2.0.0–v2.3.0 `pkg/webhooks/trainjob_webhook.go`
    // `ValidateCreate`: "unsupported runtime").
    let reference = &job["spec"]["runtimeRef"];
    let group = reference["apiGroup"].as_str().unwrap_or(trainjob::GROUP);
    let kind = reference["kind"]
        .as_str()
        .unwrap_or("ClusterTrainingRuntime");
    if !reference.is_object() {
        reject(
            "/spec",
            "Trainer refuses a TrainJob with no `spec.runtimeRef` (\"unsupported runtime\"): name the runtime it runs on".to_owned(),
        );
    } else if group != trainjob::GROUP
        || !matches!(kind, "ClusterTrainingRuntime" | "TrainingRuntime")
    {
        reject(
            "/spec/runtimeRef",
            format!(
                "Trainer runs TrainJobs on a `ClusterTrainingRuntime` or `TrainingRuntime` of `{}`, not a `{kind}` of `{group}` (\"unsupported runtime\")",
                trainjob::GROUP
            ),
        );
    }
    let name = job["metadata"]["name"].as_str().unwrap_or("");
    let nodes = job
        .pointer("/spec/trainer/numNodes")
        .and_then(Value::as_u64)
        .unwrap_or(1);
    // JobSet's webhook checks the longest pod name with `-abcde` standing in
    // for the random suffix (kubernetes-sigs/jobset v0.12.0,
    // pkg/webhooks/jobset_webhook.go).
    let pod = format!(
        "{name}-{}-0-{}-abcde",
        trainjob::NODE,
        nodes.saturating_sub(1)
    );
    if pod.len() > names::MAX_LABEL {
        reject(
            "/metadata/name",
            format!(
                "JobSet would reject the pod name `{pod}` as longer than {} characters",
                names::MAX_LABEL
            ),
        );
    }
    for (i, patch) in job
        .pointer("/spec/runtimePatches")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let manager = patch["manager"].as_str().unwrap_or("");
        let domain_prefixed = manager.split_once('/').is_some_and(|(domain, path)| {
            domain.contains('.') && names::dns1123_subdomain(domain).is_ok() && !path.is_empty()
        });
        if !domain_prefixed {
            reject(
                &format!("/spec/runtimePatches/{i}/manager"),
                format!("manager `{manager}` is not a domain-prefixed path"),
            );
        }
    }
}

/// A process count of 0 per node: the CRDs of Trainer v2.0.0–v2.3.0 take
/// it (`int32`, no minimum on the torch policy's or the TrainJob's), but
/// torchrun refuses it (pytorch `torch/distributed/elastic/agent/server/
/// api.py` `WorkerSpec.__post_init__`: `assert self.local_world_size > 0`),
/// so every pod fails; Trainer's
/// main branch adds the CEL rule `self >= 1` (kubeflow/trainer pull 3809).
pub(super) fn zero_procs(id: &str, value: &Value, path: &str, problems: &mut Vec<Problem>) {
    if value.pointer(path).and_then(Value::as_i64) == Some(0) {
        problems.push(Problem::admitted(
            id,
            path,
            "0 processes per node: the cluster takes it, but torchrun refuses to start none, so every pod fails".to_owned(),
        ));
    }
}

/// `trainer.env` against the variables the runtime's ML policy reserves
/// ([`crate::trainer::webhook::reserved_env`]; `framework` is `None` for
/// a runtime trainc does not know).
pub(super) fn reserved_env(
    id: &str,
    job: &Value,
    framework: Option<&crate::trainer::runtime::Framework>,
    level: ApiLevel,
    problems: &mut Vec<Problem>,
) {
    let reserved = crate::trainer::webhook::reserved_env(framework, level.release());
    let plugin = match framework {
        Some(crate::trainer::runtime::Framework::Mpi) => "MPI",
        Some(crate::trainer::runtime::Framework::Other(name)) => name.as_str(),
        _ => "torch",
    };
    let vars = job.pointer("/spec/trainer/env").and_then(Value::as_array);
    let mut names: Vec<&str> = vars
        .into_iter()
        .flatten()
        .filter_map(|var| var["name"].as_str())
        .filter(|name| reserved.contains(name))
        .collect();
    names.sort_unstable();
    names.dedup();
    // One problem for the list, as the plugins' `Validate` say it.
    let (verb, pronoun) = if names.len() == 1 {
        ("is", "it")
    } else {
        ("are", "them")
    };
    if names.is_empty() {
        return;
    }
    let listed =
        crate::diagnostic::listed(&names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>());
    let torch = matches!(
        framework,
        None | Some(crate::trainer::runtime::Framework::Torch { .. })
    );
    if torch && !crate::trainer::webhook::torch_checks_env(&job["spec"]["trainer"], level.release())
    {
        problems.push(Problem::admitted(
            id,
            "/spec/trainer/env",
            format!(
                "{listed} {verb} reserved for the torch runtime, which sets {pronoun} over these values; Trainer {} checks that only when `numProcPerNode` is set",
                level.release().tag()
            ),
        ));
        return;
    }
    // XGBoost's `Validate` names each entry (`plugins/xgboost/xgboost.go`).
    if plugin == "xgboost" {
        for (i, var) in vars.into_iter().flatten().enumerate() {
            if let Some(name) = var["name"].as_str().filter(|n| reserved.contains(n)) {
                problems.push(Problem::webhook(
                    id,
                    &format!("/spec/trainer/env/{i}"),
                    format!("`{name}` is reserved for the XGBoost runtime, which sets it"),
                ));
            }
        }
        return;
    }
    problems.push(Problem::webhook(
        id,
        "/spec/trainer/env",
        format!("{listed} {verb} reserved for the {plugin} runtime, which sets {pronoun}"),
    ));
}

/// What Trainer's runtime webhook rejects ([`crate::trainer::webhook`]).
pub(super) fn runtime(id: &str, runtime: &Value, level: ApiLevel, problems: &mut Vec<Problem>) {
    // v2.0 and v2.1's CRDs reject 0 by a CEL rule (`self > 0 || self in
    // ['auto', 'cpu', 'gpu']`): only later releases take it.
    if !matches!(level, ApiLevel::V2_0 | ApiLevel::V2_1) {
        zero_procs(id, runtime, "/spec/mlPolicy/torch/numProcPerNode", problems);
    }
    let release = level.release();
    if crate::trainer::webhook::deprecated(runtime, release) {
        problems.push(Problem::admitted(
            id,
            &format!(
                "/metadata/labels/{}",
                crate::tree::pointer_segment(crate::trainer::webhook::SUPPORT_LABEL)
            ),
            format!(
                "Trainer's webhook warns that this runtime is deprecated and will be removed in a future release of Kubeflow Trainer ({})",
                crate::trainer::webhook::DEPRECATION_POLICY
            ),
        ));
    }
    for rejection in crate::trainer::webhook::runtime_rejections(runtime, release) {
        problems.push(Problem::webhook(
            id,
            &rejection.path,
            format!("Trainer {}: {}", release.tag(), rejection.message),
        ));
    }
}

/// The containers whose env Trainer sets itself: a patch of any form may
/// not give them env (kubeflow/trainer v2.0.0–v2.3.0,
/// `pkg/runtime/framework/plugins/jobset/jobset.go` `Validate`: "must not
/// have envs for the dataset-initializer, model-initializer, node
/// containers"); the trainer's env is `trainer.env`.
fn reserved_containers(id: &str, job: &Value, problems: &mut Vec<Problem>) {
    const RESERVED: [&str; 3] = ["dataset-initializer", "model-initializer", trainjob::NODE];
    for PodPatch { at, pod, .. } in pod_patches(job) {
        let containers = pod["containers"].as_array().into_iter().flatten();
        for (c, container) in containers.enumerate() {
            let name = container["name"].as_str().unwrap_or_default();
            // `len(c.Env) > 0`: an empty list gives none.
            let given = container["env"]
                .as_array()
                .is_some_and(|env| !env.is_empty());
            if RESERVED.contains(&name) && given {
                problems.push(Problem::webhook(
                    id,
                    &format!("{at}/containers/{c}/env"),
                    format!("env is patched into the `{name}` container, whose env Trainer sets; the trainer's belongs in `trainer.env`"),
                ));
            }
        }
    }
}

/// One pod spec of a TrainJob's patch: where it is, the replicated jobs it
/// targets (where each name is, the name) and the pod spec.
pub(super) struct PodPatch<'v> {
    pub(super) at: String,
    pub(super) jobs: Vec<(String, String)>,
    pub(super) pod: &'v Value,
}

/// Every pod spec of a TrainJob's patch: `runtimePatches` (v2.2 and later),
/// `podTemplateOverrides` (v2.1), `podSpecOverrides` (v2.0).
pub(super) fn pod_patches(job: &Value) -> Vec<PodPatch<'_>> {
    let spec = &job["spec"];
    let items = |key: &str| spec[key].as_array().into_iter().flatten().enumerate();
    let mut pods = Vec::new();
    for (i, patch) in items("runtimePatches") {
        let jobs = patch.pointer("/trainingRuntimeSpec/template/spec/replicatedJobs");
        for (j, rjob) in jobs
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let base = format!(
                "/spec/runtimePatches/{i}/trainingRuntimeSpec/template/spec/replicatedJobs/{j}"
            );
            // A job patched without a pod still names a job the runtime
            // must have.
            if let Some(name) = rjob["name"].as_str() {
                let pod = rjob
                    .pointer("/template/spec/template/spec")
                    .unwrap_or(&Value::Null);
                pods.push(PodPatch {
                    at: format!("{base}/template/spec/template/spec"),
                    jobs: vec![(format!("{base}/name"), name.to_owned())],
                    pod,
                });
            }
        }
    }
    for (key, nested) in [("podTemplateOverrides", true), ("podSpecOverrides", false)] {
        for (i, patch) in items(key) {
            let base = format!("/spec/{key}/{i}");
            let jobs = patch["targetJobs"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate();
            pods.push(PodPatch {
                at: if nested {
                    format!("{base}/spec")
                } else {
                    base.clone()
                },
                jobs: jobs
                    .filter_map(|(t, target)| {
                        Some((
                            format!("{base}/targetJobs/{t}/name"),
                            target["name"].as_str()?.to_owned(),
                        ))
                    })
                    .collect(),
                pod: if nested { &patch["spec"] } else { patch },
            });
        }
    }
    pods
}

/// Every Trainer CRD v2.0.0–v2.3.0 declares a patched container's
/// `volumeMounts` a list map keyed by `name`
/// (`manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml`): the API
/// server rejects two mounts of one volume in one container.
fn unique_mounts(id: &str, job: &Value, problems: &mut Vec<Problem>) {
    for PodPatch { at, pod, .. } in pod_patches(job) {
        for list in ["containers", "initContainers"] {
            for (c, container) in pod[list].as_array().into_iter().flatten().enumerate() {
                let mut seen = std::collections::HashSet::new();
                let mounts = container["volumeMounts"].as_array().into_iter().flatten();
                for (m, mount) in mounts.enumerate() {
                    let Some(name) = mount["name"].as_str() else {
                        continue;
                    };
                    if !seen.insert(name) {
                        problems.push(Problem::schema(
                            id,
                            &format!("{at}/{list}/{c}/volumeMounts/{m}/name"),
                            format!("the volume `{name}` is mounted twice in one container; the patch keys mounts by name"),
                        ));
                    }
                }
            }
        }
    }
}
