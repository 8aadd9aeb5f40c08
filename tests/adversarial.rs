//! The adversarial corpus (`tests/adversarial/`, written by its
//! `generate.py`): hostile and odd inputs, each of which must end in the
//! expected exit status (0, 1 or 2) with the expected words, within 2 s and
//! 256 MiB, and with nothing on stdout when `check` or `build` fails.
//!
//! Peak memory is measured with GNU time where it is installed (`.ci/run`
//! installs it); elsewhere by sampling `/proc/PID/status` (`VmHWM`, the
//! high-water mark, so a sample misses nothing that stayed mapped).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::root;

const MAX_TIME: Duration = Duration::from_secs(2);
const MAX_RSS_KIB: u64 = 256 * 1024;

struct Case {
    file: String,
    command: String,
    exit: i32,
    words: Vec<String>,
}

fn cases(dir: &Path) -> Vec<Case> {
    let table = std::fs::read_to_string(dir.join("EXPECTED")).expect("tests/adversarial/EXPECTED");
    table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            Case {
                file: fields[0].to_owned(),
                command: fields[1].to_owned(),
                exit: fields[2].parse().expect("exit status"),
                words: fields
                    .get(3)
                    .map(|w| {
                        w.split(" ;; ")
                            .filter(|w| !w.is_empty())
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default(),
            }
        })
        .collect()
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

fn run(dir: &Path, case: &Case, time: Option<&str>) -> Run {
    let binary = env!("CARGO_BIN_EXE_trainc");
    let rss_file = std::env::temp_dir().join(format!(
        "trainc-adversarial-{}-{}.rss",
        std::process::id(),
        case.file
    ));
    let mut command = match time {
        Some(time) => {
            let mut c = Command::new(time);
            c.arg("-f").arg("%M").arg("-o").arg(&rss_file).arg(binary);
            c
        }
        None => Command::new(binary),
    };
    let input = dir.join(&case.file);
    match case.command.as_str() {
        "fn" => {
            command
                .arg("fn")
                .stdin(std::fs::File::open(&input).expect("case file"));
        }
        other => {
            command.arg(other).arg(&case.file).stdin(Stdio::null());
        }
    }
    let started = Instant::now();
    let mut child = command
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("trainc runs");
    // Read the pipes on threads, so a large output cannot block the child.
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut s);
        s
    });
    let mut sampled = 0;
    let status = loop {
        if time.is_none() {
            sampled = sampled.max(high_water_kib(child.id()).unwrap_or(0));
        }
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > MAX_TIME * 10 {
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let elapsed = started.elapsed();
    let peak_kib = match time {
        Some(_) => {
            let text = std::fs::read_to_string(&rss_file).unwrap_or_default();
            let _ = std::fs::remove_file(&rss_file);
            text.lines()
                .last()
                .and_then(|l| l.trim().parse().ok())
                .expect("GNU time reports the peak RSS")
        }
        None => sampled,
    };
    let stdout = String::from_utf8_lossy(&out.join().expect("stdout thread")).into_owned();
    let stderr = String::from_utf8_lossy(&err.join().expect("stderr thread")).into_owned();
    // GNU time reports the child's exit status as its own.
    Run {
        code: status.code(),
        stdout,
        stderr,
        elapsed,
        peak_kib,
    }
}

fn high_water_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn every_hostile_input_ends_cleanly_in_time_and_memory() {
    let dir = root().join("tests/adversarial");
    let cases = cases(&dir);
    assert!(cases.len() >= 80, "the corpus has {} cases", cases.len());
    let time = gnu_time();
    let mut failures = Vec::new();
    for case in &cases {
        let run = run(&dir, case, time);
        let both = format!("{}{}", run.stdout, run.stderr);
        let mut problems = Vec::new();
        if run.code != Some(case.exit) {
            problems.push(format!("exit {:?}, expected {}", run.code, case.exit));
        }
        if !matches!(run.code, Some(0..=2)) {
            problems.push("did not end in 0, 1 or 2".to_owned());
        }
        for word in &case.words {
            if !both.contains(word.as_str()) {
                problems.push(format!("no `{word}` in the output"));
            }
        }
        if case.command != "fn" && case.exit != 0 && !run.stdout.is_empty() {
            problems.push("stdout is not empty on failure".to_owned());
        }
        if run.elapsed > MAX_TIME {
            problems.push(format!("took {:?}", run.elapsed));
        }
        if run.peak_kib > MAX_RSS_KIB {
            problems.push(format!("peak RSS {} KiB", run.peak_kib));
        }
        if let Some(c) = run.stderr.chars().zip(run.stderr.chars().skip(1).chain([' '])).find_map(|(c, next)| {
            let raw = matches!(c, '\u{1b}' | '\u{80}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
                || (c == '\r' && next != '\n');
            raw.then_some(c)
        }) {
            problems.push(format!("stderr holds a raw {c:?}"));
        }
        if both.contains("panicked") {
            problems.push("panicked".to_owned());
        }
        if !problems.is_empty() {
            let shown: String = run.stderr.chars().take(600).collect();
            failures.push(format!(
                "{} ({}): {}\n{shown}",
                case.file,
                case.command,
                problems.join("; ")
            ));
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
