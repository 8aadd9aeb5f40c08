//! `trainc migrate`: PyTorchJobs become TrainJobs that verify and form the
//! same world, the rest of the input stays as it was, every change is said,
//! and a job that cannot move is refused with nothing written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{compare, root, temp_dir, text, trainc};

/// The cases: a manifest each, with what `trainc migrate` writes (`.out`)
/// and says (`.stderr`, its exit status first). A line `# args: ...` gives
/// the command's options.
fn cases() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(root().join("tests/migrate"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    cases.sort();
    cases
}

#[test]
fn every_case_migrates_as_expected() {
    let cases = cases();
    assert!(cases.len() >= 7, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_str().unwrap();
        let written = std::fs::read_to_string(case).unwrap();
        let mut args = vec!["migrate"];
        args.extend(
            (written.lines())
                .find_map(|line| line.strip_prefix("# args: "))
                .into_iter()
                .flat_map(str::split_whitespace),
        );
        args.push(name);
        let output = trainc(case.parent().unwrap(), &args);
        let stderr = format!(
            "exit: {}\n{}",
            output.status.code().unwrap(),
            text(&output.stderr)
        );
        failures.extend(compare(&case.with_extension("out"), &text(&output.stdout)));
        failures.extend(compare(&case.with_extension("stderr"), &stderr));
        // What migrated is what the cluster takes.
        if output.status.success() {
            let scratch = temp_dir(&format!("migrate-case-{name}"));
            std::fs::write(scratch.join(name), &output.stdout).unwrap();
            let verified = trainc(&scratch, &["verify", name]);
            if !verified.status.success() {
                failures.push(format!("{name}: {}", text(&verified.stderr)));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The objects of a YAML stream, `v1 List`s' items one by one.
fn objects(yaml: &str) -> Vec<Value> {
    let mut sources = trainc::Sources::new();
    let id = sources.add("x.yaml", yaml);
    let documents = trainc::parse::parse_yaml_stream(id, yaml, 64, 10_000).expect("YAML");
    let mut out = Vec::new();
    for value in documents.iter().map(trainc::tree::Node::to_json) {
        if value["kind"] == "List" {
            out.extend(value["items"].as_array().cloned().unwrap_or_default());
        } else if value.is_object() {
            out.push(value);
        }
    }
    out
}

#[test]
fn what_is_not_a_pytorchjob_passes_through_byte_for_byte() {
    let dir = root().join("tests/migrate");
    // The whole file when it holds no PyTorchJob.
    let output = trainc(&dir, &["migrate", "no-pytorchjob.yaml"]);
    assert!(output.status.success());
    let input = std::fs::read_to_string(dir.join("no-pytorchjob.yaml")).unwrap();
    assert_eq!(text(&output.stdout), input);
    // Each document that is not the job, comments included.
    let output = trainc(&dir, &["migrate", "master-worker-torchrun.yaml"]);
    let out = text(&output.stdout);
    let input = std::fs::read_to_string(dir.join("master-worker-torchrun.yaml")).unwrap();
    for kept in input
        .split("\n---\n")
        .filter(|d| !d.contains("PyTorchJob") && !d.contains("kind: Service"))
    {
        assert!(out.contains(kept.trim_end()), "not kept as it was:\n{kept}");
    }
}

/// Kubeflow's own PyTorchJob examples (`tests/upstream/kubeflow-trainer-
/// v1.9.2`): each fixed-size one migrates to a TrainJob that `trainc
/// verify` accepts at Trainer v2.3 and v2.1; each elastic one is refused
/// with the reason, and nothing is written.
#[test]
fn kubeflow_examples_migrate_and_verify_at_v2_3_and_v2_1() {
    let dir = root().join("tests/upstream/kubeflow-trainer-v1.9.2");
    let scratch = temp_dir("migrate-kubeflow");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let mut migrated = 0;
    for file in &files {
        let name = file.file_name().unwrap().to_str().unwrap();
        let input = std::fs::read_to_string(file).unwrap();
        let elastic = input.contains("elasticPolicy");
        for level in ["v2.3", "v2.1"] {
            let output = trainc(&dir, &["migrate", "--api-level", level, name]);
            let stderr = text(&output.stderr);
            if elastic {
                assert_eq!(output.status.code(), Some(1), "{name}: {stderr}");
                assert!(output.stdout.is_empty(), "{name}: written anyway");
                assert!(stderr.contains("is elastic"), "{name}: {stderr}");
                continue;
            }
            assert!(output.status.success(), "{name} at {level}: {stderr}");
            let out = scratch.join(format!("{level}-{name}"));
            std::fs::write(&out, &output.stdout).unwrap();
            let verified = trainc(
                &scratch,
                &["verify", "--api-level", level, out.to_str().unwrap()],
            );
            assert!(
                verified.status.success(),
                "{name} at {level}: {}",
                text(&verified.stderr)
            );
            if input.contains("kind: PyTorchJob") || input.contains("kind: \"PyTorchJob\"") {
                assert!(text(&output.stdout).contains("kind: TrainJob"), "{name}");
                migrated += 1;
            }
        }
    }
    assert!(migrated >= 14, "{migrated} migrations");
}

/// What the cluster makes of a TrainJob stream: each training pod by name,
/// with what torchrun forms its world from.
fn world(yaml: &str) -> BTreeMap<String, BTreeMap<String, Value>> {
    let objects = objects(yaml);
    let workload = trainc::cluster::workload(&objects, &[], trainc::trainer::Release::V2_3)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut pods = BTreeMap::new();
    for pod in &workload.pods {
        let Some(container) = workload.trainer_of(pod) else {
            continue;
        };
        let env: BTreeMap<String, Value> = container["env"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|v| v["name"].as_str().is_some_and(|n| n.starts_with("PET_")))
            .map(|v| {
                let value = v.get("value").or_else(|| v.get("valueFrom")).cloned();
                (
                    v["name"].as_str().unwrap().to_owned(),
                    value.unwrap_or_default(),
                )
            })
            .collect();
        assert!(
            env.contains_key("PET_NNODES") && env.contains_key("PET_NODE_RANK"),
            "{}: {env:?}",
            pod.name
        );
        pods.insert(pod.name.clone(), env);
    }
    assert!(!pods.is_empty());
    pods
}

/// `build --target pytorchjob`, then `migrate`, gives the pods `build
/// --target trainjob` gives: the same names, and in each the same `PET_*`
/// (nodes, processes per node, rank, master), for every example that both
/// targets can express.
#[test]
fn a_built_pytorchjob_migrates_to_the_world_of_the_built_trainjob() {
    let examples = root().join("examples");
    let scratch = temp_dir("migrate-round-trip");
    let mut compared = Vec::new();
    let mut specs: Vec<PathBuf> = std::fs::read_dir(&examples)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    specs.sort();
    for spec in &specs {
        let name = spec.file_stem().unwrap().to_str().unwrap();
        let build = |target: &str| {
            let output = trainc(
                &examples,
                &[
                    "build",
                    "--target",
                    target,
                    "--api-level",
                    "v2.3",
                    spec.to_str().unwrap(),
                ],
            );
            output.status.success().then(|| text(&output.stdout))
        };
        let (Some(pytorchjob), Some(trainjob)) = (build("pytorchjob"), build("trainjob")) else {
            continue;
        };
        let input = scratch.join(format!("{name}.yaml"));
        std::fs::write(&input, &pytorchjob).unwrap();
        let migrated = trainc(&scratch, &["migrate", input.to_str().unwrap()]);
        assert!(
            migrated.status.success(),
            "{name}: {}",
            text(&migrated.stderr)
        );
        assert_eq!(
            world(&text(&migrated.stdout)),
            world(&trainjob),
            "{name}: the migrated PyTorchJob's pods against the TrainJob's"
        );
        compared.push(name.to_owned());
    }
    assert!(compared.len() >= 6, "compared only {compared:?}");
}

/// All or nothing: one job that cannot move keeps the whole output back
/// (exit 1), unless `--keep-going`, which writes the others and keeps that
/// job as it was (still exit 1).
#[test]
fn one_refused_job_writes_nothing_unless_keep_going() {
    let dir = temp_dir("migrate-keep-going");
    let cases = root().join("tests/migrate");
    let both = format!(
        "{}---\n{}",
        std::fs::read_to_string(cases.join("run-policy.yaml")).unwrap(),
        std::fs::read_to_string(cases.join("elastic.yaml")).unwrap()
    );
    std::fs::write(dir.join("both.yaml"), &both).unwrap();
    let out = dir.join("out");
    let refused = trainc(&dir, &["migrate", "--output-dir", "out", "both.yaml"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(refused.stdout.is_empty());
    assert!(!out.exists(), "written anyway");
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains("1 of 2 PyTorchJobs could not be migrated; nothing was written"),
        "{stderr}"
    );
    let going = trainc(
        &dir,
        &[
            "migrate",
            "--keep-going",
            "--output-dir",
            "out",
            "both.yaml",
        ],
    );
    assert_eq!(going.status.code(), Some(1), "{}", text(&going.stderr));
    let written = std::fs::read_to_string(out.join("both.yaml")).unwrap();
    let kinds: Vec<String> = objects(&written)
        .iter()
        .map(|o| o["kind"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds, ["TrainingRuntime", "TrainJob", "PyTorchJob"]);
    // A second run does not replace what is there without `--force`.
    let again = trainc(
        &dir,
        &[
            "migrate",
            "--keep-going",
            "--output-dir",
            "out",
            "both.yaml",
        ],
    );
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again.stderr).contains("pass `--force`"));
}

/// `--spec` writes the spec of each migrated job, which builds the same
/// TrainJob.
#[test]
fn spec_writes_the_trainjob_spec_that_builds_the_same_objects() {
    let dir = temp_dir("migrate-spec");
    let cases = root().join("tests/migrate");
    std::fs::copy(cases.join("run-policy.yaml"), dir.join("bert.yaml")).unwrap();
    let manifests = trainc(&dir, &["migrate", "bert.yaml"]);
    assert!(manifests.status.success());
    let spec = trainc(&dir, &["migrate", "--spec", "bert.yaml"]);
    assert!(spec.status.success(), "{}", text(&spec.stderr));
    let spec_text = text(&spec.stdout);
    assert!(spec_text.contains("target = \"trainjob\""), "{spec_text}");
    assert!(spec_text.contains("writeRuntime = true"), "{spec_text}");
    std::fs::write(dir.join("bert.toml"), &spec_text).unwrap();
    let built = trainc(&dir, &["build", "bert.toml"]);
    assert!(built.status.success(), "{}", text(&built.stderr));
    assert_eq!(
        objects(&text(&built.stdout)),
        objects(&text(&manifests.stdout))
    );
}

/// A directory in, a directory out: each file under its own name.
#[test]
fn a_directory_migrates_into_a_directory() {
    let dir = temp_dir("migrate-dir");
    let input = dir.join("jobs/team");
    std::fs::create_dir_all(&input).unwrap();
    let cases = root().join("tests/migrate");
    for name in ["run-policy.yaml", "no-pytorchjob.yaml"] {
        std::fs::copy(cases.join(name), input.join(name)).unwrap();
    }
    let output = trainc(&dir, &["migrate", "--output-dir", "migrated", "jobs"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let migrated = dir.join("migrated/team");
    assert!(Path::exists(&migrated.join("run-policy.yaml")));
    assert_eq!(
        std::fs::read_to_string(migrated.join("no-pytorchjob.yaml")).unwrap(),
        std::fs::read_to_string(cases.join("no-pytorchjob.yaml")).unwrap()
    );
}
