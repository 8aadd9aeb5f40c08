//! The kustomize transformer configuration for the kinds trainc generates
//! (`trainc plugin config`, listed under a kustomization's `configurations:`).
//!
//! kustomize knows where Deployments and Jobs refer to claims, ConfigMaps and
//! Secrets, and where their pod templates keep labels; of a CRD it knows
//! nothing. Without this, `namePrefix`, `nameSuffix` or a hash-suffixed
//! `secretGenerator` renames the PersistentVolumeClaim trainc creates (or the
//! Secret the job reads) but not the `claimName` (or `secretKeyRef`) in the
//! PyTorchJob, and the pods never start. The format is kustomize's
//! transformer config: `nameReference` (referral kind, then the `fieldSpecs`
//! that name it), `commonLabels`/`templateLabels` and `images` field specs (kubernetes-sigs/kustomize
//! kustomize/v5.5.0, api/internal/plugins/builtinconfig/transformerconfig.go;
//! paths are `/`-separated, `\/` escapes a `/` inside a key,
//! kyaml/utils/pathsplitter.go, and a path through a list applies to every
//! item).
//!
//! Pod selectors need none of this: trainc selects pods by its own labels,
//! which no name transformer rewrites (see [`crate::render`]) — except on a
//! Trainer v2.0 TrainJob, whose pods carry no trainc labels, so its Service
//! follows the TrainJob's name through JobSet's label here.

use std::fmt::Write as _;

use crate::cluster::{jobset, pytorchjob, trainjob};
use crate::render::trainingruntime;

/// Where each kind keeps the pods trainc writes, from the object's root:
/// (group, kind, path, whether the path is a whole pod template with
/// `metadata` and `spec`, or a pod spec patch alone).
const PODS: &[(&str, &str, &str, bool)] = &[
    (
        "kubeflow.org",
        pytorchjob::KIND,
        "spec/pytorchReplicaSpecs/Master/template",
        true,
    ),
    (
        "kubeflow.org",
        pytorchjob::KIND,
        "spec/pytorchReplicaSpecs/Worker/template",
        true,
    ),
    // Trainer v2.2 and later: runtimePatches.
    (
        "trainer.kubeflow.org",
        trainjob::KIND,
        "spec/runtimePatches/trainingRuntimeSpec/template/spec/replicatedJobs/template/spec/template",
        true,
    ),
    // Trainer v2.1: podTemplateOverrides.
    (
        "trainer.kubeflow.org",
        trainjob::KIND,
        "spec/podTemplateOverrides",
        true,
    ),
    // Trainer v2.0: podSpecOverrides, a pod spec patch without metadata.
    (
        "trainer.kubeflow.org",
        trainjob::KIND,
        "spec/podSpecOverrides",
        false,
    ),
    // A JobSet's replicated jobs (`target = "jobset"`): its pods find rank
    // 0 by the JobSet's name as JobSet labels them, so a rename needs
    // nothing more (see `crate::cluster::jobset::NAME_ENV`).
    (
        "jobset.x-k8s.io",
        jobset::KIND,
        "spec/replicatedJobs/template/spec/template",
        true,
    ),
    // The TrainingRuntime trainc writes (`[trainjob] writeRuntime`).
    (
        "trainer.kubeflow.org",
        trainingruntime::KIND,
        "spec/template/spec/replicatedJobs/template/spec/template",
        true,
    ),
];

/// Each kind's pod specs: (group, kind, path).
fn pod_specs() -> impl Iterator<Item = (&'static str, &'static str, String)> {
    PODS.iter().map(|(group, kind, path, template)| {
        let spec = if *template {
            format!("{path}/spec")
        } else {
            (*path).to_owned()
        };
        (*group, *kind, spec)
    })
}

/// Each kind's pod labels: (group, kind, path).
fn pod_labels() -> impl Iterator<Item = (&'static str, &'static str, String)> {
    PODS.iter()
        .filter(|(.., template)| *template)
        .map(|(group, kind, path, _)| (*group, *kind, format!("{path}/metadata/labels")))
}

/// Inside a pod spec: (referral kind, path below the pod spec).
const IN_POD_SPEC: &[(&str, &str)] = &[
    (
        "PersistentVolumeClaim",
        "volumes/persistentVolumeClaim/claimName",
    ),
    ("ConfigMap", "volumes/configMap/name"),
    ("ConfigMap", "volumes/projected/sources/configMap/name"),
    ("ConfigMap", "containers/env/valueFrom/configMapKeyRef/name"),
    ("ConfigMap", "containers/envFrom/configMapRef/name"),
    (
        "ConfigMap",
        "initContainers/env/valueFrom/configMapKeyRef/name",
    ),
    ("ConfigMap", "initContainers/envFrom/configMapRef/name"),
    ("Secret", "volumes/secret/secretName"),
    ("Secret", "volumes/projected/sources/secret/name"),
    ("Secret", "containers/env/valueFrom/secretKeyRef/name"),
    ("Secret", "containers/envFrom/secretRef/name"),
    ("Secret", "initContainers/env/valueFrom/secretKeyRef/name"),
    ("Secret", "initContainers/envFrom/secretRef/name"),
    ("Secret", "imagePullSecrets/name"),
    ("ServiceAccount", "serviceAccountName"),
];

/// References outside the pod specs: (referral kind, group, kind, path).
const OTHER: &[(&str, &str, &str, &str)] = &[
    (
        "ConfigMap",
        "trainer.kubeflow.org",
        trainjob::KIND,
        "spec/trainer/env/valueFrom/configMapKeyRef/name",
    ),
    (
        "Secret",
        "trainer.kubeflow.org",
        trainjob::KIND,
        "spec/trainer/env/valueFrom/secretKeyRef/name",
    ),
    (
        "Secret",
        "trainer.kubeflow.org",
        trainjob::KIND,
        "spec/initializer/dataset/secretRef/name",
    ),
    (
        "Secret",
        "trainer.kubeflow.org",
        trainjob::KIND,
        "spec/initializer/model/secretRef/name",
    ),
    (
        "ConfigMap",
        "trainer.kubeflow.org",
        trainjob::KIND,
        "spec/initializer/dataset/env/valueFrom/configMapKeyRef/name",
    ),
    (
        "Secret",
        "trainer.kubeflow.org",
        trainjob::KIND,
        "spec/initializer/dataset/env/valueFrom/secretKeyRef/name",
    ),
    (
        "ConfigMap",
        "trainer.kubeflow.org",
        trainjob::KIND,
        "spec/initializer/model/env/valueFrom/configMapKeyRef/name",
    ),
    (
        "Secret",
        "trainer.kubeflow.org",
        trainjob::KIND,
        "spec/initializer/model/env/valueFrom/secretKeyRef/name",
    ),
];

/// The configuration, as YAML.
pub fn configuration() -> String {
    let mut out = String::from(
        "# kustomize transformer configuration for the objects trainc generates.\n\
         # List it under `configurations:` in the kustomization that renames\n\
         # (namePrefix, nameSuffix, generators with hash suffixes) or labels them.\n\
         # Written by `trainc plugin config`.\n\
         nameReference:\n",
    );
    let field = |out: &mut String, group: &str, kind: &str, path: &str| {
        let _ = writeln!(
            out,
            "  - group: {group}\n    kind: {kind}\n    path: {path}"
        );
    };
    for referral in [
        "ConfigMap",
        "PersistentVolumeClaim",
        "Secret",
        "ServiceAccount",
    ] {
        let _ = writeln!(out, "- kind: {referral}\n  version: v1\n  fieldSpecs:");
        for (group, kind, pod_spec) in pod_specs() {
            for (_, below) in IN_POD_SPEC.iter().filter(|(r, _)| *r == referral) {
                field(&mut out, group, kind, &format!("{pod_spec}/{below}"));
            }
        }
        for (_, group, kind, path) in OTHER.iter().filter(|(r, ..)| *r == referral) {
            field(&mut out, group, kind, path);
        }
    }
    // A TrainJob names the TrainingRuntime trainc writes beside it: renamed
    // together (kustomize renames a reference only to an object it renamed).
    let _ = writeln!(
        out,
        "- kind: {runtime}\n  group: trainer.kubeflow.org\n  fieldSpecs:\n  - kind: {job}\n    group: trainer.kubeflow.org\n    path: spec/runtimeRef/name",
        runtime = trainingruntime::KIND,
        job = trainjob::KIND,
    );
    // A v2.0 TrainJob's Service selects its pods by the JobSet's name, which is the TrainJob's.
    let _ = writeln!(
        out,
        "- kind: {kind}\n  group: trainer.kubeflow.org\n  fieldSpecs:\n  - kind: Service\n    version: v1\n    path: spec/selector/{label}",
        kind = trainjob::KIND,
        label = trainjob::LABEL_JOBSET_NAME.replace('/', "\\/"),
    );
    // Labels on the pod templates too, as kustomize does for a Deployment's:
    // `commonLabels` and `labels` with `includeSelectors` add a label to
    // Service selectors, so the pods must get it. Never created: trainc's
    // templates always have labels, and creating the path would add a
    // Master to an elastic job.
    for key in ["commonLabels", "templateLabels"] {
        let _ = writeln!(out, "{key}:");
        for (group, kind, path) in pod_labels() {
            let _ = writeln!(out, "- group: {group}\n  kind: {kind}\n  path: {path}");
        }
    }
    // kustomize's `images:` finds every `containers[].image`; a TrainJob's
    // trainer image is elsewhere.
    let _ = writeln!(
        out,
        "images:\n- group: trainer.kubeflow.org\n  kind: {}\n  path: spec/trainer/image",
        trainjob::KIND
    );
    out
}

/// At most this many warnings, each at most this many characters: an
/// annotation, not a log.
const MAX_WARNINGS: usize = 20;
const MAX_WARNING_CHARS: usize = 300;

/// kubectl v1.32 (kustomize v5.5.0) shows a plugin's stderr only when the
/// plugin fails: `invokePlugin` in api/internal/plugins/execplugin/
/// execplugin.go takes the plugin's output with `cmd.Output()`, which keeps
/// stderr for the error it returns (kubernetes-sigs/kustomize#5539), and
/// tests/kustomize.rs sees it so with the real kubectl. The warnings of a
/// build that succeeded would vanish: they go on the job (the last object), one per
/// line, where `kubectl kustomize` output, a diff in review and `kubectl
/// describe` show them. `warnings = "error"` fails the build instead.
pub fn annotate_warnings(objects: &mut [crate::render::Object], diagnostics: &[crate::Diagnostic]) {
    let warnings: Vec<&crate::Diagnostic> = diagnostics.iter().filter(|d| !d.is_error()).collect();
    let Some(job) = objects.last_mut().filter(|_| !warnings.is_empty()) else {
        return;
    };
    let mut text = format!(
        "{} warning{} from trainc (kubectl shows a plugin's stderr only when it fails; `trainc check` on the TrainSpec says more, and `warnings: error` in it fails the build):",
        warnings.len(),
        if warnings.len() == 1 { "" } else { "s" }
    );
    for warning in warnings.iter().take(MAX_WARNINGS) {
        let line = match &warning.field {
            Some(field) => format!("{field}: {} [{}]", warning.message, warning.code),
            None => format!("{} [{}]", warning.message, warning.code),
        };
        text.push('\n');
        if line.chars().count() > MAX_WARNING_CHARS {
            text.extend(line.chars().take(MAX_WARNING_CHARS - 1));
            text.push('…');
        } else {
            text.push_str(&line);
        }
    }
    if warnings.len() > MAX_WARNINGS {
        let _ = write!(text, "\n… and {} more", warnings.len() - MAX_WARNINGS);
    }
    let Some(metadata) = job
        .value
        .get_mut("metadata")
        .and_then(|m| m.as_object_mut())
    else {
        return;
    };
    let annotations = metadata
        .entry("annotations")
        .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
    if let Some(map) = annotations.as_object_mut() {
        map.insert(
            crate::spec::defaults::WARNINGS_ANNOTATION.to_owned(),
            serde_json::Value::String(text),
        );
        map.sort_keys();
    }
    // In alphabetical order, as the renderers write every map.
    metadata.sort_keys();
}
