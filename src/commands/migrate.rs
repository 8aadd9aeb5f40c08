//! `trainc migrate FILE...`: PyTorchJobs into TrainJobs, everything else
//! as it was; all of it written, or nothing.

use std::path::{Path, PathBuf};

use super::atomic;
use super::{Status, report, write_stderr, write_stdout};
use crate::cli::MigrateArgs;
use trainc::diagnostic::Diagnostic;
use trainc::migrate::{Migrated, Options};
use trainc::source::{self, Sources};

pub(super) fn run(args: &MigrateArgs) -> Status {
    let mut sources = Sources::new();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut status = Status::Ok;
    let mut options = Options {
        api_level: super::api_level(args.api_level),
        runtime: args.runtime.clone(),
        runtimes: None,
        gang_scheduler: args.gang_scheduler.clone(),
        training_operator: super::training_operator(args.training_operator),
    };
    if let Some(path) = &args.runtimes {
        match super::read_source(
            &mut sources,
            path,
            source::MAX_MANIFEST_BYTES,
            &mut diagnostics,
        ) {
            Ok(id) => options.runtimes = id.map(trainc::trainer::file::RuntimesFile::new),
            Err(failed) => status = failed,
        }
    }
    let files = super::verify::manifests(&args.files, &mut sources, &mut diagnostics, &mut status);
    let mut results: Vec<(PathBuf, Migrated)> = Vec::new();
    for path in files {
        let id = match super::read_source(
            &mut sources,
            &path,
            source::MAX_MANIFEST_BYTES,
            &mut diagnostics,
        ) {
            Ok(Some(id)) => id,
            Ok(None) => {
                status = status.max(Status::Invalid);
                continue;
            }
            Err(failed) => {
                status = status.max(failed);
                continue;
            }
        };
        let mut migrated = trainc::migrate::migrate(&mut sources, id, &options);
        diagnostics.append(&mut migrated.diagnostics);
        results.push((path, migrated));
    }
    trainc::diagnostic::sort(&mut diagnostics);
    // The runtimes file's problems come with each job's build: said once.
    diagnostics.dedup();
    let jobs: usize = results.iter().map(|(_, m)| m.jobs).sum();
    let failed: usize = results.iter().map(|(_, m)| m.failed).sum();
    if status != Status::Ok {
        report(&sources, &diagnostics);
        return status;
    }
    // An input with nothing to migrate (no object at all) is an error of its own.
    if failed == 0 && diagnostics.iter().any(Diagnostic::is_error) {
        report(&sources, &diagnostics);
        return Status::Invalid;
    }
    if failed > 0 && !args.keep_going {
        report(&sources, &diagnostics);
        write_stderr(&format!(
            "error: {failed} of {jobs} PyTorchJob{} could not be migrated; nothing was written (`--keep-going` writes the others)\n",
            if jobs == 1 { "" } else { "s" }
        ));
        return Status::Invalid;
    }
    let written = if args.spec {
        specs(args, &results)
    } else {
        manifests(args, &results)
    };
    report(&sources, &diagnostics);
    match written {
        Err(status) => status,
        Ok(()) if failed > 0 => {
            write_stderr(&format!(
                "error: {failed} of {jobs} PyTorchJob{} could not be migrated and {} kept as written\n",
                if jobs == 1 { "" } else { "s" },
                if failed == 1 { "is" } else { "are" }
            ));
            Status::Invalid
        }
        Ok(()) => Status::Ok,
    }
}

/// The migrated manifests: one stream on standard output, or each input
/// file under its own name in `--output-dir`.
fn manifests(args: &MigrateArgs, results: &[(PathBuf, Migrated)]) -> Result<(), Status> {
    let Some(dir) = &args.output_dir else {
        // Each file's stream after the one before, which may end without a
        // line break.
        let mut stream = String::new();
        for (i, (_, m)) in results.iter().enumerate() {
            if i > 0 {
                if !stream.is_empty() && !stream.ends_with('\n') {
                    stream.push('\n');
                }
                stream.push_str("---\n");
            }
            stream.push_str(&m.text);
        }
        return write_stdout(&stream);
    };
    let files: Vec<(PathBuf, &str)> = results
        .iter()
        .map(|(path, m)| (output_name(path, &args.files), m.text.as_str()))
        .collect();
    write_files(dir, &files, args.force)
}

/// Each migrated job's spec: the one on standard output, or one file each.
fn specs(args: &MigrateArgs, results: &[(PathBuf, Migrated)]) -> Result<(), Status> {
    let specs: Vec<&(String, String)> = results.iter().flat_map(|(_, m)| &m.specs).collect();
    let Some(dir) = &args.output_dir else {
        return match specs.as_slice() {
            [] => Ok(()),
            [(_, text)] => write_stdout(text),
            many => {
                write_stderr(&format!(
                    "error: {} jobs migrated; pass `--output-dir DIR` to write one spec each\n",
                    many.len()
                ));
                Err(Status::Usage)
            }
        };
    };
    let mut names: Vec<&str> = specs.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    if let Some([name, _]) = names.windows(2).find(|w| w[0] == w[1]) {
        write_stderr(&format!(
            "error: two jobs are named `{name}`; migrate them into different directories\n"
        ));
        return Err(Status::Usage);
    }
    let files: Vec<(PathBuf, &str)> = specs
        .iter()
        .map(|(name, text)| (PathBuf::from(format!("{name}.toml")), text.as_str()))
        .collect();
    write_files(dir, &files, args.force)
}

/// Where an input file goes under `--output-dir`: its path under the
/// directory argument it was found in, else its file name; standard input
/// is `stdin.yaml`.
fn output_name(path: &Path, arguments: &[PathBuf]) -> PathBuf {
    if path == Path::new("-") {
        return PathBuf::from("stdin.yaml");
    }
    for argument in arguments.iter().filter(|a| a.is_dir()) {
        if let Ok(rest) = path.strip_prefix(argument) {
            return rest.to_path_buf();
        }
    }
    path.file_name()
        .map_or_else(|| PathBuf::from("stdin.yaml"), PathBuf::from)
}

fn write_files(dir: &Path, files: &[(PathBuf, &str)], force: bool) -> Result<(), Status> {
    let mut paths: Vec<&PathBuf> = files.iter().map(|(p, _)| p).collect();
    paths.sort();
    if let Some([path, _]) = paths.windows(2).find(|w| w[0] == w[1]) {
        write_stderr(&format!(
            "error: two inputs would be written to `{}`; migrate them into different directories\n",
            dir.join(path).display()
        ));
        return Err(Status::Usage);
    }
    if let Err(message) = atomic::write_all_or_say(dir, files, force) {
        write_stderr(&format!("error: {message}\n"));
        return Err(Status::Usage);
    }
    for (path, _) in files {
        write_stderr(&format!("wrote {}\n", dir.join(path).display()));
    }
    Ok(())
}
