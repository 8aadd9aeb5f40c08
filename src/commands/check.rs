//! `trainc check FILE...`: validate every file, print every diagnostic.

use super::{Status, read_input, read_overlays};
use crate::cli::{CheckArgs, Format};
use trainc::diagnostic::{self, Diagnostic};
use trainc::source::Sources;

pub(super) fn run(args: &CheckArgs) -> Status {
    let mut sources = Sources::new();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut status = Status::Ok;
    let options = super::options(&args.compose, &args.generate);
    let overlays = match read_overlays(&mut sources, &args.compose, &mut diagnostics) {
        Ok(ids) => ids,
        Err(failed) => return finish(args, &sources, diagnostics, failed),
    };
    if !diagnostics.is_empty() {
        return finish(args, &sources, diagnostics, Status::Ok);
    }
    // Specs are checked one by one, each on its own: a long list is split
    // across threads, and the results joined in the files' order, so what is
    // printed does not depend on the split.
    let threads = if args.files.len() >= FILES_PER_THREAD * 2 {
        std::thread::available_parallelism()
            .map_or(1, std::num::NonZero::get)
            .min(args.files.len() / FILES_PER_THREAD)
            .min(8)
    } else {
        1
    };
    if threads <= 1 {
        status = status.max(check_files(
            args,
            &options,
            &mut sources,
            &overlays,
            &args.files,
            &mut diagnostics,
        ));
        return finish(args, &sources, diagnostics, status);
    }
    let shared = sources.len();
    let parts: Vec<(Sources, Vec<Diagnostic>, Status)> = std::thread::scope(|scope| {
        let handles: Vec<_> = args
            .files
            .chunks(args.files.len().div_ceil(threads))
            .map(|files| {
                let mut own = sources.clone();
                let (options, overlays) = (&options, &overlays);
                scope.spawn(move || {
                    let mut found = Vec::new();
                    let status = check_files(args, options, &mut own, overlays, files, &mut found);
                    (own, found, status)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    for (own, found, part_status) in parts {
        let map = sources.absorb(own, shared);
        diagnostics.extend(found.into_iter().map(|mut d| {
            d.renumber(&map);
            d
        }));
        status = status.max(part_status);
    }
    finish(args, &sources, diagnostics, status)
}

/// Below this many files per thread, a thread costs more than it saves.
const FILES_PER_THREAD: usize = 32;

/// Checks `files` in order, into `sources` and `diagnostics`.
fn check_files(
    args: &CheckArgs,
    options: &trainc::Options,
    sources: &mut Sources,
    overlays: &super::Shared,
    files: &[std::path::PathBuf],
    diagnostics: &mut Vec<Diagnostic>,
) -> Status {
    let mut status = Status::Ok;
    for path in files {
        match read_input(sources, path, overlays, diagnostics) {
            Ok(Some(input)) if args.as_overlay => {
                diagnostics.extend(trainc::check_overlay(sources, input.spec));
            }
            // `--verify` checks the objects too, so it builds them.
            Ok(Some(input)) if options.verify => {
                diagnostics.extend(trainc::build(sources, &input, options).diagnostics);
            }
            Ok(Some(input)) => {
                diagnostics.extend(trainc::check_input(sources, &input, options).diagnostics);
            }
            Ok(None) => {}
            Err(failed) => status = failed,
        }
    }
    status
}

fn finish(
    args: &CheckArgs,
    sources: &Sources,
    diagnostics: Vec<Diagnostic>,
    status: Status,
) -> Status {
    let files = args.files.len();
    let plural = if files == 1 { "" } else { "s" };
    print_diagnostics(
        args.format,
        sources,
        diagnostics,
        status,
        &format!("checked {files} file{plural}"),
    )
}

/// Prints `diagnostics` sorted, once each, in `format` (the human form ends
/// with `what` and the tally) and gives the exit status: at least 1 when any
/// is an error.
pub(super) fn print_diagnostics(
    format: Format,
    sources: &Sources,
    mut diagnostics: Vec<Diagnostic>,
    status: Status,
    what: &str,
) -> Status {
    diagnostic::sort(&mut diagnostics);
    // An overlay shared by several specs would report its own problems once
    // per spec: the printer prints a repeat once.
    let mut printer = super::printer::Printer::new(format);
    for d in diagnostics {
        printer.add(sources, d);
    }
    printer.finish(sources, what, status)
}
