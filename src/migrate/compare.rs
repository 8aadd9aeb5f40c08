//! The two clusters' stories side by side: the pods the Training Operator
//! makes of the PyTorchJob and those Trainer (through JobSet and the Job
//! controller) makes of the TrainJob, as [`crate::cluster`] models each,
//! compared pod by pod in rank order for everything a program or an
//! operator would notice:
//!
//! - the pods' names and rank 0's address ([`Aspect::Names`]);
//! - the world torchrun forms, or `WORLD_SIZE` for a command that starts
//!   no launcher ([`Aspect::World`]);
//! - the command line as the kubelet starts it (`$(VAR)` expanded), and the
//!   variables a `sh -c` script reads ([`Aspect::CommandLine`]);
//! - each variable the training container's processes read: all of them
//!   for a command that is not a launcher or an image's entrypoint, those
//!   torchrun does not set again for its processes under a launcher
//!   ([`Aspect::Env`]);
//! - the pods' own labels and annotations ([`Aspect::Labels`]) and the rest
//!   of the pod spec: scheduling, volumes, the other containers
//!   ([`Aspect::Pod`]);
//! - the restart and failure story: the restart policy, the failures
//!   tolerated, when the job succeeds, its deadline ([`Aspect::Restarts`],
//!   [`Aspect::Success`], [`Aspect::Deadline`]).
//!
//! Values are compared for what they mean on each side: rank 0's address,
//! the rendezvous port and the pod's own name read the same however each
//! controller spells them. What a controller adds that the other did not
//! have (its labels, `JOB_COMPLETION_INDEX`) is no difference to a program
//! that never read it; what it took away or changed is.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::podspec;
use crate::cluster::{Pod, Success, Workload, kubelet, shell, torchrun};

/// What a difference is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Aspect {
    Names,
    World,
    CommandLine,
    Env,
    Labels,
    Pod,
    Restarts,
    Success,
    Deadline,
}

/// One thing the two clusters do differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Difference {
    pub(super) aspect: Aspect,
    /// What differs: a variable's name, a pod spec field's path, a label.
    pub(super) subject: String,
    /// The PyTorchJob's pod (in rank order) it was found on; `None` for
    /// the job as a whole.
    pub(super) rank: Option<u64>,
    /// What each side does, in words.
    pub(super) before: String,
    pub(super) after: String,
}

/// The variables torchrun (and `torch.distributed.launch`) sets for each
/// process it starts, over the pod's own.
pub(super) const LAUNCHER_SETS: [&str; 7] = [
    "MASTER_ADDR",
    "MASTER_PORT",
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
];

/// The world's variables, compared as [`Aspect::World`].
const WORLD: [&str; 3] = ["PET_NNODES", "PET_NPROC_PER_NODE", "WORLD_SIZE"];

/// Label prefixes compared as a controller's beside
/// [`crate::cluster::CONTROLLER_LABEL_PREFIXES`]: the gang's PodGroup, and
/// Kueue's, which it reads on the job (the TrainJob carries them) and not
/// on its pods.
const OTHERS: [&str; 2] = ["scheduling.k8s.io/group-name", "kueue.x-k8s.io/"];

/// One training pod as its processes see it.
struct View<'a> {
    pod: &'a Pod,
    /// The command line as started, `None` for an image's entrypoint.
    argv: Option<Vec<String>>,
    env: BTreeMap<String, String>,
    /// Whether the command starts a launcher that sets [`LAUNCHER_SETS`].
    launcher: bool,
    /// torchrun's nodes and processes per node, as it reads them.
    world: (Option<String>, Option<String>),
    /// torchrun's node rank, rendezvous backend and endpoint, and the
    /// program it starts, each as it means.
    launch: Option<[String; 4]>,
    /// The rendezvous port as written (`PET_MASTER_PORT`, else
    /// `MASTER_PORT`), which [`meant`] reads as its meaning elsewhere.
    port: Option<String>,
}

/// Every difference between the PyTorchJob's pods (`before`) and the
/// TrainJob's (`after`).
pub(super) fn differences(before: &Workload, after: &Workload) -> Vec<Difference> {
    let mut out = Vec::new();
    let (b, a) = (views(before), views(after));
    names(before, after, &b, &a, &mut out);
    for (rank, (x, y)) in b.iter().zip(&a).enumerate() {
        let rank = Some(rank_of(before, rank));
        pod(x, y, rank, &mut out);
        template(x, y, rank, before, after, &mut out);
    }
    story(before, after, &b, &a, &mut out);
    out
}

/// The rank of the `i`th pod made (a larger job's last pod is its last).
fn rank_of(w: &Workload, i: usize) -> u64 {
    let trainers = w.pods.iter().filter(|p| w.trainer_of(p).is_some()).count();
    if trainers == w.pods.len() && i + 1 == w.pods.len() && w.total > w.pods.len() as u64 {
        w.total - 1
    } else {
        i as u64
    }
}

/// What stands for a value's meaning on one side: rank 0's names, the
/// rendezvous port, the pod's own name.
fn meanings(rank0: &[String], pod: &Pod, env: &[(String, String)]) -> Vec<(String, &'static str)> {
    let mut out: Vec<(String, &'static str)> = rank0
        .iter()
        .map(|name| (name.clone(), "<rank 0's address>"))
        .collect();
    for key in ["PET_MASTER_PORT", "MASTER_PORT"] {
        if let Some((_, port)) = env.iter().find(|(k, _)| k == key) {
            out.push((port.clone(), "<the rendezvous port>"));
            break;
        }
    }
    out.push((pod.hostname.clone(), "<the pod's own name>"));
    out.push((pod.name.clone(), "<the pod's own name>"));
    out.retain(|(text, _)| !text.is_empty());
    out.sort_by_key(|(text, _)| std::cmp::Reverse(text.len()));
    out
}

/// `value` with each meaning's text replaced by its meaning; a port only
/// where it is the whole value or after a `:`.
fn meant(value: &str, meanings: &[(String, &'static str)]) -> String {
    let mut out = value.to_owned();
    for (text, meaning) in meanings {
        if *meaning == "<the rendezvous port>" {
            if out == *text {
                (*meaning).clone_into(&mut out);
            } else if let Some(head) = out.strip_suffix(&format!(":{text}")) {
                out = format!("{head}:{meaning}");
            }
        } else {
            out = out.replace(text.as_str(), meaning);
        }
    }
    out
}

/// Rank 0's names: its DNS names, hostname and pod name.
fn rank0_names(w: &Workload) -> Vec<String> {
    let Some(first) = w.pods.iter().position(|p| w.trainer_of(p).is_some()) else {
        return Vec::new();
    };
    let rank0 = &w.pods[first];
    let mut names = w.dns_names(first, &w.services(&[]));
    names.push(rank0.hostname.clone());
    names.push(rank0.name.clone());
    names
}

fn views(w: &Workload) -> Vec<View<'_>> {
    let rank0 = rank0_names(w);
    w.pods
        .iter()
        .filter_map(|pod| {
            let container = w.trainer_of(pod)?;
            let fields = kubelet::Fields {
                pod,
                pod_ip: "<the pod's IP>",
                host_ip: "<the node's IP>",
                node_name: "<the node's name>",
            };
            let started = kubelet::start(container, &fields, &kubelet::Unread).ok();
            let (argv, env, entrypoint) = started.map_or_else(
                || (Vec::new(), Vec::new(), true),
                |s| (s.argv, s.env, s.image_entrypoint.is_some()),
            );
            let launch = torchrun::read(&argv, &env);
            let gpus = crate::trainer::torch::gpus(&container["resources"]);
            let auto = |v: String| {
                if v == "auto" && gpus > 0 {
                    gpus.to_string()
                } else {
                    v
                }
            };
            let world = match &launch {
                Some(l) => (Some(l.nnodes.clone()), Some(auto(l.nproc_per_node.clone()))),
                None => (None, None),
            };
            let meanings = meanings(&rank0, pod, &env);
            let port = ["PET_MASTER_PORT", "MASTER_PORT"]
                .iter()
                .find_map(|key| env.iter().find(|(k, _)| k == key))
                .map(|(_, port)| port.clone());
            let launched = launch.as_ref().map(|l| {
                let program = torchrun::program(&argv).unwrap_or_default().join(" ");
                [
                    l.node_rank
                        .clone()
                        .unwrap_or_else(|| "(assigned at rendezvous)".to_owned()),
                    l.backend.clone(),
                    l.endpoint.clone(),
                    program,
                ]
                .map(|v| meant(&v, &meanings))
            });
            Some(View {
                launch: launched,
                pod,
                argv: (!entrypoint).then(|| argv.iter().map(|a| meant(a, &meanings)).collect()),
                env: env
                    .iter()
                    .map(|(k, v)| (k.clone(), meant(v, &meanings)))
                    .collect(),
                launcher: launch.is_some(),
                world,
                port,
            })
        })
        .collect()
}

fn say(value: Option<&String>) -> String {
    value.map_or_else(|| "unset".to_owned(), |v| format!("`{v}`"))
}

fn names(
    before: &Workload,
    after: &Workload,
    b: &[View<'_>],
    a: &[View<'_>],
    out: &mut Vec<Difference>,
) {
    let (Some(x), Some(y)) = (b.first(), a.first()) else {
        return;
    };
    let address = |w: &Workload, v: &View<'_>| {
        let first = w
            .pods
            .iter()
            .position(|p| std::ptr::eq(p, v.pod))
            .unwrap_or(0);
        w.dns_names(first, &w.services(&[]))
            .into_iter()
            .max_by_key(String::len)
            .unwrap_or_else(|| v.pod.hostname.clone())
    };
    let listed = |w: &Workload, views: &[View<'_>]| {
        let mut shown: Vec<String> = views
            .iter()
            .take(3)
            .map(|v| format!("`{}`", v.pod.name))
            .collect();
        if views.len() > 3 || w.total > views.len() as u64 {
            shown.push(format!("… ({} in all)", w.total.max(views.len() as u64)));
        }
        shown.join(", ")
    };
    // The port the others meet rank 0 at, where it changes.
    let port = match (&x.port, &y.port) {
        (Some(was), Some(now)) if was != now => format!(", port {now} (was {was})"),
        _ => String::new(),
    };
    if x.pod.name != y.pod.name || address(before, x) != address(after, y) || !port.is_empty() {
        out.push(Difference {
            aspect: Aspect::Names,
            subject: "the pods' names".to_owned(),
            rank: None,
            before: listed(before, b),
            after: format!(
                "{}; rank 0 is `{}`, at `{}`{port}",
                listed(after, a),
                y.pod.name,
                address(after, y)
            ),
        });
    }
}

/// The processes of one pod of each side, of the same rank: the world,
/// the command line, the variables.
fn pod(x: &View<'_>, y: &View<'_>, rank: Option<u64>, out: &mut Vec<Difference>) {
    let mut put = putter(out, rank);
    // The world, as torchrun reads it or as WORLD_SIZE says it.
    if x.launcher || y.launcher {
        for (key, (b, a)) in [
            ("nodes", (&x.world.0, &y.world.0)),
            ("processes per node", (&x.world.1, &y.world.1)),
        ] {
            if b != a {
                put(
                    Aspect::World,
                    key.to_owned(),
                    say(b.as_ref()),
                    say(a.as_ref()),
                );
            }
        }
    } else {
        // An image's entrypoint may start torchrun from `PET_*` itself.
        let read: &[&str] = if x.argv.is_none() {
            &["WORLD_SIZE", "PET_NNODES", "PET_NPROC_PER_NODE"]
        } else {
            &["WORLD_SIZE"]
        };
        for key in read {
            if x.env.get(*key) != y.env.get(*key) {
                put(
                    Aspect::World,
                    format!("`{key}`"),
                    say(x.env.get(*key)),
                    say(y.env.get(*key)),
                );
            }
        }
    }
    // The command line as started: torchrun's settings and the program it
    // starts under a launcher (how it is told its process count is the
    // world's), the words elsewhere.
    if let (Some(p), Some(q)) = (&x.launch, &y.launch) {
        let named = [
            "torchrun's node rank",
            "torchrun's rendezvous",
            "torchrun's rendezvous endpoint",
            "the program torchrun starts",
        ];
        for ((name, b), a) in named.iter().zip(p).zip(q) {
            if b != a {
                put(
                    Aspect::CommandLine,
                    (*name).to_owned(),
                    format!("`{b}`"),
                    format!("`{a}`"),
                );
            }
        }
    }
    if let (Some(b), Some(a)) = (&x.argv, &y.argv) {
        if b != a && (x.launch.is_none() || y.launch.is_none()) {
            let changed: Vec<String> = b
                .iter()
                .zip(a)
                .filter(|(p, q)| p != q)
                .map(|(p, q)| format!("`{p}` becomes `{q}`"))
                .collect();
            put(
                Aspect::CommandLine,
                "the command line".to_owned(),
                b.join(" "),
                if changed.is_empty() {
                    a.join(" ")
                } else {
                    changed.join(", ")
                },
            );
        }
        // What a shell script reads, torchrun's variables included.
        if let Some(script) = shell::script(b) {
            for name in shell::reads(script) {
                let (p, q) = (x.env.get(&name), y.env.get(&name));
                if p != q {
                    put(Aspect::CommandLine, format!("`${name}`"), say(p), say(q));
                }
            }
        }
    }
    // The variables the processes read.
    for (name, value) in &x.env {
        let set_again = x.launcher && LAUNCHER_SETS.contains(&name.as_str());
        if set_again || WORLD.contains(&name.as_str()) {
            continue;
        }
        let now = y.env.get(name);
        if now != Some(value) {
            put(Aspect::Env, format!("`{name}`"), say(Some(value)), say(now));
        }
    }
}

/// What records a difference found on the pod of `rank`.
fn putter(
    out: &mut Vec<Difference>,
    rank: Option<u64>,
) -> impl FnMut(Aspect, String, String, String) + '_ {
    move |aspect, subject, before, after| {
        out.push(Difference {
            aspect,
            subject,
            rank,
            before,
            after,
        });
    }
}

/// The pods' own labels and annotations, and the rest of their spec.
fn template(
    x: &View<'_>,
    y: &View<'_>,
    rank: Option<u64>,
    bw: &Workload,
    aw: &Workload,
    out: &mut Vec<Difference>,
) {
    let mut put = putter(out, rank);
    // Labels and annotations the pod had.
    for (field, (b, a)) in [
        ("label", (&x.pod.labels, &y.pod.labels)),
        ("annotation", (&x.pod.annotations, &y.pod.annotations)),
    ] {
        for (key, value) in b {
            if crate::cluster::CONTROLLER_LABEL_PREFIXES
                .iter()
                .chain(&OTHERS)
                .any(|c| key.starts_with(c))
            {
                continue;
            }
            if a.get(key) != Some(value) {
                let shown = |v: Option<&Json>| v.and_then(Json::as_str).map(str::to_owned);
                put(
                    Aspect::Labels,
                    format!("{field} `{key}`"),
                    say(shown(Some(value)).as_ref()),
                    say(shown(a.get(key)).as_ref()),
                );
            }
        }
    }
    // The rest of the pod.
    let (b, a) = (podspec::bare(bw, x.pod), podspec::bare(aw, y.pod));
    let mut paths = Vec::new();
    podspec::differ(&b, &a, "", &mut paths);
    for path in paths {
        let at = |spec: &Json| {
            spec.pointer(&path).map_or_else(
                || "unset".to_owned(),
                |v| format!("`{}`", podspec::short(v)),
            )
        };
        put(Aspect::Pod, podspec::dotted(&path), at(&b), at(&a));
    }
}

/// The restart and failure story.
fn story(
    before: &Workload,
    after: &Workload,
    b: &[View<'_>],
    a: &[View<'_>],
    out: &mut Vec<Difference>,
) {
    let told = |w: &Workload, v: &View<'_>| {
        let policy = v.pod.spec["restartPolicy"].as_str().unwrap_or("Always");
        let failures = match (policy, v.pod.retries) {
            (_, Some(0)) => "its first failure fails the job".to_owned(),
            ("Never", Some(n)) => {
                format!("a failed pod replaced up to {n} times, then the job fails")
            }
            (_, Some(n)) => format!("its containers restarted up to {n} times, then the job fails"),
            (_, None) => "its containers restarted without limit".to_owned(),
        };
        let group = match w.group.as_ref().map(|g| g.policy.max_restarts) {
            Some(n) if n > 0 => format!(", then the whole job restarted up to {n} times"),
            _ => String::new(),
        };
        format!("`restartPolicy: {policy}`, {failures}{group}")
    };
    for (rank, (x, y)) in b.iter().zip(a).enumerate() {
        let (p, q) = (told(before, x), told(after, y));
        if p != q {
            out.push(Difference {
                aspect: Aspect::Restarts,
                subject: "a failing pod:".to_owned(),
                rank: Some(rank_of(before, rank)),
                before: p,
                after: q,
            });
        }
    }
    if let Success::Pod(master) = &before.success
        && after.success == Success::AllPods
    {
        out.push(Difference {
            aspect: Aspect::Success,
            subject: "success".to_owned(),
            rank: None,
            before: format!("when its Master (`{master}`) did"),
            after: "when every node's pod does".to_owned(),
        });
    }
    if before.deadline != after.deadline {
        let said = |d: Option<u64>| d.map_or_else(|| "none".to_owned(), |s| format!("{s} s"));
        out.push(Difference {
            aspect: Aspect::Deadline,
            subject: "activeDeadlineSeconds".to_owned(),
            rank: None,
            before: said(before.deadline),
            after: said(after.deadline),
        });
    }
}
