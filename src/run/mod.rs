//! `trainc run`: the emitted objects, run here as the cluster would run them.
//!
//! [`crate::cluster`] says which pods the job's controller makes and what
//! each container is given. From that, [`plan`] makes the run as values
//! (every name and path checked as the API server checks it, nothing
//! written); [`workdir`] makes the run's own private directory and writes
//! the plan's files there, the only writer; one executor per mode starts
//! each container: in namespaces of its own ([`sandbox`]) or as a plain
//! process ([`plain`]); [`supervise`] follows them to the job's end and
//! leaves no process behind. A local Python environment stands in for the
//! image. What stops a run is a [`RunError`], whose kind decides the exit
//! status.

pub mod error;
pub mod output;
pub mod plain;
pub mod plan;
pub mod ports;
pub mod programs;
pub mod reaper;
pub mod sandbox;
pub mod supervise;
pub mod volumes;
pub mod workdir;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::rc::Rc;

pub use error::RunError;
pub use plan::{MAX_PODS, Options, Plan};

use plan::ContainerPlan;
use workdir::{Laid, LaidPod};

/// `program` in a directory of trainc's own `PATH`, made absolute.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .map(|p| std::path::absolute(&p).unwrap_or(p))
        .find(|p| p.is_file())
}

/// A container's command, made when it starts (after the pod's init
/// containers, which may fill what it mounts).
pub struct Prepared {
    pub command: Command,
    /// What to write to its standard input (the sandbox's request).
    pub input: Option<Vec<u8>>,
    /// Whether it first says that its setup is done ([`sandbox::READY`]).
    pub handshake: bool,
}

/// One container, ready to start.
pub struct Launch {
    /// `pod` or `pod/container` for the output's prefix.
    pub label: String,
    /// The container's name.
    pub container: String,
    /// An init container with `restartPolicy: Always`: runs beside the rest.
    pub sidecar: bool,
    pub start: Box<dyn Fn() -> Result<Prepared, RunError>>,
}

/// The plan, laid out in the run's directory, as containers to start:
/// each in namespaces when `isolate`, else as a plain process.
pub fn launches(plan: &Plan, laid: Laid, isolate: bool) -> supervise::Run {
    let hosts: Rc<Path> = Rc::from(laid.hosts.as_path());
    let names: Rc<[String]> = Rc::from(plan.names.as_slice());
    let pods = plan
        .pods
        .iter()
        .zip(laid.pods)
        .map(|(pod, laid)| {
            let laid = Rc::new(laid);
            let launch = |container: &ContainerPlan| {
                let (container, laid, hosts, names) = (
                    container.clone(),
                    Rc::clone(&laid),
                    Rc::clone(&hosts),
                    Rc::clone(&names),
                );
                let hostname = pod.hostname.clone();
                Launch {
                    label: container.label.clone(),
                    container: container.name.clone(),
                    sidecar: container.sidecar,
                    start: Box::new(move || {
                        prepare(&container, &laid, &hostname, &hosts, &names, isolate)
                    }),
                }
            };
            supervise::PodRun {
                name: pod.name.clone(),
                stage: pod.stage,
                on_failure: pod.on_failure.clone(),
                init: pod.init.iter().map(launch).collect(),
                containers: pod.containers.iter().map(launch).collect(),
            }
        })
        .collect();
    supervise::Run {
        job: plan.job.clone(),
        pods,
        success: plan.success.clone(),
        deadline: plan.deadline,
    }
}

/// `container`'s command for the run's mode.
fn prepare(
    container: &ContainerPlan,
    pod: &LaidPod,
    hostname: &str,
    hosts: &Path,
    names: &[String],
    isolate: bool,
) -> Result<Prepared, RunError> {
    let mounts = pod.mounts(container)?;
    if !isolate {
        return Ok(Prepared {
            command: plain::command(container, &mounts, names),
            input: None,
            handshake: false,
        });
    }
    let ops = sandbox::ops(&mounts, hosts, &sandbox::Machine).map_err(|why| {
        RunError::cannot_start(format!(
            "container `{}` could not start: {why}",
            container.name
        ))
        .with_help("on the cluster the pod could not start either (its container runtime mounts the same way): mount the volume at a path of its own")
    })?;
    let request = sandbox::Request {
        root: pod.roots[&container.name].clone(),
        ops,
        hostname: hostname.to_owned(),
        argv: container.argv.clone(),
        env: container.env.clone(),
        working_dir: container.working_dir.clone(),
    };
    let (command, input) = sandbox::command(&request)?;
    Ok(Prepared {
        command,
        input: Some(input),
        handshake: true,
    })
}
