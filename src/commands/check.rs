//! `trainc check FILE...`: validate every file, print every diagnostic.

use std::fmt::Write as _;

use super::{Status, stderr_style, write_stderr, write_stdout};
use crate::cli::{CheckArgs, Format};
use crate::diagnostic::{self, Diagnostic};
use crate::source::{self, ReadError, Sources};

pub(super) fn run(args: &CheckArgs) -> Status {
    let mut sources = Sources::new();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut status = Status::Ok;
    for path in &args.files {
        match source::read(&mut sources, path) {
            Ok(id) => diagnostics.extend(crate::check(&sources, id).diagnostics),
            Err(ReadError::Io { name, error }) => {
                write_stderr(&format!("error: cannot read `{name}`: {error}\n"));
                status = Status::Usage;
            }
            Err(ReadError::Invalid(d)) => diagnostics.push(*d),
        }
    }
    diagnostic::sort(&mut diagnostics);
    match args.format {
        Format::Human => {
            let style = stderr_style();
            let mut out = String::new();
            for d in &diagnostics {
                out.push_str(&diagnostic::render(d, &sources, style));
                out.push('\n');
            }
            let files = args.files.len();
            let plural = if files == 1 { "" } else { "s" };
            let _ = writeln!(
                out,
                "checked {files} file{plural}: {}",
                diagnostic::summary(&diagnostics)
            );
            write_stderr(&out);
        }
        Format::Json => {
            let lines = diagnostics.iter().fold(String::new(), |mut out, d| {
                let _ = writeln!(out, "{}", d.to_json(&sources));
                out
            });
            write_stdout(&lines);
        }
        Format::Github => {
            let lines = diagnostics.iter().fold(String::new(), |mut out, d| {
                let _ = writeln!(out, "{}", d.to_github(&sources));
                out
            });
            write_stdout(&lines);
        }
    }
    if diagnostics.iter().any(Diagnostic::is_error) {
        status = status.max(Status::Invalid);
    }
    status
}
