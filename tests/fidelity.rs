//! The objects trainc builds run the way the spec reads on the operators it
//! targets: one test per operator behaviour that a schema-valid object could
//! still get wrong. Each builds a spec with `--verify` and reads the objects
//! back; the upstream facts are cited in the code that encodes them
//! (`src/derived.rs`, `src/render/`, `src/validate/rules/`).

use serde_json::Value;

use crate::support::{run_with_stdin, text};

/// `trainc build --verify ARGS -` with `spec` (TOML) on stdin: the objects, by kind.
fn build(spec: &str, args: &[&str]) -> Vec<Value> {
    let (status, stdout, stderr) = build_raw(spec, args);
    assert_eq!(status, 0, "{stderr}");
    serde_saphyr::from_str_multiple(&stdout).expect("trainc writes YAML")
}

fn build_raw(spec: &str, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["build", "--verify"];
    all.extend_from_slice(args);
    all.push("-");
    let output = run_with_stdin(
        std::path::Path::new(env!("CARGO_BIN_EXE_trainc")),
        &all,
        spec.as_bytes(),
    );
    (
        output.status.code().unwrap(),
        text(&output.stdout),
        text(&output.stderr),
    )
}

fn of_kind<'a>(objects: &'a [Value], kind: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in {objects:#?}"))
}

const BASE: &str = r#"
name = "mnist"
image = "ghcr.io/acme/train:1.0"
script = "/app/train.py"
replicas = 2
"#;

#[test]
fn the_ports_service_never_takes_an_operator_name() {
    let spec = format!("{BASE}\n[ports]\ntensorboard = 6006\n");
    for args in [&["--target", "pytorchjob"][..], &["--target", "trainjob"]] {
        let objects = build(&spec, args);
        let service = of_kind(&objects, "Service");
        // JobSet's headless Service for a TrainJob is `mnist`; the Training
        // Operator's are `mnist-master-0` and `mnist-worker-0`.
        assert_eq!(service["metadata"]["name"], "mnist-ports", "{args:?}");
        assert_eq!(service["spec"]["ports"][0]["targetPort"], 6006);
    }
    let objects = build(&spec, &[]);
    let master = &of_kind(&objects, "PyTorchJob")["spec"]["pytorchReplicaSpecs"]["Master"];
    let ports = &master["template"]["spec"]["containers"][0]["ports"];
    assert!(
        ports
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["containerPort"] == 6006),
        "the rank-0 container declares the exposed port: {ports}"
    );
}

#[test]
fn kueue_and_volcano_queues_are_kept_apart() {
    let spec = format!(
        "{BASE}\n[scheduling]\nqueue = \"team-a\"\nschedulerName = \"volcano\"\ngang = true\n"
    );
    let objects = build(&spec, &[]);
    let job = of_kind(&objects, "PyTorchJob");
    assert_eq!(
        job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"],
        "team-a"
    );
    let policy = &job["spec"]["runPolicy"]["schedulingPolicy"];
    assert_eq!(policy["minAvailable"], 2);
    assert!(
        policy.get("queue").is_none(),
        "a Kueue LocalQueue is no Volcano Queue: {policy}"
    );
    let spec = format!("{BASE}\n[scheduling]\nvolcanoQueue = \"research\"\n");
    let objects = build(&spec, &[]);
    let policy = &of_kind(&objects, "PyTorchJob")["spec"]["runPolicy"]["schedulingPolicy"];
    assert_eq!(policy, &serde_json::json!({"queue": "research"}));
}

#[test]
fn kueue_manages_trainjobs_at_every_api_level() {
    let spec = format!(
        "{BASE}\ntarget = \"trainjob\"\n[scheduling]\nqueue = \"team-a\"\nworkloadPriorityClass = \"urgent\"\n"
    );
    for level in ["v2.2", "v2.1"] {
        let objects = build(&spec, &["--api-level", level]);
        let labels = &of_kind(&objects, "TrainJob")["metadata"]["labels"];
        assert_eq!(labels["kueue.x-k8s.io/queue-name"], "team-a", "{level}");
        assert_eq!(labels["kueue.x-k8s.io/priority-class"], "urgent", "{level}");
    }
}

#[test]
fn a_namespaced_training_runtime_can_be_named() {
    let spec = format!(
        "{BASE}\ntarget = \"trainjob\"\n[trainjob]\nruntime = \"torch-cache\"\nruntimeKind = \"TrainingRuntime\"\n"
    );
    let objects = build(&spec, &[]);
    assert_eq!(
        of_kind(&objects, "TrainJob")["spec"]["runtimeRef"],
        serde_json::json!({"name": "torch-cache", "apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime"})
    );
}

#[test]
fn torchrun_gets_the_process_count_on_every_training_operator_version() {
    // Training Operator v1.7 sets PET_NPROC_PER_NODE only on a job with a
    // Master: an elastic job of workers depends on the flag.
    let spec = r#"
name = "mnist"
image = "ghcr.io/acme/train:1.0"
module = "acme.train"
replicas = "2:4"
nProcPerNode = "gpu"
[resources]
gpus = 4
"#;
    let objects = build(spec, &[]);
    let job = of_kind(&objects, "PyTorchJob");
    let worker = &job["spec"]["pytorchReplicaSpecs"]["Worker"];
    assert_eq!(
        worker["template"]["spec"]["containers"][0]["command"],
        serde_json::json!(["torchrun", "--nproc_per_node=4", "-m", "acme.train"])
    );
    assert_eq!(job["spec"]["nprocPerNode"], "4");
    // A TrainJob's runtime resolves the count into PET_NPROC_PER_NODE itself.
    let spec = format!("{BASE}\ntarget = \"trainjob\"\nnProcPerNode = 2\n");
    let objects = build(&spec, &[]);
    let trainer = &of_kind(&objects, "TrainJob")["spec"]["trainer"];
    assert_eq!(
        trainer["command"],
        serde_json::json!(["torchrun", "/app/train.py"])
    );
    assert_eq!(trainer["numProcPerNode"], 2);
}

#[test]
fn trainer_v2_0_gets_pod_spec_overrides() {
    let spec = format!(
        "{BASE}\ntarget = \"trainjob\"\n[resources]\nshm = \"1Gi\"\n[labels]\nteam = \"a\"\n"
    );
    let (status, stdout, stderr) = build_raw(&spec, &["--api-level", "v2.0"]);
    assert_eq!(status, 0, "{stderr}");
    let words: Vec<&str> = stderr.split_whitespace().filter(|w| *w != "│").collect();
    assert!(
        words
            .join(" ")
            .contains("reach the TrainJob and its JobSet but not the pods"),
        "{stderr}"
    );
    let objects: Vec<Value> = serde_saphyr::from_str_multiple(&stdout).unwrap();
    let job = &of_kind(&objects, "TrainJob")["spec"];
    assert_eq!(job["labels"]["team"], "a");
    let overrides = &job["podSpecOverrides"][0];
    assert_eq!(
        overrides["targetJobs"],
        serde_json::json!([{"name": "node"}])
    );
    assert_eq!(overrides["volumes"][0]["name"], "trainc-shm");
    assert!(job.get("runtimePatches").is_none() && job.get("podTemplateOverrides").is_none());
}

#[test]
fn an_etcd_rendezvous_points_at_etcd_not_at_the_first_worker() {
    let spec = r#"
name = "mnist"
image = "ghcr.io/acme/train:1.0"
script = "/app/train.py"
replicas = "2:4"
[elastic]
rdzvBackend = "etcd-v2"
rdzvEndpoint = "etcd.infra:2379"
"#;
    let objects = build(spec, &[]);
    let policy = &of_kind(&objects, "PyTorchJob")["spec"]["elasticPolicy"];
    assert_eq!(policy["rdzvHost"], "etcd.infra");
    assert_eq!(policy["rdzvPort"], 2379);
    let (status, stdout, _) = build_raw(
        &spec.replace("rdzvEndpoint = \"etcd.infra:2379\"\n", ""),
        &[],
    );
    assert_eq!(
        (status, stdout.as_str()),
        (1, ""),
        "etcd without a server is an error"
    );
}

/// Trainer v2.0 takes a numeric `numProcPerNode` from the requests, and a
/// missing requests map gives 1 (`plugins/torch/torch.go`
/// `calculateNumProcPerNode`): limits alone get equal requests, so 4 runs 4.
#[test]
fn trainer_v2_0_runs_the_process_count_with_limits_alone() {
    let spec = format!(
        "{BASE}\ntarget = \"trainjob\"\nnProcPerNode = 4\n[resources.limits]\ncpu = \"8\"\n"
    );
    for level in ["v2.0", "v2.3"] {
        let objects = build(&spec, &["--api-level", level]);
        let trainer = &of_kind(&objects, "TrainJob")["spec"]["trainer"];
        assert_eq!(trainer["numProcPerNode"], 4, "{level}");
        assert_eq!(
            trainer["resourcesPerNode"]["requests"]["cpu"], "8",
            "{level}"
        );
        assert_eq!(trainer["resourcesPerNode"]["limits"]["cpu"], "8", "{level}");
    }
}

/// `describe` gives a TrainJob the process count Trainer's torch plugin
/// resolves, not the keyword: v2.1 rounds the CPU request up (`3500m` is 4),
/// v2.0 reads the CPU limit, and v2.3 resolves what the TrainJob leaves out.
#[test]
fn describe_says_the_process_count_trainer_resolves() {
    for (level, nproc, resources, expected) in [
        ("v2.1", "\"auto\"", "cpu = \"3500m\"\nmemory = \"4Gi\"", 4),
        ("v2.1", "\"cpu\"", "cpu = \"6\"\nmemory = \"4Gi\"", 6),
        (
            "v2.0",
            "\"auto\"",
            "cpu = \"1\"\nmemory = \"4Gi\"\nlimits = { cpu = \"2500m\" }",
            3,
        ),
    ] {
        let spec = format!(
            "name = \"a\"\ntarget = \"trainjob\"\nimage = \"x:1\"\nscript = \"t.py\"\nreplicas = 2\nnProcPerNode = {nproc}\n[resources]\n{resources}\n[trainjob]\napiLevel = \"{level}\"\n"
        );
        let output = run_with_stdin(
            std::path::Path::new(env!("CARGO_BIN_EXE_trainc")),
            &["describe", "--pods", "-"],
            spec.as_bytes(),
        );
        let out = text(&output.stdout);
        assert!(output.status.success(), "{level}: {}", text(&output.stderr));
        assert!(
            out.contains(&format!(
                "2 nodes × {expected} processes = world size {}",
                2 * expected
            )),
            "{level} {nproc}:\n{out}"
        );
        assert!(
            out.contains(&format!("PET_NPROC_PER_NODE={expected}\n")),
            "{level} {nproc}:\n{out}"
        );
    }
}

fn container(pod_spec: &Value) -> &Value {
    &pod_spec["containers"][0]
}

/// On the host network every declared container port becomes a hostPort
/// (Kubernetes' `defaultHostNetworkPorts`), and the scheduler then puts one
/// pod of the job per node: a Job declares none (its Services reach ports
/// by number); a PyTorchJob only the port the operator requires by name.
#[test]
fn the_host_network_declares_no_port_the_scheduler_would_reserve() {
    let spec = format!("{BASE}hostNetwork = true\n[ports]\ntensorboard = 6006\n");
    let objects = build(&spec, &["--target", "job"]);
    let pod = &of_kind(&objects, "Job")["spec"]["template"]["spec"];
    assert_eq!(pod["hostNetwork"], true);
    assert!(container(pod).get("ports").is_none(), "{pod:#}");
    let objects = build(&spec, &[]);
    let pod = &of_kind(&objects, "PyTorchJob")["spec"]["pytorchReplicaSpecs"]["Master"]["template"]
        ["spec"];
    assert_eq!(
        container(pod)["ports"],
        serde_json::json!([{"containerPort": 23456, "name": "pytorchjob-port"}])
    );
    // Without the host network the ports are declared.
    let objects = build(
        &format!("{BASE}[ports]\ntensorboard = 6006\n"),
        &["--target", "job"],
    );
    let pod = &of_kind(&objects, "Job")["spec"]["template"]["spec"];
    assert_eq!(container(pod)["ports"].as_array().unwrap().len(), 2);
}

/// An elastic job's rank 0 publishes `socket.getfqdn()` for the workers'
/// process group unless torchrun has a local address; on the host network
/// that is the node's name, which cluster DNS does not resolve.
#[test]
fn an_elastic_job_on_the_host_network_publishes_the_pod_ip() {
    let elastic = BASE.replace("replicas = 2", "replicas = \"1:3\"");
    let local_addr = |spec: &str| {
        let objects = build(spec, &[]);
        let pod = &of_kind(&objects, "PyTorchJob")["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]
            ["spec"];
        container(pod)["env"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["name"] == "PET_LOCAL_ADDR")
            .cloned()
    };
    assert_eq!(
        local_addr(&format!("{elastic}hostNetwork = true\n")).unwrap()["valueFrom"]["fieldRef"]["fieldPath"],
        "status.podIP"
    );
    assert_eq!(local_addr(&elastic), None);
}

/// The kubelet expands `$(VAR)` in a value only from variables declared
/// before it; on a Job trainc declares its own first, so `[env]` can use them.
#[test]
fn a_job_declares_its_variables_before_the_specs() {
    let spec = BASE.replace(
        "script = \"/app/train.py\"",
        "command = [\"python\", \"/app/train.py\"]",
    ) + "[env]\nMYRANK = \"$(PET_NODE_RANK)\"\n";
    let (status, _, stderr) = build_raw(&spec, &["--target", "job"]);
    assert_eq!(status, 0);
    assert!(!stderr.contains("not_expanded"), "{stderr}");
    let objects = build(&spec, &["--target", "job"]);
    let pod = &of_kind(&objects, "Job")["spec"]["template"]["spec"];
    let names: Vec<&str> = container(pod)["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    let mine = names.iter().position(|n| *n == "MYRANK").unwrap();
    let rank = names.iter().position(|n| *n == "PET_NODE_RANK").unwrap();
    assert!(rank < mine, "{names:?}");
    assert_eq!(names[0], "JOB_COMPLETION_INDEX");
    // On a PyTorchJob the operator's come later: a warning says so.
    let (status, _, stderr) = build_raw(&spec, &[]);
    assert_eq!(status, 0);
    assert!(stderr.contains("trainc::env::not_expanded"), "{stderr}");
}

/// The `<name>-ports` Service finds rank 0 by the labels every Training
/// Operator from v1.7.0 puts on it: `job-role: master` is on worker 0 of an
/// elastic job only from v1.8.0, so on v1.7 it would select nothing.
#[test]
fn the_ports_service_selects_rank_0_on_every_operator_version() {
    for (replicas, kind) in [("2", "master"), ("\"1:3\"", "worker")] {
        let spec = BASE.replace("replicas = 2", &format!("replicas = {replicas}"))
            + "[ports]\ntensorboard = 6006\n";
        let objects = build(&spec, &[]);
        let selector = &of_kind(&objects, "Service")["spec"]["selector"];
        assert_eq!(selector["training.kubeflow.org/replica-type"], kind);
        assert_eq!(selector["training.kubeflow.org/replica-index"], "0");
        assert!(selector.get("training.kubeflow.org/job-role").is_none());
    }
}
