use serde_json::{Value as Json, json};

use super::{Success, workload};
use crate::trainer::Release;

fn env(pod: &super::Pod) -> Vec<(String, Json)> {
    pod.containers(false)[0]["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let value = e
                .get("value")
                .cloned()
                .unwrap_or_else(|| e["valueFrom"].clone());
            (e["name"].as_str().unwrap().to_owned(), value)
        })
        .collect()
}

fn names(pod: &super::Pod) -> Vec<String> {
    env(pod).into_iter().map(|(n, _)| n).collect()
}

#[test]
fn an_indexed_jobs_pods_have_their_index_after_their_own_env() {
    let job = json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
        "spec": {"completionMode": "Indexed", "completions": 2, "parallelism": 2,
            "template": {"spec": {"subdomain": "j", "containers": [
                {"name": "c", "command": ["x"], "env": [{"name": "A", "value": "1"}]}]}}}
    });
    let w = workload(&[job], &[], Release::V2_3).unwrap();
    assert_eq!(w.pods.len(), 2);
    assert_eq!(w.pods[1].hostname, "j-1");
    assert_eq!(
        w.pods[1].labels["batch.kubernetes.io/job-completion-index"],
        "1"
    );
    assert_eq!(names(&w.pods[1]), ["A", "JOB_COMPLETION_INDEX"]);
    assert_eq!(w.success, Success::AllPods);
    let mut serial = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"completions": 2}});
    assert!(
        workload(&[serial.clone()], &[], Release::V2_3)
            .unwrap_err()
            .contains("not Indexed")
    );
    serial["spec"]["completionMode"] = json!("Indexed");
    assert!(
        workload(&[serial], &[], Release::V2_3)
            .unwrap_err()
            .contains("1 of its 2 pods")
    );
}

#[test]
fn a_pytorchjob_gets_the_operators_env_appended_in_its_order() {
    let template = |name: &str| {
        json!({"spec": {"containers": [{"name": name, "command": ["torchrun"],
            "env": [{"name": "OWN", "value": "x"}]}]}})
    };
    let job = json!({
        "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "p", "namespace": "ml"},
        "spec": {"nprocPerNode": "2", "pytorchReplicaSpecs": {
            "Worker": {"replicas": 2, "template": template("pytorch")},
            "Master": {"replicas": 1, "restartPolicy": "Never", "template": template("pytorch")}}}
    });
    let w = workload(&[job], &[], Release::V2_3).unwrap();
    let pods: Vec<&str> = w.pods.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(pods, ["p-master-0", "p-worker-0", "p-worker-1"]);
    assert_eq!(
        names(&w.pods[1]),
        [
            "OWN",
            "PYTHONUNBUFFERED",
            "MASTER_PORT",
            "PET_MASTER_PORT",
            "MASTER_ADDR",
            "PET_MASTER_ADDR",
            "WORLD_SIZE",
            "RANK",
            "PET_NODE_RANK",
            "PET_NPROC_PER_NODE",
            "PET_NNODES",
        ]
    );
    let vars = env(&w.pods[1]);
    let get = |n: &str| vars.iter().find(|(k, _)| k == n).unwrap().1.clone();
    assert_eq!(get("RANK"), "1");
    assert_eq!(get("WORLD_SIZE"), "6");
    assert_eq!(get("MASTER_PORT"), "23456");
    assert_eq!(get("MASTER_ADDR"), "p-master-0");
    assert_eq!(w.pods[0].labels["training.kubeflow.org/job-role"], "master");
    assert_eq!(w.pods[0].spec["restartPolicy"], "Never");
    assert_eq!(w.pods[1].spec["restartPolicy"], "OnFailure");
    // The webhook's default port, and a Service of each pod's name.
    assert_eq!(
        w.pods[1].containers(false)[0]["ports"][0]["containerPort"],
        23456
    );
    assert!(
        w.services
            .iter()
            .zip(&w.pods)
            .all(|(s, p)| s.name == p.name && s.selects(p))
    );
    assert_eq!(w.success, Success::Pod("p-master-0".to_owned()));
}

#[test]
fn an_elastic_pytorchjob_meets_at_worker_0_and_ends_with_any_worker() {
    let job = json!({
        "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "e"},
        "spec": {"elasticPolicy": {"minReplicas": 2, "maxReplicas": 4,
                "rdzvConf": [{"key": "a", "value": "1"}, {"key": "b", "value": "2"}]},
            "pytorchReplicaSpecs": {"Worker": {"replicas": 2, "template":
                {"spec": {"containers": [{"name": "pytorch", "command": ["torchrun"]}]}}}}}
    });
    let w = workload(&[job], &[], Release::V2_3).unwrap();
    let vars = env(&w.pods[0]);
    let get = |n: &str| vars.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    assert_eq!(get("PET_RDZV_ENDPOINT").unwrap(), "e-worker-0:23456");
    assert_eq!(get("PET_RDZV_BACKEND").unwrap(), "c10d");
    assert_eq!(get("PET_NNODES").unwrap(), "2:4");
    assert_eq!(get("PET_RDZV_CONF").unwrap(), "a=1,b=2");
    assert_eq!(get("PET_NPROC_PER_NODE").unwrap(), "auto");
    assert_eq!(get("RANK"), None);
    assert_eq!(w.success, Success::AnyPod);
}

#[test]
fn a_trainjob_runs_its_runtime_with_its_trainer_and_patch() {
    let job = json!({
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "t"},
        "spec": {"runtimeRef": {"name": "torch-distributed"},
            "trainer": {"image": "i", "command": ["torchrun", "a.py"], "numNodes": 2, "numProcPerNode": 2,
                "env": [{"name": "X", "value": "1"}]},
            "runtimePatches": [{"manager": "m", "trainingRuntimeSpec": {"template": {"spec": {
                "replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {
                    "containers": [{"name": "node", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
                    "volumes": [{"name": "v", "emptyDir": {}}]}}}}}]}}}}]}
    });
    let w = workload(&[job], &[], Release::V2_3).unwrap();
    let pods: Vec<&str> = w.pods.iter().map(|p| p.hostname.as_str()).collect();
    assert_eq!(pods, ["t-node-0-0", "t-node-0-1"]);
    let node = &w.pods[1].containers(false)[0];
    assert_eq!(node["image"], "i");
    assert_eq!(node["volumeMounts"][0]["mountPath"], "/v");
    assert_eq!(w.pods[1].spec["subdomain"], "t");
    assert_eq!(w.pods[1].labels["jobset.sigs.k8s.io/jobset-name"], "t");
    assert_eq!(
        names(&w.pods[1]),
        [
            "X",
            "PET_NNODES",
            "PET_NPROC_PER_NODE",
            "PET_NODE_RANK",
            "PET_MASTER_ADDR",
            "PET_MASTER_PORT",
            "JOB_COMPLETION_INDEX"
        ]
    );
    let vars = env(&w.pods[1]);
    assert_eq!(vars[4].1, "t-node-0-0.t");
    assert!(w.services[0].selects(&w.pods[0]));
}

#[test]
fn a_patch_merges_keyed_lists_by_their_key_and_replaces_others() {
    let mut base = json!({"containers": [{"name": "a", "env": [{"name": "X", "value": "1"}]}],
        "tolerations": [{"key": "k"}]});
    super::trainjob::merge(
        &mut base,
        &json!({"containers": [{"name": "a", "env": [{"name": "X", "value": "2"}, {"name": "Y", "value": "3"}]},
            {"name": "b"}], "tolerations": [{"key": "other"}]}),
        "",
    );
    assert_eq!(
        base["containers"][0]["env"],
        json!([{"name": "X", "value": "2"}, {"name": "Y", "value": "3"}])
    );
    assert_eq!(base["containers"][1]["name"], "b");
    assert_eq!(base["tolerations"], json!([{"key": "other"}]));
}

#[test]
fn a_huge_job_is_counted_not_made() {
    let job = json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
        "spec": {"completionMode": "Indexed", "completions": 2_147_483_647u64,
            "parallelism": 2_147_483_647u64,
            "template": {"spec": {"containers": [{"name": "c", "command": ["x"]}]}}}
    });
    let w = workload(&[job], &[], Release::V2_3).unwrap();
    assert_eq!(w.pods.len(), super::MADE_AT_MOST);
    assert_eq!(w.total, 2_147_483_647);
}

#[test]
fn jobsets_network_claims_and_restart_policy_shape_a_trainjobs_pods() {
    let runtime = |network: Json| {
        json!({
            "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
            "metadata": {"name": "r"},
            "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {
                "network": network,
                "volumeClaimPolicies": [{"templates": [{"metadata": {"name": "initializer"}}]}],
                "replicatedJobs": [{"name": "node", "template": {
                    "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                    "spec": {"template": {"spec": {"containers": [{"name": "node", "image": "i",
                        "volumeMounts": [{"name": "initializer", "mountPath": "/workspace"}]}]}}}}}]}}}
        })
    };
    let job = json!({
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "t"},
        "spec": {"runtimeRef": {"name": "r"}, "trainer": {"numNodes": 2}}
    });
    let named = runtime(json!({"subdomain": "peers"}));
    let w = workload(&[job.clone(), named], &[], Release::V2_3).unwrap();
    let pod = &w.pods[1];
    // The JobSet's domain and Service follow `network.subdomain`; the torch
    // plugin's address does not.
    assert_eq!(pod.spec["subdomain"], "peers");
    assert_eq!(w.services[0].name, "peers");
    assert_eq!(env(pod)[3].1, "t-node-0-0.t");
    // The claim of `volumeClaimPolicies`, named after the JobSet.
    assert_eq!(pod.spec["volumes"][0]["name"], "initializer");
    assert_eq!(
        pod.spec["volumes"][0]["persistentVolumeClaim"]["claimName"],
        "initializer-t"
    );
    // JobSet's webhook defaults the restart policy.
    assert_eq!(pod.spec["restartPolicy"], "OnFailure");
    // No DNS names at all.
    let w = workload(
        &[job, runtime(json!({"enableDNSHostnames": false}))],
        &[],
        Release::V2_3,
    )
    .unwrap();
    assert!(w.services.is_empty());
    assert!(w.pods[0].spec.get("subdomain").is_none());
}
