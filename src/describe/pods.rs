//! `describe --pods`: every pod the job's controller makes from the built
//! objects, its DNS names, its node rank and ranks, the distributed
//! environment its training container starts with, and where torchrun's
//! rendezvous meets, so rendezvous can be debugged before the job is
//! submitted.
//!
//! Nothing here knows an operator: the pods and their environment are
//! [`crate::cluster`]'s (the one model of each controller, which `trainc
//! run` starts), the variables as the kubelet resolves them
//! ([`crate::cluster::kubelet`]), and what torchrun makes of them
//! ([`crate::cluster::torchrun`]).

use std::fmt::Write as _;

use serde_json::Value as Json;

use crate::cluster::kubelet::{self, Fields};
use crate::cluster::torchrun::{self, Launch};
use crate::cluster::trainjob;
use crate::cluster::{Service, Workload};
use crate::model::Model;

/// The pods section.
pub(super) fn describe(model: &Model) -> String {
    let (objects, workload) = workload(model);
    match workload {
        Ok(workload) => {
            let namespace = model.namespace.as_deref().unwrap_or("NAMESPACE");
            Described::new(&workload, &objects).text(namespace)
        }
        Err(message) => format!("pods\n  not known: {message}\n"),
    }
}

/// `describe --pods --format json`: the pods as a `v1 List`, or why
/// trainc knows of none.
pub struct PodList {
    pub list: Result<Json, String>,
    /// The job makes more pods than the list holds (its first and last).
    pub note: Option<String>,
}

/// The pods the cluster makes of `model`'s objects, each a `Pod` as its
/// controller creates it: named (or, for a Job's pods, which the API server
/// gives a random suffix, `generateName`d), in its namespace, with the labels,
/// annotations and spec the controller writes (the variables it adds, the
/// hostname and subdomain), before the API server defaults it.
pub(crate) fn list(model: &Model) -> PodList {
    let workload = match workload(model).1 {
        Ok(workload) => workload,
        Err(message) => {
            return PodList {
                list: Err(message),
                note: None,
            };
        }
    };
    let items: Vec<Json> = workload
        .pods
        .iter()
        .map(|pod| {
            let mut metadata = serde_json::Map::new();
            if workload.suffixed {
                metadata.insert(
                    "generateName".to_owned(),
                    Json::from(format!("{}-", pod.name)),
                );
            } else {
                metadata.insert("name".to_owned(), Json::from(pod.name.clone()));
            }
            metadata.insert("namespace".to_owned(), Json::from(pod.namespace.clone()));
            metadata.insert("labels".to_owned(), Json::Object(pod.labels.clone()));
            if !pod.annotations.is_empty() {
                metadata.insert(
                    "annotations".to_owned(),
                    Json::Object(pod.annotations.clone()),
                );
            }
            serde_json::json!({
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": metadata,
                "spec": pod.spec,
            })
        })
        .collect();
    let made = items.len() as u64;
    let note = (workload.total > made).then(|| {
        format!(
            "{} makes {} pods; the list holds the first {} and the last",
            workload.job,
            workload.total,
            made.saturating_sub(1)
        )
    });
    PodList {
        list: Ok(
            serde_json::json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}),
        ),
        note,
    }
}

/// The objects `model` builds, and the pods the cluster makes of them.
fn workload(model: &Model) -> (Vec<Json>, Result<Workload, String>) {
    let objects: Vec<Json> = crate::render::render(model)
        .into_iter()
        .map(|o| o.value)
        .collect();
    let runtimes: Vec<_> = model
        .trainjob
        .bound
        .as_ref()
        .and_then(|b| b.runtime())
        .cloned()
        .into_iter()
        .collect();
    let release = model.trainjob.api_level.release();
    let workload = crate::cluster::workload(&objects, &runtimes, release);
    (objects, workload)
}

/// `WORLD_SIZE` as the cluster sets it in the first training pod, for a
/// command that starts no launcher and reads it as it is.
pub(super) fn told_world_size(model: &Model) -> Option<String> {
    let workload = workload(model).1.ok()?;
    workload.pods.iter().find_map(|pod| {
        let container = pod
            .containers(false)
            .iter()
            .find(|c| c["name"] == workload.trainer.as_str())?;
        let env = container["env"].as_array()?;
        let world = env.iter().find(|var| var["name"] == "WORLD_SIZE")?;
        world["value"].as_str().map(str::to_owned)
    })
}

/// `PET_NPROC_PER_NODE` as Trainer's torch plugin resolves it from the
/// TrainJob trainc writes and its runtime ([`crate::trainer::torch`]).
pub(super) fn trainjob_procs(model: &Model) -> String {
    let objects = crate::render::render(model);
    let trainer = objects
        .iter()
        .find(|o| o.value["kind"] == trainjob::KIND)
        .map_or(Json::Null, |o| o.value["spec"]["trainer"].clone());
    let runtime = model.trainjob.bound.as_ref().and_then(|b| b.runtime());
    let release = model.trainjob.api_level.release();
    match crate::trainer::torch::procs_per_node(release, &trainer, runtime) {
        crate::trainer::torch::Procs::Count(n) => n.to_string(),
        crate::trainer::torch::Procs::Word(word) => word,
    }
}

/// Variables torchrun and the training code read to find each other (and
/// `PYTHONUNBUFFERED`, which decides when their output is seen).
fn distributed(name: &str) -> bool {
    name.starts_with("PET_")
        || name.starts_with("TORCHELASTIC_")
        || crate::cluster::job::RESERVED_ENV.contains(&name)
        || crate::cluster::jobset::RESERVED_ENV.contains(&name)
        || [
            "LOCAL_RANK",
            "LOCAL_WORLD_SIZE",
            "GROUP_RANK",
            "PYTHONUNBUFFERED",
        ]
        .contains(&name)
}

/// One pod as described.
struct PodView {
    name: String,
    role: String,
    dns: Vec<String>,
    /// The training container's distributed variables; `None` for a pod
    /// without one.
    env: Option<Vec<(String, String)>>,
    launch: Option<Launch>,
    /// The image whose own entrypoint the training container runs.
    image_entrypoint: Option<String>,
    /// Why the training container's start is not known.
    unknown: Option<String>,
}

struct Described<'a> {
    workload: &'a Workload,
    services: Vec<Service>,
    pods: Vec<PodView>,
}

impl<'a> Described<'a> {
    fn new(workload: &'a Workload, objects: &[Json]) -> Described<'a> {
        let services = workload.services(objects);
        let stages = workload.pods.iter().map(|p| p.stage).max().unwrap_or(0);
        let pods = workload
            .pods
            .iter()
            .enumerate()
            .map(|(index, pod)| {
                let mut role = pod.role.clone();
                if stages > 0 {
                    let _ = write!(role, ", step {} of {}", pod.stage + 1, stages + 1);
                }
                let fields = Fields {
                    pod,
                    pod_ip: "(the pod's IP)",
                    host_ip: "(the node's IP)",
                    node_name: "(the node's name)",
                };
                let started = workload
                    .trainer_of(pod)
                    .map(|c| kubelet::start(c, &fields, &kubelet::Unread));
                let (env, launch, image_entrypoint, unknown) = match started {
                    None => (None, None, None, None),
                    Some(Ok(started)) => {
                        let launch = torchrun::read(&started.argv, &started.env);
                        let env = started
                            .env
                            .into_iter()
                            .filter(|(n, _)| distributed(n))
                            .collect();
                        (Some(env), launch, started.image_entrypoint, None)
                    }
                    Some(Err(error)) => (Some(Vec::new()), None, None, Some(error.message)),
                };
                PodView {
                    name: pod.name.clone(),
                    role,
                    dns: workload.dns_names(index, &services),
                    env,
                    launch,
                    image_entrypoint,
                    unknown,
                }
            })
            .collect();
        Described {
            workload,
            services,
            pods,
        }
    }

    /// The section, with `namespace` in the DNS names.
    fn text(&self, namespace: &str) -> String {
        let mut out = String::new();
        let mut head = format!(
            "pods: {}, made by {}",
            self.workload.total, self.workload.made_by
        );
        let all = |s: &&Service| {
            s.headless && self.workload.pods.iter().all(|p| s.selects(p)) && self.pods.len() > 1
        };
        if let Some(service) = self.services.iter().find(all) {
            let _ = write!(head, ", under the headless Service {}", service.name);
        }
        super::note(&mut out, 0, &head);
        let (common, own) = self.environment();
        // The first pods, and a larger job's last (the pods between are
        // alike but for their index).
        let listed = self.pods.len().min(MAX_LISTED);
        for (index, own) in own.iter().enumerate().take(listed) {
            self.pod_lines(&mut out, index, own, namespace);
        }
        let more = self.workload.total.saturating_sub(listed as u64 + 1);
        if listed < self.pods.len() {
            if more > 0 {
                let _ = writeln!(out, "  … {more} more pods like these");
            }
            let last = self.pods.len() - 1;
            self.pod_lines(&mut out, last, &own[last], namespace);
        }
        if !common.is_empty() {
            let _ = writeln!(
                out,
                "\ndistributed environment of every `{}` container",
                self.workload.trainer
            );
            for (name, value) in &common {
                let _ = writeln!(out, "  {name}={value}");
            }
        }
        out.push_str("\nrendezvous\n");
        super::note(&mut out, 2, &self.rendezvous());
        out
    }

    fn pod_lines(&self, out: &mut String, index: usize, own: &[(String, String)], namespace: &str) {
        let pod = &self.pods[index];
        let _ = writeln!(out, "  {}", pod.name);
        let mut role = pod.role.clone();
        if let Some(launch) = &pod.launch {
            let _ = write!(role, ", {}", self.ranks(launch));
        }
        super::note(out, 6, &role);
        if !pod.dns.is_empty() {
            let names: Vec<String> = pod
                .dns
                .iter()
                .map(|n| format!("{n}.{namespace}.svc"))
                .collect();
            super::note(out, 6, &format!("dns {}", names.join(", ")));
        }
        if !own.is_empty() {
            let vars: Vec<String> = own.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let _ = writeln!(out, "      {}", vars.join("  "));
        }
        if let Some(unknown) = &pod.unknown {
            super::note(out, 6, unknown);
        }
    }

    /// The variables every training container has alike, and each pod's
    /// own (those that differ, or that some lack).
    #[allow(clippy::type_complexity)]
    fn environment(&self) -> (Vec<(String, String)>, Vec<Vec<(String, String)>>) {
        let trainers: Vec<&Vec<(String, String)>> =
            self.pods.iter().filter_map(|p| p.env.as_ref()).collect();
        let common: Vec<(String, String)> = match trainers.split_first() {
            Some((first, rest)) => first
                .iter()
                .filter(|var| rest.iter().all(|env| env.contains(var)))
                .cloned()
                .collect(),
            None => Vec::new(),
        };
        let own = self
            .pods
            .iter()
            .map(|p| {
                p.env
                    .iter()
                    .flatten()
                    .filter(|var| !common.contains(var))
                    .cloned()
                    .collect()
            })
            .collect();
        (common, own)
    }

    /// Where torchrun meets, as the first training pod's launch says, and
    /// whether that is a pod of the job.
    fn rendezvous(&self) -> String {
        // How many pods run torchrun, when every pod was made.
        let trainers = (self.workload.total == self.pods.len() as u64)
            .then(|| self.pods.iter().filter(|p| p.env.is_some()).count());
        let Some(launch) = self.pods.iter().find_map(|p| p.launch.as_ref()) else {
            return self.suffix(self.without_torchrun());
        };
        let text = if launch.backend == "static" {
            let mut text = format!(
                "torchrun on every pod meets node rank 0 at {} (a static rendezvous of {} nodes); {}",
                launch.endpoint,
                launch.nnodes,
                self.host_words(&launch.endpoint, true)
            );
            let ranks: Vec<(&str, &str)> = self
                .pods
                .iter()
                .filter_map(|p| Some((p.name.as_str(), p.launch.as_ref()?.node_rank.as_deref()?)))
                .collect();
            if let Some(((first, rank), (second, _))) = ranks
                .iter()
                .enumerate()
                .find_map(|(i, a)| Some((a, ranks[i + 1..].iter().find(|b| b.1 == a.1)?)))
            {
                let _ = write!(
                    text,
                    " Pods {first} and {second} are both node rank {rank}: each pod needs its own (`--node-rank`)."
                );
            }
            if let Some(trainers) = trainers
                && launch.node_range() != Some((trainers, trainers))
            {
                let _ = write!(
                    text,
                    " torchrun waits for {} nodes, but {trainers} pods run it: the rendezvous never completes.",
                    launch.nnodes
                );
            }
            text
        } else {
            let (min, max) = launch.node_bounds();
            let pods = match trainers {
                Some(n) => format!("{min} of the {n} pods"),
                None if min == "1" => "1 pod".to_owned(),
                None => format!("{min} pods"),
            };
            let joined = if min == "1" { "has" } else { "have" };
            let mut text = format!(
                "{} at {}; training starts once {pods} {joined} joined",
                launch.backend, launch.endpoint
            );
            if min != max {
                text.push_str(", and restarts when one joins or leaves");
            }
            if launch.endpoint.is_empty() {
                text.push_str("; no endpoint is given (`--rdzv-endpoint`).");
            } else {
                let _ = write!(text, "; {}", self.host_words(&launch.endpoint, false));
            }
            text
        };
        self.suffix(text)
    }

    /// `text`, saying that pods' names are their hostnames where the
    /// cluster adds a random suffix.
    fn suffix(&self, mut text: String) -> String {
        if self.workload.suffixed {
            text.push_str(
                " Pod names end in a random suffix; the names above are their hostnames.",
            );
        }
        text
    }

    /// A training container that does not run torchrun: where the
    /// variables it is given say rank 0 is.
    fn without_torchrun(&self) -> String {
        if let Some(why) = self.pods.iter().find_map(|p| p.unknown.as_deref()) {
            return format!("not known: {why}");
        }
        let runs = match self.pods.iter().find_map(|p| p.image_entrypoint.as_deref()) {
            Some(image) => {
                format!("runs the entrypoint of the image {image}, which trainc cannot see")
            }
            None => "does not run torchrun".to_owned(),
        };
        let mut text = format!(
            "the `{}` container {runs}: it finds its peers in the variables above, or its own way.",
            self.workload.trainer
        );
        let env = self.pods.iter().find_map(|p| p.env.as_ref());
        let var = |name: &str| {
            env.into_iter()
                .flatten()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        if let (Some(addr), Some(port)) = (var("MASTER_ADDR"), var("MASTER_PORT")) {
            let _ = write!(
                text,
                " MASTER_ADDR:MASTER_PORT is {addr}:{port}; {}",
                self.host_words(&format!("{addr}:{port}"), true)
            );
        }
        text
    }

    /// Which pod the rendezvous host of `endpoint` is, and whether it can
    /// be: a static rendezvous is hosted by node rank 0.
    fn host_words(&self, endpoint: &str, static_backend: bool) -> String {
        let host = endpoint.rsplit_once(':').map_or(endpoint, |(h, _)| h);
        let host = host
            .trim_end_matches('.')
            .trim_end_matches(".cluster.local")
            .trim_end_matches(".svc");
        let found = self
            .pods
            .iter()
            .zip(&self.workload.pods)
            .find(|(view, pod)| {
                view.dns
                    .iter()
                    .any(|n| n == host || host == format!("{n}.{}", pod.namespace))
            });
        match found {
            Some((view, _)) => {
                let rank = view.launch.as_ref().and_then(|l| l.node_rank.as_deref());
                match rank {
                    Some(rank) if static_backend && rank != "0" => format!(
                        "{host} resolves to pod {}, which is node rank {rank}, not 0: the pods would wait for node rank 0 until the join timeout, then fail.",
                        view.name
                    ),
                    _ => format!("{host} resolves to pod {}.", view.name),
                }
            }
            None if matches!(host, "localhost" | "127.0.0.1") => {
                "each pod on its own: this is not a rendezvous of several pods.".to_owned()
            }
            None => format!(
                "{host} is no pod of this job: the pods would wait for it until the join timeout, then fail."
            ),
        }
    }
}

/// `node rank 1, ranks 2-3` as torchrun's launch says.
impl Described<'_> {
    /// The node rank and ranks of one pod's processes. torchrun numbers
    /// them in node-rank order, each node's from the sum of the processes
    /// of the nodes before it (torch/distributed/elastic/agent/server/api.py
    /// `_assign_worker_ranks`), so a Master with its own count shifts every
    /// Worker's ranks.
    fn ranks(&self, launch: &Launch) -> String {
        let Some(node) = &launch.node_rank else {
            return "node rank assigned at rendezvous".to_owned();
        };
        let unknown = || {
            format!(
                "node rank {node}, ranks set by torchrun ({} per node)",
                launch.nproc_per_node
            )
        };
        let (Ok(node), Some(n)) = (node.parse::<u64>(), launch.procs()) else {
            return unknown();
        };
        // The processes of the nodes before this one that were made; those
        // not made (a large job's middle Workers) run this one's count.
        let before: Option<(u64, u64)> = self
            .pods
            .iter()
            .filter_map(|p| p.launch.as_ref())
            .map(|l| match l.node_rank.as_deref().map(str::parse::<u64>) {
                Some(Ok(rank)) if rank >= node => Some((0, 0)),
                Some(Ok(_)) => Some((1, l.procs()?)),
                _ => None,
            })
            .try_fold((0u64, 0u64), |(nodes, sum), one| {
                let (count, procs) = one?;
                Some((nodes + count, sum.checked_add(procs)?))
            });
        let first = match before {
            Some((nodes, sum)) => node
                .checked_sub(nodes)
                .and_then(|unmade| unmade.checked_mul(n))
                .and_then(|unmade| unmade.checked_add(sum)),
            None => node.checked_mul(n),
        };
        match first.zip(first.and_then(|f| f.checked_add(n))) {
            Some((first, _)) if n == 1 => format!("node rank {node}, rank {first}"),
            Some((first, next)) if n > 1 => format!("node rank {node}, ranks {first}-{}", next - 1),
            Some(_) => unknown(),
            None => format!("node rank {node}, ranks beyond counting"),
        }
    }
}

/// Pods listed one by one; a larger job's others are counted.
const MAX_LISTED: usize = 16;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Described;
    use crate::trainer::Release;

    /// `describe --pods` of an Indexed Job of `n` pods running `command`.
    fn described(n: u64, command: &str) -> String {
        let job = json!({
            "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
            "spec": {"completionMode": "Indexed", "completions": n, "parallelism": n,
                "template": {"spec": {"subdomain": "j", "containers": [{"name": "trainer",
                    "command": command.split(' ').collect::<Vec<_>>(),
                    "env": [{"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
                        "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}]}]}}}
        });
        let service = json!({"kind": "Service", "metadata": {"name": "j"},
            "spec": {"clusterIP": "None", "selector": {"batch.kubernetes.io/job-name": "j"}}});
        let objects = [job, service];
        let workload = crate::cluster::workload(&objects, &[], Release::V2_3).unwrap();
        let text = Described::new(&workload, &objects).text("ml");
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn each_pod_gets_its_node_rank_from_the_expanded_command() {
        let text = described(
            2,
            "torchrun --nnodes=2 --nproc_per_node=2 --node_rank=$(JOB_COMPLETION_INDEX) --master_addr=j-0.j x.py",
        );
        assert!(
            text.contains("j-1 Job j, index 1, node rank 1, ranks 2-3"),
            "{text}"
        );
        assert!(text.contains("dns j-1.j.ml.svc"), "{text}");
        assert!(text.contains("j-0.j resolves to pod j-0."), "{text}");
    }

    #[test]
    fn a_rendezvous_that_cannot_complete_is_said_to() {
        let nowhere = described(
            2,
            "torchrun --nnodes=2 --node_rank=$(JOB_COMPLETION_INDEX) --master_addr=j-0 x.py",
        );
        assert!(nowhere.contains("j-0 is no pod of this job"), "{nowhere}");
        let not_rank_0 = described(
            2,
            "torchrun --nnodes=2 --node_rank=$(JOB_COMPLETION_INDEX) --master_addr=j-1.j x.py",
        );
        assert!(
            not_rank_0.contains("which is node rank 1, not 0"),
            "{not_rank_0}"
        );
        let too_few = described(
            3,
            "torchrun --nnodes=2 --node_rank=$(JOB_COMPLETION_INDEX) --master_addr=j-0.j x.py",
        );
        assert!(
            too_few.contains("waits for 2 nodes, but 3 pods run it"),
            "{too_few}"
        );
        let ranks = described(2, "torchrun --nnodes=2 --master_addr=j-0.j x.py");
        assert!(ranks.contains("j-1 Job j, index 1, node rank 0"), "{ranks}");
        assert!(
            ranks.contains("Pods j-0 and j-1 are both node rank 0"),
            "{ranks}"
        );
    }
}
