//! The container's command line back into `script`, `module` or `command`,
//! and processes per node back into `nProcPerNode`.
//!
//! trainc writes `torchrun [--nproc_per_node=N] [--rdzv_conf=timeout=S]
//! SCRIPT|-m MODULE` followed by the args (the timeout is
//! `policy.joinTimeout`, never on an elastic job). A command of that shape (the flag spelled either way, split
//! between `command` and `args` anyhow) imports as `script` or `module`; any
//! other (more torchrun flags, `python -m torch.distributed.run`, a shell
//! script, plain `python`) as `command`, word for word, with the input's own
//! split between `command` and `args`; none as `imageEntrypoint`.

use serde_json::{Value as Json, json};

use super::Job;

/// What the processes per node are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum NProc {
    Count(u32),
    /// `auto`, `cpu`, `gpu`: decided by torchrun on the node.
    Keyword(String),
}

impl NProc {
    /// As the operators spell it: a number, or a keyword.
    pub(super) fn parse(value: &Json) -> Option<NProc> {
        match value {
            Json::Number(n) => n
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .map(NProc::Count),
            Json::String(s) => match s.parse::<u32>() {
                Ok(n) => Some(NProc::Count(n)),
                Err(_) if ["auto", "cpu", "gpu"].contains(&s.as_str()) => {
                    Some(NProc::Keyword(s.clone()))
                }
                Err(_) => None,
            },
            _ => None,
        }
    }
}

/// The words of a command or args list; numbers (which Kubernetes would
/// reject) are read as the text they stand for.
fn words(value: Option<&Json>) -> Option<Vec<String>> {
    value?.as_array().map(|items| {
        items
            .iter()
            .map(|w| match w {
                Json::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect()
    })
}

/// Imports `command` and `args`; `Some` is the `--nproc_per_node` of a
/// torchrun command line, which torchrun prefers to the operator's variable.
///
/// `with_flag` is whether trainc's own torchrun line on this target has the
/// flag (a PyTorchJob's does, a TrainJob's does not): only a command line
/// with exactly trainc's shape becomes `script` or `module`, so that the
/// spec builds the same container command. Any other stays `command`.
pub(super) fn import(
    job: &mut Job<'_>,
    command: Option<&Json>,
    args: Option<&Json>,
    with_flag: bool,
) -> Option<NProc> {
    let command = words(command);
    let args = words(args).unwrap_or_default();
    let Some(command) = command.filter(|c| !c.is_empty()) else {
        // The image's entrypoint runs, with `args` in place of its CMD.
        job.set("/imageEntrypoint", json!(true));
        if !args.is_empty() {
            job.set("/args", json!(args));
        }
        return None;
    };
    let words: Vec<String> = command.iter().chain(&args).cloned().collect();
    let elastic = job
        .get("/replicas")
        .and_then(Json::as_str)
        .is_some_and(|r| r.contains(':'));
    let parsed = torchrun(&words).filter(|line| {
        line.nproc.is_some() == with_flag && !(elastic && line.join_timeout.is_some())
    });
    if let Some(Torchrun {
        entry,
        args: rest,
        nproc,
        join_timeout,
    }) = parsed
    {
        if let Some(seconds) = join_timeout {
            job.set("/policy/joinTimeout", super::duration(seconds));
        }
        match entry {
            Entry::Script(script) => job.set("/script", json!(script)),
            Entry::Module(module) => job.set("/module", json!(module)),
        }
        if !rest.is_empty() {
            job.set("/args", json!(rest));
        }
        return nproc;
    }
    verbatim(job, &command, &args)
}

/// `command` and `args` as written; a torchrun flag of the command decides
/// the count whatever the operator sets.
fn verbatim(job: &mut Job<'_>, command: &[String], args: &[String]) -> Option<NProc> {
    let words: Vec<String> = command.iter().chain(args).cloned().collect();
    job.set("/command", json!(command));
    if !args.is_empty() {
        job.set("/args", json!(args));
    }
    launcher_nproc(&words)
}

/// trainc's torchrun line on an Indexed Job of `nodes` pods (targets `job`
/// and `jobset`): `torchrun --nnodes=N --nproc_per_node=P
/// --node_rank=$(NODE_RANK_VAR) --master_addr=MASTER
/// --master_port=29500 [--rdzv_conf=timeout=S] SCRIPT|-m MODULE`, imported
/// as [`import`] imports a PyTorchJob's once the topology is taken out
/// (trainc writes it again from the spec), the join timeout left out where
/// it is these targets' default. Any other command line stays as written.
pub(super) fn import_indexed(
    job: &mut Job<'_>,
    command: Option<&Json>,
    args: Option<&Json>,
    nodes: u64,
    rendezvous: &crate::derived::Rendezvous,
) -> Option<NProc> {
    use crate::spec::defaults::{JOB_JOIN_TIMEOUT_SECONDS, JOB_RENDEZVOUS_PORT};
    let Some(words) = self::words(command).filter(|c| !c.is_empty()) else {
        return import(job, command, args, true);
    };
    let topology = [
        (1, format!("--nnodes={nodes}")),
        (3, format!("--node_rank=$({})", rendezvous.node_rank)),
        (4, format!("--master_addr={}", rendezvous.master)),
        (5, format!("--master_port={JOB_RENDEZVOUS_PORT}")),
    ];
    let ours = words.first().is_some_and(|w| w == "torchrun")
        && words
            .get(2)
            .is_some_and(|w| w.starts_with("--nproc_per_node="))
        && topology.iter().all(|(i, flag)| words.get(*i) == Some(flag));
    if !ours {
        return verbatim(job, &words, &self::words(args).unwrap_or_default());
    }
    let mut launcher = vec![words[0].clone(), words[2].clone()];
    launcher.extend(words[6..].iter().cloned());
    let nproc = import(job, Some(&json!(launcher)), args, true);
    if job.get("/policy/joinTimeout") == Some(&super::duration(JOB_JOIN_TIMEOUT_SECONDS)) {
        job.take("/policy/joinTimeout");
    }
    nproc
}

/// The `--nproc_per_node` of a container's torchrun line (`command` then
/// `args`), of any shape.
pub(super) fn flag(command: Option<&Json>, args: Option<&Json>) -> Option<NProc> {
    let words: Vec<String> = words(command)
        .unwrap_or_default()
        .into_iter()
        .chain(words(args).unwrap_or_default())
        .collect();
    launcher_nproc(&words)
}

/// `words` (a `command` or `args` list) with the value of a
/// `--nproc_per_node` flag masked, each word where it was.
pub(super) fn masked_flag(words: &Json) -> Json {
    let Some(list) = self::words(Some(words)) else {
        return words.clone();
    };
    let mut masked: Vec<Json> = list.iter().cloned().map(Json::String).collect();
    let mut i = 0;
    while i < list.len() {
        match nproc_flag(&list, i) {
            Some((_, used)) => {
                masked[i + used - 1] = Json::Null;
                i += used;
            }
            None => i += 1,
        }
    }
    Json::Array(masked)
}

/// The `--nproc_per_node` of a torchrun command line of any shape
/// (`torchrun`, `python -m torch.distributed.run` or `.launch`, a `sh -c`
/// script's line; [`crate::cluster::torchrun`]), among the launcher's
/// options before the script.
fn launcher_nproc(words: &[String]) -> Option<NProc> {
    let value = crate::cluster::torchrun::written(words, "nproc_per_node")?;
    NProc::parse(&Json::String(value))
}

/// `--nproc_per_node=N`, `--nproc-per-node N` (either spelling, either
/// form) at `words[i]`: the value and how many words it took.
fn nproc_flag(words: &[String], i: usize) -> Option<(String, usize)> {
    let word = words.get(i)?;
    ["--nproc_per_node", "--nproc-per-node"]
        .iter()
        .find_map(|flag| {
            let rest = word.strip_prefix(flag)?;
            match rest.strip_prefix('=') {
                Some(value) => Some((value.to_owned(), 1)),
                None if rest.is_empty() => Some((words.get(i + 1)?.clone(), 2)),
                None => None,
            }
        })
}

enum Entry {
    Script(String),
    Module(String),
}

/// A torchrun line of trainc's shape.
struct Torchrun {
    entry: Entry,
    args: Vec<String>,
    nproc: Option<NProc>,
    /// Seconds of `--rdzv_conf=timeout=`.
    join_timeout: Option<u64>,
}

/// `torchrun [--nproc_per_node=N] [--rdzv_conf=timeout=S] SCRIPT|-m MODULE
/// ARGS...`: the entry, the args, the count and the timeout; `None` for any
/// other command line.
fn torchrun(argv: &[String]) -> Option<Torchrun> {
    if argv.first().map(String::as_str) != Some("torchrun") {
        return None;
    }
    let mut i = 1;
    let mut nproc = None;
    while let Some((value, used)) = nproc_flag(argv, i) {
        if nproc.is_some() {
            return None; // given twice: keep the command as written
        }
        nproc = Some(NProc::parse(&Json::String(value))?);
        i += used;
    }
    // Exactly as trainc writes it: a number of seconds above zero.
    let join_timeout = argv
        .get(i)
        .and_then(|w| w.strip_prefix("--rdzv_conf=timeout="))
        .filter(|s| !s.starts_with('0') && s.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|s| s.parse::<u64>().ok());
    if join_timeout.is_some() {
        i += 1;
    }
    let word = argv.get(i)?;
    let (entry, rest) = if word == "-m" {
        (Entry::Module(argv.get(i + 1)?.clone()), &argv[i + 2..])
    } else if word.starts_with('-') {
        return None;
    } else {
        (Entry::Script(word.clone()), &argv[i + 1..])
    };
    Some(Torchrun {
        entry,
        args: rest.to_vec(),
        nproc,
        join_timeout,
    })
}

/// `nProcPerNode` as the shortest spec says it: left out where trainc's
/// default gives the same count, `"gpu"` where it is the GPU count.
pub(super) fn set_nproc(job: &mut Job<'_>, nproc: &NProc, pointer: &str) {
    let gpus = job
        .get("/resources/gpus")
        .and_then(Json::as_u64)
        .unwrap_or(0);
    match nproc {
        NProc::Count(n) if gpus > 0 && u64::from(*n) == gpus => {
            job.set("/nProcPerNode", json!("gpu"));
        }
        NProc::Count(1) if gpus == 0 => {}
        NProc::Count(n) => job.set("/nProcPerNode", json!(n)),
        NProc::Keyword(word) if word == "gpu" => {
            if gpus > 0 {
                job.set("/nProcPerNode", json!("gpu"));
            } else {
                job.warn(
                    pointer,
                    "torchrun's `gpu` starts one process per GPU of the node, but the pod requests no GPUs; the spec says `auto`",
                    "request the GPUs in `[resources] gpus`, then `nProcPerNode = \"gpu\"`",
                );
                job.set("/nProcPerNode", json!("auto"));
            }
        }
        NProc::Keyword(word) => job.set("/nProcPerNode", json!(word)),
    }
}
