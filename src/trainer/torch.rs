//! The process count Trainer's torch plugin gives torchrun
//! (`PET_NPROC_PER_NODE`), from a TrainJob, its runtime and the release:
//! kubeflow/trainer `pkg/runtime/framework/plugins/torch/torch.go`
//! `EnforceMLPolicy`.
//!
//! - v2.2.0, v2.3.0: the TrainJob's integer, else `auto`; `auto` on a node
//!   without GPUs becomes the node's CPUs (at least 1). The runtime's
//!   `numProcPerNode` is not read.
//! - v2.1.0: the TrainJob's value, else the runtime's, else `auto`; `cpu`,
//!   or `auto` without GPUs, becomes the node's CPUs (at least 1).
//! - v2.0.0: the same start, changed only when the TrainJob has
//!   `resourcesPerNode`: `auto` without a GPU resource in the limits (else
//!   the requests) and `cpu` with a CPU there become that CPU count (at least
//!   1); a numeric value stays; a missing map gives 1
//!   (`calculateNumProcPerNode`).
//!
//! Resources are the TrainJob's `resourcesPerNode`, else (from v2.1.0) the
//! runtime's `node` container's. A node's CPUs are its CPU request, else its
//! limit, rounded up to a whole number as `Quantity.Value()` does
//! (`getNumCPUPerNode`); its GPUs the first resource named like `gpu`,
//! requests before limits (`pkg/runtime/runtime.go` `GetNumGPUPerNode`).

use serde_json::Value as Json;

use super::Release;
use super::runtime::{Framework, Runtime};

/// What torchrun is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Procs {
    Count(u64),
    /// `auto`, `gpu` or another word torchrun resolves on the node
    /// (`auto`: one per GPU).
    Word(String),
}

/// `PET_NPROC_PER_NODE` for a TrainJob (`trainer`: its `spec.trainer`) on
/// `runtime` (its torch policy and `node` container), at `release`.
pub fn procs_per_node(release: Release, trainer: &Json, runtime: Option<&Runtime>) -> Procs {
    let from_runtime = runtime.and_then(|r| match &r.policy.framework {
        Framework::Torch { num_proc_per_node } => num_proc_per_node.clone(),
        _ => None,
    });
    let written = match &trainer["numProcPerNode"] {
        Json::Number(n) => Some(n.to_string()),
        Json::String(s) => Some(s.clone()),
        _ if release >= Release::V2_2 => None,
        _ => from_runtime,
    };
    let start = written.unwrap_or_else(|| "auto".to_owned());
    let own = trainer.get("resourcesPerNode").filter(|r| r.is_object());
    if release == Release::V2_0 {
        return v2_0(&start, own);
    }
    let runtime_resources = runtime
        .and_then(Runtime::trainer_container)
        .map(|c| &c.resources);
    let resources = own.or(runtime_resources).unwrap_or(&Json::Null);
    let gpus = gpus(resources);
    let use_cpu = (start == "cpu" && release == Release::V2_1) || (start == "auto" && gpus == 0);
    if use_cpu {
        return Procs::Count(cpus(resources).max(1));
    }
    word_or_count(&start)
}

fn word_or_count(text: &str) -> Procs {
    text.parse()
        .map_or_else(|_| Procs::Word(text.to_owned()), Procs::Count)
}

/// Whether v2.0 counts CPUs for a resource list.
type Rule = fn(&serde_json::Map<String, Json>) -> bool;

fn v2_0(start: &str, resources: Option<&Json>) -> Procs {
    let Some(resources) = resources else {
        return word_or_count(start);
    };
    let (fallback, counts_cpu): (Procs, Rule) = match start {
        "auto" => (Procs::Word("auto".to_owned()), |list| {
            !list.keys().any(|k| k.to_lowercase().contains("gpu"))
        }),
        "cpu" => (Procs::Count(1), |list| list.contains_key("cpu")),
        other => (word_or_count(other), |_| false),
    };
    let one = |list: &Json| -> (Procs, bool) {
        match list.as_object() {
            Some(list) if counts_cpu(list) => {
                (Procs::Count(list.get("cpu").map_or(0, value).max(1)), true)
            }
            Some(_) => (fallback.clone(), false),
            None => (Procs::Count(1), false),
        }
    };
    let (procs, used_cpu) = one(&resources["limits"]);
    if used_cpu {
        procs
    } else {
        one(&resources["requests"]).0
    }
}

/// The CPU request, else the limit, rounded up.
fn cpus(resources: &Json) -> u64 {
    let request = resources["requests"].get("cpu").map_or(0, value);
    if request > 0 {
        return request;
    }
    resources["limits"].get("cpu").map_or(0, value)
}

/// The first GPU-like resource of the requests, else of the limits.
pub fn gpus(resources: &Json) -> u64 {
    let of = |list: &Json| {
        list.as_object()
            .and_then(|m| m.iter().find(|(k, _)| k.to_lowercase().contains("gpu")))
            .map_or(0, |(_, q)| value(q))
    };
    match of(&resources["requests"]) {
        0 => of(&resources["limits"]),
        n => n,
    }
}

/// A quantity as `Quantity.Value()` gives it: rounded up to a whole number.
pub fn value(quantity: &Json) -> u64 {
    let text = match quantity {
        Json::String(s) => s.clone(),
        Json::Number(n) => n.to_string(),
        _ => return 0,
    };
    crate::syntax::quantity::parse(&text).map_or(0, |q| {
        if q.value <= 0.0 || !q.value.is_finite() {
            0
        } else {
            // Whole numbers of a float that came from decimal text: take
            // off what the float adds past the thousandth before rounding up.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let whole = ((q.value * 1000.0).round() / 1000.0).ceil() as u64;
            whole
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_release_resolves_as_its_torch_plugin() {
        let runtime = super::super::catalogue::find(Release::V2_1, "torch-distributed");
        let cpu = |r| json!({"resourcesPerNode": {"requests": {"cpu": r}}});
        // v2.3: unset is auto; without GPUs the CPU request, rounded up.
        assert_eq!(
            procs_per_node(Release::V2_3, &cpu("3500m"), None),
            Procs::Count(4)
        );
        assert_eq!(
            procs_per_node(Release::V2_3, &json!({}), None),
            Procs::Count(1)
        );
        let gpu = json!({"resourcesPerNode": {"limits": {"nvidia.com/gpu": 8}}});
        assert_eq!(
            procs_per_node(Release::V2_3, &gpu, None),
            Procs::Word("auto".to_owned())
        );
        assert_eq!(
            procs_per_node(Release::V2_2, &json!({"numProcPerNode": 3}), None),
            Procs::Count(3)
        );
        // v2.1: `cpu` counts CPUs even with GPUs.
        let both = json!({"numProcPerNode": "cpu", "resourcesPerNode": {"requests": {"cpu": "6", "nvidia.com/gpu": 2}}});
        assert_eq!(
            procs_per_node(Release::V2_1, &both, runtime),
            Procs::Count(6)
        );
        // v2.0: limits first; a numeric value stays.
        let limits =
            json!({"numProcPerNode": "auto", "resourcesPerNode": {"limits": {"cpu": "2500m"}}});
        assert_eq!(
            procs_per_node(Release::V2_0, &limits, None),
            Procs::Count(3)
        );
        let numeric = json!({"numProcPerNode": 4, "resourcesPerNode": {"requests": {"cpu": "8"}}});
        assert_eq!(
            procs_per_node(Release::V2_0, &numeric, None),
            Procs::Count(4)
        );
        // ... and limits alone leave a missing requests map: 1.
        let limits_only =
            json!({"numProcPerNode": 4, "resourcesPerNode": {"limits": {"cpu": "8"}}});
        assert_eq!(
            procs_per_node(Release::V2_0, &limits_only, None),
            Procs::Count(1)
        );
    }
}
