//! What a `trainc run` case of the adversarial corpus is held to beyond its
//! output, by looking at the machine rather than trusting trainc's word:
//!
//! - the watched tree (the corpus's scratch copy, `TMPDIR` inside it) is the
//!   same after the run as before: nothing created, changed or removed
//!   outside the run's own directory, and that directory gone;
//! - while it runs, no process shows the case's secret on its command line
//!   (`/proc/PID/cmdline`, which every user can read), and no file of the
//!   run can be read by another user (every directory above it and the file
//!   itself checked for others' permissions; as root, a read tried as
//!   `nobody` too);
//! - after it, no process the job started is left (found by the case's
//!   marker in its command line, then ended).

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The watched tree, less what the harness itself writes (`.rss`,
/// `.trace`) and `TMPDIR`'s own entry, whose times the run's directory
/// changes by coming and going; what is inside `TMPDIR` is compared.
pub(crate) fn tree(world: &Path) -> BTreeMap<PathBuf, String> {
    let mut entries = crate::corpus::snapshot(world);
    entries.retain(|path, _| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        !name.starts_with(".rss") && !name.starts_with(".trace") && path != &world.join(".tmp")
    });
    entries
}

/// The differences between two [`tree`]s, in words.
pub(crate) fn changes(
    before: &BTreeMap<PathBuf, String>,
    after: &BTreeMap<PathBuf, String>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (path, was) in before {
        match after.get(path) {
            None => out.push(format!("`{}` was removed", path.display())),
            Some(now) if now != was => out.push(format!("`{}` was changed", path.display())),
            Some(_) => {}
        }
    }
    for path in after.keys().filter(|p| !before.contains_key(*p)) {
        out.push(format!("`{}` was left", path.display()));
    }
    out
}

/// Looks at the machine while a case runs.
pub(crate) struct Watcher {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Vec<String>>,
}

impl Watcher {
    /// Watches `tmp` (the case's `TMPDIR`) and every command line for
    /// `secret`.
    pub(crate) fn start(tmp: &Path, secret: Option<String>) -> Watcher {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let tmp = tmp.to_path_buf();
        let thread = std::thread::spawn(move || {
            let mut found = Vec::new();
            let mut tried_as_nobody = false;
            while !flag.load(Ordering::Relaxed) {
                if let Some(secret) = &secret {
                    for (pid, line) in command_lines() {
                        if line.contains(secret.as_str()) {
                            found.push(format!(
                                "process {pid} shows the secret on its command line: {line}"
                            ));
                        }
                    }
                }
                for file in readable_by_others(&tmp) {
                    found.push(format!("another user can read `{}`", file.display()));
                }
                if !tried_as_nobody && let Some(file) = a_file_of_the_run(&tmp) {
                    tried_as_nobody = true;
                    if read_as_nobody(&file) {
                        found.push(format!("`nobody` read `{}`", file.display()));
                    }
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            found.dedup();
            found
        });
        Watcher { stop, thread }
    }

    /// What was seen.
    pub(crate) fn stop(self) -> Vec<String> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("the watcher")
    }
}

/// Every process's command line, its words joined by spaces.
fn command_lines() -> Vec<(u32, String)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.parse().ok()?;
            let raw = std::fs::read(e.path().join("cmdline")).ok()?;
            Some((pid, String::from_utf8_lossy(&raw).replace('\0', " ")))
        })
        .collect()
}

/// Files and directories under `dir` that a user other than their owner
/// could read: every directory above it searchable by others, and the file
/// readable by them.
fn readable_by_others(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).into_iter().flatten().flatten() {
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            if meta.file_type().is_symlink() {
                continue;
            }
            if meta.mode() & 0o004 != 0 && !meta.is_dir() {
                found.push(entry.path());
            }
            // A directory others cannot enter hides what is below it.
            if meta.is_dir() && meta.mode() & 0o001 != 0 {
                stack.push(entry.path());
            }
        }
    }
    found
}

/// A regular file in the run's directory, when there is one yet.
fn a_file_of_the_run(tmp: &Path) -> Option<PathBuf> {
    let run = std::fs::read_dir(tmp)
        .ok()?
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("trainc-run-"))?
        .path();
    let hosts = run.join("hosts");
    hosts.is_file().then_some(hosts)
}

/// Whether the user `nobody` can read `file` (tried only as root, who can
/// become them; another user's try is the permissions check above).
fn read_as_nobody(file: &Path) -> bool {
    if rustix_uid() != 0 {
        return false;
    }
    Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "cat"])
        .arg(file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn rustix_uid() -> u32 {
    std::fs::metadata("/proc/self").map_or(u32::MAX, |m| m.uid())
}

/// The processes whose command line holds `marker`: each reported, then
/// ended, so that one case's leftovers do not fail the next.
pub(crate) fn leftovers(marker: &str) -> Vec<String> {
    std::thread::sleep(Duration::from_millis(300));
    let left: Vec<(u32, String)> = command_lines()
        .into_iter()
        .filter(|(pid, line)| line.contains(marker) && *pid != std::process::id())
        .collect();
    for (pid, _) in &left {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    left.into_iter()
        .map(|(pid, line)| format!("process {pid} was left running: {line}"))
        .collect()
}
