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

use super::Rules;
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::{ApiLevel, NProcKeyword, NProcPerNode, Target};
use crate::syntax::quantity;

pub(super) fn check(r: &mut Rules<'_>) {
    gpus(r);
    keyword(r);
    elastic_command(r);
}

fn gpus(r: &mut Rules<'_>) {
    let gpus = r.gpus();
    let Some(nproc) = &r.spec.n_proc_per_node else {
        return;
    };
    let span = r.value("/nProcPerNode");
    let diagnostic = match nproc {
        NProcPerNode::Keyword(NProcKeyword::Gpu) if gpus == 0 => Some(
            Diagnostic::error(codes::NPROC_GPU_WITHOUT_GPUS, span, "`nProcPerNode = \"gpu\"` needs GPUs, but `resources.gpus` is not set")
                .with_label("one process per GPU")
                .with_help("set `resources.gpus`, or give an explicit number of processes"),
        ),
        // Each rank takes the GPU of its local rank: with more ranks than
        // GPUs one finds none, or (with `LOCAL_RANK % GPUs`) two share one,
        // which NCCL refuses ("Duplicate GPU detected"). The job cannot run.
        NProcPerNode::Count(n) if gpus > 0 && *n > gpus => Some(
            Diagnostic::error(codes::NPROC_EXCEEDS_GPUS, span, format!("{n} processes per pod for {gpus} GPU{}: a process gets no GPU of its own, and NCCL fails two ranks on one GPU (\"Duplicate GPU detected\")", plural(gpus)))
                .with_help(format!("use `nProcPerNode = \"gpu\"` for one process per GPU, or request {n} GPUs (`resources.gpus = {n}`)")),
        ),
        NProcPerNode::Count(n) if gpus > 0 && *n < gpus => Some(
            Diagnostic::warning(codes::NPROC_IDLE_GPUS, span, format!("{n} process{} per pod for {gpus} GPUs: {} GPU{} may sit idle", if *n == 1 { "" } else { "es" }, gpus - n, plural(gpus - n)))
                .with_help("use `nProcPerNode = \"gpu\"` for one process per GPU, unless each process drives several GPUs"),
        ),
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
    let auto = keyword == NProcKeyword::Auto;
    let word = if auto { "auto" } else { "cpu" };
    let gpus = r.gpus();
    let span = r.value("/nProcPerNode");
    let level = match r.target() {
        Target::Pytorchjob | Target::Job => None,
        Target::Trainjob => Some(r.api_level()),
    };
    let resources = r.spec.resources.as_ref();
    let has_resources = resources.is_some_and(|res| {
        res.cpu.is_some()
            || res.memory.is_some()
            || res.ephemeral_storage.is_some()
            || res.gpus.is_some_and(|g| g > 0)
            || res.limits.as_ref().is_some_and(|l| {
                l.cpu.is_some() || l.memory.is_some() || l.ephemeral_storage.is_some()
            })
    });
    let torchrun_decides = match level {
        None => true,
        Some(ApiLevel::V2_0) => !has_resources,
        Some(_) => false,
    };
    if torchrun_decides {
        // torchrun: `auto` with GPUs is one process per GPU.
        if auto && gpus > 0 {
            return;
        }
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
        return;
    }
    let Some(level) = level else { return };
    let gpu_resource = resources
        .and_then(|res| res.gpu_resource.clone())
        .unwrap_or_else(|| crate::resolve::defaults::GPU_RESOURCE.to_owned());
    let counted_as_gpus = gpus > 0 && gpu_resource.to_ascii_lowercase().contains("gpu");
    if auto && counted_as_gpus {
        return; // `auto` reaches torchrun: one process per GPU
    }
    // Which CPU quantity this Trainer counts, and its name.
    let request = resources.and_then(|res| res.cpu.as_ref());
    let limit = resources
        .and_then(|res| res.limits.as_ref().and_then(|l| l.cpu.as_ref()))
        .or(request);
    let (cpus, which) = if level == ApiLevel::V2_0 {
        (limit, "limit")
    } else {
        (request.or(limit), "request")
    };
    let trainer = format!("Trainer {}", level.as_str());
    let count = cpus
        .and_then(|q| quantity::parse(&q.text()).ok().map(|q| q.value))
        .map(|cpus| cpus.ceil().max(1.0));
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
        Some(_) => return, // one process per CPU the pod asks for: as the spec reads
    };
    r.push(
        Diagnostic::warning(codes::NPROC_TRAINER_CPU, span, message)
            .with_help("set an explicit number of processes, or `\"gpu\"` for one per GPU"),
    );
}

/// A `command` that runs torchrun itself on an elastic PyTorchJob: the
/// Training Operator v1.7 gives an elastic job's pods no
/// `PET_NPROC_PER_NODE` (fixed in v1.8.0, kubeflow/trainer#1948), so unless
/// the command says how many processes, torchrun starts one per pod there.
/// (`script` and `module` get `--nproc_per_node` from trainc.)
fn elastic_command(r: &mut Rules<'_>) {
    let spec = r.spec;
    let Some(command) = &spec.command else { return };
    if r.target() != Target::Pytorchjob || !r.is_elastic() {
        return;
    }
    let one = match &spec.n_proc_per_node {
        Some(NProcPerNode::Count(n)) => *n == 1,
        Some(NProcPerNode::Keyword(NProcKeyword::Gpu)) | None => r.gpus() <= 1,
        Some(NProcPerNode::Keyword(_)) => false,
    };
    let runs_torchrun = command
        .iter()
        .any(|part| part.contains("torchrun") || part.contains("torch.distributed.run"));
    let says_nproc = command
        .iter()
        .any(|part| part.contains("nproc_per_node") || part.contains("nproc-per-node"));
    if one || !runs_torchrun || says_nproc {
        return;
    }
    r.push(
        Diagnostic::warning(
            codes::NPROC_ELASTIC_COMMAND,
            r.value("/command"),
            "on Training Operator v1.7 an elastic job's pods get no `PET_NPROC_PER_NODE`, so this torchrun starts one process per pod there (fixed in v1.8.0)",
        )
        .with_help("pass `--nproc_per_node` in `command`, or use `script` or `module`, for which trainc passes it"),
    );
}
