//! Determinism and purity: the output depends on the input alone. Not on
//! the locale, the time zone, `HOME` or the working directory, not on the
//! order of arguments that name independent things, and not on the run; and
//! where `strace` exists, `build`, `check` and `fn` make no network call
//! and open nothing but the dynamic loader's files and their inputs.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{root, runtime_file, tool_available};

const SPEC: &str = "examples/gpu-multinode.toml";

fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, Vec<u8>, Vec<u8>) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_trainc"));
    command.args(args).current_dir(dir).env("NO_COLOR", "1");
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("trainc runs");
    (output.status.code(), output.stdout, output.stderr)
}

#[test]
fn output_does_not_depend_on_the_environment() {
    let root = root();
    let spec = root.join(SPEC);
    let spec = spec.to_str().expect("UTF-8 path");
    let reference = run(&root, &["build", spec], &[]);
    assert_eq!(reference.0, Some(0));
    let elsewhere = std::env::temp_dir();
    let environments: [&[(&str, &str)]; 6] = [
        &[("LANG", "C")],
        &[("LANG", "tr_TR.UTF-8"), ("LC_ALL", "tr_TR.UTF-8")],
        &[("LC_ALL", "de_DE.UTF-8"), ("LC_NUMERIC", "de_DE.UTF-8")],
        &[("TZ", "Asia/Kathmandu")],
        &[("TZ", "America/St_Johns"), ("HOME", "/nonexistent")],
        &[
            ("HOME", "/"),
            ("XDG_CONFIG_HOME", "/nonexistent"),
            ("KUBECONFIG", "/nonexistent"),
        ],
    ];
    for env in environments {
        assert_eq!(run(&root, &["build", spec], env), reference, "{env:?}");
        assert_eq!(
            run(&elsewhere, &["build", spec], env),
            reference,
            "{env:?} from {}",
            elsewhere.display()
        );
    }
}

#[test]
fn independent_arguments_in_any_order_give_the_same_output() {
    let root = root();
    let sets = |a: &str, b: &str| -> Vec<u8> {
        let output = run(
            &root,
            &[
                "build",
                "tests/check/template-pass-typed.toml",
                "--set",
                a,
                "--set",
                b,
            ],
            &[],
        );
        assert_eq!(output.0, Some(0), "{}", String::from_utf8_lossy(&output.2));
        output.1
    };
    assert_eq!(sets("n=8", "tag=1.10"), sets("tag=1.10", "n=8"));
    // `check` reports each file the same whichever comes first.
    let json = |files: &[&str]| -> Vec<serde_json::Value> {
        let mut args = vec!["check", "--format", "json"];
        args.extend(files);
        let output = run(&root, &args, &[]);
        let mut lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.1)
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON lines"))
            .collect();
        lines.sort_by_key(ToString::to_string);
        lines
    };
    let files = [
        "tests/check/name-fail-invalid.toml",
        "tests/check/ports-fail-duplicate.toml",
        "examples/cpu-minimal.toml",
    ];
    let mut reversed = files;
    reversed.reverse();
    assert_eq!(json(&files), json(&reversed));
}

#[test]
fn a_hundred_runs_give_the_same_bytes() {
    let root = root();
    let reference = run(&root, &["build", SPEC], &[]);
    for _ in 0..100 {
        assert_eq!(run(&root, &["build", SPEC], &[]), reference);
    }
}

#[test]
fn no_network_and_no_file_but_the_inputs() {
    if !tool_available("strace", "-V", "the system-call check") {
        return;
    }
    let root = root();
    let trace = std::env::temp_dir().join(format!("trainc-strace-{}", std::process::id()));
    let function_input = root.join("tests/adversarial/fn-octal.rl");
    let runs: [(&[&str], &[&str]); 3] = [
        (&["build", SPEC], &[SPEC]),
        (
            &["check", SPEC, "examples/cpu-minimal.toml"],
            &[SPEC, "examples/cpu-minimal.toml"],
        ),
        (&["fn"], &[]),
    ];
    for (args, inputs) in runs {
        let mut command = Command::new("strace");
        command
            .args(["-f", "-qq", "-e", "trace=%network,%file", "-o"])
            .arg(&trace)
            .arg(env!("CARGO_BIN_EXE_trainc"))
            .args(args)
            .current_dir(&root)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if args == ["fn"] {
            command.stdin(std::fs::File::open(&function_input).expect("input"));
        }
        let status = command.status().expect("strace runs");
        assert!(status.success(), "{args:?} under strace: {status}");
        let calls = std::fs::read_to_string(&trace).expect("the trace");
        let _ = std::fs::remove_file(&trace);
        for input in inputs {
            assert!(
                calls.contains(&format!("\"{input}\"")),
                "{args:?}: the trace does not show `{input}` opened:\n{calls}"
            );
        }
        for line in calls.lines() {
            let call = line
                .split_once(' ')
                .map_or(line, |(_, rest)| rest)
                .trim_start();
            let name = call.split('(').next().unwrap_or_default();
            assert!(
                ![
                    "socket",
                    "connect",
                    "bind",
                    "sendto",
                    "recvfrom",
                    "getaddrinfo"
                ]
                .contains(&name),
                "{args:?} made a network call: {call}"
            );
            // A failed open (the loader probing its search path) opens nothing.
            let opened = name.starts_with("open") && !call.contains(" = -1 ");
            if let Some(path) = call.split('"').nth(1).filter(|_| opened) {
                assert!(
                    runtime_file(path) || inputs.contains(&path),
                    "{args:?} opened `{path}`"
                );
            }
        }
    }
}
