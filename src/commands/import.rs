//! `trainc import FILE...`: manifests in, one spec per job out.

use std::path::PathBuf;

use super::atomic;
use super::{Status, read_input, report, write_stdout};
use crate::cli::{ImportArgs, ImportFormat};
use trainc::diagnostic::{Diagnostic, Severity, codes};
use trainc::import::write::{self, Format};
use trainc::source::{Sources, Span};
use trainc::trainer::runtime::Kind;

pub(super) fn run(args: &ImportArgs) -> Status {
    let format = match args.format {
        ImportFormat::Toml => Format::Toml,
        ImportFormat::Yaml => Format::Yaml,
        ImportFormat::Krm => Format::Krm,
    };
    let mut sources = Sources::new();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut status = Status::Ok;
    let mut specs: Vec<(String, String, Span)> = Vec::new();
    // The user's own runtimes the jobs name, for `--output-dir`.
    let mut runtimes: Vec<serde_json::Value> = Vec::new();
    for path in &args.files {
        let id = match read_input(
            &mut sources,
            path,
            &super::Shared::default(),
            &mut diagnostics,
        ) {
            Ok(Some(input)) => input.spec,
            Ok(None) => continue,
            Err(failed) => {
                status = failed;
                continue;
            }
        };
        let origin = if path == std::path::Path::new("-") {
            "standard input".to_owned()
        } else {
            format!("`{}`", path.display())
        };
        let imported = trainc::import::import(&sources, id, super::api_level(args.api_level));
        diagnostics.extend(imported.diagnostics);
        diagnostics.extend(imported.left);
        for mut job in imported.jobs {
            // Checked as written but for the runtimes file, which is not
            // written yet.
            let text = write::write(&job.spec, format, &origin);
            diagnostics.extend(self_check(&mut sources, &job.name, &text, format, job.at));
            if !job.runtimes.is_empty() {
                match &args.output_dir {
                    Some(_) => {
                        if let Some(trainjob) = &mut job.spec.trainjob {
                            trainjob.runtimes_file = Some(RUNTIMES_FILE.to_owned());
                        }
                        runtimes.append(&mut job.runtimes);
                    }
                    None => diagnostics.push(runtimes_left(&job)),
                }
            }
            let text = write::write(&job.spec, format, &origin);
            specs.push((job.name, text, job.at));
        }
    }
    if args.strict {
        for d in &mut diagnostics {
            d.severity = Severity::Error;
        }
    }
    trainc::diagnostic::sort(&mut diagnostics);
    if diagnostics.iter().any(Diagnostic::is_error) || status != Status::Ok {
        report(&sources, &diagnostics);
        return status.max(Status::Invalid);
    }
    let written = match &args.output_dir {
        None if specs.len() > 1 => {
            report(&sources, &diagnostics);
            super::write_stderr(&format!(
                "error: the input holds {} jobs; pass `--output-dir DIR` to write one spec each\n",
                specs.len()
            ));
            return Status::Usage;
        }
        None => {
            if let Err(failed) = write_stdout(&specs[0].1) {
                report(&sources, &diagnostics);
                return failed;
            }
            Ok(())
        }
        Some(dir) => write_files(dir, &specs, &runtimes, format, args.force),
    };
    report(&sources, &diagnostics);
    match written {
        Ok(()) => Status::Ok,
        Err(message) => {
            super::write_stderr(&format!("error: {message}\n"));
            Status::Usage
        }
    }
}

/// The written spec read back by `trainc check`: an error there is a bug of
/// import's, reported rather than written.
fn self_check(
    sources: &mut Sources,
    name: &str,
    text: &str,
    format: Format,
    at: Span,
) -> Vec<Diagnostic> {
    let id = sources.add(
        format!("{name}.{} (imported)", format.extension()),
        text.to_owned(),
    );
    let validated = trainc::check(sources, id);
    validated
        .diagnostics
        .into_iter()
        .filter(Diagnostic::is_error)
        .map(|d| {
            Diagnostic::error(
                codes::IMPORT,
                at,
                format!(
                    "the spec imported from job `{name}` does not pass `trainc check`: {}",
                    d.message
                ),
            )
            .with_help("the manifest has a value that trainc check rejects in a spec (fix it in the manifest and import again); if it is valid, this is a bug in trainc import")
        })
        .collect()
}

/// Where `--output-dir` puts the user's runtimes the jobs name.
const RUNTIMES_FILE: &str = "runtimes.yaml";

/// A job that names a runtime of the input, imported to standard output.
fn runtimes_left(job: &trainc::import::ImportedJob) -> Diagnostic {
    let names: Vec<String> = job
        .runtimes
        .iter()
        .map(|r| format!("`{}`", r["metadata"]["name"].as_str().unwrap_or("?")))
        .collect();
    Diagnostic::warning(
        codes::IMPORT_DROPPED,
        job.at,
        format!(
            "the runtime {} beside job `{}` is not in the spec",
            names.join(", "),
            job.name
        ),
    )
    .with_help(format!("with `--output-dir DIR`, import writes it to `DIR/{RUNTIMES_FILE}`, and the spec names it (`[trainjob] runtimesFile`) so the TrainJob is checked against it"))
}

/// The runtimes as one YAML stream, each once.
fn runtimes_text(runtimes: &[serde_json::Value]) -> String {
    let mut seen = std::collections::HashSet::new();
    let objects: Vec<trainc::render::Object> = runtimes
        .iter()
        .filter(|r| {
            seen.insert((
                r["kind"].as_str().map(str::to_owned),
                r["metadata"]["namespace"].as_str().map(str::to_owned),
                r["metadata"]["name"].as_str().map(str::to_owned),
            ))
        })
        .map(|r| trainc::render::Object {
            kind: r["kind"]
                .as_str()
                .and_then(Kind::from_kind)
                .map_or(trainc::render::trainingruntime::KIND, Kind::as_str),
            name: r["metadata"]["name"].as_str().unwrap_or("").to_owned(),
            value: r.clone(),
        })
        .collect();
    let header = "# The runtimes the imported TrainJobs run on, written by `trainc import`:\n# the specs name this file (`[trainjob] runtimesFile`); apply it with them.\n";
    format!(
        "{header}{}",
        trainc::emit::stream(&objects, trainc::emit::Format::Yaml)
    )
}

fn write_files(
    dir: &std::path::Path,
    specs: &[(String, String, Span)],
    runtimes: &[serde_json::Value],
    format: Format,
    force: bool,
) -> Result<(), String> {
    let mut names: Vec<&str> = specs.iter().map(|(n, _, _)| n.as_str()).collect();
    names.sort_unstable();
    if let Some([name, _]) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!(
            "two jobs are named `{name}`; import them into different directories"
        ));
    }
    let runtimes_text = (!runtimes.is_empty()).then(|| runtimes_text(runtimes));
    if runtimes_text.is_some()
        && specs
            .iter()
            .any(|(name, ..)| format!("{name}.{}", format.extension()) == RUNTIMES_FILE)
    {
        return Err(format!(
            "a job named like the runtimes file `{RUNTIMES_FILE}`; import it into another directory"
        ));
    }
    let files: Vec<(PathBuf, &str)> = specs
        .iter()
        .map(|(name, text, _)| {
            (
                PathBuf::from(format!("{name}.{}", format.extension())),
                text.as_str(),
            )
        })
        .chain(
            runtimes_text
                .as_deref()
                .map(|text| (PathBuf::from(RUNTIMES_FILE), text)),
        )
        .collect();
    atomic::write_all_or_say(dir, &files, force)?;
    for (path, _) in &files {
        super::write_stderr(&format!("wrote {}\n", dir.join(path).display()));
    }
    Ok(())
}
