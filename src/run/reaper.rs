//! The processes a run leaves: trainc is the subreaper of its descendants
//! (`PR_SET_CHILD_SUBREAPER`, set in [`super::supervise::run`]), so one
//! that left its parent's process group and session is still below it, and
//! [`sweep`] ends each (from `/proc`), reaping those that became trainc's.

use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

/// Between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(5);

/// Ends every process descended from trainc that is still there: each one
/// a container's exit left behind (in a process group and session of its
/// own, or the child of one that ended, which the subreaper made trainc's).
/// SIGTERM, then SIGKILL after [`GRACE`]; each child of trainc's reaped.
pub fn sweep() {
    let me = std::process::id();
    let mut signal = Signal::TERM;
    let started = Instant::now();
    loop {
        let left = descendants(me);
        reap(me);
        if left.is_empty() {
            return;
        }
        if started.elapsed() > GRACE {
            signal = Signal::KILL;
        }
        for pid in left {
            if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
                let _ = rustix::process::kill_process(pid, signal);
            }
        }
        if started.elapsed() > GRACE * 3 {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Reaps every child of trainc's that has ended.
fn reap(me: u32) {
    for pid in children(me) {
        if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
            let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG);
        }
    }
}

/// Each process and its parent, from `/proc`: (pid, ppid, ended).
fn processes() -> Vec<(u32, u32, bool)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (comm) state ppid …`: comm may hold spaces and parentheses.
            let rest = &stat[stat.rfind(')')? + 1..];
            let mut fields = rest.split_whitespace();
            let state = fields.next()?;
            let ppid = fields.next()?.parse().ok()?;
            Some((pid, ppid, state == "Z" || state == "X"))
        })
        .collect()
}

fn children(of: u32) -> Vec<u32> {
    processes()
        .into_iter()
        .filter(|(_, ppid, _)| *ppid == of)
        .map(|(pid, _, _)| pid)
        .collect()
}

/// Every live process below `root`.
fn descendants(root: u32) -> Vec<u32> {
    let all = processes();
    let mut found = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for (pid, ppid, ended) in &all {
            if *ppid == parent && !found.contains(pid) {
                frontier.push(*pid);
                if !ended {
                    found.push(*pid);
                }
            }
        }
    }
    found
}
