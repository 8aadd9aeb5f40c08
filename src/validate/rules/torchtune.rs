//! A spec whose `command` is torchtune's `tune run` on a TrainJob: what
//! Trainer's torch plugin refuses in the TrainJob trainc would write
//! ([`crate::trainer::torchtune`], which cites the releases). The plugin
//! reads the model from the runtime's name, so a runtime trainc writes
//! (named after the job) names none.

use super::Rules;
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::{NProc, defaults};
use crate::trainer::runtime::Runtime;
use crate::trainer::torchtune::{self, ProcsWritten, TuneRun};

pub(super) fn check(r: &mut Rules<'_>, runtime: &Runtime) {
    let spec = r.spec;
    if !spec.command.as_deref().is_some_and(torchtune::is_tune_run) {
        return;
    }
    let written = r.writes_runtime();
    let name = if written {
        spec.name.clone()
    } else {
        spec.trainjob
            .as_ref()
            .and_then(|t| t.runtime.clone())
            .unwrap_or_else(|| defaults::TRAINJOB_RUNTIME.to_owned())
    };
    // The GPUs of the TrainJob's `resourcesPerNode`, which replace the
    // runtime's when the spec sets resources.
    let gpus = if super::nproc::sets_resources(r) {
        let named = spec
            .resources
            .as_ref()
            .and_then(|res| res.gpu_resource.as_deref())
            .unwrap_or(defaults::GPU_RESOURCE);
        if named.to_lowercase().contains("gpu") {
            u64::from(r.gpus())
        } else {
            0
        }
    } else {
        torchtune::node_resources(runtime).map_or(0, crate::trainer::torch::gpus)
    };
    let procs = match NProc::of(spec.n_proc_per_node.as_ref(), r.gpus()) {
        NProc::Count(n) => ProcsWritten::Count(i64::from(n)),
        other => ProcsWritten::Word(other.text()),
    };
    let tune = TuneRun {
        runtime: name.clone(),
        nodes: Some(u64::from(r.max_replicas())),
        procs: Some(procs),
        gpus,
        args: spec.args.clone().unwrap_or_default(),
    };
    let release = r.api_level().release();
    let mut said: Vec<String> = Vec::new();
    for rejection in tune.rejections(release) {
        let path = rejection.path.as_str();
        // One error per field: the fix is the same.
        if said.iter().any(|p| p == path) {
            continue;
        }
        said.push(path.to_owned());
        let message = format!(
            "Trainer {} refuses this TrainJob: {}",
            release.tag(),
            rejection.message
        );
        let d = match path {
            "/spec/runtimeRef/name" if written => Diagnostic::error(
                codes::TRAINJOB_TORCHTUNE,
                r.value("/trainjob/writeRuntime"),
                format!("{message}; the runtime trainc writes is named after the job"),
            )
            .with_help("run on the torchtune runtime itself: remove `writeRuntime`"),
            "/spec/runtimeRef/name" if rejection.message.starts_with("QLoRA") => {
                let at = torchtune::qlora_arg(tune.args.as_slice())
                    .map_or_else(|| r.value("/command"), |i| r.value(&format!("/args/{i}")));
                Diagnostic::error(codes::TRAINJOB_TORCHTUNE, at, message)
                    .with_help("fine-tune with LoRA (leave out `model.quantize_base`), or choose a Llama runtime")
            }
            "/spec/runtimeRef/name" => Diagnostic::error(
                codes::TRAINJOB_TORCHTUNE,
                r.at_runtime(),
                message,
            )
            .with_help("name a torchtune runtime whose model this Trainer supports (`torchtune-llama3.2-1b`), or run another command than `tune run`"),
            "/spec/trainer/numNodes" => Diagnostic::error(
                codes::TRAINJOB_TORCHTUNE,
                r.value("/replicas"),
                message,
            )
            .with_help("set `replicas = 1`"),
            "/spec/trainer/numProcPerNode" => {
                let at = if r.tree_has("/nProcPerNode") {
                    r.value("/nProcPerNode")
                } else if r.tree_has("/resources/gpus") {
                    r.value("/resources/gpus")
                } else {
                    r.value("/command")
                };
                Diagnostic::error(codes::TRAINJOB_TORCHTUNE, at, message)
                    .with_help("set `resources.gpus = 1`, or `nProcPerNode = 1`")
            }
            // The same QLoRA device count as `numProcPerNode`: said once.
            "/spec/trainer/resourcesPerNode" => continue,
            _ => {
                let at = path
                    .strip_prefix("/spec/trainer/args/")
                    .map_or_else(|| r.value("/command"), |i| r.value(&format!("/args/{i}")));
                Diagnostic::error(codes::TRAINJOB_TORCHTUNE, at, message)
                    .with_help("remove it: the runtime sets it, to the model, tokenizer and output paths on the volume its initializers fill")
            }
        };
        r.push(d);
    }
}
