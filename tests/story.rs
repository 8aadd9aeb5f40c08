//! `describe --pods` and `trainc run` tell one story: for each spec, the
//! pods `describe` lists are the pods `run` starts, each with the same
//! distributed environment and process count, and a failed pod meets the
//! restart policy `describe` states. A stand-in `torchrun` prints what it
//! was given, as in `tests/run.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use crate::support::{root, temp_dir, text, trainc};

/// The variables compared: what the operators, Trainer and the Job
/// controller set for a rank to find its place.
const COMPARED: &str =
    "^(PET_[A-Z_]*|MASTER_PORT|MASTER_ADDR|WORLD_SIZE|RANK|NODE_RANK|JOB_COMPLETION_INDEX)=";

/// A Python environment whose `torchrun` prints its arguments and the
/// compared variables, and fails on the node rank `FAIL_RANK` (an `[env]`
/// of the spec) whether it came as a flag or a variable.
fn printing_env(name: &str) -> PathBuf {
    let dir = temp_dir(name);
    let torchrun = dir.join("torchrun");
    std::fs::write(
        &torchrun,
        format!(
            "#!/bin/sh\necho \"args: $*\"\nenv | grep -E '{COMPARED}' | sort | sed 's/^/env: /'\n\
             rank=${{PET_NODE_RANK:-$(echo \" $* \" | sed -n 's/.* --node_rank=\\([0-9]*\\) .*/\\1/p')}}\n\
             [ -n \"$FAIL_RANK\" ] && [ \"$rank\" = \"$FAIL_RANK\" ] && {{ echo failing >&2; exit 7; }}\nexit 0\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&torchrun, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(dir.join("python3"), "").unwrap();
    dir
}

/// A pod as `describe --pods` states it.
#[derive(Debug, Default)]
struct Described {
    env: BTreeMap<String, String>,
    /// Processes, where `describe` counts them (`ranks 2-3`).
    processes: Option<u64>,
}

/// The pods of `describe --pods`, by name, each with the environment of
/// every container added to its own.
fn described(output: &str) -> BTreeMap<String, Described> {
    let mut pods: BTreeMap<String, Described> = BTreeMap::new();
    let mut common = BTreeMap::new();
    let (mut in_pods, mut in_common) = (false, false);
    let mut current = None;
    for line in output.lines() {
        if line.starts_with("pods: ") {
            (in_pods, in_common) = (true, false);
            current = None;
            continue;
        }
        if line.starts_with("distributed environment of every") {
            (in_pods, in_common) = (false, true);
            continue;
        }
        if !line.starts_with(' ') {
            // The `pods:` header may wrap onto a line of its own.
            let wrapped_header = in_pods && current.is_none() && !line.is_empty();
            if !wrapped_header {
                (in_pods, in_common) = (false, false);
            }
            continue;
        }
        let pair = |word: &str| {
            word.split_once('=')
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
        };
        if in_common {
            common.extend(pair(line.trim()));
        } else if in_pods && !line.starts_with("   ") {
            let name = line.trim().to_owned();
            pods.insert(name.clone(), Described::default());
            current = Some(name);
        } else if let (true, Some(name)) = (in_pods, &current) {
            let pod = pods.get_mut(name).unwrap();
            let words = line.trim();
            if words.contains('=') && !words.starts_with("dns ") {
                pod.env.extend(words.split("  ").filter_map(pair));
            } else if let Some(ranks) = words
                .split(", ")
                .find_map(|w| w.strip_prefix("ranks ").or_else(|| w.strip_prefix("rank ")))
            {
                let (first, last) = ranks.split_once('-').unwrap_or((ranks, ranks));
                // `the first ranks` and the like: not a count.
                if let (Ok(first), Ok(last)) = (first.parse::<u64>(), last.parse::<u64>()) {
                    pod.processes = Some(last - first + 1);
                }
            }
        }
    }
    for pod in pods.values_mut() {
        for (k, v) in &common {
            pod.env.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    pods
}

/// A pod as `run` started it: its variables and torchrun's words.
#[derive(Debug, Default)]
struct Ran {
    env: BTreeMap<String, String>,
    args: String,
}

fn ran(output: &str) -> BTreeMap<String, Ran> {
    let mut pods: BTreeMap<String, Ran> = BTreeMap::new();
    for line in output.lines() {
        let Some((pod, said)) = line.strip_prefix('[').and_then(|l| l.split_once("] ")) else {
            continue;
        };
        let entry = pods.entry(pod.to_owned()).or_default();
        if let Some(args) = said.strip_prefix("args: ") {
            args.clone_into(&mut entry.args);
        } else if let Some((k, v)) = said.strip_prefix("env: ").and_then(|e| e.split_once('=')) {
            entry.env.insert(k.to_owned(), v.to_owned());
        }
    }
    pods
}

/// The process count torchrun was told: its flag, else the variable.
fn processes(pod: &Ran) -> Option<u64> {
    pod.args
        .split_whitespace()
        .find_map(|w| w.strip_prefix("--nproc_per_node="))
        .or(pod.env.get("PET_NPROC_PER_NODE").map(String::as_str))?
        .parse()
        .ok()
}

/// The restart policy a sentence names: `restart policy X` (describe) or
/// `(restartPolicy X)` (run).
fn restart_policy(text: &str) -> Option<String> {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for marker in ["restartPolicy ", "restart policy "] {
        if let Some(at) = flat.find(marker) {
            let word: String = flat[at + marker.len()..]
                .chars()
                .take_while(char::is_ascii_alphabetic)
                .collect();
            return Some(word);
        }
    }
    None
}

fn describe(spec: &str, args: &[&str], overlay: &Path) -> String {
    let mut all = vec!["describe", "--pods", "-O", overlay.to_str().unwrap()];
    all.extend_from_slice(args);
    all.push(spec);
    let output = trainc(&root(), &all);
    assert!(output.status.success(), "{spec}: {}", text(&output.stderr));
    text(&output.stdout)
}

/// `trainc run` of `spec` with the stand-ins, as `tests/run.rs` runs it.
fn run(
    env: &Path,
    spec: &str,
    args: &[&str],
    stand_ins: &[String],
    overlay: &Path,
) -> (i32, String) {
    let mut all = vec!["-O", overlay.to_str().unwrap()];
    all.extend_from_slice(args);
    all.extend(stand_ins.iter().map(String::as_str));
    all.push(spec);
    crate::run::run(env, &all)
}

#[test]
fn describe_and_run_tell_the_same_story() {
    let env = printing_env("story");
    let image = temp_dir("story-image");
    std::fs::create_dir_all(image.join("app")).unwrap();
    std::fs::write(image.join("mnist.py"), "").unwrap();
    std::fs::write(image.join("app/train.py"), "").unwrap();
    let data = temp_dir("story-data");
    let stand_ins = vec![
        format!("--map=/opt/pytorch-mnist={}", image.display()),
        format!("--map=/app={}", image.join("app").display()),
        format!("--claim=mnist-data={}", data.display()),
        format!("--claim=resnet-checkpoints={}", data.display()),
    ];
    let cases: &[(&str, &[&str])] = &[
        ("examples/cpu-minimal.toml", &[]),
        ("examples/cpu-minimal.toml", &["--target", "trainjob"]),
        ("examples/cpu-minimal.toml", &["--target", "job"]),
        ("examples/cpu-minimal.toml", &["--target", "jobset"]),
        ("examples/jobset-cpu.toml", &[]),
        ("examples/jobset-master.toml", &[]),
        ("examples/plain-job.toml", &["--target", "jobset"]),
        (
            "examples/cpu-minimal.toml",
            &["--target", "trainjob", "--api-level", "v2.0"],
        ),
        ("examples/master-worker.toml", &[]),
        ("examples/elastic.toml", &[]),
        ("examples/kueue-volcano.toml", &[]),
        ("examples/trainjob-v2.0.toml", &[]),
        ("examples/trainjob-v2.1.toml", &[]),
        ("tests/check/policy-warn-master-wait.toml", &[]),
        (
            "tests/check/nproc-pass-trainjob-runtime-resources.toml",
            &[],
        ),
        (
            "tests/check/trainjob-warn-runtime-subdomain-command.toml",
            &[],
        ),
        ("tests/check/kueue-pass-trainjob-v2.0.toml", &[]),
        // No patch says it is v2.0: run takes the level of the build.
        ("tests/check/nproc-pass-trainjob-v2.0-cpu.toml", &[]),
    ];
    let quiet = env.join("quiet.toml");
    std::fs::write(&quiet, "").unwrap();
    let failing = env.join("fail.toml");
    std::fs::write(&failing, "[env]\nFAIL_RANK = \"1\"\n").unwrap();
    let (mut compared, mut restarts) = (0, 0);
    for (spec, args) in cases {
        let case = Case {
            env: &env,
            spec,
            args,
            stand_ins: &stand_ins,
        };
        compared += case.same_pods(&quiet);
        restarts += case.same_restarts(&failing);
    }
    assert!(compared > 100, "only {compared} variables compared");
    assert!(restarts >= 6, "only {restarts} restart policies compared");
}

/// One spec, described and run with the same arguments.
struct Case<'a> {
    env: &'a Path,
    spec: &'a str,
    args: &'a [&'a str],
    stand_ins: &'a [String],
}

impl Case<'_> {
    /// The same pods, with the same variables and process counts; how many
    /// variables were compared.
    fn same_pods(&self, overlay: &Path) -> usize {
        let Case { spec, args, .. } = *self;
        let said = describe(spec, args, overlay);
        let pods = described(&said);
        assert!(!pods.is_empty(), "{spec} {args:?}: no pods in\n{said}");
        let (status, output) = run(self.env, spec, args, self.stand_ins, overlay);
        assert_eq!(status, 0, "{spec} {args:?}:\n{output}");
        let started = ran(&output);
        let names = |keys: Vec<&String>| keys.into_iter().cloned().collect::<BTreeSet<String>>();
        assert_eq!(
            names(pods.keys().collect()),
            names(started.keys().collect()),
            "{spec} {args:?}: the pods\n{said}\n{output}"
        );
        // Without user namespaces, run rewrites names to 127.0.0.1.
        let rewritten = output.contains("no user namespaces here");
        let mut compared = 0;
        for (name, pod) in &pods {
            let run = &started[name];
            for (key, value) in pod.env.iter().filter(|(k, _)| regex_like(k)) {
                let got = run.env.get(key);
                if rewritten && key.ends_with("_ADDR") {
                    assert!(
                        got.is_some(),
                        "{spec} {args:?} {name}: {key} not set\n{output}"
                    );
                } else {
                    assert_eq!(
                        got,
                        Some(value),
                        "{spec} {args:?} {name}: {key}\n{said}\n{output}"
                    );
                }
                compared += 1;
            }
            if let Some(count) = pod.processes {
                assert_eq!(
                    processes(run),
                    Some(count),
                    "{spec} {args:?} {name}: processes\n{said}\n{output}"
                );
            }
        }
        compared
    }

    /// A failed pod (node rank 1) meets the restart policy `describe`
    /// states; 1 when one was compared.
    fn same_restarts(&self, failing: &Path) -> usize {
        let Case { spec, args, .. } = *self;
        let summary = describe_summary(spec, args, failing);
        let (status, output) = run(self.env, spec, args, self.stand_ins, failing);
        if status == 0 {
            return 0; // no pod has node rank 1
        }
        assert_eq!(status, 3, "{spec} {args:?}:\n{output}");
        // A JobSet's group restarts: as many runs of every pod as describe
        // says JobSet makes.
        if let Some(times) = group_restarts(&summary) {
            let restarted = output.matches("make them all again").count();
            assert_eq!(restarted, times, "{spec} {args:?}:\n{summary}\n{output}");
            let last = format!("failed after {times} restarts");
            assert!(
                times == 0 || output.contains(&last),
                "{spec} {args:?}:\n{output}"
            );
            return 1;
        }
        let Some(policy) = restart_policy(&summary) else {
            return 0;
        };
        let failed = output
            .lines()
            .find(|l| l.contains("failed: pod"))
            .unwrap_or_default();
        assert_eq!(
            restart_policy(failed),
            Some(policy),
            "{spec} {args:?}:\n{summary}\n{output}"
        );
        1
    }
}

/// How many times `describe` says JobSet restarts every pod: `Some(0)` when
/// a failed Job fails the JobSet; `None` when the job is no JobSet.
fn group_restarts(summary: &str) -> Option<usize> {
    let words = summary.split_whitespace().collect::<Vec<_>>().join(" ");
    if words.contains("a failed Job fails the JobSet") {
        return Some(0);
    }
    if words.contains("JobSet restarts every pod together, once") {
        return Some(1);
    }
    let (_, after) = words.split_once("JobSet restarts every pod together, up to ")?;
    after.split_whitespace().next()?.parse().ok()
}

/// The `on failure` part of `describe` (without `--pods`).
fn describe_summary(spec: &str, args: &[&str], overlay: &Path) -> String {
    let mut all = vec!["describe", "-O", overlay.to_str().unwrap()];
    all.extend_from_slice(args);
    all.push(spec);
    let output = trainc(&root(), &all);
    let said = text(&output.stdout);
    said.lines()
        .skip_while(|l| !l.trim_start().starts_with("on failure"))
        .take_while(|l| !l.trim_start().starts_with("warnings"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `name` is one of [`COMPARED`].
fn regex_like(name: &str) -> bool {
    name.starts_with("PET_")
        || [
            "MASTER_PORT",
            "MASTER_ADDR",
            "WORLD_SIZE",
            "RANK",
            "NODE_RANK",
            "JOB_COMPLETION_INDEX",
        ]
        .contains(&name)
}
