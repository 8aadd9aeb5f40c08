//! `trainc import`: hand-written manifests in the styles people use import
//! to the expected specs, build the same run they describe, and importing
//! what trainc built gives a spec that builds the same bytes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{compare, root, temp_dir, text, trainc};

/// The hand-written manifests (the tests' and the README's), each with the
/// spec it imports to (`.toml`) and what `trainc import` says (`.stderr`).
fn manifests() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = ["tests/import", "examples/import"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root().join(dir)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    cases.sort();
    cases
}

#[test]
fn hand_written_manifests_import_to_the_expected_specs() {
    let cases = manifests();
    assert!(
        cases.len() >= 10,
        "only {} hand-written manifests",
        cases.len()
    );
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_str().unwrap();
        let output = trainc(case.parent().unwrap(), &["import", name]);
        let stderr = format!(
            "exit: {}\n{}",
            output.status.code().unwrap(),
            text(&output.stderr)
        );
        failures.extend(compare(&case.with_extension("toml"), &text(&output.stdout)));
        failures.extend(compare(&case.with_extension("stderr"), &stderr));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `trainc build` of `spec` (a file) with `extra` arguments, run in `dir`.
fn build_in(dir: &Path, spec: &Path, extra: &[&str]) -> Result<String, String> {
    let mut args = vec!["build", spec.to_str().unwrap()];
    args.extend_from_slice(extra);
    let output = trainc(dir, &args);
    if output.status.success() {
        Ok(text(&output.stdout))
    } else {
        Err(text(&output.stderr))
    }
}

/// `trainc import` of the manifest text `yaml`; the spec it prints.
fn import(yaml: &str, at: &Path) -> String {
    let input = at.join("input.yaml");
    std::fs::write(&input, yaml).unwrap();
    let output = trainc(at, &["import", "input.yaml"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    text(&output.stdout)
}

#[test]
fn every_hand_written_manifest_builds_the_run_it_describes() {
    for case in manifests() {
        let name = case.file_stem().unwrap().to_str().unwrap();
        let yaml = std::fs::read_to_string(&case).unwrap();
        if yaml.contains("\nkind: JobSet\n") {
            // Its pods, job by job: `a_jobset_with_a_master_imports_to_the_same_pods`.
            continue;
        }
        let dir = temp_dir(&format!("import-run-{name}"));
        let spec = dir.join("spec.toml");
        std::fs::write(&spec, import(&yaml, &dir)).unwrap();
        let built = build_in(&dir, &spec, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (before, after) = (runs(&yaml), runs(&built));
        assert_eq!(before.len(), 1, "{name}: one job per manifest");
        assert_eq!(before, after, "{name}");
    }
}

/// The Trainer API level `spec` sets, when it reads on its own.
fn spec_level(spec: &Path) -> Option<trainc::spec::ApiLevel> {
    let mut sources = trainc::Sources::new();
    let id = trainc::source::read(&mut sources, spec).ok()?;
    trainc::check(&sources, id).spec?.trainjob?.api_level
}

/// Every spec of the examples and of `tests/check/` that trainc builds
/// (passing and warning cases, with their `--set`s): building, importing
/// and building again gives the same bytes, and so the same run. Jobs with
/// local code and plain Jobs are not imported, and say so.
#[test]
fn importing_what_trainc_built_builds_the_same_bytes() {
    let mut specs: Vec<PathBuf> = Vec::new();
    for dir in ["examples", "tests/check"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
            let spec_like = path.extension().is_some_and(|e| e == "toml" || e == "yaml");
            let passing = dir == "examples" || stem.contains("-pass") || stem.contains("-warn");
            if spec_like && passing {
                specs.push(path);
            }
        }
    }
    specs.sort();
    let mut same = Vec::new();
    let mut refused = Vec::new();
    for spec in &specs {
        let args_file = spec.with_extension("args");
        let extra: Vec<String> = std::fs::read_to_string(&args_file)
            .map(|t| t.lines().map(str::to_owned).collect())
            .unwrap_or_default();
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let dir = spec.parent().unwrap();
        let Ok(built) = build_in(dir, spec, &extra) else {
            continue; // an overlay fragment, built only with its spec
        };
        let name = spec.file_stem().unwrap().to_str().unwrap();
        let scratch = temp_dir(&format!("import-round-trip-{name}"));
        std::fs::write(scratch.join("built.yaml"), &built).unwrap();
        // A TrainJob does not say whether it was written for v2.2 or v2.3:
        // the import is told the level the spec was built for.
        let level = spec_level(spec);
        let mut import = vec!["import", "built.yaml"];
        if let Some(level) = &level {
            import.extend(["--api-level", level.as_str()]);
        }
        let output = trainc(&scratch, &import);
        let local_code = built.contains("\nkind: ConfigMap\n");
        let plain_job = built.contains("apiVersion: batch/v1\nkind: Job\n");
        if plain_job {
            assert!(
                !output.status.success(),
                "{name}: a plain Job is not imported"
            );
            assert!(
                text(&output.stderr).contains("no PyTorchJob, TrainJob or JobSet to import"),
                "{name}"
            );
            refused.push(name.to_owned());
            continue;
        }
        assert!(output.status.success(), "{name}: {}", text(&output.stderr));
        if local_code {
            assert!(
                text(&output.stderr).contains("add `[code]` to the spec again"),
                "{name}"
            );
            refused.push(name.to_owned());
            continue;
        }
        let imported = scratch.join("imported.toml");
        std::fs::write(&imported, &output.stdout).unwrap();
        let rebuilt = build_in(&scratch, &imported, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            built, rebuilt,
            "{name}: the imported spec builds other objects"
        );
        assert_eq!(runs(&built), runs(&rebuilt), "{name}");
        assert!(
            output.stderr.is_empty(),
            "{name}: importing trainc's own output warns: {}",
            text(&output.stderr)
        );
        same.push(name.to_owned());
    }
    assert!(
        same.len() >= 60,
        "only {} specs round-trip: {same:?}",
        same.len()
    );
    refused.sort();
    assert_eq!(
        refused,
        [
            "code-pass",
            "entrypoint-pass-command-job",
            "entrypoint-pass-image-job",
            "env-pass-job-command-refs",
            "env-warn-not-expanded-job",
            "jobset-cpu",
            "local-code",
            "plain-job",
            "policy-pass-job"
        ],
        "only local code and plain Jobs are not imported"
    );
}

/// What a job runs, whichever way its manifest says it: the image, the
/// command line, the nodes and processes, resources, env, mounts and where
/// each mount's data comes from, the other containers, where the pods run,
/// and the failure policy. Names that do not change the run are left out:
/// volume names (mounts are keyed by path), claim names of claims created
/// alongside (their size, modes and class stand for them), and what trainc
/// adds on top (its labels, the Istio annotation, the operator's port).
#[derive(Debug, PartialEq)]
struct Run {
    image: Value,
    /// `command` and `args` as one command line, torchrun's
    /// `--nproc_per_node` taken out (it is `processes_per_node`).
    argv: Vec<String>,
    working_dir: Value,
    /// `(min, max)`; equal for a fixed count.
    nodes: (u64, u64),
    processes_per_node: String,
    requests: BTreeMap<String, String>,
    limits: BTreeMap<String, String>,
    env: BTreeMap<String, Value>,
    env_from: Value,
    security: Value,
    /// Mount path to `{source, readOnly, subPath}`.
    mounts: BTreeMap<String, Value>,
    /// Other containers and init containers by name.
    sidecars: BTreeMap<String, Value>,
    /// The training container's other fields (probes, lifecycle...).
    container_rest: BTreeMap<String, Value>,
    ports: BTreeMap<String, Value>,
    scheduling: BTreeMap<&'static str, Value>,
    policy: BTreeMap<&'static str, Value>,
    /// A PyTorchJob's Workers beside a Master, where their pods' run
    /// differs from the Master's (`[master]`).
    workers: Option<Box<Run>>,
}

/// The run of every PyTorchJob and TrainJob of a manifest stream.
fn runs(yaml: &str) -> Vec<Run> {
    let documents: Vec<Value> = serde_saphyr::from_str_multiple(yaml).unwrap();
    let objects: Vec<Value> = documents
        .into_iter()
        .flat_map(|d| {
            if d["kind"] == "List" {
                d["items"].as_array().cloned().unwrap_or_default()
            } else {
                vec![d]
            }
        })
        .collect();
    let claims: BTreeMap<String, Value> = objects
        .iter()
        .filter(|o| o["kind"] == "PersistentVolumeClaim")
        .map(|c| {
            let s = &c["spec"];
            let new = json!({"size": s["resources"]["requests"]["storage"], "accessModes": s["accessModes"], "storageClassName": s["storageClassName"]});
            (c["metadata"]["name"].as_str().unwrap().to_owned(), new)
        })
        .collect();
    objects
        .iter()
        .filter_map(|o| match o["kind"].as_str() {
            Some("PyTorchJob") => Some(pytorchjob_run(o, &claims)),
            Some("TrainJob") => Some(trainjob_run(o, &claims)),
            _ => None,
        })
        .collect()
}

fn pytorchjob_run(job: &Value, claims: &BTreeMap<String, Value>) -> Run {
    let replica = |name: &str| replica_of(job, name);
    let primary = replica("master").or_else(|| replica("worker")).unwrap();
    let mut run = replica_run(job, claims, primary);
    // A job of Workers only imports as a Master and Workers alike: only
    // Workers that differ from the Master are a run of their own, in what
    // `[master]` can set apart (any other difference is reported by the
    // import, and the spec takes the Master's).
    if let (Some(_), Some(workers)) = (replica("master"), replica("worker")) {
        let workers = replica_run(job, claims, workers);
        let mut role = Run {
            image: workers.image,
            argv: workers.argv,
            processes_per_node: workers.processes_per_node,
            requests: workers.requests,
            limits: workers.limits,
            mounts: run.mounts.clone(),
            policy: run.policy.clone(),
            ..replica_run(job, claims, primary)
        };
        role.mounts.remove("/dev/shm");
        role.mounts.extend(
            workers
                .mounts
                .get("/dev/shm")
                .map(|m| ("/dev/shm".to_owned(), m.clone())),
        );
        role.policy
            .insert("restartPolicy", workers.policy["restartPolicy"].clone());
        if role != run {
            run.workers = Some(Box::new(role));
        }
    }
    run
}

/// The PyTorchJob's replica of type `name`, matched as the operator does
/// (case-insensitively).
fn replica_of<'a>(job: &'a Value, name: &str) -> Option<&'a Value> {
    job["spec"]["pytorchReplicaSpecs"]
        .as_object()?
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
}

/// The run of one replica's pods.
fn replica_run(job: &Value, claims: &BTreeMap<String, Value>, primary: &Value) -> Run {
    let replica = |name: &str| replica_of(job, name);
    let count = |r: Option<&Value>| r.map_or(0, |r| r["replicas"].as_u64().unwrap_or(1));
    let fixed = count(replica("master")) + count(replica("worker"));
    let elastic = &job["spec"]["elasticPolicy"];
    let nodes = if elastic.is_object() {
        let min = elastic["minReplicas"]
            .as_u64()
            .or(elastic["maxReplicas"].as_u64())
            .unwrap_or(fixed);
        (min, elastic["maxReplicas"].as_u64().unwrap_or(min))
    } else {
        (fixed, fixed)
    };
    let pod = &primary["template"]["spec"];
    let container = trainer(pod, "pytorch");
    // The operator's default is `auto` (kubeflow/trainer v1.9.4, pytorch_defaults.go).
    let written = job["spec"]
        .get("nprocPerNode")
        .or_else(|| job["spec"].pointer("/elasticPolicy/nProcPerNode"))
        .cloned()
        .unwrap_or(json!("auto"));
    let mut run = pod_run(pod, container, claims, &written, nodes);
    run.image = container["image"].clone();
    run.working_dir = container["workingDir"].clone();
    run.env = env(&container["env"]);
    run.env_from = container["envFrom"].clone();
    run.security = container["securityContext"].clone();
    (run.requests, run.limits) = resources(&container["resources"]);
    let policy = &job["spec"]["runPolicy"];
    run.policy = BTreeMap::from([
        (
            "restartPolicy",
            json!(primary["restartPolicy"].as_str().unwrap_or("OnFailure")),
        ),
        ("backoffLimit", policy["backoffLimit"].clone()),
        (
            "ttlSecondsAfterFinished",
            policy["ttlSecondsAfterFinished"].clone(),
        ),
        (
            "activeDeadlineSeconds",
            policy["activeDeadlineSeconds"].clone(),
        ),
        ("cleanPodPolicy", policy["cleanPodPolicy"].clone()),
        ("suspend", json!(policy["suspend"] == true)),
        (
            "elastic",
            json!({"backend": elastic["rdzvBackend"], "restarts": elastic["maxRestarts"], "conf": elastic["rdzvConf"]}),
        ),
    ]);
    let scheduling_policy = &policy["schedulingPolicy"];
    run.scheduling
        .insert("gang", scheduling_policy["minAvailable"].clone());
    run.scheduling
        .insert("volcanoQueue", scheduling_policy["queue"].clone());
    kueue(&mut run, job);
    run.ports.retain(|name, _| name != "pytorchjob-port");
    run
}

fn trainjob_run(job: &Value, claims: &BTreeMap<String, Value>) -> Run {
    let spec = &job["spec"];
    let trainer_spec = &spec["trainer"];
    let patch = spec
        .pointer("/runtimePatches/0/trainingRuntimeSpec/template/spec/replicatedJobs/0/template/spec/template/spec")
        .or_else(|| spec.pointer("/podTemplateOverrides/0/spec"))
        .or_else(|| spec.pointer("/podSpecOverrides/0"))
        .cloned()
        .unwrap_or(json!({}));
    let nodes = trainer_spec["numNodes"].as_u64().unwrap_or(1);
    let mut container = trainer(&patch, "node").clone();
    for key in ["command", "args"] {
        container[key] = trainer_spec[key].clone();
    }
    let written = trainer_spec
        .get("numProcPerNode")
        .cloned()
        .unwrap_or(json!("auto"));
    let mut run = pod_run(&patch, &container, claims, &written, (nodes, nodes));
    run.container_rest.remove("command");
    run.container_rest.remove("args");
    run.image = trainer_spec["image"].clone();
    run.env = env(&trainer_spec["env"]);
    run.security = container["securityContext"].clone();
    (run.requests, run.limits) = resources(&trainer_spec["resourcesPerNode"]);
    run.policy = BTreeMap::from([
        ("suspend", json!(spec["suspend"] == true)),
        (
            "activeDeadlineSeconds",
            spec["activeDeadlineSeconds"].clone(),
        ),
        ("runtime", spec["runtimeRef"]["name"].clone()),
        ("initializer", spec["initializer"].clone()),
    ]);
    kueue(&mut run, job);
    run
}

fn kueue(run: &mut Run, job: &Value) {
    let labels = &job["metadata"]["labels"];
    run.scheduling
        .insert("queue", labels["kueue.x-k8s.io/queue-name"].clone());
    run.scheduling.insert(
        "workloadPriority",
        labels["kueue.x-k8s.io/priority-class"].clone(),
    );
}

/// The training container of a pod spec (an empty one when a patch has none).
fn trainer<'a>(pod: &'a Value, name: &str) -> &'a Value {
    static EMPTY: Value = Value::Null;
    pod["containers"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == name))
        .unwrap_or(&EMPTY)
}

/// The training container's fields a [`Run`] names one by one.
const CONTAINER_FIELDS: &[&str] = &[
    "name",
    "image",
    "command",
    "args",
    "workingDir",
    "env",
    "envFrom",
    "securityContext",
    "resources",
    "ports",
    "volumeMounts",
    "imagePullPolicy",
];

/// What the pod and its training container say beyond the trainer's own fields.
fn pod_run(
    pod: &Value,
    container: &Value,
    claims: &BTreeMap<String, Value>,
    written: &Value,
    nodes: (u64, u64),
) -> Run {
    let (argv, processes) = command_line(container, written);
    let read_only_root = container["securityContext"]["readOnlyRootFilesystem"] == true;
    let volumes = pod["volumes"].as_array().cloned().unwrap_or_default();
    let mut mounts = BTreeMap::new();
    for mount in container["volumeMounts"].as_array().into_iter().flatten() {
        let name = mount["name"].as_str().unwrap();
        if name == "trainc-tmp" && read_only_root {
            continue; // trainc's writable /tmp for a read-only root filesystem
        }
        let mut source = volumes
            .iter()
            .find(|v| v["name"] == name)
            .cloned()
            .unwrap_or(Value::Null);
        if let Some(map) = source.as_object_mut() {
            map.remove("name");
        }
        if let Some(claim) = source
            .pointer("/persistentVolumeClaim/claimName")
            .and_then(Value::as_str)
        {
            source = claims
                .get(claim)
                .map_or_else(|| json!({"claim": claim}), |new| json!({"newClaim": new}));
        }
        let path = mount["mountPath"].as_str().unwrap().to_owned();
        mounts.insert(path, json!({"source": source, "readOnly": mount["readOnly"] == true, "subPath": mount["subPath"]}));
    }
    let mut sidecars = BTreeMap::new();
    for list in ["containers", "initContainers"] {
        for c in pod[list].as_array().into_iter().flatten() {
            let name = c["name"].as_str().unwrap().to_owned();
            if name != "pytorch" && name != "node" {
                sidecars.insert(format!("{list}/{name}"), c.clone());
            }
        }
    }
    let container_rest = container
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| !CONTAINER_FIELDS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let ports = container["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                p["name"].as_str().unwrap_or("").to_owned(),
                p["containerPort"].clone(),
            )
        })
        .collect();
    let spread = pod.pointer(
        "/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/0/topologyKey",
    ) == Some(&json!("kubernetes.io/hostname"));
    let scheduling = BTreeMap::from([
        ("nodeSelector", pod["nodeSelector"].clone()),
        ("tolerations", pod["tolerations"].clone()),
        ("spread", json!(spread)),
        ("priorityClassName", pod["priorityClassName"].clone()),
        ("schedulerName", pod["schedulerName"].clone()),
        ("serviceAccountName", pod["serviceAccountName"].clone()),
        ("imagePullSecrets", pod["imagePullSecrets"].clone()),
        ("hostNetwork", json!(pod["hostNetwork"] == true)),
        ("dnsPolicy", pod["dnsPolicy"].clone()),
        ("podSecurity", pod["securityContext"].clone()),
        ("imagePullPolicy", container["imagePullPolicy"].clone()),
    ]);
    Run {
        image: Value::Null,
        argv,
        working_dir: Value::Null,
        nodes,
        processes_per_node: processes,
        requests: BTreeMap::new(),
        limits: BTreeMap::new(),
        env: BTreeMap::new(),
        env_from: Value::Null,
        security: Value::Null,
        mounts,
        sidecars,
        container_rest,
        ports,
        scheduling,
        policy: BTreeMap::new(),
        workers: None,
    }
}

/// The command line, with torchrun's `--nproc_per_node` taken out, and the
/// processes per node: the flag's, else what the job's field says.
fn command_line(container: &Value, written: &Value) -> (Vec<String>, String) {
    let words = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|w| w.as_str().map_or_else(|| w.to_string(), str::to_owned))
            .collect()
    };
    let mut argv = words(&container["command"]);
    argv.extend(words(&container["args"]));
    let mut processes = written
        .as_str()
        .map_or_else(|| written.to_string(), str::to_owned);
    // torchrun's flag wins over the operator's variable, wherever it is
    // among the launcher's options; trainc's own (right after `torchrun`) is
    // taken out of the command line.
    let launcher = match argv.as_slice() {
        [t, ..] if t == "torchrun" => 1,
        [p, m, r, ..] if p.starts_with("python") && m == "-m" && r == "torch.distributed.run" => 3,
        _ => argv.len(),
    };
    let mut i = launcher;
    while i < argv.len() && argv[i].starts_with('-') {
        let word = argv[i].clone();
        let flag = ["--nproc_per_node", "--nproc-per-node"]
            .iter()
            .find(|f| word == **f || word.starts_with(&format!("{f}=")));
        match flag {
            Some(f) if word.len() > f.len() => {
                word[f.len() + 1..].clone_into(&mut processes);
                if i == 1 && launcher == 1 {
                    argv.remove(1);
                }
                break;
            }
            Some(_) => {
                processes.clone_from(&argv[i + 1]);
                if i == 1 && launcher == 1 {
                    argv.drain(1..3);
                }
                break;
            }
            None => i += if word.contains('=') { 1 } else { 2 },
        }
    }
    (argv, processes)
}

fn env(list: &Value) -> BTreeMap<String, Value> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|var| {
            let value = var
                .get("valueFrom")
                .cloned()
                .unwrap_or_else(|| json!(var["value"].as_str().unwrap_or("")));
            (var["name"].as_str().unwrap().to_owned(), value)
        })
        .collect()
}

/// Requests (a missing one is the limit, as Kubernetes defaults it) and limits.
fn resources(resources: &Value) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let quantities = |v: &Value| -> BTreeMap<String, String> {
        v.as_object()
            .into_iter()
            .flatten()
            .map(|(k, q)| {
                (
                    k.clone(),
                    q.as_str().map_or_else(|| q.to_string(), str::to_owned),
                )
            })
            .collect()
    };
    let limits = quantities(&resources["limits"]);
    let mut requests = limits.clone();
    requests.extend(quantities(&resources["requests"]));
    (requests, limits)
}

/// `trainc import` of `yaml` (on stdin) with `args`: status, stdout, stderr.
fn import_stdin(dir: &Path, yaml: &str, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["import"];
    all.extend_from_slice(args);
    all.push("-");
    let output = crate::support::run_with_stdin_in(
        dir,
        Path::new(env!("CARGO_BIN_EXE_trainc")),
        &all,
        yaml.as_bytes(),
    );
    (
        output.status.code().unwrap(),
        text(&output.stdout),
        text(&output.stderr),
    )
}

const NO_COMMAND: &str = "apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: entry}
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers:
          - {name: pytorch, image: 'ghcr.io/acme/x:1', args: [--epochs, '3']}
";

#[test]
fn what_cannot_become_a_spec_is_an_error_and_nothing_is_written() {
    let dir = temp_dir("import-errors");
    let cases = [
        (
            "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tune}\nspec:\n  runtimeRef: {name: torchtune-llama3.2-1b}\n  trainer: {numNodes: 1}\n".to_owned(),
            "so it runs its runtime's",
        ),
        (
            NO_COMMAND.replace("kubeflow.org/v1", "kubeflow.org/v1beta2"),
            "is `kubeflow.org/v1beta2`",
        ),
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n".to_owned(),
            "no PyTorchJob, TrainJob or JobSet to import",
        ),
        ("a: [unclosed\n".to_owned(), "trainc::parse::yaml"),
        // A misspelt field is said as `verify` says it, alone: not as the
        // field it leaves missing.
        (
            "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: typo}\nspec:\n  runPolicy: {backoffLimit: 2}\n  pytorchReplicaSpec:\n    Worker: {replicas: 2, template: {spec: {containers: [{name: pytorch, image: x:1}]}}}\n".to_owned(),
            "(did you mean `pytorchReplicaSpecs`?)",
        ),
    ];
    for (yaml, said) in cases {
        let (status, stdout, stderr) = import_stdin(&dir, &yaml, &[]);
        assert_eq!(status, 1, "{stderr}");
        assert!(stdout.is_empty(), "nothing is written: {stdout}");
        assert!(stderr.contains(said), "{said}: {stderr}");
        assert!(
            stderr.contains("<stdin>:") || stderr.contains("-:"),
            "located: {stderr}"
        );
        assert!(!stderr.contains("has no Master or Worker"), "{stderr}");
        assert!(!stderr.contains("missing required field"), "{stderr}");
    }
}

#[test]
fn strict_makes_a_dropped_field_an_error() {
    let dir = temp_dir("import-strict");
    let yaml = std::fs::read_to_string(root().join("tests/import/service-and-claim.yaml")).unwrap();
    let (status, stdout, stderr) = import_stdin(&dir, &yaml, &[]);
    assert_eq!(status, 0, "{stderr}");
    assert!(stdout.contains("tensorboard = 6006"));
    let (status, stdout, stderr) = import_stdin(&dir, &yaml, &["--strict"]);
    assert_eq!(status, 1, "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("error: Service `tb` becomes `viz-ports`"),
        "{stderr}"
    );
}

#[test]
fn several_jobs_need_an_output_dir_and_each_format_builds_the_same_objects() {
    let dir = temp_dir("import-several");
    let mut yaml = String::new();
    for case in ["anchors", "trainjob-docs", "torchrun-module-claim"] {
        yaml.push_str(
            &std::fs::read_to_string(root().join(format!("tests/import/{case}.yaml"))).unwrap(),
        );
        yaml.push_str("\n---\n");
    }
    let (status, stdout, stderr) = import_stdin(&dir, &yaml, &[]);
    assert_eq!(status, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("holds 3 jobs; pass `--output-dir DIR`"),
        "{stderr}"
    );
    let mut built: Vec<Vec<String>> = Vec::new();
    for format in ["toml", "yaml", "krm"] {
        let out = dir.join(format);
        let (status, _, stderr) = import_stdin(
            &dir,
            &yaml,
            &["--format", format, "--output-dir", out.to_str().unwrap()],
        );
        assert_eq!(status, 0, "{stderr}");
        let mut names: Vec<PathBuf> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        let stems: Vec<&str> = names
            .iter()
            .map(|p| p.file_stem().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(stems, ["anchored", "bert", "pytorch-mnist"]);
        built.push(
            names
                .iter()
                .map(|p| build_in(&out, p, &[]).unwrap())
                .collect(),
        );
        // A second import does not overwrite what the first wrote, unless --force.
        let (status, _, stderr) = import_stdin(
            &dir,
            &yaml,
            &["--format", format, "--output-dir", out.to_str().unwrap()],
        );
        assert_eq!(status, 2, "{stderr}");
        assert!(stderr.contains("exists; pass `--force`"), "{stderr}");
        let (status, _, stderr) = import_stdin(
            &dir,
            &yaml,
            &[
                "--format",
                format,
                "--output-dir",
                out.to_str().unwrap(),
                "--force",
            ],
        );
        assert_eq!(status, 0, "{stderr}");
    }
    assert_eq!(
        built[0], built[1],
        "TOML and YAML specs build the same objects"
    );
    assert_eq!(
        built[0], built[2],
        "TOML and KRM specs build the same objects"
    );
}

/// `--api-level` says which Trainer a TrainJob was written for: v2.2 is
/// written into the spec (a TrainJob alone cannot tell it from v2.3), and a
/// level whose patch field the TrainJob does not have is an error at it.
#[test]
fn import_takes_the_trainer_release_the_trainjob_was_written_for() {
    let dir = temp_dir("import-api-level");
    let built = trainc(&root(), &["build", "examples/trainjob.toml"]);
    assert!(built.status.success());
    std::fs::write(dir.join("tj.yaml"), &built.stdout).unwrap();

    let v2_2 = trainc(&dir, &["import", "--api-level", "v2.2", "tj.yaml"]);
    assert!(v2_2.status.success(), "{}", text(&v2_2.stderr));
    assert!(text(&v2_2.stdout).contains("apiLevel = \"v2.2\""));
    let default = trainc(&dir, &["import", "tj.yaml"]);
    assert!(!text(&default.stdout).contains("apiLevel"));

    let v2_1 = trainc(&dir, &["import", "--api-level", "v2.1", "tj.yaml"]);
    assert_eq!(v2_1.status.code(), Some(1));
    let stderr = text(&v2_1.stderr);
    assert!(
        stderr.contains("the TrainJob has `runtimePatches`, which Trainer v2.1 does not")
            && stderr.contains("tj.yaml:"),
        "{stderr}"
    );
    assert!(v2_1.stdout.is_empty());
}

/// Every example built as a JobSet (but those with local code, which says
/// so) imports to a spec that builds the same bytes.
#[test]
fn every_jobset_trainc_builds_imports_to_a_spec_that_builds_it_again() {
    let mut same = Vec::new();
    for example in crate::golden::examples() {
        let stem = example.file_stem().unwrap().to_str().unwrap().to_owned();
        let Ok(built) = build_in(&root(), &example, &["--target", "jobset"]) else {
            continue; // what a JobSet cannot express
        };
        if built.contains("\nkind: ConfigMap\n") {
            continue; // local code: the round trip above says what import says
        }
        let dir = temp_dir(&format!("import-jobset-{stem}"));
        let spec = dir.join("spec.toml");
        std::fs::write(&spec, import(&built, &dir)).unwrap();
        let rebuilt = build_in(&dir, &spec, &[]).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert_eq!(
            built, rebuilt,
            "{stem}: the imported spec builds other objects"
        );
        same.push(stem);
    }
    assert!(same.len() >= 8, "only {same:?}");
}

/// JobSet's own PyTorch example: a JobSet of one Indexed Job that trainc
/// did not write imports, every change said at its line, and builds a
/// JobSet that verifies; a JobSet of several replicated jobs has no spec.
/// A hand-written JobSet of a leader job of one pod beside one-pod worker
/// jobs imports as `[master]`, and the spec builds the same pods: each
/// replicated job's count, image, resources and command line, and the
/// failure policy.
#[test]
fn a_jobset_with_a_master_imports_to_the_same_pods() {
    let dir = root().join("tests/import");
    let yaml = std::fs::read_to_string(dir.join("jobset-master-hand.yaml")).unwrap();
    let scratch = temp_dir("import-jobset-master");
    std::fs::write(scratch.join("spec.toml"), import(&yaml, &scratch)).unwrap();
    let built = build_in(&scratch, &scratch.join("spec.toml"), &["--verify"]).unwrap();
    let (before, after): (Value, Value) = (
        serde_saphyr::from_str(&yaml).unwrap(),
        serde_saphyr::from_str(&built).unwrap(),
    );
    let pods = |jobset: &Value| -> Vec<Value> {
        jobset["spec"]["replicatedJobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|rjob| {
                let job = &rjob["template"]["spec"];
                let container = &job["template"]["spec"]["containers"][0];
                let argv: Vec<&str> = container["command"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|w| w.as_str().unwrap())
                    .collect();
                json!({
                    "jobs": rjob["replicas"],
                    "pods": job["completions"].as_u64().unwrap_or(1),
                    "image": container["image"],
                    "resources": container["resources"],
                    "argv": argv,
                    "restartPolicy": job["template"]["spec"]["restartPolicy"],
                })
            })
            .collect()
    };
    assert_eq!(pods(&before), pods(&after), "{built}");
    assert_eq!(
        before["spec"]["failurePolicy"],
        after["spec"]["failurePolicy"]
    );
    let names: Vec<&Value> = after["spec"]["replicatedJobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["name"])
        .collect();
    assert_eq!(names, [&json!("master"), &json!("worker")]);
}

#[test]
fn a_hand_written_jobset_imports_with_every_change_said() {
    let dir = root().join("tests/upstream/jobset-v0.12.0");
    let output = trainc(&dir, &["import", "pytorch-cnn-mnist-mnist.yaml"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    for said in [
        "the replicated job `workers` becomes `node`",
        "the container `pytorch` becomes `trainer`",
        "env `MASTER_ADDR` is not imported: trainc gives the command `MASTER_ADDR=$(JOBSET_NAME)-node-0-0.$(JOBSET_NAME)`",
        "env `MASTER_PORT` is not imported: trainc gives the command `MASTER_PORT=29500`",
    ] {
        let words = stderr
            .split_whitespace()
            .filter(|w| *w != "│")
            .collect::<Vec<_>>()
            .join(" ");
        assert!(words.contains(said), "{said}: {stderr}");
    }
    let spec = text(&output.stdout);
    assert!(
        spec.contains("target = \"jobset\"") && spec.contains("replicas = 4"),
        "{spec}"
    );
    let scratch = temp_dir("import-jobset-upstream");
    std::fs::write(scratch.join("spec.toml"), &spec).unwrap();
    let built = trainc(&scratch, &["build", "--verify", "spec.toml"]);
    assert!(built.status.success(), "{}", text(&built.stderr));
    let refused = trainc(&dir, &["import", "simple-paralleljobs.yaml"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused.stderr).contains("the JobSet has 2 replicated jobs"));
    assert!(refused.stdout.is_empty());
}
