//! The adversarial corpus (`tests/adversarial/`, written by its
//! `generate.py`): hostile and odd inputs, each of which must end in the
//! expected exit status (0, 1 or 2) with the expected words, within 2 s and
//! 256 MiB, and with nothing on stdout when `check` or `build` fails.
//!
//! `CASES.jsonl` holds one JSON object per line: a case (`args`, `exit`,
//! `words`, and optionally `stdin`, `cwd`, `invoked_as`, `stdout: "full"`,
//! `output_dir`, `absent`, `env`, `unchanged`: paths it must leave as they
//! were) or a setup step (`setup`: a FIFO, a symbolic link, a sparse
//! file, a copy under a name no repository should hold). Every case runs in
//! a scratch copy of the corpus with the setup applied, and beyond its own
//! expectations must:
//!
//! - print no raw control character (ESC, C1, a bidi override, a lone CR) on
//!   stderr, nor on stdout where a person or CI log reads it;
//! - never start a stderr line with `::` (a GitHub Actions workflow command);
//! - leave its `output_dir` exactly as it was when it fails;
//! - fail with exit 2 when stdout is `/dev/full` (a write error is never
//!   ignored);
//! - open no file outside its own directory tree but the dynamic loader's
//!   and the runtime's (checked under strace, where installed; not for
//!   `trainc run`, which starts programs by design);
//! - as `trainc run`, leave the watched tree as it was, show its secret to
//!   no other process or user, and leave no process behind ([`crate::watch`]).
//!
//! Peak memory is measured with GNU time where it is installed (`.ci/run`
//! installs it); elsewhere by sampling `/proc/PID/status` (`VmHWM`, the
//! high-water mark, so a sample misses nothing that stayed mapped). Time is
//! the processor time the run took (user and system, with GNU time), which
//! does not count the time other tests hold the processor; what they add
//! through the caches and memory they share is taken out by the least of
//! three runs, for a case that only reads and exceeds the bound once
//! ([`least_time`]). Without GNU time, and for `trainc run` (whose
//! programs' time is not its own), the time it took.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::corpus::{Case, gnu_time, program, run, snapshot, world};
use crate::support::{runtime_file, tool_available};

const MAX_TIME: Duration = Duration::from_secs(2);
const MAX_RSS_KIB: u64 = 256 * 1024;
/// The longest line a person may be shown on stderr.
const MAX_LINE: usize = 4200;

/// The output with each wrapped line joined to the one before: a line break
/// and the next line's indent and gutter (`  │ `) become one space.
fn unwrap_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.split('\n');
    if let Some(first) = lines.next() {
        out.push_str(first);
    }
    for line in lines {
        let rest = line.trim_start_matches([' ', '│']);
        out.push(' ');
        out.push_str(rest);
    }
    out
}

/// A character that must not reach a terminal or a CI log raw.
fn raw_control(text: &str) -> Option<char> {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let raw = matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
            || (c == '\r' && chars.peek() != Some(&'\n'));
        if raw {
            return Some(c);
        }
    }
    None
}

/// Whether a person or a CI log reads the case's stdout (not YAML or JSON
/// meant for a program).
fn stdout_is_read(case: &Case) -> bool {
    let command = case.args.first().map_or("", String::as_str);
    let format = case
        .args
        .iter()
        .position(|a| a == "--format")
        .and_then(|i| case.args.get(i + 1))
        .map_or("human", String::as_str);
    matches!(command, "describe" | "init" | "run")
        || (matches!(command, "check" | "verify") && matches!(format, "human" | "github"))
}

/// What a case's stdout must not be: raw control characters where a person
/// reads it, larger than its bound, or accepted by a full device.
fn stdout_problems(case: &Case, run: &crate::corpus::Run) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(max) = case.max_stdout
        && run.stdout.len() > max
    {
        problems.push(format!(
            "stdout holds {} bytes, more than {max}",
            run.stdout.len()
        ));
    }
    if case.stdout_full && run.code != Some(2) {
        problems.push("a write to a full stdout was not an error (exit 2)".to_owned());
    }
    if stdout_is_read(case)
        && let Some(c) = raw_control(&run.stdout)
    {
        problems.push(format!("stdout holds a raw {c:?}"));
    }
    problems
}

/// Whether user namespaces are available here (a namespaced `run` case
/// needs them); where they are not, `TRAINC_REQUIRE_NAMESPACES` fails the
/// test instead of leaving those cases out.
fn namespaces_available() -> bool {
    let available = std::process::Command::new("unshare")
        .args([
            "--user",
            "--map-root-user",
            "--mount",
            "--pid",
            "--fork",
            "true",
        ])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        available || std::env::var_os("TRAINC_REQUIRE_NAMESPACES").is_none(),
        "user namespaces are not available"
    );
    available
}

fn check_case(world: &Path, case: &Case, time: Option<&str>) -> Vec<String> {
    if case.args.first().is_some_and(|a| a == "run") {
        let before = crate::watch::tree(world);
        let watcher = crate::watch::Watcher::start(&world.join(".tmp"), case.secret.clone());
        let mut problems = check_output(world, case, time);
        problems.extend(watcher.stop());
        if let Some(marker) = &case.marker {
            problems.extend(crate::watch::leftovers(marker));
        }
        problems.extend(crate::watch::changes(&before, &crate::watch::tree(world)));
        return problems;
    }
    check_output(world, case, time)
}

/// The case run, under GNU time where it is installed: its peak memory,
/// and as its time the processor time it took (for `trainc run`, whose
/// programs' processor time is not trainc's, the time it took).
fn measured(world: &Path, case: &Case, time: Option<&str>) -> (crate::corpus::Run, Vec<String>) {
    let rss = world.join(".rss");
    let wrapper: Vec<&std::ffi::OsStr> = match time {
        Some(time) => vec![
            time.as_ref(),
            "-f".as_ref(),
            "%M %U %S".as_ref(),
            "-o".as_ref(),
            rss.as_os_str(),
        ],
        None => Vec::new(),
    };
    let mut run = run(world, case, &wrapper);
    let mut problems = Vec::new();
    if time.is_some() {
        match gnu_time_peak(&rss) {
            Some((peak, processor)) => {
                run.peak_kib = peak;
                if case.args.first().is_none_or(|a| a != "run") {
                    run.elapsed = processor;
                }
            }
            // GNU time says nothing of a run killed past its time.
            None => problems.push("no peak memory reported (killed?)".to_owned()),
        }
    }
    (run, problems)
}

fn check_output(world: &Path, case: &Case, time: Option<&str>) -> Vec<String> {
    let dir = case
        .output_dir
        .as_ref()
        .map(|d| world.join(&case.cwd).join(d));
    let before = dir.as_deref().map(snapshot);
    let kept: Vec<_> = case
        .unchanged
        .iter()
        .map(|p| (p, crate::corpus::state(&world.join(p))))
        .collect();
    let (run, mut problems) = measured(world, case, time);
    let both = format!("{}{}", run.stdout, run.stderr);
    let unwrapped = unwrap_lines(&both);
    if run.code != Some(case.exit) {
        problems.push(format!("exit {:?}, expected {}", run.code, case.exit));
    }
    let interrupted = case.signal.is_some() && run.code == Some(130);
    // `trainc run` says a job that failed as it would fail on the cluster
    // with 3 (docs/run.md), which is neither a bad input nor a usage error.
    let job_failed = case.args.first().is_some_and(|a| a == "run") && run.code == Some(3);
    if !matches!(run.code, Some(0..=2)) && !interrupted && !job_failed {
        problems.push("did not end in 0, 1 or 2".to_owned());
    }
    for word in &case.words {
        if !both.contains(word.as_str()) && !unwrapped.contains(word.as_str()) {
            problems.push(format!("no `{word}` in the output"));
        }
    }
    for word in &case.absent {
        if both.contains(word.as_str()) {
            problems.push(format!("`{word}` is in the output"));
        }
    }
    let command = case.args.first().map_or("", String::as_str);
    if matches!(command, "check" | "build") && case.exit != 0 && !run.stdout.is_empty() {
        let structured = case.args.iter().any(|a| a == "--format");
        if !structured {
            problems.push("stdout is not empty on failure".to_owned());
        }
    }
    problems.extend(stdout_problems(case, &run));
    if run.elapsed > MAX_TIME {
        match least_time(world, case, time, run.elapsed) {
            Some(least) if least <= MAX_TIME => {}
            Some(least) => problems.push(format!(
                "took {:?} (the least of three runs: {least:?})",
                run.elapsed
            )),
            None => problems.push(format!("took {:?}", run.elapsed)),
        }
    }
    if run.peak_kib > MAX_RSS_KIB {
        problems.push(format!("peak RSS {} KiB", run.peak_kib));
    }
    if let Some(c) = raw_control(&run.stderr) {
        problems.push(format!("stderr holds a raw {c:?}"));
    }
    if let Some(leak) = crate::support::internals(&run.stderr) {
        problems.push(format!("stderr shows an internal form `{leak}`"));
    }
    // Whatever a message quotes, it stays readable: a header or help is cut
    // at 4,000 characters, a snippet skips lines over 1,000.
    if let Some(line) = run.stderr.lines().find(|l| l.chars().count() > MAX_LINE) {
        problems.push(format!(
            "a stderr line of {} characters",
            line.chars().count()
        ));
    }
    if run.stderr.lines().any(|l| l.starts_with("::")) {
        problems.push("a stderr line starts with `::` (a GitHub workflow command)".to_owned());
    }
    if run.stderr.contains("s3cr3t-value") || run.stdout.contains("s3cr3t-value") {
        problems.push("the environment reached the output".to_owned());
    }
    if both.contains("panicked") {
        problems.push("panicked".to_owned());
    }
    problems.extend(
        kept.into_iter()
            .filter(|(path, before)| crate::corpus::state(&world.join(path)) != *before)
            .map(|(path, _)| format!("`{path}` changed, which the case must leave as it was")),
    );
    if let (Some(dir), Some(before)) = (&dir, before)
        && run.code != Some(0)
        && snapshot(dir) != before
    {
        problems.push(format!("failed, yet `{}` changed", dir.display()));
    }
    if !problems.is_empty() {
        let shown: String = run.stderr.chars().take(600).collect();
        problems.push(format!("\n{shown}"));
    }
    problems
}

/// The least processor time of `first` and two more runs of `case`,
/// where the case only reads (it writes nothing but its output streams)
/// and its time is its processor time. Another process on the machine
/// adds to a run's processor time, never takes from it: the processor's
/// caches and memory are shared (a run measured 1.0 s alone took 1.3 s
/// beside a busy loop and a process walking memory). The least of three
/// is the input's own cost; an input that is slow, not unlucky, exceeds
/// the bound in all three.
fn least_time(world: &Path, case: &Case, time: Option<&str>, first: Duration) -> Option<Duration> {
    let command = case.args.first().map_or("", String::as_str);
    let writes = case.output_dir.is_some()
        || !case.unchanged.is_empty()
        || case
            .args
            .iter()
            .any(|a| a.starts_with("--output") || a == "-o")
        || !matches!(
            command,
            "check" | "verify" | "describe" | "build" | "fn" | "schema"
        );
    if writes || time.is_none() {
        return None;
    }
    let again = (0..2).map(|_| measured(world, case, time).0.elapsed);
    again.chain([first]).min()
}

/// The peak memory GNU time wrote to `file`, in KiB.
/// GNU time's last line (`%M %U %S`): the peak memory in KiB, and the
/// processor time, user and system.
fn gnu_time_peak(file: &Path) -> Option<(u64, Duration)> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let line = text.lines().last()?;
    let mut words = line.split_whitespace();
    let peak = words.next()?.parse().ok()?;
    let seconds: f64 = words.map(|w| w.parse::<f64>().unwrap_or(0.0)).sum();
    Some((peak, Duration::from_secs_f64(seconds)))
}

#[test]
fn every_hostile_input_ends_cleanly_in_time_and_memory() {
    let (world, cases) = world("adversarial");
    assert!(cases.len() >= 150, "the corpus has {} cases", cases.len());
    let time = gnu_time();
    let namespaces = namespaces_available();
    let mut failures = Vec::new();
    for case in cases.iter().filter(|c| namespaces || !c.namespaces) {
        let problems = check_case(&world, case, time);
        if !problems.is_empty() {
            failures.push(format!("{}: {}", case.name, problems.join("; ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed (memory by {}):\n{}",
        failures.len(),
        cases.len(),
        if time.is_some() {
            "GNU time"
        } else {
            "/proc sampling"
        },
        failures.join("\n\n")
    );
}

/// Under strace, every file any case opens is in its own tree or the runtime's.
#[test]
fn no_case_opens_a_file_outside_its_tree() {
    if !tool_available("strace", "-V", "the open-files check") {
        return;
    }
    let (world, cases) = world("adversarial-strace");
    let trace = world.join(".trace");
    let mut failures = Vec::new();
    for case in cases
        .iter()
        .filter(|c| c.args.first().is_none_or(|a| a != "run"))
    {
        let wrapper: Vec<&std::ffi::OsStr> = vec![
            "strace".as_ref(),
            "-f".as_ref(),
            "-qq".as_ref(),
            "-e".as_ref(),
            "trace=open,openat,openat2,creat,truncate,execve".as_ref(),
            "-o".as_ref(),
            trace.as_os_str(),
        ];
        let _ = run(&world, case, &wrapper);
        let calls = std::fs::read_to_string(&trace).unwrap_or_default();
        let tree = world.join(&case.cwd);
        let program = program(&world, case);
        // Processes running trainc: the wrappers' own opens do not count.
        let mut trainc_pids = std::collections::HashSet::new();
        let mut ran = false;
        for line in calls.lines() {
            let (pid, call) = line.split_once(' ').unwrap_or(("", line));
            let call = call.trim_start();
            if call.contains(" = -1 ") {
                continue;
            }
            if call.starts_with("execve(") {
                let exec = call.split('"').nth(1).unwrap_or_default();
                if Path::new(exec) == program {
                    trainc_pids.insert(pid.to_owned());
                    ran = true;
                } else {
                    trainc_pids.remove(pid);
                }
                continue;
            }
            if !trainc_pids.contains(pid) {
                continue;
            }
            let Some(path) = call.split('"').nth(1) else {
                continue;
            };
            let full = tree.join(path);
            let inside = full
                .canonicalize()
                .unwrap_or_else(|_| normalise(&full))
                .starts_with(&tree);
            if !inside && !runtime_file(path) {
                failures.push(format!("{}: opened `{path}`", case.name));
            }
        }
        if !ran {
            failures.push(format!("{}: the trace shows no run of trainc", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `a/b/../c` as `a/c`, without touching the file system.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
