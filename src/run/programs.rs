//! What a container runs must be on this machine: its program on its
//! `PATH` (the Python environment that stands in for the image comes
//! first), and each script its command names in a mount or here. What only
//! the image has is an error that says how to give it. Unlike the rest of
//! the plan, this reads the machine.

use std::path::Path;

use super::error::RunError;
use super::plan::{ContainerPlan, From, Plan, PodPlan, SYSTEM_PATH};
use super::volumes::{self, Volume};

impl Plan {
    /// The program and the scripts each container's command names must be
    /// here: the program on the container's `PATH`, every absolute `*.py`
    /// or `*.sh` path in a mount or on this machine. What only the image
    /// has is an error that says how to give it. (Reads this machine.)
    pub fn check_programs(&self, python_bin: &Path) -> Result<(), RunError> {
        for pod in &self.pods {
            for container in pod.init.iter().chain(&pod.containers) {
                check_programs(pod, container, python_bin)?;
            }
        }
        Ok(())
    }
}

fn check_programs(
    pod: &PodPlan,
    container: &ContainerPlan,
    python_bin: &Path,
) -> Result<(), RunError> {
    let name = &container.name;
    let program = &container.argv[0];
    let path = container
        .env
        .iter()
        .find(|(n, _)| n == "PATH")
        .map_or(SYSTEM_PATH, |(_, v)| v.as_str());
    if !program.contains('/') {
        let found = path
            .split(':')
            .any(|dir| Path::new(dir).join(program).is_file());
        if !found {
            let hint = if program == "torchrun" {
                format!(
                    "install PyTorch into it (`{} -m pip install torch`) or give another with `--python`",
                    python_bin.join("python").display()
                )
            } else {
                "give a Python environment that has it with `--python`".to_owned()
            };
            return Err(RunError::missing(format!(
                "pod {} container `{name}` runs `{program}`, which is not in {} (the Python environment standing in for the image) nor on the system path",
                pod.name,
                python_bin.display()
            ))
            .with_help(hint));
        }
    }
    for word in &container.argv {
        let path = word.split_once('=').map_or(word.as_str(), |(_, v)| v);
        let is_file = path.starts_with('/')
            && Path::new(path)
                .extension()
                .is_some_and(|e| e == "py" || e == "sh");
        if !is_file {
            continue;
        }
        let mounted = container
            .mounts
            .iter()
            .filter(|m| path.starts_with(&format!("{}/", m.target)))
            .max_by_key(|m| m.target.len());
        let Some(mount) = mounted else {
            if Path::new(path).exists() {
                continue;
            }
            let dir = Path::new(path)
                .parent()
                .map_or("/".into(), |d| d.display().to_string());
            return Err(RunError::missing(format!(
                "pod {} container `{name}` runs `{path}`, which only the image has (trainc run does not pull images)",
                pod.name
            ))
            .with_help(format!("give a local directory for {dir} with `--map {dir}=DIR`")));
        };
        let rest = &path[mount.target.len() + 1..];
        let rest = match &mount.sub_path {
            Some(sub) => format!("{sub}/{rest}"),
            None => rest.to_owned(),
        };
        let (found, place) = match &mount.from {
            From::Local(dir) => (dir.join(&rest).exists(), dir.display().to_string()),
            From::Volume(volume) => match pod.volumes.iter().find(|v| &v.name == volume) {
                Some(Volume {
                    source: volumes::Source::Host(dir),
                    ..
                }) => (dir.join(&rest).exists(), dir.display().to_string()),
                // A ConfigMap or Secret holds its files; an emptyDir or a
                // new claim is filled while the pod runs (an init container).
                Some(v) if !v.files.is_empty() => (
                    v.files.iter().any(|f| f.path == rest),
                    format!("the volume `{volume}`"),
                ),
                _ => (true, String::new()),
            },
        };
        if !found {
            return Err(RunError::missing(format!(
                "pod {} container `{name}` runs `{path}`, which is not in {place} (mounted at {})",
                pod.name, mount.target
            )));
        }
    }
    Ok(())
}
