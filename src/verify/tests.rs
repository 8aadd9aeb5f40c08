//! Unit tests of `--verify`: each contract catches what it must, and trainc-shaped objects pass.
use super::*;

fn job() -> Value {
    serde_json::json!({
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "demo"},
        "spec": {
            "nprocPerNode": "2",
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": {"spec": {"containers": [{"name": "pytorch", "image": "x:1"}]}}},
                "Worker": {"replicas": 3, "restartPolicy": "OnFailure", "template": {"spec": {"containers": [{"name": "pytorch", "image": "x:1"}]}}}
            }
        }
    })
}

/// Every needle appears in some webhook problem of `value`.
fn assert_webhook_finds(value: &Value, needles: &[&str]) {
    let messages: Vec<String> = problems(value)
        .into_iter()
        .filter(|p| p.contract == super::Contract::Webhook)
        .map(|p| p.message)
        .collect();
    for needle in needles {
        assert!(
            messages.iter().any(|m| m.contains(needle)),
            "{needle}: {messages:?}"
        );
    }
}

fn problems(value: &Value) -> Vec<Problem> {
    verify_values(&[value], ApiLevel::V2_3)
}

#[test]
fn a_valid_job_passes() {
    assert_eq!(problems(&job()), vec![]);
}

#[test]
fn schema_violations_are_found() {
    let mut bad = job();
    bad["spec"]["nprocPerNode"] = serde_json::json!(2); // must be a string
    bad["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["imagee"] =
        serde_json::json!("x");
    bad["metadata"]["labelz"] = serde_json::json!({});
    let found = problems(&bad);
    let paths: Vec<&str> = found.iter().map(|p| p.path.as_str()).collect();
    assert!(paths.contains(&"/spec/nprocPerNode"), "{found:?}");
    assert!(
        paths
            .iter()
            .any(|p| p.starts_with("/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0")),
        "{found:?}"
    );
    assert!(
        paths.contains(&"/metadata/labelz"),
        "metadata is checked against ObjectMeta, each unknown field at its key: {found:?}"
    );
    assert!(
        found
            .iter()
            .any(|p| p.message == "unknown field `labelz` (did you mean `labels`?)"),
        "{found:?}"
    );
    assert!(found.iter().all(|p| p.contract == super::Contract::Schema));
}

#[test]
fn webhook_rules_are_found() {
    let mut bad = job();
    bad["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = serde_json::json!(2);
    bad["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["name"] =
        serde_json::json!("main");
    bad["spec"]["pytorchReplicaSpecs"]["Chief"] =
        bad["spec"]["pytorchReplicaSpecs"]["Master"].clone();
    bad["spec"]["elasticPolicy"] = serde_json::json!({"nProcPerNode": 2});
    bad["metadata"]["name"] = serde_json::json!("a".repeat(60));
    assert_webhook_finds(
        &bad,
        &[
            "the Master must have `replicas: 1`",
            "no container named `pytorch`",
            "`Chief` is neither",
            "elasticPolicy.nProcPerNode",
        ],
    );
    // The pod names the operator derives: no webhook rule, its Service
    // create fails.
    assert!(
        problems(&bad).iter().any(
            |p| p.contract == super::Contract::Operator && p.message.contains("longer than 63")
        ),
        "{:?}",
        problems(&bad)
    );
}

fn trainjob() -> Value {
    serde_json::json!({
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "demo"},
        "spec": {
            "runtimeRef": {"name": "torch-distributed"},
            "trainer": {"image": "x:1", "numNodes": 2, "numProcPerNode": 4, "env": [{"name": "A", "value": "1"}]},
            "runtimePatches": [{"manager": "trainc.dev/trainc", "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
                {"name": "node", "template": {"spec": {"template": {"spec": {"containers": [{"name": "node"}]}}}}}
            ]}}}}]
        }
    })
}

#[test]
fn a_valid_trainjob_passes_at_its_level_only() {
    assert_eq!(problems(&trainjob()), vec![]);
    // runtimePatches do not exist on v2.1, and numProcPerNode "auto" not on v2.2+.
    assert!(!verify_values(&[&trainjob()], ApiLevel::V2_1).is_empty());
    let mut auto = trainjob();
    auto["spec"]["trainer"]["numProcPerNode"] = serde_json::json!("auto");
    assert!(
        problems(&auto)
            .iter()
            .any(|p| p.path == "/spec/trainer/numProcPerNode")
    );
}

#[test]
fn trainjob_webhook_rules_are_found() {
    let mut bad = trainjob();
    bad["spec"]["trainer"]["env"][0]["name"] = serde_json::json!("PET_NNODES");
    bad["spec"]["runtimePatches"][0]["manager"] = serde_json::json!("trainc");
    bad["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
        [0]["template"]["spec"]["template"]["spec"]["containers"][0]["env"] =
        serde_json::json!([{"name": "B", "value": "2"}]);
    bad["metadata"]["name"] = serde_json::json!("a".repeat(60));
    assert_webhook_finds(
        &bad,
        &[
            "`PET_NNODES` is reserved",
            "not a domain-prefixed path",
            "belongs in `trainer.env`",
            "longer than 63",
        ],
    );
}

#[test]
fn int32_and_int64_fields_are_bounded() {
    let mut bad = job();
    bad["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = serde_json::json!(3_000_000_000_u64);
    bad["spec"]["runPolicy"] = serde_json::json!({
        "backoffLimit": 2_147_483_648_u64,
        "ttlSecondsAfterFinished": -2_147_483_649_i64,
        "activeDeadlineSeconds": 9_223_372_036_854_775_807_i64,
    });
    let found = problems(&bad);
    let paths: Vec<&str> = found.iter().map(|p| p.path.as_str()).collect();
    assert!(
        paths.contains(&"/spec/pytorchReplicaSpecs/Worker/replicas"),
        "{found:?}"
    );
    assert!(paths.contains(&"/spec/runPolicy/backoffLimit"), "{found:?}");
    assert!(
        paths.contains(&"/spec/runPolicy/ttlSecondsAfterFinished"),
        "{found:?}"
    );
    assert!(
        !paths.contains(&"/spec/runPolicy/activeDeadlineSeconds"),
        "an int64 takes i64::MAX: {found:?}"
    );
    let mut big = trainjob();
    big["spec"]["trainer"]["numNodes"] = serde_json::json!(2_147_483_648_u64);
    assert!(
        problems(&big)
            .iter()
            .any(|p| p.path == "/spec/trainer/numNodes"),
    );
    // A tighter bound of the schema's own stays: activeDeadlineSeconds >= 1.
    let mut zero = trainjob();
    zero["spec"]["activeDeadlineSeconds"] = serde_json::json!(0);
    assert!(
        problems(&zero)
            .iter()
            .any(|p| p.path == "/spec/activeDeadlineSeconds"),
    );
}

#[test]
fn built_in_kinds_are_checked_and_other_kinds_are_not_checked() {
    let secret = |data: Value| serde_json::json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}, "data": data});
    assert_eq!(problems(&secret(serde_json::json!({"k": "aGk="}))), vec![]);
    let found = problems(&secret(serde_json::json!({"k": "hunter2"})));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].path, "/data/k");
    assert!(found[0].message.contains("not base64"), "{found:?}");
    let typo = problems(&serde_json::json!({
        "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "x"}, "secret": []
    }));
    assert_eq!(
        typo[0].message,
        "unknown field `secret` (did you mean `secrets`?)"
    );
    let queue = problems(&serde_json::json!({
        "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue", "metadata": {"name": "q"}
    }));
    assert_eq!(queue[0].contract, super::Contract::Unchecked);
    let removed = problems(&serde_json::json!({
        "apiVersion": "batch/v1beta1", "kind": "CronJob", "metadata": {"name": "c"}
    }));
    assert_eq!(removed[0].contract, super::Contract::Unserved);
    assert!(
        removed[0]
            .message
            .ends_with("it serves CronJob as `batch/v1`"),
        "{removed:?}"
    );
    let misspelt = problems(&serde_json::json!({
        "apiVersion": "v1", "kind": "Secrets", "metadata": {"name": "s"}
    }));
    assert!(
        misspelt[0].message.ends_with("did you mean `Secret`?"),
        "{misspelt:?}"
    );
}

fn service(name: &str, selector: &Value, target_port: &Value) -> Value {
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"selector": selector, "ports": [{"name": "tb", "port": 6006, "targetPort": target_port}]}
    })
}

fn operator_messages(values: &[&Value]) -> Vec<String> {
    same_together_from_kept(values);
    verify_values(values, ApiLevel::V2_3)
        .into_iter()
        .filter(|p| p.contract == super::Contract::Operator)
        .map(|p| p.message)
        .collect()
}

#[test]
fn a_service_named_after_a_trainjob_takes_jobsets_headless_service() {
    let job = trainjob();
    let selector = serde_json::json!({"jobset.sigs.k8s.io/jobset-name": "demo"});
    let stealing = service("demo", &selector, &serde_json::json!(6006));
    let found = operator_messages(&[&stealing, &job]);
    assert!(
        found.iter().any(|m| m.contains("headless Service `demo`")),
        "{found:?}"
    );
    let named_port = service("demo-ports", &selector, &serde_json::json!("tb"));
    let found = operator_messages(&[&named_port, &job]);
    assert!(
        found.iter().any(|m| m.contains("no port of this name")),
        "{found:?}"
    );
    let fine = service("demo-ports", &selector, &serde_json::json!(6006));
    assert_eq!(operator_messages(&[&fine, &job]), Vec::<String>::new());
    // A runtime among the objects whose `node` container names the port.
    let mut on_own = job.clone();
    on_own["spec"]["runtimeRef"] = serde_json::json!({"name": "demo", "kind": "TrainingRuntime"});
    let runtime = serde_json::json!({
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {"name": "demo"},
        "spec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}}, "spec": {"template": {"spec": {
            "containers": [{"name": "node", "image": "x:1", "ports": [{"name": "tb", "containerPort": 6006}]}]
        }}}}}]}}}
    });
    assert_eq!(
        operator_messages(&[&named_port, &on_own, &runtime]),
        Vec::<String>::new()
    );
}

#[test]
fn a_pytorchjob_service_targets_declared_port_names_under_a_free_name() {
    let mut job = job();
    job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["ports"] =
        serde_json::json!([{"name": "tb", "containerPort": 6006}]);
    let selector = serde_json::json!({
        "training.kubeflow.org/job-name": "demo",
        "training.kubeflow.org/job-role": "master",
    });
    for target in [serde_json::json!(6006), serde_json::json!("tb")] {
        let fine = service("demo-ports", &selector, &target);
        assert_eq!(operator_messages(&[&fine, &job]), Vec::<String>::new());
    }
    // A number reaches whatever listens on it; a name must be declared.
    let by_number = service("demo-ports", &selector, &serde_json::json!(9090));
    assert_eq!(operator_messages(&[&by_number, &job]), Vec::<String>::new());
    let undeclared = service("demo-ports", &selector, &serde_json::json!("metrics"));
    let found = operator_messages(&[&undeclared, &job]);
    assert!(
        found.iter().any(|m| m.contains("does not declare")),
        "{found:?}"
    );
    let colliding = service("demo-worker-2", &selector, &serde_json::json!(6006));
    let found = operator_messages(&[&colliding, &job]);
    assert!(found.iter().any(|m| m.contains("collide")), "{found:?}");
}

#[test]
fn jobset_counts_the_random_pod_suffix() {
    // `<49 chars>-node-0-1` is 58 characters: a valid hostname, but JobSet
    // checks `<...>-abcde`, 64.
    let mut long = trainjob();
    long["metadata"]["name"] = serde_json::json!("a".repeat(49));
    assert_webhook_finds(&long, &["longer than 63"]);
    long["metadata"]["name"] = serde_json::json!("a".repeat(48));
    assert!(
        problems(&long)
            .iter()
            .all(|p| p.contract != super::Contract::Webhook)
    );
}

/// A Job's pods get names only under a headless Service of their subdomain
/// that selects them and publishes them before they are ready.
#[test]
fn a_jobs_subdomain_needs_a_headless_service_that_selects_its_pods() {
    let labels = serde_json::json!({"app.kubernetes.io/name": "demo"});
    let job = serde_json::json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "demo"},
        "spec": {
            "completionMode": "Indexed",
            "completions": 2,
            "parallelism": 2,
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "subdomain": "demo",
                    "restartPolicy": "Never",
                    "containers": [{"name": "trainer", "image": "x"}]
                }
            }
        }
    });
    let headless = |selector: &Value, publish: bool| {
        let mut s = service("demo", selector, &serde_json::json!(29500));
        s["spec"]["clusterIP"] = serde_json::json!("None");
        s["spec"]["publishNotReadyAddresses"] = serde_json::json!(publish);
        s
    };
    assert_eq!(
        operator_messages(&[&headless(&labels, true), &job]),
        Vec::<String>::new()
    );
    let found = operator_messages(&[&job]);
    assert!(
        found.iter().any(|m| m.contains("no Service `demo`")),
        "{found:?}"
    );
    let other = serde_json::json!({"app.kubernetes.io/name": "other"});
    let found = operator_messages(&[&headless(&other, false), &job]);
    assert!(
        found.iter().any(|m| m.contains("does not select")),
        "{found:?}"
    );
    assert!(
        found.iter().any(|m| m.contains("before they are ready")),
        "{found:?}"
    );
    let found = operator_messages(&[&service("demo", &labels, &serde_json::json!(29500)), &job]);
    assert!(
        found.iter().any(|m| m.contains("not headless")),
        "{found:?}"
    );
}

/// The API server's rules on names and paths, in every place a pod spec
/// lives: a built-in workload's template, a Pod's own spec, an operator's
/// template (whose pods it rejects), a TrainJob's patch; and any object's
/// name and namespace.
#[test]
fn names_and_paths_the_api_server_rejects_are_found_in_every_pod_spec() {
    let with = |value: &Value, contract: super::Contract| -> Vec<(String, String)> {
        problems(value)
            .into_iter()
            .filter(|p| p.contract == contract)
            .map(|p| (p.path, p.message))
            .collect()
    };
    let at = |value: &Value| with(value, super::Contract::ApiServer);
    // An operator's template is its to turn into pods: the API server
    // admits the object and refuses the pods.
    let made = |value: &Value| with(value, super::Contract::Operator);
    let plain = serde_json::json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "a/b", "namespace": "team\nx"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "volumes": [{"name": "../up", "emptyDir": {}}],
            "containers": [{"name": "main", "image": "x:1",
                "volumeMounts": [{"name": "../up", "mountPath": "/u", "subPath": "/etc"}]}]}}}
    });
    let found = at(&plain);
    let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/metadata/name",
            "/metadata/namespace",
            "/spec/template/spec/volumes/0/name",
            "/spec/template/spec/containers/0/volumeMounts/0/subPath",
        ],
        "{found:?}"
    );
    assert!(
        found[0].1.contains("is not a DNS-1123 subdomain"),
        "{found:?}"
    );
    let pod = serde_json::json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": []}
    });
    assert_eq!(
        at(&pod),
        [(
            "/spec/containers".to_owned(),
            "a pod needs at least one container; `containers` is empty".to_owned()
        )]
    );
    let mut operator = job();
    operator["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["hostname"] =
        serde_json::json!("a.b");
    assert_eq!(at(&operator), []);
    let found = made(&operator);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].0,
        "/spec/pytorchReplicaSpecs/Worker/template/spec/hostname"
    );
    assert!(
        found[0].1.ends_with(
            "the API server admits the PyTorchJob but rejects the pods its operator makes from this template"
        ),
        "{found:?}"
    );
    let trainjob = serde_json::json!({
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": "t"},
        "spec": {"runtimeRef": {"name": "torch-distributed"},
            "runtimePatches": [{"manager": "trainc.dev/trainc", "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
                {"name": "node", "template": {"spec": {"template": {"spec": {
                    "containers": [{"name": "node", "volumeMounts": [{"name": "data", "mountPath": "/d", "subPath": "../x"}]}]}}}}}
            ]}}}}]}
    });
    let found = made(&trainjob);
    assert_eq!(
        found.len(),
        1,
        "a patch may mount the runtime's volumes: {found:?}"
    );
    assert!(
        found[0].0.ends_with("/containers/0/volumeMounts/0/subPath"),
        "{found:?}"
    );
    let config = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
        "data": {"../../k": "v", "ok.yaml": "v"}
    });
    let found = at(&config);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "/data/..~1..~1k");
    // A role's name may hold `:`; RBAC is not held to DNS names.
    let role = serde_json::json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "system:aggregate-to-edit"}, "rules": []
    });
    assert_eq!(at(&role), []);
}

#[test]
fn each_training_operator_release_admits_by_its_own_rules() {
    use crate::cluster::pytorchjob::Release;
    let at = |value: &Value, operator| {
        let releases = super::Releases {
            operator,
            ..super::Releases::default()
        };
        verify_at(&[value], ApiLevel::V2_3, releases, &[])
    };
    // A Master with `replicas` unset: v1.7's controller takes the default,
    // the webhook of v1.8 and v1.9 wants it written.
    let mut unset = job();
    unset["spec"]["pytorchReplicaSpecs"]["Master"]
        .as_object_mut()
        .unwrap()
        .remove("replicas");
    assert_eq!(at(&unset, Release::V1_7), vec![]);
    for release in [Release::V1_8, Release::V1_9] {
        let found = at(&unset, release);
        assert_eq!(found.len(), 1, "{release:?}: {found:?}");
        assert_eq!(found[0].contract, super::Contract::Webhook);
    }
    // An elastic job without Workers and Workers at 0: v1.9 only.
    let mut elastic = job();
    elastic["spec"]["elasticPolicy"] = serde_json::json!({"rdzvBackend": "c10d"});
    elastic["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 0.into();
    assert_eq!(at(&elastic, Release::V1_9).len(), 1);
    elastic["spec"]["pytorchReplicaSpecs"]
        .as_object_mut()
        .unwrap()
        .remove("Worker");
    assert_eq!(at(&elastic, Release::V1_9).len(), 1);
    assert_eq!(at(&elastic, Release::V1_8), vec![]);
    // v1.7 refuses in its controller: the same rule, an `operator` problem.
    let mut two = job();
    two["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = 2.into();
    let found = at(&two, Release::V1_7);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].contract, super::Contract::Operator);
    assert!(found[0].message.contains("FailedValidation"), "{found:?}");
}

/// The checks of objects together find the same problems in what
/// [`super::objects::kept`] keeps of the objects as in the whole objects,
/// and the same runtimes among them.
fn same_together_from_kept(values: &[&Value]) {
    let kept: Vec<Value> = values
        .iter()
        .map(|v| super::objects::kept((*v).clone()).unwrap_or(Value::Null))
        .collect();
    let kept: Vec<&Value> = kept.iter().collect();
    let mut whole = Vec::new();
    super::objects::check(values, &mut whole);
    assert!(
        whole.iter().all(|p| p.index.is_some()),
        "every problem of objects together names its object: {whole:?}"
    );
    let mut from_kept = Vec::new();
    super::objects::check(&kept, &mut from_kept);
    assert_eq!(from_kept, whole);
    let names = |values: &[&Value]| -> Vec<String> {
        super::runtimes::given(values, &[])
            .iter()
            .map(|r| format!("{r:?}"))
            .collect()
    };
    assert_eq!(names(&kept), names(values));
}

#[test]
fn kept_is_what_the_checks_read() {
    // Every golden build's objects, and each build's jobs beside every
    // other's Services (their names and selectors meet other jobs).
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("golden");
    let mut values = Vec::new();
    for case in std::fs::read_dir(root).unwrap() {
        for file in std::fs::read_dir(case.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|e| e == "yaml") {
                let text = std::fs::read_to_string(&path).unwrap();
                let id = crate::source::Sources::new().add("golden", String::new());
                let documents = crate::parse::parse_yaml_stream(id, &text, 64, 1000).unwrap();
                values.extend(documents.iter().map(crate::tree::Node::to_json));
            }
        }
    }
    assert!(values.len() > 50, "{}", values.len());
    let values: Vec<&Value> = values.iter().collect();
    same_together_from_kept(&values);
}
