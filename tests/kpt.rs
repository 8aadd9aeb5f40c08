//! trainc under the real kpt: `kpt fn render` with trainc in the Kptfile's
//! pipeline (`examples/kpt/package`) and `kpt fn eval --exec`. A function run
//! again gives the same package, and the package follows the spec's changes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::{root, temp_dir, text, tool, trainc};

/// A copy of the example package in a fresh directory.
fn package(name: &str) -> PathBuf {
    let dir = temp_dir(name);
    let example = root().join("examples/kpt/package");
    for entry in std::fs::read_dir(&example).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
    }
    dir
}

/// A directory with `trainc` (this test binary) in it, for the Kptfile's
/// `exec: trainc`; one per test, as tests run at the same time.
fn path_with_trainc(test: &str) -> String {
    let bin = temp_dir(&format!("{test}-bin"));
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_trainc"), bin.join("trainc")).unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    format!("{}:{path}", bin.display())
}

fn kpt(kpt: &Path, path: &str, args: &[&str]) -> Output {
    let output = Command::new(kpt)
        .args(args)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "kpt {args:?}: {}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    output
}

/// Every file of the package, by name.
fn files(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.file_name().unwrap().to_str().unwrap().to_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect()
}

/// Every object in the package's YAML files.
fn objects(dir: &Path) -> Vec<Value> {
    files(dir)
        .iter()
        .filter(|(name, _)| Path::new(name).extension().is_some_and(|e| e == "yaml"))
        .flat_map(|(_, text)| serde_saphyr::from_str_multiple::<Value, Vec<Value>>(text).unwrap())
        .collect()
}

fn of_kind<'a>(objects: &'a [Value], kind: &str) -> Vec<&'a Value> {
    objects.iter().filter(|o| o["kind"] == kind).collect()
}

#[test]
fn kpt_fn_render_twice_gives_the_same_package_and_follows_the_spec() {
    let Some(kpt_bin) = tool("kpt") else { return };
    let path = path_with_trainc("kpt-render");
    let dir = package("kpt-render");
    let render = || {
        kpt(
            &kpt_bin,
            &path,
            &["fn", "render", "--allow-exec", dir.to_str().unwrap()],
        )
    };

    render();
    let first = files(&dir);
    let all = objects(&dir);
    assert_eq!(of_kind(&all, "PyTorchJob").len(), 1, "{first:#?}");
    assert_eq!(of_kind(&all, "PersistentVolumeClaim").len(), 1);
    assert_eq!(of_kind(&all, "ConfigMap").len(), 1);
    assert_eq!(of_kind(&all, "TrainSpec").len(), 1);
    let origin =
        of_kind(&all, "PyTorchJob")[0]["metadata"]["annotations"]["config.kubernetes.io/origin"]
            .as_str()
            .unwrap()
            .to_owned();
    assert!(
        origin.contains("kind: TrainSpec") && origin.contains("name: resnet"),
        "{origin}"
    );

    render();
    assert_eq!(files(&dir), first, "a second render changed the package");

    let spec = dir.join("trainspec.yaml");
    let text_spec = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(&spec, text_spec.replace("replicas: 2", "replicas: 3")).unwrap();
    render();
    let all = objects(&dir);
    let jobs = of_kind(&all, "PyTorchJob");
    assert_eq!(jobs.len(), 1, "one PyTorchJob, replaced");
    assert_eq!(
        jobs[0]["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"],
        2
    );

    let without_volume = std::fs::read_to_string(&spec).unwrap();
    let cut = without_volume.find("  volumes:").unwrap();
    std::fs::write(&spec, &without_volume[..cut]).unwrap();
    render();
    let all = objects(&dir);
    assert!(
        of_kind(&all, "PersistentVolumeClaim").is_empty(),
        "the PVC is gone"
    );
    assert_eq!(of_kind(&all, "PyTorchJob").len(), 1);
    assert_eq!(
        of_kind(&all, "ConfigMap").len(),
        1,
        "what trainc did not make stays"
    );
}

#[test]
fn kpt_fn_eval_twice_gives_the_same_package() {
    let Some(kpt_bin) = tool("kpt") else { return };
    let path = path_with_trainc("kpt-eval-twice");
    let dir = package("kpt-eval-twice");
    std::fs::remove_file(dir.join("Kptfile")).unwrap();
    let config = root().join("examples/kpt/package/trainspec.yaml");
    let eval = || {
        kpt(
            &kpt_bin,
            &path,
            &[
                "fn",
                "eval",
                dir.to_str().unwrap(),
                "--exec",
                env!("CARGO_BIN_EXE_trainc"),
                "--fn-config",
                config.to_str().unwrap(),
            ],
        )
    };
    eval();
    let first = files(&dir);
    eval();
    assert_eq!(files(&dir), first);
    assert_eq!(of_kind(&objects(&dir), "PyTorchJob").len(), 1);
}

#[test]
fn kpt_fn_eval_exec_adds_the_objects_to_the_package() {
    let Some(kpt_bin) = tool("kpt") else { return };
    let example = root().join("examples/kpt/package");
    let package = temp_dir("krm-kpt-package");
    std::fs::copy(
        example.join("configmap.yaml"),
        package.join("configmap.yaml"),
    )
    .unwrap();
    let run = |config: &Path| {
        Command::new(&kpt_bin)
            .args([
                "fn",
                "eval",
                package.to_str().unwrap(),
                "--exec",
                env!("CARGO_BIN_EXE_trainc"),
            ])
            .args(["--fn-config", config.to_str().unwrap(), "-o", "stdout"])
            .output()
            .unwrap()
    };
    let output = run(&example.join("trainspec.yaml"));
    assert!(output.status.success(), "kpt: {}", text(&output.stderr));
    let list: Value = serde_saphyr::from_str(&text(&output.stdout)).unwrap();
    let items = list["items"].as_array().unwrap();
    let strip = |o: &Value| {
        let mut o = o.clone();
        if let Some(annotations) = o["metadata"]
            .get_mut("annotations")
            .and_then(Value::as_object_mut)
        {
            annotations.retain(|k, _| !k.contains("config.kubernetes.io/"));
            if annotations.is_empty() {
                o["metadata"].as_object_mut().unwrap().remove("annotations");
            }
        }
        o
    };
    assert_eq!(
        strip(&items[0]),
        serde_saphyr::from_str::<Value>(
            &std::fs::read_to_string(package.join("configmap.yaml")).unwrap()
        )
        .unwrap()
    );
    let built = trainc(
        &root(),
        &["build", example.join("trainspec.yaml").to_str().unwrap()],
    );
    let expected: Vec<Value> = serde_saphyr::from_str_multiple(&text(&built.stdout)).unwrap();
    let generated: Vec<Value> = items[1..].iter().map(strip).collect();
    assert_eq!(generated, expected);

    let bad = package
        .parent()
        .unwrap()
        .join(format!("bad-fn-config-{}.yaml", std::process::id()));
    std::fs::write(
        &bad,
        std::fs::read_to_string(example.join("trainspec.yaml"))
            .unwrap()
            .replace("memory: 32Gi", "memory: 32GB"),
    )
    .unwrap();
    let failed = run(&bad);
    let _ = std::fs::remove_file(&bad);
    assert!(!failed.status.success(), "kpt must fail on a bad spec");
    let all = format!("{}{}", text(&failed.stdout), text(&failed.stderr));
    assert!(all.contains("is not a Kubernetes quantity"), "{all}");
}
