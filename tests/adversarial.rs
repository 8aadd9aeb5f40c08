//! The adversarial corpus (`tests/adversarial/`, written by its
//! `generate.py`): hostile and odd inputs, each of which must end in the
//! expected exit status (0, 1 or 2) with the expected words, within 2 s and
//! 256 MiB, and with nothing on stdout when `check` or `build` fails.
//!
//! `CASES.jsonl` holds one JSON object per line: a case (`args`, `exit`,
//! `words`, and optionally `stdin`, `cwd`, `invoked_as`, `stdout: "full"`,
//! `output_dir`, `absent`) or a setup step (`setup`: a FIFO, a symbolic link, a sparse
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
//!   and the runtime's (checked under strace, where installed).
//!
//! Peak memory is measured with GNU time where it is installed (`.ci/run`
//! installs it); elsewhere by sampling `/proc/PID/status` (`VmHWM`, the
//! high-water mark, so a sample misses nothing that stayed mapped).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{root, runtime_file, strace_available, temp_dir};

const MAX_TIME: Duration = Duration::from_secs(2);
const MAX_RSS_KIB: u64 = 256 * 1024;

struct Case {
    /// The case's name in failures: its input file, or its arguments.
    name: String,
    args: Vec<String>,
    /// A file of the corpus piped to stdin.
    stdin: Option<String>,
    /// Where it runs, under the scratch copy; also the tree it may read.
    cwd: String,
    /// The program name it runs under (`TrainSpec`: the kustomize plugin).
    invoked_as: Option<String>,
    stdout_full: bool,
    output_dir: Option<String>,
    exit: i32,
    words: Vec<String>,
    /// Words that must appear nowhere in the output.
    absent: Vec<String>,
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().expect("strings").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The cases, after applying every setup step in `world`.
fn load(world: &Path) -> Vec<Case> {
    let table = std::fs::read_to_string(root().join("tests/adversarial/CASES.jsonl"))
        .expect("tests/adversarial/CASES.jsonl");
    let mut cases = Vec::new();
    for line in table.lines().filter(|l| !l.trim().is_empty()) {
        let entry: Value = serde_json::from_str(line).expect("a JSON line");
        let text = |key: &str| entry[key].as_str().map(str::to_owned);
        if let Some(step) = entry["setup"].as_str() {
            setup(world, step, &entry);
            continue;
        }
        let args = strings(&entry["args"]);
        cases.push(Case {
            name: text("name").unwrap_or_else(|| args.join(" ")),
            args,
            stdin: text("stdin"),
            cwd: text("cwd").unwrap_or_else(|| ".".to_owned()),
            invoked_as: text("invoked_as"),
            stdout_full: text("stdout").as_deref() == Some("full"),
            output_dir: text("output_dir"),
            exit: i32::try_from(entry["exit"].as_i64().expect("exit")).expect("an exit status"),
            words: strings(&entry["words"]),
            absent: strings(&entry["absent"]),
        });
    }
    cases
}

fn setup(world: &Path, step: &str, entry: &Value) {
    let path = world.join(entry["path"].as_str().expect("path"));
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("setup directory");
    }
    let _ = std::fs::remove_file(&path);
    match step {
        "fifo" => {
            let status = Command::new("mkfifo").arg(&path).status().expect("mkfifo");
            assert!(status.success(), "mkfifo {}", path.display());
        }
        "link" => {
            let target = entry["target"].as_str().expect("target");
            std::os::unix::fs::symlink(target, &path).expect("symlink");
        }
        "sparse" => {
            let file = std::fs::File::create(&path).expect("sparse file");
            file.set_len(entry["size"].as_u64().expect("size"))
                .expect("set_len");
        }
        "copy" => {
            let from = world.join(entry["from"].as_str().expect("from"));
            std::fs::copy(from, &path).expect("copy");
        }
        "dir" => std::fs::create_dir_all(&path).expect("dir"),
        other => panic!("unknown setup step `{other}`"),
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("copy directory");
    for entry in std::fs::read_dir(from).expect("corpus").flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy a corpus file");
        }
    }
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
    peak_kib: u64,
}

fn gnu_time() -> Option<&'static str> {
    let path = "/usr/bin/time";
    Command::new(path)
        .args(["-f", "%M", "true"])
        .stderr(Stdio::piped())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| path)
}

fn has_prlimit() -> bool {
    static FOUND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        Command::new("prlimit")
            .args(["--as=4294967296", "--", "true"])
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// The program a case runs: trainc itself, or a link to it under another name.
fn program(world: &Path, case: &Case) -> PathBuf {
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_trainc"));
    let Some(name) = &case.invoked_as else {
        return binary;
    };
    let link = world.join(".bin").join(name);
    if !link.exists() {
        std::fs::create_dir_all(world.join(".bin")).expect("bin directory");
        std::os::unix::fs::symlink(&binary, &link).expect("link the program");
    }
    link
}

/// Runs `case` under `wrapper` (GNU time, strace, or nothing).
fn run(world: &Path, case: &Case, wrapper: &[&std::ffi::OsStr]) -> Run {
    // A ceiling on the address space, far above the limit checked, so that
    // a regression fails its case instead of exhausting the machine.
    let ceiling = ["prlimit", "--as=4294967296", "--"];
    let mut words: Vec<&std::ffi::OsStr> = wrapper.to_vec();
    if has_prlimit() {
        words.extend(ceiling.iter().map(std::ffi::OsStr::new));
    }
    let program = program(world, case);
    let mut command = match words.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(&program);
            c
        }
        None => Command::new(&program),
    };
    command.args(&case.args);
    match &case.stdin {
        Some(file) => command.stdin(std::fs::File::open(world.join(file)).expect("stdin file")),
        None => command.stdin(Stdio::null()),
    };
    if case.stdout_full {
        command.stdout(std::fs::File::create("/dev/full").expect("/dev/full"));
    } else {
        command.stdout(Stdio::piped());
    }
    let started = Instant::now();
    // Its own process group, so that a timeout ends trainc under a wrapper too.
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .current_dir(world.join(&case.cwd))
        .env("NO_COLOR", "1")
        .env_remove("COLUMNS")
        .env("CI_SECRET", "s3cr3t-value")
        .stderr(Stdio::piped())
        .spawn()
        .expect("trainc runs");
    // Read the pipes on threads, so a large output cannot block the child.
    let reader = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut s);
            }
            s
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let mut sampled = 0;
    let status = loop {
        if wrapper.is_empty() {
            sampled = sampled.max(high_water_kib(child.id()).unwrap_or(0));
        }
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > MAX_TIME * 10 {
            let _ = Command::new("kill")
                .args(["-KILL", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let elapsed = started.elapsed();
    Run {
        code: status.code(),
        stdout: String::from_utf8_lossy(&out.join().expect("stdout thread")).into_owned(),
        stderr: String::from_utf8_lossy(&err.join().expect("stderr thread")).into_owned(),
        elapsed,
        peak_kib: sampled,
    }
}

fn high_water_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

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
    matches!(command, "describe" | "init")
        || (matches!(command, "check" | "verify") && matches!(format, "human" | "github"))
}

/// Every entry under `dir`: name, kind, size, inode and modification time;
/// any write, rename or removal changes it.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    use std::os::unix::fs::MetadataExt as _;
    let mut entries = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).into_iter().flatten().flatten() {
            let path = entry.path();
            let m = std::fs::symlink_metadata(&path).expect("metadata");
            if m.is_dir() {
                stack.push(path.clone());
            }
            entries.insert(
                path,
                format!(
                    "{:?} {} {} {}",
                    m.file_type(),
                    m.len(),
                    m.ino(),
                    m.mtime_nsec()
                ),
            );
        }
    }
    entries
}

fn check_case(world: &Path, case: &Case, time: Option<&str>) -> Vec<String> {
    let dir = case
        .output_dir
        .as_ref()
        .map(|d| world.join(&case.cwd).join(d));
    let before = dir.as_deref().map(snapshot);
    let rss = world.join(".rss");
    let wrapper: Vec<&std::ffi::OsStr> = match time {
        Some(time) => vec![
            time.as_ref(),
            "-f".as_ref(),
            "%M".as_ref(),
            "-o".as_ref(),
            rss.as_os_str(),
        ],
        None => Vec::new(),
    };
    let mut run = run(world, case, &wrapper);
    if time.is_some() {
        let text = std::fs::read_to_string(&rss).unwrap_or_default();
        run.peak_kib = text
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .expect("GNU time reports the peak RSS");
    }
    let both = format!("{}{}", run.stdout, run.stderr);
    let unwrapped = unwrap_lines(&both);
    let mut problems = Vec::new();
    if run.code != Some(case.exit) {
        problems.push(format!("exit {:?}, expected {}", run.code, case.exit));
    }
    if !matches!(run.code, Some(0..=2)) {
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
    if case.stdout_full && run.code != Some(2) {
        problems.push("a write to a full stdout was not an error (exit 2)".to_owned());
    }
    if run.elapsed > MAX_TIME {
        problems.push(format!("took {:?}", run.elapsed));
    }
    if run.peak_kib > MAX_RSS_KIB {
        problems.push(format!("peak RSS {} KiB", run.peak_kib));
    }
    if let Some(c) = raw_control(&run.stderr) {
        problems.push(format!("stderr holds a raw {c:?}"));
    }
    if stdout_is_read(case)
        && let Some(c) = raw_control(&run.stdout)
    {
        problems.push(format!("stdout holds a raw {c:?}"));
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

/// A fresh scratch copy of the corpus with its setup applied, and its cases.
fn world(name: &str) -> (PathBuf, Vec<Case>) {
    let world = temp_dir(name);
    copy_tree(&root().join("tests/adversarial"), &world);
    let world = world.canonicalize().expect("the scratch copy");
    let cases = load(&world);
    (world, cases)
}

#[test]
fn every_hostile_input_ends_cleanly_in_time_and_memory() {
    let (world, cases) = world("adversarial");
    assert!(cases.len() >= 150, "the corpus has {} cases", cases.len());
    let time = gnu_time();
    let mut failures = Vec::new();
    for case in &cases {
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
    if !strace_available("the open-files check") {
        return;
    }
    let (world, cases) = world("adversarial-strace");
    let trace = world.join(".trace");
    let mut failures = Vec::new();
    for case in &cases {
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
