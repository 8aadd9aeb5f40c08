//! The run's own directory, and the one writer of the run: it makes a fresh
//! directory no other user can enter, lays a [`Plan`]'s files out in it,
//! and removes it at the end.
//!
//! The directory is `$TMPDIR/trainc-run-<16 random hex digits>`, made with
//! one `mkdir` of mode 0700 that fails if anything is there (a directory or
//! a link another user made), then checked to be a directory of this user's
//! that only they can enter. Inside it every path is built from names the
//! plan checked (DNS labels and subdomains, ConfigMap keys, item paths
//! without `..`), every directory is made by this writer, and every file is
//! created new, never through a link (the kubelet's atomic writer makes a
//! volume's files the same way: `pkg/volume/util/atomic_writer.go`).
//! Removing it removes what the run made and nothing else: nothing of
//! another user's can be inside.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::os::unix::fs::{
    DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _,
};
use std::path::{Path, PathBuf};

use super::error::RunError;
use super::plan::{ContainerPlan, From, Plan};
use super::volumes::Source;

/// A mount as a path of this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalMount {
    /// Absolute and clean, in the container.
    pub target: String,
    pub source: PathBuf,
    pub read_only: bool,
}

/// The run's directory; removed when dropped.
pub struct WorkDir {
    path: PathBuf,
}

impl WorkDir {
    /// A fresh private directory in `parent` (`$TMPDIR`).
    pub fn create(parent: &Path) -> Result<WorkDir, RunError> {
        let mut last = None;
        for _ in 0..16 {
            let path = parent.join(format!("trainc-run-{}", random_hex()));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    let dir = WorkDir { path };
                    dir.check()?;
                    return Ok(dir);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(RunError::io(parent, &e)),
            }
        }
        Err(RunError::io(
            parent,
            &last.unwrap_or_else(|| std::io::Error::from(std::io::ErrorKind::AlreadyExists)),
        ))
    }

    /// What was made is a directory of this user's, which no one else may
    /// enter.
    fn check(&self) -> Result<(), RunError> {
        let meta =
            std::fs::symlink_metadata(&self.path).map_err(|e| RunError::io(&self.path, &e))?;
        let own = meta.uid() == rustix::process::getuid().as_raw();
        if !meta.is_dir() || !own || meta.mode() & 0o077 != 0 {
            return Err(RunError::new(
                super::error::Kind::Io,
                format!(
                    "{}: not a private directory of this user's right after it was made",
                    self.path.display()
                ),
            ));
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `plan` out: the hosts file, each pod's volumes and an empty
    /// directory for each container's root.
    pub fn lay(&self, plan: &Plan) -> Result<Laid, RunError> {
        let hosts = self.path.join("hosts");
        write_new(&hosts, plan.hosts.as_bytes(), 0o644)?;
        let mut pods = Vec::new();
        for pod in &plan.pods {
            let pod_dir = make_dirs(&self.path, &["pods", &pod.name])?;
            let mut volumes = BTreeMap::new();
            for volume in &pod.volumes {
                let laid = match &volume.source {
                    Source::Own => {
                        let dir = make_dirs(&pod_dir, &["volumes", &volume.name])?;
                        for file in &volume.files {
                            let parts: Vec<&str> =
                                file.path.split('/').filter(|p| !p.is_empty()).collect();
                            let (name, parents) =
                                parts.split_last().expect("an item path is not empty");
                            let parent = make_dirs(&dir, parents)?;
                            write_new(&parent.join(name), &file.bytes, file.mode)?;
                        }
                        (dir, true)
                    }
                    Source::Claim(claim) => (make_dirs(&self.path, &["claims", claim])?, true),
                    Source::Host(dir) => (dir.clone(), false),
                };
                volumes.insert(volume.name.clone(), laid);
            }
            let mut roots = BTreeMap::new();
            for container in pod.init.iter().chain(&pod.containers) {
                let root = make_dirs(&pod_dir, &["roots", &container.name])?;
                roots.insert(container.name.clone(), root);
            }
            pods.push(LaidPod { volumes, roots });
        }
        Ok(Laid { hosts, pods })
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        // `remove_dir_all` does not follow links: it removes a link a
        // container left, never what it points to.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Where the plan's files are.
pub struct Laid {
    pub hosts: PathBuf,
    pub pods: Vec<LaidPod>,
}

/// One pod's directories.
pub struct LaidPod {
    /// Each volume's directory, and whether it is the run's (a `subPath`
    /// that is not there yet is made in it, as the kubelet makes it).
    pub volumes: BTreeMap<String, (PathBuf, bool)>,
    /// Each container's empty root directory.
    pub roots: BTreeMap<String, PathBuf>,
}

impl LaidPod {
    /// `container`'s mounts as paths of this machine, each `subPath`
    /// resolved inside its volume now (an init container may have made it).
    pub fn mounts(&self, container: &ContainerPlan) -> Result<Vec<LocalMount>, RunError> {
        container
            .mounts
            .iter()
            .map(|mount| {
                let (dir, ours) = match &mount.from {
                    From::Local(dir) => (dir.clone(), false),
                    From::Volume(name) => self.volumes.get(name).cloned().ok_or_else(|| {
                        RunError::invalid(format!("the volume `{name}` is not the pod's"))
                    })?,
                };
                let source = match &mount.sub_path {
                    Some(sub) => sub_path(&dir, sub, ours).map_err(|why| {
                        RunError::cannot_start(format!(
                            "container `{}` could not start: the subPath `{sub}` of its mount at {}: {why}",
                            container.name, mount.target
                        ))
                    })?,
                    None => dir,
                };
                Ok(LocalMount {
                    target: mount.target.clone(),
                    source,
                    read_only: mount.read_only,
                })
            })
            .collect()
    }
}

/// `sub` (relative, without `..`) inside the volume `dir`: every link on
/// the way resolved, and refused if it leads out of the volume (the
/// kubelet's `PrepareSafeSubpath` refuses the same); a directory that is not
/// there is made when the volume is the run's (`ours`), and is an error in a
/// directory of this machine, which the run does not change.
fn sub_path(dir: &Path, sub: &str, ours: bool) -> Result<PathBuf, String> {
    let base = std::fs::canonicalize(dir).map_err(|e| crate::source::io_reason(&e))?;
    let mut path = base.clone();
    for part in sub.split('/').filter(|p| !p.is_empty() && *p != ".") {
        path.push(part);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let real =
                    std::fs::canonicalize(&path).map_err(|e| crate::source::io_reason(&e))?;
                if !real.starts_with(&base) {
                    return Err("it leads out of its volume through a link".to_owned());
                }
                path = real;
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && ours => {
                std::fs::DirBuilder::new()
                    .mode(0o755)
                    .create(&path)
                    .map_err(|e| crate::source::io_reason(&e))?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!(
                    "there is no `{part}` in {}, a directory of this machine that trainc run does not change",
                    dir.display()
                ));
            }
            Err(e) => return Err(crate::source::io_reason(&e)),
        }
    }
    Ok(path)
}

/// `parent/a/b/…`, each directory made by this writer (or already made by
/// it: a directory, never a link).
fn make_dirs(parent: &Path, parts: &[&str]) -> Result<PathBuf, RunError> {
    let mut path = parent.to_path_buf();
    for part in parts {
        debug_assert!(!part.is_empty() && *part != "." && *part != ".." && !part.contains('/'));
        path.push(part);
        match std::fs::DirBuilder::new().mode(0o755).create(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let meta = std::fs::symlink_metadata(&path).map_err(|e| RunError::io(&path, &e))?;
                if !meta.is_dir() {
                    return Err(RunError::io(
                        &path,
                        &std::io::Error::from(std::io::ErrorKind::AlreadyExists),
                    ));
                }
            }
            Err(e) => return Err(RunError::io(&path, &e)),
        }
    }
    Ok(path)
}

/// A new file with `bytes` and exactly `mode`; never through a link.
fn write_new(path: &Path, bytes: &[u8], mode: u32) -> Result<(), RunError> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| RunError::io(path, &e))?;
    file.write_all(bytes).map_err(|e| RunError::io(path, &e))?;
    // The umask may have taken bits the kubelet would give.
    file.set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(|e| RunError::io(path, &e))
}

/// 16 hexadecimal digits from the kernel's random source; from the
/// process, the time and an address where it cannot be read (the
/// directory's one `mkdir` is what makes it safe; this makes it
/// unpredictable).
fn random_hex() -> String {
    use std::io::Read as _;
    let mut bytes = [0u8; 8];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        use std::hash::{BuildHasher as _, Hasher as _};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        bytes = hasher.finish().to_le_bytes();
    }
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

#[cfg(test)]
mod tests {
    use super::{WorkDir, sub_path};
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("trainc-unit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_directory_is_fresh_private_and_removed() {
        let parent = scratch("workdir");
        let made = WorkDir::create(&parent).unwrap();
        let path = made.path().to_path_buf();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o700);
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(
            name.starts_with("trainc-run-") && name.len() == "trainc-run-".len() + 16,
            "{name}"
        );
        let other = WorkDir::create(&parent).unwrap();
        assert_ne!(other.path(), made.path());
        drop(made);
        assert!(!path.exists());
        drop(other);
        std::fs::remove_dir_all(&parent).unwrap();
    }

    #[test]
    fn a_sub_path_stays_in_its_volume() {
        let dir = scratch("subpath");
        let volume = dir.join("v");
        std::fs::create_dir_all(volume.join("in")).unwrap();
        std::os::unix::fs::symlink("/etc", volume.join("out")).unwrap();
        std::os::unix::fs::symlink("in", volume.join("alias")).unwrap();
        let real = std::fs::canonicalize(&volume).unwrap();
        assert_eq!(sub_path(&volume, "in", false).unwrap(), real.join("in"));
        assert_eq!(sub_path(&volume, "alias", false).unwrap(), real.join("in"));
        assert_eq!(
            sub_path(&volume, "out", true).unwrap_err(),
            "it leads out of its volume through a link"
        );
        assert!(sub_path(&volume, "new/deeper", false).is_err());
        assert!(!volume.join("new").exists());
        assert_eq!(
            sub_path(&volume, "new/deeper", true).unwrap(),
            real.join("new/deeper")
        );
        let mode = std::fs::metadata(volume.join("new"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
