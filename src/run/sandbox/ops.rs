//! The operations that build a container's root ([`ops`]), made from its
//! mounts and what this machine has ([`Host`], a fake one in the tests):
//! nothing is made on this machine's own directories, and a link on a mount
//! path is followed inside the root, as runc follows it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::Op;
use crate::run::workdir::LocalMount;

/// What this machine has at a path, for [`ops`].
pub trait Host {
    /// The names in directory `dir`, sorted.
    fn entries(&self, dir: &Path) -> Vec<String>;
    /// What `path` is, not following a link at its end.
    fn kind(&self, path: &Path) -> Option<Kind>;
    /// Whether `path` is a directory, following links.
    fn is_dir(&self, path: &Path) -> bool;
    /// Where the link `path` points.
    fn link(&self, path: &Path) -> Option<PathBuf>;
}

/// What a path of this machine is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Dir,
    File,
    Link,
}

/// This machine, through the file system.
pub struct Machine;

impl Host for Machine {
    fn entries(&self, dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        names
    }

    fn kind(&self, path: &Path) -> Option<Kind> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        Some(if meta.file_type().is_symlink() {
            Kind::Link
        } else if meta.is_dir() {
            Kind::Dir
        } else {
            Kind::File
        })
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }

    fn link(&self, path: &Path) -> Option<PathBuf> {
        std::fs::read_link(path).ok()
    }
}

/// The operations that build a container's root: this machine's top-level
/// directories, each mount at its target (shallower first), the pods'
/// `/etc/hosts` over the machine's.
pub fn ops(mounts: &[LocalMount], hosts_file: &Path, host: &dyn Host) -> Result<Vec<Op>, String> {
    let mut builder = Builder {
        ops: vec![Op::Tmpfs { at: "/".to_owned() }],
        mounted: vec![("/".to_owned(), None)],
        made: BTreeSet::new(),
        links: std::collections::BTreeMap::new(),
        host,
    };
    builder.copy_children("/", Path::new("/"));
    for mount in mounts {
        builder.bind(&mount.target, &mount.source, mount.read_only)?;
    }
    builder.bind("/etc/hosts", hosts_file, true)?;
    Ok(builder.ops)
}

/// The operations so far, and what they have made.
struct Builder<'h> {
    ops: Vec<Op>,
    /// Mount targets in the new root, in order: a source of this machine,
    /// or `None` for a tmpfs.
    mounted: Vec<(String, Option<PathBuf>)>,
    /// Directories made in a tmpfs.
    made: BTreeSet<String>,
    /// Links copied into a tmpfs.
    links: std::collections::BTreeMap<String, String>,
    host: &'h dyn Host,
}

/// `target`'s parent in the container (`/` for a top-level path).
pub(super) fn parent_of(target: &str) -> &str {
    match target.rfind('/') {
        Some(0) | None => "/",
        Some(at) => &target[..at],
    }
}

/// `parent/name` in the container.
fn child_of(parent: &str, name: &str) -> String {
    if parent == "/" {
        format!("/{name}")
    } else {
        format!("{parent}/{name}")
    }
}

impl Builder<'_> {
    /// The path of this machine behind `target` (`None`: in a tmpfs).
    fn backing(&self, target: &str) -> Option<PathBuf> {
        let (mount, source) = self
            .mounted
            .iter()
            .enumerate()
            .filter(|(_, (m, _))| m == "/" || target == m || target.starts_with(&format!("{m}/")))
            .max_by_key(|(i, (m, _))| (m.len(), *i))
            .map(|(_, entry)| entry)
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
        target == "/"
            || self.made.contains(target)
            || self
                .backing(target)
                .is_some_and(|p| self.host.kind(&p) == Some(Kind::Dir))
    }

    /// Recreates the entries of the directory `source` of this machine in
    /// the tmpfs at `target`: directories and files bound, links copied.
    fn copy_children(&mut self, target: &str, source: &Path) {
        for name in self.host.entries(source) {
            let from = source.join(&name);
            let to = child_of(target, &name);
            match self.host.kind(&from) {
                Some(Kind::Link) => {
                    if let Some(link) = self
                        .host
                        .link(&from)
                        .and_then(|l| l.to_str().map(str::to_owned))
                    {
                        self.links.insert(to.clone(), link.clone());
                        self.ops.push(Op::Link { at: to, to: link });
                    }
                }
                Some(kind @ (Kind::Dir | Kind::File)) => {
                    let dir = kind == Kind::Dir;
                    self.ops.push(if dir {
                        Op::Dir { at: to.clone() }
                    } else {
                        Op::File { at: to.clone() }
                    });
                    self.ops.push(Op::Bind {
                        source: from.clone(),
                        at: to.clone(),
                        recursive: dir,
                        read_only: false,
                    });
                    self.mounted.push((to, Some(from)));
                }
                None => {}
            }
        }
    }

    /// Makes `dir` a directory of a tmpfs: a bound directory of this
    /// machine becomes a tmpfs with its entries bound again, so that what
    /// is made in it is not made on this machine.
    /// What was done below `dir` before is done again on the tmpfs (a file
    /// bound over the machine's inside it), so that the tmpfs hides none of it.
    fn own(&mut self, dir: &str) -> Result<(), String> {
        self.make_dir(dir)?;
        if let Some(source) = self.backing(dir) {
            let below = format!("{dir}/");
            let earlier: Vec<Op> = self
                .ops
                .iter()
                .filter(|op| op.at().starts_with(&below))
                .cloned()
                .collect();
            self.ops.push(Op::Tmpfs { at: dir.to_owned() });
            self.mounted.push((dir.to_owned(), None));
            self.made.insert(dir.to_owned());
            self.copy_children(dir, &source);
            for op in earlier {
                match &op {
                    Op::Tmpfs { at } => self.mounted.push((at.clone(), None)),
                    Op::Bind { source, at, .. } => {
                        self.mounted.push((at.clone(), Some(source.clone())));
                    }
                    _ => {}
                }
                self.ops.push(op);
            }
        }
        Ok(())
    }

    /// Makes the directory `target` (and its parents) in the new root.
    fn make_dir(&mut self, target: &str) -> Result<(), String> {
        if self.is_dir(target) {
            return Ok(());
        }
        let parent = parent_of(target);
        self.own(parent)?;
        if self
            .backing(target)
            .is_some_and(|p| self.host.kind(&p).is_some())
        {
            return Err(format!(
                "the mount path `{target}` is a file or link on this machine, not a directory"
            ));
        }
        self.ops.push(Op::Dir {
            at: target.to_owned(),
        });
        self.made.insert(target.to_owned());
        Ok(())
    }

    /// Where the link at `at` in the new root points, if it is one.
    fn link_at(&self, at: &str) -> Option<String> {
        if let Some(to) = self.links.get(at) {
            return Some(to.clone());
        }
        let source = self.backing(at)?;
        (self.host.kind(&source) == Some(Kind::Link))
            .then(|| self.host.link(&source)?.to_str().map(str::to_owned))
            .flatten()
    }

    /// `target` with every link on its way followed inside the new root,
    /// as runc follows links in a mount's destination (`securejoin`): an
    /// absolute link from the root, a relative one from its directory,
    /// never above the root; at most 40.
    fn resolve(&self, target: &str) -> Result<String, String> {
        let mut path = target.to_owned();
        for _ in 0..=40 {
            let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
            let mut prefix = String::new();
            let mut followed = None;
            for (i, part) in parts.iter().enumerate() {
                prefix.push('/');
                prefix.push_str(part);
                if let Some(to) = self.link_at(&prefix) {
                    let base = if to.starts_with('/') {
                        ""
                    } else {
                        parent_of(&prefix)
                    };
                    let rest = parts[i + 1..].join("/");
                    followed = Some(crate::syntax::pod::absolute_mount_path(&format!(
                        "{base}/{to}/{rest}"
                    )));
                    break;
                }
            }
            match followed {
                Some(next) => path = next,
                None => return Ok(path),
            }
        }
        Err(format!(
            "the mount path `{target}` goes through more than 40 symbolic links"
        ))
    }

    /// Binds `source` (a directory or a file) at `target`.
    fn bind(&mut self, target: &str, source: &Path, read_only: bool) -> Result<(), String> {
        if target == "/" || !target.starts_with('/') {
            return Err(format!(
                "`{target}` is not a path a volume can be mounted at"
            ));
        }
        let resolved = self.resolve(target)?;
        if resolved == "/" {
            return Err(format!(
                "the mount path `{target}` leads to `/` through a link: a volume cannot be mounted there"
            ));
        }
        let target = resolved.as_str();
        if self.host.is_dir(source) {
            self.make_dir(target)?;
        } else {
            let parent = parent_of(target);
            match self.backing(target).and_then(|p| self.host.kind(&p)) {
                // Bound over the machine's file, in this namespace only.
                Some(Kind::File) => {}
                Some(_) => {
                    return Err(format!(
                        "the mount path `{target}` of a file is a directory or link on this machine"
                    ));
                }
                None => {
                    self.own(parent)?;
                    if !self.made.contains(target) {
                        self.ops.push(Op::File {
                            at: target.to_owned(),
                        });
                    }
                }
            }
        }
        self.ops.push(Op::Bind {
            source: source.to_path_buf(),
            at: target.to_owned(),
            recursive: false,
            read_only,
        });
        self.mounted
            .push((target.to_owned(), Some(source.to_path_buf())));
        Ok(())
    }
}
