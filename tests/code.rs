//! `[code]`: local files shipped in a ConfigMap named after their content.

use std::path::Path;

use crate::support::{run_with_stdin_in, temp_dir, text, trainc};

const SPEC: &str = r#"name = "local"
image = "pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime"
replicas = 2
args = ["--epochs", "2"]

[code]
files = ["train.py", "lib/utils.py"]
function = "train.py:train"
packages = ["torchvision==0.19.1"]
"#;

fn project(name: &str, train: &str) -> std::path::PathBuf {
    let dir = temp_dir(name);
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::write(dir.join("spec.toml"), SPEC).unwrap();
    std::fs::write(dir.join("train.py"), train).unwrap();
    std::fs::write(dir.join("lib/utils.py"), "SEED = 1\n").unwrap();
    dir
}

fn build(dir: &Path, spec: &str) -> String {
    let output = trainc(dir, &["build", spec]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    text(&output.stdout)
}

fn config_map_name(yaml: &str) -> String {
    let objects: Vec<serde_json::Value> = serde_saphyr::from_str_multiple(yaml).unwrap();
    objects
        .iter()
        .find(|o| o["kind"] == "ConfigMap")
        .map(|o| o["metadata"]["name"].as_str().unwrap().to_owned())
        .expect("a ConfigMap")
}

#[test]
fn one_changed_byte_changes_the_configmap_name_and_only_what_refers_to_it() {
    let a = project("code-a", "def train():\n    print('a')\n");
    let b = project("code-b", "def train():\n    print('b')\n");
    let (out_a, out_b) = (build(&a, "spec.toml"), build(&b, "spec.toml"));
    assert_eq!(out_a, build(&a, "spec.toml"), "same input, same bytes");
    let (name_a, name_b) = (config_map_name(&out_a), config_map_name(&out_b));
    assert_ne!(name_a, name_b);
    // Put the new name back and the file's new content back: nothing else differs.
    let normalised = out_b
        .replace(&name_b, &name_a)
        .replace("print('b')", "print('a')");
    assert_eq!(normalised, out_a);
    // Its name is referenced by every pod (Master and Worker), and nothing else.
    assert_eq!(out_a.matches(&name_a).count(), 3);
}

#[test]
fn files_are_read_relative_to_the_spec_not_the_working_directory() {
    let dir = project("code-relative", "def train():\n    pass\n");
    let from_inside = build(&dir, "spec.toml");
    let inner = dir.file_name().unwrap().to_str().unwrap();
    let from_outside = build(dir.parent().unwrap(), &format!("{inner}/spec.toml"));
    assert_eq!(from_inside, from_outside);
    assert!(from_inside.contains("utils.py: |\n    SEED = 1\n"));
}

#[test]
fn more_than_a_configmap_holds_is_an_error_that_says_to_build_an_image() {
    let dir = project("code-large", &format!("# {}\n", "x".repeat(1024 * 1024)));
    let output = trainc(&dir, &["build", "spec.toml"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = text(&output.stderr);
    assert!(stderr.contains("trainc::code::"), "{stderr}");
    assert!(
        stderr.contains("build an image") || stderr.contains("larger than 1 MiB"),
        "{stderr}"
    );
    // Where large files belong, not where the path is read from.
    assert!(
        stderr.contains("belong in the") && !stderr.contains("paths are relative"),
        "{stderr}"
    );
    // Two files each under the limit but together over it: the total is checked.
    let half = format!("# {}\n", "x".repeat(600 * 1024));
    std::fs::write(dir.join("train.py"), &half).unwrap();
    std::fs::write(dir.join("lib/utils.py"), &half).unwrap();
    let output = trainc(&dir, &["build", "spec.toml"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("trainc::code::too_large"), "{stderr}");
    assert!(stderr.contains("spec.toml:7:1"), "{stderr}");
    assert!(stderr.contains("build an image"), "{stderr}");
}

/// The shell script trainc writes runs pip, then torchrun with the spec's
/// args, exactly as the words say: run it with stand-ins for both.
#[test]
fn the_install_script_passes_words_through_unchanged() {
    let dir = project("code-shell", "def train():\n    pass\n");
    let spec = SPEC
        .replace(
            r#"packages = ["torchvision==0.19.1"]"#,
            r#"packages = ["torchvision==0.19.1", "numpy>=1.26,<2", "x; python_version>'3'"]
pipIndexUrl = "https://example.com/simple?a=1&b=$HOME""#,
        )
        .replace(
            r#"args = ["--epochs", "2"]"#,
            r#"args = ["--name", "it's $HOME"]"#,
        );
    std::fs::write(dir.join("spec.toml"), spec).unwrap();
    let out = build(&dir, "spec.toml");
    let objects: Vec<serde_json::Value> = serde_saphyr::from_str_multiple(&out).unwrap();
    let job = objects.iter().find(|o| o["kind"] == "PyTorchJob").unwrap();
    let container =
        &job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0];
    let words = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_owned())
            .collect()
    };
    let mut command = words(&container["command"]);
    command.extend(words(&container["args"]));
    assert_eq!(command[..2], ["sh", "-c"]);
    // Stand-ins that print their arguments, one per line, on PATH first.
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["python", "torchrun"] {
        let path = bin.join(tool);
        std::fs::write(
            &path,
            format!("#!/bin/sh\nfor a in \"$@\"; do printf '{tool}:%s\\n' \"$a\"; done\n"),
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    let Ok(run) = std::process::Command::new(&command[0])
        .args(&command[1..])
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .output()
    else {
        return; // no sh: nothing more to run
    };
    assert!(run.status.success(), "{}", text(&run.stderr));
    let printed = text(&run.stdout);
    for expected in [
        "python:--user",
        "python:--index-url",
        "python:https://example.com/simple?a=1&b=$HOME",
        "python:torchvision==0.19.1",
        "python:numpy>=1.26,<2",
        "python:x; python_version>'3'",
        "torchrun:--nproc_per_node=1",
        "torchrun:/trainc/code/trainc_main.py",
        "torchrun:--name",
        "torchrun:it's $HOME",
    ] {
        assert!(
            printed.lines().any(|l| l == expected),
            "missing `{expected}` in\n{printed}"
        );
    }
}

/// An overlay's `[code]` paths are relative to the overlay, not to the spec.
#[test]
fn an_overlay_ships_files_relative_to_itself() {
    let dir = project("code-overlay", "def train():\n    print('base')\n");
    std::fs::create_dir_all(dir.join("variants/debug")).unwrap();
    std::fs::write(
        dir.join("variants/debug/train.py"),
        "def train():\n    print('debug')\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("variants/debug.toml"),
        "[code]\nfiles = [\"debug/train.py\", \"../lib/utils.py\"]\npackages = []\n",
    )
    .unwrap();
    let base = build(&dir, "spec.toml");
    let output = trainc(&dir, &["build", "spec.toml", "-O", "variants/debug.toml"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let debug = text(&output.stdout);
    assert!(debug.contains("print('debug')"), "{debug}");
    assert!(debug.contains("SEED = 1"), "{debug}");
    assert!(
        !debug.contains("pip install"),
        "packages = [] installs nothing"
    );
    assert_ne!(config_map_name(&base), config_map_name(&debug));

    // A file the overlay names that is not there is reported in the overlay.
    std::fs::write(
        dir.join("variants/missing.toml"),
        "[code]\nfiles = [\"nowhere.py\"]\nfunction = \"nowhere.py:train\"\n",
    )
    .unwrap();
    let output = trainc(&dir, &["build", "spec.toml", "-O", "variants/missing.toml"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = text(&output.stderr);
    assert!(stderr.contains("variants/missing.toml:2:"), "{stderr}");
    assert!(stderr.contains("variants/nowhere.py"), "{stderr}");
}

/// As a KRM function and as a kustomize plugin, there is no spec file:
/// paths are relative to the working directory, which kustomize sets to the
/// kustomization's directory (kubernetes-sigs/kustomize kustomize/v5.5.0,
/// api/internal/plugins/execplugin/execplugin.go, `cmd.Dir`).
#[test]
fn as_a_function_files_are_relative_to_the_working_directory() {
    let dir = project("code-fn", "def train():\n    print('fn')\n");
    let config = "apiVersion: trainc.dev/v1alpha1\nkind: TrainSpec\nmetadata:\n  name: local\nspec:\n  image: pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime\n  replicas: 2\n  code:\n    files: [train.py, lib/utils.py]\n    function: train.py:train\n";
    let list = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n  {}",
        config.trim_end().replace('\n', "\n  ")
    );
    let run = |cwd: &Path| {
        run_with_stdin_in(
            cwd,
            Path::new(env!("CARGO_BIN_EXE_trainc")),
            &["fn"],
            list.as_bytes(),
        )
    };
    let output = run(&dir);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let out: serde_json::Value = serde_saphyr::from_str(&text(&output.stdout)).unwrap();
    let config_map = out["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "ConfigMap")
        .expect("the code ConfigMap");
    assert_eq!(
        config_map["data"]["train.py"],
        "def train():\n    print('fn')\n"
    );

    // From elsewhere (an empty directory) the files are not found: a located
    // error result, no objects.
    let output = run(&temp_dir("code-fn-elsewhere"));
    assert_eq!(output.status.code(), Some(1));
    let out: serde_json::Value = serde_saphyr::from_str(&text(&output.stdout)).unwrap();
    assert!(out["items"].as_array().unwrap().is_empty(), "{out}");
    let results = out["results"].to_string();
    assert!(results.contains("trainc::code::file"), "{results}");
    assert!(results.contains("train.py"), "{results}");
}
