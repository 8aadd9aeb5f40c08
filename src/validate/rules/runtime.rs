//! A TrainJob against the runtime it runs on ([`Bound`]): the image it runs
//! when the spec sets none, the ML policy that starts torchrun, and the jobs
//! and containers trainc's patch names, which Trainer's TrainJob webhook
//! requires the runtime to have (kubeflow/trainer v2.0.0–v2.3.0,
//! `pkg/runtime/framework/plugins/jobset/jobset.go` `Validate`: "must not
//! have targetJob / replicated job that doesn't exist in the runtime job
//! template", "must not have container / initContainer that doesn't exist in
//! the runtime job"). A runtime trainc does not know is a warning that says
//! what was not checked.

use super::Rules;
use crate::cluster::trainjob::{self, NODE};
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::defaults::TRAINER_CONTAINER;
use crate::trainer::bind::Bound;
use crate::trainer::catalogue;
use crate::trainer::runtime::{ANCESTOR_LABEL, Framework, Kind, Runtime};

/// How to give trainc the cluster's runtimes.
pub(crate) const HOW_TO_SUPPLY: &str = "give trainc the cluster's runtimes: `kubectl get clustertrainingruntimes,trainingruntimes -A -o yaml > runtimes.yaml`, then `--runtimes runtimes.yaml` or `[trainjob] runtimesFile = \"runtimes.yaml\"`";

pub(super) fn check(r: &mut Rules<'_>, bound: &Bound) {
    let Some(runtime) = bound.runtime() else {
        if r.writes_runtime() {
            cannot_write(r, bound);
        } else {
            unknown(r, bound);
        }
        return;
    };
    if runtime.trainer_job().is_none() {
        no_trainer_job(r, bound);
    } else {
        image(r, bound);
    }
    policy(r, bound, runtime);
    patch_targets(r, bound, runtime);
    entrypoint(r, bound, runtime);
    gang_waits(r, bound, runtime);
    network(r, bound, runtime);
    webhook(r, bound, runtime);
    deprecated(r, bound, runtime);
    super::nproc::keyword_on_runtime(r, runtime);
    super::torchtune::check(r, runtime);
}

/// A ClusterTrainingRuntime Trainer warns is deprecated
/// ([`crate::trainer::webhook::deprecated`]).
fn deprecated(r: &mut Rules<'_>, bound: &Bound, runtime: &Runtime) {
    if !crate::trainer::webhook::deprecated(&runtime.object, r.api_level().release()) {
        return;
    }
    r.push(
        Diagnostic::warning(
            codes::TRAINJOB_RUNTIME,
            r.at_runtime(),
            format!(
                "{} is deprecated (`{}: deprecated`) and will be removed in a future release of Kubeflow Trainer",
                bound.describe(),
                crate::trainer::webhook::SUPPORT_LABEL
            ),
        )
        .with_help(format!(
            "move to a runtime the cluster supports; the policy: {}",
            crate::trainer::webhook::DEPRECATION_POLICY
        )),
    );
}

/// A runtime Trainer's webhook rejects at the spec's release
/// ([`crate::trainer::webhook`]): one trainc writes from it would be
/// rejected; one the cluster has was made under another release, or the
/// cluster runs another (`apiLevel`).
fn webhook(r: &mut Rules<'_>, bound: &Bound, runtime: &Runtime) {
    let release = r.api_level().release();
    let rejections = crate::trainer::webhook::runtime_rejections(&runtime.object, release);
    let Some(first) = rejections.first() else {
        return;
    };
    let what = format!(
        "Trainer {}'s runtime webhook rejects {} at `{}`: {}",
        release.tag(),
        bound.describe(),
        crate::tree::field_path(&first.path),
        first.message
    );
    let d = if r.writes_runtime() {
        Diagnostic::error(
            codes::TRAINJOB_RUNTIME,
            r.key("/trainjob/writeRuntime"),
            format!("the TrainingRuntime trainc would write is rejected: {what}"),
        )
        .with_secondary(r.at_runtime(), "the base runtime")
        .with_help("write the runtime from one that passes (`torch-distributed`), or fix the base runtime in the runtimes file")
    } else {
        Diagnostic::warning(codes::TRAINJOB_RUNTIME, r.at_runtime(), what).with_help(
            "the cluster could not have admitted this runtime at this release: check `apiLevel` against the cluster's Trainer, and the runtimes file against the cluster",
        )
    };
    r.push(d);
}

/// The torch plugin points every pod at `<trainjob>-node-0-0.<trainjob>`
/// ([`trainjob::master_addr`]), which resolves only in the JobSet's
/// default network: a runtime whose JobSet names its pods' domain
/// otherwise (`network.subdomain`), or gives them none
/// (`enableDNSHostnames: false`), leaves the address unresolved
/// ([`trainjob::pod_domain`]), and torchrun waits for it until the join
/// timeout, then fails.
fn network(r: &mut Rules<'_>, bound: &Bound, runtime: &Runtime) {
    if !matches!(runtime.policy.framework, Framework::Torch { .. }) {
        return;
    }
    let name = &r.spec.name;
    let domain = trainjob::pod_domain(name, &runtime.object["spec"]);
    if domain.as_deref() == Some(name.as_str()) {
        return;
    }
    let why = match &domain {
        Some(domain) => format!("puts its pods under the domain `{domain}` (`network.subdomain`)"),
        None => "gives its pods no DNS names (`network.enableDNSHostnames: false`)".to_owned(),
    };
    let message = format!(
        "the pods of this TrainJob would never find each other: Trainer's torch plugin points torchrun at `{}`, but {} {why}",
        trainjob::master_addr(name),
        bound.describe(),
    );
    // A command run as written may find its peers its own way.
    let d = if r.spec.runs_as_written() {
        Diagnostic::warning(
            codes::TRAINJOB_RUNTIME,
            r.at_runtime(),
            format!("{message}, unless the command finds its peers another way"),
        )
    } else {
        Diagnostic::error(codes::TRAINJOB_RUNTIME, r.at_runtime(), message)
    };
    r.push(d.with_help("use a runtime whose JobSet keeps its default network (no `network.subdomain`, DNS hostnames on), such as `torch-distributed`"));
}

/// A PodGroup on a runtime whose jobs wait for each other never fills: its
/// `minMember` counts the pods of every job
/// ([`Runtime::pod_group_sum`]), but a job with `dependsOn` is created
/// only once the jobs it names are ready or complete (kubernetes-sigs/jobset
/// v0.8–v0.12, `pkg/controllers/depends_on.go`), and the scheduler holds
/// every pod of the group until all `minMember` exist (scheduler-plugins
/// coscheduling `PreFilter`; Volcano's gang plugin): the first jobs' pods
/// wait for pods that only their completion would create.
fn gang_waits(r: &mut Rules<'_>, bound: &Bound, runtime: &Runtime) {
    let waiting: Vec<&crate::trainer::runtime::Job> = runtime
        .jobs
        .iter()
        .filter(|j| !j.depends_on.is_empty())
        .collect();
    let Some(first) = waiting.first() else { return };
    let s = r.spec.scheduling.as_ref();
    let gang = s.is_some_and(|s| s.gang == Some(true));
    let volcano_queue = s.is_some_and(|s| s.volcano_queue.is_some());
    // trainc writes a PodGroup only with a scheduler that honours it
    // (otherwise `target.rs` refuses the field).
    let written = r.writes_runtime()
        && crate::trainer::written_pod_group(
            r.api_level().release(),
            gang,
            volcano_queue,
            s.and_then(|s| s.scheduler_name.as_deref()),
        )
        .is_some();
    let asked = match (written, gang) {
        (false, _) => None,
        (true, true) => Some("/scheduling/gang"),
        (true, false) => Some("/scheduling/volcanoQueue"),
    };
    if asked.is_none() && !runtime.has_pod_group_policy() {
        return;
    }
    let (total, terms) = runtime.pod_group_sum(r.max_replicas());
    let message = format!(
        "gang scheduling would never start this TrainJob: the PodGroup of {} counts the pods of all its jobs ({terms} = {total}), but `{}` is created only after `{}`, so {total} pods never exist together and the scheduler holds them all forever",
        bound.describe(),
        first.name,
        first.depends_on.join("` and `"),
    );
    let d = match asked {
        Some(pointer) => Diagnostic::error(codes::SCHEDULING_GANG_WAITS, r.key(pointer), message)
            .with_secondary(r.at_runtime(), "the base runtime")
            .with_help(format!(
                "remove `{}`: with `scheduling.queue`, Kueue admits all the TrainJob's pods at once without a PodGroup; or write the runtime from one whose jobs do not wait for each other (`torch-distributed`)",
                crate::tree::field_path(pointer)
            )),
        None => Diagnostic::warning(codes::SCHEDULING_GANG_WAITS, r.at_runtime(), message)
            .with_help("the runtime's `podGroupPolicy` and its `dependsOn` cannot work together: ask the cluster's admins to drop one, or use a runtime without them"),
    };
    r.push(d);
}

/// A TrainJob with no `command` runs its `node` container's: the image's
/// entrypoint runs only where the runtime gives that container none
/// (kubeflow/trainer v2.0.0–v2.3.0,
/// `pkg/runtime/framework/plugins/jobset/builder.go` `Trainer` sets the
/// container's command only from the TrainJob's).
fn entrypoint(r: &mut Rules<'_>, bound: &Bound, runtime: &Runtime) {
    // A runtime trainc writes leaves out the base's command
    // (`render::trainingruntime`).
    if !r.spec.runs_image_entrypoint() || r.writes_runtime() {
        return;
    }
    let Some(command) = runtime
        .trainer_container()
        .map(|c| &c.command)
        .filter(|c| !c.is_empty())
    else {
        return;
    };
    r.push(
        Diagnostic::error(
            codes::TRAINJOB_RUNTIME,
            r.value("/imageEntrypoint"),
            format!(
                "the `{NODE}` container of {} runs `{}`, not the image's entrypoint: a TrainJob without a command runs its runtime's",
                bound.describe(),
                match command.as_slice() {
                    [a, b, _, ..] => format!("{a} {b} …"),
                    words => words.join(" "),
                }
            ),
        )
        .with_secondary(r.at_runtime(), "the runtime")
        .with_help(
            "give the entrypoint as `command`, or set `[trainjob] writeRuntime = true`: trainc writes the runtime without that command, so the image's entrypoint runs",
        ),
    );
}

fn unknown(r: &mut Rules<'_>, bound: &Bound) {
    if bound.with_file {
        return not_in_file(r, bound);
    }
    let release = r.api_level().release();
    let file = if bound.with_file {
        "it is not in the runtimes file"
    } else {
        "no runtimes file was given"
    };
    let why = match bound.kind {
        Kind::Cluster => format!(
            "{file}, and Kubeflow Trainer {} ships no ClusterTrainingRuntime of that name",
            release.tag()
        ),
        Kind::Namespaced => format!("{file}, and a TrainingRuntime is the cluster's own"),
    };
    let mut what = if r.spec.runs_image_entrypoint() {
        "its image, jobs, containers, initializers, ML policy and whether its trainer has a command of its own (which would run instead of the image's entrypoint)"
    } else {
        "its image, jobs, containers, initializers and ML policy"
    }
    .to_owned();
    if !r.tree_has("/image") {
        what.push_str(" (the spec sets no `image`: the pods run the runtime's)");
    }
    let mut help = HOW_TO_SUPPLY.to_owned();
    if let Some(near) = &bound.near {
        help = format!("{near} Otherwise {help}");
    } else if bound.kind == Kind::Cluster {
        let names = catalogue::shipped(release).iter().map(|r| r.name.as_str());
        if let Some(near) = crate::diagnostic::suggest(&bound.name, names) {
            help = format!("did you mean `{near}`? Otherwise {help}");
        }
    }
    r.push(
        Diagnostic::warning(
            codes::TRAINJOB_RUNTIME_UNKNOWN,
            r.at_runtime(),
            format!(
                "trainc does not know the {} `{}`: {why}; {what} are not checked",
                bound.kind.as_str(),
                bound.name
            ),
        )
        .with_help(help),
    );
}

/// A runtimes file was given (the cluster's runtimes, as kubectl lists them)
/// and holds no runtime of this name, nor does Trainer ship one: the name is
/// wrong, or the file is not the cluster's. An error, so that CI stops a typo
/// that a warning would let through.
fn not_in_file(r: &mut Rules<'_>, bound: &Bound) {
    let release = r.api_level().release();
    let place = match (bound.kind, &r.spec.namespace) {
        (Kind::Cluster, _) => format!(
            ", and Kubeflow Trainer {} ships none of that name",
            release.tag()
        ),
        (Kind::Namespaced, Some(namespace)) => {
            format!(" in the TrainJob's namespace `{namespace}`")
        }
        (Kind::Namespaced, None) => String::new(),
    };
    let help = match &bound.near {
        Some(near) => format!(
            "{near} Otherwise, if the cluster has it, the file is not the cluster's: {HOW_TO_SUPPLY}"
        ),
        None => format!(
            "name a runtime the file holds; if the cluster has this one, the file is not the cluster's: {HOW_TO_SUPPLY}"
        ),
    };
    r.push(
        Diagnostic::error(
            codes::TRAINJOB_RUNTIME,
            r.at_runtime(),
            format!(
                "the {} `{}` is not in the runtimes file{place}",
                bound.kind.as_str(),
                bound.name
            ),
        )
        .with_help(help),
    );
}

/// trainc writes its TrainingRuntime from the one `runtime` names: it must
/// know that one.
fn cannot_write(r: &mut Rules<'_>, bound: &Bound) {
    r.push(
        Diagnostic::error(
            codes::TRAINJOB_RUNTIME,
            r.key("/trainjob/writeRuntime"),
            format!(
                "trainc writes the TrainingRuntime from the {} `{}`, which it does not know",
                bound.kind.as_str(),
                bound.name
            ),
        )
        .with_secondary(r.at_runtime(), "the base runtime")
        .with_help(format!(
            "name a runtime Kubeflow ships (`torch-distributed`), or {HOW_TO_SUPPLY}"
        )),
    );
}

/// Trainer puts the TrainJob's `trainer` (image, command, args, resources)
/// on the `node` container of the job labelled as the trainer's, and the
/// torch plugin its `PET_*` variables there (kubeflow/trainer
/// v2.0.0–v2.3.0, `pkg/runtime/framework/plugins/jobset/builder.go`
/// `Trainer`, `plugins/torch/torch.go`): in a runtime without one, none of
/// what the spec says runs.
fn no_trainer_job(r: &mut Rules<'_>, bound: &Bound) {
    r.push(
        Diagnostic::error(
            codes::TRAINJOB_RUNTIME,
            r.at_runtime(),
            format!(
                "no job of {} is labelled as the trainer's (`{ANCESTOR_LABEL}: trainer`): Trainer puts the TrainJob's image, command, args, resources and environment on none of its pods, so what the spec says to run would not run",
                bound.describe()
            ),
        )
        .with_help("label the runtime's `node` job template with `trainer.kubeflow.org/trainjob-ancestor-step: trainer`, as every runtime Kubeflow ships does, or use one of those"),
    );
}

/// Without `image`, the trainer runs the runtime's `node` image; a runtime
/// without one leaves a container with no image, which Kubernetes rejects.
fn image(r: &mut Rules<'_>, bound: &Bound) {
    // An image written but set aside as invalid is reported where it is.
    if r.tree_has("/image") || bound.image().is_some() {
        return;
    }
    r.push(
        Diagnostic::error(
            codes::SCHEMA_MISSING_KEY,
            r.start(),
            format!(
                "the spec sets no `image`, and {} gives its `{NODE}` container none",
                bound.describe()
            ),
        )
        .with_secondary(r.at_runtime(), "the runtime")
        .with_help("add `image`: the container image that runs the training code, e.g. `ghcr.io/acme/train:1.4`"),
    );
}

/// trainc's TrainJob runs torchrun, which forms its world from the `PET_*`
/// variables only the torch plugin sets (kubeflow/trainer v2.0.0–v2.3.0,
/// `pkg/runtime/framework/plugins/torch/torch.go`): on another ML policy each
/// node would train alone. A command run verbatim starts its own processes.
fn policy(r: &mut Rules<'_>, bound: &Bound, runtime: &Runtime) {
    let verbatim = r.spec.runs_as_written();
    let policy = match &runtime.policy.framework {
        Framework::Torch { .. } => return,
        _ if verbatim => return,
        Framework::Mpi => "`mpi` (it runs the command under mpirun from a launcher)".to_owned(),
        Framework::Other(name) => format!("`{name}`"),
        Framework::None => "none".to_owned(),
    };
    r.push(
        Diagnostic::error(
            codes::TRAINJOB_RUNTIME,
            r.at_runtime(),
            format!(
                "{} has the ML policy {policy}, not `torch`: Trainer sets none of the `PET_*` variables torchrun forms its world from",
                bound.describe()
            ),
        )
        .with_help("use a torch runtime such as `torch-distributed`, or run your own launcher with `command`"),
    );
}

/// trainc's patch targets the `node` job and its `node` container (the
/// trainer's, `[podTemplate]`'s `trainer`), and the other containers
/// `[podTemplate]` names; the runtime must have each.
fn patch_targets(r: &mut Rules<'_>, bound: &Bound, runtime: &Runtime) {
    let Some(job) = runtime.job(NODE) else {
        r.push(
            Diagnostic::error(
                codes::TRAINJOB_RUNTIME,
                r.at_runtime(),
                format!(
                    "{} has no replicated job `{NODE}`; trainc's TrainJob patches the trainer's pods there, and Trainer rejects a patch of a job the runtime does not have",
                    bound.describe()
                ),
            )
            .with_help("use a runtime whose trainer job is `node`, as every torch runtime Kubeflow ships"),
        );
        return;
    };
    if job.container(NODE).is_none() {
        r.push(
            Diagnostic::error(
                codes::TRAINJOB_RUNTIME,
                r.at_runtime(),
                format!(
                    "the `{NODE}` job of {} has no `{NODE}` container, which Trainer runs the trainer in",
                    bound.describe()
                ),
            )
            .with_help("use a runtime whose trainer container is `node`, as every torch runtime Kubeflow ships"),
        );
    }
    // A runtime trainc writes gets the containers `[podTemplate]` adds.
    let Some(spec) = r.spec.pod_template.as_ref().and_then(|t| t.spec.as_ref()) else {
        return;
    };
    if r.writes_runtime() {
        return;
    }
    let mut missing = Vec::new();
    for list in ["containers", "initContainers"] {
        let items = spec.get(list).and_then(|v| v.as_array());
        for (i, item) in items.into_iter().flatten().enumerate() {
            let Some(name) = item.get("name").and_then(|n| n.as_str()) else {
                continue;
            };
            // One with an `image` is a new container, reported as such.
            if name == TRAINER_CONTAINER
                || job.container(name).is_some()
                || item.get("image").is_some()
            {
                continue;
            }
            missing.push((
                format!("/podTemplate/spec/{list}/{i}/name"),
                name.to_owned(),
            ));
        }
    }
    let have: Vec<String> = job
        .containers
        .iter()
        .chain(&job.init_containers)
        .filter(|c| c.name != NODE)
        .map(|c| format!("`{}`", c.name))
        .collect();
    for (pointer, name) in missing {
        let others = if have.is_empty() {
            "none besides the trainer's".to_owned()
        } else {
            have.join(", ")
        };
        r.push(
            Diagnostic::error(
                codes::TRAINJOB_RUNTIME,
                r.value(&pointer),
                format!(
                    "the `{NODE}` job of {} has no container `{name}`; a TrainJob's patch changes the runtime's containers ({others}) and cannot give a new one an image: Trainer adds `{name}` without one, and Kubernetes refuses the Job",
                    bound.describe()
                ),
            )
            .with_help("a new sidecar or init container needs a runtime that has it: your own TrainingRuntime (`runtimeKind = \"TrainingRuntime\"`, given in `[trainjob] runtimesFile`), or `target = \"pytorchjob\"`"),
        );
    }
}
