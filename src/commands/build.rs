//! `trainc build SPEC`: compile, then write everything or nothing.

use std::fmt::Write as _;

use super::{Status, stderr_style, write_stderr, write_stdout};
use crate::cli::{ApiLevelArg, BuildArgs, OutputFormat, TargetArg};
use crate::diagnostic::{self, Diagnostic};
use crate::emit::{self, Format};
use crate::source::{self, ReadError, Sources};
use crate::spec::{ApiLevel, Target};

pub(super) fn run(args: &BuildArgs) -> Status {
    let mut sources = Sources::new();
    let id = match source::read(&mut sources, &args.spec) {
        Ok(id) => id,
        Err(ReadError::Io { name, error }) => {
            write_stderr(&format!("error: cannot read `{name}`: {error}\n"));
            return Status::Usage;
        }
        Err(ReadError::Invalid(d)) => {
            report(&sources, &[*d]);
            return Status::Invalid;
        }
    };
    let options = crate::Options {
        target: args.target.map(|t| match t {
            TargetArg::Pytorchjob => Target::Pytorchjob,
            TargetArg::Trainjob => Target::Trainjob,
        }),
        api_level: args.api_level.map(|level| match level {
            ApiLevelArg::V2_2 => ApiLevel::V2_2,
            ApiLevelArg::V2_1 => ApiLevel::V2_1,
        }),
        verify: args.verify,
    };
    let built = crate::build(&mut sources, id, &options);
    let mut diagnostics = built.diagnostics;
    diagnostic::sort(&mut diagnostics);
    report(&sources, &diagnostics);
    let Some(objects) = built.objects else {
        return Status::Invalid;
    };
    let format = match args.output {
        OutputFormat::Yaml => Format::Yaml,
        OutputFormat::Json => Format::Json,
    };
    match &args.output_dir {
        None => write_stdout(&emit::stream(&objects, format)),
        Some(dir) => {
            let files = emit::files(&objects, format);
            if let Err(error) = std::fs::create_dir_all(dir) {
                write_stderr(&format!(
                    "error: cannot create `{}`: {error}\n",
                    dir.display()
                ));
                return Status::Usage;
            }
            for (name, text) in &files {
                let path = dir.join(name);
                if let Err(error) = std::fs::write(&path, text) {
                    write_stderr(&format!(
                        "error: cannot write `{}`: {error}\n",
                        path.display()
                    ));
                    return Status::Usage;
                }
            }
        }
    }
    Status::Ok
}

/// Diagnostics (warnings on success, errors on failure) go to stderr.
fn report(sources: &Sources, diagnostics: &[Diagnostic]) {
    if diagnostics.is_empty() {
        return;
    }
    let style = stderr_style();
    let mut out = String::new();
    for d in diagnostics {
        out.push_str(&diagnostic::render(d, sources, style));
        out.push('\n');
    }
    let _ = writeln!(out, "{}", diagnostic::summary(diagnostics));
    write_stderr(&out);
}
