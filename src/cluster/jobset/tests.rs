use serde_json::{Value as Json, json};

use super::webhook::refusals;
use super::{defaulted, workload};

fn jobset(spec: &Json) -> Json {
    json!({
        "apiVersion": super::API_VERSION,
        "kind": super::KIND,
        "metadata": { "name": "train", "namespace": "ml" },
        "spec": spec.clone(),
    })
}

fn job(completions: u64) -> Json {
    json!({ "spec": {
        "completions": completions, "parallelism": completions,
        "template": { "spec": { "containers": [{ "name": "trainer", "image": "x" }] } }
    } })
}

#[test]
fn the_webhook_defaults_fill_what_is_missing_and_make_nothing_else() {
    let js = defaulted(&jobset(
        &json!({ "replicatedJobs": [{ "name": "node", "template": job(2) }] }),
    ));
    let spec = &js["spec"];
    assert_eq!(spec["successPolicy"], json!({ "operator": "All" }));
    assert_eq!(
        spec["network"],
        json!({ "enableDNSHostnames": true, "publishNotReadyAddresses": true })
    );
    let rjob = &spec["replicatedJobs"][0]["template"]["spec"];
    assert_eq!(rjob["completionMode"], "Indexed");
    assert_eq!(rjob["template"]["spec"]["restartPolicy"], "OnFailure");
    assert!(spec.get("failurePolicy").is_none(), "{spec}");
    let named = defaulted(&jobset(&json!({
        "replicatedJobs": [{ "name": "node", "template": job(1) }],
        "failurePolicy": { "maxRestarts": 1, "rules": [{ "action": "FailJobSet" }, { "name": "mine", "action": "FailJobSet" }] },
    })));
    let rules = &named["spec"]["failurePolicy"]["rules"];
    assert_eq!(rules[0]["name"], "failurePolicyRule0");
    assert_eq!(rules[1]["name"], "mine");
}

#[test]
fn pods_are_named_and_labelled_by_job_copy_and_index_across_replicated_jobs() {
    let mut value = jobset(&json!({ "replicatedJobs": [
        { "name": "master", "template": job(1) },
        { "name": "worker", "replicas": 2, "template": job(2) },
    ] }));
    value["metadata"]["annotations"] =
        json!({ super::EXCLUSIVE_TOPOLOGY: "topology.kubernetes.io/zone" });
    let made = workload(&value).unwrap();
    let names: Vec<&str> = made.pods.iter().map(|p| p.hostname.as_str()).collect();
    assert_eq!(
        names,
        [
            "train-master-0-0",
            "train-worker-0-0",
            "train-worker-0-1",
            "train-worker-1-0",
            "train-worker-1-1"
        ]
    );
    let last = &made.pods[4];
    assert_eq!(last.labels[super::LABEL_JOB_GLOBAL_INDEX], "2");
    assert_eq!(last.labels[super::LABEL_JOB_INDEX], "1");
    assert_eq!(last.labels[super::LABEL_GLOBAL_REPLICAS], "3");
    assert_eq!(
        last.annotations[super::EXCLUSIVE_TOPOLOGY],
        "topology.kubernetes.io/zone"
    );
    assert!(!last.labels.contains_key(super::EXCLUSIVE_TOPOLOGY));
    assert_eq!(last.spec["subdomain"], "train");
    assert_eq!(made.services[0].name, "train");
    assert!(made.notes.is_empty(), "{:?}", made.notes);
    let services = made.services(&[]);
    assert_eq!(made.dns_names(0, &services), ["train-master-0-0.train"]);
}

#[test]
fn the_webhook_refuses_names_that_grow_too_long_and_references_to_nothing() {
    let long = "a".repeat(50);
    let mut value = jobset(&json!({
        "replicatedJobs": [
            { "name": "node", "template": job(8), "dependsOn": [{ "name": "x", "status": "Complete" }] },
            { "name": long, "template": job(1), "dependsOn": [{ "name": "later", "status": "Ready" }] },
        ],
        "successPolicy": { "operator": "All", "targetReplicatedJobs": ["nowhere"] },
        "failurePolicy": { "rules": [
            { "name": "1bad", "action": "FailJobSet", "onJobFailureReasons": ["OOMKilled"] },
            { "name": "ok", "action": "FailJobSet", "targetReplicatedJobs": ["gone"] },
            { "name": "ok", "action": "FailJobSet" },
        ] },
        "coordinator": { "replicatedJob": "node", "jobIndex": 0, "podIndex": 9 },
    }));
    value = defaulted(&value);
    let found = refusals(&value);
    let at: Vec<&str> = found.iter().map(|r| r.pointer.as_str()).collect();
    assert_eq!(
        at,
        [
            "/spec/replicatedJobs/0/dependsOn",
            "/spec/replicatedJobs/0/dependsOn/0/name",
            "/spec/replicatedJobs/1/name",
            "/spec/replicatedJobs/1/dependsOn/0/name",
            "/spec/successPolicy/targetReplicatedJobs/0",
            "/spec/failurePolicy/rules/0/name",
            "/spec/failurePolicy/rules/0/onJobFailureReasons/0",
            "/spec/failurePolicy/rules/1/targetReplicatedJobs/0",
            "/spec/failurePolicy/rules/2/name",
            "/spec/coordinator/podIndex",
        ],
        "{found:#?}"
    );
    // A name that leaves the pods' names just short enough passes: 63
    // characters with the 6 of `-abcde`.
    let fits = "b".repeat(63 - "-node-0-0-abcde".len());
    let mut ok = jobset(&json!({ "replicatedJobs": [{ "name": "node", "template": job(1) }] }));
    ok["metadata"]["name"] = Json::from(fits.clone());
    assert_eq!(refusals(&defaulted(&ok)), vec![]);
    ok["metadata"]["name"] = Json::from(format!("{fits}b"));
    assert_eq!(refusals(&defaulted(&ok)).len(), 1);
}

#[test]
fn each_release_refuses_what_came_after_it() {
    use super::release::{Release, refusals};
    let value = defaulted(&jobset(&json!({
        "replicatedJobs": [
            { "name": "a", "groupName": "g", "template": job(1) },
            { "name": "b", "template": job(1), "dependsOn": [{ "name": "a" }, { "name": "a", "status": "Ready" }] },
        ],
        "failurePolicy": { "rules": [{ "action": "FailJobSet", "onJobFailureMessagePatterns": ["x"] }] },
        "volumeClaimPolicies": [],
    })));
    let at = |release| -> Vec<String> {
        refusals(&value, release)
            .into_iter()
            .map(|r| r.pointer)
            .collect()
    };
    assert_eq!(
        at(Release::V0_8),
        [
            "/spec/replicatedJobs/0/groupName",
            "/spec/failurePolicy/rules/0/onJobFailureMessagePatterns",
            "/spec/volumeClaimPolicies",
            "/spec/replicatedJobs/1/dependsOn",
            "/spec/replicatedJobs/1/dependsOn/0",
        ]
    );
    assert_eq!(
        at(Release::V0_10),
        [
            "/spec/volumeClaimPolicies",
            "/spec/replicatedJobs/1/dependsOn/0"
        ]
    );
    assert_eq!(at(Release::V0_11), ["/spec/replicatedJobs/1/dependsOn/0"]);
    assert!(at(Release::V0_12).is_empty());
}

#[test]
fn the_job_controller_names_a_failure_by_the_pod_failure_policy() {
    use super::failure::{FailurePolicy, Verdict};
    let spec = json!({
        "failurePolicy": { "maxRestarts": 2, "rules": [
            { "name": "oom", "action": "FailJobSet", "onJobFailureReasons": ["PodFailurePolicy"], "onJobFailureMessagePatterns": ["exit code 137"] },
            { "name": "driver", "action": "RestartJobSetAndIgnoreMaxRestarts", "targetReplicatedJobs": ["driver"] },
        ] },
        "replicatedJobs": [
            { "name": "node", "template": { "spec": { "podFailurePolicy": { "rules": [
                { "action": "Ignore", "onExitCodes": { "operator": "In", "values": [42] } },
                { "action": "FailJob", "onExitCodes": { "containerName": "trainer", "operator": "NotIn", "values": [0, 42] } },
            ] } } } },
            { "name": "driver", "template": { "spec": {} } },
        ],
    });
    let group = super::Group::of(&spec).unwrap();
    let pod = |rjob: &str| crate::cluster::Pod {
        name: format!("js-{rjob}-0-0"),
        hostname: String::new(),
        namespace: "ns".to_owned(),
        role: String::new(),
        labels: serde_json::Map::from_iter([(super::LABEL_REPLICATED_JOB.to_owned(), json!(rjob))]),
        annotations: serde_json::Map::new(),
        spec: json!({}),
        on_failure: String::new(),
        retries: None,
        stage: 0,
    };
    let killed = group.failure(&pod("node"), "trainer", Some(137));
    assert_eq!(killed.reason, "PodFailurePolicy");
    assert_eq!(
        killed.message,
        "Container trainer for pod ns/js-node-0-0 failed with exit code 137 matching FailJob rule at index 1"
    );
    assert!(
        matches!(group.policy.decide(&killed, 0, None).unwrap(), Verdict::Fail(why) if why.contains("rule `oom`"))
    );
    // Ignored by the pod failure policy, a sidecar, a signal: counted
    // against the backoff limit instead.
    for (container, code) in [
        ("trainer", Some(42)),
        ("sidecar", Some(1)),
        ("trainer", None),
    ] {
        let failure = group.failure(&pod("node"), container, code);
        assert_eq!(
            failure.reason, "BackoffLimitExceeded",
            "{container} {code:?}"
        );
        let verdict = group.policy.decide(&failure, 2, None).unwrap();
        assert!(
            matches!(&verdict, Verdict::Fail(why) if why.contains("maxRestarts (2) is reached")),
            "{verdict:?}"
        );
    }
    let counted = group
        .policy
        .decide(&group.failure(&pod("node"), "trainer", Some(1)), 0, None)
        .unwrap();
    assert!(
        matches!(counted, Verdict::Restart { counted: true, .. }),
        "{counted:?}"
    );
    let driver = group.failure(&pod("driver"), "trainer", Some(1));
    assert!(matches!(
        group.policy.decide(&driver, 5, None).unwrap(),
        Verdict::Restart { counted: false, .. }
    ));
    assert_eq!(FailurePolicy::of(&json!({})), None);
}
