use serde_json::json;

use super::policies::index_count;
use super::*;

fn said(spec: &Json) -> Vec<String> {
    refusals(spec)
        .into_iter()
        .map(|r| format!("{}: {}", r.pointer, r.message))
        .collect()
}

#[test]
fn an_indexed_job_with_parallelism_alone_needs_completions() {
    let pod = json!({"restartPolicy": "Never", "containers": [{"name": "c"}]});
    let with = |spec: Json| {
        let mut spec = spec;
        spec["template"] = json!({ "spec": pod });
        said(&spec)
    };
    assert_eq!(
        with(json!({"completionMode": "Indexed", "parallelism": 2})),
        [
            "/completions: Required value: when completion mode is Indexed (with `parallelism` set, `completions` is not defaulted)"
        ]
    );
    assert!(with(json!({"completionMode": "Indexed"})).is_empty());
    assert!(
        with(json!({"completionMode": "Indexed", "completions": 2, "parallelism": 2})).is_empty()
    );
}

#[test]
fn a_failure_policy_needs_never_and_well_formed_rules() {
    let spec = json!({
        "podFailurePolicy": {"rules": [
            {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [3, 0, 3], "containerName": "x"}},
            {"action": "Ignore"},
            {"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget"}]},
        ]},
        "podReplacementPolicy": "TerminatingOrFailed",
        "template": {"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c"}]}},
    });
    assert_eq!(
        said(&spec),
        [
            "/podFailurePolicy/rules/0/action: Invalid value: \"FailIndex\": requires the backoffLimitPerIndex to be set",
            "/podFailurePolicy/rules/0/onExitCodes/containerName: Invalid value: \"x\": must be one of the container or initContainer names in the pod template",
            "/podFailurePolicy/rules/0/onExitCodes/values/1: Invalid value: 0: must not be 0 for the In operator",
            "/podFailurePolicy/rules/0/onExitCodes/values/2: Duplicate value: 3",
            "/podFailurePolicy/rules/0/onExitCodes/values: Invalid value: [3,0,3]: must be ordered",
            "/podFailurePolicy/rules/1: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
            "/podReplacementPolicy: Unsupported value: \"TerminatingOrFailed\": supported values: \"Failed\"",
            "/template/spec/restartPolicy: Invalid value: \"OnFailure\": only \"Never\" is supported when podFailurePolicy is specified",
        ]
    );
}

#[test]
fn success_policies_count_their_indexes() {
    assert_eq!(index_count("0,2-4", 5), Ok(4));
    assert!(index_count("3,1", 5).is_err());
    assert!(index_count("1-5", 5).is_err());
    assert!(index_count("1-2-3", 5).is_err());
    let spec = json!({
        "completionMode": "Indexed", "completions": 4, "parallelism": 4,
        "successPolicy": {"rules": [{"succeededIndexes": "0-1", "succeededCount": 3}, {}]},
        "template": {"spec": {"restartPolicy": "Never"}},
    });
    assert_eq!(
        said(&spec),
        [
            "/successPolicy/rules/0/succeededCount: Invalid value: 3: must be less than or equal to 2 (the number of indexes in the specified succeededIndexes field)",
            "/successPolicy/rules/1: Required value: at least one of succeededCount or succeededIndexes must be specified",
        ]
    );
}

#[test]
fn a_job_copied_from_a_cluster_keeps_its_old_uid() {
    let job = json!({
        "metadata": {"name": "copied"},
        "spec": {
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "1234"}},
            "template": {"metadata": {"labels": {"batch.kubernetes.io/controller-uid": "1234", "job-name": "copied"}}},
        },
    });
    let said: Vec<String> = object_refusals(&job)
        .into_iter()
        .map(|r| r.pointer)
        .collect();
    assert_eq!(
        said,
        [
            "/spec/template/metadata/labels/batch.kubernetes.io~1controller-uid",
            "/spec/selector"
        ]
    );
    let named = json!({"metadata": {"name": "a"}, "spec": {"selector": {"matchLabels": {"job-name": "a"}}}});
    assert!(object_refusals(&named).is_empty());
}
