//! trainc compiles a compact training spec into the Kubernetes objects that run
//! distributed PyTorch.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod diagnostic;
pub mod parse;
pub mod source;
pub mod spec;
pub mod tree;
pub mod syntax;
pub mod validate;
