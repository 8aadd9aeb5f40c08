//! Labels and annotations: the spec's `labels` and `annotations` go on the
//! job and every pod, so what the job and its pods share becomes those;
//! what only the pods carry goes to `[podTemplate.metadata]`.

use serde_json::{Map, Value as Json, json};

use super::Job;
use crate::spec::defaults::{
    LABEL_KUEUE_PRIORITY, LABEL_KUEUE_QUEUE, LABEL_MANAGED_BY, LABEL_NAME,
};

/// Fields the API server sets: what `kubectl get -o yaml` prints, never intent.
const SERVER_SET: &[&str] = &[
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
];
/// Written by `kubectl apply`: the previous input, not a setting.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// trainc's own pod annotation (`defaults::POD_ANNOTATIONS`).
const ISTIO: (&str, &str) = ("sidecar.istio.io/inject", "false");

/// The job's `metadata` and, when the pods have their own, the pods'
/// metadata (a pod template's, or a TrainJob v2.0's `spec.labels`).
pub(super) fn import(job: &mut Job<'_>, metadata: &Json, pod: Option<(&Json, &str)>) {
    for key in metadata.as_object().into_iter().flat_map(Map::keys) {
        if !["name", "namespace", "labels", "annotations"].contains(&key.as_str())
            && !SERVER_SET.contains(&key.as_str())
        {
            job.warn(
                &format!("/metadata/{key}"),
                format!("`metadata.{key}` is not imported: a spec's objects have a name, a namespace, labels and annotations"),
                "",
            );
        }
    }
    let job_labels = strings(&metadata["labels"]);
    let mut kueue = Map::new();
    for (label, field) in [
        (LABEL_KUEUE_QUEUE, "queue"),
        (LABEL_KUEUE_PRIORITY, "workloadPriorityClass"),
    ] {
        if let Some(value) = job_labels.get(label) {
            kueue.insert(field.to_owned(), value.clone());
        }
    }
    for (field, value) in kueue {
        job.set(&format!("/scheduling/{field}"), value);
    }
    // Kueue's labels the pods repeat with the job's values: Kueue reads the
    // job's (its jobframework takes the queue of the workload's object), and
    // the copy in the pod template says nothing more, so one copy, the
    // spec's `[scheduling]`, is kept.
    let kueue_labels: Map<String, Json> = job_labels
        .iter()
        .filter(|(k, _)| *k == LABEL_KUEUE_QUEUE || *k == LABEL_KUEUE_PRIORITY)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let job_labels: Map<String, Json> = job_labels
        .into_iter()
        .filter(|(k, _)| k != LABEL_KUEUE_QUEUE && k != LABEL_KUEUE_PRIORITY)
        .collect();
    let name = job.name.clone();
    let trainc = |k: &str, v: &Json| {
        (k == LABEL_MANAGED_BY && v == "trainc")
            || (k == LABEL_NAME && *v == *name)
            || kueue_labels.get(k) == Some(v)
    };
    split(job, "labels", &job_labels, pod, &trainc);
    // The warnings a kustomize plugin build wrote on the job: its output,
    // not a setting.
    let job_annotations: Map<String, Json> = strings(&metadata["annotations"])
        .into_iter()
        .filter(|(k, _)| k != LAST_APPLIED && k != crate::spec::defaults::WARNINGS_ANNOTATION)
        .collect();
    split(job, "annotations", &job_annotations, pod, &|k, v| {
        k == ISTIO.0 && v == ISTIO.1
    });
    if let Some((pod, pointer)) = pod {
        for key in pod.as_object().into_iter().flat_map(Map::keys) {
            if key != "labels" && key != "annotations" {
                job.warn(
                    &format!("{pointer}/{key}"),
                    format!(
                        "`{key}` of the pod metadata is not imported: the operator names the pods"
                    ),
                    "",
                );
            }
        }
    }
}

/// One of `labels` and `annotations`: shared ones to the spec's field, the
/// pods' own to `[podTemplate.metadata]`, the job's own to the spec's field
/// with a warning (the pods get them too). `own` says which are trainc's.
fn split(
    job: &mut Job<'_>,
    key: &str,
    on_job: &Map<String, Json>,
    pod: Option<(&Json, &str)>,
    own: &dyn Fn(&str, &Json) -> bool,
) {
    let on_pod = pod.map(|(m, _)| strings(&m[key])).unwrap_or_default();
    let mut spec = Map::new();
    let mut pod_only = Map::new();
    for (k, v) in on_job {
        if key == "labels" && own(k, v) {
            continue;
        }
        if reserved(k) {
            reserved_dropped(job, "/metadata", key, k);
            continue;
        }
        if pod.is_some() && on_pod.get(k) != Some(v) {
            job.warn(
                &format!("/metadata/{key}/{}", crate::tree::pointer_segment(k)),
                format!("`{k}` is on the job but not its pods; the spec's {key} go on both"),
                "",
            );
        }
        spec.insert(k.clone(), v.clone());
    }
    for (k, v) in &on_pod {
        if on_job.get(k) == Some(v) || own(k, v) {
            continue;
        }
        if reserved(k) {
            reserved_dropped(job, pod.map_or("", |(_, p)| p), key, k);
            continue;
        }
        pod_only.insert(k.clone(), v.clone());
    }
    if !spec.is_empty() {
        job.set(&format!("/{key}"), Json::Object(spec));
    }
    if !pod_only.is_empty() {
        job.template_metadata
            .insert(key.to_owned(), Json::Object(pod_only));
    }
}

/// The warning for trainc's own label, written with another value at
/// `{metadata}/{key}/{label}`.
fn reserved_dropped(job: &mut Job<'_>, metadata: &str, key: &str, label: &str) {
    job.warn(
        &format!("{metadata}/{key}/{}", crate::tree::pointer_segment(label)),
        format!("label `{label}` is not imported: trainc sets it to the job's name and `trainc`"),
        "",
    );
}

fn reserved(key: &str) -> bool {
    key == LABEL_NAME || key == LABEL_MANAGED_BY
}

fn strings(value: &Json) -> Map<String, Json> {
    value
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let text = match v {
                Json::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), json!(text))
        })
        .collect()
}
