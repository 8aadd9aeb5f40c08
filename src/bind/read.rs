//! Reading a file by [`super::Root`]'s rule: its real path (every link
//! resolved) inside the root, not a file of the kernel, a regular file (a
//! FIFO is never opened), at most a given size; as text for `[code]` and
//! the runtimes file, as bytes for `trainc run`'s stand-ins.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use super::Root;
use crate::code::MAX_BYTES;
use crate::diagnostic::escape_for_terminal;

/// Another file a spec names (`what`: the runtimes file), `path` as written in the
/// file `base` is the directory of, read by the rule of [`Root`] and at most
/// `max` bytes: its text and the path it was read from, or why not and how
/// to fix it.
pub(crate) fn read_named(
    what: &str,
    path: &str,
    base: Option<&Path>,
    root: &Root,
    max: usize,
) -> Result<(String, PathBuf), (String, String)> {
    let full = base.map_or_else(|| PathBuf::from(path), |dir| dir.join(path));
    let shown = || escape_for_terminal(&full.display().to_string());
    let real_root = std::fs::canonicalize(&root.dir)
        .map_err(|e| (crate::source::io_reason(&e), root.help(what)))?;
    // With `remaining` at `max`, a file is read whole or refused as too large.
    match read(&full, &real_root, max, max) {
        Ok(Loaded::Text(text)) => Ok((text, full)),
        Ok(Loaded::Over(_)) => Err((Refusal::TooLarge(max).to_string(), String::new())),
        Err(why @ Refusal::Outside(_)) => Err((why.to_string(), root.help(what))),
        Err(Refusal::Kind("a directory")) => {
            Err(("it is a directory, not a file".to_owned(), String::new()))
        }
        Err(why) => Err((
            why.to_string(),
            format!(
                "paths are relative to the file that names them; this one is read from `{}`",
                shown()
            ),
        )),
    }
}

/// What reading one file gave.
pub(super) enum Loaded {
    Text(String),
    /// Not read: its size would take the files past [`MAX_BYTES`].
    Over(usize),
}

/// Why a file is not shipped.
#[derive(Debug)]
pub(super) enum Refusal {
    Io(std::io::Error),
    /// Its real path, outside the root; whether the path as written is a link.
    Outside(bool),
    Kind(&'static str),
    Kernel,
    NotText(usize),
    Nul(usize),
    /// Larger than the limit of its kind, in bytes.
    TooLarge(usize),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Io(error) => f.write_str(&crate::source::io_reason(error)),
            Refusal::Outside(true) => f.write_str("it is a link to a file outside the code root"),
            Refusal::Outside(false) => f.write_str("it is outside the code root"),
            Refusal::Kind("a directory") => f.write_str("it is a directory; list the files in it"),
            Refusal::Kind(kind) => write!(f, "it is {kind}, not a regular file"),
            Refusal::Kernel => f.write_str(
                "it is a file of the kernel (`/proc`, `/sys` or `/dev`), not source code",
            ),
            Refusal::NotText(at) => write!(
                f,
                "it is not UTF-8 text (byte {at} is invalid); ship source code, not data"
            ),
            Refusal::Nul(at) => write!(
                f,
                "it holds a NUL byte (at byte {at}); ship source code, not data"
            ),
            Refusal::TooLarge(MAX_BYTES) => {
                f.write_str("it is larger than 1 MiB, all a ConfigMap holds")
            }
            Refusal::TooLarge(max) => write!(f, "it is larger than {} MiB", max / (1024 * 1024)),
        }
    }
}

/// A file's content when [`Root`]'s rule allows it, it is at most `max`
/// bytes and fits in `remaining` (else only its size).
pub(super) fn read(
    path: &Path,
    real_root: &Path,
    remaining: usize,
    max: usize,
) -> Result<Loaded, Refusal> {
    let bytes = match read_bytes(path, real_root, remaining, max)? {
        Ok(bytes) => bytes,
        Err(size) => return Ok(Loaded::Over(size)),
    };
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(Refusal::Nul(at));
    }
    String::from_utf8(bytes)
        .map(Loaded::Text)
        .map_err(|e| Refusal::NotText(e.utf8_error().valid_up_to()))
}

/// The bytes of the file `path`, read by [`Root`]'s rule with the directory
/// `dir` as the root (a regular file whose real path is inside `dir`, not
/// a file of the kernel), when at most `max` bytes; else why not, in words.
/// `trainc run` reads the directories of `--configmap` and `--secret` so.
pub(crate) fn read_within(path: &Path, dir: &Path, max: usize) -> Result<Vec<u8>, String> {
    let real_root = std::fs::canonicalize(dir).map_err(|e| crate::source::io_reason(&e))?;
    match read_bytes(path, &real_root, max, max) {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(_)) | Err(Refusal::TooLarge(_)) => Err(format!(
            "it is larger than {} KiB, all a ConfigMap or Secret holds",
            max / 1024
        )),
        Err(Refusal::Outside(_)) => Err(format!(
            "it is a link to a file outside `{}`",
            escape_for_terminal(&dir.display().to_string())
        )),
        Err(why) => Err(why.to_string()),
    }
}

/// A file's bytes when [`Root`]'s rule allows it and it is at most `max`
/// bytes: `Ok(Err(size))` when it does not fit in `remaining`.
fn read_bytes(
    path: &Path,
    real_root: &Path,
    remaining: usize,
    max: usize,
) -> Result<Result<Vec<u8>, usize>, Refusal> {
    // The real path: `..` and every link resolved, without opening anything.
    let real = std::fs::canonicalize(path).map_err(Refusal::Io)?;
    if !real.starts_with(real_root) {
        let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        return Err(Refusal::Outside(link));
    }
    if ["/proc", "/sys", "/dev"]
        .iter()
        .any(|k| real.starts_with(k))
    {
        return Err(Refusal::Kernel);
    }
    // Checked before opening: opening a FIFO for reading waits for a writer.
    let kind = file_kind(&std::fs::symlink_metadata(&real).map_err(Refusal::Io)?);
    if let Some(kind) = kind {
        return Err(Refusal::Kind(kind));
    }
    let file = crate::source::open_no_wait(&real).map_err(Refusal::Io)?;
    let metadata = file.metadata().map_err(Refusal::Io)?;
    // Checked again on what was opened, in case the path changed in between.
    if let Some(kind) = file_kind(&metadata) {
        return Err(Refusal::Kind(kind));
    }
    let size = usize::try_from(metadata.len()).unwrap_or(usize::MAX);
    if size > max {
        return Err(Refusal::TooLarge(max));
    }
    if size > remaining {
        return Ok(Err(size));
    }
    let mut bytes = Vec::with_capacity(size);
    file.take(max as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(Refusal::Io)?;
    if bytes.len() > max {
        return Err(Refusal::TooLarge(max));
    }
    Ok(Ok(bytes))
}

/// What a file is when it is not a regular file.
fn file_kind(metadata: &std::fs::Metadata) -> Option<&'static str> {
    #[cfg(unix)]
    use std::os::unix::fs::FileTypeExt as _;
    let kind = metadata.file_type();
    if kind.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        if kind.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
        if kind.is_block_device() || kind.is_char_device() {
            return Some("a device");
        }
    }
    Some(if kind.is_dir() {
        "a directory"
    } else {
        "not a file"
    })
}
