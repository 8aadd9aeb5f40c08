//! trainc as a generator: the KRM function protocol (tested directly, so the
//! contract is covered without any tool), the kustomize exec-plugin
//! personality (the real kubectl: `tests/kustomize.rs`; kpt: `tests/kpt.rs`).
//!
//! The real-tool tests find `kubectl` on PATH and `kpt` beside kubectl's real
//! binary (or on PATH). Where a tool is missing they say so and stop; with
//! `TRAINC_REQUIRE_TOOLS=1` (set by `.ci/run` when the tools exist) a missing
//! tool fails the test instead.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::support::{run_with_stdin, temp_dir, text, trainc};

fn function(args: &[&str], stdin: &str) -> (i32, Value, String) {
    let output = run_with_stdin(
        Path::new(env!("CARGO_BIN_EXE_trainc")),
        args,
        stdin.as_bytes(),
    );
    let list: Value = serde_saphyr::from_str(&text(&output.stdout)).unwrap_or_else(|e| {
        panic!(
            "stdout must be exactly one ResourceList ({e}):\n{}",
            text(&output.stdout)
        )
    });
    assert_eq!(list["kind"], "ResourceList", "{list}");
    (output.status.code().unwrap(), list, text(&output.stderr))
}

const SPEC: &str = "apiVersion: trainc.dev/v1alpha1\nkind: TrainSpec\nmetadata:\n  name: demo\n  annotations:\n    config.kubernetes.io/path: fn/trainspec.yaml\nspec:\n  image: ghcr.io/acme/train:1.4\n  script: /app/train.py\n  replicas: 2\n";

fn resource_list(items: &[Value], function_config: Option<&str>) -> String {
    let mut list =
        json!({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items});
    if let Some(config) = function_config {
        list["functionConfig"] = serde_saphyr::from_str::<Value>(config).unwrap();
    }
    serde_saphyr::to_string(&list).unwrap()
}

#[test]
fn a_thousand_items_pass_through_unchanged_and_in_order() {
    let items: Vec<Value> = (0..1000)
        .map(|i| {
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("cm-{i:04}"), "annotations": {"config.kubernetes.io/index": i.to_string()}},
                   "data": {"on": "yes", "n": "0755", "when": "2024-01-01", "multi": "a\nb"}})
        })
        .collect();
    let (status, list, stderr) = function(&["fn"], &resource_list(&items, Some(SPEC)));
    assert_eq!(status, 0, "{stderr}");
    let out = list["items"].as_array().unwrap();
    assert_eq!(
        &out[..1000],
        &items[..],
        "input items are unchanged and in order"
    );
    let generated: Vec<&str> = out[1000..]
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(generated, ["PyTorchJob"]);
    assert!(list.get("results").is_none());
}

#[test]
fn generated_objects_equal_what_build_prints() {
    let dir = temp_dir("krm-same");
    std::fs::write(dir.join("spec.yaml"), SPEC).unwrap();
    let built: Vec<Value> =
        serde_saphyr::from_str_multiple(&text(&trainc(&dir, &["build", "spec.yaml"]).stdout))
            .unwrap();
    let (_, list, _) = function(&["fn"], &resource_list(&[], Some(SPEC)));
    let mut items = list["items"].as_array().unwrap().clone();
    for item in &mut items {
        let annotations = item["metadata"]["annotations"].as_object_mut().unwrap();
        let origin = annotations.remove("config.kubernetes.io/origin").unwrap();
        assert_eq!(
            origin,
            "configuredIn: fn/trainspec.yaml\nconfiguredBy:\n  apiVersion: trainc.dev/v1alpha1\n  kind: TrainSpec\n  name: demo\n"
        );
        if annotations.is_empty() {
            item["metadata"]
                .as_object_mut()
                .unwrap()
                .remove("annotations");
        }
    }
    assert_eq!(items, built);
}

/// The items an earlier run of this TrainSpec generated are replaced (and
/// keep kpt's file annotations); those of another TrainSpec, and everything
/// else, pass through.
#[test]
fn a_previous_run_is_replaced_and_an_applied_spec_is_a_warning() {
    let origin = |name: &str| {
        format!(
            "configuredBy:\n  apiVersion: trainc.dev/v1alpha1\n  kind: TrainSpec\n  name: {name}\n"
        )
    };
    let old_job = json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
        "metadata": {"name": "demo", "annotations": {
            "config.kubernetes.io/origin": origin("demo"),
            "internal.config.kubernetes.io/path": "jobs/demo.yaml",
            "internal.config.kubernetes.io/index": "1"}},
        "spec": {"stale": true}});
    let old_claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "demo-data", "annotations": {"config.kubernetes.io/origin": origin("demo")}}});
    let other = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "other-data", "annotations": {"config.kubernetes.io/origin": origin("other")}}});
    let spec_item: Value = serde_saphyr::from_str(SPEC).unwrap();
    let input = resource_list(
        &[old_job, spec_item.clone(), old_claim, other.clone()],
        Some(SPEC),
    );
    let (status, list, stderr) = function(&["fn"], &input);
    assert_eq!(status, 0, "{stderr}");
    let items = list["items"].as_array().unwrap();
    let kinds: Vec<(&str, &str)> = items
        .iter()
        .map(|i| {
            (
                i["kind"].as_str().unwrap(),
                i["metadata"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("TrainSpec", "demo"),
            ("PersistentVolumeClaim", "other-data"),
            ("PyTorchJob", "demo"),
        ]
    );
    assert_eq!(items[1], other);
    let job = &items[2];
    assert!(job["spec"].get("stale").is_none(), "{job}");
    assert_eq!(
        job["metadata"]["annotations"]["internal.config.kubernetes.io/path"],
        "jobs/demo.yaml"
    );
    assert_eq!(
        job["metadata"]["annotations"]["internal.config.kubernetes.io/index"],
        "1"
    );
    // The spec is in the package, and nothing keeps it from being applied.
    let results = list["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["severity"], "warning");
    assert_eq!(results[0]["tags"]["code"], "trainc::krm::local_config");
    assert!(stderr.contains("local-config"), "{stderr}");

    let mut local = spec_item;
    local["metadata"]["annotations"]["config.kubernetes.io/local-config"] = json!("true");
    let (_, list, _) = function(&["fn"], &resource_list(&[local], Some(SPEC)));
    assert!(list.get("results").is_none(), "{list}");
}

#[test]
fn with_no_arguments_and_a_resource_list_on_stdin_trainc_is_the_function() {
    let input = resource_list(
        &[json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}})],
        Some(SPEC),
    );
    let (status, list, _) = function(&[], &input);
    assert_eq!(status, 0);
    assert_eq!(list["items"][0]["kind"], "Namespace");
    assert_eq!(list["items"][1]["kind"], "PyTorchJob");
}

#[test]
fn an_invalid_function_config_gives_error_results_and_no_objects() {
    let bad = SPEC.replace("replicas: 2", "replica: 2\n  resources:\n    memory: 64GB");
    let items = [json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})];
    let (status, list, stderr) = function(&["fn"], &resource_list(&items, Some(&bad)));
    assert_eq!(status, 1);
    assert_eq!(
        list["items"].as_array().unwrap().len(),
        1,
        "items pass through, nothing is added"
    );
    let results = list["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{results:#?}");
    let fields: Vec<&str> = results
        .iter()
        .map(|r| r["field"]["path"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["spec.replica", "spec.resources.memory"]);
    for result in results {
        assert_eq!(result["severity"], "error");
        assert_eq!(
            result["resourceRef"],
            json!({"apiVersion": "trainc.dev/v1alpha1", "kind": "TrainSpec", "name": "demo"})
        );
        assert_eq!(result["file"]["path"], "fn/trainspec.yaml");
    }
    assert!(
        results[0]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean")
            || results[0]["message"]
                .as_str()
                .unwrap()
                .contains("rename `replica` to `replicas`")
    );
    assert!(
        stderr.contains(
            "TrainSpec demo (fn/trainspec.yaml), spec.replica: error: unknown key `replica`"
        ),
        "people get the rendering on stderr: {stderr}"
    );
}

#[test]
fn warnings_are_warning_results_and_the_objects_are_added() {
    let spec = SPEC.replace("ghcr.io/acme/train:1.4", "ghcr.io/acme/train");
    let (status, list, _) = function(&["fn"], &resource_list(&[], Some(&spec)));
    assert_eq!(status, 0);
    assert_eq!(list["results"][0]["severity"], "warning");
    assert_eq!(
        list["results"][0]["tags"]["code"],
        "trainc::image::unpinned"
    );
    assert_eq!(list["items"][0]["kind"], "PyTorchJob");
}

#[test]
fn malformed_input_still_gets_one_resource_list_with_an_error() {
    let cases: [(&str, &str); 8] = [
        ("not yaml", "items: [\n"),
        ("a scalar", "hello\n"),
        (
            "another kind",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
        ),
        (
            "items not a list",
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: {a: 1}\n",
        ),
        (
            "an item not a mapping",
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [3]\n",
        ),
        (
            "no functionConfig",
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n",
        ),
        (
            "functionConfig of another kind",
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {a: b}}\n",
        ),
        (
            "functionConfig not a mapping",
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig: [1, 2]\n",
        ),
    ];
    for (what, input) in cases {
        let (status, list, _) = function(&["fn"], input);
        assert_eq!(status, 1, "{what}");
        let results = list["results"]
            .as_array()
            .unwrap_or_else(|| panic!("{what}: no results in {list}"));
        assert!(
            results.iter().any(|r| r["severity"] == "error"),
            "{what}: {results:?}"
        );
    }
}

#[test]
fn v1beta1_and_json_input_are_accepted() {
    let list = resource_list(&[], Some(SPEC))
        .replace("config.kubernetes.io/v1", "config.kubernetes.io/v1beta1");
    let as_json = serde_json::to_string(&serde_saphyr::from_str::<Value>(&list).unwrap()).unwrap();
    let (status, out, _) = function(&["fn"], &as_json);
    assert_eq!(status, 0);
    assert_eq!(out["apiVersion"], "config.kubernetes.io/v1beta1");
    assert_eq!(out["items"][0]["kind"], "PyTorchJob");
}

/// The test binary lives in cargo's target directory: linking it as the
/// plugin would break on `cargo clean`, so it takes `--dev`.
#[test]
fn plugin_install_refuses_a_cargo_build_without_dev() {
    let dir = temp_dir("plugin-refuse");
    let plugins = dir.join("plugins");
    let output = trainc(
        &dir,
        &["plugin", "install", "--dir", plugins.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("which `cargo clean`"), "{stderr}");
    assert!(
        stderr.contains("cargo install --locked --path ."),
        "{stderr}"
    );
    assert!(stderr.contains("--dev"), "{stderr}");
    assert!(!plugins.exists(), "nothing is written");
}

/// A link named `TrainSpec` to the test binary, in a fresh directory.
fn plugin_binary(dir: &Path) -> PathBuf {
    let output = trainc(
        dir,
        &[
            "plugin",
            "install",
            "--dev",
            "--dir",
            dir.join("plugins").to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    dir.join("plugins/trainc.dev/v1alpha1/trainspec/TrainSpec")
}

#[test]
fn as_the_plugin_trainc_reads_its_config_and_prints_the_objects() {
    let dir = temp_dir("krm-plugin");
    let plugin = plugin_binary(&dir);
    assert!(
        std::fs::symlink_metadata(&plugin)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    std::fs::write(dir.join("config.yaml"), SPEC).unwrap();
    let output = Command::new(&plugin)
        .arg("config.yaml")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        output.stdout,
        trainc(&dir, &["build", "config.yaml"]).stdout
    );

    std::fs::write(
        dir.join("bad.yaml"),
        SPEC.replace("replicas: 2", "replicas: 0"),
    )
    .unwrap();
    let bad = Command::new(&plugin)
        .arg("bad.yaml")
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(bad.stdout.is_empty());
    assert!(
        text(&bad.stderr)
            .contains("TrainSpec demo, spec.replicas: error: `replicas` must be at least 1"),
        "{}",
        text(&bad.stderr)
    );

    let usage = Command::new(&plugin).current_dir(&dir).output().unwrap();
    assert_eq!(usage.status.code(), Some(2));
    // Installing again replaces the link; a file in the way is not clobbered.
    plugin_binary(&dir);
    std::fs::remove_file(&plugin).unwrap();
    std::fs::write(&plugin, "not a link").unwrap();
    let blocked = trainc(
        &dir,
        &[
            "plugin",
            "install",
            "--dev",
            "--dir",
            dir.join("plugins").to_str().unwrap(),
        ],
    );
    assert_eq!(blocked.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&plugin).unwrap(), "not a link");
}

/// As a function, a TrainJob whose runtime trainc writes comes with it: the
/// TrainingRuntime first, then the TrainJob that names it.
#[test]
fn the_function_emits_the_runtime_it_writes_with_its_trainjob() {
    let spec = format!(
        "{SPEC}  target: trainjob\n  hostNetwork: true\n  trainjob:\n    writeRuntime: true\n"
    );
    let (status, list, stderr) = function(&["fn"], &resource_list(&[], Some(&spec)));
    assert_eq!(status, 0, "{stderr}");
    let items = list["items"].as_array().unwrap();
    let kinds: Vec<&str> = items.iter().map(|i| i["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["TrainingRuntime", "TrainJob"]);
    assert_eq!(
        items[1]["spec"]["runtimeRef"]["name"],
        items[0]["metadata"]["name"]
    );
    assert_eq!(
        items[0].pointer(
            "/spec/template/spec/replicatedJobs/0/template/spec/template/spec/hostNetwork"
        ),
        Some(&Value::Bool(true))
    );
}
