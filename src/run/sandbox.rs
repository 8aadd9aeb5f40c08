//! One container as a process on this machine.
//!
//! Where Linux user namespaces are available, each container runs in its
//! own user, mount, UTS and PID namespaces (util-linux `unshare`, no root
//! needed): a root of its own on a tmpfs holds this machine's top-level
//! directories bind-mounted, the pod's volumes at their mount paths, an
//! `/etc/hosts` that resolves the pods' DNS names as the cluster's DNS
//! would, and the pod's hostname. The network stays the machine's: each pod
//! has its own loopback address (`127.77.x.y`). When the namespace's first
//! process ends, the kernel ends every other; killing `unshare` kills that
//! first process (`--kill-child`), and `setpriv --pdeathsig` ties `unshare`
//! to trainc.
//!
//! Without user namespaces, the container runs as a plain process: mount
//! paths in its command, args, env and working directory are rewritten to
//! the local directories, and DNS names to 127.0.0.1 (what [`rewrite`] says).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::syntax::shell::quote;

/// A mount into the container's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// An absolute path in the container.
    pub target: String,
    pub source: PathBuf,
    pub read_only: bool,
}

/// What the container runs, and where.
pub struct Container<'a> {
    pub argv: &'a [String],
    pub env: &'a [(String, String)],
    pub working_dir: &'a str,
    pub hostname: &'a str,
    pub hosts_file: &'a Path,
    pub mounts: &'a [Mount],
    /// An empty directory for the root's mount point.
    pub root: &'a Path,
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

/// The command that runs `container` in namespaces of its own.
pub fn isolated(container: &Container<'_>) -> Result<Command, String> {
    let script = script(container)?;
    let mut command = if super::on_path("setpriv").is_some() {
        let mut c = Command::new("setpriv");
        c.args(["--pdeathsig", "KILL", "--"]).args(UNSHARE);
        c
    } else {
        let mut c = Command::new(UNSHARE[0]);
        c.args(&UNSHARE[1..]);
        c
    };
    command.args(["sh", "-c", &script]);
    command.env_clear().env("PATH", super::SYSTEM_PATH);
    Ok(command)
}

/// The shell script `unshare` runs: build the root, then `exec` the
/// container's command in it with exactly its environment.
fn script(container: &Container<'_>) -> Result<String, String> {
    let root = container.root.display().to_string();
    let mut ops = Ops {
        out: String::from("set -e\n"),
        root: root.clone(),
        mounted: vec![("/".to_owned(), None)],
        made: BTreeSet::new(),
    };
    let _ = writeln!(
        ops.out,
        "mount -t tmpfs -o mode=0755 trainc-root {}",
        quote(&root)
    );
    ops.copy_children("/", Path::new("/"))?;
    let mut mounts: Vec<&Mount> = container.mounts.iter().collect();
    mounts.sort_by_key(|m| m.target.matches('/').count());
    for mount in mounts {
        ops.bind(&mount.target, &mount.source, mount.read_only)?;
    }
    ops.bind("/etc/hosts", container.hosts_file, true)?;
    let env_bin = ["/usr/bin/env", "/bin/env"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .ok_or("no env program in /usr/bin or /bin")?;
    let _ = writeln!(
        ops.out,
        "printf %s {} > /proc/sys/kernel/hostname",
        quote(container.hostname)
    );
    let mut words = vec![
        "exec".to_owned(),
        "chroot".to_owned(),
        quote(&root),
        env_bin.to_owned(),
        "-i".to_owned(),
    ];
    words.push(format!("--chdir={}", quote(container.working_dir)));
    words.extend(
        container
            .env
            .iter()
            .map(|(k, v)| quote(&format!("{k}={v}"))),
    );
    words.extend(container.argv.iter().map(|w| quote(w)));
    ops.out.push_str(&words.join(" "));
    ops.out.push('\n');
    Ok(ops.out)
}

/// The mount commands, and what they have made so far.
struct Ops {
    out: String,
    root: String,
    /// Mount targets in the new root, in order: a host source, or `None` for
    /// a tmpfs.
    mounted: Vec<(String, Option<PathBuf>)>,
    /// Directories made in a tmpfs.
    made: BTreeSet<String>,
}

impl Ops {
    fn at(&self, target: &str) -> String {
        quote(&format!("{}{}", self.root, target))
    }

    /// The host path behind `target` in the new root (`None`: in a tmpfs).
    fn backing(&self, target: &str) -> Option<PathBuf> {
        let (mount, source) = self
            .mounted
            .iter()
            .rev()
            .filter(|(m, _)| m == "/" || target == m || target.starts_with(&format!("{m}/")))
            .max_by_key(|(m, _)| m.len())
            .expect("the root is mounted");
        let rest = target[mount.len()..].trim_start_matches('/');
        source.as_ref().map(|s| {
            if rest.is_empty() {
                s.clone()
            } else {
                s.join(rest)
            }
        })
    }

    fn is_dir(&self, target: &str) -> bool {
        self.made.contains(target)
            || target == "/"
            || self
                .backing(target)
                .is_some_and(|p| std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()))
    }

    /// Recreates the entries of host directory `source` in the tmpfs at
    /// `target`: directories and files bound, links copied.
    fn copy_children(&mut self, target: &str, source: &Path) -> Result<(), String> {
        let entries = std::fs::read_dir(source).map_err(super::io_error(source))?;
        let mut names: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect();
        names.sort();
        for name in names {
            let Some(name) = name.to_str() else { continue };
            let from = source.join(name);
            let to = if target == "/" {
                format!("/{name}")
            } else {
                format!("{target}/{name}")
            };
            let Ok(meta) = std::fs::symlink_metadata(&from) else {
                continue;
            };
            if meta.file_type().is_symlink() {
                let link = std::fs::read_link(&from).map_err(super::io_error(&from))?;
                let _ = writeln!(
                    self.out,
                    "ln -s {} {}",
                    quote(&link.display().to_string()),
                    self.at(&to)
                );
                continue;
            }
            // A directory, its mounts with it, or a file.
            let (make, bind) = if meta.is_dir() {
                ("mkdir", "--rbind")
            } else {
                (": >", "--bind")
            };
            let _ = writeln!(
                self.out,
                "{make} {} && mount {bind} {} {}",
                self.at(&to),
                quote(&from.display().to_string()),
                self.at(&to)
            );
            self.mounted.push((to, Some(from)));
        }
        Ok(())
    }

    /// Makes directory `target` (and its parents) in the new root, turning a
    /// bound directory that lacks it into a tmpfs with its entries bound, so
    /// that nothing is created on this machine's own directories.
    fn make_dir(&mut self, target: &str) -> Result<(), String> {
        if self.is_dir(target) {
            return Ok(());
        }
        let parent = match target.rfind('/') {
            Some(0) => "/".to_owned(),
            Some(at) => target[..at].to_owned(),
            None => return Err(format!("`{target}` is not an absolute path")),
        };
        self.make_dir(&parent)?;
        if let Some(source) = self.backing(&parent) {
            if std::fs::symlink_metadata(&source).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(format!(
                    "the mount path `{target}` goes through a symbolic link (`{parent}`) of this machine"
                ));
            }
            let _ = writeln!(
                self.out,
                "mount -t tmpfs -o mode=0755 trainc-dir {}",
                self.at(&parent)
            );
            self.mounted.push((parent.clone(), None));
            self.made.insert(parent.clone());
            self.copy_children(&parent, &source)?;
        }
        if self
            .backing(target)
            .is_some_and(|p| std::fs::symlink_metadata(p).is_ok())
        {
            return Err(format!(
                "the mount path `{target}` is a file or link on this machine, not a directory"
            ));
        }
        let _ = writeln!(self.out, "mkdir {}", self.at(target));
        self.made.insert(target.to_owned());
        Ok(())
    }

    /// Binds `source` (a directory or a file) at `target`.
    fn bind(&mut self, target: &str, source: &Path, read_only: bool) -> Result<(), String> {
        let target = target.trim_end_matches('/');
        let target = if target.is_empty() { "/" } else { target };
        if target == "/" {
            return Err("a volume is mounted at `/`".to_owned());
        }
        if source.is_dir() {
            self.make_dir(target)?;
        } else {
            let parent = &target[..target.rfind('/').expect("absolute")];
            self.make_dir(if parent.is_empty() { "/" } else { parent })?;
            let exists = self.backing(target).is_some_and(|p| p.is_file());
            if !exists {
                let _ = writeln!(self.out, ": > {}", self.at(target));
            }
        }
        let _ = writeln!(
            self.out,
            "mount --bind {} {}",
            quote(&source.display().to_string()),
            self.at(target)
        );
        if read_only {
            let _ = writeln!(self.out, "mount -o remount,bind,ro {}", self.at(target));
        }
        self.mounted
            .push((target.to_owned(), Some(source.to_path_buf())));
        Ok(())
    }
}

/// Rewrites for a run without namespaces: each mount path to its local
/// directory, each DNS name to 127.0.0.1. Longest first, so that
/// `/trainc/code` is not taken for `/trainc`.
pub struct Rewrite {
    pairs: Vec<(String, String)>,
}

impl Rewrite {
    pub fn new(mounts: &[Mount], names: &[String]) -> Rewrite {
        let mut pairs: Vec<(String, String)> = mounts
            .iter()
            .map(|m| {
                (
                    m.target.trim_end_matches('/').to_owned(),
                    m.source.display().to_string(),
                )
            })
            .chain(names.iter().map(|n| (n.clone(), "127.0.0.1".to_owned())))
            .collect();
        pairs.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
        Rewrite { pairs }
    }

    /// `text` with every mount path and name replaced.
    pub fn apply(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        'scan: while !rest.is_empty() {
            for (from, to) in &self.pairs {
                if let Some(after) = rest.strip_prefix(from.as_str()) {
                    let ends = after.chars().next().is_none_or(|c| {
                        !c.is_ascii_alphanumeric() && c != '-' && c != '.' && c != '_' || c == '/'
                    });
                    let starts = out.chars().last().is_none_or(|c| {
                        !c.is_ascii_alphanumeric() && c != '-' && c != '.' && c != '_'
                    });
                    if ends && starts {
                        out.push_str(to);
                        rest = after;
                        continue 'scan;
                    }
                }
            }
            let c = rest.chars().next().expect("not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
        out
    }
}

/// The command that runs `container` as a plain process, its paths and
/// names rewritten.
pub fn plain(container: &Container<'_>, rewrite: &Rewrite) -> Command {
    let argv: Vec<String> = container.argv.iter().map(|w| rewrite.apply(w)).collect();
    let mut command = Command::new(&argv[0]);
    command.args(&argv[1..]).env_clear();
    for (name, value) in container.env {
        command.env(name, rewrite.apply(value));
    }
    command.current_dir(rewrite.apply(container.working_dir));
    command
}

#[cfg(test)]
mod tests {
    use super::{Mount, Rewrite};

    #[test]
    fn rewrite_takes_whole_paths_and_names() {
        let mounts = [Mount {
            target: "/trainc/code".into(),
            source: "/tmp/x/code".into(),
            read_only: true,
        }];
        let names = ["job-0.job".to_owned(), "job-0".to_owned()];
        let r = Rewrite::new(&mounts, &names);
        assert_eq!(r.apply("/trainc/code/train.py"), "/tmp/x/code/train.py");
        assert_eq!(r.apply("/trainc/codex"), "/trainc/codex");
        assert_eq!(
            r.apply("--master_addr=job-0.job"),
            "--master_addr=127.0.0.1"
        );
        assert_eq!(r.apply("job-0.jobs"), "job-0.jobs");
        assert_eq!(r.apply("xjob-0"), "xjob-0");
    }
}
