//! Stage 1, read: source files into memory, size-limited and checked for UTF-8.
//!
//! Every span in trainc names the source it points into by a [`SourceId`], so a
//! diagnostic can show the right line of the right file (the base spec or an
//! overlay). This module owns the table of sources; it does not parse anything.

use std::fmt;
use std::path::Path;

/// The largest spec file trainc reads. Real specs are a few kilobytes; the limit
/// keeps a mistaken `trainc check /var/log/huge.log` from eating memory.
pub const MAX_SOURCE_BYTES: u64 = 4 * 1024 * 1024;
/// Largest manifest file `trainc verify` reads: a large repository's whole
/// rendered output in one stream.
pub const MAX_MANIFEST_BYTES: u64 = 64 * 1024 * 1024;

/// The name of the source that holds a command-line setting (`--set n=8`,
/// `compose::set_from_command_line`).
pub const COMMAND_LINE: &str = "<command line>";

/// Index of a source in [`Sources`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceId(pub u32);

/// A byte range in one source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Span {
    pub source: SourceId,
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(source: SourceId, start: usize, end: usize) -> Self {
        Span {
            source,
            start,
            end: end.max(start),
        }
    }

    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

/// One file (or standard input) as text, with the name diagnostics show for it.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub text: String,
    /// Where relative paths written in this source (`[code] files`) are
    /// found: the file's directory (empty for the working directory); `None`
    /// when the source is no file of the user's (standard input, a
    /// ResourceList, a config kustomize copied to a temporary file).
    pub dir: Option<std::path::PathBuf>,
    /// What the user knows this source as when its own name means nothing to
    /// them (kustomize's temporary copy of a generator config): diagnostics
    /// then name this and the field instead of a file, line and column.
    pub alias: Option<String>,
    /// Byte offsets where each line starts, built on first use: finding a
    /// line is then a binary search, so thousands of diagnostics on one big
    /// file take time linear in the file, not quadratic.
    line_starts: std::sync::OnceLock<Vec<usize>>,
    /// Characters before each [`CHAR_BLOCK`] bytes, built on first use: a
    /// column on a line of megabytes (a flow list) is then counted from
    /// the block that holds it, not from the start of the line.
    char_blocks: std::sync::OnceLock<Vec<usize>>,
}

/// Bytes between two character counts [`Source`] keeps.
const CHAR_BLOCK: usize = 4096;

/// Characters in UTF-8 `bytes`: the bytes that are not continuations.
fn chars_in(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b & 0xC0) != 0x80).count()
}

impl Source {
    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = floor_char_boundary(&self.text, offset.min(self.text.len()));
        let line = self.line_of(offset);
        let line_start = self.line_starts()[line];
        // A line of a few kilobytes is counted as it is; a longer one from
        // the block that holds the offset.
        let col = if offset - line_start <= CHAR_BLOCK {
            chars_in(&self.text.as_bytes()[line_start..offset])
        } else {
            self.chars_before(offset) - self.chars_before(line_start)
        };
        (line + 1, col + 1)
    }

    /// Characters of the text before byte `offset` (a character boundary).
    fn chars_before(&self, offset: usize) -> usize {
        let bytes = self.text.as_bytes();
        let blocks = self.char_blocks.get_or_init(|| {
            let mut counts = Vec::with_capacity(bytes.len() / CHAR_BLOCK + 1);
            let mut count = 0;
            counts.push(0);
            for block in bytes.chunks(CHAR_BLOCK) {
                count += chars_in(block);
                counts.push(count);
            }
            counts
        });
        let block = offset / CHAR_BLOCK;
        blocks[block] + chars_in(&bytes[block * CHAR_BLOCK..offset])
    }

    /// The 0-based line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        self.line_starts()
            .partition_point(|&start| start <= offset)
            .saturating_sub(1)
    }

    /// The byte range of 0-based `line`, without its line break.
    pub fn line_range(&self, line: usize) -> std::ops::Range<usize> {
        let starts = self.line_starts();
        let start = starts.get(line).copied().unwrap_or(self.text.len());
        let end = starts
            .get(line + 1)
            .map_or(self.text.len(), |next| next - 1);
        start..end.max(start)
    }

    fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(self.text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        })
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// All sources of one compilation, indexed by [`SourceId`].
#[derive(Debug, Default, Clone)]
pub struct Sources {
    sources: Vec<Source>,
}

impl Sources {
    pub fn new() -> Self {
        Sources::default()
    }

    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> SourceId {
        let id = SourceId(u32::try_from(self.sources.len()).expect("fewer than 2^32 sources"));
        self.sources.push(Source {
            name: name.into(),
            text: text.into(),
            dir: None,
            alias: None,
            line_starts: std::sync::OnceLock::new(),
            char_blocks: std::sync::OnceLock::new(),
        });
        id
    }

    /// Names a source for the user (see [`Source::alias`]).
    pub fn set_alias(&mut self, id: SourceId, alias: String) {
        self.sources[id.0 as usize].alias = Some(alias);
    }

    /// Says where relative paths in a source are found (see [`Source::dir`]).
    pub fn set_dir(&mut self, id: SourceId, dir: Option<std::path::PathBuf>) {
        self.sources[id.0 as usize].dir = dir;
    }

    pub fn get(&self, id: SourceId) -> &Source {
        &self.sources[id.0 as usize]
    }

    /// How many sources there are.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// Moves into this set the sources that `other` (a clone of this set when
    /// it held `shared` sources) added since; returns how `other`'s ids map
    /// to ids here.
    pub fn absorb(&mut self, other: Sources, shared: usize) -> impl Fn(SourceId) -> SourceId {
        let offset = u32::try_from(self.sources.len() - shared).expect("fewer than 2^32 sources");
        let shared = u32::try_from(shared).expect("fewer than 2^32 sources");
        self.sources
            .extend(other.sources.into_iter().skip(shared as usize));
        move |id| {
            if id.0 < shared {
                id
            } else {
                SourceId(id.0 + offset)
            }
        }
    }
}

/// Why a file could not be turned into a source.
#[derive(Debug)]
pub enum ReadError {
    /// The file could not be opened or read: a usage or I/O problem (exit 2).
    Io { name: String, error: std::io::Error },
    /// The file was read but cannot be a spec (too large, not UTF-8): exit 1.
    /// A diagnostic at its span (`Diagnostic::from`, in `diagnostic`).
    Invalid(Unusable),
}

/// What makes a file that was read unusable, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unusable {
    /// Over `limit` bytes; the span is the empty start of the (empty) source.
    TooLarge {
        name: String,
        span: Span,
        limit: u64,
    },
    /// Not UTF-8: the span is at the first invalid byte, after the valid text.
    NotUtf8 { name: String, span: Span },
}

impl Unusable {
    pub fn span(&self) -> Span {
        match self {
            Unusable::TooLarge { span, .. } | Unusable::NotUtf8 { span, .. } => *span,
        }
    }

    pub fn message(&self) -> String {
        match self {
            Unusable::TooLarge { name, limit, .. } => {
                format!("`{name}` is larger than {} MiB", limit / (1024 * 1024))
            }
            Unusable::NotUtf8 { name, .. } => format!("`{name}` is not valid UTF-8"),
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io { name, error } => {
                write!(f, "cannot read `{name}`: {}", io_reason(error))
            }
            ReadError::Invalid(unusable) => f.write_str(&unusable.message()),
        }
    }
}

/// Reads a file (or standard input for `-`) into `sources`.
///
/// Files over [`MAX_SOURCE_BYTES`] are refused before they are read whole, and
/// invalid UTF-8 is reported at the line and column of the first bad byte.
pub fn read(sources: &mut Sources, path: &Path) -> Result<SourceId, ReadError> {
    read_limited(sources, path, MAX_SOURCE_BYTES)
}

/// [`read`] with another size limit: a repository's rendered manifests
/// ([`MAX_MANIFEST_BYTES`]) are far larger than a spec.
pub fn read_limited(sources: &mut Sources, path: &Path, limit: u64) -> Result<SourceId, ReadError> {
    use std::io::Read;

    let name = path.display().to_string();
    let io = |error| ReadError::Io {
        name: name.clone(),
        error,
    };
    let mut bytes = Vec::new();
    if path == Path::new("-") {
        std::io::stdin()
            .lock()
            .take(limit + 1)
            .read_to_end(&mut bytes)
            .map_err(io)?;
    } else {
        let file = std::fs::File::open(path).map_err(io)?;
        let metadata = file.metadata().map_err(io)?;
        if metadata.is_dir() {
            return Err(io(std::io::Error::other("is a directory")));
        }
        // The file's size, not twice what was read so far: a 20 MB stream
        // would otherwise hold 32 MB, and 48 MB while the buffer grows.
        bytes.reserve_exact(usize::try_from(metadata.len().min(limit + 1)).unwrap_or(0));
        file.take(limit + 1).read_to_end(&mut bytes).map_err(io)?;
    }
    bytes.shrink_to_fit();
    let (name, dir) = if path == Path::new("-") {
        ("<stdin>".to_owned(), None)
    } else {
        // A file in the working directory has the directory `` (written as
        // nothing, so paths joined to it read as written).
        let dir = Some(
            path.parent()
                .map_or_else(Default::default, Path::to_path_buf),
        );
        (name, dir)
    };
    let id = add_bytes_limited(sources, name, bytes, limit)?;
    sources.set_dir(id, dir);
    Ok(id)
}

/// Which of `ranges` (byte ranges of a text, in order and apart) holds
/// byte `at`: found by a binary search, as thousands of objects' problems
/// are placed among thousands of objects.
pub fn range_holding(ranges: &[std::ops::Range<usize>], at: usize) -> Option<usize> {
    let i = ranges.partition_point(|r| r.start <= at);
    i.checked_sub(1).filter(|&i| ranges[i].contains(&at))
}

/// The directory that holds `path`: `.` for a bare file name (whose
/// `parent()` is the empty path, which no file call accepts), `/` for the root.
pub fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if parent.as_os_str().is_empty() => Path::new("."),
        Some(parent) => parent,
        None => Path::new("/"),
    }
}

/// Adds already-read bytes as a source, applying the same limits as [`read`].
pub fn add_bytes(
    sources: &mut Sources,
    name: String,
    bytes: Vec<u8>,
) -> Result<SourceId, ReadError> {
    add_bytes_limited(sources, name, bytes, MAX_SOURCE_BYTES)
}

/// [`add_bytes`] with another size limit (a ResourceList holds more than a spec).
pub fn add_bytes_limited(
    sources: &mut Sources,
    name: String,
    bytes: Vec<u8>,
    limit: u64,
) -> Result<SourceId, ReadError> {
    if bytes.len() as u64 > limit {
        let id = sources.add(name.clone(), String::new());
        return Err(ReadError::Invalid(Unusable::TooLarge {
            name,
            span: Span::new(id, 0, 0),
            limit,
        }));
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(sources.add(name, text)),
        Err(error) => {
            let valid = error.utf8_error().valid_up_to();
            let bytes = error.into_bytes();
            // Keep the valid prefix so the diagnostic can show where the bad byte is.
            let text = String::from_utf8_lossy(&bytes[..valid]).into_owned();
            let id = sources.add(name.clone(), text);
            Err(ReadError::Invalid(Unusable::NotUtf8 {
                name,
                span: Span::new(id, valid, valid),
            }))
        }
    }
}

/// Why a file could not be read, in plain words (no `(os error 2)`).
/// Opens a file for reading without following a link at its last component
/// and without waiting, should it be a FIFO (opening one for reading waits
/// for a writer): for files trainc did not name itself (`[code]` files, an
/// output directory's manifests), whose kind the caller then checks.
pub fn open_no_wait(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    options.open(path)
}

pub fn io_reason(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        std::io::ErrorKind::IsADirectory => "it is a directory".to_owned(),
        _ => {
            let text = error.to_string();
            match text.find(" (os error") {
                Some(i) => text[..i].to_owned(),
                None => text,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters() {
        let mut sources = Sources::new();
        let id = sources.add("a", "ab\nçd = 1\n");
        let source = sources.get(id);
        assert_eq!(source.line_col(0), (1, 1));
        assert_eq!(source.line_col(3), (2, 1));
        assert_eq!(source.line_col(6), (2, 3)); // after the two-byte `ç` and `d`
    }

    #[test]
    fn a_column_on_a_long_line_counts_characters_across_blocks() {
        let mut sources = Sources::new();
        // A line of 3 bytes then 20,000 two-byte characters, after a short one.
        let text = format!("ab\nx: {}z\n", "é".repeat(20_000));
        let id = sources.add("a", text.clone());
        let source = sources.get(id);
        let z = text.find('z').unwrap();
        assert_eq!(source.line_col(z), (2, 3 + 20_000 + 1));
        let middle = 3 + 3 + 2 * 9_999;
        assert_eq!(source.line_col(middle), (2, 3 + 9_999 + 1));
    }

    #[test]
    fn oversized_and_non_utf8_are_diagnostics() {
        let mut sources = Sources::new();
        let big = vec![b'a'; usize::try_from(MAX_SOURCE_BYTES).unwrap() + 1];
        assert!(matches!(
            add_bytes(&mut sources, "big".into(), big),
            Err(ReadError::Invalid(_))
        ));
        let err = add_bytes(&mut sources, "bad".into(), b"name = \"\xff\"".to_vec()).unwrap_err();
        let ReadError::Invalid(unusable) = err else {
            panic!("expected an unusable file")
        };
        assert!(matches!(unusable, Unusable::NotUtf8 { .. }));
        assert_eq!(unusable.span().start, 8);
    }
}
