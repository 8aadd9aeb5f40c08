//! `trainc build SPEC`: compile, then write everything or nothing.

use super::{Status, read_input, read_overlays, report, write_stderr, write_stdout};
use crate::cli::{BuildArgs, OutputFormat};
use trainc::diagnostic;
use trainc::emit::{self, Format};
use trainc::source::Sources;

pub(super) fn run(args: &BuildArgs) -> Status {
    let mut sources = Sources::new();
    let mut diagnostics = Vec::new();
    let overlays = match read_overlays(&mut sources, &args.compose, &mut diagnostics) {
        Ok(ids) => ids,
        Err(failed) => {
            report(&sources, &diagnostics);
            return failed;
        }
    };
    let input = match read_input(&mut sources, &args.spec, &overlays, &mut diagnostics) {
        Ok(Some(input)) if diagnostics.is_empty() => input,
        Ok(_) => {
            report(&sources, &diagnostics);
            return Status::Invalid;
        }
        Err(failed) => {
            report(&sources, &diagnostics);
            return failed;
        }
    };
    let options = super::options(&args.compose, &args.generate);
    let built = trainc::build(&mut sources, &input, &options);
    let mut diagnostics = built.diagnostics;
    diagnostic::sort(&mut diagnostics);
    report(&sources, &diagnostics);
    drop(diagnostics); // said; thousands of warnings need not stay while the output is made
    let Some(objects) = built.objects else {
        return Status::Invalid;
    };
    let format = match args.output {
        OutputFormat::Yaml => Format::Yaml,
        OutputFormat::Json => Format::Json,
    };
    match &args.output_dir {
        None => {
            if let Err(failed) = write_stdout(&emit::stream(&objects, format)) {
                return failed;
            }
        }
        Some(dir) => {
            let job = objects
                .last()
                .and_then(|o| o.value.pointer("/metadata/labels/app.kubernetes.io~1name"))
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let files = emit::files(&objects, format);
            if let Err(message) = super::output_dir::write(dir, &files, &job, args.force) {
                write_stderr(&format!("error: {message}\n"));
                return Status::Usage;
            }
        }
    }
    Status::Ok
}
