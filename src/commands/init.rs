//! `trainc init [FILE]`: write a starter spec; never overwrite without `--force`.

use super::{Status, write_stderr};
use crate::cli::{InitArgs, TargetArg};
use trainc::spec::Target;
use trainc::starter::{self, Starter, StarterFormat};
use trainc::syntax::names;

pub(super) fn run(args: &InitArgs) -> Status {
    let name = args.name.clone().unwrap_or_else(default_name);
    if let Err(bad) = names::Syntax::Dns1035.check(&name) {
        let hint = bad
            .better
            .map(|s| format!("; try `--name {s}`"))
            .unwrap_or_default();
        let name = trainc::diagnostic::escape_for_terminal(&name);
        let why = trainc::diagnostic::escape_for_terminal(&bad.why);
        write_stderr(&format!(
            "error: `{name}` cannot be a job name: {why}{hint}\n"
        ));
        return Status::Usage;
    }
    let target = match args.target {
        TargetArg::Pytorchjob => Target::Pytorchjob,
        TargetArg::Trainjob => Target::Trainjob,
        TargetArg::Job => Target::Job,
        TargetArg::Jobset => Target::Jobset,
    };
    let to_stdout = args.file.as_os_str() == "-";
    let shown = trainc::diagnostic::escape_for_terminal(&args.file.display().to_string());
    if shown != args.file.display().to_string() {
        write_stderr(&format!(
            "error: the file name `{shown}` holds a control character; name the spec plainly, e.g. `trainspec.toml`\n"
        ));
        return Status::Usage;
    }
    let format = match format(args, to_stdout) {
        Ok(format) => format,
        Err(status) => return status,
    };
    let file = if to_stdout {
        match format {
            StarterFormat::Toml => "trainspec.toml".to_owned(),
            _ => "trainspec.yaml".to_owned(),
        }
    } else {
        args.file.display().to_string()
    };
    let text = starter::render(&Starter {
        file,
        name,
        target,
        gpu: args.gpu,
        format,
        schema_beside: !to_stdout,
    });
    if to_stdout {
        return super::written(super::write_stdout(&text), Status::Ok);
    }
    let path = &args.file;
    let existing = if args.force {
        super::atomic::Existing::Replace
    } else {
        super::atomic::Existing::Keep
    };
    let name = std::path::PathBuf::from(path.file_name().unwrap_or_default());
    let mut files = vec![(name, text.as_str())];
    let (schema, said) = schema_beside(path, format, args.force);
    files.extend(schema);
    let dir = trainc::source::directory_of(path);
    let written = super::atomic::write_all(dir, &files, existing).map_err(|(_, error)| error);
    match written {
        Ok(()) => {
            write_stderr(&format!(
                "wrote {}{said}; check it with `trainc check {}`\n",
                path.display(),
                trainc::syntax::shell::quote(&path.display().to_string())
            ));
            Status::Ok
        }
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            write_stderr(&format!(
                "error: `{}` already exists; pass --force to overwrite it\n",
                path.display()
            ));
            Status::Usage
        }
        Err(error) => {
            write_stderr(&format!(
                "error: cannot write `{}`: {}\n",
                path.display(),
                trainc::source::io_reason(&error)
            ));
            Status::Usage
        }
    }
}

/// The schema the spec's first line names, beside it (its name in the
/// spec's directory): to write when it is not there (or with `--force`),
/// else kept; and what to say of it.
fn schema_beside(
    path: &std::path::Path,
    format: StarterFormat,
    force: bool,
) -> (Option<(std::path::PathBuf, &'static str)>, String) {
    let schema_path = path
        .parent()
        .unwrap_or_else(|| std::path::Path::new(""))
        .join(starter::schema_file(format));
    let schema = if format == StarterFormat::Krm {
        trainc::spec::KRM_SCHEMA
    } else {
        trainc::spec::SPEC_SCHEMA
    };
    if schema_path.exists() && !force {
        let shown = schema_path.display();
        let refresh = if format == StarterFormat::Krm {
            "trainc schema --krm"
        } else {
            "trainc schema"
        };
        return (
            None,
            format!(" (kept the `{shown}` there: `{refresh} > {shown}` refreshes it)"),
        );
    }
    let said = format!(" and its schema, {}", schema_path.display());
    let name = std::path::PathBuf::from(starter::schema_file(format));
    (Some((name, schema)), said)
}

/// The starter's format, from the file name's extension and `--krm`.
fn format(args: &InitArgs, to_stdout: bool) -> Result<StarterFormat, Status> {
    let extension = args
        .file
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match (extension.as_deref(), args.krm) {
        (Some("yaml" | "yml"), true) => Ok(StarterFormat::Krm),
        (Some("yaml" | "yml"), false) => Ok(StarterFormat::Yaml),
        (_, true) if to_stdout => Ok(StarterFormat::Krm),
        (Some("toml"), false) => Ok(StarterFormat::Toml),
        _ if to_stdout => Ok(StarterFormat::Toml),
        (Some("toml"), true) => {
            write_stderr(&format!(
                "error: --krm writes YAML, and `{}` is a TOML file name; name it `.yaml`\n",
                args.file.display()
            ));
            Err(Status::Usage)
        }
        _ => {
            write_stderr(&format!(
                "error: cannot tell a format from `{}`: name it `.toml`, `.yaml` or `.yml` (or `-` for stdout)\n",
                args.file.display()
            ));
            Err(Status::Usage)
        }
    }
}

/// The current directory's name as a job name, else `train`.
fn default_name() -> String {
    std::env::current_dir()
        .ok()
        .and_then(|dir| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .map(|n| match names::Syntax::Dns1035.check(&n) {
            Ok(()) => n,
            Err(bad) => bad.better.unwrap_or_default(),
        })
        .filter(|n| names::dns1035_label(n).is_ok() && n.len() <= 40)
        .unwrap_or_else(|| "train".to_owned())
}
