//! `trainc describe SPEC`: the spec in words on stdout, problems on stderr.

use super::{Status, read_input, read_overlays, report, write_stdout};
use crate::cli::{DescribeArgs, DescribeFormat};
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
    if args.format == DescribeFormat::Json {
        return pods_json(&mut sources, &input, &options);
    }
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

/// `describe --pods --format json`: the pods on stdout as one JSON `v1
/// List`; errors, and a note when the list is partial, on stderr.
fn pods_json(sources: &mut Sources, input: &trainc::Input, options: &trainc::Options) -> Status {
    let (pods, diagnostics) = trainc::describe_pods(sources, input, options);
    let errors: Vec<_> = diagnostics
        .into_iter()
        .filter(trainc::Diagnostic::is_error)
        .collect();
    report(sources, &errors);
    let Some(pods) = pods else {
        return Status::Invalid;
    };
    match pods.list {
        Ok(list) => {
            if let Some(note) = pods.note {
                eprintln!("note: {note}");
            }
            let mut text = serde_json::to_string_pretty(&list).unwrap_or_default();
            text.push('\n');
            super::written(write_stdout(&text), Status::Ok)
        }
        Err(message) => {
            eprintln!("error: trainc knows of no pods for this job: {message}");
            Status::Invalid
        }
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
    if let Some(namespace) = &args.generate.namespace {
        words.extend(["-n".to_owned(), namespace.clone()]);
    }
    trainc::syntax::shell::join(words.iter().map(String::as_str))
}
