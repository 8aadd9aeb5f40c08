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
    for path in &args.files {
        match read_input(
            &mut sources,
            path,
            &super::Shared::default(),
            &mut diagnostics,
        ) {
            Ok(Some(input)) => {
                let verified = crate::verify::manifests::verify_file(&sources, input.spec, level);
                objects += verified.objects;
                diagnostics.extend(verified.diagnostics);
            }
            Ok(None) => {}
            Err(failed) => status = failed,
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
