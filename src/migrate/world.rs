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
    // An image's entrypoint may start torchrun itself from `PET_*`: its
    // count is kept, as for a launcher.
    let one_process = matches!(starter, Starter::Plain);
    let unseen = matches!(starter, Starter::Image);
    out.extend(keep_procs(job, spec, starter));
    let read = read_by_command_line(spec);
    let name = spec.name.clone();
    let env = spec.env.get_or_insert_with(Default::default);
    let world_size = operator_world_size(job);
    // What the container's own `env` sets of these, the operator's values
    // (appended after it) replaced: the kubelet takes the last of a name.
    let mut shadowed = Vec::new();
    if world_size.is_some() {
        for var in OPERATOR_SETS {
            if env.shift_remove(var).is_some() {
                shadowed.push(format!("`{var}`"));
            }
        }
    }
    let mut set = Vec::new();
    let mut put = |name: &str, value: EnvValue| {
        if !env.contains_key(name) {
            env.insert(name.to_owned(), value);
            set.push(format!("`{name}`"));
        }
    };
    put("PYTHONUNBUFFERED", EnvValue::Literal("1".to_owned()));
    // The operator sets the world's variables only on a job with a Master
    // (and its `WORLD_SIZE` is what it was). Which of them the processes
    // read: every one for a command that is not a launcher or an image's
    // entrypoint; under a launcher, which sets them again for its
    // processes, those its own command line reads.
    let reads = |name: &str| {
        one_process
            || unseen
            || read.iter().any(|r| r == name)
            || shadowed.iter().any(|s| s.trim_matches('`') == name)
    };
    if let Some(world_size) = &world_size {
        operator_variables(&name, world_size, reads, &mut put);
    }
    if spec.env.as_ref().is_some_and(indexmap::IndexMap::is_empty) {
        spec.env = None;
    }
    if !shadowed.is_empty() {
        out.push(kept(
            job,
            format!(
                "the container's `env` sets {}, which the Training Operator set again after it, so the pods saw the operator's: the TrainJob's `env` has the operator's values in their place",
                crate::diagnostic::listed(&shadowed)
            ),
            "a value of your own for these never reached the processes; remove them if nothing reads them",
        ));
    }
    // Those said above are not said again; `PYTHONUNBUFFERED` alone is no
    // news.
    set.retain(|name| !shadowed.contains(name));
    if world_size.is_some() && set.len() > 1 {
        let why = if one_process {
            "the job's command is not a launcher"
        } else if unseen {
            "the job runs its image's entrypoint, which may read the Training Operator's variables"
        } else {
            "the job's command line reads the Training Operator's variables"
        };
        // Kept, not changed: a note (the comparison finds no difference).
        out.push(kept(
            job,
            format!(
                "{why}, and Trainer sets only torchrun's `PET_*`: the TrainJob's `env` sets {} as the Training Operator did, `RANK` from the pod's completion index",
                crate::diagnostic::listed(&set)
            ),
            "if the command starts torchrun itself and reads none of these, they can go",
        ));
    }
    out
}

/// A note of variables the TrainJob's `env` keeps as the pods saw them.
fn kept(job: &ImportedJob, message: String, help: &str) -> Diagnostic {
    Diagnostic::note(
        codes::MIGRATE_ENV,
        job.node.span_at("/spec/pytorchReplicaSpecs"),
        message,
    )
    .with_help(help.to_owned())
}

/// The processes per pod: a keyword (`auto`, `cpu`) becomes the count the
/// job ran, or the pod's CPU request where torchrun counted the host's
/// CPUs, which is said.
fn keep_procs(job: &ImportedJob, spec: &mut Spec, starter: Starter) -> Option<Diagnostic> {
    let one_process = matches!(starter, Starter::Plain);
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
    let keyword = keyword?;
    if says_count {
        spec.n_proc_per_node = None;
        return None;
    }
    if one_process {
        spec.n_proc_per_node = Some(NProcPerNode::Count(1));
        return None;
    }
    if gpus > 0 && keyword != NProcKeyword::Cpu {
        spec.n_proc_per_node = Some(NProcPerNode::Keyword(NProcKeyword::Gpu));
        return None;
    }
    let cpus = cpu_request(spec).max(1);
    spec.n_proc_per_node = Some(NProcPerNode::Count(cpus));
    Some(
        Diagnostic::warning(
            codes::MIGRATE_WORLD,
            job.node.span_at("/spec/nprocPerNode"),
            format!(
                "`nprocPerNode: {}` started one process per CPU of the host under torchrun; the TrainJob starts {cpus}, the pod's CPU request, as Trainer resolves it",
                if keyword == NProcKeyword::Cpu { "cpu" } else { "auto" }
            ),
        )
        .with_help("set `nprocPerNode` to the number of processes each pod should start"),
    )
}

/// The variables the Training Operator sets on a job with a Master, after
/// the container's own (`envvar.go` `setPodEnv`).
const OPERATOR_SETS: [&str; 4] = ["MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"];

/// The failures the job tolerates, kept where a TrainJob can say them: a
/// PyTorchJob whose pods restart `Never` and that sets no backoff limit
/// fails at its first failed pod (kubeflow/trainer v1.9.2,
/// `pytorchjob_controller.go` `UpdateJobStatus`), where the TrainJob's
/// `node` Job would replace a failed pod up to Kubernetes' default of 6
/// times: it gets `backoffLimit` 0. Under `OnFailure` without a limit the
/// operator restarts without end, which no Job does; the comparison says
/// so.
pub(super) fn keep_failures(spec: &mut Spec) {
    if let Some(policy) = spec.policy.as_mut()
        && policy.restart_policy == Some(crate::spec::RestartPolicy::Never)
        && policy.backoff_limit.is_none()
    {
        policy.backoff_limit = Some(0);
    }
}

/// The Training Operator's variables the processes read (`reads`), set
/// (`put`) as the TrainJob has them: rank 0's address, Trainer's port, the
/// operator's `WORLD_SIZE`, the rank from the pod's completion index.
fn operator_variables(
    name: &str,
    world_size: &str,
    reads: impl Fn(&str) -> bool,
    put: &mut impl FnMut(&str, EnvValue),
) {
    if reads("MASTER_ADDR") {
        put(
            "MASTER_ADDR",
            EnvValue::Literal(trainjob::master_addr(name)),
        );
    }
    if reads("MASTER_PORT") {
        put(
            "MASTER_PORT",
            EnvValue::Literal(trainjob::TRAINER_PORT.to_string()),
        );
    }
    if reads("WORLD_SIZE") {
        put("WORLD_SIZE", EnvValue::Literal(world_size.to_owned()));
    }
    if reads("RANK") {
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
}

/// The `WORLD_SIZE` the Training Operator set, on a job with a Master
/// (none without one).
fn operator_world_size(job: &ImportedJob) -> Option<String> {
    let before = crate::cluster::pytorchjob::workload(&job.object).ok()?;
    let pod = before.pods.first()?;
    let container = before.trainer_of(pod)?;
    container["env"]
        .as_array()?
        .iter()
        .find(|v| v["name"] == "WORLD_SIZE")
        .and_then(|v| v["value"].as_str())
        .map(str::to_owned)
}

/// The variables the spec's command line reads: its `$(VAR)`s, and what a
/// `sh -c` script of it expands.
fn read_by_command_line(spec: &Spec) -> Vec<String> {
    crate::cluster::shell::command_line_reads(
        spec.command.as_deref().unwrap_or_default(),
        spec.args.as_deref().unwrap_or_default(),
    )
    .into_iter()
    .map(|read| read.name)
    .collect()
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
