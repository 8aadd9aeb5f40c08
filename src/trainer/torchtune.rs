//! What Trainer's torch plugin refuses in a TrainJob that runs torchtune:
//! one whose `trainer.command` is exactly `tune run` (kubeflow/trainer
//! `pkg/constants/constants.go` `TorchTuneEntrypoint`). The plugin reads
//! the model from the runtime's name, `torchtune-<model>-<size>`, picks a
//! recipe and config from the nodes, processes, GPUs and args, and
//! rewrites the command; its `Validate` refuses what that cannot run:
//!
//! - v2.0.0 (`plugins/torch/torch.go` `Validate`): a model it does not
//!   support; more than one node for any model but Llama 3.3 70B.
//! - v2.1.0, v2.2.0 (`plugins/torch/torchtune.go` `validateTorchTune`):
//!   also QLoRA on Qwen 2.5 1.5B, and QLoRA on Llama 3.2 1B or 3B with more
//!   than one device (`getRecipeAndConfig` picks the distributed QLoRA
//!   config).
//! - v2.3.0: also LoRA or QLoRA on more than one node, and the configs the
//!   runtime sets itself (`TorchTuneImmutableConfigs`) in `trainer.args`.
//!
//! v2.0.0 and v2.1.0 run these checks only when the TrainJob sets
//! `numProcPerNode`, and then read `numNodes` without checking that it is
//! set: without it the webhook fails on a nil pointer, and its
//! `failurePolicy: Fail` (`manifests/base/webhook/manifests.yaml`) refuses
//! the TrainJob.

use serde_json::Value as Json;

use super::runtime::Runtime;
use super::{Rejection, Release};

/// The `node` container's resources of the job named `node` or labelled as
/// the trainer's (`ExtractResourcePerNodeFromRuntime`).
pub fn node_resources(runtime: &Runtime) -> Option<&Json> {
    let job = runtime.job("node").or_else(|| runtime.trainer_job())?;
    job.container("node").map(|c| &c.resources)
}

/// torchtune's entrypoint, which the torch plugin rewrites.
pub const ENTRYPOINT: [&str; 2] = ["tune", "run"];

/// The models Trainer's torchtune entrypoint supports at `release`, as
/// [`model_of`] names them (`TorchTuneSupportedPretrainedModels`: v2.0.0
/// has Llama 3.2 7B, not the 3B its own `torchtune-llama3.2-3b` runtime
/// names; v2.1.0 replaced it with 3B and added Qwen 2.5 1.5B).
pub fn models(release: Release) -> &'static [&'static str] {
    if release == Release::V2_0 {
        &["llama3_2/1B", "llama3_2/7B", "llama3_3/70B"]
    } else {
        &["llama3_2/1B", "llama3_2/3B", "llama3_3/70B", "qwen2_5/1.5B"]
    }
}

/// The one model that trains on more than one node.
const MULTI_NODE_MODEL: &str = "llama3_3/70B";

/// The configs the runtime's `node` command sets (from v2.3.0 refused in
/// `trainer.args`).
pub const IMMUTABLE: [&str; 4] = [
    "output_dir",
    "tokenizer.path",
    "checkpointer.checkpoint_dir",
    "tokenizer.merges_file",
];

/// What the rules read of a `tune run` TrainJob, as the TrainJob says it
/// ([`TuneRun::of_trainjob`]; `check` passes what `build` would write).
#[derive(Debug, Clone)]
pub struct TuneRun {
    /// `spec.runtimeRef.name`.
    pub runtime: String,
    /// `trainer.numNodes`, `None` when unset.
    pub nodes: Option<u64>,
    /// `trainer.numProcPerNode`: a count, a word (`auto`), or unset.
    pub procs: Option<ProcsWritten>,
    /// GPUs per node: the first resource named like `gpu` of the TrainJob's
    /// `resourcesPerNode`, else of the runtime's `node` container
    /// (`runtime.GetNumGPUPerNode`, `ExtractResourcePerNodeFromRuntime`).
    pub gpus: u64,
    /// `trainer.args`.
    pub args: Vec<String>,
}

/// `numProcPerNode` as written: Go's `intstr` keeps a number and a word apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcsWritten {
    Count(i64),
    Word(String),
}

/// Whether `command` is torchtune's entrypoint, which only an exact
/// `["tune", "run"]` is (`slices.Equal`).
pub fn is_tune_run<S: AsRef<str>>(command: &[S]) -> bool {
    command.len() == 2 && command.iter().zip(ENTRYPOINT).all(|(a, b)| a.as_ref() == b)
}

/// The model a runtime's name names, as the plugin reads it: the middle of
/// three `-`-separated words with `.` made `_`, then `/`, then the last in
/// capitals (`torchtune-llama3.2-1b` is `llama3_2/1B`); `None` for a name
/// of another shape (`getModelFromRuntimeRef`, which gives "").
pub fn model_of(runtime: &str) -> Option<String> {
    let words: Vec<&str> = runtime.split('-').collect();
    let [_, model, size] = words.as_slice() else {
        return None;
    };
    Some(format!(
        "{}/{}",
        model.replace('.', "_"),
        size.to_uppercase()
    ))
}

/// The model as a person reads it: `llama3_2/1B` is Llama 3.2 1B's
/// `llama3.2 1B`.
pub fn model_words(model: &str) -> String {
    model.replace('_', ".").replace('/', " ")
}

/// Whether an arg turns on LoRA (`model.lora_attn_modules` anywhere in it,
/// `isLoraConfigEnabled`).
fn lora(args: &[String]) -> bool {
    args.iter().any(|a| a.contains("model.lora_attn_modules"))
}

/// Whether the args ask for QLoRA (`isUseQLoraFinetune`): before v2.3.0 an
/// arg naming `model.quantize_base` at all, unless one names
/// `model.use_dora`; from v2.3.0 `model.quantize_base=true` (any case),
/// unless `model.use_dora=true`.
pub fn qlora(args: &[String], release: Release) -> bool {
    let on = |item: &str| {
        if release >= Release::V2_3 {
            args.iter().any(|a| {
                a.split_once('=').is_some_and(|(name, value)| {
                    name.contains(item) && value.trim().eq_ignore_ascii_case("true")
                })
            })
        } else {
            args.iter().any(|a| a.contains(item))
        }
    };
    !on("model.use_dora") && on("model.quantize_base")
}

/// The index of the arg that asks for QLoRA, for a message to point at.
pub fn qlora_arg(args: &[String]) -> Option<usize> {
    args.iter().position(|a| a.contains("model.quantize_base"))
}

impl TuneRun {
    /// A TrainJob's, when its command is `tune run`, on `runtime` (the one
    /// it names, when known: it gives the GPUs a TrainJob without
    /// `resourcesPerNode` has).
    pub fn of_trainjob(job: &Json, runtime: Option<&Runtime>) -> Option<TuneRun> {
        let trainer = &job["spec"]["trainer"];
        let command: Vec<&str> = trainer["command"]
            .as_array()?
            .iter()
            .map(|w| w.as_str())
            .collect::<Option<_>>()?;
        if !is_tune_run(&command) {
            return None;
        }
        let texts = |v: &Json| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_owned))
                .collect()
        };
        let procs = match &trainer["numProcPerNode"] {
            Json::Number(n) => n.as_i64().map(ProcsWritten::Count),
            Json::String(s) => Some(ProcsWritten::Word(s.clone())),
            _ => None,
        };
        let gpus = match trainer.get("resourcesPerNode").filter(|r| r.is_object()) {
            Some(own) => super::torch::gpus(own),
            None => runtime
                .and_then(node_resources)
                .map_or(0, super::torch::gpus),
        };
        Some(TuneRun {
            runtime: job["spec"]["runtimeRef"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            nodes: trainer["numNodes"].as_u64(),
            procs,
            gpus,
            args: texts(&trainer["args"]),
        })
    }

    /// One device: one node, and one process or one GPU
    /// (`getRecipeAndConfig`: a numeric `numProcPerNode` of 1, or a GPU
    /// count of 1).
    fn single_device(&self) -> bool {
        self.nodes.unwrap_or(1) == 1
            && (self.procs == Some(ProcsWritten::Count(1)) || self.gpus == 1)
    }

    /// Every rejection of this TrainJob by the torch plugin of `release`.
    pub fn rejections(&self, release: Release) -> Vec<Rejection> {
        let mut out = Vec::new();
        // v2.0.0 and v2.1.0 return before every check without a process count.
        if release <= Release::V2_1 && self.procs.is_none() {
            return out;
        }
        let model = model_of(&self.runtime);
        if !model
            .as_deref()
            .is_some_and(|m| models(release).contains(&m))
        {
            out.push(self.unsupported(model.as_deref(), release));
        }
        let model = model.unwrap_or_default();
        let Some(nodes) = self.nodes.or((release >= Release::V2_2).then_some(1)) else {
            out.push(reject(
                "/spec/trainer/numNodes",
                format!(
                    "Trainer {}'s torch plugin reads `numNodes` of a `tune run` TrainJob without checking it is set: unset, its webhook fails and the API server refuses the TrainJob",
                    release.tag()
                ),
            ));
            return out;
        };
        if nodes > 1 && model != MULTI_NODE_MODEL {
            let which = if model.is_empty() {
                "this model".to_owned()
            } else {
                format!("`{}`", model_words(&model))
            };
            out.push(reject(
                "/spec/trainer/numNodes",
                format!(
                    "torchtune trains {which} on 1 node only (only `{}` trains on more), not {nodes}",
                    model_words(MULTI_NODE_MODEL)
                ),
            ));
        }
        if release == Release::V2_0 {
            return out;
        }
        let qlora = qlora(&self.args, release);
        if qlora && nodes == 1 {
            self.qlora_on_one_node(&model, &mut out);
        }
        if release >= Release::V2_3 {
            if nodes > 1 && (lora(&self.args) || qlora) {
                out.push(reject(
                    "/spec/trainer/numNodes",
                    format!("torchtune fine-tunes with LoRA on 1 node only, not {nodes}"),
                ));
            }
            out.extend(self.immutable_args());
        }
        out
    }

    fn unsupported(&self, model: Option<&str>, release: Release) -> Rejection {
        let named = model.map_or_else(|| "none".to_owned(), |m| format!("`{}`", model_words(m)));
        let supported: Vec<String> = models(release)
            .iter()
            .map(|m| format!("`{}`", model_words(m)))
            .collect();
        reject(
            "/spec/runtimeRef/name",
            format!(
                "torchtune reads its model from the runtime's name, `torchtune-<model>-<size>`: `{}` names {named}, which Trainer {} does not support (it supports {})",
                self.runtime,
                release.tag(),
                supported.join(", ")
            ),
        )
    }

    /// The QLoRA configs on one node: single-device, else distributed,
    /// which Qwen 2.5 1.5B has neither of and Llama 3.2 has only the first.
    fn qlora_on_one_node(&self, model: &str, out: &mut Vec<Rejection>) {
        if model == "qwen2_5/1.5B" {
            out.push(reject(
                "/spec/runtimeRef/name",
                format!(
                    "QLoRA (`model.quantize_base`) is not supported for `{}`",
                    model_words(model)
                ),
            ));
        }
        if self.single_device() || !(model == "llama3_2/1B" || model == "llama3_2/3B") {
            return;
        }
        let words = model_words(model);
        let procs = match &self.procs {
            Some(ProcsWritten::Count(n)) => format!("{n} processes"),
            Some(ProcsWritten::Word(w)) => format!("`{w}`"),
            None => "`auto` (unset)".to_owned(),
        };
        out.push(reject(
            "/spec/trainer/numProcPerNode",
            format!(
                "QLoRA on `{words}` runs on one device: Trainer takes 1 process per node, or `auto` on 1 GPU, not {procs} on {} GPU{}",
                self.gpus,
                if self.gpus == 1 { "" } else { "s" }
            ),
        ));
        out.push(reject(
            "/spec/trainer/resourcesPerNode",
            format!(
                "QLoRA on `{words}` runs on one device: Trainer takes 1 GPU per node (or 1 process), not {}",
                self.gpus
            ),
        ));
    }

    /// The args that set what the runtime sets (refused from v2.3.0).
    fn immutable_args(&self) -> impl Iterator<Item = Rejection> + '_ {
        self.args.iter().enumerate().filter_map(|(i, arg)| {
            let key = arg.split('=').next().unwrap_or_default();
            IMMUTABLE.contains(&key).then(|| {
                reject(
                    &format!("/spec/trainer/args/{i}"),
                    format!(
                        "`{key}` is the torchtune runtime's own setting, which from Trainer v2.3.0 the args may not override"
                    ),
                )
            })
        })
    }
}

fn reject(path: &str, message: String) -> Rejection {
    Rejection {
        path: path.to_owned(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(runtime: &str, nodes: u64, gpus: u64, args: &[String]) -> TuneRun {
        TuneRun {
            runtime: runtime.to_owned(),
            nodes: Some(nodes),
            procs: Some(ProcsWritten::Word("auto".to_owned())),
            gpus,
            args: args.to_vec(),
        }
    }

    fn paths(found: &[Rejection]) -> Vec<&str> {
        found.iter().map(|r| r.path.as_str()).collect()
    }

    #[test]
    fn the_model_is_read_from_the_runtime_name() {
        assert_eq!(
            model_of("torchtune-llama3.2-1b").as_deref(),
            Some("llama3_2/1B")
        );
        assert_eq!(
            model_of("torchtune-qwen2.5-1.5b").as_deref(),
            Some("qwen2_5/1.5B")
        );
        assert_eq!(model_of("my-runtime"), None);
        assert_eq!(model_of("a-b-c-d"), None);
        let none: [String; 0] = [];
        let found = run("llama-alpaca", 1, 1, &none).rejections(Release::V2_3);
        assert_eq!(paths(&found), ["/spec/runtimeRef/name"]);
        assert!(found[0].message.contains("names none"), "{found:?}");
    }

    #[test]
    fn qlora_reads_true_values_from_v2_3() {
        let off = ["model.quantize_base=False".to_owned()];
        assert!(qlora(&off, Release::V2_2));
        assert!(!qlora(&off, Release::V2_3));
        let dora = [
            "model.quantize_base=True".to_owned(),
            "model.use_dora=False".to_owned(),
        ];
        assert!(!qlora(&dora, Release::V2_2));
        assert!(qlora(&dora, Release::V2_3));
    }

    #[test]
    fn distributed_qlora_on_llama3_2_is_refused_at_both_fields() {
        let args = ["model.quantize_base=True".to_owned()];
        let found = run("torchtune-llama3.2-1b", 1, 2, &args).rejections(Release::V2_1);
        assert_eq!(
            paths(&found),
            [
                "/spec/trainer/numProcPerNode",
                "/spec/trainer/resourcesPerNode"
            ]
        );
        assert!(
            run("torchtune-llama3.2-1b", 1, 1, &args)
                .rejections(Release::V2_1)
                .is_empty()
        );
        // v2.0.0 has no QLoRA rule.
        assert!(
            run("torchtune-llama3.2-1b", 1, 2, &args)
                .rejections(Release::V2_0)
                .is_empty()
        );
    }

    #[test]
    fn unset_nodes_fail_the_webhook_before_v2_2() {
        let none: [String; 0] = [];
        let mut job = run("torchtune-llama3.2-1b", 1, 1, &none);
        job.nodes = None;
        assert_eq!(
            paths(&job.rejections(Release::V2_1)),
            ["/spec/trainer/numNodes"]
        );
        assert!(job.rejections(Release::V2_2).is_empty());
        // Without a process count v2.1 checks nothing.
        job.procs = None;
        assert!(job.rejections(Release::V2_1).is_empty());
    }
}
