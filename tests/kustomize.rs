//! trainc under the real `kubectl kustomize`, as the exec plugin for
//! `kind: TrainSpec`: the example's variants equal the CLI's builds, `[code]`
//! files are found, errors fail the build, and with trainc's transformer
//! configuration `namePrefix`, `nameSuffix` and `namespace` keep every
//! reference and selector working on both targets.
//!
//! Where kubectl is missing the tests say so and stop; with
//! `TRAINC_REQUIRE_TOOLS=1` (set by `.ci/run` when it exists) they fail.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{root, temp_dir, text, tool, trainc};

const SPEC: &str = "apiVersion: trainc.dev/v1alpha1\nkind: TrainSpec\nmetadata:\n  name: demo\nspec:\n  image: ghcr.io/acme/train:1.4\n  script: /app/train.py\n  replicas: 2\n";

fn objects(yaml: &str) -> Vec<Value> {
    let mut objects: Vec<Value> = serde_saphyr::from_str_multiple(yaml).unwrap();
    objects.sort_by_key(|o| {
        (
            o["kind"].as_str().unwrap().to_owned(),
            o["metadata"]["name"].as_str().unwrap().to_owned(),
        )
    });
    objects
}

/// An `XDG_CONFIG_HOME` with trainc installed as kustomize's plugin.
fn plugin_home(name: &str) -> PathBuf {
    let xdg = temp_dir(name);
    let install = trainc(
        &xdg,
        &[
            "plugin",
            "install",
            "--dev",
            "--dir",
            xdg.join("kustomize/plugin").to_str().unwrap(),
        ],
    );
    assert_eq!(install.status.code(), Some(0), "{}", text(&install.stderr));
    xdg
}

fn kustomize(kubectl: &Path, xdg: &Path, dir: &Path) -> std::process::Output {
    std::process::Command::new(kubectl)
        .args(["kustomize", "--enable-alpha-plugins", dir.to_str().unwrap()])
        .env("XDG_CONFIG_HOME", xdg)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// kustomize runs the plugin in the kustomization's directory, so `[code]`
/// files are found next to the kustomization wherever kubectl runs.
#[test]
fn kubectl_kustomize_ships_code_files_from_the_kustomization_directory() {
    let Some(kubectl) = tool("kubectl") else {
        return;
    };
    let xdg = plugin_home("krm-xdg-code");
    let dir = temp_dir("krm-kustomize-code");
    std::fs::write(
        dir.join("kustomization.yaml"),
        "generators:\n- trainspec.yaml\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/train.py"), "print('from kustomize')\n").unwrap();
    std::fs::write(
        dir.join("trainspec.yaml"),
        SPEC.replace(
            "  script: /app/train.py\n",
            "  code:\n    files: [src/train.py]\n",
        ),
    )
    .unwrap();
    let output = kustomize(&kubectl, &xdg, &dir);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let built = objects(&text(&output.stdout));
    let config_map = built.iter().find(|o| o["kind"] == "ConfigMap").unwrap();
    assert_eq!(config_map["data"]["train.py"], "print('from kustomize')\n");
    assert_eq!(
        built,
        objects(&text(&trainc(&dir, &["build", "trainspec.yaml"]).stdout))
    );
}

#[test]
fn kubectl_kustomize_builds_the_example_like_the_cli_does() {
    let Some(kubectl) = tool("kubectl") else {
        return;
    };
    let xdg = plugin_home("krm-xdg");
    let example = root().join("examples/kustomize");
    let spec = example.join("spec/trainspec.yaml");
    for (variant, overlay) in [
        ("base", None),
        ("cpu", Some("overlays/cpu.toml")),
        ("gpu", Some("overlays/gpu.toml")),
    ] {
        let output = kustomize(&kubectl, &xdg, &example.join(variant));
        assert!(
            output.status.success(),
            "kubectl kustomize {variant}: {}",
            text(&output.stderr)
        );
        let mut args = vec!["build", spec.to_str().unwrap()];
        if let Some(overlay) = overlay {
            args.extend(["-O", overlay]);
        }
        let cli = trainc(&root(), &args);
        assert_eq!(cli.status.code(), Some(0), "{}", text(&cli.stderr));
        let kustomized = objects(&text(&output.stdout));
        assert_eq!(
            kustomized,
            objects(&text(&cli.stdout)),
            "{variant}: the kustomize path and the CLI path differ"
        );
        assert_eq!(kustomized.len(), 2, "{variant}: a Service and a PyTorchJob");
    }
}

/// The repository layout of docs/integrations.md, made from a TOML spec and
/// the TOML overlays by `trainc convert`: with kustomize's default load
/// restrictor, each cluster's kustomization builds what `trainc build` of the
/// TOML spec and overlay builds (`overlays/cpu.toml`'s `unset` entries
/// reaching kustomize as `null`s).
#[test]
fn kubectl_kustomize_builds_the_documented_repository_layout() {
    let Some(kubectl) = tool("kubectl") else {
        return;
    };
    let xdg = plugin_home("layout-xdg");
    let repo = temp_dir("layout");
    let spec = root().join("examples/gpu-multinode.toml");
    let spec = spec.to_str().unwrap();
    let write = |path: &str, content: &str| {
        let path = repo.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    };
    let converted = trainc(&repo, &["convert", spec, "--to", "trainspec"]);
    assert_eq!(
        converted.status.code(),
        Some(0),
        "{}",
        text(&converted.stderr)
    );
    write("llama/spec/trainspec.yaml", &text(&converted.stdout));
    write(
        "llama/spec/kustomization.yaml",
        "resources:\n- trainspec.yaml\n",
    );
    for variant in ["gpu", "cpu"] {
        let overlay = root().join(format!("overlays/{variant}.toml"));
        let patch = trainc(
            &repo,
            &[
                "convert",
                overlay.to_str().unwrap(),
                "--as-overlay",
                "--name",
                "llama-finetune",
                "--namespace",
                "ml",
                "--to",
                "trainspec",
            ],
        );
        assert_eq!(patch.status.code(), Some(0), "{}", text(&patch.stderr));
        write(
            &format!("llama/{variant}/{variant}.patch.yaml"),
            &text(&patch.stdout),
        );
        write(
            &format!("llama/{variant}/kustomization.yaml"),
            &format!("resources:\n- ../spec\npatches:\n- path: {variant}.patch.yaml\n"),
        );
        write(
            &format!("clusters/{variant}/kustomization.yaml"),
            &format!("generators:\n- ../../llama/{variant}\n"),
        );
        let output = kustomize(&kubectl, &xdg, &repo.join(format!("clusters/{variant}")));
        assert!(
            output.status.success(),
            "{variant}: {}",
            text(&output.stderr)
        );
        let cli = trainc(&root(), &["build", spec, "-O", overlay.to_str().unwrap()]);
        assert_eq!(cli.status.code(), Some(0), "{}", text(&cli.stderr));
        // kustomize writes a TrainSpec's `env` in its own (sorted) order:
        // the variables are compared by name (docs/integrations.md).
        let by_name = |yaml: &str| {
            let mut objects = objects(yaml);
            objects.iter_mut().for_each(sort_env);
            objects
        };
        assert_eq!(
            by_name(&text(&output.stdout)),
            by_name(&text(&cli.stdout)),
            "{variant}: the layout and `trainc build -O` differ"
        );
    }
}

/// Every `env` list under `value` sorted by the variables' names.
fn sort_env(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                if key == "env"
                    && let Value::Array(items) = inner
                {
                    items.sort_by_key(|v| v["name"].as_str().unwrap_or_default().to_owned());
                }
                sort_env(inner);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(sort_env),
        _ => {}
    }
}

/// The README's trap: a patch with a `target:` beside `generators` does
/// not reach the TrainSpec (kustomize patches resources after the
/// generators ran), so the job builds unpatched; the layout that patches
/// the TrainSpec as a resource and generates from it (the example's `gpu/`)
/// gets the patch. If kustomize ever applies such patches, the README is
/// wrong and this fails.
#[test]
fn a_patch_beside_the_generator_misses_and_the_examples_layout_works() {
    let Some(kubectl) = tool("kubectl") else {
        return;
    };
    let xdg = plugin_home("krm-trap-xdg");
    let example = root().join("examples/kustomize");
    let dir = temp_dir("kustomize-trap");
    for file in ["spec/trainspec.yaml", "gpu-spec/gpu.yaml"] {
        let name = Path::new(file).file_name().unwrap();
        std::fs::copy(example.join(file), dir.join(name)).unwrap();
    }
    std::fs::write(
        dir.join("kustomization.yaml"),
        "generators:\n- trainspec.yaml\npatches:\n- path: gpu.yaml\n  target: {kind: TrainSpec}\n",
    )
    .unwrap();
    let gpus = |output: &std::process::Output| {
        assert!(output.status.success(), "{}", text(&output.stderr));
        text(&output.stdout).contains("nvidia.com/gpu")
    };
    assert!(
        !gpus(&kustomize(&kubectl, &xdg, &dir)),
        "kustomize now patches a generator's config: update the README"
    );
    assert!(gpus(&kustomize(&kubectl, &xdg, &example.join("gpu"))));
}

/// kubectl shows a plugin's stderr only when it fails, so a warning of a
/// build that succeeds reaches the output as the job's
/// `trainc.dev/warnings` annotation; with `warnings: error` the same
/// TrainSpec fails `kubectl kustomize`, which then shows the warning.
#[test]
fn plugin_warnings_reach_the_output_or_fail_the_build() {
    let Some(kubectl) = tool("kubectl") else {
        return;
    };
    let xdg = plugin_home("krm-warnings-xdg");
    let dir = temp_dir("kustomize-warnings");
    let unpinned = SPEC.replace("train:1.4", "train:latest");
    std::fs::write(dir.join("trainspec.yaml"), &unpinned).unwrap();
    std::fs::write(
        dir.join("kustomization.yaml"),
        "generators:\n- trainspec.yaml\n",
    )
    .unwrap();
    let output = kustomize(&kubectl, &xdg, &dir);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let built = objects(&text(&output.stdout));
    let job = built.iter().find(|o| o["kind"] == "PyTorchJob").unwrap();
    let said = job["metadata"]["annotations"]["trainc.dev/warnings"]
        .as_str()
        .unwrap_or_default();
    assert!(
        said.starts_with("1 warning from trainc")
            && said.contains("spec.image: `image` is not pinned")
            && said.contains("[trainc::image::unpinned]"),
        "{said}"
    );
    // The pods do not carry it: it is about the build, not the run.
    assert_eq!(
        text(&output.stdout).matches("trainc.dev/warnings").count(),
        1
    );
    std::fs::write(
        dir.join("trainspec.yaml"),
        unpinned.replace("  replicas: 2\n", "  replicas: 2\n  warnings: error\n"),
    )
    .unwrap();
    let strict = kustomize(&kubectl, &xdg, &dir);
    assert!(!strict.status.success());
    assert!(strict.stdout.is_empty());
    let stderr = text(&strict.stderr);
    assert!(stderr.contains("`image` is not pinned"), "{stderr}");
    assert!(
        stderr.contains("the spec sets `warnings` to `error`"),
        "{stderr}"
    );
}

#[test]
fn kubectl_kustomize_reports_a_bad_spec() {
    let Some(kubectl) = tool("kubectl") else {
        return;
    };
    let xdg = plugin_home("krm-xdg-bad");
    let dir = temp_dir("krm-kustomize-bad");
    std::fs::write(
        dir.join("kustomization.yaml"),
        "generators:\n- trainspec.yaml\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("trainspec.yaml"),
        SPEC.replace("replicas: 2", "replicas: 0"),
    )
    .unwrap();
    let output = kustomize(&kubectl, &xdg, &dir);
    assert!(!output.status.success());
    assert!(
        text(&output.stderr)
            .contains("TrainSpec demo, spec.replicas: error: `replicas` must be at least 1"),
        "{}",
        text(&output.stderr)
    );
}

/// Every string at a key `key` whose parent key is `parent`, anywhere in `value`
/// (list items count as being under the list's key).
fn strings_at(value: &Value, under: &str, parent: &str, key: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, child) in map {
                if k == key && under == parent {
                    out.extend(child.as_str().map(str::to_owned));
                }
                strings_at(child, k, parent, key, out);
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|item| strings_at(item, under, parent, key, out)),
        _ => {}
    }
}

/// Every `metadata.labels` map under `value`, merged.
fn labels_under(value: &Value, into: &mut serde_json::Map<String, Value>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(labels)) = map.get("metadata").and_then(|m| m.get("labels")) {
                into.extend(labels.clone());
            }
            map.values().for_each(|v| labels_under(v, into));
        }
        Value::Array(items) => items.iter().for_each(|v| labels_under(v, into)),
        _ => {}
    }
}

fn subset(small: &Value, big: &serde_json::Map<String, Value>) -> bool {
    small
        .as_object()
        .is_some_and(|m| !m.is_empty() && m.iter().all(|(k, v)| big.get(k) == Some(v)))
}

/// The kustomize build of a TrainSpec for `target` (with `extra` spec lines),
/// renamed and moved by a kustomization that uses trainc's configuration.
fn build_renamed(kubectl: &Path, xdg: &Path, target: &str, extra: &str) -> Vec<Value> {
    let dir = temp_dir("kustomize-rename");
    std::fs::create_dir_all(dir.join("gen")).unwrap();
    std::fs::create_dir_all(dir.join("dev")).unwrap();
    std::fs::write(dir.join("gen/train.py"), "print('hi')\n").unwrap();
    std::fs::write(
        dir.join("gen/kustomization.yaml"),
        "generators:\n- trainspec.yaml\n",
    )
    .unwrap();
    let spread = if extra.contains("v2.0") {
        ""
    } else {
        "  scheduling:\n    spreadAcrossNodes: true\n"
    };
    std::fs::write(
        dir.join("gen/trainspec.yaml"),
        format!(
        "apiVersion: trainc.dev/v1alpha1\nkind: TrainSpec\nmetadata:\n  name: resnet\nspec:\n  target: {target}\n{extra}  image: ghcr.io/acme/resnet:2.1.0\n  replicas: 2\n  code:\n    files: [train.py]\n  env:\n    WANDB_API_KEY: {{ secret: wandb, key: key }}\n  ports:\n    tensorboard: 6006\n{spread}  volumes:\n    ckpt: {{ mountPath: /ckpt, size: 100Gi, storageClass: rwx }}\n"
        ),
    )
    .unwrap();
    let config = trainc(&dir, &["plugin", "config"]);
    assert_eq!(config.status.code(), Some(0));
    std::fs::write(dir.join("dev/kustomizeconfig.yaml"), &config.stdout).unwrap();
    std::fs::write(
        dir.join("dev/kustomization.yaml"),
        "resources:\n- ../gen\nnamePrefix: dev-\nnameSuffix: -v2\nnamespace: ml\nconfigurations:\n- kustomizeconfig.yaml\nsecretGenerator:\n- name: wandb\n  literals: [key=abc]\n",
    )
    .unwrap();
    let output = kustomize(kubectl, xdg, &dir.join("dev"));
    assert!(
        output.status.success(),
        "{target} {extra}: {}",
        text(&output.stderr)
    );
    objects(&text(&output.stdout))
}

/// The labels the operator puts on rank 0 of a job named `job_name`.
fn operator_rank0_labels<'a>(target: &str, job_name: &'a str) -> Vec<(&'static str, &'a str)> {
    if target == "pytorchjob" {
        vec![
            ("training.kubeflow.org/job-name", job_name),
            ("training.kubeflow.org/job-role", "master"),
            ("training.kubeflow.org/replica-type", "master"),
            ("training.kubeflow.org/replica-index", "0"),
        ]
    } else {
        vec![
            ("jobset.sigs.k8s.io/jobset-name", job_name),
            ("jobset.sigs.k8s.io/replicatedjob-name", "node"),
            ("jobset.sigs.k8s.io/job-index", "0"),
            ("batch.kubernetes.io/job-completion-index", "0"),
        ]
    }
}

/// `namePrefix`, `nameSuffix`, `namespace` and a hash-suffixed Secret, with
/// the transformer configuration of `trainc plugin config`: on every target
/// each reference names an object of the build and each selector picks the
/// pods the operator will create under the new name.
#[test]
fn renamed_by_kustomize_every_reference_and_selector_still_holds() {
    let Some(kubectl) = tool("kubectl") else {
        return;
    };
    let xdg = plugin_home("krm-xdg-rename");
    for (target, extra) in [
        ("pytorchjob", ""),
        ("trainjob", "  trainjob:\n    apiLevel: \"v2.2\"\n"),
        ("trainjob", "  trainjob:\n    apiLevel: \"v2.1\"\n"),
        ("trainjob", "  trainjob:\n    apiLevel: \"v2.0\"\n"),
        ("trainjob", "  trainjob:\n    writeRuntime: true\n"),
        ("jobset", ""),
    ] {
        let what = format!("{target} {extra}");
        let built = build_renamed(&kubectl, &xdg, target, extra);
        let names = |kind: &str| -> Vec<String> {
            built
                .iter()
                .filter(|o| o["kind"] == kind)
                .map(|o| o["metadata"]["name"].as_str().unwrap().to_owned())
                .collect()
        };
        for object in &built {
            assert_eq!(object["metadata"]["namespace"], "ml", "{what}: {object}");
            let name = object["metadata"]["name"].as_str().unwrap();
            assert!(name.starts_with("dev-"), "{what}: {name}");
        }
        let job = built
            .iter()
            .find(|o| ["PyTorchJob", "TrainJob", "JobSet"].contains(&o["kind"].as_str().unwrap()))
            .unwrap();
        let job_name = job["metadata"]["name"].as_str().unwrap();
        assert_eq!(job_name, "dev-resnet-v2");
        if target == "jobset" {
            rank0_follows_the_jobsets_name(job, &what);
        }
        // With a runtime trainc wrote, the pods are there, and the TrainJob
        // names it by its new name.
        let runtime = built.iter().find(|o| o["kind"] == "TrainingRuntime");
        if let Some(runtime) = runtime {
            assert_eq!(
                job["spec"]["runtimeRef"]["name"], runtime["metadata"]["name"],
                "{what}"
            );
        }
        let pods = runtime.unwrap_or(job);
        for (parent, key, kind) in [
            (
                "persistentVolumeClaim",
                "claimName",
                "PersistentVolumeClaim",
            ),
            ("configMap", "name", "ConfigMap"),
            ("secretKeyRef", "name", "Secret"),
        ] {
            let mut references = Vec::new();
            strings_at(job, "", parent, key, &mut references);
            if let Some(runtime) = runtime {
                strings_at(runtime, "", parent, key, &mut references);
            }
            assert!(!references.is_empty(), "{what}: no {parent}.{key}");
            for reference in references {
                assert!(
                    names(kind).contains(&reference),
                    "{what}: {parent}.{key} `{reference}` names no {kind} of {:?}",
                    names(kind)
                );
            }
        }
        // The labels rank 0 will carry: its templates', and the operator's for the new name.
        let mut rank0 = serde_json::Map::new();
        labels_under(&pods["spec"], &mut rank0);
        for (key, value) in operator_rank0_labels(target, job_name) {
            rank0.insert(key.to_owned(), Value::String(value.to_owned()));
        }
        let service = built.iter().find(|o| o["kind"] == "Service").unwrap();
        assert!(
            subset(&service["spec"]["selector"], &rank0),
            "{what}: the Service selects {} but rank 0 has {rank0:?}",
            service["spec"]["selector"]
        );
        let mut match_labels = Vec::new();
        find_match_labels(pods, &mut match_labels);
        assert_eq!(
            match_labels.is_empty(),
            extra.contains("v2.0"),
            "{what}: spreadAcrossNodes"
        );
        for selector in match_labels {
            assert!(
                subset(&selector, &rank0),
                "{what}: anti-affinity {selector} matches no pod of the job"
            );
        }
    }
}

/// A JobSet's ranks meet at an address made of the name JobSet gives its
/// pods, the renamed one, not of the name trainc built.
fn rank0_follows_the_jobsets_name(job: &Value, what: &str) {
    let container =
        &job["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0];
    let command = container["command"].to_string();
    assert!(
        command.contains("--master_addr=$(JOBSET_NAME)-node-0-0.$(JOBSET_NAME)")
            && !command.contains("resnet"),
        "{what}: {command}"
    );
    assert!(
        container["env"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "JOBSET_NAME"
                && e["valueFrom"]["fieldRef"]["fieldPath"]
                    == "metadata.annotations['jobset.sigs.k8s.io/jobset-name']"),
        "{what}"
    );
}

fn find_match_labels(value: &Value, out: &mut Vec<Value>) {
    match value {
        Value::Object(map) => {
            if let Some(labels) = map.get("matchLabels") {
                out.push(labels.clone());
            }
            map.values().for_each(|v| find_match_labels(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| find_match_labels(v, out)),
        _ => {}
    }
}

/// The committed copy in the example is what `trainc plugin config` prints.
#[test]
fn the_example_kustomize_configuration_is_current() {
    let output = trainc(&root(), &["plugin", "config"]);
    assert_eq!(output.status.code(), Some(0));
    let committed =
        std::fs::read_to_string(root().join("examples/kustomize/dev/kustomizeconfig.yaml"))
            .unwrap();
    assert_eq!(
        committed,
        text(&output.stdout),
        "regenerate it with `trainc plugin config`"
    );
}

/// The function-config form (`config.kubernetes.io/function: exec:`) is one
/// kubectl cannot run: it generates nothing and succeeds. `trainc check` says
/// so at the annotation, and the README documents the plugin form instead.
#[test]
fn kubectl_skips_an_exec_function_silently_and_check_warns() {
    let case = root().join("tests/check/krm-warn-exec-function.yaml");
    let checked = trainc(&root(), &["check", case.to_str().unwrap()]);
    assert_eq!(checked.status.code(), Some(0));
    assert!(text(&checked.stderr).contains("trainc::krm::exec_function"));
    let Some(kubectl) = tool("kubectl") else {
        return;
    };
    let dir = temp_dir("kustomize-exec-fn");
    std::fs::copy(&case, dir.join("trainspec.yaml")).unwrap();
    std::fs::write(
        dir.join("kustomization.yaml"),
        "generators:\n- trainspec.yaml\n",
    )
    .unwrap();
    let xdg = plugin_home("krm-xdg-exec-fn");
    let output = kustomize(&kubectl, &xdg, &dir);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        objects(&text(&output.stdout)).is_empty(),
        "kubectl now runs exec functions: update the warning and the README"
    );
}

/// `examples/kustomize/dev`: the GPU variant renamed and moved, with trainc's
/// configuration; the existing claim it names (not in the kustomization) is
/// left as it is.
#[test]
fn the_dev_example_renames_the_gpu_variant() {
    let Some(kubectl) = tool("kubectl") else {
        return;
    };
    let xdg = plugin_home("krm-xdg-dev");
    let output = kustomize(&kubectl, &xdg, &root().join("examples/kustomize/dev"));
    assert!(output.status.success(), "{}", text(&output.stderr));
    let built = objects(&text(&output.stdout));
    assert_eq!(built.len(), 2);
    for object in &built {
        assert_eq!(object["metadata"]["namespace"], "ml-dev");
        assert!(
            object["metadata"]["name"]
                .as_str()
                .unwrap()
                .starts_with("dev-resnet")
        );
    }
    let mut claims = Vec::new();
    let job = built.iter().find(|o| o["kind"] == "PyTorchJob").unwrap();
    strings_at(job, "", "persistentVolumeClaim", "claimName", &mut claims);
    assert!(
        !claims.is_empty() && claims.iter().all(|c| c == "imagenet"),
        "{claims:?}"
    );
}

/// The CI gate of a real repository: what `kubectl kustomize` renders from
/// the dev example plus the repository's own Secret, ServiceAccount and
/// Kueue LocalQueue, piped to `trainc verify -`. The built-in kinds are
/// checked, the LocalQueue is listed as not checked, and an invalid Secret
/// fails at its document and field.
#[test]
fn a_rendered_repository_verifies_with_its_other_kinds_listed() {
    let Some(kubectl) = tool("kubectl") else {
        return;
    };
    let xdg = plugin_home("verify-xdg");
    let work = temp_dir("verify-repository");
    crate::corpus::copy_tree(&root().join("examples/kustomize"), &work.join("kustomize"));
    let repo = work.join("kustomize/repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(
        repo.join("kustomization.yaml"),
        "resources:\n- ../dev\n- extra.yaml\n",
    )
    .unwrap();
    let extra = |secret_data: &str| {
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: wandb\n{secret_data}---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: trainer\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: team-a\nspec:\n  clusterQueue: cluster-queue\n"
        )
    };
    let verify = |data: &str| {
        std::fs::write(repo.join("extra.yaml"), extra(data)).unwrap();
        let rendered = kustomize(&kubectl, &xdg, &repo);
        assert!(rendered.status.success(), "{}", text(&rendered.stderr));
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_trainc"))
            .args(["verify", "--format", "json", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), &rendered.stdout).unwrap();
        (text(&rendered.stdout), child.wait_with_output().unwrap())
    };

    let (rendered, good) = verify("data:\n  WANDB_API_KEY: bm90LWEtcmVhbC1rZXk=\n");
    for kind in [
        "Secret",
        "ServiceAccount",
        "Service",
        "PyTorchJob",
        "LocalQueue",
    ] {
        assert!(rendered.contains(&format!("kind: {kind}\n")), "{rendered}");
    }
    assert_eq!(good.status.code(), Some(0), "{}", text(&good.stdout));
    let notes: Vec<Value> = text(&good.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0]["severity"], "note");
    assert_eq!(notes[0]["code"], "trainc::verify::unchecked");
    assert!(
        notes[0]["message"]
            .as_str()
            .unwrap()
            .contains("`LocalQueue`")
    );

    let (rendered, bad) = verify("data:\n  WANDB_API_KEY: not-a-real-key\n");
    assert_eq!(bad.status.code(), Some(1), "{}", text(&bad.stdout));
    let error: Value = text(&bad.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|d| d["severity"] == "error")
        .unwrap();
    let line = rendered
        .lines()
        .position(|l| l.contains("WANDB_API_KEY: not-a-real-key"))
        .unwrap()
        + 1;
    assert_eq!(error["line"], line, "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("Secret/wandb, `data.WANDB_API_KEY`: `\"not-a-real-key\"` is not base64"),
        "{message}"
    );
    let document = rendered[..rendered.find("kind: Secret").unwrap()]
        .matches("\n---\n")
        .count()
        + 1;
    assert!(
        message.starts_with(&format!("document {document}, ")),
        "{message}"
    );
}
