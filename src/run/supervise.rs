//! Following the pods to the job's end: init containers one after another
//! (a sidecar, `restartPolicy: Always`, started and left running beside
//! the rest, stopped when the containers have ended), then the pod's
//! containers together; every line they print, prefixed with
//! its pod (a line is cut at [`MAX_LINE`]); the job decided by its
//! controller's rule ([`Success`]); and at the end, whatever the reason
//! (done, a failure, the deadline, a signal), every process of the job
//! stopped.
//!
//! Every process a run starts ends with it. trainc is the subreaper of its
//! descendants (`PR_SET_CHILD_SUBREAPER`), so that a process that leaves its
//! parent and its process group (`setsid`, a daemon) still belongs to the
//! run; at the end each container's process group gets SIGTERM, then every
//! descendant still there SIGTERM and, after [`GRACE`], SIGKILL, and each is
//! reaped. A container in namespaces ends with its PID namespace. Only
//! SIGKILL to trainc itself skips this: then the namespaces' `unshare` is
//! ended by the kernel (`--pdeathsig`), a plain process is not.

use std::io::{BufReader, Read, Write};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

use super::error::RunError;
use super::output::{read_handshake, read_lines};
use super::reaper::GRACE;
use super::{Launch, Prepared};
use crate::cluster::Success;

/// How the run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    /// The job failed as the cluster would fail it.
    Failed(Failure),
    /// A container could not be started (its setup failed): the run, not
    /// the job.
    NotStarted(RunError),
    Interrupted,
}

/// How the job failed: in words, and the container whose exit failed it
/// (none when it ran past its deadline).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub message: String,
    pub exit: Option<Exit>,
}

/// A container that ended with a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    pub pod: String,
    pub container: String,
    /// `None`: killed by a signal.
    pub code: Option<i32>,
}

/// One pod, ready to start.
pub struct PodRun {
    pub name: String,
    pub stage: u32,
    pub on_failure: String,
    pub init: Vec<Launch>,
    pub containers: Vec<Launch>,
}

/// The run, ready to start.
pub struct Run {
    pub job: String,
    pub pods: Vec<PodRun>,
    pub success: Success,
    pub deadline: Option<u64>,
}

/// How long pods still running get after the job has succeeded by its
/// controller's rule (a PyTorchJob's Master done).
const AFTER_SUCCESS: Duration = Duration::from_secs(30);
/// A line a container printed.
struct Line {
    label: String,
    stderr: bool,
    text: String,
}

/// What a container's setup said: `None` until it has.
type Handshake = Arc<Mutex<Option<Result<(), String>>>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Waiting,
    Init(usize),
    Running,
    Succeeded,
    Failed,
}

/// A started container.
struct Live {
    index: usize,
    /// An init container (`index` is into the pod's `init`).
    init: bool,
    child: Child,
    handshake: Option<Handshake>,
}

struct Pod {
    run: PodRun,
    phase: Phase,
    live: Vec<Live>,
}

/// The run's own time limit (`--timeout`), counted from the start of
/// `trainc run`: everything after that counts (reading, each restart,
/// matching a failure against a failure policy), and a run past it is
/// stopped and said to be, in the words it was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeout {
    pub ends: Instant,
    /// As the command line gave it (`3s`, `1h`).
    pub given: String,
}

impl Timeout {
    pub fn passed(&self) -> bool {
        Instant::now() >= self.ends
    }

    /// The failure of a run of `job` that went past it.
    pub fn failure(&self, job: &str) -> Failure {
        Failure {
            message: format!(
                "{job} ran past --timeout {} and was stopped",
                crate::diagnostic::escape_for_terminal(&self.given)
            ),
            exit: None,
        }
    }
}

/// Runs `run` to its end. `timeout` bounds it besides the job's deadline;
/// `interrupted` is set by a signal.
pub fn run(
    run: Run,
    timeout: Option<&Timeout>,
    out: &mut dyn Write,
    err: &mut dyn Write,
    interrupted: &AtomicBool,
) -> Outcome {
    // Orphans of the job's processes become trainc's, not init's.
    let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
    let (sender, lines) = mpsc::channel::<Line>();
    let start = Instant::now();
    // The job's own deadline, from the start of this attempt.
    let deadline = run.deadline.map(|d| (start + Duration::from_secs(d), d));
    let job = run.job.clone();
    let mut pods: Vec<Pod> = run
        .pods
        .into_iter()
        .map(|run| Pod {
            run,
            phase: Phase::Waiting,
            live: Vec::new(),
        })
        .collect();
    let mut stage = 0;
    let mut succeeded_at: Option<Instant> = None;
    let outcome = loop {
        let stage_done = pods
            .iter()
            .filter(|p| p.run.stage == stage)
            .all(|p| p.phase == Phase::Succeeded);
        if stage_done && pods.iter().any(|p| p.run.stage > stage) {
            stage = pods
                .iter()
                .map(|p| p.run.stage)
                .filter(|s| *s > stage)
                .min()
                .unwrap_or(stage);
        }
        let started = pods
            .iter_mut()
            .filter(|p| p.phase == Phase::Waiting && p.run.stage == stage)
            .try_for_each(|pod| advance(pod, &sender));
        if let Err(error) = started {
            break Outcome::NotStarted(error);
        }
        while let Ok(line) = lines.recv_timeout(Duration::from_millis(50)) {
            print(&line, out, err);
        }
        if let Err(outcome) = collect(&mut pods, &run.success, &sender, &mut succeeded_at) {
            break outcome;
        }
        if pods.iter().all(|p| p.phase == Phase::Succeeded) {
            break Outcome::Succeeded;
        }
        if succeeded_at.is_some_and(|at| {
            pods.iter().all(|p| p.live.is_empty()) || at.elapsed() > AFTER_SUCCESS
        }) {
            break Outcome::Succeeded;
        }
        if interrupted.load(Ordering::Relaxed) {
            break Outcome::Interrupted;
        }
        if let Some(timeout) = timeout.filter(|t| t.passed())
            && deadline.is_none_or(|(ends, _)| timeout.ends <= ends)
        {
            break Outcome::Failed(timeout.failure(&job));
        }
        if let Some((_, seconds)) = deadline.filter(|(ends, _)| Instant::now() > *ends) {
            break Outcome::Failed(Failure {
                message: format!(
                    "{job} ran past the job's activeDeadlineSeconds ({seconds} s) and was stopped"
                ),
                exit: None,
            });
        }
    };
    stop(&mut pods);
    drop(sender);
    // What the containers printed before they ended.
    let drain_until = Instant::now() + Duration::from_secs(2);
    while let Ok(line) = lines.recv_timeout(drain_until.saturating_duration_since(Instant::now())) {
        print(&line, out, err);
    }
    outcome
}

/// Collects ended containers; notes when the job has succeeded by its
/// rule; the outcome when a pod failed or a container could not start.
fn collect(
    pods: &mut [Pod],
    success: &Success,
    sender: &mpsc::Sender<Line>,
    succeeded_at: &mut Option<Instant>,
) -> Result<(), Outcome> {
    for pod in pods {
        poll(pod, sender)?;
        if pod.phase == Phase::Succeeded {
            let done = match success {
                Success::Pod(name) => *name == pod.run.name,
                Success::AnyPod => true,
                Success::AllPods => false,
            };
            if done && succeeded_at.is_none() {
                *succeeded_at = Some(Instant::now());
            }
        }
    }
    Ok(())
}

fn print(line: &Line, out: &mut dyn Write, err: &mut dyn Write) {
    let shown = crate::diagnostic::escape_for_terminal;
    let to: &mut dyn Write = if line.stderr { err } else { out };
    let _ = writeln!(to, "[{}] {}", shown(&line.label), shown(&line.text));
    let _ = to.flush();
}

/// Starts the pod's next container(s): the next init container, and past
/// a sidecar (an init container with `restartPolicy: Always`, which runs
/// beside the rest) the one after it too, as the kubelet does once it has
/// started; after the last, the containers.
fn advance(pod: &mut Pod, sender: &mpsc::Sender<Line>) -> Result<(), RunError> {
    let mut next_init = match pod.phase {
        Phase::Waiting => 0,
        Phase::Init(i) => i + 1,
        _ => return Ok(()),
    };
    while next_init < pod.run.init.len() {
        let live = spawn(next_init, true, &pod.run.init[next_init], sender)
            .map_err(|e| e.within(&format!("pod {}", pod.run.name)))?;
        pod.live.push(live);
        pod.phase = Phase::Init(next_init);
        if !pod.run.init[next_init].sidecar {
            return Ok(());
        }
        next_init += 1;
    }
    pod.phase = Phase::Running;
    for index in 0..pod.run.containers.len() {
        let live = spawn(index, false, &pod.run.containers[index], sender)
            .map_err(|e| e.within(&format!("pod {}", pod.run.name)))?;
        pod.live.push(live);
    }
    Ok(())
}

fn spawn(
    index: usize,
    init: bool,
    launch: &Launch,
    sender: &mpsc::Sender<Line>,
) -> Result<Live, RunError> {
    use std::os::unix::process::CommandExt as _;
    let Prepared {
        mut command,
        input,
        handshake,
    } = (launch.start)()?;
    let mut child = command
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| {
            RunError::cannot_start(format!(
                "{}: cannot start: {}",
                launch.label,
                crate::source::io_reason(&e)
            ))
        })?;
    if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
        // The helper reads it whole before anything else; a helper that
        // died first is found when its exit is collected.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    let handshake: Option<Handshake> = handshake.then(Handshake::default);
    for (stream, is_err) in [
        (
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
            false,
        ),
        (
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
            true,
        ),
    ] {
        let Some(stream) = stream else { continue };
        let sender = sender.clone();
        let label = launch.label.clone();
        let setup = handshake.clone().filter(|_| !is_err);
        std::thread::spawn(move || {
            let mut reader = BufReader::with_capacity(super::output::MAX_LINE, stream);
            if let Some(setup) = setup
                && !read_handshake(&mut reader, &setup)
            {
                return;
            }
            read_lines(&mut reader, |text| {
                sender
                    .send(Line {
                        label: label.clone(),
                        stderr: is_err,
                        text,
                    })
                    .is_ok()
            });
        });
    }
    Ok(Live {
        index,
        init,
        child,
        handshake,
    })
}

/// Collects the pod's ended containers: the outcome when the pod failed or
/// a container's setup did.
fn poll(pod: &mut Pod, sender: &mpsc::Sender<Line>) -> Result<(), Outcome> {
    let mut ended = Vec::new();
    for (at, live) in pod.live.iter_mut().enumerate() {
        if let Ok(Some(status)) = live.child.try_wait() {
            ended.push((at, status));
        }
    }
    for (at, status) in ended.into_iter().rev() {
        let live = pod.live.remove(at);
        let init = live.init;
        let launch = if init {
            &pod.run.init[live.index]
        } else {
            &pod.run.containers[live.index]
        };
        if let Some(setup) = &live.handshake
            && let Err(why) = settled(setup)
        {
            pod.phase = Phase::Failed;
            return Err(Outcome::NotStarted(RunError::cannot_start(format!(
                "pod {} {} `{}` could not start: {why}",
                pod.run.name,
                if init { "init container" } else { "container" },
                launch.container
            ))));
        }
        if launch.sidecar {
            // Its end decides nothing; the kubelet would start it again.
            let _ = sender.send(Line {
                label: launch.label.clone(),
                stderr: true,
                text: format!(
                    "sidecar `{}` ended ({status}); on the cluster the kubelet starts it again, trainc run does not",
                    launch.container
                ),
            });
            continue;
        }
        if !status.success() {
            pod.phase = Phase::Failed;
            let how = match status.code() {
                Some(code) => format!("exited with {code}"),
                None => "was killed by a signal".to_owned(),
            };
            let what = if init { "init container" } else { "container" };
            return Err(Outcome::Failed(Failure {
                message: format!(
                    "pod {}: {what} `{}` {how}; on the cluster {}",
                    pod.run.name, launch.container, pod.run.on_failure
                ),
                exit: Some(Exit {
                    pod: pod.run.name.clone(),
                    container: launch.container.clone(),
                    code: status.code(),
                }),
            }));
        }
        if init {
            advance(pod, sender).map_err(Outcome::NotStarted)?;
        }
    }
    // Every container done: the sidecars are stopped (their exit decides
    // nothing) and the pod has succeeded.
    if pod.phase == Phase::Running && pod.live.iter().all(|l| l.init) {
        end(pod.live.iter_mut().map(|l| &mut l.child).collect());
        pod.live.clear();
        pod.phase = Phase::Succeeded;
    }
    Ok(())
}

/// What a container's setup said, waiting a little for its reader (the
/// line is in the pipe before the process ends).
fn settled(setup: &Mutex<Option<Result<(), String>>>) -> Result<(), String> {
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        if let Some(said) = setup.lock().ok().and_then(|s| s.clone()) {
            return said;
        }
        if Instant::now() > until {
            return Err("its setup ended without a word".to_owned());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Stops every container still running (SIGTERM to its process group,
/// SIGKILL after [`GRACE`]), then every descendant left ([`sweep`]).
fn stop(pods: &mut [Pod]) {
    end(pods
        .iter_mut()
        .flat_map(|p| p.live.iter_mut().map(|l| &mut l.child))
        .collect());
    super::reaper::sweep();
}

/// Stops `live`: SIGTERM to each one's process group, SIGKILL after
/// [`GRACE`]; each reaped.
fn end(mut live: Vec<&mut Child>) {
    for child in &live {
        let _ = rustix::process::kill_process_group(Pid::from_child(child), Signal::TERM);
    }
    let until = Instant::now() + GRACE;
    while !live.is_empty() && Instant::now() < until {
        live.retain_mut(|c| !matches!(c.try_wait(), Ok(Some(_))));
        std::thread::sleep(Duration::from_millis(50));
    }
    for child in live {
        let _ = rustix::process::kill_process_group(Pid::from_child(child), Signal::KILL);
        let _ = child.kill();
        let _ = child.wait();
    }
}
