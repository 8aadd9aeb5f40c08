//! The PyTorchJob's world kept in the TrainJob: the same pods, processes per
//! pod and ranks.
//!
//! - Processes per pod. The Training Operator passes `nprocPerNode` to
//!   torchrun as written (`auto`: one per GPU, else one per host CPU) and
//!   counts a word as 1 in `WORLD_SIZE` (kubeflow/trainer v1.9.2,
//!   `pkg/controller.v1/pytorch/envvar.go` `getNprocPerNodeInt`). Trainer
//!   v2.2 and later take a number only. A job whose command is not a
//!   launcher runs one process per pod: 1. One under torchrun keeps `auto`
//!   on GPUs as one per GPU (`gpu`); on CPUs, where torchrun would count the
//!   host's CPUs, it gets the pod's CPU request, as Trainer resolves `auto`
//!   (`plugins/torch/torch.go`), and the change is said.
//! - The variables a process reads to join the others. The Training
//!   Operator sets `MASTER_ADDR`, `MASTER_PORT`, `WORLD_SIZE`, `RANK` and
//!   `PYTHONUNBUFFERED` in every pod (`envvar.go` `setPodEnv`); Trainer sets
//!   only torchrun's `PET_*`. A command that is not a launcher gets them in
//!   `env`: the first node's address and Trainer's port, the pods times the
//!   processes, and the pod's completion index as its rank (the Master was
//!   rank 0, Worker `i` rank `i + 1`: node `0` and node `i + 1`). A job of
//!   Workers only got none of them, and gets none.

use crate::cluster::trainjob;
use crate::diagnostic::{Diagnostic, codes};
use crate::import::ImportedJob;
use crate::spec::{EnvSource, EnvValue, NProcKeyword, NProcPerNode, Spec, Starter};

/// Sets the spec's process count and env so that the TrainJob forms the
/// PyTorchJob's world; says what it chose where the world changes.
pub(super) fn keep(job: &ImportedJob, spec: &mut Spec) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let starter = spec.starter();
    let one_process = matches!(starter, Starter::Plain | Starter::Image);
    let gpus = spec.resources.as_ref().and_then(|r| r.gpus).unwrap_or(0);
    // Unset is trainc's default (one per GPU, else 1), which import leaves
    // out where it is what the job does.
    let keyword = match spec.n_proc_per_node {
        Some(NProcPerNode::Keyword(k)) => Some(k),
        _ => None,
    };
    // A launcher told its count on the command line takes that count.
    let says_count = matches!(
        starter,
        Starter::Launcher {
            says_count: true,
            ..
        }
    );
    if says_count && keyword.is_some() {
        spec.n_proc_per_node = None;
    } else if let Some(keyword) = keyword {
        spec.n_proc_per_node = Some(if one_process {
            NProcPerNode::Count(1)
        } else if gpus > 0 && keyword != NProcKeyword::Cpu {
            NProcPerNode::Keyword(NProcKeyword::Gpu)
        } else {
            let cpus = cpu_request(spec).max(1);
            out.push(
                Diagnostic::warning(
                    codes::MIGRATE_WORLD,
                    job.node.span_at("/spec/nprocPerNode"),
                    format!(
                        "`nprocPerNode: {}` started one process per CPU of the host under torchrun; the TrainJob starts {cpus}, the pod's CPU request, as Trainer resolves it",
                        if keyword == NProcKeyword::Cpu { "cpu" } else { "auto" }
                    ),
                )
                .with_help("set `nprocPerNode` to the number of processes each pod should start"),
            );
            NProcPerNode::Count(cpus)
        });
    }
    let env = spec.env.get_or_insert_with(Default::default);
    let mut set = Vec::new();
    let mut put = |name: &str, value: EnvValue| {
        if !env.contains_key(name) {
            env.insert(name.to_owned(), value);
            set.push(format!("`{name}`"));
        }
    };
    put("PYTHONUNBUFFERED", EnvValue::Literal("1".to_owned()));
    // The operator sets the world's variables only on a job with a Master.
    let master = job.object["spec"]["pytorchReplicaSpecs"]
        .as_object()
        .is_some_and(|r| r.keys().any(|k| k.eq_ignore_ascii_case("master")));
    if one_process && master {
        let nodes = spec.replicas.as_ref().map_or(1, crate::spec::Replicas::max);
        let procs = match spec.n_proc_per_node {
            Some(NProcPerNode::Count(n)) => n,
            _ => 1,
        };
        put(
            "MASTER_ADDR",
            EnvValue::Literal(trainjob::master_addr(&spec.name)),
        );
        put(
            "MASTER_PORT",
            EnvValue::Literal(trainjob::TRAINER_PORT.to_string()),
        );
        put("WORLD_SIZE", EnvValue::Literal((nodes * procs).to_string()));
        put(
            "RANK",
            EnvValue::Source(EnvSource {
                field: Some(format!(
                    "metadata.annotations['{}']",
                    trainjob::LABEL_COMPLETION_INDEX
                )),
                ..EnvSource::default()
            }),
        );
    }
    if spec.env.as_ref().is_some_and(indexmap::IndexMap::is_empty) {
        spec.env = None;
    }
    if one_process && master && !set.is_empty() {
        out.push(
            Diagnostic::warning(
                codes::MIGRATE_ENV,
                job.node.span_at("/spec/pytorchReplicaSpecs"),
                format!(
                    "the job's command is not a launcher, and Trainer sets only torchrun's `PET_*`: the TrainJob's `env` sets {} as the Training Operator did, `RANK` from the pod's completion index",
                    crate::diagnostic::listed(&set)
                ),
            )
            .with_help("if the command starts torchrun itself, name it in `command` and these can go"),
        );
    }
    out
}

/// The training container's CPU request (else limit), rounded up.
fn cpu_request(spec: &Spec) -> u32 {
    let resources = spec.resources.as_ref();
    let cpu = resources
        .and_then(|r| r.cpu.as_ref())
        .or_else(|| resources.and_then(|r| r.limits.as_ref()?.cpu.as_ref()));
    // As Trainer rounds it (`Quantity.Value()`).
    let whole = cpu.map_or(0, |q| {
        crate::trainer::torch::value(&serde_json::Value::String(q.text()))
    });
    u32::try_from(whole).unwrap_or(u32::MAX)
}
