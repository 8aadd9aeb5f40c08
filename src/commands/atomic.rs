//! Writing output files all or nothing.
//!
//! Every file is first written in full to a new hidden file beside its
//! target (created exclusively, so a symlink planted at that name is never
//! followed) and flushed to disk; only when all of them are written are they
//! renamed into place. A full disk or any other failure removes the
//! temporaries and leaves the directory as it was: no truncated manifest that
//! still parses, no half of a build. A rename replaces a symlink at the
//! target name rather than writing through it.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// How an existing file at a target is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Existing {
    Replace,
    /// Fail with `AlreadyExists` and write nothing.
    Keep,
}

/// Writes each `(path, text)`; either all are in place afterwards or none
/// changed. The error names the path it is about.
pub(super) fn write_all(
    files: &[(PathBuf, &str)],
    existing: Existing,
) -> Result<(), (PathBuf, std::io::Error)> {
    let mut temporaries: Vec<PathBuf> = Vec::new();
    let remove_all = |paths: &[PathBuf]| {
        for path in paths {
            let _ = std::fs::remove_file(path);
        }
    };
    for (i, (path, text)) in files.iter().enumerate() {
        // A directory at a target cannot be replaced: fail before writing.
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
            remove_all(&temporaries);
            return Err((path.clone(), std::io::Error::other("it is a directory")));
        }
        let temporary = temporary_for(path, i, "");
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
            .and_then(|mut file| {
                temporaries.push(temporary.clone());
                file.write_all(text.as_bytes())?;
                file.sync_all()
            });
        if let Err(error) = written {
            remove_all(&temporaries);
            return Err((path.clone(), error));
        }
    }
    // What each target held before, kept under a second name until every
    // file is in place, so that a failure halfway can put it back.
    let mut backups: Vec<Option<PathBuf>> = Vec::new();
    if existing == Existing::Replace {
        for (i, (path, _)) in files.iter().enumerate() {
            let backup = temporary_for(path, i, ".old");
            match std::fs::hard_link(path, &backup) {
                Ok(()) => backups.push(Some(backup)),
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => backups.push(None),
                Err(error) => {
                    remove_all(&temporaries);
                    remove_all(&backups.iter().flatten().cloned().collect::<Vec<_>>());
                    return Err((path.clone(), error));
                }
            }
        }
    }
    for (i, ((path, _), temporary)) in files.iter().zip(&temporaries).enumerate() {
        let placed = match existing {
            Existing::Replace => std::fs::rename(temporary, path),
            // A hard link fails if the target exists, whatever it is.
            Existing::Keep => std::fs::hard_link(temporary, path),
        };
        if let Err(error) = placed {
            // Undo the files already placed, newest first.
            for (j, (done, _)) in files.iter().enumerate().take(i).rev() {
                match backups.get(j).cloned().flatten() {
                    Some(backup) => {
                        let _ = std::fs::rename(&backup, done);
                    }
                    None => {
                        let _ = std::fs::remove_file(done);
                    }
                }
            }
            remove_all(&temporaries);
            remove_all(&backups.iter().flatten().cloned().collect::<Vec<_>>());
            return Err((path.clone(), error));
        }
    }
    if existing == Existing::Keep {
        remove_all(&temporaries);
    }
    remove_all(&backups.into_iter().flatten().collect::<Vec<_>>());
    Ok(())
}

/// `.NAME.trainc-PID-ISUFFIX` beside `path`.
fn temporary_for(path: &Path, i: usize, suffix: &str) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.trainc-{}-{i}{suffix}", std::process::id()))
}

/// [`write_all`], replacing files already there only when `force`; the
/// error as a sentence that says nothing was written.
pub(super) fn write_all_or_say(files: &[(PathBuf, &str)], force: bool) -> Result<(), String> {
    let existing = if force {
        Existing::Replace
    } else {
        Existing::Keep
    };
    write_all(files, existing).map_err(|(path, error)| {
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
mod tests {
    use super::*;

    #[test]
    fn a_failure_leaves_nothing_and_symlinks_are_not_followed() {
        let dir = std::env::temp_dir().join(format!("trainc-atomic-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // The second file cannot be written (its directory does not exist):
        // the first must not appear either.
        let files = [
            (dir.join("a.yaml"), "a: 1\n"),
            (dir.join("missing/b.yaml"), "b: 1\n"),
        ];
        assert!(write_all(&files, Existing::Replace).is_err());
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "nothing left behind"
        );
        // A symlink at the target is replaced, not written through.
        let outside = dir.join("outside.txt");
        std::fs::write(&outside, "keep").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&outside, dir.join("c.yaml")).unwrap();
            write_all(&[(dir.join("c.yaml"), "c: 1\n")], Existing::Replace).unwrap();
            assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
            assert_eq!(
                std::fs::read_to_string(dir.join("c.yaml")).unwrap(),
                "c: 1\n"
            );
        }
        // A rename that fails halfway (the second target is a directory)
        // leaves the first file as it was, and nothing else behind.
        std::fs::write(dir.join("d.yaml"), "old\n").unwrap();
        std::fs::create_dir(dir.join("e.yaml")).unwrap();
        let before = std::fs::read_dir(&dir).unwrap().count();
        let failed = write_all(
            &[(dir.join("d.yaml"), "new\n"), (dir.join("e.yaml"), "e\n")],
            Existing::Replace,
        );
        assert!(failed.is_err());
        assert_eq!(
            std::fs::read_to_string(dir.join("d.yaml")).unwrap(),
            "old\n"
        );
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            before,
            "no temporary or backup left"
        );
        // Placing fails at the second file (it exists): the first, placed
        // already, is taken back.
        let failed = write_all(
            &[(dir.join("f.yaml"), "f\n"), (dir.join("d.yaml"), "d\n")],
            Existing::Keep,
        );
        assert_eq!(
            failed.unwrap_err().1.kind(),
            std::io::ErrorKind::AlreadyExists
        );
        assert!(!dir.join("f.yaml").exists());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), before);
        let kept = write_all(&[(outside.clone(), "x")], Existing::Keep).unwrap_err();
        assert_eq!(kept.1.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
