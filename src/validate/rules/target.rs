//! Rules that depend on the target: what it cannot express, and how long the
//! names it derives from the job name become.

use super::Rules;
use crate::derived;
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::{ApiLevel, NProcKeyword, NProcPerNode, Target};
use crate::syntax::names::MAX_LABEL;
use crate::trainer::PodGroup;

pub(super) fn check(r: &mut Rules<'_>) {
    name_length(r);
    // A warning, not an error: one spec may be built for either target.
    if r.spec.trainjob.is_some() && r.target() != Target::Trainjob {
        r.push(
            Diagnostic::warning(
                codes::TRAINJOB_WRONG_TARGET,
                r.key("/trainjob"),
                format!(
                    "`[trainjob]` settings have no effect on target `{}`",
                    r.target().as_str()
                ),
            )
            .with_help("set `target = \"trainjob\"` if that is what this spec is for"),
        );
    }
    if r.target() == Target::Trainjob {
        trainjob_unsupported(r);
        trainjob_gang(r);
        trainjob_api_level(r);
        runtime(r);
    }
    if matches!(r.target(), Target::Job | Target::Jobset) {
        super::indexed::unsupported(r);
    }
    super::indexed::jobset_only(r);
}

/// `runtimeRef.name` names a (Cluster)TrainingRuntime object, so it must be a
/// DNS-1123 subdomain, as every object name is.
fn runtime(r: &mut Rules<'_>) {
    let Some(runtime) = r.spec.trainjob.as_ref().and_then(|t| t.runtime.as_ref()) else {
        return;
    };
    if let Err(bad) = crate::syntax::names::Syntax::Dns1123Subdomain.check(runtime) {
        let kind = r
            .spec
            .trainjob
            .as_ref()
            .and_then(|t| t.runtime_kind)
            .unwrap_or(crate::spec::defaults::TRAINJOB_RUNTIME_KIND);
        let help = match bad.better {
            Some(better) => format!("runtime names are lowercase, such as `{better}`"),
            None => "runtime names are lowercase letters, digits, `-` and `.`, such as `torch-distributed`".to_owned(),
        };
        r.push(
            Diagnostic::error(
                codes::TRAINJOB_RUNTIME,
                r.value("/trainjob/runtime"),
                format!(
                    "`trainjob.runtime` `{runtime}` cannot name a {}: {}",
                    kind.as_str(),
                    bad.why
                ),
            )
            .with_help(help),
        );
    }
}

/// What one Trainer API has and the other lacks.
fn trainjob_api_level(r: &mut Rules<'_>) {
    let spec = r.spec;
    let level = r.api_level();
    let unsupported = |r: &Rules<'_>, pointer: &str, what: &str, help: &str| {
        Diagnostic::error(
            codes::TARGET_UNSUPPORTED,
            r.key(pointer),
            format!(
                "target `trainjob` on Trainer API {} cannot express {what}",
                level.as_str()
            ),
        )
        .with_help(help.to_owned())
    };
    let scheduling = spec.scheduling.as_ref();
    // (applies, pointer, what, help): what each API level's TrainJob lacks
    // (kubeflow/trainer v2.0.0, v2.1.0, v2.3.0,
    // manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml).
    let keyword = match &spec.n_proc_per_node {
        Some(NProcPerNode::Keyword(NProcKeyword::Auto)) => Some("auto"),
        Some(NProcPerNode::Keyword(NProcKeyword::Cpu)) => Some("cpu"),
        _ => None,
    };
    let nproc = format!("`nProcPerNode = \"{}\"`", keyword.unwrap_or(""));
    let lacks: [(bool, &str, &str, &str); 5] = [
        (
            !level.has_runtime_patches() && spec.security_context.is_some() && !r.writes_runtime(),
            "/securityContext",
            "`[securityContext]`",
            "Trainer v2.2's runtimePatches carry security contexts; use `apiLevel = \"v2.2\"` or later, or `[trainjob] writeRuntime = true` (trainc writes a TrainingRuntime with them)",
        ),
        (
            level.has_runtime_patches() && keyword.is_some(),
            "/nProcPerNode",
            &nproc,
            "Trainer v2.2 and later take a number of processes per node: write the number, or `\"gpu\"` with `resources.gpus`",
        ),
        (
            !level.has_runtime_patches()
                && spec
                    .policy
                    .as_ref()
                    .is_some_and(|p| p.active_deadline.is_some()),
            "/policy/activeDeadline",
            "`policy.activeDeadline`",
            "TrainJob has `activeDeadlineSeconds` from Trainer v2.2; remove it, or use `apiLevel = \"v2.2\"` or later",
        ),
        (
            level == ApiLevel::V2_0
                && !r.writes_runtime()
                && scheduling.is_some_and(|s| s.spread_across_nodes == Some(true)),
            "/scheduling/spreadAcrossNodes",
            "`scheduling.spreadAcrossNodes`",
            "Trainer v2.0's podSpecOverrides have no affinity; set it in the runtime, or use `apiLevel = \"v2.1\"` or later",
        ),
        (
            level == ApiLevel::V2_0
                && !r.writes_runtime()
                && scheduling
                    .is_some_and(|s| s.image_pull_secrets.as_ref().is_some_and(|p| !p.is_empty())),
            "/scheduling/imagePullSecrets",
            "`scheduling.imagePullSecrets`",
            "Trainer v2.0's podSpecOverrides have no imagePullSecrets; set them in the runtime or on the ServiceAccount, or use `apiLevel = \"v2.1\"` or later",
        ),
    ];
    for (applies, pointer, what, help) in lacks {
        if applies {
            let d = unsupported(r, pointer, what, help);
            r.push(d);
        }
    }
    // v2.0 has no pod metadata in its overrides: labels and annotations reach
    // the TrainJob and, through `spec.labels`/`spec.annotations`, its JobSet,
    // but no pod (v2.0.0 pkg/runtime/framework/plugins/jobset/jobset.go).
    if level == ApiLevel::V2_0 && !r.writes_runtime() {
        for key in ["labels", "annotations"] {
            let set = match key {
                "labels" => spec.labels.as_ref().is_some_and(|m| !m.is_empty()),
                _ => spec.annotations.as_ref().is_some_and(|m| !m.is_empty()),
            };
            if set {
                r.push(
                    Diagnostic::warning(
                        codes::TRAINJOB_POD_METADATA,
                        r.key(&format!("/{key}")),
                        format!("on Trainer API v2.0, `[{key}]` reach the TrainJob and its JobSet but not the pods"),
                    )
                    .with_help("set pod metadata in the runtime, or use `apiLevel = \"v2.1\"` or later"),
                );
            }
        }
    }
}

/// Every name the target and trainc derive from the job name must fit its
/// limit (see [`crate::derived`]); the one over by the most is reported.
fn name_length(r: &mut Rules<'_>) {
    let spec = r.spec;
    if crate::syntax::names::dns1035_label(&spec.name).is_err() && spec.name.len() <= MAX_LABEL {
        return; // the name is invalid for another reason, reported already
    }
    let shape = derived::Shape {
        job: &spec.name,
        target: r.target(),
        max_nodes: r.max_replicas(),
        elastic: r.is_elastic(),
        master: spec.master_role().is_some() && r.max_replicas() > 1,
        ports: spec.ports.as_ref().is_some_and(|p| !p.is_empty()),
    };
    let claims = spec
        .volumes
        .iter()
        .flatten()
        .filter(|(_, v)| v.size.is_some())
        .map(|(name, _)| name.as_str());
    let Some(longest) = derived::too_long(shape, claims) else {
        return;
    };
    let room = spec.name.len().saturating_sub(longest.excess());
    r.push(
        Diagnostic::error(
            codes::NAME_TOO_LONG,
            r.value("/name"),
            format!(
                "`name` is too long for target `{}`: {} would name {} `{}`{}, {} characters; the limit is {}",
                r.target().as_str(),
                longest.by,
                longest.what,
                longest.name,
                if longest.has_random_suffix() {
                    " (`xxxxx`: 5 random characters)"
                } else {
                    ""
                },
                longest.name.len(),
                longest.limit,
            ),
        )
        .with_label(format!("{} characters", spec.name.len()))
        .with_help(format!("shorten `name` to at most {room} characters")),
    );
}

/// `gang` and `volcanoQueue` on a TrainJob: the runtime's `podGroupPolicy`,
/// which a runtime trainc writes carries when the scheduler is known.
fn trainjob_gang(r: &mut Rules<'_>) {
    let scheduling = r.spec.scheduling.as_ref();
    let written = r.writes_runtime();
    let fields: [(bool, &str, &str); 2] = [
        (
            scheduling.is_some_and(|s| s.gang.is_some())
                && !(written && gang_scheduler(r).is_some()),
            "/scheduling/gang",
            if written {
                "a written runtime's `podGroupPolicy` needs the scheduler that gangs the pods: `scheduling.volcanoQueue` or `schedulerName = \"volcano\"` for Volcano (Trainer v2.1 and later), or `schedulerName` of your scheduler-plugins scheduler for coscheduling"
            } else {
                "gang scheduling is the runtime's `podGroupPolicy`: set `[trainjob] writeRuntime = true` with the scheduler (`schedulerName`), or choose a runtime that sets it"
            },
        ),
        (
            scheduling.is_some_and(|s| s.volcano_queue.is_some())
                && !(written && gang_scheduler(r) == Some(PodGroup::Volcano)),
            "/scheduling/volcanoQueue",
            if written {
                "Trainer's Volcano plugin came in v2.1: use `apiLevel = \"v2.1\"` or later"
            } else {
                "a TrainJob's Volcano PodGroup comes from the runtime's `podGroupPolicy`: set `[trainjob] writeRuntime = true` (trainc writes it with the queue)"
            },
        ),
    ];
    for (set, pointer, help) in fields {
        if set {
            let field = format!("`{}`", crate::tree::field_path(pointer));
            super::cannot_express(r, pointer, &field, help);
        }
    }
}

/// The PodGroup plugin a runtime trainc writes for `gang` or `volcanoQueue`
/// uses ([`crate::trainer::pod_group`]).
fn gang_scheduler(r: &Rules<'_>) -> Option<PodGroup> {
    let s = r.spec.scheduling.as_ref()?;
    crate::trainer::pod_group(
        r.api_level().release(),
        s.volcano_queue.is_some(),
        s.scheduler_name.as_deref(),
    )
}

/// Fields a TrainJob has no place for: the ClusterTrainingRuntime owns them.
fn trainjob_unsupported(r: &mut Rules<'_>) {
    let spec = r.spec;
    let scheduling = spec.scheduling.as_ref();
    let policy = spec.policy.as_ref();
    let runtime_help = "a TrainJob's patches cannot carry it: set `[trainjob] writeRuntime = true` and trainc writes a TrainingRuntime that does, or use `target = \"pytorchjob\"`";
    // What a runtime trainc writes carries.
    let written = r.writes_runtime();
    let fields: [(bool, &str, &str); 13] = [
        (
            spec.image_pull_policy.is_some() && !written,
            "/imagePullPolicy",
            runtime_help,
        ),
        (
            spec.env_from.is_some() && !written,
            "/envFrom",
            "list each key in `[env]` as `NAME = { secret = \"s\", key = \"NAME\" }`, or set `[trainjob] writeRuntime = true` (trainc writes a TrainingRuntime with the envFrom)",
        ),
        (
            spec.host_network.is_some() && !written,
            "/hostNetwork",
            runtime_help,
        ),
        (
            spec.dns_policy.is_some() && !written,
            "/dnsPolicy",
            runtime_help,
        ),
        (
            r.is_elastic(),
            "/replicas",
            "use a fixed `replicas`, or `target = \"pytorchjob\"` for elastic training",
        ),
        (
            spec.elastic.is_some(),
            "/elastic",
            "remove `[elastic]`, or use `target = \"pytorchjob\"`",
        ),
        (
            scheduling.is_some_and(|s| s.priority_class_name.is_some()) && !written,
            "/scheduling/priorityClassName",
            "set `[trainjob] writeRuntime = true` (trainc writes a TrainingRuntime with the pods' PriorityClass); for a priority in Kueue's queues, set `scheduling.workloadPriorityClass` (a Kueue WorkloadPriorityClass: it orders workloads, it does not set the pods' priority)",
        ),
        (
            scheduling.is_some_and(|s| s.scheduler_name.is_some()) && !written,
            "/scheduling/schedulerName",
            runtime_help,
        ),
        (
            policy.is_some_and(|p| p.clean_pod_policy.is_some()),
            "/policy/cleanPodPolicy",
            "remove it; the runtime's JobSet decides what happens to finished pods",
        ),
        (
            policy.is_some_and(|p| p.ttl_after_finished.is_some()) && !written,
            "/policy/ttlAfterFinished",
            "set `[trainjob] writeRuntime = true` (trainc writes it as the runtime's JobSet `ttlSecondsAfterFinished`), or remove it",
        ),
        (
            policy.is_some_and(|p| p.backoff_limit.is_some()) && !written,
            "/policy/backoffLimit",
            "set `[trainjob] writeRuntime = true` (trainc writes it as the `node` Job's `backoffLimit`), or remove it",
        ),
        (
            spec.working_dir.is_some() && !written,
            "/workingDir",
            "neither the trainer nor the runtime patch has a working directory: set `[trainjob] writeRuntime = true` (trainc writes a TrainingRuntime with it), or set WORKDIR in the image",
        ),
        (
            // A Job's pods restart `OnFailure` or `Never`, which a runtime
            // trainc writes carries.
            policy.is_some_and(|p| {
                p.restart_policy.is_some_and(|r| {
                    !written
                        || !matches!(
                            r,
                            crate::spec::RestartPolicy::OnFailure
                                | crate::spec::RestartPolicy::Never
                        )
                })
            }),
            "/policy/restartPolicy",
            "JobSet's pods restart `OnFailure` (its default) or `Never`: set `[trainjob] writeRuntime = true` and one of them, or remove it",
        ),
    ];
    for (set, pointer, help) in fields {
        if set {
            let field = match pointer {
                "/replicas" => "elastic `replicas`".to_owned(),
                _ => format!("`{}`", crate::tree::field_path(pointer)),
            };
            super::cannot_express(r, pointer, &field, help);
        }
    }
}
