//! What Kueue does to a queued job, and where that breaks it. Kueue admits
//! a TrainJob by writing its scheduling decision into the TrainJob, in the
//! API of the Trainer it was built against (`pkg/controller/jobs/trainjob`,
//! and the Trainer version in its `go.mod`): Kueue v0.14.0–v0.14.4 append a
//! `podSpecOverride` (Trainer v2.0), v0.14.5–v0.16 a `podTemplateOverride`
//! (Trainer v2.1), v0.17 and later a runtime patch (Trainer v2.2 and later).

use super::Rules;
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::{ApiLevel, Spec, Target};

pub(super) fn check(r: &mut Rules<'_>) {
    let queued = r
        .spec
        .scheduling
        .as_ref()
        .is_some_and(|s| s.queue.is_some());
    if queued && r.target() == Target::Pytorchjob {
        pytorchjob_integration(r);
    }
    if !queued || r.target() != Target::Trainjob {
        return;
    }
    kueue_tolerations(r);
    v2_0_override(r);
    v2_1_kueue(r);
}

/// Kueue v0.19.0 ships with the Training Operator's integrations off: its
/// manager configuration lists `kubeflow.org/pytorchjob` only as a comment
/// in `integrations.frameworks` (kubernetes-sigs/kueue v0.19.0,
/// `config/components/manager/controller_manager_config.yaml`; v0.17.0
/// lists it). A framework not listed is not watched, so the queue label
/// does nothing: the job is not suspended, and runs at once outside the
/// queue and its quota.
fn pytorchjob_integration(r: &mut Rules<'_>) {
    r.push(
        Diagnostic::warning(
            codes::SCHEDULING_KUEUE_INTEGRATION,
            r.key("/scheduling/queue"),
            "Kueue v0.19 and later manage a PyTorchJob only where the cluster's Kueue configuration lists `kubeflow.org/pytorchjob` in `integrations.frameworks`, which their default configuration leaves out: there the queue is ignored and the job runs at once, outside its quota",
        )
        .with_help("ask whoever runs Kueue whether `kubeflow.org/pytorchjob` is in its `integrations.frameworks` (Kueue v0.17 lists it by default), and acknowledge this with `allowWarnings = [\"trainc::scheduling::kueue_integration\"]` if it is; or move to `target = \"trainjob\"` (`trainc migrate` turns a PyTorchJob into one), which Kueue manages by default"),
    );
}

/// Kueue admits a TrainJob by adding a runtime patch of its own with the
/// admitting ResourceFlavor's node selector and tolerations (kubernetes-sigs/
/// kueue v0.14.0–v0.19.2 `pkg/controller/jobs/trainjob/
/// trainjob_controller.go` `RunWithPodSetsInfo`: `info.Tolerations`, the
/// flavor's alone). The Trainer applies the patches in order by strategic
/// merge (kubeflow/trainer v2.0.0 `pkg/runtime/core/trainingruntime.go`
/// `mergePodSpecOverrides`, v2.2.0–v2.3.0 `mergeRuntimePatches`), in which a
/// pod's `tolerations` have no merge key: the later list replaces the
/// earlier. So when the flavor has any toleration, the spec's (in trainc's
/// patch or a runtime trainc writes) are gone. On a PyTorchJob or a Job,
/// Kueue adds the flavor's to the pods' own.
fn kueue_tolerations(r: &mut Rules<'_>) {
    let Some(s) = &r.spec.scheduling else { return };
    if s.tolerations.as_ref().is_none_or(Vec::is_empty) {
        return;
    }
    r.push(
        Diagnostic::warning(
            codes::SCHEDULING_KUEUE_TOLERATIONS,
            r.key("/scheduling/tolerations"),
            "with Kueue (v0.14–v0.19) these tolerations are lost when the ResourceFlavor that admits the TrainJob has tolerations: Kueue's admission patch carries the flavor's list, and a TrainJob's patches replace tolerations as one list",
        )
        .with_secondary(r.entry("/scheduling/queue"), "queued by Kueue here")
        .with_help("if the flavors of the queue's ClusterQueue have tolerations, add these tolerations to those ResourceFlavors too (`spec.tolerations`) and remove them here; if they have none, these are kept. On `target = \"pytorchjob\"` or `\"job\"` Kueue adds the flavor's tolerations to these"),
    );
}

/// A field of the spec, and whether the spec sets it to something.
type Carried = (&'static str, fn(&Spec) -> bool);

/// The fields of the spec that trainc writes into the TrainJob's patch of
/// the `node` job at Trainer v2.0 (`podSpecOverrides`; see
/// [`crate::render::trainjob`]), each with whether the spec sets it to
/// something the patch carries (an empty table or list carries nothing):
/// volumes and their mounts (`[volumes]`, `resources.shm`, `[code]`), the
/// node selector, tolerations and service account, and the pod spec of
/// `[podTemplate]`. v2.0's override has no affinity, pull secrets or
/// security contexts, which other rules refuse there.
const V2_0_PATCHED: [Carried; 7] = [
    ("/volumes", |s| {
        s.volumes.as_ref().is_some_and(|v| !v.is_empty())
    }),
    ("/resources/shm", |s| {
        s.resources.as_ref().is_some_and(|r| r.shm.is_some())
    }),
    ("/code", |s| s.code.is_some()),
    ("/scheduling/nodeSelector", |s| {
        s.scheduling
            .as_ref()
            .and_then(|s| s.node_selector.as_ref())
            .is_some_and(|m| !m.is_empty())
    }),
    ("/scheduling/tolerations", |s| {
        s.scheduling
            .as_ref()
            .and_then(|s| s.tolerations.as_ref())
            .is_some_and(|t| !t.is_empty())
    }),
    ("/scheduling/serviceAccountName", |s| {
        s.scheduling
            .as_ref()
            .is_some_and(|s| s.service_account_name.is_some())
    }),
    ("/podTemplate", |s| {
        s.pod_template
            .as_ref()
            .and_then(|t| t.spec.as_ref())
            .is_some_and(|p| !p.is_empty())
    }),
];

/// Kueue v0.14.0–v0.14.4, the Kueue of Trainer v2.0, admits a TrainJob by
/// appending a `podSpecOverride` for each of its jobs, `node` included, and
/// updating the TrainJob (kubernetes-sigs/kueue v0.14.4,
/// `pkg/controller/jobs/trainjob/trainjob_controller.go`
/// `RunWithPodSetsInfo`); Trainer v2.0's webhook refuses two overrides of
/// one job (kubeflow/trainer v2.0.0–v2.0.1,
/// `pkg/runtime/framework/plugins/jobset/jobset.go` `Validate`:
/// `field.Duplicate` on `targetJobs`; removed in v2.1.0; kubeflow/trainer
/// issue 2871). So the update fails and the TrainJob stays suspended, its
/// quota held, whenever trainc's own override targets `node`.
fn v2_0_override(r: &mut Rules<'_>) {
    if r.api_level() != ApiLevel::V2_0 || r.writes_runtime() {
        return;
    }
    let patched: Vec<&str> = V2_0_PATCHED
        .into_iter()
        .filter(|(_, carried)| carried(r.spec))
        .map(|(pointer, _)| pointer)
        .collect();
    let Some(&first) = patched.first() else {
        return;
    };
    let fields: Vec<String> = patched
        .iter()
        .map(|p| format!("`{}`", crate::tree::field_path(p)))
        .collect();
    r.push(
        Diagnostic::error(
            codes::SCHEDULING_KUEUE_ADMISSION,
            r.key(first),
            format!(
                "Kueue would never start this TrainJob: at Trainer v2.0 trainc writes {} as a `podSpecOverride` of the `node` job, Kueue admits a TrainJob by adding its own override of `node`, and Trainer v2.0's webhook refuses two overrides of one job: the TrainJob would stay suspended, holding its quota",
                crate::diagnostic::listed(&fields)
            ),
        )
        .with_secondary(r.entry("/scheduling/queue"), "queued by Kueue here")
        .with_help("set `[trainjob] writeRuntime = true`: trainc writes a TrainingRuntime that carries the pod, and the TrainJob needs no override; or, on Trainer v2.2 and later with Kueue v0.17 and later, set `apiLevel` to the cluster's release"),
    );
}

/// Kueue v0.17 and later patch a TrainJob with `runtimePatches`, which
/// Trainer v2.1 does not have: an admitted workload's TrainJob stays
/// suspended and no pod is made (kubernetes-sigs/kueue issue 11931, Trainer
/// v2.1.0 with Kueue v0.17.3; Kueue v0.17.0's `go.mod` requires Trainer
/// v2.2.0). The Kueue of Trainer v2.1 is v0.14.5 to v0.16.
fn v2_1_kueue(r: &mut Rules<'_>) {
    if r.api_level() != ApiLevel::V2_1 {
        return;
    }
    r.push(
        Diagnostic::warning(
            codes::SCHEDULING_KUEUE_ADMISSION,
            r.entry("/scheduling/queue"),
            "at Trainer v2.1, only Kueue v0.14.5 to v0.16 starts a queued TrainJob: Kueue v0.17 and later admit it with `runtimePatches`, which Trainer v2.1 does not have, and the TrainJob stays suspended",
        )
        .with_help("check the cluster's Kueue version (`kubectl get deploy -n kueue-system kueue-controller-manager -o jsonpath='{..image}'`); with Kueue v0.17 or later, upgrade Trainer to v2.2 or later and set `apiLevel` to it"),
    );
}
