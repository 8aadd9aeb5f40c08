//! What trainc writes in a JobSet's training container for the topology
//! (its launch flags, the variables it reads the topology from, those a
//! `command` is told), taken out of the container, which is imported.

use serde_json::Value as Json;

use super::super::{Job, container, launch};
use crate::cluster::job::{COMPLETION_INDEX_ENV, COMPLETION_INDEX_FIELD, Told};
use crate::cluster::jobset::{GLOBAL_INDEX_ENV, GLOBAL_INDEX_FIELD, Layout, NAME_ENV, NAME_FIELD};
use crate::derived::Rendezvous;
use crate::spec::Target;

/// The training container at `pointer`, of a JobSet of `nodes` pods laid
/// out as `layout`, without trainc's launch and topology: its processes per
/// pod.
pub(super) fn import(
    job: &mut Job<'_>,
    trainer: &Json,
    pointer: &str,
    nodes: u64,
    layout: Layout,
) -> launch::NProc {
    let master = layout == Layout::MasterWorkers;
    let rendezvous = crate::derived::rendezvous(&job.name, Target::Jobset, master);
    let flag = launch::import_indexed(
        job,
        trainer.get("command"),
        trainer.get("args"),
        nodes,
        &rendezvous,
    );
    let nproc = flag
        .or_else(|| told_count(trainer))
        .unwrap_or(launch::NProc::Count(1));
    let topology = Topology::new(&rendezvous, nodes, &nproc, job.get("/command").is_some());
    let ours = without_trainc_env(job, trainer, pointer, &topology);
    container::full(job, &ours, pointer);
    nproc
}

/// What trainc gives a `command` on the job's pods
/// ([`crate::cluster::job::command_env`]), and whether it runs one.
struct Topology {
    told: Vec<(&'static str, Told)>,
    /// Where a pod's node rank is read from (a `fieldRef`).
    node_rank: &'static str,
    /// The container runs a `command`, which is given them as variables.
    command: bool,
}

impl Topology {
    fn new(rendezvous: &Rendezvous, nodes: u64, nproc: &launch::NProc, command: bool) -> Topology {
        let nproc = match nproc {
            launch::NProc::Count(n) => n.to_string(),
            launch::NProc::Keyword(keyword) => keyword.clone(),
        };
        let nodes = u32::try_from(nodes).unwrap_or(u32::MAX);
        Topology {
            told: crate::cluster::job::command_env(&rendezvous.master, nodes, &nproc),
            node_rank: rendezvous.node_rank_field,
            command,
        }
    }

    /// What trainc gives a `command` as `name`; `None` for a name it does
    /// not give one (to torchrun, which takes flags, it gives none but the
    /// index and the JobSet's name).
    fn told(&self, name: &str) -> Option<Told> {
        self.told
            .iter()
            .find(|(given, _)| *given == name)
            .map(|(_, told)| told.clone())
    }
}

/// The training container without the variables trainc sets on it: the
/// completion index and the JobSet's name, which the topology is read
/// from, and those a `command` is told. One of those names with a value
/// trainc would not give is left out too (trainc gives its own; a spec may
/// not set them), and the change is said.
fn without_trainc_env(
    job: &mut Job<'_>,
    container: &Json,
    pointer: &str,
    topology: &Topology,
) -> Json {
    let mut container = container.clone();
    let Some(env) = container.get_mut("env").and_then(Json::as_array_mut) else {
        return container;
    };
    let mut kept = Vec::new();
    for (i, var) in env.drain(..).enumerate() {
        let name = var["name"].as_str().unwrap_or_default();
        let field = var["valueFrom"]["fieldRef"]["fieldPath"].as_str();
        let reserved = crate::cluster::job::RESERVED_ENV.contains(&name)
            || crate::cluster::jobset::RESERVED_ENV.contains(&name);
        if !reserved {
            kept.push(var);
            continue;
        }
        let told = topology.told(name);
        let given = match (name, &told) {
            (COMPLETION_INDEX_ENV, _) => field == Some(COMPLETION_INDEX_FIELD),
            (NAME_ENV, _) => field == Some(NAME_FIELD),
            (GLOBAL_INDEX_ENV, _) => {
                field == Some(GLOBAL_INDEX_FIELD) && topology.node_rank == GLOBAL_INDEX_FIELD
            }
            (_, Some(Told::NodeRank)) => topology.command && field == Some(topology.node_rank),
            (_, Some(Told::Value(value))) => {
                topology.command && var["value"].as_str() == Some(value.as_str())
            }
            (_, None) => false,
        };
        if !given {
            let instead = match (topology.command, told) {
                (true, Some(Told::Value(value))) => {
                    format!("trainc gives the command `{name}={value}`")
                }
                (true, _) => format!("trainc gives the command `{name}`, the pod's node rank"),
                (false, _) => "trainc gives torchrun the topology as flags".to_owned(),
            };
            job.warn(
                &format!("{pointer}/env/{i}"),
                format!("env `{name}` is not imported: {instead}"),
                "check that the job finds its peers with trainc's topology (`trainc describe --pods`)",
            );
        }
    }
    *env = kept;
    container
}

/// The count a `command` is told (`PET_NPROC_PER_NODE`), which is its
/// `nProcPerNode`.
fn told_count(container: &Json) -> Option<launch::NProc> {
    let env = container["env"].as_array()?;
    let told = env.iter().find(|v| v["name"] == "PET_NPROC_PER_NODE")?;
    launch::NProc::parse(&told["value"])
}
