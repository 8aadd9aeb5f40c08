//! Kubeflow Trainer's own v2.3.0 example manifests (`tests/upstream/`):
//! each verifies (with its runtime, when it carries one), imports, and the
//! imported spec builds a TrainJob that runs the same: same runtime, image,
//! command, nodes, env, resources and initializers.

use serde_json::Value;

use crate::support::{field_of, root, temp_dir, text, trainc};

const DIR: &str = "tests/upstream/kubeflow-trainer-v2.3.0";

/// The objects of a YAML stream, read by trainc's own parser.
fn objects(yaml: &str) -> Vec<Value> {
    let mut sources = trainc::Sources::new();
    let id = sources.add("x.yaml", yaml);
    let documents = trainc::parse::parse_yaml_stream(id, yaml, 64, 100).expect("YAML");
    documents
        .iter()
        .map(trainc::tree::Node::to_json)
        .filter(Value::is_object)
        .collect()
}

fn trainjob(objects: &[Value]) -> &Value {
    objects
        .iter()
        .find(|o| o["kind"] == "TrainJob")
        .expect("a TrainJob")
}

/// The example, and the Trainer API level it is valid at: 05's runtime
/// lacks the `initializer` mount v2.3.0's webhook requires.
const EXAMPLES: &[(&str, &str)] = &[
    ("01-multi-node", "v2.3"),
    ("02-runtime-patches", "v2.3"),
    ("03-kueue-integration", "v2.3"),
    ("04-volcano-integration", "v2.3"),
    ("05-multi-step", "v2.2"),
];

#[test]
fn kubeflow_trainer_v2_3_examples_verify_import_and_build_the_same_trainjob() {
    let dir = root().join(DIR);
    for (name, level) in EXAMPLES {
        let file = format!("{name}.yaml");
        let verified = trainc(&dir, &["verify", "--api-level", level, &file]);
        assert!(
            verified.status.success(),
            "{name}: {}",
            text(&verified.stderr)
        );
        // With `--output-dir`, a runtime the example carries goes to
        // `runtimes.yaml` beside the spec, which names it.
        let scratch = temp_dir(&format!("upstream-{name}"));
        let out = scratch.join("out");
        let imported = trainc(
            &dir,
            &[
                "import",
                "--api-level",
                level,
                "--output-dir",
                out.to_str().unwrap(),
                &file,
            ],
        );
        assert!(
            imported.status.success(),
            "{name}: {}",
            text(&imported.stderr)
        );
        let carries_runtime = std::fs::read_to_string(dir.join(&file))
            .unwrap()
            .contains("TrainingRuntime\nmetadata");
        assert_eq!(
            out.join("runtimes.yaml").exists(),
            carries_runtime,
            "{name}: the runtimes file"
        );
        let spec = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "toml"))
            .unwrap();
        let built = trainc(
            &out,
            &[
                "build",
                "--verify",
                "--api-level",
                level,
                spec.file_name().unwrap().to_str().unwrap(),
            ],
        );
        assert!(built.status.success(), "{name}: {}", text(&built.stderr));
        let original = objects(&std::fs::read_to_string(dir.join(&file)).unwrap());
        let rebuilt = objects(&text(&built.stdout));
        let (a, b) = (trainjob(&original), trainjob(&rebuilt));
        // The processes torchrun starts, as Trainer resolves them on the
        // runtime the TrainJob names (the example's own, else Kubeflow's).
        let release = match *level {
            "v2.2" => trainc::trainer::Release::V2_2,
            _ => trainc::trainer::Release::V2_3,
        };
        let runtime_name = a["spec"]["runtimeRef"]["name"].as_str().unwrap();
        let own = original
            .iter()
            .filter_map(|o| trainc::trainer::runtime::Runtime::from_json(o).ok())
            .find(|r| r.name == runtime_name);
        let runtime = own
            .as_ref()
            .or_else(|| trainc::trainer::catalogue::find(release, runtime_name));
        let procs = |job: &Value| {
            trainc::trainer::torch::procs_per_node(release, &job["spec"]["trainer"], runtime)
        };
        assert_eq!(procs(a), procs(b), "{name}: processes per node");
        assert_eq!(a["metadata"]["name"], b["metadata"]["name"], "{name}");
        for pointer in [
            "/spec/runtimeRef/name",
            "/spec/runtimeRef/kind",
            "/spec/initializer",
            "/spec/suspend",
            "/spec/trainer/image",
            "/spec/trainer/command",
            "/spec/trainer/args",
            "/spec/trainer/numNodes",
            "/spec/trainer/env",
            "/spec/trainer/resourcesPerNode",
        ] {
            assert_eq!(a.pointer(pointer), b.pointer(pointer), "{name}: {pointer}");
        }
    }
}

#[test]
fn at_v2_3_the_multi_step_runtime_is_rejected_for_its_missing_initializer_mount() {
    let dir = root().join(DIR);
    let verified = trainc(&dir, &["verify", "05-multi-step.yaml"]);
    assert_eq!(verified.status.code(), Some(1));
    let stderr = text(&verified.stderr);
    assert!(
        stderr.contains("mounts no `initializer` volume"),
        "{stderr}"
    );
}

/// Every PyTorch example of training-operator v1.9.2 verifies, passed as
/// one directory: PyTorchJobs, and the etcd example's Services and Pod.
#[test]
fn training_operator_v1_9_2_examples_verify_as_a_directory() {
    let output = trainc(
        &root(),
        &["verify", "tests/upstream/kubeflow-trainer-v1.9.2"],
    );
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "verified 12 objects in 10 files against Kubernetes 1.36: 0 errors, 0 warnings"
        ),
        "{stderr}"
    );
}

/// Every create-time case of the operators' own webhook unit tests, as a
/// manifest with its upstream verdict (`tests/upstream/webhooks/*/`):
/// `trainc verify` accepts what the webhook accepts, and rejects or warns
/// at each field the webhook names.
#[test]
fn verify_gives_the_verdicts_of_the_webhooks_own_tests() {
    let base = root().join("tests/upstream/webhooks");
    let mut checked = 0;
    for dir in std::fs::read_dir(&base).unwrap().map(|e| e.unwrap().path()) {
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.sort();
        for file in files {
            let manifest = std::fs::read_to_string(&file).unwrap();
            let verdict = manifest
                .lines()
                .find_map(|l| l.strip_prefix("# verdict: "))
                .unwrap_or_else(|| panic!("{}: no `# verdict:` line", file.display()));
            let level = manifest
                .lines()
                .find_map(|l| l.strip_prefix("# level: "))
                .unwrap_or("v2.3");
            let operator = manifest
                .lines()
                .find_map(|l| l.strip_prefix("# operator: "))
                .unwrap_or("v1.9");
            let output = trainc(
                &dir,
                &[
                    "verify",
                    "--format",
                    "json",
                    "--api-level",
                    level,
                    "--training-operator",
                    operator,
                    file.to_str().unwrap(),
                ],
            );
            // An error about what follows admission (the operator failing
            // the job it admitted) is a `fail`, not a `reject`.
            let found: Vec<(String, Option<String>)> = text(&output.stdout)
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .filter(|d| d["severity"] == "error" || d["severity"] == "warning")
                .map(|d| {
                    let message = d["message"].as_str().unwrap_or_default();
                    let severity = match (d["severity"].as_str(), d["code"].as_str()) {
                        (Some("error"), Some("trainc::verify::operator")) => "failure",
                        (severity, _) => severity.unwrap_or_default(),
                    };
                    (severity.to_owned(), field_of(message).map(str::to_owned))
                })
                .collect();
            let name = file.display();
            if verdict == "accept" {
                assert!(
                    found.is_empty(),
                    "{name}: the webhook accepts it, trainc says {found:?}"
                );
            }
            let mut rejects = false;
            for expected in verdict.split(", ").filter(|v| *v != "accept") {
                let (word, field) = expected.split_once(' ').unwrap();
                let severity = match word {
                    "reject" => {
                        rejects = true;
                        "error"
                    }
                    "warn" => "warning",
                    "fail" => {
                        rejects = true;
                        "failure"
                    }
                    other => panic!("{name}: verdict word {other}"),
                };
                // At the field, or inside it (trainc may name the item of
                // a list the webhook names whole).
                let within = |f: &str| {
                    f == field
                        || f.starts_with(&format!("{field}."))
                        || f.starts_with(&format!("{field}["))
                };
                // (Before v1.8 the Training Operator's controller, not a
                // webhook, refuses a PyTorchJob: `reject` is met by either.)
                let meets = |s: &str| s == severity || (word == "reject" && s == "failure");
                assert!(
                    found
                        .iter()
                        .any(|(s, f)| meets(s) && f.as_deref().is_some_and(within)),
                    "{name}: the webhook's {word} at `{field}`, trainc says {found:?}"
                );
            }
            assert_eq!(output.status.success(), !rejects, "{name}: {found:?}");
            checked += 1;
        }
    }
    assert!(checked >= 232, "{checked} cases");
}

/// JobSet's own v0.12.0 examples verify, but for those that use what its
/// alpha feature gates (off by default) allow: its webhook refuses them.
#[test]
fn jobset_v0_12_examples_verify_but_for_the_feature_gated_ones() {
    let dir = root().join("tests/upstream/jobset-v0.12.0");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| {
            std::path::Path::new(n)
                .extension()
                .is_some_and(|e| e == "yaml")
        })
        .collect();
    files.sort();
    assert!(files.len() >= 20, "{files:?}");
    for file in files {
        let gated = file.contains("restartjob-action")
            || file.contains("restartjobandignoremaxrestarts")
            || file.starts_with("in-place-restart-jobset");
        let verified = trainc(&dir, &["verify", &file]);
        let stderr = text(&verified.stderr);
        if gated {
            assert_eq!(verified.status.code(), Some(1), "{file}: {stderr}");
            assert!(stderr.contains("feature gate"), "{file}: {stderr}");
            assert!(
                stderr.contains("trainc::verify::webhook"),
                "{file}: {stderr}"
            );
        } else {
            assert!(verified.status.success(), "{file}: {stderr}");
            assert!(stderr.contains("0 errors, 0 warnings"), "{file}: {stderr}");
            assert!(!stderr.contains("not checked"), "{file}: {stderr}");
        }
        // On JobSet v0.8, what v0.9 to v0.12 added is refused too.
        let newer = ["simple-group", "volume-claim-policy", "multiple-depends-on"]
            .iter()
            .any(|n| file.contains(n));
        let old = trainc(&dir, &["verify", "--jobset", "v0.8", &file]);
        let said = text(&old.stderr);
        assert_eq!(old.status.success(), !gated && !newer, "{file}: {said}");
        if newer {
            assert!(said.contains("JobSet v0.8"), "{file}: {said}");
        }
    }
}
