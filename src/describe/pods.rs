//! `describe --pods`: every pod the operator creates for the job, its DNS
//! name, its role and ranks, and the distributed environment the operator
//! injects into its training container, so rendezvous can be debugged before
//! the job is submitted.
//!
//! The environment is what the operators' sources set, at the tags trainc
//! targets:
//!
//! - PyTorchJob, kubeflow/trainer v1.9.4 `pkg/controller.v1/pytorch/envvar.go`
//!   `setPodEnv`: every container gets `PYTHONUNBUFFERED=1`; with a Master,
//!   `MASTER_ADDR`/`PET_MASTER_ADDR` = `<job>-master-0` and
//!   `MASTER_PORT`/`PET_MASTER_PORT` = the Master's `pytorchjob-port`
//!   (`master.go`), `WORLD_SIZE` = all replicas × `nprocPerNode` (1 when not a
//!   number), `RANK` = `PET_NODE_RANK` = the pod's index (+1 on Workers);
//!   `PET_NPROC_PER_NODE` = `nprocPerNode`; `PET_NNODES` = all replicas, or on
//!   an elastic job (`elastic.go`) `min:max`, with `PET_RDZV_ENDPOINT` =
//!   `rdzvHost` (default `<job>-worker-0`) `:` `rdzvPort` (default the Worker's
//!   `pytorchjob-port`), `PET_RDZV_BACKEND` (default `c10d`),
//!   `PET_MAX_RESTARTS` and `PET_RDZV_CONF` when set. Each pod gets a headless
//!   Service of its own name (`pkg/controller.v1/common/service.go`), so its
//!   DNS name is `<pod>.<namespace>.svc`.
//! - TrainJob, kubeflow/trainer v2.0.0, v2.1.0 and v2.3.0
//!   `pkg/runtime/framework/plugins/torch/torch.go` `EnforceMLPolicy`: the
//!   `node` container gets `PET_NNODES` = `numNodes`, `PET_NPROC_PER_NODE`,
//!   `PET_NODE_RANK` from the pod's `batch.kubernetes.io/job-completion-index`
//!   annotation, `PET_MASTER_ADDR` = `<job>-node-0-0.<job>` and
//!   `PET_MASTER_PORT` = 29500 (`pkg/constants/constants.go`
//!   `ContainerTrainerPort`). JobSet (kubernetes-sigs/jobset v0.12.0,
//!   `pkg/util/placement/placement.go` `GenJobName`, and the subdomain of
//!   `jobset_controller.go` `GetSubdomain`) names the node Job `<job>-node-0`;
//!   its Indexed pods are `<job>-node-0-<i>-<random>` with hostname
//!   `<job>-node-0-<i>` under the headless Service `<job>`.

use std::fmt::Write as _;

use crate::model::{Model, NProc, Nodes};
use crate::render::{job, pytorchjob, trainjob};
use crate::spec::Target;

/// The pods section.
pub(super) fn describe(model: &Model) -> String {
    match model.target {
        Target::Pytorchjob => pytorchjob_pods(model),
        Target::Trainjob => trainjob_pods(model),
        Target::Job => job_pods(model),
    }
}

/// `PET_NPROC_PER_NODE` and the processes of one node, when known (a
/// TrainJob's are Trainer's: [`trainjob_procs`]).
fn procs(model: &Model) -> Option<u32> {
    match model.nproc_per_node {
        NProc::Count(n) => Some(n),
        NProc::Auto | NProc::Cpu => None,
    }
}

/// `ranks 8-15` for node `index`, when the process count `procs` is known.
fn ranks(procs: Option<u32>, index: u32) -> String {
    match procs {
        Some(1) => format!("rank {index}"),
        Some(n) => {
            let (index, n) = (u64::from(index), u64::from(n));
            format!("ranks {}-{}", index * n, index * n + n - 1)
        }
        None => "ranks set by torchrun".to_owned(),
    }
}

/// Pods listed one by one; a larger job lists the first of them and the last.
const MAX_LISTED: u32 = 16;

/// The indices of `n` pods to list, each with how many pods were skipped
/// before it (the pods in between are alike but for their index).
fn listed(n: u32) -> impl Iterator<Item = (u32, u32)> {
    let first = n.min(MAX_LISTED);
    let last = (n > MAX_LISTED).then(|| (n - 1, n - 1 - first));
    (0..first).map(|i| (i, 0)).chain(last)
}

/// The line for `skipped` pods not listed, between two that are.
fn skipped_line(out: &mut String, skipped: u32, from: u32) {
    if skipped > 0 {
        let _ = writeln!(
            out,
            "  … {skipped} more pods like these, indices {from} to {}",
            from + skipped - 1
        );
    }
}

fn dns(pod: &str, model: &Model) -> String {
    format!(
        "{pod}.{}.svc",
        model.namespace.as_deref().unwrap_or("NAMESPACE")
    )
}

fn pytorchjob_pods(model: &Model) -> String {
    let name = &model.name;
    let nproc = model.nproc_per_node.text();
    let mut out = String::new();
    match model.nodes {
        Nodes::Fixed(n) => {
            let master = format!("{name}-master-0");
            let port = pytorchjob::PORT.to_string();
            // WORLD_SIZE counts processes only when nprocPerNode is a number.
            let count = procs(model);
            let world = u64::from(n) * u64::from(count.unwrap_or(1));
            super::note(
                &mut out,
                0,
                &format!(
                    "pods: {n}, made by the Training Operator, each with a Service of its name"
                ),
            );
            for (index, skipped) in listed(n) {
                skipped_line(&mut out, skipped, index - skipped);
                let (pod, role) = if index == 0 {
                    (master.clone(), "Master")
                } else {
                    (format!("{name}-worker-{}", index - 1), "Worker")
                };
                pod_lines(
                    &mut out,
                    &pod,
                    &format!("{role}, node rank {index}, {}", ranks(count, index)),
                    &dns(&pod, model),
                    &[
                        ("RANK", &index.to_string()),
                        ("PET_NODE_RANK", &index.to_string()),
                    ],
                );
            }
            environment(
                &mut out,
                pytorchjob::CONTAINER,
                &[
                    ("PYTHONUNBUFFERED", "1"),
                    ("MASTER_ADDR", &master),
                    ("MASTER_PORT", &port),
                    ("PET_MASTER_ADDR", &master),
                    ("PET_MASTER_PORT", &port),
                    ("WORLD_SIZE", &world.to_string()),
                    ("PET_NPROC_PER_NODE", &nproc),
                    ("PET_NNODES", &n.to_string()),
                ],
            );
            let mut text = format!(
                "torchrun on every pod meets pod 0 at {master}:{port}; the operator gives each pod its node rank."
            );
            if count.is_none() {
                let _ = write!(
                    text,
                    " WORLD_SIZE counts pods while nprocPerNode is `{nproc}`; torchrun sets each process's own."
                );
            }
            rendezvous(&mut out, &text);
        }
        Nodes::Elastic { min, max } => elastic_pods(&mut out, model, min, max),
    }
    out
}

/// An elastic PyTorchJob: Workers only, meeting at the rendezvous endpoint.
fn elastic_pods(out: &mut String, model: &Model, min: u32, max: u32) {
    let name = &model.name;
    let nproc = model.nproc_per_node.text();
    let elastic = model.elastic.as_ref();
    let endpoint = elastic.and_then(|e| e.rdzv_endpoint.as_ref()).map_or_else(
        || format!("{name}-worker-0:{}", pytorchjob::PORT),
        |(host, port)| format!("{host}:{port}"),
    );
    let backend = elastic.map_or("c10d", |e| e.rdzv_backend.as_str());
    let start = elastic.map_or(max, |e| e.start);
    let up_to = if start == max {
        String::new()
    } else {
        format!(", up to {max} admitted")
    };
    super::note(
        out,
        0,
        &format!(
            "pods: {start} started, {min} needed{up_to}, made by the Training Operator (no Master)"
        ),
    );
    for (index, skipped) in listed(start) {
        skipped_line(out, skipped, index - skipped);
        let pod = format!("{name}-worker-{index}");
        pod_lines(
            out,
            &pod,
            "Worker, node rank assigned at rendezvous",
            &dns(&pod, model),
            &[],
        );
    }
    let nnodes = format!("{min}:{max}");
    let mut vars = vec![
        ("PYTHONUNBUFFERED", "1"),
        ("PET_NPROC_PER_NODE", nproc.as_str()),
        ("PET_RDZV_ENDPOINT", endpoint.as_str()),
        ("PET_RDZV_BACKEND", backend),
        ("PET_NNODES", nnodes.as_str()),
    ];
    let restarts = elastic.and_then(|e| e.max_restarts).map(|r| r.to_string());
    if let Some(restarts) = &restarts {
        vars.push(("PET_MAX_RESTARTS", restarts));
    }
    let conf = elastic.filter(|e| !e.rdzv_conf.is_empty()).map(|e| {
        e.rdzv_conf
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    });
    if let Some(conf) = &conf {
        vars.push(("PET_RDZV_CONF", conf));
    }
    environment(out, pytorchjob::CONTAINER, &vars);
    rendezvous(
        out,
        &format!(
            "{backend} at {endpoint}; training starts once {min} workers have joined, and restarts when one joins or leaves."
        ),
    );
}

fn trainjob_pods(model: &Model) -> String {
    let name = &model.name;
    let n = model.nodes.max();
    let master = format!("{name}-{}-0-0.{name}", trainjob::NODE);
    let port = trainjob::TRAINER_PORT.to_string();
    let nproc = trainjob_procs(model);
    let count = nproc.parse().ok();
    let others = runtime_jobs(model);
    let total = u64::from(n) + others.iter().map(|(_, pods, _)| pods).sum::<u64>();
    let mut out = String::new();
    super::note(
        &mut out,
        0,
        &format!(
            "pods: {total}, made by JobSet for the Trainer, under the headless Service {name}"
        ),
    );
    for (job, pods, role) in &others {
        for index in 0..*pods {
            pod_lines(&mut out, &format!("{name}-{job}-0-{index}"), role, "", &[]);
        }
    }
    for (index, skipped) in listed(n) {
        skipped_line(&mut out, skipped, index - skipped);
        let host = format!("{name}-{}-0-{index}", trainjob::NODE);
        pod_lines(
            &mut out,
            &host,
            &format!("node {index}, node rank {index}, {}", ranks(count, index)),
            &dns(&format!("{host}.{name}"), model),
            &[("PET_NODE_RANK", &index.to_string())],
        );
    }
    environment(
        &mut out,
        trainjob::NODE,
        &[
            ("PET_NNODES", &n.to_string()),
            ("PET_NPROC_PER_NODE", &nproc),
            ("PET_MASTER_ADDR", &master),
            ("PET_MASTER_PORT", &port),
        ],
    );
    rendezvous(
        &mut out,
        &format!(
            "torchrun on every node meets node 0 at {master}:{port}; PET_NODE_RANK comes from the pod's completion index. Pod names end in a random suffix; the names above are their hostnames. The runtime {} may add variables of its own.",
            model.trainjob.runtime
        ),
    );
    out
}

/// `PET_NPROC_PER_NODE` as Trainer's torch plugin resolves it from the
/// TrainJob trainc writes and its runtime ([`crate::trainer::torch`]).
pub(super) fn trainjob_procs(model: &Model) -> String {
    let objects = crate::render::render(model);
    let trainer = objects
        .iter()
        .find(|o| o.value["kind"] == trainjob::KIND)
        .map_or(serde_json::Value::Null, |o| {
            o.value["spec"]["trainer"].clone()
        });
    let runtime = model.trainjob.bound.as_ref().and_then(|b| b.runtime());
    let release = model.trainjob.api_level.release();
    match crate::trainer::torch::procs_per_node(release, &trainer, runtime) {
        crate::trainer::torch::Procs::Count(n) => n.to_string(),
        crate::trainer::torch::Procs::Word(word) => word,
    }
}

/// The runtime's replicated jobs besides `node` (initializers, a launcher):
/// name, pods (replicas), role. Without the runtime, the initializers the
/// spec asks for.
fn runtime_jobs(model: &Model) -> Vec<(String, u64, String)> {
    if let Some(runtime) = model.trainjob.bound.as_ref().and_then(|b| b.runtime()) {
        return runtime
            .jobs
            .iter()
            .filter(|j| j.name != trainjob::NODE)
            .map(|j| {
                let pods = u64::try_from(j.replicas.unwrap_or(1)).unwrap_or(1);
                let role = if j.depends_on.is_empty() {
                    j.name.clone()
                } else {
                    format!("{}, after {}", j.name, j.depends_on.join(", "))
                };
                let before = j.name.ends_with("-initializer");
                let role = if before {
                    format!("{role}, runs before the nodes")
                } else {
                    role
                };
                (j.name.clone(), pods, role)
            })
            .collect();
    }
    [
        (
            "dataset-initializer",
            model.trainjob.dataset_initializer.is_some(),
        ),
        (
            "model-initializer",
            model.trainjob.model_initializer.is_some(),
        ),
    ]
    .into_iter()
    .filter(|(_, present)| *present)
    .map(|(job, _)| (job.to_owned(), 1, format!("{job}, runs before the nodes")))
    .collect()
}

/// A Job: Indexed pods named after the Job under its headless Service, and
/// torchrun told the topology by trainc (`resolve::job_launch`); a `command`
/// gets the variables instead (`render::job::command_env`).
fn job_pods(model: &Model) -> String {
    let name = &model.name;
    let n = model.nodes.max();
    let master = crate::derived::job_rank0(name);
    let port = crate::resolve::defaults::JOB_RENDEZVOUS_PORT;
    let count = procs(model);
    let mut out = String::new();
    super::note(
        &mut out,
        0,
        &format!(
            "pods: {n}, made by the Job controller, one per completion index, under the headless Service {name}"
        ),
    );
    for (index, skipped) in listed(n) {
        skipped_line(&mut out, skipped, index - skipped);
        let host = format!("{name}-{index}");
        pod_lines(
            &mut out,
            &host,
            &format!(
                "completion index {index}, node rank {index}, {}",
                ranks(count, index)
            ),
            &dns(&crate::derived::job_host(name, index), model),
            &[(job::COMPLETION_INDEX_ENV, &index.to_string())],
        );
    }
    if model.container.verbatim {
        let _ = writeln!(
            out,
            "\nenvironment trainc adds to the `{}` container of a `command`",
            job::CONTAINER
        );
        for var in job::command_env(model) {
            // A value read from the pod's completion index has none written.
            let value = var
                .value
                .unwrap_or_else(|| format!("${}", job::COMPLETION_INDEX_ENV));
            let _ = writeln!(out, "  {}={value}", var.name);
        }
    }
    let how = if model.container.verbatim {
        format!(
            "the command on every pod finds pod 0 at {master}:{port} in MASTER_ADDR and MASTER_PORT (a torchrun in it, in the PET_* variables); RANK and NODE_RANK are the pod's completion index."
        )
    } else {
        format!(
            "torchrun on every pod meets pod 0 at {master}:{port} (its static rendezvous); the node rank is the pod's completion index."
        )
    };
    rendezvous(
        &mut out,
        &format!("{how} Pod names end in a random suffix; the names above are their hostnames."),
    );
    out
}

/// One pod: name and role, its DNS name, what differs from pod to pod.
fn pod_lines(out: &mut String, pod: &str, role: &str, dns: &str, own: &[(&str, &str)]) {
    let _ = writeln!(out, "  {pod}");
    super::note(out, 6, role);
    if !dns.is_empty() {
        let _ = writeln!(out, "      dns {dns}");
    }
    if !own.is_empty() {
        let vars: Vec<String> = own.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(out, "      {}", vars.join("  "));
    }
}

fn environment(out: &mut String, container: &str, vars: &[(&str, &str)]) {
    let _ = writeln!(
        out,
        "\nenvironment the operator adds to every `{container}` container"
    );
    for (name, value) in vars {
        let _ = writeln!(out, "  {name}={value}");
    }
}

fn rendezvous(out: &mut String, text: &str) {
    out.push_str("\nrendezvous\n");
    super::note(out, 2, text);
}
