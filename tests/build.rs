//! `trainc build` as a user meets it: output modes, all-or-nothing output,
//! YAML that a YAML 1.1 reader reads back unchanged.
use std::path::Path;

use crate::support::{root, run_with_stdin, temp_dir, text, trainc};

#[test]
fn an_invalid_spec_writes_nothing_to_stdout_and_exits_1() {
    let output = trainc(
        &root().join("tests/check"),
        &["build", "many-problems-fail.toml"],
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert!(text(&output.stderr).contains("many-problems-fail.toml:1:8: error"));
    let dir = temp_dir("build-invalid");
    let out = dir.join("out");
    let output = trainc(
        &root().join("tests/check"),
        &[
            "build",
            "--output-dir",
            out.to_str().unwrap(),
            "many-problems-fail.toml",
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(!out.exists(), "no directory is created for an invalid spec");
}

#[test]
fn warnings_go_to_stderr_and_the_objects_to_stdout() {
    let output = trainc(
        &root().join("tests/check"),
        &["build", "nproc-warn-idle-gpus.toml"],
    );
    assert_eq!(output.status.code(), Some(0));
    assert!(text(&output.stdout).starts_with("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n"));
    assert!(text(&output.stderr).contains("warning: 1 process per pod for 8 GPUs"));
}

#[test]
fn json_output_is_a_list_of_the_same_objects() {
    let yaml = trainc(&root(), &["build", "examples/volumes-secrets.toml"]);
    let json = trainc(
        &root(),
        &["build", "-o", "json", "examples/volumes-secrets.toml"],
    );
    assert_eq!(json.status.code(), Some(0));
    let list: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        (&list["apiVersion"], &list["kind"]),
        (&serde_json::json!("v1"), &serde_json::json!("List"))
    );
    let from_yaml: Vec<serde_json::Value> =
        serde_saphyr::from_str_multiple(&text(&yaml.stdout)).unwrap();
    assert_eq!(list["items"].as_array().unwrap(), &from_yaml);
}

#[test]
fn output_dir_writes_one_file_per_object_in_apply_order() {
    let dir = temp_dir("build-dir");
    let output = trainc(
        &root(),
        &[
            "build",
            "--output-dir",
            dir.to_str().unwrap(),
            "examples/ports.yaml",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(output.stdout.is_empty());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "01-service-mnist-tb-ports.yaml",
            "02-pytorchjob-mnist-tb.yaml"
        ]
    );
    let joined = names
        .iter()
        .map(|n| std::fs::read_to_string(dir.join(n)).unwrap())
        .collect::<Vec<_>>()
        .join("---\n");
    assert_eq!(
        joined,
        text(&trainc(&root(), &["build", "examples/ports.yaml"]).stdout)
    );
}

#[test]
fn target_flag_overrides_the_spec_and_is_pointed_at() {
    let output = trainc(
        &root(),
        &["build", "--target", "trainjob", "examples/elastic.toml"],
    );
    assert_eq!(output.status.code(), Some(1));
    let err = text(&output.stderr);
    assert!(
        err.contains(
            "examples/elastic.toml:7:1: error: target `trainjob` cannot express elastic `replicas`"
        ),
        "{err}"
    );
    assert!(output.stdout.is_empty());
}

/// Strings a YAML 1.1 reader (PyYAML, and the YAML rules of the Kubernetes API
/// machinery) turns into booleans, numbers, nulls, timestamps or structure
/// unless they are quoted.
const TRAPS: &[&str] = &[
    "on",
    "off",
    "On",
    "OFF",
    "yes",
    "no",
    "Yes",
    "NO",
    "y",
    "n",
    "Y",
    "N",
    "true",
    "false",
    "True",
    "FALSE",
    "~",
    "null",
    "Null",
    "NULL",
    "",
    " ",
    "0755",
    "0o755",
    "0x1F",
    "0b101",
    "1e3",
    "1E3",
    "1e-3",
    ".5",
    "5.",
    "1_000",
    "+1",
    "-1",
    "007",
    "08",
    "1.0",
    "3.14",
    ".inf",
    "-.Inf",
    ".NaN",
    "12:30",
    "1:20:30",
    "190:20:30",
    "2024-01-01",
    "2024-01-01T10:00:00Z",
    "2024-01-01 10:00:00",
    "- x",
    "a: b",
    "a:b",
    "#comment",
    "a #b",
    "multi\nline",
    "trailing\n",
    " leading",
    "trailing ",
    "key:",
    "@at",
    "`tick",
    "!tag",
    "&anchor",
    "*alias",
    "%percent",
    "{a}",
    "[a]",
    ">folded",
    "|literal",
    "'quote",
    "\"dq",
    "=",
    "<<",
    "?",
    "-",
    ":",
    "---",
    "...",
    "tab\there",
    "back\\slash",
    "é",
    "\u{1F600}",
    "0",
    "-0",
    "1",
    "+.5",
];

#[test]
fn yaml_11_trap_strings_survive_a_pyyaml_round_trip() {
    let dir = temp_dir("build-traps");
    let quoted = |s: &str| serde_json::to_string(s).unwrap(); // a JSON string is a TOML basic string
    let args = TRAPS
        .iter()
        .map(|s| quoted(s))
        .collect::<Vec<_>>()
        .join(", ");
    let env = TRAPS
        .iter()
        .enumerate()
        .map(|(i, s)| format!("V{i} = {}", quoted(s)))
        .collect::<Vec<_>>()
        .join("\n");
    let spec = format!(
        "name = \"traps\"\nimage = \"ghcr.io/acme/train:1.4\"\nscript = \"/app/train.py\"\nargs = [{args}]\n\n[env]\n{env}"
    );
    std::fs::write(dir.join("traps.toml"), spec).unwrap();
    let output = trainc(&dir, &["build", "--verify", "traps.toml"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));

    // PyYAML resolves plain scalars by YAML 1.1 rules: exactly the reader to fear.
    let script = "import sys, json, yaml\n\
        docs = list(yaml.safe_load_all(sys.stdin))\n\
        c = docs[-1]['spec']['pytorchReplicaSpecs']['Master']['template']['spec']['containers'][0]\n\
        print(json.dumps({'args': c['args'], 'env': [e['value'] for e in c['env']]}))\n";
    // Needs python3 with PyYAML (pip install pyyaml); run_with_stdin panics without python3.
    let result = run_with_stdin(Path::new("python3"), &["-c", script], &output.stdout);
    assert!(
        result.status.success(),
        "PyYAML could not read the output (pip install pyyaml?): {}",
        text(&result.stderr)
    );
    let read: serde_json::Value = serde_json::from_slice(&result.stdout).unwrap();
    let expected: Vec<serde_json::Value> = TRAPS.iter().map(|s| serde_json::json!(s)).collect();
    for (field, values) in [("args", &read["args"]), ("env", &read["env"])] {
        let values = values.as_array().unwrap();
        for (want, got) in expected.iter().zip(values) {
            assert_eq!(
                got, want,
                "{field}: PyYAML read {got} where trainc wrote {want}"
            );
        }
        assert_eq!(values.len(), expected.len(), "{field}");
    }
}

#[test]
fn build_reads_standard_input() {
    let spec = std::fs::read(root().join("examples/cpu-minimal.toml")).unwrap();
    let output = run_with_stdin(
        Path::new(env!("CARGO_BIN_EXE_trainc")),
        &["build", "-"],
        &spec,
    );
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        output.stdout,
        trainc(&root(), &["build", "examples/cpu-minimal.toml"]).stdout
    );
}

/// A second build into the same directory replaces the first one's files:
/// nothing stale is left for `kubectl apply -f` to apply. Files trainc did not
/// write stop the build unless `--force`, and are never touched.
#[test]
fn output_dir_reused_holds_exactly_the_new_build() {
    let dir = temp_dir("build-dir-reuse");
    let out = dir.join("out");
    let spec = "name = \"reuse\"\nimage = \"ghcr.io/acme/train:1.0\"\nscript = \"train.py\"\nreplicas = 2\n\n[ports]\nmetrics = 9090\n\n[volumes.ckpt]\nmountPath = \"/ckpt\"\nsize = \"10Gi\"\nstorageClass = \"rwx\"\n";
    std::fs::write(dir.join("spec.toml"), spec).unwrap();
    let build = |extra: &[&str]| {
        let mut args = vec!["build", "--output-dir", "out", "spec.toml"];
        args.extend_from_slice(extra);
        trainc(&dir, &args)
    };
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    };
    assert_eq!(build(&[]).status.code(), Some(0));
    assert_eq!(
        listing(),
        [
            "01-persistentvolumeclaim-reuse-ckpt.yaml",
            "02-service-reuse-ports.yaml",
            "03-pytorchjob-reuse.yaml"
        ]
    );
    // Another job's files and files that are not manifests stay.
    std::fs::write(out.join("README.md"), "generated\n").unwrap();
    let other = trainc(
        &root(),
        &[
            "build",
            "--output-dir",
            out.to_str().unwrap(),
            "examples/cpu-minimal.toml",
        ],
    );
    assert_eq!(other.status.code(), Some(0), "{}", text(&other.stderr));
    let others: Vec<String> = listing()
        .into_iter()
        .filter(|n| !n.contains("reuse") && n != "README.md")
        .collect();
    assert!(!others.is_empty());

    // Without the volume and the port: the job moves to 01-, the rest goes.
    std::fs::write(
        dir.join("spec.toml"),
        spec.split("\n\n[ports]").next().unwrap(),
    )
    .unwrap();
    let second = build(&[]);
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    let mut expected = vec![
        "01-pytorchjob-reuse.yaml".to_owned(),
        "README.md".to_owned(),
    ];
    expected.extend(others.iter().cloned());
    expected.sort();
    assert_eq!(listing(), expected);

    // A hand-written manifest: refused, named, untouched; --force writes beside it.
    let mine = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mine\n";
    std::fs::write(out.join("mine.yaml"), mine).unwrap();
    let refused = build(&[]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains("`mine.yaml`") && stderr.contains("--force"),
        "{stderr}"
    );
    let forced = build(&["--force"]);
    assert_eq!(forced.status.code(), Some(0), "{}", text(&forced.stderr));
    assert_eq!(
        std::fs::read_to_string(out.join("mine.yaml")).unwrap(),
        mine
    );
    assert!(
        listing().iter().all(|n| !n.starts_with('.')),
        "no temporary file is left"
    );
}
