//! One container in namespaces of its own, where Linux user namespaces are
//! available: user (its root mapped to the caller), mount, UTS and PID
//! (util-linux `unshare`, no root needed). A root of its own on a tmpfs
//! holds this machine's top-level directories bound, the pod's volumes at
//! their mount paths, an `/etc/hosts` that resolves the pods' DNS names as
//! the cluster's DNS would, and the pod's hostname. The network stays the
//! machine's: each pod has its own loopback address (`127.77.x.y`).
//!
//! As bubblewrap does, the setup is a list of operations ([`Op`]) made here
//! from the container's mounts and what this machine has ([`ops`], which a
//! unit test can compare), and one function ([`helper`]) acts on it: trainc
//! itself, started by `unshare` inside the namespaces with the [`Request`]
//! on its standard input (the environment never on a command line, where
//! `/proc/PID/cmdline` shows it to every user). Nothing is made on this
//! machine's own directories: a directory or file a mount needs is made in
//! a tmpfs, and a bound directory that lacks it becomes a tmpfs with its
//! entries bound again. The helper says on its standard output that the
//! setup is done before it starts the command, so that a setup that fails
//! is told from a job that fails.
//!
//! When the namespace's first process ends, the kernel ends every other;
//! killing `unshare` kills that first process (`--kill-child`), and
//! `setpriv --pdeathsig` ties `unshare` to trainc.

mod helper;
mod ops;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::error::RunError;

pub use helper::helper;
pub use ops::{Host, Kind, Machine, ops};

/// The first argument that makes trainc the helper ([`helper`]).
pub const HELPER_ARG: &str = "__trainc-sandbox-helper";

/// What the helper prints when the setup is done, before the command.
pub const READY: &[u8] = b"\0trainc-sandbox-ready\n";
/// What the helper prints before the reason when the setup failed.
pub const FAILED: &[u8] = b"\0trainc-sandbox-failed ";

/// One operation of a container's setup, on a path in its root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    /// A tmpfs at `at`.
    Tmpfs { at: String },
    /// A directory made in a tmpfs.
    Dir { at: String },
    /// An empty file made in a tmpfs, to bind a file on.
    File { at: String },
    /// A symbolic link made in a tmpfs, as this machine has it.
    Link { at: String, to: String },
    /// A path of this machine bound at `at` (a directory with the mounts
    /// inside it when `recursive`).
    Bind {
        source: PathBuf,
        at: String,
        recursive: bool,
        read_only: bool,
    },
}

impl Op {
    /// The path in the container the operation is at.
    pub fn at(&self) -> &str {
        match self {
            Op::Tmpfs { at }
            | Op::Dir { at }
            | Op::File { at }
            | Op::Link { at, .. }
            | Op::Bind { at, .. } => at,
        }
    }
}

/// What the helper is given: the container's root directory (empty), the
/// operations that build it, and what then runs in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    pub root: PathBuf,
    pub ops: Vec<Op>,
    pub hostname: String,
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub working_dir: String,
}

/// The namespaces of a container: user (its root mapped to the caller),
/// mount, UTS and PID, the first process forked into them and killed with
/// `unshare`, `/proc` of the new PID namespace.
const UNSHARE: [&str; 9] = [
    "unshare",
    "--user",
    "--map-root-user",
    "--mount",
    "--uts",
    "--pid",
    "--fork",
    "--kill-child",
    "--mount-proc",
];

/// Whether `unshare` can make the namespaces here.
pub fn namespaces_available() -> bool {
    Command::new(UNSHARE[0])
        .args(&UNSHARE[1..])
        .arg("true")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The command that starts the helper in new namespaces, and what to
/// write to its standard input.
pub fn command(request: &Request) -> Result<(Command, Vec<u8>), RunError> {
    let exe = std::env::current_exe().map_err(|e| RunError::io(Path::new("/proc/self/exe"), &e))?;
    let input = serde_json::to_vec(request).map_err(|e| {
        RunError::cannot_start(format!("a path of the setup is not UTF-8 text: {e}"))
    })?;
    let mut command = if super::on_path("setpriv").is_some() {
        let mut c = Command::new("setpriv");
        c.args(["--pdeathsig", "KILL", "--"]).args(UNSHARE);
        c
    } else {
        let mut c = Command::new(UNSHARE[0]);
        c.args(&UNSHARE[1..]);
        c
    };
    command.arg(exe).arg(HELPER_ARG);
    command.env_clear().env("PATH", super::plan::SYSTEM_PATH);
    Ok((command, input))
}

#[cfg(test)]
mod tests;
