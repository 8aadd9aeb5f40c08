//! Kubeflow Trainer v2: what trainc knows of it, in one place. The releases
//! trainc supports, the runtimes each ships ([`catalogue`]) and a runtime as
//! trainc reads it ([`runtime`]). Every fact cites the kubeflow/trainer tag
//! and file it was read from.

pub mod bind;
pub mod catalogue;
pub mod file;
pub mod runtime;
pub mod torch;
pub mod torchtune;
pub mod webhook;

/// A Kubeflow Trainer release trainc knows the runtimes of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Release {
    V2_0,
    V2_1,
    V2_2,
    V2_3,
}

impl Release {
    pub const ALL: [Release; 4] = [Release::V2_0, Release::V2_1, Release::V2_2, Release::V2_3];

    /// The tag its runtimes were read at.
    pub fn tag(self) -> &'static str {
        match self {
            Release::V2_0 => "v2.0.0",
            Release::V2_1 => "v2.1.0",
            Release::V2_2 => "v2.2.0",
            Release::V2_3 => "v2.3.0",
        }
    }
}

#[cfg(test)]
mod tests;

/// One rejection by a webhook or plugin: where in the object (a JSON
/// pointer), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub path: String,
    pub message: String,
}

/// The `storageUri` schemes Kubeflow's initializer images download from, by
/// `kind` (`dataset` or `model`): the initializer picks a provider by the
/// URI's scheme, lowercased by Python's `urlparse`, and fails the
/// initializer Job on any other, so no training runs
/// (kubeflow/trainer `pkg/initializers/{dataset,model}/__main__.py`,
/// `pkg/initializers/utils/utils.py`: v2.0.0 `hf`; v2.1.0–v2.3.0 `hf`,
/// `cache` and `s3` for datasets, `hf` and `s3` for models).
pub fn initializer_schemes(release: Release, kind: &str) -> &'static [&'static str] {
    match (release, kind) {
        (Release::V2_0, _) => &["hf"],
        (_, "dataset") => &["hf", "cache", "s3"],
        _ => &["hf", "s3"],
    }
}

/// When Kubeflow's `kind` initializer image of `release` cannot read `uri`,
/// the schemes it reads, as a list for a message (`` `hf://`, `s3://` ``).
pub fn scheme_refused(release: Release, kind: &str, uri: &str) -> Option<String> {
    let allowed = initializer_schemes(release, kind);
    let written = uri.split_once("://").map_or("", |(s, _)| s);
    if allowed.iter().any(|a| a.eq_ignore_ascii_case(written)) {
        return None;
    }
    Some(
        allowed
            .iter()
            .map(|a| format!("`{a}://`"))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

/// The PodGroup plugin of a runtime's `podGroupPolicy` that gangs a job's
/// pods (kubeflow/trainer `pkg/runtime/framework/plugins/{volcano,coscheduling}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodGroup {
    /// Volcano's, from v2.1.0 (which added the plugin); its pods need
    /// Volcano's scheduler.
    Volcano,
    /// scheduler-plugins' coscheduling, under the scheduler the spec names.
    Coscheduling,
}

/// The annotation of the runtime's JobSet template Trainer's Volcano plugin
/// reads the queue from (kubeflow/trainer v2.1.0–v2.3.0,
/// `pkg/runtime/framework/plugins/volcano/volcano.go`; the template's
/// annotations, and from v2.2.0 those of the TrainJob's runtime patches,
/// are the runtime info's, `pkg/runtime/core/trainingruntime.go`
/// `newRuntimeInfo`).
pub const VOLCANO_QUEUE: &str = "scheduling.volcano.sh/queue-name";

/// Volcano's scheduler name.
pub const VOLCANO_SCHEDULER: &str = "volcano";

/// The plugin that gangs a job with a Volcano queue (`volcano_queue`) or
/// pods of `scheduler`: Volcano for a queue or Volcano's scheduler, else
/// coscheduling under the scheduler named. Neither plugin sets the pods'
/// scheduler, so with none named (or Volcano before v2.1) there is none.
pub fn pod_group(
    release: Release,
    volcano_queue: bool,
    scheduler: Option<&str>,
) -> Option<PodGroup> {
    if volcano_queue || scheduler == Some(VOLCANO_SCHEDULER) {
        (release >= Release::V2_1).then_some(PodGroup::Volcano)
    } else {
        scheduler.map(|_| PodGroup::Coscheduling)
    }
}

/// The PodGroup plugin of the runtime trainc writes: one only when the spec
/// asks for gang scheduling (`gang`) or a Volcano queue, by [`pod_group`].
pub fn written_pod_group(
    release: Release,
    gang: bool,
    volcano_queue: bool,
    scheduler: Option<&str>,
) -> Option<PodGroup> {
    (gang || volcano_queue)
        .then(|| pod_group(release, volcano_queue, scheduler))
        .flatten()
}
