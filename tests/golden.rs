//! Every example, built with `--verify`, must equal its golden file in
//! `golden/<example>/<target>.yaml`; every golden must pass the strict schemas
//! and webhook rules in `schemas/k8s/` (through the jsonschema crate).
//! `TRAINC_BLESS=1 cargo test` rewrites the goldens; read the diff before committing.

use std::path::{Path, PathBuf};

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

/// The target an example names, `pytorchjob` when it names none.
fn own_target(example: &Path) -> String {
    let text = std::fs::read_to_string(example).unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("target"))
        .unwrap_or("");
    ["trainjob", "pytorchjob"]
        .into_iter()
        .find(|t| line.contains(t))
        .unwrap_or("pytorchjob")
        .to_owned()
}

fn golden_path(example: &Path, target: &str) -> PathBuf {
    let stem = example.file_stem().unwrap().to_str().unwrap();
    root()
        .join("golden")
        .join(stem)
        .join(format!("{target}.yaml"))
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

#[test]
fn every_example_builds_verifies_and_matches_its_golden() {
    let mut failures = Vec::new();
    for example in examples() {
        let target = own_target(&example);
        let (status, stdout, stderr) = build(&example, &[]);
        assert_eq!(status, 0, "{}: {stderr}", example.display());
        assert_eq!(
            stderr,
            "",
            "{}: examples build without warnings",
            example.display()
        );
        let path = golden_path(&example, &target);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        if let Some(diff) = compare(&path, &stdout) {
            failures.push(diff);
        }
    }
    assert!(
        failures.is_empty(),
        "goldens differ; rerun with TRAINC_BLESS=1 after reading the diff\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_golden_passes_the_strict_schemas_and_webhook_rules() {
    let mut checked = 0;
    for dir in std::fs::read_dir(root().join("golden")).unwrap() {
        for file in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            let documents: Vec<serde_json::Value> =
                serde_saphyr::from_str_multiple(&std::fs::read_to_string(&path).unwrap())
                    .expect("goldens are YAML");
            assert!(!documents.is_empty(), "{}", path.display());
            let values: Vec<&serde_json::Value> = documents.iter().collect();
            let problems = trainc::verify::verify_values(&values);
            assert!(problems.is_empty(), "{}: {problems:#?}", path.display());
            checked += documents.len();
        }
    }
    assert!(checked >= 6, "only {checked} golden documents found");
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
