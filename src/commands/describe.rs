//! `trainc describe SPEC`: the spec in words on stdout, problems on stderr.

use super::{Status, read_input, read_overlays, report, write_stdout};
use crate::cli::DescribeArgs;
use trainc::source::Sources;

pub(super) fn run(args: &DescribeArgs) -> Status {
    let mut sources = Sources::new();
    let mut diagnostics = Vec::new();
    let options = super::options(&args.compose, &args.generate);
    let input = read_overlays(&mut sources, &args.compose, &mut diagnostics)
        .and_then(|overlays| read_input(&mut sources, &args.spec, &overlays, &mut diagnostics));
    let input = match input {
        Ok(Some(input)) if diagnostics.is_empty() => input,
        Ok(_) => {
            report(&sources, &diagnostics);
            return Status::Invalid;
        }
        Err(status) => {
            report(&sources, &diagnostics);
            return status;
        }
    };
    let (text, diagnostics) = trainc::describe(
        &mut sources,
        &input,
        &options,
        &build_command(args),
        args.pods,
    );
    // Warnings are part of the description; errors go to stderr as in `check`.
    let errors: Vec<_> = diagnostics
        .into_iter()
        .filter(trainc::Diagnostic::is_error)
        .collect();
    report(&sources, &errors);
    match text {
        // Values from the spec (args, labels, names) reach a terminal: escaped.
        Some(text) => super::written(
            write_stdout(&trainc::diagnostic::escape_lines_for_terminal(&text)),
            Status::Ok,
        ),
        None => Status::Invalid,
    }
}

/// `trainc build` with the arguments that select what `describe` described.
fn build_command(args: &DescribeArgs) -> String {
    let mut words = vec!["trainc".to_owned(), "build".to_owned()];
    words.push(args.spec.display().to_string());
    for overlay in &args.compose.overlays {
        words.extend(["-O".to_owned(), overlay.display().to_string()]);
    }
    if let Some(root) = &args.compose.code_root {
        words.extend(["--code-root".to_owned(), root.display().to_string()]);
    }
    if let Some(runtimes) = &args.compose.runtimes {
        words.extend(["--runtimes".to_owned(), runtimes.display().to_string()]);
    }
    for (name, value) in &args.compose.sets {
        words.extend(["--set".to_owned(), format!("{name}={value}")]);
    }
    if let Some(target) = args.generate.target {
        let target = clap::ValueEnum::to_possible_value(&target).expect("no skipped values");
        words.extend(["--target".to_owned(), target.get_name().to_owned()]);
    }
    if let Some(level) = args.generate.api_level {
        let level = clap::ValueEnum::to_possible_value(&level).expect("no skipped values");
        words.extend(["--api-level".to_owned(), level.get_name().to_owned()]);
    }
    trainc::syntax::shell::join(words.iter().map(String::as_str))
}
