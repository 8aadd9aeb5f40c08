//! `trainc run SPEC`: build, then run the objects here as the cluster would.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde_json::Value as Json;

use super::{Status, read_input, read_overlays, report, write_stderr};
use crate::cli::RunArgs;
use crate::emit::{self, Format};
use crate::run::supervise::{self, Outcome};
use crate::source::Sources;
use crate::trainer::Release;

pub(super) fn run(args: &RunArgs) -> Status {
    let mut sources = Sources::new();
    let objects = match objects(args, &mut sources) {
        Ok(objects) => objects,
        Err(status) => return status,
    };
    let runtimes = match &args.compose.runtimes {
        Some(path) if args.manifests => match crate::source::read(&mut sources, path) {
            Ok(id) => {
                let (found, problems) = crate::trainer::file::read(&sources, id);
                if problems.iter().any(crate::Diagnostic::is_error) {
                    report(&sources, &problems);
                    return Status::Invalid;
                }
                found
            }
            Err(_) => return usage(&format!("cannot read the runtimes file {}", path.display())),
        },
        // A build read it already: the TrainJob was checked against it, and
        // a written runtime is among the objects.
        Some(path) => match crate::source::read(&mut sources, path) {
            Ok(id) => crate::trainer::file::read(&sources, id).0,
            Err(_) => Vec::new(),
        },
        None => Vec::new(),
    };
    let release = release(args, &objects);
    let workload = match crate::cluster::workload(&objects, &runtimes, release) {
        Ok(workload) => workload,
        Err(message) => return failed_to_start(&message, Status::Invalid),
    };
    let timeout = match args
        .timeout
        .as_deref()
        .map(crate::syntax::duration::parse_seconds)
    {
        None => None,
        Some(Ok(seconds)) => Some(Duration::from_secs(seconds)),
        Some(Err(message)) => return usage(&format!("--timeout: {message}")),
    };
    let python = match python(args.python.as_ref()) {
        Ok(python) => python,
        Err(message) => return usage(&message),
    };
    let work = std::env::temp_dir().join(format!("trainc-run-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&work) {
        return usage(&format!("{}: {e}", work.display()));
    }
    let maps = args
        .maps
        .iter()
        .map(|(target, dir)| (target.clone(), absolute(dir)))
        .collect();
    let options = crate::run::Options {
        python,
        maps,
        claims: args
            .claims
            .iter()
            .map(|(n, p)| (n.clone(), absolute(p)))
            .collect(),
        configmaps: args.configmaps.clone(),
        secrets: args.secrets.clone(),
        isolate: !args.no_namespaces && crate::run::sandbox::namespaces_available(),
        work: work.clone(),
    };
    let status = run_plan(&objects, &workload, &options, timeout);
    let _ = std::fs::remove_dir_all(&work);
    status
}

fn run_plan(
    objects: &[Json],
    workload: &crate::cluster::Workload,
    options: &crate::run::Options,
    timeout: Option<Duration>,
) -> Status {
    if let Some((target, dir)) = options
        .maps
        .iter()
        .find(|(t, d)| !t.starts_with('/') || !d.is_dir())
    {
        return usage(&format!(
            "--map {target}={}: the image path must be absolute and the directory must exist",
            dir.display()
        ));
    }
    let plan = match crate::run::prepare(objects, workload, options) {
        Ok(plan) => plan,
        Err(message) => return failed_to_start(&message, Status::Invalid),
    };
    write_stderr(&crate::diagnostic::escape_lines_for_terminal(&plan.header));
    let interrupted = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        let _ = signal_hook::flag::register(signal, Arc::clone(&interrupted));
    }
    let job = plan.job.clone();
    let outcome = supervise::run(
        plan,
        timeout,
        &mut std::io::stdout(),
        &mut std::io::stderr(),
        &interrupted,
    );
    match outcome {
        Outcome::Succeeded => {
            write_stderr(&format!("trainc run: {job} succeeded\n"));
            Status::Ok
        }
        Outcome::Failed(message) => {
            write_stderr(&crate::diagnostic::escape_lines_for_terminal(&format!(
                "trainc run: {job} failed: {message}\n"
            )));
            Status::Failed
        }
        Outcome::Interrupted => {
            write_stderr(&format!(
                "trainc run: interrupted; every process of {job} was stopped\n"
            ));
            Status::Interrupted
        }
    }
}

/// The objects to run: the spec's build, written and read back as
/// `kubectl apply` reads it, or the manifest's.
fn objects(args: &RunArgs, sources: &mut Sources) -> Result<Vec<Json>, Status> {
    let mut diagnostics = Vec::new();
    let text_id = if args.manifests {
        match crate::source::read(sources, &args.spec) {
            Ok(id) => id,
            Err(crate::source::ReadError::Io { name, error }) => {
                return Err(usage(&format!(
                    "cannot read `{name}`: {}",
                    crate::source::io_reason(&error)
                )));
            }
            Err(crate::source::ReadError::Invalid(d)) => {
                report(sources, &[*d]);
                return Err(Status::Invalid);
            }
        }
    } else {
        let overlays = read_overlays(sources, &args.compose, &mut diagnostics)
            .inspect_err(|_| report(sources, &diagnostics))?;
        let input = match read_input(sources, &args.spec, &overlays, &mut diagnostics) {
            Ok(Some(input)) if diagnostics.is_empty() => input,
            Ok(_) => {
                report(sources, &diagnostics);
                return Err(Status::Invalid);
            }
            Err(failed) => {
                report(sources, &diagnostics);
                return Err(failed);
            }
        };
        let options = super::options(&args.compose, &args.generate);
        let built = crate::build(sources, &input, &options);
        let mut diagnostics = built.diagnostics;
        crate::diagnostic::sort(&mut diagnostics);
        report(sources, &diagnostics);
        let Some(objects) = built.objects else {
            return Err(Status::Invalid);
        };
        sources.add("(the built objects)", emit::stream(&objects, Format::Yaml))
    };
    let text = sources.get(text_id).text.clone();
    let documents = crate::parse::parse_yaml_stream(text_id, &text, 64, 10_000).map_err(|d| {
        report(sources, &d);
        Status::Invalid
    })?;
    let (found, _) = crate::parse::stream_objects(&documents);
    Ok(found.iter().map(|o| o.node.to_json()).collect())
}

/// The Trainer release: `--api-level`, else what the TrainJob's patch field
/// says (v2.0 `podSpecOverrides`, v2.1 `podTemplateOverrides`), else v2.3.
fn release(args: &RunArgs, objects: &[Json]) -> Release {
    use crate::spec::ApiLevel;
    let level = super::api_level(args.generate.api_level).or_else(|| {
        let trainjob = objects.iter().find(|o| o["kind"] == "TrainJob")?;
        if trainjob["spec"]["podSpecOverrides"].is_array() {
            Some(ApiLevel::V2_0)
        } else if trainjob["spec"]["podTemplateOverrides"].is_array() {
            Some(ApiLevel::V2_1)
        } else {
            None
        }
    });
    match level.unwrap_or(ApiLevel::V2_3) {
        ApiLevel::V2_0 => Release::V2_0,
        ApiLevel::V2_1 => Release::V2_1,
        ApiLevel::V2_2 => Release::V2_2,
        ApiLevel::V2_3 => Release::V2_3,
    }
}

/// The Python standing in for the image: `--python`, else `python3` on PATH.
fn python(given: Option<&PathBuf>) -> Result<PathBuf, String> {
    let path = match given {
        Some(path) if path.components().count() > 1 => absolute(path),
        Some(name) => on_path(&name.display().to_string())
            .ok_or_else(|| format!("--python {}: not found on PATH", name.display()))?,
        None => on_path("python3").ok_or(
            "no python3 on PATH: give the Python environment that stands in for the image with --python",
        )?,
    };
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!("--python {}: no such file", path.display()))
    }
}

fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| absolute(&dir.join(program)))
        .find(|p| p.is_file())
}

/// `path` from the current directory, links kept (a venv's python is one).
fn absolute(path: &std::path::Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

fn usage(message: &str) -> Status {
    write_stderr(&crate::diagnostic::escape_lines_for_terminal(&format!(
        "error: {message}\n"
    )));
    Status::Usage
}

fn failed_to_start(message: &str, status: Status) -> Status {
    write_stderr(&crate::diagnostic::escape_lines_for_terminal(&format!(
        "error: {message}\n"
    )));
    status
}
