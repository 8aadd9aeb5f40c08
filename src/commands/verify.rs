//! `trainc verify FILE...`: Kubernetes manifests against the strict schemas
//! and the operators' rules, every problem at its line.

use super::{Status, read_input};
use crate::cli::VerifyArgs;
use crate::diagnostic::Diagnostic;
use crate::source::Sources;

pub(super) fn run(args: &VerifyArgs) -> Status {
    let level = super::api_level(args.api_level).unwrap_or(crate::spec::ApiLevel::V2_3);
    let mut sources = Sources::new();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut status = Status::Ok;
    let mut objects = 0;
    // Each file read as a source, then handed on: `None` when it could not be.
    let mut read = |sources: &mut Sources, path, diagnostics: &mut Vec<Diagnostic>| match read_input(
        sources,
        path,
        &super::Shared::default(),
        diagnostics,
    ) {
        Ok(input) => input.map(|i| i.spec),
        Err(failed) => {
            status = status.max(failed);
            None
        }
    };
    let mut runtimes = Vec::new();
    if let Some(id) = args
        .runtimes
        .as_ref()
        .and_then(|path| read(&mut sources, path, &mut diagnostics))
    {
        let (found, problems) = crate::trainer::file::read(&sources, id);
        runtimes = found;
        diagnostics.extend(problems);
    }
    for path in &args.files {
        if let Some(id) = read(&mut sources, path, &mut diagnostics) {
            let verified = crate::verify::manifests::verify_file(&sources, id, level, &runtimes);
            objects += verified.objects;
            diagnostics.extend(verified.diagnostics);
        }
    }
    let files = args.files.len();
    let what = format!(
        "verified {objects} object{} in {files} file{}",
        if objects == 1 { "" } else { "s" },
        if files == 1 { "" } else { "s" },
    );
    super::check::print_diagnostics(args.format, &sources, diagnostics, status, &what)
}
