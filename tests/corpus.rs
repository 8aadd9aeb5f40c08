//! The adversarial corpus as data: its cases and setup steps read from
//! `tests/adversarial/CASES.jsonl`, a scratch copy to run them in, and
//! running one case as a process (under a wrapper, with a ceiling on its
//! address space), for `adversarial.rs`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{root, temp_dir};

/// A case taking this long is killed (ten times the limit it is held to).
const KILL_AFTER: Duration = Duration::from_secs(20);

pub(crate) struct Case {
    /// The case's name in failures: its input file, or its arguments.
    pub(crate) name: String,
    pub(crate) args: Vec<String>,
    /// A file of the corpus piped to stdin.
    pub(crate) stdin: Option<String>,
    /// Where it runs, under the scratch copy; also the tree it may read.
    pub(crate) cwd: String,
    /// The program name it runs under (`TrainSpec`: the kustomize plugin).
    pub(crate) invoked_as: Option<String>,
    pub(crate) stdout_full: bool,
    pub(crate) output_dir: Option<String>,
    pub(crate) exit: i32,
    pub(crate) words: Vec<String>,
    /// Words that must appear nowhere in the output.
    pub(crate) absent: Vec<String>,
    /// The most bytes stdout may hold (an output that grows faster than
    /// its input).
    pub(crate) max_stdout: Option<usize>,
    /// A signal (`INT`, `TERM`) sent to trainc after `signal_after_ms`.
    pub(crate) signal: Option<String>,
    pub(crate) signal_after_ms: u64,
    /// `trainc run`: a value no other process may show on its command line
    /// and no other user may read in a file while the case runs.
    pub(crate) secret: Option<String>,
    /// `trainc run`: text in the command line of each process the job
    /// starts that must not outlive the run.
    pub(crate) marker: Option<String>,
    /// The case needs user namespaces (it runs where they are available,
    /// and fails on a machine without them under
    /// `TRAINC_REQUIRE_NAMESPACES`).
    pub(crate) namespaces: bool,
    /// Variables set for the case (`@WORLD@` in a value: the scratch
    /// copy's absolute path).
    pub(crate) env: Vec<(String, String)>,
    /// Paths under the scratch copy that the case must leave as they were,
    /// whatever its exit: what it must not write (through a link, under
    /// the working directory).
    pub(crate) unchanged: Vec<String>,
}

pub(crate) fn strings(value: &Value) -> Vec<String> {
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
pub(crate) fn load(world: &Path) -> Vec<Case> {
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
            max_stdout: entry["max_stdout"]
                .as_u64()
                .map(|n| usize::try_from(n).expect("a size")),
            signal: text("signal"),
            signal_after_ms: entry["signal_after_ms"].as_u64().unwrap_or(0),
            secret: text("secret"),
            marker: text("marker"),
            namespaces: entry["namespaces"] == true,
            env: entry["env"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.as_str().expect("a string").to_owned()))
                .collect(),
            unchanged: strings(&entry["unchanged"]),
        });
    }
    cases
}

pub(crate) fn setup(world: &Path, step: &str, entry: &Value) {
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
        "exec" => {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::write(&path, entry["text"].as_str().expect("text")).expect("exec");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        "repeat" => {
            let field = |key: &str| entry[key].as_str().expect("head, text and tail");
            let times = usize::try_from(entry["times"].as_u64().expect("times")).expect("times");
            // `numbered`: `{i}` in the text is each repetition's number.
            let body = if entry["numbered"] == true {
                (0..times)
                    .map(|i| field("text").replace("{i}", &i.to_string()))
                    .collect()
            } else {
                field("text").repeat(times)
            };
            let text = format!("{}{body}{}", field("head"), field("tail"));
            std::fs::write(&path, text).expect("repeat");
        }
        other => panic!("unknown setup step `{other}`"),
    }
}

pub(crate) fn copy_tree(from: &Path, to: &Path) {
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

pub(crate) struct Run {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) elapsed: Duration,
    pub(crate) peak_kib: u64,
}

pub(crate) fn gnu_time() -> Option<&'static str> {
    let path = "/usr/bin/time";
    Command::new(path)
        .args(["-f", "%M", "true"])
        .stderr(Stdio::piped())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| path)
}

pub(crate) fn has_prlimit() -> bool {
    static FOUND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        Command::new("prlimit")
            .args(["--as=4294967296", "--", "true"])
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// The program a case runs: trainc itself, or a link to it under another name.
/// The trainc the cases run: this build's, or the one `TRAINC_CORPUS_BINARY`
/// names (to show which cases an earlier build fails).
pub(crate) fn binary() -> PathBuf {
    std::env::var_os("TRAINC_CORPUS_BINARY").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_trainc")),
        PathBuf::from,
    )
}

pub(crate) fn program(world: &Path, case: &Case) -> PathBuf {
    let binary = binary();
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
pub(crate) fn run(world: &Path, case: &Case, wrapper: &[&std::ffi::OsStr]) -> Run {
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
        .env("TMPDIR", world.join(".tmp"))
        .envs(case.env.iter().map(|(k, v)| {
            (
                k,
                v.replace("@WORLD@", world.to_str().expect("a UTF-8 path")),
            )
        }))
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
    if let Some(signal) = case.signal.clone() {
        let group = child.id();
        let after = Duration::from_millis(case.signal_after_ms);
        std::thread::spawn(move || {
            std::thread::sleep(after);
            signal_trainc(group, &signal);
        });
    }
    let mut sampled = 0;
    let status = loop {
        if wrapper.is_empty() {
            sampled = sampled.max(high_water_kib(child.id()).unwrap_or(0));
        }
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > KILL_AFTER {
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

/// Sends `signal` to the trainc of the case whose process group is `group`
/// (under a wrapper, the wrapper's child; the containers have groups of
/// their own).
fn signal_trainc(group: u32, signal: &str) {
    let trainc = std::fs::canonicalize(binary()).expect("trainc");
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let exe = std::fs::read_link(entry.path().join("exe")).ok();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let pgrp = stat
            .rfind(')')
            .and_then(|at| stat[at + 1..].split_whitespace().nth(2))
            .and_then(|g| g.parse::<u32>().ok());
        if pgrp == Some(group) && exe.as_deref() == Some(trainc.as_path()) {
            let _ = Command::new("kill")
                .args([format!("-{signal}"), pid.to_string()])
                .status();
        }
    }
}

pub(crate) fn high_water_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// What `path` is, and every entry under it when it is a directory (a link
/// is not followed): whether it exists at all, and [`snapshot`]'s words.
pub(crate) fn state(path: &Path) -> BTreeMap<PathBuf, String> {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return BTreeMap::from([(path.to_path_buf(), "absent".to_owned())]);
    };
    let mut entries = if m.is_dir() {
        snapshot(path)
    } else {
        BTreeMap::new()
    };
    entries.insert(
        path.to_path_buf(),
        format!(
            "{:?} {} {}.{}",
            m.file_type(),
            m.len(),
            m.mtime(),
            m.mtime_nsec()
        ),
    );
    entries
}

/// Every entry under `dir`: name, kind, size, inode and modification time;
/// any write, rename or removal changes it.
pub(crate) fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
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
                    "{:?} {:o} {} {} {}.{}",
                    m.file_type(),
                    m.mode(),
                    m.len(),
                    m.ino(),
                    m.mtime(),
                    m.mtime_nsec()
                ),
            );
        }
    }
    entries
}

/// A fresh scratch copy of the corpus with its setup applied, and its cases.
/// `@WORLD@` in a `run-*` input stands for the copy's absolute path (a
/// hostPath, a program); `.tmp` in it is every case's `TMPDIR`.
pub(crate) fn world(name: &str) -> (PathBuf, Vec<Case>) {
    let world = temp_dir(name);
    copy_tree(&root().join("tests/adversarial"), &world);
    let world = world.canonicalize().expect("the scratch copy");
    let cases = load(&world);
    for entry in std::fs::read_dir(&world).expect("the copy").flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("run-")
            && let Ok(text) = std::fs::read_to_string(&path)
            && text.contains("@WORLD@")
        {
            let text = text.replace("@WORLD@", world.to_str().expect("a UTF-8 path"));
            std::fs::write(&path, text).expect("a run case");
        }
    }
    std::fs::create_dir_all(world.join(".tmp")).expect("TMPDIR");
    (world, cases)
}
