//! The one writer of output files: all or nothing, and only where asked.
//!
//! Every command that writes files (`build --output-dir`, `import`,
//! `migrate`, `init`, `man`) hands [`write_all`] a directory the user named
//! (made when missing; a link there is the user's own choice, and followed)
//! and paths relative to it. Inside that directory nothing is followed: a
//! directory on the way that is a symbolic link is refused (a pull request
//! can commit `out/team -> /somewhere/else`), the directories missing are
//! made, and each file is first written in full to a new hidden file beside
//! its target (created exclusively, so a link planted at that name is never
//! followed either) and flushed to disk. Only when all of them are written
//! are they renamed into place: a rename replaces a link at the target's
//! name rather than writing through it. A full disk or any other failure
//! removes the temporaries and the directories made, and puts back what
//! was replaced: no truncated manifest that still parses, no half of a
//! build. On Linux every step is taken relative to a directory opened
//! without following links (`openat`), so a link swapped in on the way
//! cannot redirect a write either.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io::Write as _;
use std::path::{Component, Path, PathBuf};

/// How an existing file at a target is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Existing {
    Replace,
    /// Fail with `AlreadyExists` and write nothing.
    Keep,
}

/// Writes each `(path, text)`, the paths relative to `root`; either all are
/// in place afterwards or nothing changed. The error names the path it is
/// about (`root` joined to it).
pub(super) fn write_all(
    root: &Path,
    files: &[(PathBuf, &str)],
    existing: Existing,
) -> Result<(), (PathBuf, std::io::Error)> {
    for (path, _) in files {
        if !inside(path) {
            return Err((
                root.join(path),
                std::io::Error::other("it is not a path inside the output directory"),
            ));
        }
    }
    let root_existed = std::fs::metadata(root).is_ok();
    if !root_existed && let Err(error) = std::fs::create_dir_all(root) {
        return Err((root.to_path_buf(), error));
    }
    let mut writing = Writing {
        root,
        dirs: BTreeMap::new(),
        made: Vec::new(),
        temporaries: Vec::new(),
        backups: Vec::new(),
    };
    let result = writing.write(files, existing);
    if result.is_err() {
        writing.undo();
        if !root_existed {
            let _ = std::fs::remove_dir(root);
        }
    }
    result
}

/// Whether `path` names a file below a directory: a name, or names joined,
/// with no `..`, no root and nothing empty.
fn inside(path: &Path) -> bool {
    path.file_name().is_some() && path.components().all(|c| matches!(c, Component::Normal(_)))
}

/// One call of [`write_all`] under way: what it opened and made, to undo.
struct Writing<'a> {
    root: &'a Path,
    /// Each directory a file goes into, by its path relative to the root.
    dirs: BTreeMap<PathBuf, dir::Dir>,
    /// Directories made, in the order made.
    made: Vec<PathBuf>,
    /// Each file's temporary (its directory and name), in the files' order.
    temporaries: Vec<(PathBuf, OsString)>,
    /// What each target held before, under a second name until every file
    /// is in place; `None` where there was nothing.
    backups: Vec<Option<(PathBuf, OsString)>>,
}

impl Writing<'_> {
    fn write(
        &mut self,
        files: &[(PathBuf, &str)],
        existing: Existing,
    ) -> Result<(), (PathBuf, std::io::Error)> {
        let parts: Vec<(PathBuf, &OsStr)> = files
            .iter()
            .map(|(path, _)| {
                let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
                (parent, path.file_name().unwrap_or_default())
            })
            .collect();
        let root = self.root;
        for (i, ((path, text), (parent, name))) in files.iter().zip(&parts).enumerate() {
            let failed = |error| (root.join(path), error);
            self.open_dir(parent).map_err(failed)?;
            let dir = &self.dirs[parent];
            // A directory at a target cannot be replaced: fail before writing.
            if dir.is_dir(name) {
                return Err(failed(std::io::Error::other("it is a directory")));
            }
            let temporary = temporary_for(name, i, "");
            let mut file = dir.create_new(&temporary).map_err(failed)?;
            self.temporaries.push((parent.clone(), temporary));
            file.write_all(text.as_bytes())
                .and_then(|()| file.sync_all())
                .map_err(failed)?;
        }
        if existing == Existing::Replace {
            for (i, ((path, _), (parent, name))) in files.iter().zip(&parts).enumerate() {
                let backup = temporary_for(name, i, ".old");
                match self.dirs[parent].link(name, &backup) {
                    Ok(()) => self.backups.push(Some((parent.clone(), backup))),
                    Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                        self.backups.push(None);
                    }
                    Err(error) => return Err((self.root.join(path), error)),
                }
            }
        }
        for (i, ((path, _), (parent, name))) in files.iter().zip(&parts).enumerate() {
            let dir = &self.dirs[parent];
            let temporary = &self.temporaries[i].1;
            let placed = match existing {
                Existing::Replace => dir.rename(temporary, name),
                // A hard link fails if the target exists, whatever it is.
                Existing::Keep => dir.link(temporary, name),
            };
            if let Err(error) = placed {
                self.put_back(&parts[..i]);
                return Err((self.root.join(path), error));
            }
        }
        // Done: what is left are the temporaries of `Keep` (each file has
        // its second name) and the backups.
        if existing == Existing::Keep {
            self.remove_temporaries();
        }
        self.remove_backups();
        self.made.clear();
        Ok(())
    }

    /// The directory `relative` (to the root) opened, and every directory
    /// on the way made where missing; one that is a link is refused.
    fn open_dir(&mut self, relative: &Path) -> std::io::Result<()> {
        if self.dirs.contains_key(relative) {
            return Ok(());
        }
        let mut at = PathBuf::new();
        if !self.dirs.contains_key(&at) {
            self.dirs.insert(at.clone(), dir::Dir::open(self.root)?);
        }
        for name in relative {
            let next = at.join(name);
            if !self.dirs.contains_key(&next) {
                let shown = self.root.join(&next);
                let (child, made) = self.dirs[&at].child(name, &shown)?;
                if made {
                    self.made.push(next.clone());
                }
                self.dirs.insert(next.clone(), child);
            }
            at = next;
        }
        Ok(())
    }

    /// The targets of `placed` as they were before: each backup renamed
    /// back, or the file placed removed, newest first.
    fn put_back(&mut self, placed: &[(PathBuf, &OsStr)]) {
        for (j, (parent, name)) in placed.iter().enumerate().rev() {
            let dir = &self.dirs[parent];
            match self.backups.get_mut(j).and_then(Option::take) {
                Some((_, backup)) => {
                    let _ = dir.rename(&backup, name);
                }
                None => {
                    let _ = dir.remove(name);
                }
            }
        }
    }

    fn remove_temporaries(&mut self) {
        for (parent, name) in std::mem::take(&mut self.temporaries) {
            let _ = self.dirs[&parent].remove(&name);
        }
    }

    fn remove_backups(&mut self) {
        for (parent, name) in std::mem::take(&mut self.backups).into_iter().flatten() {
            let _ = self.dirs[&parent].remove(&name);
        }
    }

    /// After a failure: no temporary, no backup, no directory made.
    fn undo(&mut self) {
        self.remove_temporaries();
        self.remove_backups();
        for made in std::mem::take(&mut self.made).iter().rev() {
            let parent = made.parent().map(Path::to_path_buf).unwrap_or_default();
            if let (Some(dir), Some(name)) = (self.dirs.get(&parent), made.file_name()) {
                let _ = dir.remove_dir(name);
            }
        }
    }
}

/// `.NAME.trainc-PID-ISUFFIX`, the name of a file beside `NAME`.
fn temporary_for(name: &OsStr, i: usize, suffix: &str) -> OsString {
    OsString::from(format!(
        ".{}.trainc-{}-{i}{suffix}",
        name.to_string_lossy(),
        std::process::id()
    ))
}

/// Why a directory on the way is refused.
fn not_followed(shown: &Path) -> std::io::Error {
    std::io::Error::other(format!(
        "`{}` is a symbolic link, which trainc does not follow inside the directory it writes to (remove the link, or write somewhere else)",
        shown.display()
    ))
}

fn not_a_directory(shown: &Path) -> std::io::Error {
    std::io::Error::other(format!("`{}` is not a directory", shown.display()))
}

/// A directory, by a handle that does not follow links (Linux).
#[cfg(target_os = "linux")]
mod dir {
    use std::ffi::OsStr;
    use std::os::fd::OwnedFd;
    use std::path::Path;

    use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags};
    use rustix::io::Errno;

    pub(super) struct Dir(OwnedFd);

    const DIRECTORY: OFlags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::CLOEXEC);

    impl Dir {
        /// The directory the user named (a link there is followed).
        pub(super) fn open(path: &Path) -> std::io::Result<Dir> {
            Ok(Dir(rustix::fs::openat(
                CWD,
                path,
                DIRECTORY,
                Mode::empty(),
            )?))
        }

        /// The directory `name` in this one, made when missing (and `true`
        /// then); never through a link. `shown` is its path, for the error.
        pub(super) fn child(&self, name: &OsStr, shown: &Path) -> std::io::Result<(Dir, bool)> {
            let flags = DIRECTORY | OFlags::NOFOLLOW;
            let mut made = false;
            loop {
                match rustix::fs::openat(&self.0, name, flags, Mode::empty()) {
                    Ok(fd) => return Ok((Dir(fd), made)),
                    Err(Errno::NOENT) if !made => {
                        match rustix::fs::mkdirat(&self.0, name, Mode::from_raw_mode(0o777)) {
                            Ok(()) => made = true,
                            // Made by another in between: open it.
                            Err(Errno::EXIST) => {}
                            Err(error) => return Err(error.into()),
                        }
                    }
                    Err(Errno::LOOP | Errno::NOTDIR) => {
                        let link = rustix::fs::statat(&self.0, name, AtFlags::SYMLINK_NOFOLLOW)
                            .is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Symlink);
                        return Err(if link {
                            super::not_followed(shown)
                        } else {
                            super::not_a_directory(shown)
                        });
                    }
                    Err(error) => return Err(error.into()),
                }
            }
        }

        pub(super) fn is_dir(&self, name: &OsStr) -> bool {
            rustix::fs::statat(&self.0, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Directory)
        }

        /// A new file `name`, which must not exist (not even as a link).
        pub(super) fn create_new(&self, name: &OsStr) -> std::io::Result<std::fs::File> {
            let flags =
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = rustix::fs::openat(&self.0, name, flags, Mode::from_raw_mode(0o666))?;
            Ok(std::fs::File::from(fd))
        }

        /// A second name `to` for the file `from` (a link is linked, not followed).
        pub(super) fn link(&self, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
            Ok(rustix::fs::linkat(
                &self.0,
                from,
                &self.0,
                to,
                AtFlags::empty(),
            )?)
        }

        pub(super) fn rename(&self, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
            Ok(rustix::fs::renameat(&self.0, from, &self.0, to)?)
        }

        pub(super) fn remove(&self, name: &OsStr) -> std::io::Result<()> {
            Ok(rustix::fs::unlinkat(&self.0, name, AtFlags::empty())?)
        }

        pub(super) fn remove_dir(&self, name: &OsStr) -> std::io::Result<()> {
            Ok(rustix::fs::unlinkat(&self.0, name, AtFlags::REMOVEDIR)?)
        }
    }
}

/// A directory, by its path, each step checked not to be a link first.
#[cfg(not(target_os = "linux"))]
mod dir {
    use std::ffi::OsStr;
    use std::path::{Path, PathBuf};

    pub(super) struct Dir(PathBuf);

    impl Dir {
        pub(super) fn open(path: &Path) -> std::io::Result<Dir> {
            if std::fs::metadata(path)?.is_dir() {
                Ok(Dir(path.to_path_buf()))
            } else {
                Err(super::not_a_directory(path))
            }
        }

        pub(super) fn child(&self, name: &OsStr, shown: &Path) -> std::io::Result<(Dir, bool)> {
            let path = self.0.join(name);
            let mut made = false;
            if std::fs::symlink_metadata(&path).is_err() {
                match std::fs::create_dir(&path) {
                    Ok(()) => made = true,
                    Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(error) => return Err(error),
                }
            }
            let meta = std::fs::symlink_metadata(&path)?;
            if meta.file_type().is_symlink() {
                Err(super::not_followed(shown))
            } else if meta.is_dir() {
                Ok((Dir(path), made))
            } else {
                Err(super::not_a_directory(shown))
            }
        }

        pub(super) fn is_dir(&self, name: &OsStr) -> bool {
            std::fs::symlink_metadata(self.0.join(name)).is_ok_and(|m| m.is_dir())
        }

        pub(super) fn create_new(&self, name: &OsStr) -> std::io::Result<std::fs::File> {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(self.0.join(name))
        }

        pub(super) fn link(&self, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
            std::fs::hard_link(self.0.join(from), self.0.join(to))
        }

        pub(super) fn rename(&self, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
            std::fs::rename(self.0.join(from), self.0.join(to))
        }

        pub(super) fn remove(&self, name: &OsStr) -> std::io::Result<()> {
            std::fs::remove_file(self.0.join(name))
        }

        pub(super) fn remove_dir(&self, name: &OsStr) -> std::io::Result<()> {
            std::fs::remove_dir(self.0.join(name))
        }
    }
}

/// [`write_all`], replacing files already there only when `force`; the
/// error as a sentence that says nothing was written.
pub(super) fn write_all_or_say(
    root: &Path,
    files: &[(PathBuf, &str)],
    force: bool,
) -> Result<(), String> {
    let existing = if force {
        Existing::Replace
    } else {
        Existing::Keep
    };
    write_all(root, files, existing).map_err(|(path, error)| {
        if error.kind() == std::io::ErrorKind::AlreadyExists {
            format!(
                "`{}` exists; pass `--force` to replace it (nothing was written)",
                path.display()
            )
        } else {
            format!(
                "cannot write `{}`: {}; nothing was written",
                path.display(),
                trainc::source::io_reason(&error)
            )
        }
    })
}

#[cfg(test)]
mod tests;
