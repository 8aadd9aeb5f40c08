//! Text embedded in the binary compressed: the strict schemas of
//! `schemas/compact/` (1.7 MB of JSON, 0.23 MB as LZ4) are stored as
//! `schemas/compact/*.json.lz4`, derived from the `.json` beside them and
//! locked to them by a test, and each is read out once, on first use, at
//! about three instructions a byte. The spec's own schemas, which every
//! `build` and `check` reads, stay plain text.

use std::sync::OnceLock;

/// One compressed text (LZ4 with its size in front), read out once.
pub struct Compressed {
    bytes: &'static [u8],
    text: OnceLock<String>,
}

impl Compressed {
    pub const fn new(bytes: &'static [u8]) -> Compressed {
        Compressed {
            bytes,
            text: OnceLock::new(),
        }
    }

    /// The text, read out on the first call.
    pub fn text(&'static self) -> &'static str {
        self.text.get_or_init(|| read_out(self.bytes))
    }
}

/// `bytes` read out: the text a test locked them to.
pub fn read_out(bytes: &[u8]) -> String {
    let raw = lz4_flex::decompress_size_prepended(bytes).expect("embedded text is LZ4");
    String::from_utf8(raw).expect("embedded text is UTF-8")
}
