//! `trainc describe`: the spec in words, pinned per example, and the pods'
//! environment checked against the objects `build` makes.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::golden::examples;
use crate::support::{compare, root, text, trainc};

/// The spec's path from the repository's root, as the commands show it.
fn example_args(example: &std::path::Path) -> String {
    example
        .strip_prefix(root())
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned()
}

/// `golden/<example>/describe.txt`: `describe --pods` of every example.
#[test]
fn describe_pods_of_every_example_is_pinned() {
    let mut failures = Vec::new();
    for example in examples() {
        let spec = example_args(&example);
        let output = trainc(&root(), &["describe", "--pods", &spec]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{spec}: {}",
            text(&output.stderr)
        );
        let stdout = text(&output.stdout);
        for line in stdout.lines() {
            // Commands and long names may run on; prose stays within 80 columns.
            let command = line.trim_start().starts_with("trainc build")
                || line.trim_start().starts_with("kubectl");
            assert!(
                command || line.chars().count() <= 80,
                "{spec}: over 80 columns: {line}"
            );
        }
        let stem = example.file_stem().unwrap().to_str().unwrap();
        if let Some(diff) = compare(
            &root().join("golden").join(stem).join("describe.txt"),
            &stdout,
        ) {
            failures.push(diff);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The `distributed environment` block of `describe --pods`, and each pod's
/// own variables.
fn described_env(description: &str) -> (BTreeMap<String, String>, Vec<BTreeMap<String, String>>) {
    let mut common = BTreeMap::new();
    let mut pods = Vec::new();
    let mut in_env = false;
    let mut in_pods = false;
    for line in description.lines() {
        if line.starts_with("pods:") {
            in_pods = true;
        }
        if line.starts_with("distributed environment ") {
            (in_env, in_pods) = (true, false);
            continue;
        }
        if line.is_empty() {
            in_env = false;
        }
        let trimmed = line.trim();
        if in_env {
            let (k, v) = trimmed.split_once('=').unwrap();
            common.insert(k.to_owned(), v.to_owned());
        } else if in_pods
            && line.starts_with("      ")
            && trimmed
                .split_once('=')
                .is_some_and(|(k, _)| k.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        {
            pods.push(
                trimmed
                    .split("  ")
                    .map(|pair| {
                        let (k, v) = pair.split_once('=').unwrap();
                        (k.to_owned(), v.to_owned())
                    })
                    .collect(),
            );
        }
    }
    (common, pods)
}

/// What the operators inject, derived from the built object the way their
/// sources do (kubeflow/trainer v1.9.4 `pkg/controller.v1/pytorch/envvar.go`,
/// `master.go`, `elastic.go`; v2.3.0 `pkg/runtime/framework/plugins/torch/torch.go`),
/// must be what `describe --pods` shows.
#[test]
fn the_pods_environment_is_what_the_operator_derives_from_the_built_object() {
    let (mut jobs, mut jobsets) = (0, 0);
    // A `command` on a Job is given variables instead of flags.
    let command = root().join("tests/check/entrypoint-pass-command-job.toml");
    for (example, target) in examples()
        .into_iter()
        .flat_map(|e| {
            [
                (e.clone(), None),
                (e.clone(), Some("job")),
                (e, Some("jobset")),
            ]
        })
        .chain([(command.clone(), None), (command, Some("jobset"))])
    {
        let spec = example_args(&example);
        let mut args = vec!["build", "-o", "json", &spec];
        if let Some(target) = target {
            args.extend(["--target", target]);
        }
        let built = trainc(&root(), &args);
        if target.is_some() && built.status.code() != Some(0) {
            continue; // not something a plain Job or a JobSet can run
        }
        let list: Value = serde_json::from_slice(&built.stdout).unwrap();
        let job = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| {
                ["PyTorchJob", "TrainJob", "Job", "JobSet"].contains(&o["kind"].as_str().unwrap())
            })
            .unwrap();
        args[0] = "describe";
        args[1] = "--pods";
        args.remove(2);
        let described = text(&trainc(&root(), &args).stdout);
        let (env, pods) = described_env(&described);
        let name = job["metadata"]["name"].as_str().unwrap();
        if job["kind"] == "Job" {
            jobs += 1;
            let first_pod = format!("{name}-0");
            job_environment(&job["spec"], name, &first_pod, &described, &env, &pods);
        } else if job["kind"] == "JobSet" && job["spec"]["replicatedJobs"][0]["name"] == "master" {
            jobsets += 1;
            master_jobset_environment(job, &described, &env, &pods);
        } else if job["kind"] == "JobSet" {
            jobsets += 1;
            // One replicated job `node` of one Indexed Job, its pods
            // `<name>-node-0-<i>`.
            let replicated = job["spec"]["replicatedJobs"].as_array().unwrap();
            assert_eq!(replicated.len(), 1, "{spec}");
            assert_eq!(replicated[0]["replicas"], 1, "{spec}");
            let first_pod = format!("{name}-node-0-0");
            let job_spec = &replicated[0]["template"]["spec"];
            job_environment(job_spec, name, &first_pod, &described, &env, &pods);
        } else if job["kind"] == "PyTorchJob" {
            pytorchjob_environment(job, &spec, &env, &pods);
        } else {
            trainjob_environment(job, &spec, &env, &pods);
        }
    }
    assert!(jobs >= 6, "too few examples described as a Job: {jobs}");
    assert!(
        jobsets >= 8,
        "too few examples described as a JobSet: {jobsets}"
    );
}

/// What trainc writes for the launch in `container`'s env, a value read
/// from the pod's completion index or its job's global index as the kubelet
/// resolves it on a pod with those indexes.
fn given_env(container: &Value, name: &str, index: u64, global: u64) -> BTreeMap<String, String> {
    container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| {
            let var = e["name"].as_str().unwrap();
            trainc::cluster::job::RESERVED_ENV.contains(&var)
                || trainc::cluster::jobset::RESERVED_ENV.contains(&var)
        })
        .map(|e| {
            let value = e["value"].as_str().map_or_else(
                || match e["valueFrom"]["fieldRef"]["fieldPath"].as_str().unwrap() {
                    "metadata.annotations['batch.kubernetes.io/job-completion-index']" => {
                        index.to_string()
                    }
                    "metadata.annotations['jobset.sigs.k8s.io/job-global-index']" => {
                        global.to_string()
                    }
                    trainc::cluster::jobset::NAME_FIELD => name.to_owned(),
                    other => panic!("{name}: {other}"),
                },
                |written| written.replace("$(JOBSET_NAME)", name),
            );
            (e["name"].as_str().unwrap().to_owned(), value)
        })
        .collect()
}

/// A JobSet with a Master: a `master` job of one pod, then a `worker` job
/// of one pod for each Worker, node rank the job's global index.
fn master_jobset_environment(
    job: &Value,
    described: &str,
    env: &BTreeMap<String, String>,
    pods: &[BTreeMap<String, String>],
) {
    let name = job["metadata"]["name"].as_str().unwrap();
    let replicated = job["spec"]["replicatedJobs"].as_array().unwrap();
    assert_eq!(replicated.len(), 2, "{name}");
    assert_eq!(
        (&replicated[0]["name"], &replicated[1]["name"]),
        (&json!("master"), &json!("worker"))
    );
    assert_eq!(replicated[0]["replicas"], 1, "{name}");
    let workers = replicated[1]["replicas"].as_u64().unwrap();
    assert_eq!(pods.len() as u64, 1 + workers, "{name}: a pod for each job");
    let words = described.split_whitespace().collect::<Vec<_>>().join(" ");
    let rank0 = format!("{name}-master-0-0");
    assert!(
        words.contains(&format!("{rank0}.{name}:29500"))
            && words.contains(&format!("{rank0}.{name} resolves to pod {rank0}.")),
        "{described}"
    );
    for (global, own) in (0u64..).zip(pods) {
        let rjob = &replicated[usize::from(global > 0)];
        let job_spec = &rjob["template"]["spec"];
        assert_eq!(
            (&job_spec["completions"], &job_spec["parallelism"]),
            (&json!(1), &json!(1)),
            "{name}: one pod a job"
        );
        let container = &job_spec["template"]["spec"]["containers"][0];
        let mut listed = env.clone();
        listed.extend(own.clone());
        assert_eq!(
            given_env(container, name, 0, global),
            listed,
            "{name}: what describe lists is what pod {global} gets"
        );
        let command = container["command"].to_string();
        assert!(
            command.contains("--node_rank=$(JOB_GLOBAL_INDEX)")
                && command.contains("--master_addr=$(JOBSET_NAME)-master-0-0.$(JOBSET_NAME)")
                && command.contains(&format!("--nnodes={}", 1 + workers)),
            "{command}"
        );
    }
}

/// A PyTorchJob: what the Training Operator sets from it.
fn pytorchjob_environment(
    job: &Value,
    spec: &str,
    env: &BTreeMap<String, String>,
    pods: &[BTreeMap<String, String>],
) {
    let name = job["metadata"]["name"].as_str().unwrap();
    let specs = &job["spec"]["pytorchReplicaSpecs"];
    let total: u64 = specs
        .as_object()
        .unwrap()
        .values()
        .map(|s| s["replicas"].as_u64().unwrap())
        .sum();
    let nproc = job["spec"]["nprocPerNode"].as_str().unwrap();
    assert_eq!(env["PYTHONUNBUFFERED"], "1", "{spec}");
    assert_eq!(env["PET_NPROC_PER_NODE"], nproc, "{spec}");
    let port_of = |role: &str| {
        specs[role]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "pytorch")
            .unwrap()["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "pytorchjob-port")
            .unwrap()["containerPort"]
            .to_string()
    };
    if let Some(elastic) = job["spec"].get("elasticPolicy") {
        let nnodes = format!("{}:{}", elastic["minReplicas"], elastic["maxReplicas"]);
        assert_eq!(env["PET_NNODES"], nnodes, "{spec}");
        let host = elastic["rdzvHost"]
            .as_str()
            .map_or_else(|| format!("{name}-worker-0"), str::to_owned);
        let port = elastic
            .get("rdzvPort")
            .map_or_else(|| port_of("Worker"), ToString::to_string);
        assert_eq!(env["PET_RDZV_ENDPOINT"], format!("{host}:{port}"), "{spec}");
        assert_eq!(
            env["PET_RDZV_BACKEND"],
            elastic["rdzvBackend"].as_str().unwrap_or("c10d")
        );
        assert!(
            !env.contains_key("MASTER_ADDR"),
            "{spec}: no Master, no MASTER_ADDR"
        );
    } else {
        assert_eq!(env["PET_NNODES"], total.to_string(), "{spec}");
        let master = format!("{name}-master-0");
        assert_eq!(env["MASTER_ADDR"], master);
        assert_eq!(env["PET_MASTER_ADDR"], master);
        assert_eq!(env["MASTER_PORT"], port_of("Master"));
        assert_eq!(env["PET_MASTER_PORT"], port_of("Master"));
        let per_node = nproc.parse::<u64>().unwrap_or(1);
        assert_eq!(env["WORLD_SIZE"], (total * per_node).to_string(), "{spec}");
        let ranks: Vec<String> = pods.iter().map(|p| p["RANK"].clone()).collect();
        let expected: Vec<String> = (0..total).map(|r| r.to_string()).collect();
        assert_eq!(ranks, expected, "{spec}: Master 0, Worker i is i+1");
        assert!(pods.iter().all(|p| p["RANK"] == p["PET_NODE_RANK"]));
    }
}

/// A TrainJob: what the Trainer's torch plugin sets from the TrainJob.
fn trainjob_environment(
    job: &Value,
    spec: &str,
    env: &BTreeMap<String, String>,
    pods: &[BTreeMap<String, String>],
) {
    let name = job["metadata"]["name"].as_str().unwrap();
    let trainer = &job["spec"]["trainer"];
    assert_eq!(env["PET_NNODES"], trainer["numNodes"].to_string(), "{spec}");
    let nproc = match &trainer["numProcPerNode"] {
        Value::String(s) => s.clone(),
        Value::Null => "auto".to_owned(),
        other => other.to_string(),
    };
    assert_eq!(env["PET_NPROC_PER_NODE"], nproc, "{spec}");
    assert_eq!(env["PET_MASTER_ADDR"], format!("{name}-node-0-0.{name}"));
    assert_eq!(env["PET_MASTER_PORT"], "29500");
    // Listed pod by pod where they differ; a single node's is everyone's.
    let ranks: Vec<&str> = match env.get("PET_NODE_RANK") {
        Some(rank) => vec![rank.as_str()],
        None => pods.iter().map(|p| p["PET_NODE_RANK"].as_str()).collect(),
    };
    let n = trainer["numNodes"].as_u64().unwrap();
    let expected: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    assert_eq!(ranks, expected, "{spec}");
}

/// A Job (alone, or a JobSet's, of the job `name`, whose pod 0 is the host
/// `first_pod`): pod `i` has completion index `i` (the Job controller's
/// `JOB_COMPLETION_INDEX`), the rendezvous is the one torchrun's flags name,
/// and a `command` is given exactly the variables `describe` lists.
fn job_environment(
    job_spec: &Value,
    name: &str,
    first_pod: &str,
    described: &str,
    env: &BTreeMap<String, String>,
    pods: &[BTreeMap<String, String>],
) {
    let n = job_spec["completions"].as_u64().unwrap();
    let indexes: Vec<String> = pods
        .iter()
        .map(|p| p["JOB_COMPLETION_INDEX"].clone())
        .collect();
    let expected: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    assert_eq!(indexes, expected, "{name}");
    // Rank 0's address, and the pod it resolves to.
    let words = described.split_whitespace().collect::<Vec<_>>().join(" ");
    let master = format!("{first_pod}.{name}:29500");
    let resolves = format!("{first_pod}.{name} resolves to pod {first_pod}.");
    assert!(
        words.contains(&master) && words.contains(&resolves),
        "{described}"
    );
    let container = &job_spec["template"]["spec"]["containers"][0];
    // No `command`: the image's entrypoint, given variables as a command is.
    let command: Vec<&str> = container["command"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| w.as_str().unwrap())
        .collect();
    // What trainc writes for the launch, a value read from the completion
    // index as the kubelet resolves it on pod `index`.
    let given = |index: u64| given_env(container, name, index, 0);
    for (index, own) in (0..n).zip(pods) {
        let mut described = env.clone();
        described.extend(own.clone());
        assert_eq!(
            given(index),
            described,
            "{name}: what describe lists is what pod {index} gets"
        );
    }
    assert_eq!(
        container["env"][0]["name"],
        trainc::cluster::job::COMPLETION_INDEX_ENV,
        "{name}"
    );
    if command
        .first()
        .is_some_and(|c| *c == "torchrun" || *c == "sh")
    {
        // The JobSet's name, of which torchrun's flags make rank 0's address.
        assert!(
            env.keys()
                .all(|k| trainc::cluster::jobset::RESERVED_ENV.contains(&k.as_str())),
            "{name}: torchrun takes flags"
        );
        let text = command.join(" ");
        assert!(text.contains(&format!("--nnodes={n} ")), "{text}");
        let written = text.replace("$(JOBSET_NAME)", name);
        // Quoted in a launcher script where it holds `$(...)`.
        let flag = format!("--master_addr={first_pod}.{name}");
        assert!(
            written.contains(&format!("{flag} ")) || written.contains(&format!("{flag}' ")),
            "{text}"
        );
    } else {
        assert_eq!(env["PET_NNODES"], n.to_string());
        assert_eq!(env["MASTER_ADDR"], format!("{first_pod}.{name}"));
        for (index, own) in pods.iter().enumerate() {
            assert_eq!(own["RANK"], index.to_string());
        }
    }
}

/// A warning the spec acknowledges (`allowWarnings`) is gone from `check`
/// and `build`, and `describe` still lists it, marked.
#[test]
fn an_allowed_warning_is_still_described() {
    let dir = root().join("tests/check");
    let spec = "warnings-pass-allowed.toml";
    let check = trainc(&dir, &["check", spec]);
    assert_eq!(check.status.code(), Some(0));
    assert!(
        !text(&check.stderr).contains("not pinned"),
        "{}",
        text(&check.stderr)
    );
    let build = trainc(&dir, &["build", spec]);
    assert_eq!(build.status.code(), Some(0), "{}", text(&build.stderr));
    let described = text(&trainc(&dir, &["describe", spec]).stdout);
    // Wrapped at the terminal's width: read as one line.
    let flat = described.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("`image` is not pinned")
            && flat.contains("[trainc::image::unpinned, allowed by `allowWarnings`]"),
        "{described}"
    );
}

/// A command that starts no launcher runs one process a pod: the nodes line
/// and the pods' `WORLD_SIZE` tell one story, on every target that takes
/// `nProcPerNode = "auto"`.
#[test]
fn a_plain_command_is_one_process_a_pod_in_both_stories() {
    let dir = crate::support::temp_dir("describe-plain-command");
    std::fs::write(
        dir.join("plain.toml"),
        "name = \"plain\"\nimage = \"ghcr.io/acme/train:1.0\"\ncommand = [\"python3\", \"train.py\"]\nreplicas = 3\nnProcPerNode = \"auto\"\n",
    )
    .unwrap();
    for target in ["pytorchjob", "jobset", "job"] {
        let output = trainc(
            &dir,
            &["describe", "--pods", "--target", target, "plain.toml"],
        );
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        let described = text(&output.stdout);
        let flat = described.split_whitespace().collect::<Vec<_>>().join(" ");
        let (common, pods) = described_env(&described);
        let world = common
            .get("WORLD_SIZE")
            .or_else(|| pods.iter().find_map(|p| p.get("WORLD_SIZE")))
            .unwrap_or_else(|| panic!("{target}: no WORLD_SIZE in {described}"));
        assert!(
            flat.contains(&format!("3 nodes × 1 process (`python3` starts no launcher; `auto` reaches it only as `PET_NPROC_PER_NODE`) = world size {world}")),
            "{target}: {described}"
        );
        assert!(
            !flat.contains("decided by torchrun"),
            "{target}: {described}"
        );
    }
}

/// `describe --pods --format json` prints the pods as a `v1 List` of `Pod`
/// objects, as the controllers create them: a PyTorchJob's by name, a Job's
/// by `generateName` (the API server adds a suffix), each with the variables
/// its controller adds; `--format json` implies `--pods`.
#[test]
fn pods_as_json_are_a_v1_list_of_the_pods_the_controllers_make() {
    let dir = root();
    let output = trainc(
        &dir,
        &[
            "describe",
            "--pods",
            "--format",
            "json",
            "examples/cpu-minimal.toml",
        ],
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        (list["apiVersion"].as_str(), list["kind"].as_str()),
        (Some("v1"), Some("List"))
    );
    let items = list["items"].as_array().unwrap();
    let names: Vec<&str> = items
        .iter()
        .filter_map(|p| p["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, ["mnist-cpu-master-0", "mnist-cpu-worker-0"]);
    assert!(
        items
            .iter()
            .all(|p| p["kind"] == "Pod" && p["apiVersion"] == "v1")
    );
    let env = items[1]["spec"]["containers"][0]["env"].as_array().unwrap();
    assert!(
        env.iter()
            .any(|v| v["name"] == "MASTER_ADDR" && v["value"] == "mnist-cpu-master-0"),
        "{env:?}"
    );

    let job = trainc(
        &dir,
        &[
            "describe",
            "--pods",
            "--format",
            "json",
            "--target",
            "job",
            "examples/cpu-minimal.toml",
        ],
    );
    let list: Value = serde_json::from_slice(&job.stdout).unwrap();
    let first = &list["items"][0];
    assert_eq!(first["metadata"]["generateName"], "mnist-cpu-0-");
    assert!(first["metadata"]["name"].is_null());
    assert_eq!(
        first["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"],
        "0"
    );
    let index = first["spec"]["containers"][0]["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "JOB_COMPLETION_INDEX")
        .cloned()
        .unwrap();
    // trainc's Job declares it (the controller keeps a declared one).
    assert_eq!(
        index["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    );

    // `--format json` is the pods: `--pods` may go without saying.
    let alone = trainc(
        &dir,
        &["describe", "--format", "json", "examples/cpu-minimal.toml"],
    );
    assert_eq!(alone.stdout, output.stdout);
}
