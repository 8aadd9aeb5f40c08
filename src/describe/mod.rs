//! `trainc describe`: what a spec means on the cluster, for a person, at 80
//! columns. A back end like `render`: it reads the resolved [`Model`] and
//! writes text; `--pods` adds every pod the operator will create and the
//! distributed environment each will see ([`pods`]).

use std::fmt::Write as _;

use crate::cluster::{job, jobset, pytorchjob, trainjob};
use crate::diagnostic::Diagnostic;
use crate::model::{EnvValue, Model, Nodes, VolumeSource};
use crate::source::Sources;
use crate::spec::Target;
use crate::spec::{NProc, Starter};

mod commands;
mod failure;
mod pods;
mod quantities;
mod scheduling;

pub use pods::PodList;
pub(crate) use pods::list as pod_list;
use quantities::Pods;

/// The image the trainer runs: the spec's, else its runtime's.
fn image(model: &Model) -> String {
    if let Some(image) = &model.container.image {
        return image.clone();
    }
    match &model.trainjob.bound {
        Some(bound) => match bound.image() {
            Some(image) => format!("{image} (from {})", bound.describe()),
            None => format!("the image of {}", bound.describe()),
        },
        None => "the runtime's".to_owned(),
    }
}

/// Width of the text; longer values wrap under their label.
const WIDTH: usize = 80;
/// Column where values start.
const LABEL: usize = 14;

/// The description of `model`; `warnings` are listed with their place, and
/// after them those the spec `allowed` (`allowWarnings`), marked.
/// `build` is the command that builds the objects, for the commands.
pub(crate) fn describe(
    model: &Model,
    warnings: &[Diagnostic],
    allowed: &[Diagnostic],
    sources: &Sources,
    build: &str,
    with_pods: bool,
) -> String {
    let mut out = String::new();
    let (headline, operator) = headline(model);
    let _ = writeln!(out, "{headline}");
    field(&mut out, "operator", &operator);
    field(&mut out, "nodes", &nodes(model));
    // A TrainJob that sets no resources runs with its runtime's `node`
    // container's (kubeflow/trainer v2.0.0–v2.3.0, the jobset plugin's
    // `Trainer` sets them only from `resourcesPerNode`).
    let runtime_maps = runtime_resources(model);
    let container = match &runtime_maps {
        Some((requests, limits)) => crate::model::Container {
            requests: requests.clone(),
            limits: limits.clone(),
            ..model.container.clone()
        },
        None => model.container.clone(),
    };
    let pods = |count| Pods::of(&container, model.shm.as_deref(), count);
    let all = if let Some(master) = &model.master {
        let master = Pods::of(&master.container, master.shm.as_deref(), 1);
        field(&mut out, "the Master", &master.text());
        field(&mut out, "per worker", &pods(1).text());
        vec![pods(model.nodes.max() - 1), master]
    } else {
        let whose = if runtime_maps.is_some() {
            " (the runtime's `node` container's)"
        } else {
            ""
        };
        field(&mut out, "per node", &format!("{}{whose}", pods(1).text()));
        vec![pods(model.nodes.max())]
    };
    if model.nodes.max() > 1 {
        let label = match model.nodes {
            Nodes::Fixed(_) => "in total",
            Nodes::Elastic { .. } => "at most",
        };
        field(&mut out, label, &quantities::total(&all));
    }
    field(&mut out, "image", &image(model));
    let master = model.master.as_ref();
    if let Some(own) = master.and_then(|m| m.container.image.as_ref())
        && model.container.image.as_ref() != Some(own)
    {
        field(&mut out, "", &format!("the Master: {own}"));
    }
    field(&mut out, "runs", &runs(&model.container));
    if let Some(own) = master.filter(|m| m.container.command != model.container.command) {
        field(
            &mut out,
            "",
            &format!("the Master: {}", runs(&own.container)),
        );
    }
    if let Some(dir) = &model.container.working_dir {
        field(&mut out, "in", dir);
    }
    for (i, line) in volumes(model).iter().enumerate() {
        field(&mut out, if i == 0 { "volumes" } else { "" }, line);
    }
    for (i, line) in env(model).iter().enumerate() {
        field(&mut out, if i == 0 { "env" } else { "" }, line);
    }
    for (i, line) in scheduling::scheduling(model).iter().enumerate() {
        field(&mut out, if i == 0 { "scheduling" } else { "" }, line);
    }
    field(&mut out, "on failure", &failure::failure(model));
    if warnings.is_empty() && allowed.is_empty() {
        field(&mut out, "warnings", "none");
    }
    // The acknowledged ones too (`allowWarnings`), marked: still true of the job.
    let listed = warnings
        .iter()
        .map(|w| (w, ""))
        .chain(allowed.iter().map(|w| (w, ", allowed by `allowWarnings`")));
    for (i, (warning, note)) in listed.enumerate() {
        let (file, line, col) = warning.location(sources);
        field(
            &mut out,
            if i == 0 { "warnings" } else { "" },
            &format!(
                "{file}:{line}:{col}: {} [{}{note}]",
                warning.message, warning.code
            ),
        );
    }
    if with_pods {
        out.push('\n');
        out.push_str(&pods::describe(model));
    }
    out.push('\n');
    out.push_str(&commands::commands(model, build));
    out
}

/// What the training container runs, as a shell would read it.
fn runs(container: &crate::model::Container) -> String {
    let args = crate::syntax::shell::join(container.args.iter().map(String::as_str));
    match (container.command.is_empty(), args.is_empty()) {
        (true, true) => "the image's entrypoint".to_owned(),
        (true, false) => format!("the image's entrypoint, with the args {args}"),
        (false, _) => {
            let words = container.command.iter().chain(&container.args);
            crate::syntax::shell::join(words.map(String::as_str))
        }
    }
}

/// `name: Kind in namespace`, and the operator that runs it.
fn headline(model: &Model) -> (String, String) {
    let (kind, operator) = match model.target {
        Target::Pytorchjob => (
            pytorchjob::KIND,
            format!(
                "Kubeflow Training Operator v1 ({})",
                pytorchjob::API_VERSION
            ),
        ),
        Target::Trainjob => (
            trainjob::KIND,
            format!(
                "Kubeflow Trainer {} ({}), runtime {} {}{}",
                model.trainjob.api_level.as_str(),
                trainjob::API_VERSION,
                model.trainjob.runtime_kind,
                model.trainjob.runtime,
                match &model.trainjob.bound {
                    Some(base) if model.trainjob.write_runtime =>
                        format!(", written by trainc from {}", base.describe()),
                    _ => String::new(),
                }
            ),
        ),
        Target::Jobset => (
            jobset::KIND,
            match &model.master {
                None => format!(
                    "JobSet ({}): one Indexed Job {}, pods named by JobSet's headless Service {}",
                    jobset::API_VERSION,
                    jobset::job_name(&model.name, jobset::NODE, 0),
                    model.name
                ),
                Some(_) => format!(
                    "JobSet ({}): the Master's Job {} and a Job of one pod for each Worker, {} to {}, pods named by JobSet's headless Service {}",
                    jobset::API_VERSION,
                    jobset::job_name(&model.name, jobset::MASTER, 0),
                    jobset::job_name(&model.name, jobset::WORKER, 0),
                    jobset::job_name(
                        &model.name,
                        jobset::WORKER,
                        u64::from(model.nodes.max().saturating_sub(2))
                    ),
                    model.name
                ),
            },
        ),
        Target::Job => (
            job::KIND,
            format!(
                "none: Kubernetes' Job controller ({}), pods named by the headless Service {}",
                job::API_VERSION,
                model.name
            ),
        ),
    };
    let namespace = model.namespace.as_deref().map_or_else(
        || " in the current namespace".to_owned(),
        |ns| format!(" in namespace {ns}"),
    );
    (format!("{}: {kind}{namespace}", model.name), operator)
}

/// `4 nodes × 8 processes = world size 32`, with what decides `auto`.
fn nodes(model: &Model) -> String {
    let count = match model.nodes {
        Nodes::Fixed(1) => "1 node".to_owned(),
        Nodes::Fixed(n) => format!("{n} nodes"),
        Nodes::Elastic { min, max } => match model.elastic.as_ref().map(|e| e.start) {
            Some(start) if start != max => {
                format!("{min} to {max} nodes (elastic), starting with {start}")
            }
            _ => format!("{min} to {max} nodes (elastic)"),
        },
    };
    // A TrainJob's count is what Trainer resolves (`describe --pods`).
    if model.target == Target::Trainjob
        && let Ok(n) = pods::trainjob_procs(model).parse::<u64>()
    {
        let procs = if n == 1 {
            "1 process".to_owned()
        } else {
            format!("{n} processes")
        };
        let world = u64::from(model.nodes.max()) * n;
        return format!("{count} × {procs} = world size {world}");
    }
    // A command that starts no launcher runs one process a pod, whatever
    // `auto` or `cpu` would make of it: the world its processes are told.
    if model.container.verbatim
        && !matches!(model.nproc_per_node, NProc::Count(_))
        && Starter::of_command(&model.container.command) == Starter::Plain
        && let Some(world) = pods::told_world_size(model)
    {
        let program = model.container.command.first().map_or("", String::as_str);
        return format!(
            "{count} × 1 process (`{program}` starts no launcher; `{}` reaches it only as `PET_NPROC_PER_NODE`) = world size {world}, as `WORLD_SIZE` says",
            model.nproc_per_node.text()
        );
    }
    let procs = |nproc| match nproc {
        NProc::Count(1) => "1 process".to_owned(),
        NProc::Count(n) => format!("{n} processes"),
        NProc::Auto => "auto processes (one per GPU, or per CPU core without GPUs)".to_owned(),
        NProc::Cpu => "one process per CPU core".to_owned(),
    };
    let (count, procs) = match (&model.master, model.nodes) {
        (Some(master), Nodes::Fixed(n)) if master.nproc != model.nproc_per_node => {
            let workers = if n == 2 { "Worker" } else { "Workers" };
            (
                format!("{count}: the Master"),
                format!(
                    "{}, {} {workers} × {}",
                    procs(master.nproc),
                    n - 1,
                    procs(model.nproc_per_node)
                ),
            )
        }
        _ => (count, procs(model.nproc_per_node)),
    };
    let world = match (model.world_size, model.nodes, model.nproc_per_node) {
        (Some(size), _, _) => format!(" = world size {size}"),
        (None, Nodes::Elastic { min, max }, NProc::Count(n)) => {
            let (min, max, n) = (u64::from(min), u64::from(max), u64::from(n));
            format!(" = world size {} to {}", min * n, max * n)
        }
        _ => " (world size decided by torchrun at start)".to_owned(),
    };
    format!("{count} × {procs}{world}")
}

fn volumes(model: &Model) -> Vec<String> {
    let mut lines: Vec<String> = model
        .volumes
        .iter()
        .map(|v| {
            // The kubelet mounts a ConfigMap or Secret read-only whatever
            // the mount says (kubernetes 1.10 and later,
            // `ReadOnlyAPIDataVolumes`).
            let api_data = matches!(
                v.source,
                VolumeSource::ConfigMap(_) | VolumeSource::Secret(_)
            );
            let access = if v.read_only || api_data {
                "read-only"
            } else {
                "read-write"
            };
            let source = match &v.source {
                VolumeSource::Claim(name) => match model.claims.iter().find(|c| &c.name == name) {
                    Some(claim) => format!(
                        "new claim {name} ({}, {}, {}): created by trainc",
                        claim.size,
                        claim.access_modes.join(", "),
                        claim
                            .storage_class
                            .as_deref()
                            .map_or_else(|| "default class".to_owned(), |c| format!("class {c}"))
                    ),
                    None => format!("claim {name}: must exist"),
                },
                VolumeSource::EmptyDir {
                    size_limit: Some(limit),
                } => {
                    format!("emptyDir up to {limit}, per pod")
                }
                VolumeSource::EmptyDir { size_limit: None } => "emptyDir, per pod".to_owned(),
                VolumeSource::ConfigMap(name) => format!("ConfigMap {name}: must exist"),
                VolumeSource::Secret(name) => format!("Secret {name}: must exist"),
            };
            let sub = v
                .sub_path
                .as_deref()
                .map_or_else(String::new, |p| format!(" (subPath {p})"));
            format!("{} {}{sub}, {access}: {source}", v.mount_path, v.name)
        })
        .collect();
    if let Some(code) = &model.code {
        lines.push(format!(
            "{} {}, read-only: ConfigMap {} of {} file{}: created by trainc",
            crate::code::Code::MOUNT,
            crate::code::Code::VOLUME,
            code.config_map,
            code.files.len(),
            if code.files.len() == 1 { "" } else { "s" }
        ));
    }
    if lines.is_empty() {
        lines.push("none".to_owned());
    }
    lines
}

/// Every variable the spec sets; values from Secrets are named, never shown.
fn env(model: &Model) -> Vec<String> {
    let mut lines: Vec<String> = model
        .container
        .env
        .iter()
        .map(|var| match &var.value {
            EnvValue::Literal(value) if crate::syntax::names::looks_secret(&var.name) => {
                format!(
                    "{}=… ({} characters written in the spec, not shown; keep it in a Secret)",
                    var.name,
                    value.chars().count()
                )
            }
            EnvValue::Literal(value) => format!("{}={value}", var.name),
            EnvValue::Key(from) if from.secret => format!(
                "{} from Secret {}, key {} (value not shown)",
                var.name, from.name, from.key
            ),
            EnvValue::Key(from) => {
                format!(
                    "{} from ConfigMap {}, key {}",
                    var.name, from.name, from.key
                )
            }
            EnvValue::Field(path) => format!("{} from the pod's {path}", var.name),
        })
        .collect();
    lines.extend(model.container.env_from.iter().map(|from| {
        format!(
            "every key of {} {}{}",
            if from.secret { "Secret" } else { "ConfigMap" },
            from.name,
            from.prefix
                .as_deref()
                .map_or_else(String::new, |p| format!(", prefixed {p}"))
        )
    }));
    if lines.is_empty() {
        lines.push("none set by the spec (see --pods for what the operator adds)".to_owned());
    }
    lines
}

/// The requests and limits of the runtime's `node` container, for a
/// TrainJob that sets none of its own, when trainc knows the runtime and
/// the container has some.
fn runtime_resources(
    model: &Model,
) -> Option<(
    std::collections::BTreeMap<String, String>,
    std::collections::BTreeMap<String, String>,
)> {
    let own = &model.container;
    if model.target != Target::Trainjob || !own.requests.is_empty() || !own.limits.is_empty() {
        return None;
    }
    let runtime = model.trainjob.bound.as_ref()?.runtime()?;
    let resources = &runtime.trainer_container()?.resources;
    let map = |list: &serde_json::Value| -> std::collections::BTreeMap<String, String> {
        list.as_object()
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| {
                let text = match v {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Number(n) => n.to_string(),
                    _ => return None,
                };
                Some((k.clone(), text))
            })
            .collect()
    };
    let (requests, limits) = (map(&resources["requests"]), map(&resources["limits"]));
    // Kubernetes gives a container with limits alone requests equal to them.
    let requests = if requests.is_empty() {
        limits.clone()
    } else {
        requests
    };
    (!requests.is_empty() || !limits.is_empty()).then_some((requests, limits))
}

/// `text` wrapped at spaces (never inside a word) to `width` columns.
fn wrapped(text: &str, width: usize) -> Vec<std::borrow::Cow<'_, str>> {
    let options = textwrap::Options::new(width)
        .break_words(false)
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::wrap(text, options)
}

/// `text` wrapped to the width, every line indented by `indent`.
fn note(out: &mut String, indent: usize, text: &str) {
    for line in wrapped(text, WIDTH - indent) {
        let _ = writeln!(out, "{:indent$}{line}", "");
    }
}

/// `label  value`, the value wrapped at spaces under its column.
fn field(out: &mut String, label: &str, value: &str) {
    for (i, line) in wrapped(value, WIDTH - LABEL).iter().enumerate() {
        let label = if i == 0 { label } else { "" };
        let _ = writeln!(out, "  {label:<width$}{line}", width = LABEL - 2);
    }
}
