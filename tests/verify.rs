//! `trainc verify`: manifests written by anyone, against the strict schemas
//! and the operators' rules, each problem at its line.

use std::path::{Path, PathBuf};

use crate::support::{root, run_with_stdin, temp_dir, text, trainc};

/// The reference manifests (`tests/reference/`, copied from the schema set
/// CI's independent checkers use; its README says what each holds).
fn testdata() -> PathBuf {
    root().join("tests/reference")
}

/// The messages of the JSON diagnostics whose `field` is `value`
/// (`code`, `trainc::verify::schema`; `severity`, `error`).
fn messages(stdout: &[u8], field: &str, value: &str) -> Vec<String> {
    json_lines(stdout)
        .iter()
        .filter(|d| d[field] == value)
        .map(|d| d["message"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn json_lines(bytes: &[u8]) -> Vec<serde_json::Value> {
    text(bytes)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The 1-based first line of every `---`-separated document of `text`.
fn document_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![1];
    for (i, line) in text.lines().enumerate() {
        if line == "---" {
            starts.push(i + 2);
        }
    }
    starts
}

/// Every document of the reference bad.yaml fails, each with an error located
/// inside that document; the message names the document and object.
#[test]
fn every_document_of_bad_yaml_is_rejected_at_its_own_lines() {
    let dir = testdata();
    // Under `--require-schemas` the TFJob, which trainc has no schema for,
    // is an error too.
    let output = trainc(
        &dir,
        &[
            "verify",
            "--require-schemas",
            "--format",
            "json",
            "bad.yaml",
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    let errors = json_lines(&output.stdout);
    let source = std::fs::read_to_string(dir.join("bad.yaml")).unwrap();
    let starts = document_starts(&source);
    let total_lines = source.lines().count();
    for (n, &start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).map_or(total_lines, |next| next - 2);
        let inside: Vec<&serde_json::Value> = errors
            .iter()
            .filter(|e| {
                (start..=end).contains(&usize::try_from(e["line"].as_u64().unwrap()).unwrap())
            })
            .collect();
        assert!(
            !inside.is_empty(),
            "document {} (lines {start}-{end}) has no error: {errors:#?}",
            n + 1
        );
        for error in inside {
            assert_eq!(error["severity"], "error");
            let message = error["message"].as_str().unwrap();
            assert!(
                message.starts_with(&format!("document {}, ", n + 1)),
                "{message}"
            );
        }
    }
}

#[test]
fn bad_yaml_problems_are_worded_and_placed_for_a_person() {
    let output = trainc(&testdata(), &["verify", "--format", "json", "bad.yaml"]);
    let errors = json_lines(&output.stdout);
    let find = |needle: &str| {
        errors
            .iter()
            .find(|e| e["message"].as_str().unwrap().contains(needle))
            .unwrap_or_else(|| panic!("no error with `{needle}`: {errors:#?}"))
    };
    let typo = find("unknown field `pytorchReplicaSpec` (did you mean `pytorchReplicaSpecs`?)");
    assert_eq!((&typo["line"], &typo["col"]), (&8.into(), &3.into()));
    assert!(
        typo["message"]
            .as_str()
            .unwrap()
            .starts_with("document 1, PyTorchJob/typo, `spec.pytorchReplicaSpec`: ")
    );
    let port = find("Service/svc, `spec.ports[0].port`");
    assert_eq!(port["line"], 68);
    let tfjob =
        find("TFJob/tf, `kind`: not checked: trainc has no schema for `kubeflow.org/v1` `TFJob`");
    assert!(tfjob["help"].as_str().unwrap().contains("PyTorchJob"));
    assert_eq!(tfjob["code"], "trainc::verify::unchecked");
    assert_eq!(tfjob["severity"], "note");
}

#[test]
fn good_yaml_and_the_v2_1_trainjob_are_accepted() {
    let dir = testdata();
    let good = trainc(&dir, &["verify", "good.yaml"]);
    assert_eq!(good.status.code(), Some(0), "{}", text(&good.stderr));
    assert!(
        text(&good.stderr)
            .contains("verified 6 objects in 1 file against Kubernetes 1.36: 0 errors"),
        "{}",
        text(&good.stderr)
    );
    // The v2.1 form is rejected by the current schema and accepted at its level.
    let current = trainc(&dir, &["verify", "trainjob-v2.1.yaml"]);
    assert_eq!(current.status.code(), Some(1));
    assert!(text(&current.stderr).contains("unknown field `podTemplateOverrides`"));
    let v21 = trainc(
        &dir,
        &["verify", "--api-level", "v2.1", "trainjob-v2.1.yaml"],
    );
    assert_eq!(v21.status.code(), Some(0), "{}", text(&v21.stderr));
}

#[test]
fn duplicate_keys_and_broken_yaml_are_errors() {
    let dup = trainc(
        &testdata(),
        &["verify", "--format", "json", "duplicate-key.yaml"],
    );
    assert_eq!(dup.status.code(), Some(1));
    let errors = json_lines(&dup.stdout);
    assert_eq!(errors[0]["message"], "duplicate key `name`");
    assert_eq!(errors[0]["line"], 5);
    let broken = run_with_stdin(
        std::path::Path::new(env!("CARGO_BIN_EXE_trainc")),
        &["verify", "-"],
        b"apiVersion: v1\nkind: Service\nmetadata: {name: [\n",
    );
    assert_eq!(broken.status.code(), Some(1));
    assert!(text(&broken.stderr).contains("<stdin>:"));
}

/// Every golden is valid, as kubeconform finds it in CI: the TrainJobs at
/// the API level their file name says.
#[test]
fn every_golden_is_valid() {
    let mut checked = 0;
    for dir in std::fs::read_dir(root().join("golden")).unwrap() {
        for file in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            if path.extension().is_none_or(|e| e != "yaml") {
                continue;
            }
            let mut args = vec!["verify"];
            if name.starts_with("trainjob-v2.1") {
                args.extend(["--api-level", "v2.1"]);
            } else if name.starts_with("trainjob-v2.0") {
                args.extend(["--api-level", "v2.0"]);
            }
            args.push(path.to_str().unwrap());
            let output = trainc(&root(), &args);
            assert_eq!(
                output.status.code(),
                Some(0),
                "{name}: {}",
                text(&output.stderr)
            );
            checked += 1;
        }
    }
    assert!(checked >= 40, "only {checked} goldens");
}

/// What `kubectl get -o yaml` and `trainc build -o json` print: a `v1 List`,
/// checked item by item; the operators' rules apply as in `build --verify`.
#[test]
fn lists_are_checked_item_by_item_with_the_operator_rules() {
    let dir = temp_dir("verify-list");
    let built = trainc(
        &root(),
        &["build", "-o", "json", "examples/gpu-multinode.toml"],
    );
    assert_eq!(built.status.code(), Some(0));
    std::fs::write(dir.join("list.json"), &built.stdout).unwrap();
    let mut list: serde_json::Value = serde_json::from_slice(&built.stdout).unwrap();
    let items = list["items"].as_array().unwrap().len();
    let ok = trainc(&dir, &["verify", "list.json"]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    assert!(
        text(&ok.stderr).contains(&format!("verified {items} object")),
        "{}",
        text(&ok.stderr)
    );

    // Two Masters: the webhook's rule, which no schema expresses.
    list["items"][0]["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = 2.into();
    std::fs::write(dir.join("two-masters.json"), list.to_string()).unwrap();
    let bad = trainc(&dir, &["verify", "--format", "json", "two-masters.json"]);
    assert_eq!(bad.status.code(), Some(1));
    let errors = json_lines(&bad.stdout);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0]["code"], "trainc::verify::webhook");
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("`spec.pytorchReplicaSpecs.Master.replicas`"),
        "{errors:#?}"
    );
}

#[test]
fn a_document_that_is_not_an_object_and_one_without_a_kind_are_errors() {
    let dir = temp_dir("verify-shapes");
    std::fs::write(
        dir.join("m.yaml"),
        "- just\n- a list\n---\napiVersion: v1\nmetadata: {name: x}\n",
    )
    .unwrap();
    let output = trainc(&dir, &["verify", "--format", "json", "m.yaml"]);
    assert_eq!(output.status.code(), Some(1));
    let errors = json_lines(&output.stdout);
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("document 1 is not a Kubernetes object")
    );
    assert_eq!(errors[1]["line"], 4);
    assert!(
        errors[1]["message"]
            .as_str()
            .unwrap()
            .contains("has no `kind`")
    );
    let missing = trainc(&dir, &["verify", "nope.yaml"]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn the_runtimes_kubeflow_ships_pass_the_strict_runtime_schemas_of_their_release() {
    for (level, file) in [
        ("v2.0", "trainer-v2.0.0.yaml"),
        ("v2.1", "trainer-v2.1.0.yaml"),
        ("v2.2", "trainer-v2.2.0.yaml"),
        ("v2.3", "trainer-v2.3.0.yaml"),
    ] {
        let output = trainc(
            &root().join("schemas/runtimes"),
            &["verify", "--api-level", level, file],
        );
        assert!(output.status.success(), "{file}: {}", text(&output.stderr));
    }
    // A field the CRD does not have is caught in a runtime as in any object.
    let dir = temp_dir("verify-runtime-unknown-field");
    std::fs::write(
        dir.join("r.yaml"),
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainingRuntime\nmetadata: {name: r}\nspec:\n  mlPolicy: {numNodes: 1, torch: {}}\n  template: {spec: {replicatedJobs: []}}\n  podGroupPolicy: {volcanoo: {}}\n",
    )
    .unwrap();
    let output = trainc(&dir, &["verify", "r.yaml"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).contains("volcanoo"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn a_trainjob_is_checked_with_the_runtime_of_a_runtimes_file() {
    let dir = temp_dir("verify-with-runtimes");
    std::fs::write(
        dir.join("runtimes.yaml"),
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: trainer.kubeflow.org/v1alpha1\n  kind: ClusterTrainingRuntime\n  metadata: {name: plain}\n  spec:\n    mlPolicy: {numNodes: 1, torch: {}}\n    template:\n      spec:\n        replicatedJobs:\n        - name: node\n          template:\n            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n            spec: {template: {spec: {containers: [{name: node}]}}}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("job.yaml"),
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: j}\nspec:\n  runtimeRef: {name: plain, apiGroup: trainer.kubeflow.org, kind: ClusterTrainingRuntime}\n  trainer: {numNodes: 1}\n  initializer: {dataset: {storageUri: 'hf://x/y'}}\n  runtimePatches:\n  - manager: example.com/me\n    trainingRuntimeSpec:\n      template:\n        spec:\n          replicatedJobs:\n          - name: node\n            template: {spec: {template: {spec: {containers: [{name: logs}]}}}}\n",
    )
    .unwrap();
    // Alone, `plain` is not a runtime Kubeflow ships: nothing to check it against.
    let alone = trainc(&dir, &["verify", "job.yaml"]);
    assert!(alone.status.success(), "{}", text(&alone.stderr));
    let output = trainc(
        &dir,
        &[
            "verify",
            "--format",
            "json",
            "--runtimes",
            "runtimes.yaml",
            "job.yaml",
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    says_all(
        &output.stdout,
        &[
            "has no `dataset-initializer` job",
            "gives its `node` container none",
            "has no container `logs`",
        ],
    );
}

#[test]
fn a_volume_mounted_twice_in_a_patch_and_torchrun_on_an_mpi_runtime_are_caught() {
    let dir = temp_dir("verify-mounts-policy");
    std::fs::write(
        dir.join("j.yaml"),
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: j}\nspec:\n  runtimeRef: {name: mpi-distributed, apiGroup: trainer.kubeflow.org, kind: ClusterTrainingRuntime}\n  trainer: {numNodes: 1, command: [torchrun, t.py]}\n  podSpecOverrides:\n  - targetJobs: [{name: node}]\n    containers:\n    - name: node\n      volumeMounts: [{name: d, mountPath: /a}, {name: d, mountPath: /b}]\n    volumes: [{name: d, emptyDir: {}}]\n",
    )
    .unwrap();
    let output = verify_json(&dir, "v2.0", "j.yaml");
    assert_eq!(output.status.code(), Some(1));
    says_all(
        &output.stdout,
        &["mounted twice in one container", "has no `torch` ML policy"],
    );
}

/// `trainc verify --format json --api-level LEVEL FILE` in `dir`.
fn verify_json(dir: &Path, level: &str, file: &str) -> std::process::Output {
    trainc(
        dir,
        &["verify", "--format", "json", "--api-level", level, file],
    )
}

/// Each of `expected` is in the message of one of the JSON diagnostics.
fn says_all(stdout: &[u8], expected: &[&str]) {
    let messages: Vec<String> = json_lines(stdout)
        .iter()
        .map(|d| d["message"].as_str().unwrap().to_owned())
        .collect();
    for expected in expected {
        assert!(
            messages.iter().any(|m| m.contains(expected)),
            "{expected}: {messages:?}"
        );
    }
}

/// A directory is searched for `.yaml`, `.yml` and `.json` files, in name
/// order, and a link to a file inside it is read; hidden entries, other
/// files, a FIFO and a link back up are passed over, a link to a file
/// outside it is not read (a warning), and a directory with no manifest is
/// an error.
#[test]
#[cfg(unix)]
fn a_directory_is_walked_for_manifests() {
    let dir = crate::support::temp_dir("verify-walk");
    let secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  a: b\n";
    std::fs::create_dir_all(dir.join("repo/nested/deeper")).unwrap();
    std::fs::create_dir_all(dir.join("repo/.git")).unwrap();
    std::fs::write(dir.join("repo/a.yaml"), secret).unwrap();
    std::fs::write(dir.join("repo/nested/b.yml"), secret).unwrap();
    std::fs::write(
        dir.join("repo/nested/deeper/c.json"),
        r#"{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}}"#,
    )
    .unwrap();
    std::fs::write(dir.join("repo/.git/bad.yaml"), "kind: [").unwrap();
    std::fs::write(dir.join("repo/notes.txt"), "kind: [").unwrap();
    {
        std::os::unix::fs::symlink("..", dir.join("repo/nested/up")).unwrap();
        std::os::unix::fs::symlink("../a.yaml", dir.join("repo/nested/inside.yaml")).unwrap();
        std::fs::write(dir.join("outside.yaml"), secret).unwrap();
        std::os::unix::fs::symlink("../outside.yaml", dir.join("repo/out.yaml")).unwrap();
        let fifo = dir.join("repo/pipe.yaml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()));
    }
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    let output = trainc(&dir, &["verify", "repo"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr
            .contains("verified 4 objects in 4 files against Kubernetes 1.36: 0 errors, 1 warning"),
        "{stderr}"
    );
    assert!(
        stderr.contains("`repo/out.yaml` links to a file outside `repo`: not read"),
        "{stderr}"
    );
    let json = trainc(&dir, &["verify", "--format", "json", "repo", "empty"]);
    assert_eq!(json.status.code(), Some(2), "{}", text(&json.stderr));
    assert!(text(&json.stdout).contains("`empty` holds no `.yaml`, `.yml` or `.json` file"));
}

/// Values are read as kubectl reads them (YAML 1.1): `1_0` is 10 and
/// `0644` is 420, accepted with a warning where a YAML 1.2 reader differs;
/// `yes` in a field that takes text is the boolean Kubernetes rejects, and
/// the error says why.
#[test]
fn values_are_read_as_kubectl_reads_them() {
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  parallelism: 1_0\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n        image: busybox:1.36\n        env:\n        - {name: DEBUG, value: VALUE}\n      volumes:\n      - name: v\n        configMap: {name: c, defaultMode: 0644}\n";
    let good = run_with_stdin(
        std::path::Path::new(env!("CARGO_BIN_EXE_trainc")),
        &["verify", "--format", "json", "-"],
        job.replace("VALUE", "\"yes\"").as_bytes(),
    );
    assert_eq!(good.status.code(), Some(0), "{}", text(&good.stdout));
    let warnings = text(&good.stdout);
    assert!(
        warnings.contains("`1_0` is the number 10 to Kubernetes (YAML 1.1, as kubectl reads it) but the text \\\"1_0\\\" to a YAML 1.2 reader"),
        "{warnings}"
    );
    assert!(
        warnings.contains("`0644` is the number 420 to Kubernetes"),
        "{warnings}"
    );
    let bad = run_with_stdin(
        std::path::Path::new(env!("CARGO_BIN_EXE_trainc")),
        &["verify", "--format", "json", "-"],
        job.replace("VALUE", "yes").as_bytes(),
    );
    assert_eq!(bad.status.code(), Some(1), "{}", text(&bad.stdout));
    let error: serde_json::Value = text(&bad.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|d| d["severity"] == "error")
        .unwrap();
    assert_eq!(error["line"], 14);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .ends_with("`spec.template.spec.containers[0].env[0].value`: must be a string, found a boolean (`true`)"),
        "{error}"
    );
    assert!(
        error["help"]
            .as_str()
            .unwrap()
            .starts_with("`yes` is the boolean `true` to Kubernetes"),
        "{error}"
    );
}

/// A whole number written with a fraction or an exponent is the integer
/// kubectl sends (`YAMLToJSON` writes the float as `encoding/json` does):
/// the operators' webhooks and the API server read `replicas: 1.0` as 1.
#[test]
fn whole_decimals_are_the_integers_kubectl_sends() {
    let job = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: decimals}\nspec:\n  pytorchReplicaSpecs:\n    Master:\n      replicas: 1.0\n      template: {spec: {containers: [{name: pytorch, image: i}]}}\n    Worker:\n      replicas: 2e0\n      template: {spec: {containers: [{name: pytorch, image: i}]}}\n";
    let out = run_with_stdin(
        std::path::Path::new(env!("CARGO_BIN_EXE_trainc")),
        &["verify", "--format", "json", "-"],
        job.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    // Half a replica is no integer, to the server or to trainc.
    let half = run_with_stdin(
        std::path::Path::new(env!("CARGO_BIN_EXE_trainc")),
        &["verify", "--format", "json", "-"],
        job.replace("2e0", "1.5").as_bytes(),
    );
    assert_eq!(half.status.code(), Some(1), "{}", text(&half.stdout));
    assert!(
        text(&half.stdout).contains("`spec.pytorchReplicaSpecs.Worker.replicas`"),
        "{}",
        text(&half.stdout)
    );
}

/// The same object twice in one file (same kind, namespace and name) is a
/// warning at the second; in two namespaces it is two objects.
#[test]
fn the_same_object_twice_is_a_warning() {
    let secret = |namespace: &str| {
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: {namespace}\nstringData:\n  a: b\n"
        )
    };
    let stream = format!("{}---\n{}---\n{}", secret("a"), secret("b"), secret("a"));
    let output = run_with_stdin(
        std::path::Path::new(env!("CARGO_BIN_EXE_trainc")),
        &["verify", "--format", "json", "-"],
        stream.as_bytes(),
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stdout));
    let lines = json_lines(&output.stdout);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["code"], "trainc::verify::duplicate");
    assert_eq!(lines[0]["line"], 17);
    assert_eq!(
        lines[0]["message"],
        "document 3: Secret/s (namespace a) again (first in document 1): applied, this one replaces that one"
    );
}

/// The Training Operator's webhook (kubeflow/trainer v1.9.2,
/// `pkg/webhooks/pytorch/pytorchjob_webhook.go`) and what its pods would
/// be: each rule on a job of its own, with the field it names.
#[test]
fn the_pytorchjob_webhook_rules_are_the_operators() {
    let dir = temp_dir("verify-pytorchjob-webhook");
    let job = |name: &str, spec: &str| {
        format!(
            "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {{name: {name}}}\nspec:\n{spec}---\n"
        )
    };
    let replica = |kind: &str, extra: &str, image: &str| {
        format!(
            "    {kind}:\n      replicas: 1\n{extra}      template: {{spec: {{containers: [{{name: pytorch{image}}}]}}}}\n"
        )
    };
    let ok_master = replica("Master", "", ", image: i");
    let manifests = [
        job("no-image", &format!("  pytorchReplicaSpecs:\n{}", replica("Master", "", ", image: ''"))),
        job("elastic-alone", &format!("  elasticPolicy: {{minReplicas: 1, maxReplicas: 2}}\n  pytorchReplicaSpecs:\n{ok_master}")),
        job("no-workers", &format!("  pytorchReplicaSpecs:\n{ok_master}    Worker:\n      replicas: 0\n      template: {{spec: {{containers: [{{name: pytorch, image: i}}]}}}}\n")),
        job("managed", &format!("  runPolicy: {{managedBy: example.com/mine}}\n  pytorchReplicaSpecs:\n{ok_master}")),
        job("deprecated", &format!("  elasticPolicy: {{nProcPerNode: 2}}\n  pytorchReplicaSpecs:\n{}", replica("Worker", "", ", image: i"))),
        job("both", &format!("  nprocPerNode: '2'\n  elasticPolicy: {{nProcPerNode: 2}}\n  pytorchReplicaSpecs:\n{}", replica("Worker", "", ", image: i"))),
        job("lowercase", &format!("  pytorchReplicaSpecs:\n{}", replica("Master", "      restartPolicy: onFailure\n", ", image: i"))),
        "apiVersion: kubeflow.org/v1beta1\nkind: PyTorchJob\nmetadata: {name: old}\nspec: {}\n".to_owned(),
    ]
    .concat();
    std::fs::write(dir.join("jobs.yaml"), manifests).unwrap();
    let output = trainc(&dir, &["verify", "--format", "json", "jobs.yaml"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let found: Vec<(String, String, String)> = json_lines(&output.stdout)
        .iter()
        .map(|d| {
            (
                d["severity"].as_str().unwrap_or("").to_owned(),
                d["code"].as_str().unwrap_or("").to_owned(),
                d["message"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let has = |severity: &str, code: &str, needle: &str| {
        assert!(
            found
                .iter()
                .any(|(s, c, m)| s == severity && c == code && m.contains(needle)),
            "no {severity} {code} with {needle:?} in {found:#?}"
        );
    };
    let webhook = "trainc::verify::webhook";
    has(
        "error",
        webhook,
        "PyTorchJob/no-image, `spec.pytorchReplicaSpecs.Master.template.spec.containers[0].image`: every container must have an `image`",
    );
    has(
        "error",
        webhook,
        "PyTorchJob/elastic-alone, `spec.pytorchReplicaSpecs.Worker`: an elastic job",
    );
    has(
        "error",
        webhook,
        "PyTorchJob/no-workers, `spec.pytorchReplicaSpecs.Worker.replicas`: Workers must have `replicas` of at least 1",
    );
    has(
        "error",
        webhook,
        "PyTorchJob/managed, `spec.runPolicy.managedBy`: `managedBy` `example.com/mine` is not supported",
    );
    has(
        "warning",
        "trainc::verify::admitted",
        "PyTorchJob/deprecated, `spec.elasticPolicy.nProcPerNode`: the webhook warns",
    );
    has(
        "error",
        webhook,
        "PyTorchJob/both, `spec.elasticPolicy.nProcPerNode`: `elasticPolicy.nProcPerNode` must not be used with `nprocPerNode`",
    );
    has(
        "error",
        "trainc::verify::operator",
        "PyTorchJob/lowercase, `spec.pytorchReplicaSpecs.Master.restartPolicy`: the operator copies `restartPolicy` `onFailure`",
    );
    has(
        "warning",
        "trainc::verify::unserved",
        "PyTorchJob/old, `apiVersion`: the Training Operator (v1.7 to v1.9) serves `PyTorchJob` as `kubeflow.org/v1` only, not `kubeflow.org/v1beta1`",
    );
    // The deprecated field alone is a warning, not a rejection.
    assert!(
        !found
            .iter()
            .any(|(s, _, m)| s == "error" && m.starts_with("PyTorchJob/deprecated")),
        "{found:#?}"
    );
}

/// `runPolicy.managedBy` came with the Training Operator v1.9's CRD
/// (kubeflow/trainer v1.8.1 and v1.9.0, `kubeflow.org_pytorchjobs.yaml`).
#[test]
fn managed_by_is_an_error_before_the_training_operator_v1_9() {
    let dir = temp_dir("verify-pytorchjob-managed-by");
    std::fs::write(
        dir.join("jobs.yaml"),
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: managed}\nspec:\n  runPolicy: {managedBy: kueue.x-k8s.io/multikueue}\n  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n      template: {spec: {containers: [{name: pytorch, image: i}]}}\n",
    )
    .unwrap();
    let v1_9 = trainc(&dir, &["verify", "jobs.yaml"]);
    assert_eq!(v1_9.status.code(), Some(0), "{}", text(&v1_9.stderr));
    for release in ["v1.7", "v1.8"] {
        let output = trainc(
            &dir,
            &[
                "verify",
                "--format",
                "json",
                "--training-operator",
                release,
                "jobs.yaml",
            ],
        );
        assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
        let said: Vec<String> = messages(&output.stdout, "code", "trainc::verify::schema");
        let expected = format!(
            "PyTorchJob/managed, `spec.runPolicy.managedBy`: the Training Operator {release} has no such field (it came with v1.9)"
        );
        assert!(
            said.iter().any(|m| m.contains(&expected)),
            "{release}: {said:#?}"
        );
    }
}

/// Trainer's runtime webhook by release (kubeflow/trainer
/// `pkg/webhooks/trainingruntime_webhook.go`), a count of 0 processes and a
/// misspelt device resource: what a cluster admits but cannot run is a
/// warning.
#[test]
fn runtimes_are_checked_by_the_webhook_of_their_release() {
    let dir = temp_dir("verify-runtime-webhook");
    let runtime = |name: &str, replicas: u32, container: &str, nproc: &str, gpu: &str| {
        format!(
            "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {{name: {name}}}\nspec:\n  mlPolicy: {{numNodes: 1, torch: {{numProcPerNode: {nproc}}}}}\n  template:\n    spec:\n      replicatedJobs:\n      - name: node\n        replicas: {replicas}\n        template:\n          metadata: {{labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}}}\n          spec: {{template: {{spec: {{containers: [{{name: {container}, image: i, resources: {{limits: {{{gpu}: 1}}}}}}]}}}}}}\n---\n"
        )
    };
    let manifests = [
        runtime("two", 2, "node", "auto", "nvidia.com/gpu"),
        runtime("renamed", 1, "trainer", "auto", "nvidia.com/gpu"),
        runtime("zero", 1, "node", "0", "nvidia.com/gpu"),
        runtime("typo", 1, "node", "auto", "nvidia.com/gpus"),
    ]
    .concat();
    std::fs::write(dir.join("runtimes.yaml"), manifests).unwrap();
    let messages = |level: &str| {
        let output = verify_json(&dir, level, "runtimes.yaml");
        json_lines(&output.stdout)
            .iter()
            .map(|d| {
                format!(
                    "{} {}",
                    d["severity"].as_str().unwrap_or(""),
                    d["message"].as_str().unwrap_or("")
                )
            })
            .collect::<Vec<String>>()
    };
    let v2_0 = messages("v2.0");
    let v2_3 = messages("v2.3");
    for found in [&v2_0, &v2_3] {
        assert!(
            found.iter().any(|m| m.starts_with("error ")
                && m.contains(
                    "ClusterTrainingRuntime/two, `spec.template.spec.replicatedJobs[0].replicas`"
                )
                && m.contains("\"always must be 1\"")),
            "{found:#?}"
        );
        assert!(
            found.iter().any(|m| m.starts_with("warning ")
                && m.contains("ClusterTrainingRuntime/typo")
                && m.contains("did you mean `nvidia.com/gpu`?")),
            "{found:#?}"
        );
    }
    // 0 processes: v2.0.0's CRD rejects it by its CEL rule; v2.3.0's takes
    // it, and every pod fails.
    assert!(v2_0.iter().any(|m| m == "error document 3, ClusterTrainingRuntime/zero, `spec.mlPolicy.torch.numProcPerNode`: Invalid value: 0: NumProcPerNode must be equal to auto, cpu, gpu, or int value"), "{v2_0:#?}");
    assert!(
        !v2_0.iter().any(|m| m.contains("0 processes per node")),
        "{v2_0:#?}"
    );
    assert!(v2_3.iter().any(|m| m.starts_with("warning ") && m.contains("ClusterTrainingRuntime/zero, `spec.mlPolicy.torch.numProcPerNode`: 0 processes per node")), "{v2_3:#?}");
    // The required `node` container came with v2.1.0.
    let renamed = |found: &[String]| {
        found.iter().any(|m| {
            m.contains("ClusterTrainingRuntime/renamed") && m.contains("no container `node`")
        })
    };
    assert!(!renamed(&v2_0), "{v2_0:#?}");
    assert!(renamed(&v2_3), "{v2_3:#?}");
}

/// Each ML policy's plugin refuses the variables it sets itself, from the
/// release that added the rule (kubeflow/trainer `pkg/constants/
/// constants.go`: `XGBoostReservedEnvNames` from v2.2.0,
/// `MPIReservedEnvNames` from v2.3.0), and only on its own runtimes.
#[test]
fn reserved_variables_follow_the_runtimes_ml_policy() {
    let dir = temp_dir("verify-reserved-env");
    let runtime = |name: &str, policy: &str| {
        format!(
            "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {{name: {name}}}\nspec:\n  mlPolicy: {{numNodes: 1, {policy}: {{}}}}\n  template:\n    spec:\n      replicatedJobs:\n      - name: node\n        template:\n          metadata: {{labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}}}\n          spec: {{template: {{spec: {{containers: [{{name: node, image: i}}]}}}}}}\n---\n"
        )
    };
    let job = |name: &str, runtime: &str, var: &str| {
        format!(
            "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {{name: {name}}}\nspec:\n  runtimeRef: {{name: {runtime}}}\n  trainer: {{env: [{{name: {var}, value: x}}]}}\n---\n"
        )
    };
    let manifests = [
        runtime("mpi", "mpi"),
        runtime("xgb", "xgboost"),
        runtime("torch", "torch"),
        job("mpi-job", "mpi", "OMPI_MCA_plm_rsh_args"),
        job("xgb-job", "xgb", "DMLC_NUM_WORKER"),
        job("torch-job", "torch", "PET_NNODES"),
        job("mpi-pet", "mpi", "PET_NNODES"),
    ]
    .concat();
    std::fs::write(dir.join("all.yaml"), manifests).unwrap();
    let refused = |level: &str| {
        let output = verify_json(&dir, level, "all.yaml");
        let mut jobs: Vec<String> = json_lines(&output.stdout)
            .iter()
            .filter_map(|d| {
                let message = d["message"].as_str()?;
                message.contains("is reserved for").then(|| {
                    message
                        .split("TrainJob/")
                        .nth(1)
                        .and_then(|m| m.split(',').next())
                        .unwrap_or_default()
                        .to_owned()
                })
            })
            .collect();
        jobs.sort();
        jobs
    };
    assert_eq!(refused("v2.1"), ["torch-job"]);
    assert_eq!(refused("v2.2"), ["torch-job", "xgb-job"]);
    assert_eq!(refused("v2.3"), ["mpi-job", "torch-job", "xgb-job"]);
}

/// Trainer v2.0.0 and v2.1.0's torch plugin checks the env only when the
/// TrainJob sets `numProcPerNode` (`plugins/torch/torch.go` `Validate`
/// returns first): without it a reserved variable is admitted, and the
/// plugin writes its own over it — a warning, not a rejection.
#[test]
fn old_torch_plugins_check_the_env_only_with_a_process_count() {
    let dir = temp_dir("verify-old-torch-env");
    std::fs::write(
        dir.join("j.yaml"),
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: j}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer: {image: i, env: [{name: PET_NNODES, value: '3'}]}\n",
    )
    .unwrap();
    let severity = |level: &str| {
        let output = verify_json(&dir, level, "j.yaml");
        json_lines(&output.stdout)
            .iter()
            .filter(|d| {
                d["message"]
                    .as_str()
                    .unwrap_or("")
                    .contains("`PET_NNODES` is reserved")
            })
            .map(|d| d["severity"].as_str().unwrap_or("").to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(severity("v2.0"), ["warning"]);
    assert_eq!(severity("v2.1"), ["warning"]);
    assert_eq!(severity("v2.2"), ["error"]);
}

/// `trainc verify` of `input` on stdin, which must fail: each error's line and message.
fn errors_of(input: &str) -> Vec<(u64, String)> {
    let output = run_with_stdin(
        Path::new(env!("CARGO_BIN_EXE_trainc")),
        &["verify", "--format", "json", "-"],
        input.as_bytes(),
    );
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    json_lines(&output.stdout)
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| {
            (
                d["line"].as_u64().unwrap(),
                d["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Each problem lands at its own object's line: two ConfigMaps of one name
/// (the second one's data wrong) and a ConfigMap whose name is longer than
/// a message shows (400 characters) are each reported at their document.
#[test]
fn each_problem_lands_at_its_own_objects_line() {
    let long = "a".repeat(400);
    let input = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\ndata:\n  a: b\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\ndata:\n  a: 1\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {long}\ndata:\n  b: 2\n"
    );
    let errors = errors_of(&input);
    // `a: 1` of the second `same` (line 13); `b: 2` of the long one (line 20)
    // and its name (line 17), each with its document.
    assert!(
        errors
            .iter()
            .any(|(line, m)| *line == 13 && m.starts_with("document 2, ")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|(line, m)| *line == 20 && m.starts_with("document 3, ")),
        "{errors:?}"
    );
    assert!(
        errors.iter().all(|(line, _)| *line != 6 && *line != 1),
        "{errors:?}"
    );
}

/// A problem of several objects together (a Service's port the job's pods
/// do not declare) lands at its own Service when two share a `Kind/name`:
/// the second, wrong one, not the first.
#[test]
fn a_problem_of_objects_together_lands_at_its_own_object() {
    let golden = std::fs::read_to_string(root().join("golden/ports/pytorchjob.yaml")).unwrap();
    let (service, job) = golden.split_once("---\n").unwrap();
    assert!(service.contains("kind: Service") && service.contains("targetPort: 9090"));
    let wrong = service.replace("targetPort: 9090", "targetPort: no-such-port");
    let input = format!("{job}---\n{service}---\n{wrong}");
    let line = input
        .lines()
        .position(|l| l.contains("no-such-port"))
        .unwrap()
        + 1;
    let errors = errors_of(&input);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].0, line as u64, "{errors:?}");
    assert!(errors[0].1.starts_with("document 3, "), "{errors:?}");
}

/// A long stream is read a document at a time on every core; a stream the
/// split cannot read as written (a `%YAML` directive, a document that is
/// only an anchor) is read whole. Either way every problem lands at its
/// own object's line and document, and each reading says the same.
#[test]
fn a_long_stream_read_document_by_document_says_what_the_whole_says() {
    let golden = std::fs::read_to_string(root().join("golden/ports/pytorchjob.yaml")).unwrap();
    let (service, job) = golden.split_once("---\n").unwrap();
    let wrong = service.replace("targetPort: 9090", "targetPort: no-such-port");
    // 300 ConfigMaps, the 200th wrong; the job, its Service, and a copy of
    // the Service whose port the job's pods do not declare.
    let mut documents: Vec<String> = (1..=300)
        .map(|i| {
            let value = if i == 200 { "1" } else { "\"b\"" };
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata:\n  a: {value}\n"
            )
        })
        .collect();
    documents.extend([job.to_owned(), service.to_owned(), wrong]);
    let stream = documents.join("---\n");
    let errors = errors_of(&stream);
    let line_of = |text: &str, needle: &str, nth: usize| {
        1 + text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains(needle))
            .nth(nth)
            .unwrap()
            .0 as u64
    };
    let expected = [
        (
            line_of(&stream, "  a: 1", 0),
            "document 200, ConfigMap/c200, `data.a`",
        ),
        (
            line_of(&stream, "no-such-port", 0),
            "document 303, Service/",
        ),
    ];
    for (line, start) in expected {
        assert!(
            errors
                .iter()
                .any(|(l, m)| *l == line && m.starts_with(start)),
            "{start} at line {line}: {errors:?}"
        );
    }
    assert_eq!(errors.len(), 2, "{errors:?}");
    // Read whole: after a directive (every line two further down). And a
    // document that is only an anchor (a null, which counts as a document)
    // read both ways.
    let directive = errors_of(&format!("%YAML 1.1\n---\n{stream}"));
    let shifted: Vec<(u64, String)> = errors.iter().map(|(l, m)| (l + 2, m.clone())).collect();
    assert_eq!(directive, shifted);
    let anchored = errors_of(&format!("--- &a\n---\n{stream}"));
    assert!(anchored[0].1.starts_with("document 201, "), "{anchored:?}");
    let whole = errors_of(&format!("%YAML 1.1\n--- &a\n---\n{stream}"));
    let shifted: Vec<(u64, String)> = anchored.iter().map(|(l, m)| (l + 1, m.clone())).collect();
    assert_eq!(whole, shifted);
}

/// A CRD's map lists (`x-kubernetes-list-type: map`) hold each key once:
/// the API server refuses a JobSet whose replicated jobs share a name, and a
/// PyTorchJob whose container sets one variable twice
/// (`apiextensions-apiserver/pkg/apiserver/schema/listtype/validation.go`),
/// in the words the real server gives (a key left out has its default).
#[test]
fn a_crds_map_list_holds_each_key_once() {
    let dir = temp_dir("verify-map-lists");
    let jobset = "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: twice}\nspec:\n  replicatedJobs:\n  - name: node\n    template: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: i}]}}}}\n  - name: node\n    template: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: i, ports: [{containerPort: 80}, {containerPort: 80, protocol: TCP}]}]}}}}\n---\n";
    let job = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: env}\nspec:\n  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n      template: {spec: {containers: [{name: pytorch, image: i, env: [{name: A, value: '1'}, {name: B}, {name: A, value: '2'}]}]}}\n";
    std::fs::write(dir.join("twice.yaml"), format!("{jobset}{job}")).unwrap();
    let output = trainc(&dir, &["verify", "--format", "json", "twice.yaml"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stdout));
    let said: Vec<String> = messages(&output.stdout, "code", "trainc::verify::schema");
    for expected in [
        "JobSet/twice, `spec.replicatedJobs[1]`: Duplicate value: {\"name\":\"node\"} (item 0 has it too)",
        "JobSet/twice, `spec.replicatedJobs[1].template.spec.template.spec.containers[0].ports[1]`: Duplicate value: {\"containerPort\":80,\"protocol\":\"TCP\"} (item 0 has it too)",
        "PyTorchJob/env, `spec.pytorchReplicaSpecs.Master.template.spec.containers[0].env[2]`: Duplicate value: {\"name\":\"A\"} (item 0 has it too)",
    ] {
        assert!(
            said.iter().any(|m| m.contains(expected)),
            "{expected}\n{said:#?}"
        );
    }
    assert_eq!(said.len(), 3, "{said:#?}");
    // A long list (past the short lists compared item by item) too.
    let mut env: Vec<String> = (0..40).map(|i| format!("{{name: V{i}}}")).collect();
    env.push("{name: V3}".to_owned());
    let long = job.replace(
        "env: [{name: A, value: '1'}, {name: B}, {name: A, value: '2'}]",
        &format!("env: [{}]", env.join(", ")),
    );
    std::fs::write(dir.join("long.yaml"), long).unwrap();
    let output = trainc(&dir, &["verify", "--format", "json", "long.yaml"]);
    let said: Vec<String> = messages(&output.stdout, "code", "trainc::verify::schema");
    assert_eq!(said.len(), 1, "{said:#?}");
    assert!(
        said[0].contains("`spec.pytorchReplicaSpecs.Master.template.spec.containers[0].env[40]`: Duplicate value: {\"name\":\"V3\"} (item 3 has it too)"),
        "{said:#?}"
    );
}

/// Kubernetes' Job validation (v1.30.0 `pkg/apis/batch/validation`), for a
/// `batch/v1` Job and for the Jobs JobSet makes of a replicated job as its
/// webhook defaults it (Indexed, `OnFailure`): JobSet admits such a
/// JobSet, and the API server refuses its Jobs.
#[test]
fn jobs_are_held_to_kubernetes_job_validation() {
    let dir = temp_dir("verify-job-validation");
    let jobset = "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: pfp}\nspec:\n  replicatedJobs:\n  - name: workers\n    replicas: 1\n    template:\n      spec:\n        parallelism: 4\n        podFailurePolicy:\n          rules:\n          - action: FailJob\n            onExitCodes: {containerName: trainer, operator: In, values: [42]}\n        template:\n          spec:\n            containers: [{name: trainer, image: i}]\n---\n";
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: plain}\nspec:\n  selector: {matchLabels: {app: plain}}\n  backoffLimitPerIndex: 1\n  template:\n    metadata: {labels: {app: plain}}\n    spec:\n      containers: [{name: c, image: i}]\n";
    std::fs::write(dir.join("jobs.yaml"), format!("{jobset}{job}")).unwrap();
    let output = trainc(&dir, &["verify", "--format", "json", "jobs.yaml"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stdout));
    let said: Vec<(String, String)> = json_lines(&output.stdout)
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| {
            (
                d["code"].as_str().unwrap_or("").to_owned(),
                d["message"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    for (code, expected) in [
        (
            "trainc::verify::operator",
            "JobSet/pfp, `spec.replicatedJobs[0].template.spec.completions`: Required value: when completion mode is Indexed",
        ),
        (
            "trainc::verify::operator",
            "JobSet/pfp, `spec.replicatedJobs[0].template.spec.template.spec.restartPolicy`: Invalid value: \"OnFailure\": only \"Never\" is supported when podFailurePolicy is specified (JobSet's webhook sets `OnFailure` where none is written)",
        ),
        (
            "trainc::verify::apiserver",
            "Job/plain, `spec.selector`: Invalid value: `selector` not auto-generated",
        ),
        (
            "trainc::verify::apiserver",
            "Job/plain, `spec.template.spec.restartPolicy`: Required value: valid values: \"OnFailure\", \"Never\"",
        ),
        (
            "trainc::verify::apiserver",
            "Job/plain, `spec.backoffLimitPerIndex`: Invalid value: 1: requires indexed completion mode",
        ),
    ] {
        assert!(
            said.iter().any(|(c, m)| c == code && m.contains(expected)),
            "{code} {expected}\n{said:#?}"
        );
    }
    assert_eq!(said.len(), 5, "{said:#?}");
}

/// A training runtime's replicated jobs become Jobs through the JobSet
/// Trainer makes, which writes each job's pod count into `parallelism` and
/// `completions`: the rest of Kubernetes' Job validation applies.
#[test]
fn a_runtimes_jobs_are_held_to_kubernetes_job_validation() {
    let dir = temp_dir("verify-runtime-job-validation");
    let runtime = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: torch-pfp}\nspec:\n  mlPolicy: {numNodes: 2, torch: {}}\n  template:\n    spec:\n      replicatedJobs:\n      - name: node\n        template:\n          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n          spec:\n            parallelism: 2\n            podFailurePolicy:\n              rules:\n              - action: FailJob\n                onExitCodes: {containerName: node, operator: In, values: [42]}\n            template:\n              spec:\n                containers: [{name: node, image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime}]\n";
    std::fs::write(dir.join("runtime.yaml"), runtime).unwrap();
    let output = trainc(&dir, &["verify", "--format", "json", "runtime.yaml"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stdout));
    let said: Vec<String> = messages(&output.stdout, "severity", "error");
    // `parallelism` alone is no error here: Trainer sets `completions`.
    assert_eq!(said.len(), 1, "{said:#?}");
    assert!(
        said[0].contains("`spec.template.spec.replicatedJobs[0].template.spec.template.spec.restartPolicy`: Invalid value: \"OnFailure\": only \"Never\" is supported when podFailurePolicy is specified"),
        "{said:#?}"
    );
}

/// Built-in kinds are checked against Kubernetes 1.36, the release the
/// control-plane suite runs, or the `--kubernetes-version` given: a field
/// or a kind a release lacks is refused as that release's server refuses
/// it, and the summary names the release.
#[test]
fn built_in_kinds_are_checked_against_the_kubernetes_release_asked_for() {
    let binary = std::path::Path::new(env!("CARGO_BIN_EXE_trainc"));
    // Pod-level resources: in PodSpec since 1.32.
    let pod = b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resources: {limits: {cpu: '1'}}\n  containers: [{name: c, image: busybox}]\n";
    let now = run_with_stdin(binary, &["verify", "-"], pod);
    assert_eq!(now.status.code(), Some(0), "{}", text(&now.stderr));
    assert!(
        text(&now.stderr).contains("verified 1 object in 1 file against Kubernetes 1.36"),
        "{}",
        text(&now.stderr)
    );
    let old = run_with_stdin(
        binary,
        &["verify", "--kubernetes-version", "1.30", "-"],
        pod,
    );
    assert_eq!(old.status.code(), Some(1), "{}", text(&old.stderr));
    let said = text(&old.stderr);
    assert!(said.contains("unknown field `resources`"), "{said}");
    assert!(said.contains("against Kubernetes 1.30"), "{said}");
    // The releases between: 1.31 lacks the field, 1.32 has it.
    let before = run_with_stdin(
        binary,
        &["verify", "--kubernetes-version", "1.31", "-"],
        pod,
    );
    assert_eq!(before.status.code(), Some(1), "{}", text(&before.stderr));
    let since = run_with_stdin(
        binary,
        &["verify", "--kubernetes-version", "1.32", "-"],
        pod,
    );
    assert_eq!(since.status.code(), Some(0), "{}", text(&since.stderr));
    // A Service's name: a DNS-1123 label from 1.36
    // (`RelaxedServiceNameValidation`), a DNS-1035 label before.
    let service =
        b"apiVersion: v1\nkind: Service\nmetadata: {name: 8-gpus}\nspec:\n  ports: [{port: 80}]\n";
    let now = run_with_stdin(binary, &["verify", "-"], service);
    assert_eq!(now.status.code(), Some(0), "{}", text(&now.stderr));
    let before = run_with_stdin(
        binary,
        &[
            "verify",
            "--format",
            "json",
            "--kubernetes-version",
            "1.35",
            "-",
        ],
        service,
    );
    assert_eq!(before.status.code(), Some(1), "{}", text(&before.stderr));
    let said = json_lines(&before.stdout);
    assert!(
        said[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("the name `8-gpus` is not a DNS-1035 label")),
        "{said:?}"
    );
    // A DeviceClass (`resource.k8s.io/v1`, served since 1.34): 1.30 serves
    // only the group's alpha.
    let class =
        b"apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\nspec: {}\n";
    let now = run_with_stdin(binary, &["verify", "-"], class);
    assert_eq!(now.status.code(), Some(0), "{}", text(&now.stderr));
    let old = run_with_stdin(
        binary,
        &[
            "verify",
            "--format",
            "json",
            "--kubernetes-version",
            "1.30",
            "-",
        ],
        class,
    );
    let said = json_lines(&old.stdout);
    assert_eq!(
        said[0]["message"],
        "document 1, DeviceClass/gpu, `apiVersion`: Kubernetes 1.30 serves no `resource.k8s.io/v1` `DeviceClass`",
        "{said:?}"
    );
    let unknown = run_with_stdin(
        binary,
        &["verify", "--kubernetes-version", "1.29", "-"],
        pod,
    );
    assert_eq!(unknown.status.code(), Some(2), "{}", text(&unknown.stderr));
}
