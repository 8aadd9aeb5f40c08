//! `$(VAR)` in an `[env]` value: the kubelet expands it only from variables
//! declared before it in the container (kubernetes/kubernetes
//! `pkg/kubelet/kubelet_pods.go` `makeEnvironmentVariables`, which expands
//! each value with the map built so far; `envFrom` comes first). A
//! reference to a later variable stays as written, `$(VAR)`, and nothing
//! says so on the cluster. `command` and `args` are expanded with every
//! variable of the container, so a reference there always works.
//!
//! Where each target puts the variables a job reads:
//! - PyTorchJob: the Training Operator appends its own after the spec's
//!   (kubeflow/trainer v1.7.0–v1.9.4 `pkg/controller.v1/pytorch/envvar.go`
//!   `setPodEnv`, `append` to the container's env).
//! - TrainJob: the torch plugin writes `trainer.env` (the spec's `[env]`)
//!   first and then `PET_*` (v2.0.0–v2.3.0 `pkg/runtime/framework/plugins/
//!   torch/torch.go` `EnforceMLPolicy`), and the Job controller appends
//!   `JOB_COMPLETION_INDEX` to a JobSet's Indexed Jobs' pods (kubernetes
//!   `pkg/controller/job/indexed_job_utils.go`
//!   `addCompletionIndexEnvVariable`).
//! - Job: trainc writes `JOB_COMPLETION_INDEX`, and for a `command` the
//!   topology, before `[env]` (see `render::job`), so those expand; with
//!   `script`/`module` the container has no `RANK` or `PET_*` at all:
//!   torchrun takes the topology as flags.

use indexmap::IndexMap;

use super::Rules;
use super::injected::pytorchjob_sets;
use crate::cluster::{job, trainjob};
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::{EnvValue, Target};

pub(super) fn check(
    r: &mut Rules<'_>,
    env: &IndexMap<String, EnvValue>,
    name: &str,
    value: &str,
    pointer: &str,
) {
    let position = env.get_index_of(name).unwrap_or(0);
    let mut seen = Vec::new();
    for reference in references(value) {
        if seen.contains(&reference) {
            continue;
        }
        seen.push(reference);
        let declared = env.get_index_of(reference);
        if declared.is_some_and(|i| i < position) {
            continue;
        }
        let (why, help) = if let Some(later) = declared {
            let why = if later == position {
                format!("`{name}` refers to itself")
            } else {
                format!("`{reference}` is declared after `{name}` in `[env]`")
            };
            (why, format!("move `{reference}` above `{name}` in `[env]`"))
        } else if let Some(later) = injected_later(r, reference) {
            let help = match later {
                Later::Declared(_) => format!(
                    "write `$({reference})` in `args` (or `command`), where Kubernetes expands every variable of the container, or read `{reference}` in the program"
                ),
                Later::Absent(_) => format!(
                    "read `{reference}` in the program (torchrun sets it in every process it starts), or use `$({})`, this pod's index",
                    job::COMPLETION_INDEX_ENV
                ),
            };
            (later.why(), help)
        } else {
            // Perhaps from `envFrom` or a Service's variables: expanded.
            continue;
        };
        r.push(
            Diagnostic::warning(
                codes::ENV_NOT_EXPANDED,
                r.value(pointer),
                format!(
                    "`{name}` gets the text `$({reference})`, not a value: {why}, and Kubernetes expands only variables declared earlier in the container"
                ),
            )
            .with_help(help),
        );
    }
}

/// The first `[env]` value that the kubelet's expansion makes longer than
/// Linux starts a program with ([`kubelet::MAX_ARG`] for one variable,
/// [`kubelet::MAX_ARGS_TOTAL`] for all): each value's expanded length is
/// computed from those before it, without expanding (nested references
/// grow geometrically). Later values that repeat it are not reported again.
pub(super) fn lengths(r: &mut Rules<'_>, env: &IndexMap<String, EnvValue>) {
    use crate::cluster::kubelet::{self, Piece};
    let mut expanded: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    let mut total = 0u64;
    for (name, value) in env {
        let EnvValue::Literal(literal) = value else {
            continue;
        };
        let mut length = 0u64;
        kubelet::scan(literal, |piece| {
            let add = match piece {
                Piece::Text(text) => text.len() as u64,
                Piece::Reference(reference) => expanded
                    .get(reference)
                    .copied()
                    .unwrap_or(reference.len() as u64 + 3),
            };
            length = length.saturating_add(add);
        });
        expanded.insert(name, length);
        let size = length.saturating_add(name.len() as u64 + 2);
        total = total.saturating_add(size);
        let (what, limit) = if size > kubelet::MAX_ARG as u64 {
            ("one variable", kubelet::MAX_ARG)
        } else if total > kubelet::MAX_ARGS_TOTAL as u64 {
            ("the whole environment", kubelet::MAX_ARGS_TOTAL)
        } else {
            continue;
        };
        let shown = if length >= 1 << 30 {
            format!("{} GiB", length >> 30)
        } else if length >= 1 << 20 {
            format!("{} MiB", length >> 20)
        } else {
            format!("{} KiB", length >> 10)
        };
        r.push(
            Diagnostic::error(
                codes::ENV_TOO_LONG,
                r.value(&super::at("/env", name)),
                format!(
                    "`{name}` expands to {shown} once its `$(…)` references are replaced; the container cannot start, as Linux starts no program with more than {} KiB for {what}",
                    limit >> 10
                ),
            )
            .with_help("refer to each variable once, or pass the value in a file (a ConfigMap volume)"),
        );
        return;
    }
}

/// A variable the target sets only after `[env]`, or not at all.
enum Later {
    Declared(String),
    Absent(String),
}

impl Later {
    fn why(self) -> String {
        match self {
            Later::Declared(why) | Later::Absent(why) => why,
        }
    }
}

/// Why `name`, not declared in `[env]`, is not there yet when `[env]` is
/// expanded on this target; `None` when it is (or may be) declared before.
fn injected_later(r: &Rules<'_>, name: &str) -> Option<Later> {
    match r.target() {
        // trainc's own, on an elastic job on the host network (see
        // `render::pytorchjob`): after `[env]`.
        Target::Pytorchjob
            if name == crate::cluster::torchrun::LOCAL_ADDR_ENV
                && r.is_elastic()
                && r.spec.host_network == Some(true) =>
        {
            Some(Later::Declared(format!(
                "trainc sets `{name}` (the pod's IP, for torchrun on the host network) after the spec's env"
            )))
        }
        Target::Pytorchjob => pytorchjob_sets(r, name).map(|(situation, _)| {
            Later::Declared(format!(
                "the Training Operator sets `{name}` on {situation}, after the spec's env"
            ))
        }),
        Target::Trainjob if trainjob::RESERVED_ENV.contains(&name) => Some(Later::Declared(
            format!("the Trainer's torch plugin sets `{name}` after `trainer.env`"),
        )),
        Target::Trainjob if name == job::COMPLETION_INDEX_ENV => Some(Later::Declared(format!(
            "the Job controller appends `{name}` after the container's env"
        ))),
        Target::Job
            if !r.spec.runs_as_written()
                && name != job::COMPLETION_INDEX_ENV
                && job::RESERVED_ENV.contains(&name) =>
        {
            Some(Later::Absent(format!(
                "on target `job` with `script` or `module` the container has no `{name}` (torchrun is given the topology as flags)"
            )))
        }
        _ => None,
    }
}

/// The names in `$(NAME)` references, as the kubelet reads them
/// ([`crate::cluster::kubelet::scan`]): `$$` is a literal `$`, and a `$(`
/// without its `)` is text.
fn references(value: &str) -> Vec<&str> {
    let mut out = Vec::new();
    crate::cluster::kubelet::scan(value, |piece| {
        if let crate::cluster::kubelet::Piece::Reference(name) = piece
            && crate::syntax::names::env_name(name).is_ok()
        {
            out.push(name);
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::references;

    #[test]
    fn references_read_as_the_kubelet_reads_them() {
        assert_eq!(references("$(A):$(B_2)"), ["A", "B_2"]);
        assert_eq!(references("$$(A) $(B"), Vec::<&str>::new());
        assert_eq!(references("x$(A)y$$$(B)"), ["A", "B"]);
        assert_eq!(references("$(not a name) ${C} $C"), Vec::<&str>::new());
    }
}
