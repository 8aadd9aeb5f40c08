//! What Trainer's TrainingRuntime and ClusterTrainingRuntime webhook
//! rejects, by release (kubeflow/trainer v2.0.0–v2.3.0,
//! `pkg/webhooks/trainingruntime_webhook.go` `validateReplicatedJobs`, run
//! on create for both kinds). `verify` applies it to the runtimes among the
//! objects, and the rules to the runtime a TrainJob runs on, which trainc
//! may write from it.

use serde_json::Value as Json;

use super::runtime::{ANCESTOR_LABEL, Framework, Runtime};
use super::{Rejection, Release};

/// What the webhook requires of a job labelled with each ancestor step: a
/// container of this name (from v2.1.0; `expectedContainerNames`).
const ANCESTORS: [(&str, &str); 3] = [
    ("trainer", "node"),
    ("dataset-initializer", "dataset-initializer"),
    ("model-initializer", "model-initializer"),
];

/// The label that marks a ClusterTrainingRuntime as deprecated, and the
/// policy Trainer's warnings point to (kubeflow/trainer v2.1.0–v2.3.0,
/// `pkg/constants/constants.go` `LabelSupport`, `SupportDeprecated`,
/// `RuntimeDeprecationPolicyURL`).
pub const SUPPORT_LABEL: &str = "trainer.kubeflow.org/support";
pub const DEPRECATION_POLICY: &str = "https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html#runtime-deprecation-policy";

/// Whether Trainer warns that the runtime `object` is deprecated: a
/// ClusterTrainingRuntime labelled `trainer.kubeflow.org/support:
/// deprecated`, from v2.1.0, when it is created and when a TrainJob names
/// it (`pkg/webhooks/clustertrainingruntime_webhook.go`,
/// `pkg/runtime/core/clustertrainingruntime.go`).
pub fn deprecated(object: &Json, release: Release) -> bool {
    release >= Release::V2_1
        && object["kind"] == "ClusterTrainingRuntime"
        && object["metadata"]["labels"][SUPPORT_LABEL] == "deprecated"
}

/// Every rejection of the runtime `object` by the webhook of `release`.
/// A replicated job's `replicas` is JobSet's default 1 when unset.
pub fn runtime_rejections(object: &Json, release: Release) -> Vec<Rejection> {
    let mut out = Vec::new();
    let jobs = object
        .pointer("/spec/template/spec/replicatedJobs")
        .and_then(Json::as_array);
    for (i, job) in jobs.into_iter().flatten().enumerate() {
        let at = format!("/spec/template/spec/replicatedJobs/{i}");
        let replicas = job.get("replicas").map_or(Some(1), Json::as_i64);
        let single = |out: &mut Vec<Rejection>, what: &str| {
            if replicas != Some(1) {
                out.push(Rejection {
                    path: format!("{at}/replicas"),
                    message: format!(
                        "{what} must have `replicas: 1` (\"always must be 1\"), found {}",
                        job["replicas"]
                    ),
                });
            }
        };
        // v2.0.0 also holds the MPI launcher to one replica.
        if release == Release::V2_0 && job["name"] == "launcher" {
            single(&mut out, "the `launcher` job");
        }
        let Some(ancestor) = job
            .pointer("/template/metadata/labels")
            .and_then(|l| l.get(ANCESTOR_LABEL))
            .and_then(Json::as_str)
        else {
            continue;
        };
        let Some((_, container)) = ANCESTORS.iter().find(|(a, _)| *a == ancestor) else {
            continue;
        };
        single(&mut out, &format!("the `{ancestor}` job"));
        let containers = job
            .pointer("/template/spec/template/spec/containers")
            .and_then(Json::as_array);
        let has = containers
            .into_iter()
            .flatten()
            .any(|c| c["name"] == *container);
        if release >= Release::V2_1 && !has {
            out.push(Rejection {
                path: format!("{at}/template/spec/template/spec/containers"),
                message: format!(
                    "the `{ancestor}` job (labelled `{ANCESTOR_LABEL}: {ancestor}`) has no container `{container}` (\"must contain the required container for the ancestor: {ancestor}\")"
                ),
            });
        }
    }
    out
}

/// What the ML policy plugins' `Validate` refuse in a TrainJob (`job`) on
/// `runtime`, beyond its env ([`reserved_env`]):
/// - Torch (v2.3.0): an `envInjection` target container the runtime lacks;
///   at every release, what its torchtune entrypoint cannot run
///   ([`super::torchtune`]).
/// - MPI (v2.0.0–v2.3.0, `plugins/mpi/mpi.go`): `numNodes` of 2 or more
///   with `runLauncherAsNode` on a runtime without both a `launcher` and a
///   `node` job.
/// - Flux (from v2.2.0, `plugins/flux/flux.go`): fewer than 1 process per
///   node (the runtime's `numProcPerNode`, from v2.3.0 the TrainJob's when
///   it sets one), and a `flux-installer` init container in the `node` job
///   (Flux's own).
pub fn plugin_rejections(job: &Json, runtime: &Runtime, release: Release) -> Vec<Rejection> {
    let mut out = Vec::new();
    let trainer = &job["spec"]["trainer"];
    let policy = &runtime.object["spec"]["mlPolicy"];
    let reject = |out: &mut Vec<Rejection>, path: &str, message: &str| {
        out.push(Rejection {
            path: path.to_owned(),
            message: message.to_owned(),
        });
    };
    if policy["mpi"]["runLauncherAsNode"] == true
        && trainer["numNodes"].as_i64().unwrap_or(1) >= 2
        && (runtime.job("launcher").is_none() || runtime.job("node").is_none())
    {
        reject(
            &mut out,
            "/spec/trainer/numNodes",
            "must be 1 on an MPI runtime that runs the launcher as a node (`runLauncherAsNode`) without both a `launcher` and a `node` job",
        );
    }
    // Torch v2.0.0–v2.1.0 (`plugins/torch/torch.go` `Validate`): a
    // `numProcPerNode` word must be `auto`, `cpu` or `gpu`.
    if policy["torch"].is_object()
        && release <= Release::V2_1
        && let Some(word) = trainer["numProcPerNode"].as_str()
        && !["auto", "cpu", "gpu"].contains(&word)
    {
        reject(
            &mut out,
            "/spec/trainer/numProcPerNode",
            &format!(
                "`{word}` is no process count: Trainer {} takes a number, `auto`, `cpu` or `gpu`",
                release.tag()
            ),
        );
    }
    // Torch (v2.3.0, `plugins/torch/torch.go` `validateEnvInjectionTargets`):
    // every container `envInjection` names must be in the runtime.
    let targets = policy["torch"]["envInjection"]["targets"].as_array();
    for target in targets
        .into_iter()
        .flatten()
        .filter(|_| release >= Release::V2_3)
    {
        let job_name = target["jobName"].as_str().unwrap_or_default();
        let containers = target["containerNames"].as_array().into_iter().flatten();
        for name in containers.filter_map(Json::as_str) {
            let found = runtime
                .job(job_name)
                .is_some_and(|j| j.container(name).is_some());
            if !found {
                reject(
                    &mut out,
                    "/spec/runtimeRef",
                    &format!(
                        "the runtime's torch `envInjection` names the container `{name}` of the job `{job_name}`, which the runtime does not have"
                    ),
                );
            }
        }
    }
    if policy["torch"].is_object()
        && let Some(tune) = super::torchtune::TuneRun::of_trainjob(job, Some(runtime))
    {
        out.extend(tune.rejections(release));
    }
    // Volcano (v2.1.0–v2.3.0, `plugins/volcano/volcano.go` `Validate`): a
    // queue annotation, when there is one, must name a queue.
    if runtime.object["spec"]["podGroupPolicy"]["volcano"].is_object()
        && release >= Release::V2_1
        && volcano_queue(job, runtime).is_some_and(str::is_empty)
    {
        reject(
            &mut out,
            "/spec/runtimeRef",
            &format!(
                "the runtime's JobSet template has an empty Volcano queue annotation (`{}`): Volcano's plugin needs a queue name there, or no annotation",
                super::VOLCANO_QUEUE
            ),
        );
    }
    if policy["flux"].is_object() && release >= Release::V2_2 {
        let own = trainer["numProcPerNode"]
            .as_i64()
            .filter(|_| release >= Release::V2_3);
        if own
            .or(policy["flux"]["numProcPerNode"].as_i64())
            .is_some_and(|n| n < 1)
        {
            reject(
                &mut out,
                "/spec/trainer/numProcPerNode",
                "a Flux TrainJob needs at least 1 process per node",
            );
        }
        let installer = runtime
            .job("node")
            .is_some_and(|j| j.init_containers.iter().any(|c| c.name == "flux-installer"));
        if installer {
            reject(
                &mut out,
                "/spec/trainer/initContainers",
                "the runtime's `node` job has an init container `flux-installer`, a name Flux reserves for its own",
            );
        }
    }
    out
}

/// The Volcano queue annotation the runtime info of `job` on `runtime`
/// has: the runtime's JobSet template's, over which each runtime patch's
/// template annotations are laid in order.
fn volcano_queue<'a>(job: &'a Json, runtime: &'a Runtime) -> Option<&'a str> {
    let key = super::VOLCANO_QUEUE;
    let patches = job["spec"]["runtimePatches"]
        .as_array()
        .into_iter()
        .flatten();
    patches
        .rev()
        .find_map(|p| {
            p.pointer("/trainingRuntimeSpec/template/metadata/annotations")?
                .get(key)
        })
        .or_else(|| runtime.object["spec"]["template"]["metadata"]["annotations"].get(key))
        .and_then(Json::as_str)
}

/// Whether the torch plugin of `release` checks the TrainJob `trainer`'s
/// env at all: v2.0.0 and v2.1.0 return before their checks when it sets
/// no `numProcPerNode` (`plugins/torch/torch.go` `Validate`), and admit
/// what the plugin then overwrites.
pub fn torch_checks_env(trainer: &Json, release: Release) -> bool {
    release >= Release::V2_2 || !trainer["numProcPerNode"].is_null()
}

/// The variables the ML policy's plugin sets itself, which its `Validate`
/// refuses in `trainer.env` (kubeflow/trainer `pkg/constants/constants.go`
/// and each plugin's `Validate`): torch's `PET_*` at every release,
/// XGBoost's `DMLC_*` from v2.2.0, MPI's `OMPI_MCA_*` from v2.3.0. `None`
/// (a runtime trainc does not know) is taken as torch, the runtime trainc
/// builds for.
pub fn reserved_env(framework: Option<&Framework>, release: Release) -> &'static [&'static str] {
    match framework {
        None | Some(Framework::Torch { .. }) => crate::cluster::trainjob::RESERVED_ENV,
        Some(Framework::Mpi) if release >= Release::V2_3 => &[
            "OMPI_MCA_orte_default_hostfile",
            "OMPI_MCA_plm_rsh_args",
            "OMPI_MCA_orte_keep_fqdn_hostnames",
            "OMPI_MCA_orte_set_default_slots",
        ],
        Some(Framework::Other(name)) if name == "xgboost" && release >= Release::V2_2 => &[
            "DMLC_TRACKER_URI",
            "DMLC_TRACKER_PORT",
            "DMLC_TASK_ID",
            "DMLC_NUM_WORKER",
        ],
        Some(_) => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime(jobs: &Json) -> Json {
        serde_json::json!({
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "ClusterTrainingRuntime",
            "metadata": {"name": "r"},
            "spec": {"template": {"spec": {"replicatedJobs": jobs}}}
        })
    }

    fn job(name: &str, ancestor: Option<&str>, replicas: Option<i64>, container: &str) -> Json {
        let mut job = serde_json::json!({
            "name": name,
            "template": {"spec": {"template": {"spec": {"containers": [{"name": container}]}}}}
        });
        if let Some(a) = ancestor {
            job["template"]["metadata"] = serde_json::json!({"labels": {ANCESTOR_LABEL: a}});
        }
        if let Some(n) = replicas {
            job["replicas"] = n.into();
        }
        job
    }

    #[test]
    fn ancestor_jobs_have_one_replica_at_every_release() {
        let r = runtime(&serde_json::json!([job(
            "node",
            Some("trainer"),
            Some(2),
            "node"
        )]));
        for release in Release::ALL {
            let found = runtime_rejections(&r, release);
            assert_eq!(found.len(), 1, "{release:?}: {found:?}");
            assert_eq!(
                found[0].path,
                "/spec/template/spec/replicatedJobs/0/replicas"
            );
        }
        // Unset is JobSet's default 1; a job without the label is not checked.
        let r = runtime(&serde_json::json!([
            job("node", Some("trainer"), None, "node"),
            job("workers", None, Some(4), "w")
        ]));
        assert!(runtime_rejections(&r, Release::V2_3).is_empty());
    }

    #[test]
    fn the_required_container_is_checked_from_v2_1() {
        let r = runtime(&serde_json::json!([job(
            "node",
            Some("trainer"),
            None,
            "trainer"
        )]));
        assert!(runtime_rejections(&r, Release::V2_0).is_empty());
        for release in [Release::V2_1, Release::V2_2, Release::V2_3] {
            let found = runtime_rejections(&r, release);
            assert_eq!(
                found[0].path,
                "/spec/template/spec/replicatedJobs/0/template/spec/template/spec/containers"
            );
            assert!(
                found[0].message.contains("no container `node`"),
                "{found:?}"
            );
        }
    }

    #[test]
    fn v2_0_holds_the_launcher_to_one_replica() {
        let r = runtime(&serde_json::json!([job("launcher", None, Some(2), "l")]));
        assert_eq!(runtime_rejections(&r, Release::V2_0).len(), 1);
        assert!(runtime_rejections(&r, Release::V2_1).is_empty());
    }
}
