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

/// The golden variant an example is for: its own target and API level.
fn own_variant(example: &Path) -> String {
    let mut sources = trainc::Sources::new();
    let id = trainc::source::read(&mut sources, example).unwrap();
    let spec = trainc::check(&sources, id)
        .spec
        .expect("examples are valid");
    match spec.target.unwrap_or(Target::Pytorchjob) {
        Target::Pytorchjob => "pytorchjob".to_owned(),
        Target::Trainjob => variant_of_level(
            spec.trainjob
                .and_then(|t| t.api_level)
                .unwrap_or(ApiLevel::V2_2),
        )
        .to_owned(),
    }
}

/// The golden variant of a TrainJob at one Trainer API level.
fn variant_of_level(level: ApiLevel) -> &'static str {
    match level {
        ApiLevel::V2_2 => "trainjob",
        ApiLevel::V2_1 => "trainjob-v2.1",
        ApiLevel::V2_0 => "trainjob-v2.0",
    }
}

const LEVELS: [ApiLevel; 3] = [ApiLevel::V2_2, ApiLevel::V2_1, ApiLevel::V2_0];

fn level_of_golden(path: &Path) -> ApiLevel {
    let stem = path.file_stem().unwrap().to_str().unwrap();
    LEVELS
        .into_iter()
        .filter(|l| *l != ApiLevel::V2_2)
        .find(|l| stem.starts_with(variant_of_level(*l)))
        .unwrap_or(ApiLevel::V2_2)
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
            assert_eq!(stderr, "", "{what}: examples build without warnings");
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
    assert!(
        failures.is_empty(),
        "goldens differ; rerun with TRAINC_BLESS=1 after reading the diff\n{}",
        failures.join("\n")
    );
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
        for level in LEVELS {
            let variant = variant_of_level(level);
            if variant == own {
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
    assert!(
        failures.is_empty(),
        "goldens differ; rerun with TRAINC_BLESS=1 after reading the diff\n{}",
        failures.join("\n")
    );
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
    for kind in ["PyTorchJob", "TrainJob", "Service", "PersistentVolumeClaim"] {
        assert!(
            checked.iter().any(|k| k == kind),
            "no golden holds a {kind}"
        );
    }
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

fn run_of(yaml: &str) -> Run {
    let documents: Vec<Value> = serde_saphyr::from_str_multiple(yaml).unwrap();
    let job = documents.last().unwrap();
    let claims: Vec<Value> = documents
        .iter()
        .filter(|d| d["kind"] == "PersistentVolumeClaim")
        .cloned()
        .collect();
    let sorted = |v: &Value| {
        let mut items = v.as_array().cloned().unwrap_or_default();
        items.sort_by_key(|i| i["name"].as_str().unwrap_or("").to_owned());
        Value::Array(items)
    };
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
            Run {
                image: container["image"].clone(),
                command,
                args: container["args"].clone(),
                nodes,
                processes_per_node: nproc,
                resources: container["resources"].clone(),
                env: container["env"].clone(),
                volumes: sorted(&pod["volumes"]),
                mounts: sorted(&container["volumeMounts"]),
                claims,
            }
        }
        "TrainJob" => {
            let trainer = &job["spec"]["trainer"];
            let pod = job
                .pointer("/spec/runtimePatches/0/trainingRuntimeSpec/template/spec/replicatedJobs/0/template/spec/template/spec")
                .or_else(|| job.pointer("/spec/podTemplateOverrides/0/spec"))
                .or_else(|| job.pointer("/spec/podSpecOverrides/0"))
                .unwrap();
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
                volumes: sorted(&pod["volumes"]),
                mounts: pod
                    .pointer("/containers/0/volumeMounts")
                    .map_or(json!([]), sorted),
                claims,
            }
        }
        other => panic!("unexpected job kind {other}"),
    }
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
