//! Every example, built with `--verify`, must equal its golden file in
//! `golden/<example>/<variant>.yaml` (`pytorchjob`, `trainjob`, `trainjob-v2.1`);
//! every golden must pass the strict schemas and webhook rules in
//! `schemas/k8s/` (through the jsonschema crate). And wherever both targets can
//! build an example, they must describe the same run.
//! `TRAINC_BLESS=1 cargo test` rewrites the goldens; read the diff before committing.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use trainc::spec::{ApiLevel, Target};

use crate::support::{compare, root, text, trainc};

pub(crate) fn examples() -> Vec<PathBuf> {
    let mut examples: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .expect("examples/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml" || e == "yaml"))
        .collect();
    examples.sort();
    examples
}

/// An example's spec, as checked.
fn spec_of(example: &Path) -> trainc::spec::Spec {
    let mut sources = trainc::Sources::new();
    let id = trainc::source::read(&mut sources, example).unwrap();
    trainc::check(&sources, id)
        .spec
        .expect("examples are valid")
}

/// The Trainer API level an example's TrainJob is for.
fn spec_level(example: &Path) -> ApiLevel {
    spec_of(example)
        .trainjob
        .and_then(|t| t.api_level)
        .unwrap_or(ApiLevel::V2_3)
}

/// The golden variant an example is for: its own target and API level.
fn own_variant(example: &Path) -> String {
    match spec_of(example).target.unwrap_or(Target::Pytorchjob) {
        Target::Pytorchjob => "pytorchjob".to_owned(),
        Target::Job => "job".to_owned(),
        Target::Jobset => "jobset".to_owned(),
        Target::Trainjob => variant_of_level(spec_level(example)).to_owned(),
    }
}

/// The golden variant of a TrainJob at one Trainer API level (v2.2 and
/// v2.3 print the same objects).
fn variant_of_level(level: ApiLevel) -> &'static str {
    match level {
        ApiLevel::V2_3 | ApiLevel::V2_2 => "trainjob",
        ApiLevel::V2_1 => "trainjob-v2.1",
        ApiLevel::V2_0 => "trainjob-v2.0",
    }
}

const LEVELS: [ApiLevel; 4] = [
    ApiLevel::V2_3,
    ApiLevel::V2_2,
    ApiLevel::V2_1,
    ApiLevel::V2_0,
];

fn level_of_golden(path: &Path) -> ApiLevel {
    let stem = path.file_stem().unwrap().to_str().unwrap();
    LEVELS
        .into_iter()
        .filter(|l| !l.has_runtime_patches())
        .find(|l| stem.starts_with(variant_of_level(*l)))
        .unwrap_or(ApiLevel::V2_3)
}

fn build(example: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["build", "--verify", example.to_str().unwrap()];
    args.extend_from_slice(extra);
    let output = trainc(&root(), &args);
    (
        output.status.code().unwrap(),
        text(&output.stdout),
        text(&output.stderr),
    )
}

/// The shipped overlays each example is also built with.
const OVERLAYS: [Option<&str>; 3] = [None, Some("cpu"), Some("gpu")];

fn no_golden_differs(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "goldens differ; rerun with TRAINC_BLESS=1 after reading the diff\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_example_builds_verifies_and_matches_its_golden() {
    let mut failures = Vec::new();
    for example in examples() {
        for overlay in OVERLAYS {
            let overlay_path = overlay.map(|o| format!("overlays/{o}.toml"));
            let extra: Vec<&str> = overlay_path
                .iter()
                .flat_map(|p| ["-O", p.as_str()])
                .collect();
            let (status, stdout, stderr) = build(&example, &extra);
            let what = format!("{} {}", example.display(), extra.join(" "));
            assert_eq!(status, 0, "{what}: {stderr}");
            // The GPU overlay's toleration on a TrainJob that Kueue queues is
            // what that warning is for: Kueue's patch may replace it.
            let kueue_tolerations = overlay == Some("gpu")
                && stderr.starts_with("trainc::scheduling::kueue_tolerations\n")
                && stderr.matches("trainc::").count() == 1;
            assert!(
                stderr.is_empty() || kueue_tolerations,
                "{what}: examples build without warnings: {stderr}"
            );
            let stem = example.file_stem().unwrap().to_str().unwrap();
            let variant = match overlay {
                None => own_variant(&example),
                Some(o) => format!("{}.{o}", own_variant(&example)),
            };
            let path = root()
                .join("golden")
                .join(stem)
                .join(format!("{variant}.yaml"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            if let Some(diff) = compare(&path, &stdout) {
                failures.push(diff);
            }
        }
    }
    no_golden_differs(&failures);
}

/// Every example is also built for `--target job`: where a plain Job can run
/// it, it matches `golden/<example>/job.yaml`; where it cannot, the build
/// fails with errors that name the target, and writes nothing.
#[test]
fn every_example_builds_as_a_job_or_says_why_not() {
    let built = every_example_builds_for("job");
    assert!(
        built.len() >= 6,
        "too few examples build as a Job: {built:?}"
    );
}

/// The same for `--target jobset`, `golden/<example>/jobset.yaml`.
#[test]
fn every_example_builds_as_a_jobset_or_says_why_not() {
    let built = every_example_builds_for("jobset");
    assert!(
        built.len() >= 6,
        "too few examples build as a JobSet: {built:?}"
    );
}

/// Every example built for `target`: the stems of those that build.
fn every_example_builds_for(target: &str) -> Vec<String> {
    let mut failures = Vec::new();
    let mut built = Vec::new();
    for example in examples() {
        let stem = example.file_stem().unwrap().to_str().unwrap();
        if own_variant(&example) == target {
            built.push(stem.to_owned()); // its own golden, above
            continue;
        }
        let (status, stdout, stderr) = build(&example, &["--target", target]);
        if status == 0 {
            let path = root()
                .join("golden")
                .join(stem)
                .join(format!("{target}.yaml"));
            failures.extend(compare(&path, &stdout));
            built.push(stem.to_owned());
        } else {
            assert_eq!(status, 1, "{stem}: {stderr}");
            assert!(stdout.is_empty(), "{stem}");
            let words: Vec<&str> = stderr.split_whitespace().filter(|w| *w != "│").collect();
            assert!(
                words.join(" ").contains(&format!("target `{target}`")),
                "{stem}: {stderr}"
            );
        }
    }
    no_golden_differs(&failures);
    built
}

/// A TrainJob example is also built at every other Trainer API level: where
/// it builds, it matches its golden there; where it cannot, the build fails
/// with an error naming what that level cannot express, and writes nothing.
#[test]
fn trainjob_examples_build_or_fail_clearly_at_every_api_level() {
    let mut failures = Vec::new();
    let mut built = Vec::new();
    for example in examples() {
        let own = own_variant(&example);
        if !own.starts_with("trainjob") {
            continue;
        }
        let own_level = spec_level(&example);
        for level in LEVELS {
            let variant = variant_of_level(level);
            if level == own_level {
                continue;
            }
            let (status, stdout, stderr) = build(&example, &["--api-level", level.as_str()]);
            let what = format!("{} at {}", example.display(), level.as_str());
            if status == 0 {
                let stem = example.file_stem().unwrap().to_str().unwrap();
                let path = root()
                    .join("golden")
                    .join(stem)
                    .join(format!("{variant}.yaml"));
                failures.extend(compare(&path, &stdout));
                built.push(what);
            } else {
                assert_eq!(status, 1, "{what}: {stderr}");
                assert!(stdout.is_empty(), "{what}");
                // The rendering wraps long messages: compare the words.
                let words: Vec<&str> = stderr.split_whitespace().filter(|w| *w != "│").collect();
                assert!(
                    words
                        .join(" ")
                        .contains(&format!("on Trainer API {} cannot express", level.as_str())),
                    "{what}: {stderr}"
                );
            }
        }
    }
    no_golden_differs(&failures);
    assert!(
        built.len() >= 2,
        "too few examples build at another level: {built:?}"
    );
}

#[test]
fn every_golden_passes_the_strict_schemas_and_webhook_rules() {
    let mut checked = Vec::new();
    for dir in std::fs::read_dir(root().join("golden")).unwrap() {
        for file in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_none_or(|e| e != "yaml") {
                continue; // describe.txt
            }
            let documents: Vec<Value> =
                serde_saphyr::from_str_multiple(&std::fs::read_to_string(&path).unwrap())
                    .expect("goldens are YAML");
            assert!(!documents.is_empty(), "{}", path.display());
            let values: Vec<&Value> = documents.iter().collect();
            let problems = trainc::verify::verify_values(&values, level_of_golden(&path));
            assert!(problems.is_empty(), "{}: {problems:#?}", path.display());
            checked.extend(
                documents
                    .iter()
                    .map(|d| d["kind"].as_str().unwrap().to_owned()),
            );
        }
    }
    for kind in [
        "PyTorchJob",
        "TrainJob",
        "Job",
        "JobSet",
        "Service",
        "PersistentVolumeClaim",
    ] {
        assert!(
            checked.iter().any(|k| k == kind),
            "no golden holds a {kind}"
        );
    }
}

/// JobSet v0.8.0 is the oldest release trainc's JobSets are for, and its
/// CRD is stricter than v0.12.0's, which `verify` embeds: every JobSet of
/// the goldens passes its schema too.
#[test]
fn every_jobset_golden_passes_jobset_v0_8_s_schema() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            root().join("schemas/k8s/variants/jobset-jobset-v1alpha2-v0.8.0.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mut checked = 0;
    for dir in std::fs::read_dir(root().join("golden")).unwrap() {
        let path = dir.unwrap().path().join("jobset.yaml");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let documents: Vec<Value> = serde_saphyr::from_str_multiple(&text).unwrap();
        for jobset in documents.iter().filter(|d| d["kind"] == "JobSet") {
            let errors: Vec<String> = validator
                .iter_errors(jobset)
                .map(|e| format!("{}: {e}", e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
            checked += 1;
        }
    }
    assert!(checked >= 13, "only {checked} JobSet goldens");
}

#[test]
fn building_twice_gives_the_same_bytes() {
    for example in examples() {
        assert_eq!(
            build(&example, &[]),
            build(&example, &[]),
            "{}",
            example.display()
        );
    }
}

/// What a run is, whichever object describes it.
#[derive(Debug, PartialEq)]
struct Run {
    image: Value,
    command: Value,
    args: Value,
    nodes: u64,
    processes_per_node: String,
    resources: Value,
    env: Value,
    volumes: Value,
    mounts: Value,
    claims: Vec<Value>,
}

impl Run {
    /// The run of a pod template's first container (a PyTorchJob's Master,
    /// a Job's pods), with what the target's launch added taken out of
    /// `command` and `env` by the caller.
    fn of_pod(
        pod: &Value,
        command: Value,
        nodes: u64,
        processes_per_node: String,
        env: Value,
        claims: Vec<Value>,
    ) -> Run {
        let container = &pod["containers"][0];
        Run {
            image: container["image"].clone(),
            command,
            args: container["args"].clone(),
            nodes,
            processes_per_node,
            resources: container["resources"].clone(),
            env,
            volumes: sorted_by_name(&pod["volumes"]),
            mounts: sorted_by_name(&container["volumeMounts"]),
            claims,
        }
    }
}

/// A list of named things in name order.
fn sorted_by_name(v: &Value) -> Value {
    let mut items = v.as_array().cloned().unwrap_or_default();
    items.sort_by_key(|i| i["name"].as_str().unwrap_or("").to_owned());
    Value::Array(items)
}

fn run_of(yaml: &str) -> Run {
    let documents: Vec<Value> = serde_saphyr::from_str_multiple(yaml).unwrap();
    let job = documents.last().unwrap();
    let claims: Vec<Value> = documents
        .iter()
        .filter(|d| d["kind"] == "PersistentVolumeClaim")
        .cloned()
        .collect();
    match job["kind"].as_str().unwrap() {
        "PyTorchJob" => {
            let replicas = &job["spec"]["pytorchReplicaSpecs"];
            let nodes = ["Master", "Worker"]
                .iter()
                .filter_map(|r| replicas[r]["replicas"].as_u64())
                .sum();
            let pod = &replicas["Master"]["template"]["spec"];
            let container = &pod["containers"][0];
            let nproc = job["spec"]["nprocPerNode"].as_str().unwrap().to_owned();
            // On a PyTorchJob trainc passes the processes per node to torchrun
            // as well; the TrainJob's runtime sets PET_NPROC_PER_NODE instead.
            let mut command = container["command"].clone();
            if let Some(parts) = command.as_array_mut()
                && parts.first().is_some_and(|p| p == "torchrun")
            {
                assert_eq!(parts[1], format!("--nproc_per_node={nproc}"));
                parts.remove(1);
            }
            // `[code]` with packages: the same flag inside the `sh -c` script.
            if let Some(parts) = command.as_array_mut()
                && parts.first().is_some_and(|p| p == "sh")
            {
                let script = parts[2].as_str().unwrap();
                let flag = format!("exec torchrun --nproc_per_node={nproc} ");
                assert!(script.contains(&flag), "{script}");
                parts[2] = Value::from(script.replace(&flag, "exec torchrun "));
            }
            Run::of_pod(pod, command, nodes, nproc, container["env"].clone(), claims)
        }
        "TrainJob" => {
            let trainer = &job["spec"]["trainer"];
            // The pod: in the TrainingRuntime trainc wrote, else in the patch.
            let written = documents.iter().find(|d| d["kind"] == "TrainingRuntime");
            let pod = written
                .and_then(|r| {
                    r["spec"]["template"]["spec"]["replicatedJobs"]
                        .as_array()?
                        .iter()
                        .find(|j| j["name"] == "node")?
                        .pointer("/template/spec/template/spec")
                })
                .or_else(|| job.pointer("/spec/runtimePatches/0/trainingRuntimeSpec/template/spec/replicatedJobs/0/template/spec/template/spec"))
                .or_else(|| job.pointer("/spec/podTemplateOverrides/0/spec"))
                .or_else(|| job.pointer("/spec/podSpecOverrides/0"))
                .unwrap_or(&Value::Null);
            let nproc = &trainer["numProcPerNode"];
            Run {
                image: trainer["image"].clone(),
                command: trainer["command"].clone(),
                args: trainer["args"].clone(),
                nodes: trainer["numNodes"].as_u64().unwrap(),
                processes_per_node: nproc
                    .as_str()
                    .map_or_else(|| nproc.to_string(), str::to_owned),
                resources: trainer["resourcesPerNode"].clone(),
                env: trainer["env"].clone(),
                volumes: sorted_by_name(&pod["volumes"]),
                mounts: pod
                    .pointer("/containers/0/volumeMounts")
                    .map_or(json!([]), sorted_by_name),
                claims,
            }
        }
        "Job" => job_run(job, claims),
        other => panic!("unexpected job kind {other}"),
    }
}

/// The run of a Job: torchrun's flags are where the operators' variables
/// are on the other targets, so they are checked and taken out; a
/// `command` gets the variables instead, which are taken out too.
fn job_run(job: &Value, claims: Vec<Value>) -> Run {
    let name = job["metadata"]["name"].as_str().unwrap();
    let pod = &job["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let nodes = job["spec"]["completions"].as_u64().unwrap();
    assert_eq!(job["spec"]["parallelism"], job["spec"]["completions"]);
    assert_eq!(job["spec"]["completionMode"], "Indexed");
    assert_eq!(pod["subdomain"], name);
    assert_eq!(pod["restartPolicy"], "Never");
    let flags = |nproc: &str| {
        vec![
            format!("--nnodes={nodes}"),
            format!("--nproc_per_node={nproc}"),
            "--node_rank=$(JOB_COMPLETION_INDEX)".to_owned(),
            format!("--master_addr={name}-0.{name}"),
            "--master_port=29500".to_owned(),
            // trainc's join timeout for a Job's static rendezvous.
            "--rdzv_conf=timeout=1800".to_owned(),
        ]
    };
    let words: Vec<String> = container["command"]
        .as_array()
        .map(|c| c.iter().map(|w| w.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default();
    let env: Vec<Value> = container["env"].as_array().cloned().unwrap_or_default();
    let trainc_env =
        |e: &Value| trainc::cluster::job::RESERVED_ENV.contains(&e["name"].as_str().unwrap());
    let (command, nproc) = if words.first().is_some_and(|w| w == "torchrun") {
        let nproc = words[2].trim_start_matches("--nproc_per_node=").to_owned();
        assert_eq!(words[1..7], flags(&nproc)[..], "{words:?}");
        let names: Vec<&str> = env
            .iter()
            .filter(|e| trainc_env(e))
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["JOB_COMPLETION_INDEX"],
            "torchrun gets flags, not variables"
        );
        let mut command = words.clone();
        command.drain(1..7);
        (json!(command), nproc)
    } else if words.first().is_some_and(|w| w == "sh") {
        // `[code]` with packages: the same flags inside the `sh -c` script.
        let script = &words[2];
        let start = script.find("exec torchrun ").unwrap() + "exec torchrun ".len();
        let nproc = script[start..]
            .split_whitespace()
            .find_map(|w| w.strip_prefix("--nproc_per_node="))
            .unwrap()
            .to_owned();
        let written: Vec<String> = flags(&nproc)
            .iter()
            .map(|f| trainc::syntax::shell::join([f.as_str()]))
            .collect();
        let flag_text = format!("{} ", written.join(" "));
        assert_eq!(
            &script[start..start + flag_text.len()],
            flag_text,
            "{script}"
        );
        let mut command = words.clone();
        command[2] = script.replacen(&flag_text, "", 1);
        (json!(command), nproc)
    } else {
        let value = |n: &str| {
            env.iter()
                .find(|e| e["name"] == n)
                .and_then(|e| e["value"].as_str())
                .unwrap_or_else(|| panic!("a command gets {n}"))
                .to_owned()
        };
        assert_eq!(value("PET_NNODES"), nodes.to_string());
        assert_eq!(value("MASTER_ADDR"), format!("{name}-0.{name}"));
        (container["command"].clone(), value("PET_NPROC_PER_NODE"))
    };
    // trainc's variables come first, so that `[env]` can refer to them.
    let first_own = env.iter().position(|e| !trainc_env(e)).unwrap_or(env.len());
    assert!(env[first_own..].iter().all(|e| !trainc_env(e)), "{env:?}");
    let own: Vec<Value> = env.iter().filter(|e| !trainc_env(e)).cloned().collect();
    let own = if own.is_empty() {
        Value::Null
    } else {
        json!(own)
    };
    Run::of_pod(pod, command, nodes, nproc, own, claims)
}

/// For every example a plain Job can run, the Job describes the same run as
/// the PyTorchJob built from the same spec: image, command, node count,
/// processes per node, resources, volumes and mounts, env, claims.
#[test]
fn a_job_describes_the_same_run_as_the_pytorchjob() {
    let mut compared = Vec::new();
    for example in examples() {
        let (p_status, p_out, p_err) = build(&example, &["--target", "pytorchjob"]);
        let (j_status, j_out, _) = build(&example, &["--target", "job"]);
        if j_status != 0 {
            continue; // what a Job cannot run is tested above
        }
        assert_eq!(p_status, 0, "{}: {p_err}", example.display());
        assert_eq!(run_of(&p_out), run_of(&j_out), "{}", example.display());
        compared.push(example.file_stem().unwrap().to_str().unwrap().to_owned());
    }
    assert!(
        compared.len() >= 6,
        "too few examples build as a Job: {compared:?}"
    );
}

#[test]
fn both_targets_describe_the_same_run_wherever_both_can_build() {
    let mut compared = Vec::new();
    for example in examples() {
        let for_level = |level: &str| {
            let pytorchjob = build(&example, &["--target", "pytorchjob"]);
            let trainjob = build(&example, &["--target", "trainjob", "--api-level", level]);
            (pytorchjob, trainjob)
        };
        for level in LEVELS.map(ApiLevel::as_str) {
            let ((p_status, p_out, _), (t_status, t_out, _)) = for_level(level);
            if p_status != 0 || t_status != 0 {
                continue; // one target cannot express this spec; its errors are tested elsewhere
            }
            assert_eq!(
                run_of(&p_out),
                run_of(&t_out),
                "{} at {level}",
                example.display()
            );
            compared.push(format!(
                "{} {level}",
                example.file_stem().unwrap().to_str().unwrap()
            ));
        }
    }
    assert!(
        compared.len() >= 5,
        "too few examples build for both targets: {compared:?}"
    );
}
