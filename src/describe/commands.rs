//! The kubectl commands that run the job, follow rank 0 and delete what
//! trainc made.

use std::fmt::Write as _;

use crate::cluster::{job, jobset, pytorchjob, trainjob};
use crate::model::{Model, Nodes};
use crate::spec::Target;

/// The kubectl commands to run the job and follow rank 0.
pub(super) fn commands(model: &Model, build: &str) -> String {
    let ns = model
        .namespace
        .as_deref()
        .map_or_else(String::new, |ns| format!(" -n {ns}"));
    let name = &model.name;
    let (kind, pods, rank0) = match model.target {
        Target::Pytorchjob => (
            "pytorchjob",
            format!("{}={name}", pytorchjob::LABEL_JOB_NAME),
            match model.nodes {
                Nodes::Fixed(_) => format!("{name}-master-0"),
                Nodes::Elastic { .. } => format!("{name}-worker-0"),
            },
        ),
        Target::Trainjob => (
            "trainjob",
            format!("{}={name}", trainjob::LABEL_JOBSET_NAME),
            format!(
                "-l {}={name},{}={},{}=0 -c {}",
                trainjob::LABEL_JOBSET_NAME,
                trainjob::LABEL_REPLICATED_JOB,
                trainjob::NODE,
                trainjob::LABEL_COMPLETION_INDEX,
                trainjob::NODE
            ),
        ),
        Target::Jobset => (
            "jobset",
            format!("{}={name}", jobset::LABEL_JOBSET_NAME),
            format!(
                "-l {}={name},{}={},{}=0 -c {}",
                jobset::LABEL_JOBSET_NAME,
                jobset::LABEL_REPLICATED_JOB,
                jobset::Layout::of(model.master.is_some()).rank0_job(),
                job::LABEL_COMPLETION_INDEX,
                jobset::CONTAINER
            ),
        ),
        Target::Job => (
            "job",
            format!("{}={name}", job::LABEL_JOB_NAME),
            format!(
                "-l {}={name},{}=0 -c {}",
                job::LABEL_JOB_NAME,
                job::LABEL_COMPLETION_INDEX,
                job::CONTAINER
            ),
        ),
    };
    let mut out = String::from("commands\n");
    let _ = writeln!(out, "  {build} | kubectl apply{ns} -f -");
    let _ = writeln!(out, "  kubectl get {kind} {name}{ns} -w");
    let _ = writeln!(out, "  kubectl get pods{ns} -l {pods} -w");
    let _ = writeln!(out, "  # rank 0's log");
    let _ = writeln!(out, "  kubectl logs{ns} -f {rank0}");
    let _ = writeln!(
        out,
        "  # delete the job and what trainc made with it (every build's code)"
    );
    let _ = writeln!(out, "  {}", cleanup(model, kind, &ns));
    if !model.claims.is_empty() {
        let _ = writeln!(
            out,
            "  # the claims outlive it, with their data; to delete them too:"
        );
        let _ = writeln!(out, "  kubectl delete pvc{ns} -l {}", own_objects(model));
    }
    out
}

/// The labels on every object trainc builds for this job, and on nothing
/// else: `app.kubernetes.io/name` is reserved (see `validate::rules::metadata`).
fn own_objects(model: &Model) -> String {
    format!(
        "{}={},{}=trainc",
        crate::spec::defaults::LABEL_NAME,
        model.name,
        crate::spec::defaults::LABEL_MANAGED_BY
    )
}

/// One command that deletes the job with the objects that would outlive it:
/// `ttlAfterFinished` and `kubectl delete job` take the job and its pods
/// only, not the Services, the `[code]` ConfigMaps of every build (each is
/// named by its content), nor a runtime trainc wrote. Claims are left.
fn cleanup(model: &Model, kind: &str, ns: &str) -> String {
    let mut kinds = vec![kind, "service", "configmap"];
    if model.trainjob.write_runtime && model.target == Target::Trainjob {
        kinds.push("trainingruntime");
    }
    format!(
        "kubectl delete{ns} {} -l {}",
        kinds.join(","),
        own_objects(model)
    )
}
