//! trainc compiles a compact training spec into the Kubernetes objects that run
//! distributed PyTorch.
//!
//! The pipeline runs in one direction, one stage per module, chained here:
//!
//! ```text
//! read      source      file -> text, size-limited, UTF-8 checked
//! parse     parse       TOML / YAML / KRM -> Node tree, a span on every key and value
//! validate  validate    JSON Schema (every violation), then semantic rules
//! ```
//!
//! Each stage collects every problem it finds; the pipeline stops between
//! stages when one is an error, so a user sees all errors of a stage at once.
//! The library never prints: it returns [`Diagnostic`]s, and the command layer
//! (`commands`) decides how to show them.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod cli;
pub mod commands;
pub mod diagnostic;
pub mod parse;
pub mod source;
pub mod spec;
pub mod syntax;
pub mod tree;
pub mod validate;

pub use diagnostic::Diagnostic;
pub use source::{SourceId, Sources};
pub use validate::Validated;

/// The front end for one spec already read into `sources`: parse, then validate.
pub fn check(sources: &Sources, id: SourceId) -> Validated {
    match parse::parse(id, sources.get(id)) {
        Ok(tree) => validate::validate(&tree, sources),
        Err(diagnostics) => Validated {
            spec: None,
            diagnostics,
        },
    }
}
