//! Value syntaxes of Kubernetes and OCI, parsed by hand so that a failure can
//! say exactly what is wrong and how to write it instead.
//!
//! Each function checks one syntax and returns the parsed value or a reason
//! (lowercase, for a diagnostic's message or help). No spans, no diagnostics:
//! the rules decide where and how to report.

pub mod base64;
pub mod duration;
pub mod image;
pub mod names;
pub mod pod;
pub mod quantity;
pub mod sha256;
pub mod shell;

/// `c` as the hexadecimal escape that YAML double-quoted scalars and Python
/// string literals both read: `\xNN` up to U+00FF, `\uNNNN` in the Basic
/// Multilingual Plane, `\UNNNNNNNN` beyond.
pub fn push_hex_escape(out: &mut String, c: char) {
    use std::fmt::Write as _;
    let code = u32::from(c);
    let _ = match code {
        0..=0xff => write!(out, "\\x{code:02x}"),
        0x100..=0xffff => write!(out, "\\u{code:04x}"),
        _ => write!(out, "\\U{code:08x}"),
    };
}
