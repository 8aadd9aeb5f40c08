//! Following the pods to the job's end: init containers one after another,
//! then the pod's containers together; every line they print, prefixed with
//! its pod; the job decided by its controller's rule ([`Success`]); and at
//! the end, whatever the reason (done, a failure, the deadline, Ctrl-C),
//! every process of the job stopped: SIGTERM to each container's process
//! group, SIGKILL five seconds later.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{Launch, Plan, PodRun};
use crate::cluster::Success;

/// How the run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    Failed(String),
    Interrupted,
}

/// How long pods still running get after the job has succeeded by its
/// controller's rule (a PyTorchJob's Master done).
const AFTER_SUCCESS: Duration = Duration::from_secs(30);
/// Between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

/// A line a container printed.
struct Line {
    label: String,
    stderr: bool,
    text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Waiting,
    Init(usize),
    Running,
    Succeeded,
    Failed,
}

struct Pod {
    run: PodRun,
    phase: Phase,
    /// Containers still running, by index into `run.containers`, or the
    /// init container.
    live: Vec<(usize, Child)>,
}

/// Runs `plan` to its end. `timeout` bounds it besides the job's deadline;
/// `interrupted` is set by Ctrl-C or SIGTERM.
pub fn run(
    plan: Plan,
    timeout: Option<Duration>,
    out: &mut dyn Write,
    err: &mut dyn Write,
    interrupted: &AtomicBool,
) -> Outcome {
    let (sender, lines) = mpsc::channel::<Line>();
    let start = Instant::now();
    let limit = match (plan.deadline.map(Duration::from_secs), timeout) {
        (Some(d), Some(t)) if t < d => Some((t, "the run's --timeout")),
        (Some(d), _) => Some((d, "the job's activeDeadlineSeconds")),
        (None, Some(t)) => Some((t, "the run's --timeout")),
        (None, None) => None,
    };
    let mut pods: Vec<Pod> = plan
        .pods
        .into_iter()
        .map(|run| Pod {
            run,
            phase: Phase::Waiting,
            live: Vec::new(),
        })
        .collect();
    let mut stage = 0;
    let mut outcome = None;
    let mut succeeded_at: Option<Instant> = None;
    loop {
        if outcome.is_none()
            && pods
                .iter()
                .all(|p| p.phase != Phase::Waiting || p.run.stage != stage)
        {
            // start nothing: the stage is under way
        }
        if outcome.is_none() {
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
            for pod in pods
                .iter_mut()
                .filter(|p| p.phase == Phase::Waiting && p.run.stage == stage)
            {
                if let Err(message) = advance(pod, &sender) {
                    outcome = Some(Outcome::Failed(message));
                    break;
                }
            }
        }
        while let Ok(line) = lines.recv_timeout(Duration::from_millis(50)) {
            print(&line, out, err);
        }
        if outcome.is_some() {
            break;
        }
        if let Err(message) = collect(&mut pods, &plan.success, &sender, &mut succeeded_at) {
            outcome = Some(Outcome::Failed(message));
        }
        if outcome.is_some() {
            break;
        }
        if pods.iter().all(|p| p.phase == Phase::Succeeded) {
            outcome = Some(Outcome::Succeeded);
            break;
        }
        if succeeded_at.is_some_and(|at| {
            pods.iter().all(|p| p.live.is_empty()) || at.elapsed() > AFTER_SUCCESS
        }) {
            outcome = Some(Outcome::Succeeded);
            break;
        }
        if interrupted.load(Ordering::Relaxed) {
            outcome = Some(Outcome::Interrupted);
            break;
        }
        if let Some((limit, what)) = limit.filter(|(limit, _)| start.elapsed() > *limit) {
            outcome = Some(Outcome::Failed(format!(
                "{} ran past {what} ({} s) and was stopped",
                plan.job,
                limit.as_secs()
            )));
            break;
        }
    }
    stop(&mut pods);
    drop(sender);
    // What the containers printed before they ended.
    let drain_until = Instant::now() + Duration::from_secs(2);
    while let Ok(line) = lines.recv_timeout(drain_until.saturating_duration_since(Instant::now())) {
        print(&line, out, err);
    }
    outcome.unwrap_or(Outcome::Succeeded)
}

/// Collects ended containers; notes when the job has succeeded by its
/// rule; an error when a pod failed.
fn collect(
    pods: &mut [Pod],
    success: &Success,
    sender: &mpsc::Sender<Line>,
    succeeded_at: &mut Option<Instant>,
) -> Result<(), String> {
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
    let text = crate::diagnostic::escape_for_terminal(&line.text);
    let to: &mut dyn Write = if line.stderr { err } else { out };
    let _ = writeln!(to, "[{}] {text}", line.label);
    let _ = to.flush();
}

/// Starts the pod's next container(s).
fn advance(pod: &mut Pod, sender: &mpsc::Sender<Line>) -> Result<(), String> {
    let next_init = match pod.phase {
        Phase::Waiting => 0,
        Phase::Init(i) => i + 1,
        _ => return Ok(()),
    };
    if next_init < pod.run.init.len() {
        let child = spawn(&mut pod.run.init[next_init], sender)?;
        pod.live.push((next_init, child));
        pod.phase = Phase::Init(next_init);
        return Ok(());
    }
    for index in 0..pod.run.containers.len() {
        let child = spawn(&mut pod.run.containers[index], sender)?;
        pod.live.push((index, child));
    }
    pod.phase = Phase::Running;
    Ok(())
}

fn spawn(launch: &mut Launch, sender: &mpsc::Sender<Line>) -> Result<Child, String> {
    use std::os::unix::process::CommandExt as _;
    let mut child = launch
        .command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| {
            format!(
                "{}: cannot start: {}",
                launch.label,
                crate::source::io_reason(&e)
            )
        })?;
    let stdout = child
        .stdout
        .take()
        .map(|s| Box::new(s) as Box<dyn Read + Send>);
    let stderr = child
        .stderr
        .take()
        .map(|s| Box::new(s) as Box<dyn Read + Send>);
    for (stream, is_err) in [(stdout, false), (stderr, true)] {
        let Some(stream) = stream else { continue };
        let sender = sender.clone();
        let label = launch.label.clone();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stream);
            let mut buffer = Vec::new();
            while reader.read_until(b'\n', &mut buffer).is_ok_and(|n| n > 0) {
                let text = String::from_utf8_lossy(&buffer)
                    .trim_end_matches(['\n', '\r'])
                    .to_owned();
                buffer.clear();
                if sender
                    .send(Line {
                        label: label.clone(),
                        stderr: is_err,
                        text,
                    })
                    .is_err()
                {
                    break;
                }
            }
        });
    }
    Ok(child)
}

/// Collects the pod's ended containers; an error when the pod failed.
fn poll(pod: &mut Pod, sender: &mpsc::Sender<Line>) -> Result<(), String> {
    let mut ended = Vec::new();
    for (at, (index, child)) in pod.live.iter_mut().enumerate() {
        if let Ok(Some(status)) = child.try_wait() {
            ended.push((at, *index, status));
        }
    }
    for (at, index, status) in ended.into_iter().rev() {
        pod.live.remove(at);
        let init = matches!(pod.phase, Phase::Init(_));
        let name = if init {
            &pod.run.init[index].container
        } else {
            &pod.run.containers[index].container
        };
        if !status.success() {
            pod.phase = Phase::Failed;
            let how = match status.code() {
                Some(code) => format!("exited with {code}"),
                None => "was killed by a signal".to_owned(),
            };
            let what = if init { "init container" } else { "container" };
            return Err(format!(
                "pod {}: {what} `{name}` {how}; on the cluster {}",
                pod.run.name, pod.run.on_failure
            ));
        }
        if init {
            advance(pod, sender)?;
        }
    }
    if pod.phase == Phase::Running && pod.live.is_empty() {
        pod.phase = Phase::Succeeded;
    }
    Ok(())
}

/// Stops every container still running: SIGTERM to its process group,
/// SIGKILL after [`GRACE`].
fn stop(pods: &mut [Pod]) {
    let signal = |child: &Child, name: &str| {
        let _ = std::process::Command::new("kill")
            .args([
                format!("-{name}"),
                "--".to_owned(),
                format!("-{}", child.id()),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    };
    let live: Vec<&mut Child> = pods
        .iter_mut()
        .flat_map(|p| p.live.iter_mut().map(|(_, c)| c))
        .collect();
    if live.is_empty() {
        return;
    }
    for child in &live {
        signal(child, "TERM");
    }
    let until = Instant::now() + GRACE;
    let mut live = live;
    while !live.is_empty() && Instant::now() < until {
        live.retain_mut(|c| !matches!(c.try_wait(), Ok(Some(_))));
        std::thread::sleep(Duration::from_millis(50));
    }
    for child in live {
        signal(child, "KILL");
        let _ = child.kill();
        let _ = child.wait();
    }
}
