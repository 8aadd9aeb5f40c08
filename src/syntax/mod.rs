//! Value syntaxes of Kubernetes and OCI, parsed by hand so that a failure can
//! say exactly what is wrong and how to write it instead.
//!
//! Each function checks one syntax and returns the parsed value or a reason
//! (lowercase, for a diagnostic's message or help). No spans, no diagnostics:
//! the rules decide where and how to report.

pub mod duration;
pub mod image;
pub mod names;
pub mod quantity;
pub mod sha256;
pub mod shell;
