//! `trainc run SPEC`: build, then run the objects here as the cluster would.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value as Json;

use super::{Status, read_input, read_overlays, report, write_stderr};
use crate::cli::RunArgs;
use trainc::cluster::jobset::failure::Verdict;
use trainc::emit::{self, Format};
use trainc::run::RunError;
use trainc::run::supervise::{self, Outcome, Timeout};
use trainc::run::workdir::WorkDir;
use trainc::source::{SourceId, Sources};

pub(super) fn run(args: &RunArgs) -> Status {
    // `--timeout` counts from here: everything the run does is within it.
    let started = std::time::Instant::now();
    let mut sources = Sources::new();
    let Read {
        objects,
        text_id,
        runtimes_file,
        built,
    } = match objects(args, &mut sources) {
        Ok(read) => read,
        Err(status) => return status,
    };
    // The runtimes file, read once: a build has checked its TrainJob against
    // it already (an error there stopped the build).
    let runtimes = match runtimes_file {
        Some(id) => {
            let (found, problems) = trainc::trainer::file::read(&sources, id);
            if problems.iter().any(trainc::Diagnostic::is_error) {
                report(&sources, &problems);
                return Status::Invalid;
            }
            found
        }
        // Built from a spec: the runtime the build bound, which may come
        // from `[trainjob] runtimesFile`.
        None => built
            .as_ref()
            .and_then(|(_, runtime)| runtime.clone())
            .into_iter()
            .collect(),
    };
    let level = api_level(args, &objects, built.as_ref().map(|(level, _)| *level));
    // What the API server or an operator would reject does not run here
    // either: a name or path would be a path of this machine's, a value of
    // the wrong type a pod nobody could make. Refused before anything is
    // written.
    let verified = trainc::verify::manifests::verify_file(
        &sources,
        text_id,
        level,
        &runtimes,
        trainc::verify::manifests::Options::default(),
    );
    let refused: Vec<trainc::Diagnostic> = verified
        .diagnostics
        .into_iter()
        .filter(trainc::Diagnostic::is_error)
        .collect();
    if !refused.is_empty() {
        report(&sources, &refused);
        return Status::Invalid;
    }
    let workload = match trainc::cluster::workload(&objects, &runtimes, level.release()) {
        Ok(workload) => workload,
        Err(message) => return fail(&RunError::invalid(message)),
    };
    if let Err(error) = trainc::run::plan::fits(&workload) {
        return fail(&error);
    }
    match options(args, &workload, started) {
        Ok((options, timeout)) => run_plan(&objects, &workload, &options, timeout.as_ref()),
        Err(error) => fail(&error),
    }
}

/// What the command line says stands in for the cluster, and the run's
/// own time limit.
fn options(
    args: &RunArgs,
    workload: &trainc::cluster::Workload,
    started: std::time::Instant,
) -> Result<(trainc::run::Options, Option<Timeout>), RunError> {
    if args.entrypoint.is_some() && !runs_an_image_entrypoint(workload) {
        return Err(RunError::invalid(
            "`--entrypoint` says what an image's entrypoint is, but every container here has a `command`",
        )
        .with_help("leave `--entrypoint` out"));
    }
    let timeout = match args.timeout.as_deref() {
        None => None,
        Some(given) => match trainc::syntax::duration::parse_seconds(given) {
            Ok(seconds) => Some(Timeout {
                ends: started + Duration::from_secs(seconds),
                given: given.to_owned(),
            }),
            Err(message) => return Err(RunError::usage(format!("--timeout: {message}"))),
        },
    };
    let python = python(args.python.as_ref()).map_err(RunError::usage)?;
    let maps: Vec<(String, PathBuf)> = args
        .maps
        .iter()
        .map(|(target, dir)| (target.clone(), absolute(dir)))
        .collect();
    if let Some((target, dir)) = maps
        .iter()
        .find(|(t, d)| !t.starts_with('/') || !d.is_dir())
    {
        return Err(RunError::usage(format!(
            "--map {target}={}: the image path must be absolute and the directory must exist",
            dir.display()
        )));
    }
    let claims: Vec<(String, PathBuf)> = args
        .claims
        .iter()
        .map(|(n, p)| (n.clone(), absolute(p)))
        .collect();
    if let Some((name, dir)) = claims.iter().find(|(_, d)| !d.is_dir()) {
        return Err(RunError::usage(format!(
            "--claim {name}={}: not a directory",
            dir.display()
        )));
    }
    let options = trainc::run::Options {
        python,
        maps,
        claims,
        configmaps: args.configmaps.clone(),
        secrets: args.secrets.clone(),
        entrypoint: args
            .entrypoint
            .iter()
            .flat_map(|words| words.split_whitespace().map(str::to_owned))
            .collect(),
        isolate: !args.no_namespaces && trainc::run::sandbox::namespaces_available(),
    };
    Ok((options, timeout))
}

fn run_plan(
    objects: &[Json],
    workload: &trainc::cluster::Workload,
    options: &trainc::run::Options,
    timeout: Option<&Timeout>,
) -> Status {
    let python_bin = options.python.parent().unwrap_or(Path::new("/"));
    let plan = match trainc::run::plan::plan(objects, workload, options)
        .and_then(|plan| plan.check_programs(python_bin).map(|()| plan))
        .and_then(|plan| trainc::run::ports::check(&plan).map(|()| plan))
    {
        Ok(plan) => plan,
        Err(error) => return fail(&error),
    };
    write_stderr(&trainc::diagnostic::escape_lines_for_terminal(&plan.header));
    let interrupted = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGQUIT,
    ] {
        let _ = signal_hook::flag::register(signal, Arc::clone(&interrupted));
    }
    let job = trainc::diagnostic::escape_for_terminal(&plan.job);
    // A bug that aborts trainc still removes the run's files (unwinding,
    // and with it `Drop`, is off in a release build).
    let current: Arc<Mutex<Option<PathBuf>>> = Arc::default();
    let previous = std::panic::take_hook();
    let in_use = Arc::clone(&current);
    std::panic::set_hook(Box::new(move |info| {
        if let Some(path) = in_use.lock().ok().and_then(|p| p.clone()) {
            let _ = std::fs::remove_dir_all(path);
        }
        trainc::run::reaper::sweep();
        previous(info);
    }));
    // A JobSet's failure policy: every pod deleted and made again, in a
    // fresh directory (their emptyDirs new, the claims kept), as long as
    // the policy says, all within the run's `--timeout`.
    let mut restarts = Restarts::default();
    let outcome = loop {
        if let Some(timeout) = timeout.filter(|t| t.passed()) {
            break Outcome::Failed(timeout.failure(&job));
        }
        let outcome = run_once(&plan, options, timeout, &interrupted, &current);
        let Outcome::Failed(failure) = &outcome else {
            break outcome;
        };
        let next = restarts.next(&plan, workload, failure, timeout.map(|t| t.ends));
        // Deciding on a restart counts too.
        let out_of_time = match &next {
            Next::OutOfTime => true,
            Next::Restart(_) => timeout.is_some_and(Timeout::passed),
            Next::End => false,
        };
        if out_of_time && let Some(timeout) = timeout {
            break Outcome::Failed(timeout.failure(&job));
        }
        match next {
            Next::Restart(why) => write_stderr(&format!(
                "trainc run: {job}: {}; {}: the failed Job makes its controller delete every pod and make them all again\n",
                trainc::diagnostic::escape_for_terminal(&failure.message),
                trainc::diagnostic::escape_for_terminal(&why),
            )),
            Next::End | Next::OutOfTime => break outcome,
        }
    };
    match outcome {
        Outcome::Succeeded => {
            write_stderr(&format!("trainc run: {job} succeeded\n"));
            Status::Ok
        }
        Outcome::Failed(failure) => {
            let after = match restarts.made {
                0 => String::new(),
                1 => " after 1 restart".to_owned(),
                n => format!(" after {n} restarts"),
            };
            let why = restarts
                .ended
                .map(|why| format!(" ({why})"))
                .unwrap_or_default();
            write_stderr(&format!(
                "trainc run: {job} failed{after}: {}{}\n",
                trainc::diagnostic::escape_for_terminal(&failure.message),
                trainc::diagnostic::escape_for_terminal(&why)
            ));
            Status::Failed
        }
        Outcome::NotStarted(error) => fail(&error),
        Outcome::Interrupted => {
            write_stderr(&format!(
                "trainc run: interrupted; every process of {job} was stopped\n"
            ));
            Status::Interrupted
        }
    }
}

/// The restarts of a JobSet's pods after its jobs fail
/// ([`trainc::cluster::jobset::failure`]).
#[derive(Default)]
struct Restarts {
    /// Every restart made; those that count towards `maxRestarts`.
    made: u64,
    counted: u64,
    /// Why the JobSet then failed, where its failure policy says so.
    ended: Option<String>,
}

/// Restarts that do not count towards `maxRestarts` that `trainc run`
/// makes at most: JobSet makes them for ever, and a run must end.
const UNCOUNTED_AT_MOST: u64 = 10;

/// What follows a failed run of the pods.
enum Next {
    /// Every pod is made again, for this reason.
    Restart(String),
    /// The run ends with the failure (no failure policy, a failure no
    /// container made, the policy's word).
    End,
    /// The run's `--timeout` passed while the failure was matched against
    /// the policy's rules.
    OutOfTime,
}

impl Restarts {
    /// After `failure`, deciding by `deadline` at the latest: whether every
    /// pod is made again.
    fn next(
        &mut self,
        plan: &trainc::run::Plan,
        workload: &trainc::cluster::Workload,
        failure: &supervise::Failure,
        deadline: Option<std::time::Instant>,
    ) -> Next {
        let Some(group) = plan.group.as_ref() else {
            return Next::End;
        };
        let Some(exit) = failure.exit.as_ref() else {
            return Next::End;
        };
        let Some(pod) = workload.pods.iter().find(|p| p.name == exit.pod) else {
            return Next::End;
        };
        let job_failure = group.failure(pod, &exit.container, exit.code);
        let Some(verdict) = group.policy.decide(&job_failure, self.counted, deadline) else {
            return Next::OutOfTime;
        };
        match verdict {
            Verdict::Fail(why) => {
                self.ended = Some(why);
                Next::End
            }
            Verdict::Restart { counted: false, .. }
                if self.made - self.counted >= UNCOUNTED_AT_MOST =>
            {
                self.ended = Some(format!(
                    "trainc run stops after {UNCOUNTED_AT_MOST} restarts that do not count; on the cluster JobSet goes on"
                ));
                Next::End
            }
            Verdict::Restart { counted, why } => {
                self.made += 1;
                self.counted += u64::from(counted);
                Next::Restart(why)
            }
        }
    }
}

/// One run of every pod of the plan, in a fresh private directory, removed
/// when it ends.
fn run_once(
    plan: &trainc::run::Plan,
    options: &trainc::run::Options,
    timeout: Option<&Timeout>,
    interrupted: &AtomicBool,
    current: &Mutex<Option<PathBuf>>,
) -> Outcome {
    let work = match WorkDir::create(&std::env::temp_dir()) {
        Ok(work) => work,
        Err(error) => return Outcome::NotStarted(error),
    };
    if let Ok(mut current) = current.lock() {
        *current = Some(work.path().to_path_buf());
    }
    let laid = match work.lay(plan) {
        Ok(laid) => laid,
        Err(error) => return Outcome::NotStarted(error),
    };
    let run = trainc::run::launches(plan, laid, options.isolate);
    let outcome = supervise::run(
        run,
        timeout,
        &mut std::io::stdout(),
        &mut std::io::stderr(),
        interrupted,
    );
    drop(work);
    outcome
}

/// Says `error` and gives its exit status.
fn fail(error: &RunError) -> Status {
    super::write_rendered(&error.render());
    if error.exit_status() == 2 {
        Status::Usage
    } else {
        Status::Invalid
    }
}

/// What there is to run.
struct Read {
    objects: Vec<Json>,
    /// Their text, as `kubectl apply` would read it.
    text_id: SourceId,
    /// `--runtimes`.
    runtimes_file: Option<SourceId>,
    /// Built from a spec with a TrainJob: the API level it was built for and
    /// the runtime trainc bound it to.
    built: Option<(
        trainc::spec::ApiLevel,
        Option<trainc::trainer::runtime::Runtime>,
    )>,
}

/// The objects to run: the spec's build, written and read back as
/// `kubectl apply` reads it, or the manifest's; with the runtimes file
/// (`--runtimes`).
fn objects(args: &RunArgs, sources: &mut Sources) -> Result<Read, Status> {
    let mut diagnostics = Vec::new();
    let shared = read_overlays(sources, &args.compose, &mut diagnostics)
        .inspect_err(|_| report(sources, &diagnostics))?;
    let input = match read_input(sources, &args.spec, &shared, &mut diagnostics) {
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
    let mut trainjob = None;
    let text_id = if args.manifests {
        input.spec
    } else {
        let options = super::options(&args.compose, &args.generate);
        let built = trainc::build(sources, &input, &options);
        let mut diagnostics = built.diagnostics;
        trainc::diagnostic::sort(&mut diagnostics);
        report(sources, &diagnostics);
        let Some(objects) = built.objects else {
            return Err(Status::Invalid);
        };
        trainjob = built.trainjob;
        sources.add("(the built objects)", emit::stream(&objects, Format::Yaml))
    };
    let text = sources.get(text_id).text.clone();
    let documents = trainc::parse::parse_yaml_stream(
        text_id,
        &text,
        trainc::verify::manifests::MAX_DEPTH,
        trainc::verify::manifests::MAX_DOCUMENTS,
    )
    .map_err(|d| {
        report(sources, &d);
        Status::Invalid
    })?;
    let (found, not_objects) = trainc::parse::stream_objects(&documents);
    let problems = trainc::parse::not_objects_errors(
        not_objects,
        trainc::diagnostic::codes::VERIFY_SCHEMA,
        "",
        trainc::verify::manifests::ONE_OBJECT_EACH,
    );
    if !problems.is_empty() {
        report(sources, &problems);
        return Err(Status::Invalid);
    }
    Ok(Read {
        objects: found.iter().map(|o| o.node.to_sent_json()).collect(),
        text_id,
        runtimes_file: shared
            .runtimes
            .as_ref()
            .map(trainc::trainer::file::RuntimesFile::id),
        built: trainjob,
    })
}

/// The Trainer API level: `--api-level`, else the level the spec was built
/// for (`built`), else what a manifest's TrainJob's patch field says (v2.0
/// `podSpecOverrides`, v2.1 `podTemplateOverrides`), else v2.3.
fn api_level(
    args: &RunArgs,
    objects: &[Json],
    built: Option<trainc::spec::ApiLevel>,
) -> trainc::spec::ApiLevel {
    let written = || {
        let trainjob = objects.iter().find(|o| o["kind"] == "TrainJob")?;
        Some(trainc::import::written_level(&trainjob["spec"]))
    };
    super::api_level(args.generate.api_level)
        .or(built)
        .or_else(written)
        .unwrap_or(trainc::spec::ApiLevel::V2_3)
}

/// The Python standing in for the image: `--python`, else `python3` on PATH.
fn python(given: Option<&PathBuf>) -> Result<PathBuf, String> {
    let path = match given {
        Some(path) if path.components().count() > 1 => absolute(path),
        Some(name) => trainc::run::on_path(&name.display().to_string())
            .ok_or_else(|| format!("--python {}: not found on PATH", name.display()))?,
        None => trainc::run::on_path("python3").ok_or(
            "no python3 on PATH: give the Python environment that stands in for the image with --python",
        )?,
    };
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!("--python {}: no such file", path.display()))
    }
}

/// `path` from the current directory, links kept (a venv's python is one).
fn absolute(path: &std::path::Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Whether a container of the pods (as their controller makes them: a
/// TrainJob's trainer with its runtime's command) has no `command`, so runs
/// its image's entrypoint.
fn runs_an_image_entrypoint(workload: &trainc::cluster::Workload) -> bool {
    workload.pods.iter().any(|pod| {
        [false, true]
            .into_iter()
            .flat_map(|init| pod.containers(init))
            .any(|c| c.get("command").is_none_or(Json::is_null))
    })
}
