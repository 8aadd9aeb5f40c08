//! Rules on `[master]`: where a Master exists to set apart, and what a
//! Master unlike its Workers does to the run.
//!
//! A fixed-size PyTorchJob has a Master: a replica of its own, with its
//! own template and restart policy, that the Training Operator makes node
//! rank 0 (`RANK`/`PET_NODE_RANK` 0, the Workers the index + 1) and the
//! address every pod meets at (kubeflow/trainer v1.7.0–v1.9.2,
//! `pkg/controller.v1/pytorch/envvar.go` `setPodEnv`). So has a JobSet
//! trainc writes: a `master` replicated job of one pod beside the Workers'
//! ([`crate::cluster::jobset::Layout`]). An elastic
//! PyTorchJob has Workers only, whose node ranks c10d gives as they join;
//! a Job and a TrainJob run one pod template on every pod.
//!
//! torchrun lets each node start its own count: the agents share their
//! local world sizes through the rendezvous store, and each node's ranks
//! start at the sum of the counts of the node ranks before it (torch
//! `distributed/elastic/agent/server/api.py` `_assign_worker_ranks`). A job
//! that starts its own processes is told one count for every pod instead
//! (`PET_NPROC_PER_NODE`, `WORLD_SIZE` = pods × count), so there the Master
//! cannot differ.

use super::Rules;
use super::nproc::{Starter, starter};
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::NProc;
use crate::spec::{Master, RestartPolicy, Target};

pub(super) fn check(r: &mut Rules<'_>) {
    let Some(master) = &r.spec.master else {
        return;
    };
    if !has_master(r) {
        return;
    }
    if let Some(image) = &master.image {
        super::metadata::reference_at(r, image, "/master/image");
    }
    if master.restart_policy == Some(RestartPolicy::Always) {
        super::scheduling::restart_always(r, "/master/restartPolicy");
    }
    if r.max_replicas() == 1 {
        alone(r);
        return;
    }
    told_count(r, master);
    gpus(r, master);
}

/// `[master]` with `replicas = 1`: the Master is the only pod, so the
/// spec's own image, resources and process count (the Workers') reach none.
fn alone(r: &mut Rules<'_>) {
    let mut warning = Diagnostic::warning(
        codes::MASTER_ALONE,
        r.key("/master"),
        "the job is the Master alone: with one pod there are no Workers, so what the spec sets for them (its image, resources, nProcPerNode) reaches no pod",
    )
    .with_help("write the Master's settings at the top level and remove `[master]`, or raise `replicas` to add Workers");
    if r.spec.replicas.is_some() {
        warning = warning.with_secondary(r.value("/replicas"), "one pod");
    }
    r.push(warning);
}

/// Whether the job has a Master for `[master]` to set apart; an error where
/// it has none.
fn has_master(r: &mut Rules<'_>) -> bool {
    let help = match r.target() {
        Target::Pytorchjob if r.is_elastic() => {
            r.push(
                Diagnostic::error(
                    codes::MASTER_ELASTIC,
                    r.key("/master"),
                    "an elastic job has no Master: its pods are Workers alike, given their node ranks as they join, so none is sure to be rank 0",
                )
                .with_secondary(r.value("/replicas"), "elastic")
                .with_help("remove `[master]`, or give a fixed `replicas`, whose first pod is the Master"),
            );
            return false;
        }
        Target::Pytorchjob => return true,
        Target::Jobset => {
            exclusive(r);
            return true;
        }
        Target::Job => {
            "a Job runs one pod template on every pod, rank 0's too: use `target = \"pytorchjob\"` for a Master unlike its Workers, or write what `[master]` sets at the top level"
        }
        Target::Trainjob => {
            "a TrainJob runs one `node` template on every node, rank 0's too: use `target = \"pytorchjob\"` for a Master unlike its Workers, or write what `[master]` sets at the top level"
        }
    };
    r.push(
        Diagnostic::error(
            codes::TARGET_UNSUPPORTED,
            r.key("/master"),
            format!(
                "target `{}` cannot express `[master]`: it has no Master pod",
                r.target().as_str()
            ),
        )
        .with_help(help),
    );
    false
}

/// Exclusive placement on a JobSet with a Master: JobSet places each job
/// in a topology domain of its own that no other job shares
/// (`alpha.jobset.sigs.k8s.io/exclusive-topology`, v0.8.0 and v0.12.0
/// `pkg/webhooks/pod_mutating_webhook.go` `setExclusiveAffinities`: pod
/// affinity within the job, anti-affinity to every other job), and with a
/// Master every pod is a job of its own ([`crate::cluster::jobset::Layout`]),
/// so each pod would take a whole domain, apart from the rest: not what
/// `exclusiveTopology` says, the job's pods together in one domain.
fn exclusive(r: &mut Rules<'_>) {
    let exclusive = r
        .spec
        .scheduling
        .as_ref()
        .is_some_and(|s| s.exclusive_topology.is_some());
    if !exclusive || r.max_replicas() < 2 {
        return;
    }
    r.push(
        Diagnostic::error(
            codes::TARGET_UNSUPPORTED,
            r.value("/scheduling/exclusiveTopology"),
            "exclusive placement cannot keep a JobSet with a Master in one domain: with `[master]` every pod is a job of its own, and JobSet gives each job a topology domain that no other job shares, so each pod would hold a whole domain apart from the others",
        )
        .with_secondary(r.key("/master"), "a job of its own for the Master, one for each Worker")
        .with_help("remove `[master]` (the job is then one Indexed Job, which JobSet keeps in one domain), or remove `scheduling.exclusiveTopology` and place the pods with `nodeSelector`"),
    );
}

/// The GPUs of the Workers and of the Master.
fn gpu_counts(r: &Rules<'_>, master: &Master) -> (u32, u32) {
    let master_gpus = master.gpus(r.spec.resources.as_ref()).unwrap_or(0);
    (r.gpus(), master_gpus)
}

/// A job that starts its own processes is told one count for every pod:
/// a Master with a count of its own would be told the Workers'.
fn told_count(r: &mut Rules<'_>, master: &Master) {
    let spec = r.spec;
    let Some(own) = &master.n_proc_per_node else {
        return;
    };
    if !spec.runs_as_written() {
        return;
    }
    let (gpus, master_gpus) = gpu_counts(r, master);
    let workers = NProc::of(spec.n_proc_per_node.as_ref(), gpus);
    let told = NProc::of(Some(own), master_gpus);
    if told == workers {
        return;
    }
    let what = if spec.command.is_some() {
        "`command`"
    } else {
        "the image's entrypoint"
    };
    r.push(
        Diagnostic::error(
            codes::MASTER_NPROC,
            r.value("/master/nProcPerNode"),
            format!(
                "{what} starts its own processes and is told one count on every pod (`PET_NPROC_PER_NODE` {}, `WORLD_SIZE` = pods × count): the Master cannot start {} while the Workers are told {}",
                workers.text(),
                told.text(),
                workers.text()
            ),
        )
        .with_help("remove `[master] nProcPerNode`; or run a `script` or `module`, which trainc starts under torchrun with each pod's own count"),
    );
}

/// A Master without GPUs in a GPU job, when torchrun starts it: its
/// processes are ranks of the world like any other, the first ones, and
/// training code that takes `cuda:LOCAL_RANK` or an NCCL process group
/// fails on it. A Master with GPUs where the Workers have none is most
/// likely left over (an overlay that removed `resources.gpus` only).
fn gpus(r: &mut Rules<'_>, master: &Master) {
    let (gpus, master_gpus) = gpu_counts(r, master);
    let at = if r.tree_has("/master/resources/gpus") {
        r.entry("/master/resources/gpus")
    } else {
        r.key("/master")
    };
    if master_gpus == 0 && gpus > 0 {
        let torchrun = match starter(r) {
            Starter::Trainc => true,
            Starter::Launcher { torchrun, .. } => torchrun,
            Starter::Plain | Starter::Image => false,
        };
        if !torchrun {
            return;
        }
        let spec = r.spec;
        let nproc = NProc::of(
            master
                .n_proc_per_node
                .as_ref()
                .or(spec.n_proc_per_node.as_ref()),
            0,
        );
        let ranks = match nproc {
            NProc::Count(1) => "rank 0".to_owned(),
            NProc::Count(n) => format!("ranks 0-{}", n - 1),
            NProc::Auto | NProc::Cpu => "the first ranks".to_owned(),
        };
        r.push(
            Diagnostic::warning(
                codes::MASTER_GPUS,
                at,
                format!("the Master has no GPU while each Worker has {gpus}, but torchrun runs training processes on it as on every pod ({ranks}): code that takes `cuda:LOCAL_RANK`, or an NCCL process group, fails there"),
            )
            .with_help("give the Master GPUs too (remove `[master.resources] gpus = 0`), unless the training code runs those ranks on CPU (a `gloo` process group)"),
        );
    } else if master_gpus > 0 && gpus == 0 {
        r.push(
            Diagnostic::warning(
                codes::MASTER_GPUS,
                at,
                format!("the Master has {master_gpus} GPU{} and the Workers none: their processes cannot share an NCCL process group", if master_gpus == 1 { "" } else { "s" }),
            )
            .with_help("for a CPU run remove the Master's GPUs too (in an overlay: `unset = [\"master.resources.gpus\"]`); for a GPU run set `[resources] gpus`"),
        );
    }
}
