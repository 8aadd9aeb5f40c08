//! trainc as the helper inside a container's namespaces: it reads its
//! [`Request`], builds the root by its operations (each made only in a
//! tmpfs of the root's), says the setup is done, and becomes the command.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::ops::parent_of;
use super::{FAILED, Op, READY, Request};

/// The helper's exit status when the setup failed.
const SETUP_FAILED: u8 = 125;

/// The most a request may be (a container's environment and mounts).
const MAX_REQUEST: u64 = 64 * 1024 * 1024;

/// trainc as the helper, inside the namespaces: reads the [`Request`],
/// builds the root, then runs the command in it. Returns only on failure:
/// the exit status.
pub fn helper() -> u8 {
    let mut out = std::io::stdout();
    match set_up() {
        Ok(request) => {
            let _ = out.write_all(READY);
            let _ = out.flush();
            let error = exec(&request);
            let _ = writeln!(
                std::io::stderr(),
                "cannot run `{}`: {}",
                crate::diagnostic::escape_for_terminal(&request.argv[0]),
                crate::source::io_reason(&error)
            );
            127
        }
        Err(why) => {
            let _ = out.write_all(FAILED);
            let _ = out.write_all(why.replace('\n', " ").as_bytes());
            let _ = out.write_all(b"\n");
            let _ = out.flush();
            SETUP_FAILED
        }
    }
}

fn exec(request: &Request) -> std::io::Error {
    use std::os::unix::process::CommandExt as _;
    Command::new(&request.argv[0])
        .args(&request.argv[1..])
        .env_clear()
        .envs(request.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&request.working_dir)
        .exec()
}

/// Reads the request, gives the command `/dev/null` for its standard
/// input, and builds the root.
fn set_up() -> Result<Request, String> {
    let mut input = Vec::new();
    std::io::stdin()
        .take(MAX_REQUEST)
        .read_to_end(&mut input)
        .map_err(|e| format!("reading the setup: {}", crate::source::io_reason(&e)))?;
    let request: Request =
        serde_json::from_slice(&input).map_err(|e| format!("reading the setup: {e}"))?;
    if request.argv.is_empty() {
        return Err("the container has no command".to_owned());
    }
    let null = std::fs::File::open("/dev/null").map_err(|e| format!("/dev/null: {e}"))?;
    rustix::stdio::dup2_stdin(&null).map_err(|e| format!("/dev/null as standard input: {e}"))?;
    build(&request)?;
    rustix::system::sethostname(request.hostname.as_bytes())
        .map_err(|e| format!("setting the hostname: {e}"))?;
    rustix::process::chroot(&request.root).map_err(|e| format!("entering the root: {e}"))?;
    Ok(request)
}

/// Acts on the request's operations, in order. What is made is made only
/// in a tmpfs of the root's (checked here again).
fn build(request: &Request) -> Result<(), String> {
    use rustix::mount::{MountFlags, mount, mount_bind, mount_bind_recursive};
    let root = &request.root;
    let place = |at: &str| -> Result<PathBuf, String> {
        if !at.starts_with('/') || at.split('/').any(|p| p == ".." || p == ".") {
            return Err(format!("`{at}` is not a clean absolute path"));
        }
        Ok(root.join(&at[1..]))
    };
    // Mount targets in order, and whether each is a tmpfs.
    let mut mounted: Vec<(String, bool)> = Vec::new();
    let in_tmpfs = |mounted: &[(String, bool)], at: &str| -> bool {
        let parent = parent_of(at);
        mounted
            .iter()
            .enumerate()
            .filter(|(_, (m, _))| m == "/" || parent == m || parent.starts_with(&format!("{m}/")))
            .max_by_key(|(i, (m, _))| (m.len(), *i))
            .is_some_and(|(_, (_, tmpfs))| *tmpfs)
    };
    let fail = |what: &str, at: &str, e: &dyn std::fmt::Display| format!("{what} `{at}`: {e}");
    for op in &request.ops {
        match op {
            Op::Tmpfs { at } => {
                mount(
                    c"trainc",
                    place(at)?,
                    c"tmpfs",
                    MountFlags::empty(),
                    Some(c"mode=0755"),
                )
                .map_err(|e| fail("a tmpfs at", at, &e))?;
                mounted.push((at.clone(), true));
            }
            Op::Dir { at } | Op::File { at } | Op::Link { at, .. } => {
                if !in_tmpfs(&mounted, at) {
                    return Err(format!(
                        "`{at}` would be made on a directory of this machine"
                    ));
                }
                let path = place(at)?;
                let made = match op {
                    Op::Dir { .. } => std::fs::create_dir(&path),
                    Op::File { .. } => std::fs::File::create_new(&path).map(drop),
                    Op::Link { to, .. } => std::os::unix::fs::symlink(to, &path),
                    _ => unreachable!("matched above"),
                };
                made.map_err(|e| fail("making", at, &e))?;
            }
            Op::Bind {
                source,
                at,
                recursive,
                read_only,
            } => {
                let target = place(at)?;
                let bound = if *recursive {
                    mount_bind_recursive(source, &target)
                } else {
                    mount_bind(source, &target)
                };
                bound.map_err(|e| fail("binding", at, &e))?;
                if *read_only {
                    read_only_again(&target).map_err(|e| fail("making read-only", at, &e))?;
                }
                mounted.push((at.clone(), false));
            }
        }
    }
    Ok(())
}

/// Remounts the bind mount at `target` read-only, keeping the flags a user
/// namespace may not clear (`nosuid`, `nodev`, `noexec`, the atime ones).
fn read_only_again(target: &Path) -> rustix::io::Result<()> {
    use rustix::fs::StatVfsMountFlags as Has;
    use rustix::mount::MountFlags as Set;
    let has = rustix::fs::statvfs(target)?.f_flag;
    let mut flags = Set::BIND | Set::RDONLY;
    for (had, keep) in [
        (Has::NOSUID, Set::NOSUID),
        (Has::NODEV, Set::NODEV),
        (Has::NOEXEC, Set::NOEXEC),
        (Has::NOATIME, Set::NOATIME),
        (Has::NODIRATIME, Set::NODIRATIME),
        (Has::RELATIME, Set::RELATIME),
    ] {
        if has.contains(had) {
            flags |= keep;
        }
    }
    rustix::mount::mount_remount(target, flags, c"")
}
