//! What the API server refuses in a Job's spec, after it defaults it
//! (kubernetes v1.36.3, `pkg/apis/batch/v1/defaults.go` `SetDefaults_Job`,
//! `pkg/apis/batch/validation/validation.go` `validateJobSpec`,
//! `validatePodFailurePolicy`, `validateSuccessPolicy`,
//! `validateGeneratedSelector`; `pkg/registry/batch/job/strategy.go`
//! `generateSelector`).
//!
//! One reading for every Job a cluster is given: a `batch/v1` Job as
//! written, and each Job JobSet makes from a replicated job (its template,
//! as JobSet's webhook defaults it), which JobSet's webhook does not
//! validate: the JobSet is admitted, and the API server refuses its Jobs.
//! The pod template itself is checked where every pod spec is
//! ([`crate::syntax::pod`]); the strict schema checks the types.

mod policies;
#[cfg(test)]
mod tests;

use serde_json::Value as Json;

use crate::syntax::names;

/// One refusal: where in the Job's spec (a JSON pointer below `spec`,
/// `/completions`) and the API server's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub pointer: String,
    pub message: String,
}

const MAX_INDEXED_PARALLELISM: i64 = 100_000;
const MAX_FAILED_INDEXES: i64 = 100_000;
const COMPLETIONS_SOFT_LIMIT: i64 = 100_000;
const PARALLELISM_FOR_HIGH_COMPLETIONS: i64 = 10_000;
const MAX_FAILED_INDEXES_FOR_HIGH_COMPLETIONS: i64 = 10_000;
const MAX_MANAGED_BY: usize = 63;

/// The fields the rules read, as `SetDefaults_Job` leaves them: with
/// neither `completions` nor `parallelism`, both are 1; `parallelism` is 1;
/// `completionMode` is `NonIndexed`.
pub(super) struct Defaulted<'a> {
    pub(super) spec: &'a Json,
    pub(super) completions: Option<i64>,
    pub(super) parallelism: i64,
    pub(super) indexed: bool,
}

impl<'a> Defaulted<'a> {
    fn of(spec: &'a Json) -> Defaulted<'a> {
        let completions = spec["completions"].as_i64();
        let parallelism = spec["parallelism"].as_i64();
        let (completions, parallelism) = match (completions, parallelism) {
            (None, None) => (Some(1), 1),
            (completions, parallelism) => (completions, parallelism.unwrap_or(1)),
        };
        Defaulted {
            spec,
            completions,
            parallelism,
            indexed: spec["completionMode"] == "Indexed",
        }
    }
}

/// What the API server refuses in the Job `spec` (a `batch/v1` Job's
/// `spec`, or a replicated job's `template.spec` as JobSet defaults it).
pub fn refusals(spec: &Json) -> Vec<Refused> {
    let job = Defaulted::of(spec);
    let mut found = Vec::new();
    let mut refuse = |pointer: &str, message: String| {
        found.push(Refused {
            pointer: pointer.to_owned(),
            message,
        });
    };
    for field in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
    ] {
        if let Some(n) = spec[field].as_i64().filter(|n| *n < 0) {
            refuse(
                &format!("/{field}"),
                format!("Invalid value: {n}: must be greater than or equal to 0"),
            );
        }
    }
    if !spec["maxFailedIndexes"].is_null() && spec["backoffLimitPerIndex"].is_null() {
        refuse(
            "/backoffLimitPerIndex",
            "Required value: when maxFailedIndexes is specified".to_owned(),
        );
    }
    if let Some(manager) = spec["managedBy"].as_str() {
        if !names::domain_prefixed_path(manager) {
            refuse(
                "/managedBy",
                format!(
                    "Invalid value: \"{manager}\": must be a domain-prefixed path (such as \"acme.io/foo\")"
                ),
            );
        }
        if manager.len() > MAX_MANAGED_BY {
            refuse(
                "/managedBy",
                format!("Too long: may not be more than {MAX_MANAGED_BY} bytes"),
            );
        }
    }
    completion_mode(&job, &mut refuse);
    if !spec["podFailurePolicy"].is_null() {
        policies::failure_policy(spec, &mut refuse);
    }
    if !spec["successPolicy"].is_null() {
        if job.indexed {
            policies::success_policy(&job, &mut refuse);
        } else {
            refuse(
                "/successPolicy",
                format!(
                    "Invalid value: {}: requires indexed completion mode",
                    internal_success_policy(&spec["successPolicy"])
                ),
            );
        }
    }
    replacement_policy(spec, &mut refuse);
    restart_policy(spec, &mut refuse);
    found
}

/// A `successPolicy` as the server words it in an error: the JSON of its
/// internal type, whose fields have no JSON names (`batch.SuccessPolicy`,
/// kubernetes v1.36.3 `pkg/apis/batch/types.go`).
fn internal_success_policy(policy: &Json) -> Json {
    let rules = policy["rules"].as_array().map(|rules| {
        rules
            .iter()
            .map(|rule| {
                serde_json::json!({
                    "SucceededIndexes": rule["succeededIndexes"],
                    "SucceededCount": rule["succeededCount"],
                })
            })
            .collect::<Vec<_>>()
    });
    serde_json::json!({ "Rules": rules })
}

/// `completionMode` and what an Indexed or a NonIndexed Job may hold.
fn completion_mode(job: &Defaulted<'_>, refuse: &mut impl FnMut(&str, String)) {
    let spec = job.spec;
    let mode = spec["completionMode"].as_str();
    if mode.is_some_and(|m| m != "Indexed" && m != "NonIndexed") {
        refuse(
            "/completionMode",
            format!(
                "Unsupported value: \"{}\": supported values: \"NonIndexed\", \"Indexed\"",
                mode.unwrap_or_default()
            ),
        );
    }
    let max_failed = spec["maxFailedIndexes"].as_i64();
    if !job.indexed {
        for field in ["backoffLimitPerIndex", "maxFailedIndexes"] {
            if !spec[field].is_null() {
                refuse(
                    &format!("/{field}"),
                    format!(
                        "Invalid value: {}: requires indexed completion mode",
                        spec[field]
                    ),
                );
            }
        }
        return;
    }
    let Some(completions) = job.completions else {
        refuse(
            "/completions",
            "Required value: when completion mode is Indexed (with `parallelism` set, `completions` is not defaulted)".to_owned(),
        );
        return;
    };
    if job.parallelism > MAX_INDEXED_PARALLELISM {
        refuse(
            "/parallelism",
            format!(
                "Invalid value: {}: must be less than or equal to {MAX_INDEXED_PARALLELISM} when completion mode is Indexed",
                job.parallelism
            ),
        );
    }
    if let Some(max) = max_failed {
        if max > completions {
            refuse(
                "/maxFailedIndexes",
                format!("Invalid value: {max}: must be less than or equal to completions"),
            );
        }
        if max > MAX_FAILED_INDEXES {
            refuse(
                "/maxFailedIndexes",
                format!("Invalid value: {max}: must be less than or equal to {MAX_FAILED_INDEXES}"),
            );
        }
    }
    if completions > COMPLETIONS_SOFT_LIMIT && !spec["backoffLimitPerIndex"].is_null() {
        let high = format!(
            "when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
        );
        if max_failed.is_none() {
            refuse(
                "/maxFailedIndexes",
                format!(
                    "Required value: must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"
                ),
            );
        }
        if job.parallelism > PARALLELISM_FOR_HIGH_COMPLETIONS {
            refuse(
                "/parallelism",
                format!(
                    "Invalid value: {}: must be less than or equal to {PARALLELISM_FOR_HIGH_COMPLETIONS} {high}",
                    job.parallelism
                ),
            );
        }
        if let Some(max) = max_failed.filter(|max| *max > MAX_FAILED_INDEXES_FOR_HIGH_COMPLETIONS) {
            refuse(
                "/maxFailedIndexes",
                format!(
                    "Invalid value: {max}: must be less than or equal to {MAX_FAILED_INDEXES_FOR_HIGH_COMPLETIONS} {high}"
                ),
            );
        }
    }
}

/// `podReplacementPolicy`: `Failed` only with a `podFailurePolicy`.
fn replacement_policy(spec: &Json, refuse: &mut impl FnMut(&str, String)) {
    let Some(policy) = spec["podReplacementPolicy"].as_str() else {
        return;
    };
    if !spec["podFailurePolicy"].is_null() {
        if policy != "Failed" {
            refuse(
                "/podReplacementPolicy",
                format!("Unsupported value: \"{policy}\": supported values: \"Failed\""),
            );
        }
    } else if policy != "Failed" && policy != "TerminatingOrFailed" {
        refuse(
            "/podReplacementPolicy",
            format!(
                "Unsupported value: \"{policy}\": supported values: \"Failed\", \"TerminatingOrFailed\""
            ),
        );
    }
}

/// A Job's pods restart `OnFailure` or `Never` (`Always` is the pod's
/// default, so an unset one is refused too); `Never` only with a
/// `podFailurePolicy`.
fn restart_policy(spec: &Json, refuse: &mut impl FnMut(&str, String)) {
    let at = "/template/spec/restartPolicy";
    match spec["template"]["spec"]["restartPolicy"].as_str().unwrap_or("") {
        "" | "Always" => refuse(
            at,
            "Required value: valid values: \"OnFailure\", \"Never\"".to_owned(),
        ),
        "OnFailure" if !spec["podFailurePolicy"].is_null() => refuse(
            at,
            "Invalid value: \"OnFailure\": only \"Never\" is supported when podFailurePolicy is specified".to_owned(),
        ),
        "OnFailure" | "Never" => {}
        other => refuse(
            at,
            format!("Unsupported value: \"{other}\": supported values: \"OnFailure\", \"Never\""),
        ),
    }
}

/// What a `batch/v1` Job `job` (the whole object) breaks beside its spec:
/// the selector and the labels the API server generates
/// (`generateSelector`, `validateGeneratedSelector`, `ValidateJobSpec`), and
/// the hostname of an Indexed Job's last pod (`ValidateJob`). Pointers are
/// from the object's root.
pub fn object_refusals(job: &Json) -> Vec<Refused> {
    let mut found = Vec::new();
    let mut refuse = |pointer: &str, message: String| {
        found.push(Refused {
            pointer: pointer.to_owned(),
            message,
        });
    };
    let name = job["metadata"]["name"].as_str().unwrap_or("");
    let spec = &job["spec"];
    let labels = &spec["template"]["metadata"]["labels"];
    let selector = &spec["selector"];
    if spec["manualSelector"] == true {
        if selector.is_null() {
            refuse("/spec/selector", "Required value".to_owned());
        } else if let Some(matched) = selector["matchLabels"].as_object()
            && selector["matchExpressions"].is_null()
            && matched.iter().any(|(k, v)| labels[k] != *v)
        {
            refuse(
                "/spec/template/metadata/labels",
                "Invalid value: `selector` does not match template `labels`".to_owned(),
            );
        }
    } else {
        // A fresh object's uid is new: no label or selector written before
        // can hold it.
        for key in ["controller-uid", "batch.kubernetes.io/controller-uid"] {
            if !labels[key].is_null() {
                refuse(
                    &format!(
                        "/spec/template/metadata/labels/{}",
                        crate::tree::pointer_segment(key)
                    ),
                    format!(
                        "Invalid value: must be the Job's new uid: remove `{key}` (the API server sets it), or set `manualSelector: true`"
                    ),
                );
            }
        }
        for key in ["job-name", "batch.kubernetes.io/job-name"] {
            if labels[key].as_str().is_some_and(|v| v != name) {
                refuse(
                    &format!(
                        "/spec/template/metadata/labels/{}",
                        crate::tree::pointer_segment(key)
                    ),
                    format!("Invalid value: must be \"{name}\", the Job's name"),
                );
            }
        }
        let generated = |key: &str, value: &Json| match key {
            "job-name" | "batch.kubernetes.io/job-name" => value == name,
            _ => false,
        };
        if let Some(matched) = selector["matchLabels"].as_object()
            && matched.iter().any(|(k, v)| !generated(k, v))
        {
            refuse(
                "/spec/selector",
                "Invalid value: `selector` not auto-generated: remove it (the API server writes it), or set `manualSelector: true`".to_owned(),
            );
        }
    }
    let completions = Defaulted::of(spec).completions;
    if spec["completionMode"] == "Indexed"
        && let Some(last) = completions.filter(|n| *n > 0).map(|n| n - 1)
    {
        let hostname = format!("{name}-{last}");
        if names::dns1123_label(&hostname).is_err() {
            refuse(
                "/metadata/name",
                format!(
                    "Invalid value: \"{name}\": will not able to create pod with invalid DNS label: {hostname}"
                ),
            );
        }
    }
    found
}
