//! What the Training Operator sets on a PyTorchJob's containers, and when:
//! a value the spec gives one of these is overwritten (`env`), and a
//! `$(VAR)` reference to one reads the operator's value (`env_refs`).

use super::Rules;

/// When the Training Operator sets a variable on a PyTorchJob's containers.
#[derive(Clone, Copy)]
enum When {
    Always,
    /// On a job with a Master (trainc's fixed-size jobs).
    Master,
    /// On an elastic job (elasticPolicy set, workers only).
    Elastic,
    /// On an elastic job with `elastic.maxRestarts`.
    MaxRestarts,
    /// On an elastic job with `elastic.rdzvConf`.
    RdzvConf,
}

/// What the Training Operator appends to every container's env, after the
/// user's, and when (kubeflow/trainer v1.7.0–v1.9.4,
/// `pkg/controller.v1/pytorch/envvar.go`, `master.go`, `elastic.go`): of two
/// variables with one name, the later wins, so a value in the spec is
/// overwritten. `PET_NPROC_PER_NODE` is set only with a Master on v1.7 and
/// always from v1.8; trainc passes the count as a flag either way. The
/// operator also sets `PET_RDZV_ID` and `PET_STANDALONE`, but only from
/// `elasticPolicy.rdzvId` and `standalone`, which trainc never writes.
const PYTORCHJOB_INJECTED: &[(&str, When, &str)] = &[
    (
        "PYTHONUNBUFFERED",
        When::Always,
        "remove it; the operator sets it to `1`",
    ),
    ("PET_NNODES", When::Always, "set `replicas`"),
    ("PET_NPROC_PER_NODE", When::Always, "set `nProcPerNode`"),
    ("MASTER_ADDR", When::Master, RENDEZVOUS_HELP),
    ("MASTER_PORT", When::Master, RENDEZVOUS_HELP),
    ("PET_MASTER_ADDR", When::Master, RENDEZVOUS_HELP),
    ("PET_MASTER_PORT", When::Master, RENDEZVOUS_HELP),
    ("WORLD_SIZE", When::Master, RENDEZVOUS_HELP),
    ("RANK", When::Master, RENDEZVOUS_HELP),
    ("PET_NODE_RANK", When::Master, RENDEZVOUS_HELP),
    (
        "PET_RDZV_ENDPOINT",
        When::Elastic,
        "remove it; the operator points it at worker 0",
    ),
    (
        "PET_RDZV_BACKEND",
        When::Elastic,
        "set `elastic.rdzvBackend`",
    ),
    (
        "PET_MAX_RESTARTS",
        When::MaxRestarts,
        "set `elastic.maxRestarts` only",
    ),
    (
        "PET_RDZV_CONF",
        When::RdzvConf,
        "set `elastic.rdzvConf` only",
    ),
];

pub(super) const RENDEZVOUS_HELP: &str =
    "remove it; torchrun and the operator take care of rendezvous";

/// Where the Training Operator sets `name` on this job's pods (after the
/// spec's env), and what to write instead of setting it.
pub(super) fn pytorchjob_sets(r: &Rules<'_>, name: &str) -> Option<(&'static str, &'static str)> {
    let elastic = r.is_elastic();
    let settings = r.spec.elastic.as_ref();
    let (_, when, help) = PYTORCHJOB_INJECTED.iter().find(|(n, _, _)| *n == name)?;
    let situation = match when {
        When::Always => Some("every pod"),
        When::Master => (!elastic).then_some("every pod of a job with a Master"),
        When::Elastic => elastic.then_some("every pod of an elastic job"),
        When::MaxRestarts => (elastic && settings.is_some_and(|e| e.max_restarts.is_some()))
            .then_some("every pod of an elastic job with `elastic.maxRestarts`"),
        When::RdzvConf => (elastic
            && settings.is_some_and(|e| e.rdzv_conf.as_ref().is_some_and(|c| !c.is_empty())))
        .then_some("every pod of an elastic job with `elastic.rdzvConf`"),
    };
    situation.map(|s| (s, *help))
}
