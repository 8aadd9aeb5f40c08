//! The command layer: arguments in, library calls, output and exit status out.
//! This is the only place that writes to stdout or stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use crate::cli::{Cli, ColorArg, Command};
use trainc::diagnostic::Style;

mod atomic;
mod build;
mod check;
mod convert;
mod describe;
mod function;
mod import;
mod init;
mod man;
mod migrate;
mod output_dir;
mod plugin;
mod printer;
#[cfg(target_os = "linux")]
mod run;
mod usage;
mod verify;

/// Exit statuses, decided here once: 0 ok (warnings allowed), 1 invalid spec,
/// 2 usage or I/O error; `trainc run` adds 3, the job failed, and 130,
/// interrupted (as a shell reports SIGINT).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Status {
    Ok = 0,
    Invalid = 1,
    Usage = 2,
    Failed = 3,
    Interrupted = 130,
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> ExitCode {
        ExitCode::from(status as u8)
    }
}

/// Runs trainc as invoked: as the kustomize plugin when its name is
/// `TrainSpec`, as a KRM function when it has no arguments and stdin is not a
/// terminal, else as the command line says.
pub(crate) fn main(args: &[std::ffi::OsString]) -> Status {
    let invoked_as = args
        .first()
        .map(std::path::Path::new)
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("");
    if invoked_as == function::PLUGIN_NAME {
        return function::run_plugin(&args[1..]);
    }
    if args.len() == 1 && !std::io::stdin().is_terminal() {
        match function::read_stdin() {
            Err(status) => return status,
            // Nothing piped in (`trainc </dev/null`): a person, not kpt; show the usage.
            Ok(input) if input.iter().all(u8::is_ascii_whitespace) => {}
            Ok(input) => return function::run_function(input),
        }
    }
    let color = color_choice(args);
    if let Some(cli) = parsed_lean(args) {
        return run(cli);
    }
    let command = <Cli as clap::CommandFactory>::command().color(match color {
        ColorArg::Auto => clap::ColorChoice::Auto,
        ColorArg::Always => clap::ColorChoice::Always,
        ColorArg::Never => clap::ColorChoice::Never,
    });
    let parsed = command
        .clone()
        .try_get_matches_from(args)
        .and_then(|matches| <Cli as clap::FromArgMatches>::from_arg_matches(&matches));
    match parsed {
        Ok(cli) => run(cli),
        Err(error) => {
            let error = usage::reword(command, args, error);
            let printed = error.print();
            if error.use_stderr() {
                Status::Usage
            } else {
                // `--help` and `--version`, on stdout.
                match printed {
                    Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                        write_stderr(&format!(
                            "error: cannot write to stdout: {}\n",
                            trainc::source::io_reason(&e)
                        ));
                        Status::Usage
                    }
                    _ => Status::Ok,
                }
            }
        }
    }
}

/// The command line parsed against the one subcommand it names, when that
/// is a command of its own arguments and nothing asks for help: building
/// clap's whole command tree took a tenth of the instructions of a `trainc
/// build`. Anything this does not parse (an error, `--help`, a subcommand
/// with subcommands) is parsed again against the whole tree, whose errors
/// and help are the ones shown.
fn parsed_lean(args: &[std::ffi::OsString]) -> Option<Cli> {
    use clap::{Args, FromArgMatches};
    let name = args.get(1)?.to_str()?;
    let asks_for_help = args.iter().skip(2).any(|a| {
        matches!(
            a.to_str(),
            None | Some("-h" | "--help" | "-V" | "--version" | "help")
        )
    });
    if asks_for_help {
        return None;
    }
    let (name, augment): (&'static str, fn(clap::Command) -> clap::Command) = match name {
        "check" => ("check", crate::cli::CheckArgs::augment_args),
        "build" => ("build", crate::cli::BuildArgs::augment_args),
        "verify" => ("verify", crate::cli::VerifyArgs::augment_args),
        "import" => ("import", crate::cli::ImportArgs::augment_args),
        "migrate" => ("migrate", crate::cli::MigrateArgs::augment_args),
        "describe" => ("describe", crate::cli::DescribeArgs::augment_args),
        "run" => ("run", crate::cli::RunArgs::augment_args),
        "init" => ("init", crate::cli::InitArgs::augment_args),
        "convert" => ("convert", crate::cli::ConvertArgs::augment_args),
        _ => return None,
    };
    let sub = augment(clap::Command::new(name));
    let color = clap::Arg::new("color")
        .long("color")
        .global(true)
        .value_parser(clap::builder::EnumValueParser::<ColorArg>::new())
        .default_value("auto");
    let root = clap::Command::new("trainc")
        .arg(color)
        .subcommand(sub)
        .subcommand_required(true);
    let matches = root.try_get_matches_from(args).ok()?;
    Cli::from_arg_matches(&matches).ok()
}

/// `--color` as written on the command line, found before clap parses it so
/// that clap's own help and errors follow it too.
fn color_choice(args: &[std::ffi::OsString]) -> ColorArg {
    let mut choice = ColorArg::Auto;
    let mut words = args.iter().skip(1).map(|a| a.to_str().unwrap_or(""));
    while let Some(word) = words.next() {
        if word == "--" {
            break;
        }
        let value = match word.strip_prefix("--color") {
            Some("") => words.next().unwrap_or(""),
            Some(rest) => rest.strip_prefix('=').unwrap_or(""),
            None => continue,
        };
        choice = match value {
            "always" => ColorArg::Always,
            "never" => ColorArg::Never,
            _ => ColorArg::Auto,
        };
    }
    choice
}

pub(crate) fn run(cli: Cli) -> Status {
    // The one process-wide preference: set once, before anything is printed.
    let _ = COLOR.set(cli.color);
    match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Verify(args) => verify::run(&args),
        Command::Import(args) => import::run(&args),
        Command::Migrate(args) => migrate::run(&args),
        Command::Describe(args) => describe::run(&args),
        #[cfg(target_os = "linux")]
        Command::Run(args) => run::run(&args),
        #[cfg(not(target_os = "linux"))]
        Command::Run(_) => run_elsewhere(),
        Command::Build(args) => build::run(&args),
        Command::Init(args) => init::run(&args),
        Command::Convert(args) => convert::run(&args),
        Command::Fn => match function::read_stdin() {
            Ok(input) => function::run_function(input),
            Err(status) => status,
        },
        Command::Plugin(crate::cli::PluginCommand::Install { dir, dev }) => {
            plugin::install(dir, dev)
        }
        Command::Plugin(crate::cli::PluginCommand::Config) => written(
            write_stdout(&trainc::kustomize::configuration()),
            Status::Ok,
        ),
        Command::Completions { shell } => written(write_stdout(&completions(shell)), Status::Ok),
        Command::Man { dir } => man::man(dir.as_deref()),
        Command::Schema { overlay, krm } => {
            // The committed files, which tests lock to the spec types.
            let schema = match (overlay, krm) {
                (false, false) => trainc::spec::SPEC_SCHEMA,
                (true, false) => trainc::spec::OVERLAY_SCHEMA,
                (false, true) => trainc::spec::KRM_SCHEMA,
                (true, true) => trainc::spec::KRM_PATCH_SCHEMA,
            };
            written(write_stdout(schema), Status::Ok)
        }
    }
}

/// The pipeline's options from the command line, the same for `build` and `check`.
fn options(
    compose: &crate::cli::ComposeArgs,
    generate: &crate::cli::GenerateArgs,
) -> trainc::Options {
    use crate::cli::TargetArg;
    use trainc::spec::Target;
    trainc::Options {
        target: generate.target.map(|t| match t {
            TargetArg::Pytorchjob => Target::Pytorchjob,
            TargetArg::Trainjob => Target::Trainjob,
            TargetArg::Job => Target::Job,
            TargetArg::Jobset => Target::Jobset,
        }),
        api_level: api_level(generate.api_level),
        namespace: generate.namespace.clone(),
        sets: compose.sets.clone(),
        verify: generate.verify,
        code_root: compose.code_root.clone(),
    }
}

fn api_level(level: Option<crate::cli::ApiLevelArg>) -> Option<trainc::spec::ApiLevel> {
    use crate::cli::ApiLevelArg;
    use trainc::spec::ApiLevel;
    level.map(|level| match level {
        ApiLevelArg::V2_3 => ApiLevel::V2_3,
        ApiLevelArg::V2_2 => ApiLevel::V2_2,
        ApiLevelArg::V2_1 => ApiLevel::V2_1,
        ApiLevelArg::V2_0 => ApiLevel::V2_0,
    })
}

/// `--training-operator`: v1.9 unless given.
fn training_operator(
    release: Option<crate::cli::TrainingOperatorArg>,
) -> trainc::cluster::pytorchjob::Release {
    use crate::cli::TrainingOperatorArg;
    use trainc::cluster::pytorchjob::Release;
    match release {
        Some(TrainingOperatorArg::V1_7) => Release::V1_7,
        Some(TrainingOperatorArg::V1_8) => Release::V1_8,
        Some(TrainingOperatorArg::V1_9) | None => Release::V1_9,
    }
}

/// Reads `path` (and the overlays) into `sources`. An unreadable file is
/// reported here and gives `Err(Status::Usage)`; a file that cannot be a spec
/// (too large, not UTF-8) comes back as a diagnostic.
fn read_input(
    sources: &mut trainc::Sources,
    path: &std::path::Path,
    shared: &Shared,
    diagnostics: &mut Vec<trainc::Diagnostic>,
) -> Result<Option<trainc::Input>, Status> {
    let id = read_source(sources, path, trainc::source::MAX_SOURCE_BYTES, diagnostics)?;
    Ok(id.map(|id| trainc::Input {
        spec: id,
        overlays: shared.overlays.clone(),
        runtimes: shared.runtimes.clone(),
    }))
}

/// Reads `path` (at most `limit` bytes) into `sources`, as [`read_input`]
/// does: `Err(Status::Usage)` when it cannot be read, `Ok(None)` when it
/// cannot be a source; either way with its diagnostic.
fn read_source(
    sources: &mut trainc::Sources,
    path: &std::path::Path,
    limit: u64,
    diagnostics: &mut Vec<trainc::Diagnostic>,
) -> Result<Option<trainc::SourceId>, Status> {
    match trainc::source::read_limited(sources, path, limit) {
        Ok(id) => Ok(Some(id)),
        Err(trainc::source::ReadError::Io { name, error }) => {
            diagnostics.push(unreadable(sources, &name, &error));
            Err(Status::Usage)
        }
        Err(trainc::source::ReadError::Invalid(unusable)) => {
            diagnostics.push(unusable.into());
            Ok(None)
        }
    }
}

/// A file that could not be read, as a diagnostic like any other, so that
/// `check` counts it and `--format json` lists it; the exit status says
/// I/O error.
fn unreadable(
    sources: &mut trainc::Sources,
    name: &str,
    error: &std::io::Error,
) -> trainc::Diagnostic {
    let id = sources.add(name, String::new());
    trainc::Diagnostic::error(
        trainc::diagnostic::codes::SOURCE_UNREADABLE,
        trainc::source::Span::new(id, 0, 0),
        format!("cannot read `{name}`: {}", trainc::source::io_reason(error)),
    )
}

/// What every spec of one command shares, read once: the overlays and the
/// runtimes file.
#[derive(Debug, Clone, Default)]
struct Shared {
    overlays: Vec<trainc::SourceId>,
    runtimes: Option<trainc::trainer::file::RuntimesFile>,
}

/// Reads every overlay and the runtimes file once; the same apply to every spec.
fn read_overlays(
    sources: &mut trainc::Sources,
    args: &crate::cli::ComposeArgs,
    diagnostics: &mut Vec<trainc::Diagnostic>,
) -> Result<Shared, Status> {
    let mut shared = Shared::default();
    for path in &args.overlays {
        if let Some(input) = read_input(sources, path, &Shared::default(), diagnostics)? {
            shared.overlays.push(input.spec);
        }
    }
    if let Some(path) = &args.runtimes {
        shared.runtimes = read_input(sources, path, &Shared::default(), diagnostics)?
            .map(|input| trainc::trainer::file::RuntimesFile::new(input.spec));
    }
    Ok(shared)
}

/// Every diagnostic rendered for people, in order, each followed by a blank line.
fn rendered(sources: &trainc::Sources, diagnostics: &[trainc::Diagnostic]) -> String {
    let style = stderr_style();
    let mut shown = std::collections::BTreeMap::<trainc::SourceId, usize>::new();
    let mut out = String::new();
    for d in diagnostics {
        let count = shown.entry(d.primary.span.source).or_default();
        *count += 1;
        if *count <= printer::MAX_SHOWN_PER_FILE {
            out.push_str(&trainc::diagnostic::render(d, sources, style));
            out.push('\n');
        }
    }
    for (id, count) in shown {
        printer::not_shown(&mut out, count, &sources.get(id).name);
    }
    out
}

/// Diagnostics for people, on stderr, with a closing tally; nothing when there are none.
fn report(sources: &trainc::Sources, diagnostics: &[trainc::Diagnostic]) {
    if diagnostics.is_empty() {
        return;
    }
    let mut out = rendered(sources, diagnostics);
    out.push_str(&trainc::diagnostic::summary(diagnostics));
    out.push('\n');
    write_rendered(&out);
}

/// The completion script clap_complete generates for `shell`.
fn completions(shell: crate::cli::Shell) -> String {
    use clap_complete::Shell as S;
    let shell = match shell {
        crate::cli::Shell::Bash => S::Bash,
        crate::cli::Shell::Zsh => S::Zsh,
        crate::cli::Shell::Fish => S::Fish,
        crate::cli::Shell::Powershell => S::PowerShell,
        crate::cli::Shell::Elvish => S::Elvish,
    };
    let mut script = Vec::new();
    clap_complete::generate(
        shell,
        &mut <Cli as clap::CommandFactory>::command(),
        "trainc",
        &mut script,
    );
    String::from_utf8_lossy(&script).into_owned()
}

/// `--color`, once `run` has seen the command line.
static COLOR: std::sync::OnceLock<ColorArg> = std::sync::OnceLock::new();

/// Colour for a terminal unless `NO_COLOR` is set (`--color auto`, also the
/// kustomize plugin and `trainc fn`), or as `--color` says.
fn stderr_style() -> Style {
    let color = match COLOR.get().copied().unwrap_or(ColorArg::Auto) {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => {
            std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    let width = if color {
        terminal_width().unwrap_or(100)
    } else {
        Style::PLAIN.width
    };
    Style { color, width }
}

fn terminal_width() -> Option<usize> {
    std::env::var("COLUMNS").ok()?.parse().ok()
}

/// Writes to stdout. A closed pipe (`trainc ... | head`) is not an error;
/// any other failure (a full disk, `> /dev/full`) is said on stderr and is
/// the command's failure: exit 2, never a truncated output that looks whole.
#[must_use = "a failed write decides the exit status"]
fn write_stdout(text: &str) -> Result<(), Status> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(error) => {
            write_stderr(&format!(
                "error: cannot write to stdout: {}\n",
                trainc::source::io_reason(&error)
            ));
            Err(Status::Usage)
        }
    }
}

/// `status`, unless the write failed.
fn written(write: Result<(), Status>, status: Status) -> Status {
    match write {
        Ok(()) => status,
        Err(failed) => failed.max(status),
    }
}

/// A message for people on stderr, every line escaped: whatever of the
/// input it names (a path, a job's name) cannot act on the terminal.
fn write_stderr(text: &str) {
    write_rendered(&trainc::diagnostic::escape_lines_for_terminal(text));
}

/// `trainc run` on a system other than Linux: it needs Linux's namespaces
/// and a subreaper to run pods as the cluster would and end every process.
#[cfg(not(target_os = "linux"))]
fn run_elsewhere() -> Status {
    write_stderr(
        "error: `trainc run` runs a job's pods on Linux only (it uses Linux's namespaces and \
         process supervision)\n  help: run it on a Linux machine or in a Linux container; \
         `trainc describe --pods` shows the same pods here\n",
    );
    Status::Invalid
}

/// Rendered diagnostics on stderr, as they are: rendering escaped what they
/// quote, and their colours are escape sequences of trainc's own.
pub(super) fn write_rendered(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lean parse reads every command line it accepts as the whole
    /// tree does.
    #[test]
    fn the_lean_parse_reads_what_the_whole_tree_reads() {
        let lines: &[&[&str]] = &[
            &["build", "a.toml"],
            &[
                "build", "a.toml", "-O", "o.toml", "--set", "x=1", "--verify",
            ],
            &[
                "build",
                "--color",
                "never",
                "a.toml",
                "--target",
                "trainjob",
                "--api-level",
                "v2.1",
            ],
            &[
                "build",
                "a.toml",
                "--color=always",
                "-n",
                "ml",
                "--output-dir",
                "d",
            ],
            &[
                "check",
                "a.toml",
                "b.yaml",
                "--format",
                "json",
                "--as-overlay",
            ],
            &["verify", "m.yaml", "--kubernetes-version", "1.33"],
            &["describe", "--pods", "a.toml", "--format", "json"],
            &["import", "j.yaml", "--format", "krm"],
            &["migrate", "j.yaml", "--spec"],
            &["init", "x.toml", "--gpu", "--target", "jobset"],
            &[
                "convert",
                "x.toml",
                "--to",
                "trainspec",
                "--as-overlay",
                "--name",
                "a",
                "-n",
                "b",
            ],
            &["run", "a.toml"],
            &["convert", "x.toml", "--to", "krm"],
        ];
        let full = <Cli as clap::CommandFactory>::command();
        for line in lines {
            let args: Vec<std::ffi::OsString> = std::iter::once("trainc")
                .chain(line.iter().copied())
                .map(Into::into)
                .collect();
            let lean = parsed_lean(&args).unwrap_or_else(|| panic!("{line:?} parses lean"));
            let whole = full
                .clone()
                .try_get_matches_from(&args)
                .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m))
                .unwrap();
            assert_eq!(format!("{lean:?}"), format!("{whole:?}"), "{line:?}");
        }
        for asks in [
            &["build", "--help"][..],
            &["check", "-h"],
            &["plugin", "install"],
            &["build"],
        ] {
            let args: Vec<std::ffi::OsString> = std::iter::once("trainc")
                .chain(asks.iter().copied())
                .map(Into::into)
                .collect();
            assert!(parsed_lean(&args).is_none(), "{asks:?}");
        }
    }
}
