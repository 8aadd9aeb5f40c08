//! Rules on processes per pod: how they share the GPUs, and what `auto` and
//! `cpu` become, which depends on the target:
//!
//! - PyTorchJob and Job: the keyword reaches torchrun unchanged (trainc's
//!   `--nproc_per_node` flag, and the operator's `PET_NPROC_PER_NODE`), and
//!   torchrun makes `auto` the GPUs it sees, else `os.cpu_count()` (the
//!   host's CPUs, not the pod's), and `cpu` always the host's CPUs.
//! - TrainJob: the Trainer runtime turns the keyword into a number from the
//!   TrainJob's `resourcesPerNode` before torchrun sees it, counting as GPUs
//!   only resources whose name contains `gpu` (kubeflow/trainer,
//!   `pkg/runtime/framework/plugins/torch/torch.go`, `pkg/runtime/runtime.go`):
//!   - v2.0.0: with resources, `cpu`, and `auto` without GPUs, become the CPU
//!     limit (else the request, else 1), rounded up; without resources the
//!     keyword passes through to torchrun.
//!   - v2.1.0: `cpu`, and `auto` without GPUs, become the CPU request (else
//!     the limit), rounded up, at least 1.
//!   - v2.2.0 and later take a number only (see `target.rs`).
//!
//! A job that starts its own processes (`command`, `imageEntrypoint`) gets
//! no torchrun from trainc: `nProcPerNode` is the count it is told, which
//! holds only if it starts that many itself.
//!
//! - PyTorchJob: `PET_NPROC_PER_NODE` is the spec's `nprocPerNode`; on a
//!   fixed-size job (which has a Master) `WORLD_SIZE` is the pods times the
//!   count (times 1 for a keyword) and `RANK` the pod's index, Master 0
//!   (kubeflow/trainer v1.7.0–v1.9.2, `pkg/controller.v1/pytorch/envvar.go`
//!   `setPodEnv`, `getNprocPerNodeInt`). An elastic job has no Master and
//!   gets only torchrun's variables.
//! - Job: trainc sets the same variables ([`crate::render::job::command_env`]).
//! - TrainJob: `PET_NPROC_PER_NODE` only, resolved as above; no
//!   `WORLD_SIZE` or `RANK` (`plugins/torch/torch.go`).
//!
//! So a one-process entrypoint (`python train.py` reading `WORLD_SIZE` and
//! `RANK`) needs a count of 1, and a launcher (torchrun reads
//! `PET_NPROC_PER_NODE`) the count it starts.

use super::Rules;
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::{ApiLevel, NProcKeyword, NProcPerNode, Target};
use crate::syntax::quantity;

pub(super) fn check(r: &mut Rules<'_>) {
    gpus(r);
    keyword(r);
    elastic_command(r);
    unsaid_count(r);
    trainjob_world(r);
}

pub(super) use crate::spec::Starter;

pub(super) fn starter(r: &Rules<'_>) -> Starter {
    r.spec.starter()
}

/// What starts the processes, and its key, where trainc cannot see how
/// many: a `command` with no launcher in it, the image's entrypoint.
fn unseen_starter(r: &Rules<'_>) -> Option<(&'static str, &'static str)> {
    match starter(r) {
        Starter::Image => Some(("the image's entrypoint", "/imageEntrypoint")),
        Starter::Plain => Some(("`command`", "/command")),
        Starter::Trainc | Starter::Launcher { .. } => None,
    }
}

/// A TrainJob of several nodes whose command is not a launcher: Trainer
/// gives its pods torchrun's `PET_*` variables only, no `MASTER_ADDR`,
/// `WORLD_SIZE` or `RANK` (kubeflow/trainer v2.0.0–v2.3.0,
/// `pkg/runtime/framework/plugins/torch/torch.go`), so a process that forms
/// its world from those (`init_process_group()` with its defaults) finds
/// none, and each pod trains alone or fails. A `command` that names its
/// launcher says otherwise.
fn trainjob_world(r: &mut Rules<'_>) {
    let Some((what, at)) = unseen_starter(r) else {
        return;
    };
    if r.target() != Target::Trainjob || r.max_replicas() <= 1 {
        return;
    }
    // `[env]` that gives them (as `trainc migrate` writes) forms the world.
    let env = r.spec.env.as_ref();
    if ["MASTER_ADDR", "WORLD_SIZE", "RANK"]
        .iter()
        .all(|v| env.is_some_and(|e| e.contains_key(*v)))
    {
        return;
    }
    r.push(
        Diagnostic::warning(
            codes::TRAINJOB_WORLD_VARIABLES,
            r.value(at),
            format!(
                "on a TrainJob, {what} gets torchrun's `PET_*` variables only, not the `MASTER_ADDR`, `WORLD_SIZE` and `RANK` a process reads to join the others: unless it runs torchrun, each of the {} pods trains alone",
                r.max_replicas()
            ),
        )
        .with_help("if it runs torchrun, say so: `command = [\"torchrun\", \"/app/train.py\"]`; else use `target = \"pytorchjob\"` or `\"job\"`, which set those variables"),
    );
}

/// A job that starts its own processes on GPUs, with no `nProcPerNode`:
/// trainc's default, one per GPU, is what the operator tells it, so
/// `WORLD_SIZE` counts processes a one-process entrypoint never starts and
/// its world waits for them until it times out. Writing the count says
/// which the job is.
fn unsaid_count(r: &mut Rules<'_>) {
    let Some((what, at)) = unseen_starter(r) else {
        return;
    };
    let gpus = r.gpus();
    if r.spec.n_proc_per_node.is_some()
        || gpus <= 1
        || r.is_elastic()
        || r.target() == Target::Trainjob
    {
        return;
    }
    let pods = r.max_replicas();
    r.push(
        Diagnostic::warning(
            codes::NPROC_UNSAID,
            r.value(at),
            format!(
                "{what} starts its own processes, and the spec does not say how many: by default each pod counts as {gpus} (one per GPU), so `WORLD_SIZE` is {}; if it runs one process per pod, that world waits for ranks that never start",
                u64::from(pods) * u64::from(gpus)
            ),
        )
        .with_help("write `nProcPerNode = 1` if it runs one process per pod (`python train.py`), or `nProcPerNode = \"gpu\"` if it starts one per GPU itself (as torchrun does from `PET_NPROC_PER_NODE`)"),
    );
}

fn gpus(r: &mut Rules<'_>) {
    if let Some(nproc) = &r.spec.n_proc_per_node {
        against_gpus(r, nproc, "", r.gpus());
    }
    // The Master's count against its GPUs, where `[master]` sets either.
    let spec = r.spec;
    let Some(master) = spec.master_role() else {
        return;
    };
    let own = master.resources.as_ref().and_then(|m| m.gpus).is_some();
    let gpus = master.gpus(spec.resources.as_ref()).unwrap_or(0);
    match (&master.n_proc_per_node, &spec.n_proc_per_node) {
        (Some(nproc), _) => against_gpus(r, nproc, "/master", gpus),
        // `"gpu"` follows the Master's own GPUs.
        (None, Some(NProcPerNode::Keyword(NProcKeyword::Gpu)) | None) => {}
        (None, Some(nproc)) if own => against_gpus(r, nproc, "/master", gpus),
        (None, Some(_)) => {}
    }
}

/// `nProcPerNode` (written at `{table}/nProcPerNode`, or at the top for
/// the Master's inherited one) against the `gpus` of the pods it runs on:
/// every pod (`table` empty), or the Master (`/master`).
fn against_gpus(r: &mut Rules<'_>, nproc: &NProcPerNode, table: &str, gpus: u32) {
    let at = if r.tree_has(&format!("{table}/nProcPerNode")) {
        format!("{table}/nProcPerNode")
    } else {
        "/nProcPerNode".to_owned()
    };
    let span = r.value(&at);
    let (pod, field, key) = if table.is_empty() {
        ("per pod", "resources", "nProcPerNode")
    } else {
        ("on the Master", "master.resources", "[master] nProcPerNode")
    };
    let diagnostic = match nproc {
        NProcPerNode::Keyword(NProcKeyword::Gpu) if gpus == 0 => Some(
            Diagnostic::error(codes::NPROC_GPU_WITHOUT_GPUS, span, format!("`nProcPerNode = \"gpu\"` needs GPUs, but `{field}.gpus` is not set"))
                .with_label("one process per GPU")
                .with_help(format!("set `{field}.gpus`, or give an explicit number of processes")),
        ),
        // Each rank takes the GPU of its local rank: with more ranks than
        // GPUs one finds none, or (with `LOCAL_RANK % GPUs`) two share one,
        // which NCCL refuses ("Duplicate GPU detected"). The job cannot run.
        NProcPerNode::Count(n) if gpus > 0 && *n > gpus => Some(
            Diagnostic::error(codes::NPROC_EXCEEDS_GPUS, span, format!("{n} processes {pod} for {gpus} GPU{}: a process gets no GPU of its own, and NCCL fails two ranks on one GPU (\"Duplicate GPU detected\")", plural(gpus)))
                .with_help(format!("use `{key} = \"gpu\"` for one process per GPU, or request {n} GPUs (`{field}.gpus = {n}`)")),
        ),
        NProcPerNode::Count(n) if gpus > 0 && *n < gpus => Some(
            Diagnostic::warning(codes::NPROC_IDLE_GPUS, span, format!("{n} process{} {pod} for {gpus} GPUs: {} GPU{} may sit idle", if *n == 1 { "" } else { "es" }, gpus - n, plural(gpus - n)))
                .with_help(format!("use `{key} = \"gpu\"` for one process per GPU, unless each process drives several GPUs")),
        ),
        NProcPerNode::Keyword(keyword @ (NProcKeyword::Auto | NProcKeyword::Cpu))
            if !table.is_empty() && unseen_starter(r).is_none() =>
        {
            torchrun_keyword(r, *keyword, span, gpus);
            None
        }
        _ => None,
    };
    if let Some(d) = diagnostic {
        r.push(d);
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `auto` and `cpu`, as the target will resolve them: a warning wherever the
/// count is not what the spec seems to ask for.
fn keyword(r: &mut Rules<'_>) {
    let Some(NProcPerNode::Keyword(keyword @ (NProcKeyword::Auto | NProcKeyword::Cpu))) =
        r.spec.n_proc_per_node
    else {
        return;
    };
    // The keyword reaches a job that starts its own processes only as
    // `PET_NPROC_PER_NODE`; only a torchrun makes it a count.
    if unseen_starter(r).is_some() {
        return;
    }
    let auto = keyword == NProcKeyword::Auto;
    let word = if auto { "auto" } else { "cpu" };
    let gpus = r.gpus();
    let span = r.value("/nProcPerNode");
    let level = match r.target() {
        Target::Pytorchjob | Target::Job | Target::Jobset => None,
        Target::Trainjob => Some(r.api_level()),
    };
    let resources = r.spec.resources.as_ref();
    let has_resources = sets_resources(r);
    let torchrun_decides = match level {
        None => true,
        Some(ApiLevel::V2_0) => !has_resources,
        Some(_) => false,
    };
    // From v2.1 a TrainJob without resources runs with its runtime's `node`
    // container's, which the torch plugin counts: `keyword_on_runtime`,
    // once the runtime is bound.
    if level.is_some_and(|l| l != ApiLevel::V2_0) && !has_resources {
        return;
    }
    if torchrun_decides {
        torchrun_keyword(r, keyword, span, gpus);
        return;
    }
    let Some(level) = level else { return };
    let gpu_resource = resources
        .and_then(|res| res.gpu_resource.clone())
        .unwrap_or_else(|| crate::spec::defaults::GPU_RESOURCE.to_owned());
    let counted_as_gpus = gpus > 0 && gpu_resource.to_ascii_lowercase().contains("gpu");
    if auto && counted_as_gpus {
        return; // `auto` reaches torchrun: one process per GPU
    }
    // Which CPU quantity this Trainer counts, and its name.
    // A limit of "none" leaves the pod none: the request is counted.
    let request = resources.and_then(|res| res.cpu.as_ref());
    let own_limit = resources
        .and_then(|res| res.limits.as_ref().and_then(|l| l.cpu.as_ref()))
        .filter(|q| !q.is_no_limit());
    let (cpus, which) = match own_limit {
        Some(limit) if level == ApiLevel::V2_0 => (Some(limit), "limit"),
        _ => (request.or(own_limit), "request"),
    };
    let trainer = format!("Trainer {}", level.as_str());
    let cores = |q: &crate::spec::Quantity| {
        quantity::parse(&q.text())
            .ok()
            .map(|q| q.value.ceil().max(1.0))
    };
    let count = cpus.and_then(cores);
    let requested = request.and_then(cores);
    let message = match count {
        None => format!(
            "`nProcPerNode = \"{word}\"` starts 1 process per pod on {trainer}: it counts the pod's CPU {which}, and `resources.cpu` is not set"
        ),
        Some(count) if auto && gpus > 0 => format!(
            "{trainer} does not count `{gpu_resource}` as GPUs (its name has no `gpu`): `nProcPerNode = \"auto\"` starts one process per CPU in the pod's CPU {which} ({count}), not one per GPU"
        ),
        Some(count) if gpus > 0 => format!(
            "`nProcPerNode = \"cpu\"` on {trainer} starts one process per CPU in the pod's CPU {which} ({count}), and they share the pod's {gpus} GPU{}",
            plural(gpus)
        ),
        // Trainer v2.0 counts the limit where the spec sets one above the
        // request: more processes than the CPUs the pod is sure of.
        Some(count) if which == "limit" && requested.is_some_and(|n| (n - count).abs() >= 1.0) => {
            format!(
                "`nProcPerNode = \"{word}\"` on {trainer} starts one process per CPU in the pod's CPU limit ({count}), not its request ({})",
                requested.unwrap_or(count)
            )
        }
        Some(_) => return, // one process per CPU the pod asks for: as the spec reads
    };
    r.push(
        Diagnostic::warning(codes::NPROC_TRAINER_CPU, span, message)
            .with_help("set an explicit number of processes, or `\"gpu\"` for one per GPU"),
    );
}

/// Whether the spec gives the training container resources of its own (a
/// TrainJob then has `resourcesPerNode`): CPU, memory, ephemeral storage
/// or GPUs, requested or limited.
pub(super) fn sets_resources(r: &Rules<'_>) -> bool {
    r.spec.resources.as_ref().is_some_and(|res| {
        res.cpu.is_some()
            || res.memory.is_some()
            || res.ephemeral_storage.is_some()
            || res.gpus.is_some_and(|g| g > 0)
            || res.limits.as_ref().is_some_and(|l| {
                l.cpu.is_some() || l.memory.is_some() || l.ephemeral_storage.is_some()
            })
    })
}

/// `auto` or `cpu` on a TrainJob from v2.1 that sets no resources: the torch
/// plugin counts its runtime's `node` container's
/// ([`crate::trainer::torch::procs_per_node`]), which are also the pods'.
pub(super) fn keyword_on_runtime(r: &mut Rules<'_>, runtime: &crate::trainer::runtime::Runtime) {
    let Some(NProcPerNode::Keyword(keyword @ (NProcKeyword::Auto | NProcKeyword::Cpu))) =
        r.spec.n_proc_per_node
    else {
        return;
    };
    let level = r.api_level();
    if level == ApiLevel::V2_0 || sets_resources(r) || unseen_starter(r).is_some() {
        return;
    }
    let word = if keyword == NProcKeyword::Auto {
        "auto"
    } else {
        "cpu"
    };
    let trainer = serde_json::json!({ "numProcPerNode": word });
    let procs = crate::trainer::torch::procs_per_node(level.release(), &trainer, Some(runtime));
    let own = runtime.trainer_container().is_some_and(|c| {
        c.resources["requests"].get("cpu").is_some() || c.resources["limits"].get("cpu").is_some()
    });
    if procs != crate::trainer::torch::Procs::Count(1) || own {
        return; // one per GPU or per CPU of the runtime's container, as the spec reads
    }
    r.push(
        Diagnostic::warning(
            codes::NPROC_TRAINER_CPU,
            r.value("/nProcPerNode"),
            format!(
                "`nProcPerNode = \"{word}\"` starts 1 process per pod on Trainer {}: the spec sets no resources, so the pods have those of the runtime's `node` container, which has no GPU and no CPU request",
                level.as_str()
            ),
        )
        .with_help("set an explicit number of processes, or `resources.cpu` (one process per CPU) or `resources.gpus`"),
    );
}

/// `auto` or `cpu` as torchrun resolves it on a pod with `gpus` GPUs: one
/// process per host CPU, except `auto` with GPUs.
fn torchrun_keyword(
    r: &mut Rules<'_>,
    keyword: NProcKeyword,
    span: crate::source::Span,
    gpus: u32,
) {
    let auto = keyword == NProcKeyword::Auto;
    if auto && gpus > 0 {
        return;
    }
    let word = if auto { "auto" } else { "cpu" };
    let shared = if gpus > 0 {
        format!(", and they share the pod's {gpus} GPU{}", plural(gpus))
    } else {
        String::new()
    };
    let on = if auto { " on CPU pods" } else { "" };
    r.push(
        Diagnostic::warning(
            codes::NPROC_AUTO_ON_CPU,
            span,
            format!("`nProcPerNode = \"{word}\"`{on} starts one process per host CPU, not per requested CPU{shared}"),
        )
        .with_help("on a large node this starts far more processes than the pod's CPU request allows; set an explicit number"),
    );
}

/// A `command` or image entrypoint that runs torchrun itself on an elastic
/// PyTorchJob: the Training Operator v1.7 gives an elastic job's pods no
/// `PET_NPROC_PER_NODE` (fixed in v1.8.0, kubeflow/trainer#1948), so unless
/// the command says how many processes, torchrun starts one per pod there.
/// (`script` and `module` get `--nproc_per_node` from trainc.) An elastic
/// job has no Master, so its pods get no `WORLD_SIZE` or `RANK` either: only
/// a launcher forms its world, and an image's entrypoint must be one.
fn elastic_command(r: &mut Rules<'_>) {
    let spec = r.spec;
    if r.target() != Target::Pytorchjob || !r.is_elastic() {
        return;
    }
    let one = match &spec.n_proc_per_node {
        Some(NProcPerNode::Count(n)) => *n == 1,
        Some(NProcPerNode::Keyword(NProcKeyword::Gpu)) | None => r.gpus() <= 1,
        Some(NProcPerNode::Keyword(_)) => false,
    };
    let (at, what, help) = match starter(r) {
        _ if one => return,
        Starter::Launcher {
            torchrun: true,
            says_count: false,
        } => (
            "/command",
            "this torchrun",
            "pass `--nproc_per_node` in `command`, or use `script` or `module`, for which trainc passes it",
        ),
        Starter::Image => (
            "/imageEntrypoint",
            "a torchrun in the image's entrypoint",
            "give the entrypoint as `command` with `--nproc_per_node`, or use `script` or `module`, for which trainc passes it",
        ),
        _ => return,
    };
    r.push(
        Diagnostic::warning(
            codes::NPROC_ELASTIC_COMMAND,
            r.value(at),
            format!("on Training Operator v1.7 an elastic job's pods get no `PET_NPROC_PER_NODE`, so {what} starts one process per pod there (fixed in v1.8.0)"),
        )
        .with_help(help),
    );
}
