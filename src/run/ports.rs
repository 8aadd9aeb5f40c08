//! The ports a job listens on, on every address of this machine (torchrun's
//! rendezvous store binds `*:PORT`), checked before anything starts: two
//! runs of one job on one machine would collide there, and the second would
//! fail minutes later with "address already in use". A port in use is an
//! error that names who holds it (from `/proc/net/tcp`, and the process
//! whose socket it is where this user may see it), and the `trainc run`
//! that started that process, when one did.

use std::fmt::Write as _;

use super::error::RunError;
use super::plan::Plan;

/// Every port of `plan` free, or why not.
pub fn check(plan: &Plan) -> Result<(), RunError> {
    for port in &plan.ports {
        let bound = std::net::TcpListener::bind(("0.0.0.0", port.port));
        if let Err(error) = bound
            && error.kind() == std::io::ErrorKind::AddrInUse
        {
            return Err(RunError::cannot_start(format!(
                "port {} is in use on this machine{}; pod {} listens on it (torchrun's rendezvous store), on every address of the machine",
                port.port,
                holder(port.port),
                port.pod
            ))
            .with_help("two runs of a job on one machine share its ports: wait for the other run to end, or stop it"));
        }
    }
    Ok(())
}

/// `, by …` for the process listening on TCP `port`, as far as this user
/// can see it.
fn holder(port: u16) -> String {
    let Some((uid, inode)) = listener(port) else {
        return String::new();
    };
    let me = rustix::process::getuid().as_raw();
    let Some(pid) = socket_owner(inode) else {
        return if uid == me {
            String::new()
        } else {
            format!(", by a process of user {uid}")
        };
    };
    let mut out = format!(", by process {pid} (`{}`)", command_line(pid));
    let mut at = pid;
    for _ in 0..64 {
        let Some(parent) = parent(at).filter(|p| *p > 1) else {
            break;
        };
        let line = command_line(parent);
        if line.contains("trainc") && line.contains(" run ") {
            let _ = write!(out, ", started by `{line}` (process {parent})");
            break;
        }
        at = parent;
    }
    out
}

/// The uid and socket inode of the TCP socket listening on `port`.
fn listener(port: u16) -> Option<(u32, u64)> {
    let wanted = format!(":{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .find_map(|table| {
            let text = std::fs::read_to_string(table).ok()?;
            text.lines().skip(1).find_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                // sl local rem st tx:rx tr:when retrnsmt uid timeout inode
                let listening = fields.get(3) == Some(&"0A");
                (listening && fields.get(1)?.ends_with(&wanted))
                    .then(|| Some((fields.get(7)?.parse().ok()?, fields.get(9)?.parse().ok()?)))
                    .flatten()
            })
        })
}

/// The process with a descriptor of the socket `inode`, where readable.
fn socket_owner(inode: u64) -> Option<u32> {
    let wanted = format!("socket:[{inode}]");
    std::fs::read_dir("/proc")
        .ok()?
        .filter_map(Result::ok)
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let fds = std::fs::read_dir(entry.path().join("fd")).ok()?;
            fds.filter_map(Result::ok)
                .any(|fd| {
                    std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == wanted.as_str())
                })
                .then_some(pid)
        })
}

fn parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// A process's command line, its words joined by spaces, escaped and cut.
fn command_line(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let words: Vec<String> = raw
        .split(|&b| b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    crate::diagnostic::quoted_value(&words.join(" "), 120)
}

#[cfg(test)]
mod tests {
    use super::check;
    use crate::cluster::Success;
    use crate::run::plan::{Plan, Port};

    #[test]
    fn a_port_in_use_names_its_holder() {
        let held = std::net::TcpListener::bind(("0.0.0.0", 0)).unwrap();
        let port = held.local_addr().unwrap().port();
        let plan = Plan {
            job: "Job/demo".to_owned(),
            pods: Vec::new(),
            success: Success::AllPods,
            deadline: None,
            group: None,
            header: String::new(),
            hosts: String::new(),
            names: Vec::new(),
            ports: vec![Port {
                port,
                pod: "demo-0".to_owned(),
            }],
        };
        let error = check(&plan).unwrap_err();
        assert!(
            error.message.starts_with(&format!(
                "port {port} is in use on this machine, by process {}",
                std::process::id()
            )),
            "{}",
            error.message
        );
        assert!(error.message.ends_with("pod demo-0 listens on it (torchrun's rendezvous store), on every address of the machine"));
        drop(held);
        assert_eq!(check(&plan), Ok(()));
    }
}
