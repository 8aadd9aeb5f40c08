//! A run as values: every pod's volumes ([`super::volumes`]), every
//! container's argv, environment, working directory and mounts, the
//! `/etc/hosts` the pods share, and what the run may not exceed (pods,
//! processes). Nothing here touches the machine: [`plan`] reads objects and
//! the user's stand-ins and returns a [`Plan`] a unit test can compare, or
//! why the objects cannot run. [`super::workdir`] writes it out and an
//! executor ([`super::sandbox`], [`super::plain`]) starts it.
//!
//! Every name that becomes a path (pod, container, volume, claim, file) is
//! checked first as the API server checks it ([`crate::syntax::pod`]), so
//! that no object can name a path outside the run's own directory.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::error::RunError;
use super::volumes::{self, Volume};
use crate::cluster::kubelet::{self, Fields};
use crate::cluster::{Pod, Service, Success, Workload, torchrun};
use crate::syntax::{names, pod};

/// More pods than a run on one machine should start.
pub const MAX_PODS: usize = 32;
const _: () = assert!(MAX_PODS <= crate::cluster::MADE_AT_MOST);

/// More processes than a run on one machine should start: every container,
/// and for torchrun its agent and each process it starts.
pub const MAX_PROCESSES: u64 = 256;

/// The `PATH` of a container that sets none (the image's, which trainc run
/// does not have, is most often this).
pub const SYSTEM_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// What stands in for the cluster.
pub struct Options {
    /// The Python that stands in for the image's: its directory comes first
    /// on the containers' `PATH`, so `python`, `python3` and `torchrun` are
    /// its.
    pub python: PathBuf,
    /// Image paths given from local directories: (`/app`, `./src`).
    pub maps: Vec<(String, PathBuf)>,
    pub claims: Vec<(String, PathBuf)>,
    pub configmaps: Vec<(String, PathBuf)>,
    pub secrets: Vec<(String, PathBuf)>,
    /// The image's entrypoint, for a container without a `command`.
    pub entrypoint: Vec<String>,
    /// Containers in namespaces of their own (else plain processes).
    pub isolate: bool,
}

/// The run.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub job: String,
    pub pods: Vec<PodPlan>,
    pub success: Success,
    pub deadline: Option<u64>,
    /// What a JobSet does after a job fails ([`Workload::group`]).
    pub group: Option<crate::cluster::jobset::Group>,
    /// What the run says before it starts: the pods, their addresses, what
    /// differs from the cluster.
    pub header: String,
    /// `/etc/hosts` of every pod.
    pub hosts: String,
    /// Every name `hosts` resolves (a run without namespaces rewrites them
    /// to 127.0.0.1).
    pub names: Vec<String>,
    /// The ports the job listens on, every address of the machine: torchrun's
    /// rendezvous store on one pod.
    pub ports: Vec<Port>,
}

/// A port one pod of the job listens on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Port {
    pub port: u16,
    pub pod: String,
}

/// One pod.
#[derive(Debug, Clone, PartialEq)]
pub struct PodPlan {
    /// A DNS-1123 subdomain: the pod's directory in the run's.
    pub name: String,
    pub hostname: String,
    pub ip: String,
    pub stage: u32,
    /// What the cluster does when it fails, in words.
    pub on_failure: String,
    pub volumes: Vec<Volume>,
    pub init: Vec<ContainerPlan>,
    pub containers: Vec<ContainerPlan>,
}

/// One container, ready to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerPlan {
    /// A DNS-1123 label.
    pub name: String,
    /// `pod` or `pod/container`, which prefixes every line it prints.
    pub label: String,
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Absolute.
    pub working_dir: String,
    /// In the order they are made: shallower targets first.
    pub mounts: Vec<Mount>,
    /// An init container with `restartPolicy: Always` (Kubernetes' sidecar).
    pub sidecar: bool,
}

/// A mount of a container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// Absolute and clean, not `/`.
    pub target: String,
    pub from: From,
    /// Relative, without `..`.
    pub sub_path: Option<String>,
    pub read_only: bool,
}

/// What a mount shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum From {
    /// A volume of the pod, by name.
    Volume(String),
    /// A directory of this machine given for an image path (`--map`).
    Local(PathBuf),
}

/// The loopback address of pod `index`.
fn address(index: usize) -> String {
    let n = index + 1;
    format!("127.77.{}.{}", n / 250, n % 250 + 1)
}

/// Whether this machine should start every pod of `workload`.
pub fn fits(workload: &Workload) -> Result<(), RunError> {
    if workload.total > MAX_PODS as u64 {
        return Err(RunError::invalid(format!(
            "{} has {} pods; trainc run starts every pod on this machine, at most {MAX_PODS}",
            workload.job, workload.total
        ))
        .with_help("run a variant with fewer pods (`replicas = 2` in a spec or an overlay; `replicas` or `completions` in a manifest)"));
    }
    Ok(())
}

/// The run of `workload`, made from `objects`.
pub fn plan(objects: &[Json], workload: &Workload, options: &Options) -> Result<Plan, RunError> {
    fits(workload)?;
    let services = workload.services(objects);
    for service in &services {
        names::dns1035_label(&service.name).map_err(|why| {
            RunError::invalid(format!(
                "the Service name `{}` is not a DNS-1035 label: {why}",
                service.name
            ))
        })?;
    }
    for pod in &workload.pods {
        check_pod(pod)?;
    }
    let store = volumes::Objects {
        objects,
        configmaps: &options.configmaps,
        secrets: &options.secrets,
    };
    let python_bin = options
        .python
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let ips: Vec<String> = (0..workload.pods.len()).map(address).collect();
    let mut pods = Vec::new();
    let mut processes = 0u64;
    let mut ports: Vec<Port> = Vec::new();
    for (index, pod) in workload.pods.iter().enumerate() {
        let fields = Fields {
            pod,
            pod_ip: &ips[index],
            host_ip: "127.0.0.1",
            node_name: "localhost",
        };
        let context = Context {
            pod,
            fields: &fields,
            store: &store,
            options,
            python_bin: &python_bin,
        };
        let (init, containers) = context.containers()?;
        for container in init.iter().chain(&containers) {
            let launch = torchrun::read(&container.argv, &container.env);
            processes += launch
                .as_ref()
                .map_or(1, |l| l.procs().unwrap_or(1).saturating_add(1));
            if let Some(port) = launch.as_ref().and_then(listens)
                && !ports.iter().any(|p| p.port == port)
            {
                ports.push(Port {
                    port,
                    pod: pod.name.clone(),
                });
            }
        }
        pods.push(PodPlan {
            name: pod.name.clone(),
            hostname: pod.hostname.clone(),
            ip: ips[index].clone(),
            stage: pod.stage,
            on_failure: pod.on_failure.clone(),
            volumes: volumes::plan(pod, &store, &options.claims)?,
            init,
            containers,
        });
    }
    if processes > MAX_PROCESSES {
        return Err(RunError::invalid(format!(
            "{} would start {processes} processes here ({} pods: their containers, and for torchrun its agent and each process it starts); trainc run starts at most {MAX_PROCESSES}",
            workload.job,
            pods.len()
        ))
        .with_help("run a variant with fewer processes per pod (`nProcPerNode = 2` in a spec or an overlay; `--nproc_per_node` in a manifest)"));
    }
    let (hosts, names) = hosts(workload, &ips, &services);
    Ok(Plan {
        job: workload.job.clone(),
        success: workload.success.clone(),
        deadline: workload.deadline,
        group: workload.group.clone(),
        header: header(workload, &ips, options),
        hosts,
        names,
        ports,
        pods,
    })
}

/// The port torchrun binds on every address of the machine: a static
/// rendezvous's store at the master address, a c10d rendezvous's at its
/// endpoint (`--standalone` picks a free port).
fn listens(launch: &torchrun::Launch) -> Option<u16> {
    let (_, port) = launch.endpoint.rsplit_once(':')?;
    port.parse().ok().filter(|p| *p != 0)
}

/// A pod's names and paths, as the API server checks them.
fn check_pod(pod: &Pod) -> Result<(), RunError> {
    let invalid = |what: &str, value: &str, why: String| {
        RunError::invalid(format!("the pod's {what} `{value}` is not {why}"))
            .within(&format!("pod {}", pod.name))
    };
    names::dns1123_subdomain(&pod.name).map_err(|why| {
        RunError::invalid(format!(
            "the pod name `{}` is not a DNS-1123 subdomain: {why}",
            pod.name
        ))
    })?;
    names::dns1123_subdomain(&pod.hostname).map_err(|why| {
        invalid(
            "hostname",
            &pod.hostname,
            format!("a DNS-1123 subdomain: {why}"),
        )
    })?;
    names::dns1123_label(&pod.namespace).map_err(|why| {
        invalid(
            "namespace",
            &pod.namespace,
            format!("a DNS-1123 label: {why}"),
        )
    })?;
    if let Some(problem) = pod::check(&pod.spec, pod::Extent::Whole).into_iter().next() {
        return Err(RunError::invalid(format!(
            "pod {}, `spec{}`: {}",
            pod.name,
            field_path(&problem.at),
            problem.message
        ))
        .with_help(problem.help));
    }
    Ok(())
}

/// `/volumes/0/name` as `.volumes[0].name`.
fn field_path(pointer: &str) -> String {
    let path = crate::tree::field_path(pointer);
    if path.starts_with('[') {
        path
    } else {
        format!(".{path}")
    }
}

/// What a container is made from.
struct Context<'a> {
    pod: &'a Pod,
    fields: &'a Fields<'a>,
    store: &'a volumes::Objects<'a>,
    options: &'a Options,
    python_bin: &'a Path,
}

impl Context<'_> {
    /// The pod's init containers and containers.
    fn containers(&self) -> Result<(Vec<ContainerPlan>, Vec<ContainerPlan>), RunError> {
        let several = self.pod.containers(false).len() > 1;
        let init = self
            .pod
            .containers(true)
            .iter()
            .map(|c| self.container(c, true))
            .collect::<Result<_, _>>()?;
        let containers = self
            .pod
            .containers(false)
            .iter()
            .map(|c| self.container(c, several))
            .collect::<Result<_, _>>()?;
        Ok((init, containers))
    }

    fn container(&self, container: &Json, named: bool) -> Result<ContainerPlan, RunError> {
        let name = container["name"].as_str().unwrap_or_default();
        let pod = &self.pod.name;
        let mut started = kubelet::start(container, self.fields, self.store).map_err(|e| {
            let kind = if e.missing {
                super::error::Kind::Missing
            } else {
                super::error::Kind::Invalid
            };
            RunError::new(kind, format!("pod {pod}: {}", e.message))
        })?;
        if let Some(image) = &started.image_entrypoint {
            if self.options.entrypoint.is_empty() {
                return Err(RunError::missing(format!(
                    "pod {pod}: container `{name}` has no `command`: it runs the entrypoint of the image {image}, which trainc run cannot see (it runs commands on this machine, not images)"
                ))
                .with_help("say what it is: `--entrypoint \"python3 /app/train.py\"`"));
            }
            let args = std::mem::take(&mut started.argv);
            started.argv = self
                .options
                .entrypoint
                .iter()
                .cloned()
                .chain(args)
                .collect();
        }
        let mut mounts: Vec<Mount> = self
            .options
            .maps
            .iter()
            .map(|(target, source)| Mount {
                target: pod::absolute_mount_path(target),
                from: From::Local(source.clone()),
                sub_path: None,
                read_only: false,
            })
            .collect();
        for mount in container["volumeMounts"].as_array().into_iter().flatten() {
            let target = pod::absolute_mount_path(mount["mountPath"].as_str().unwrap_or_default());
            if target == "/" {
                return Err(RunError::invalid(format!(
                    "pod {pod}: container `{name}` mounts a volume at `/`, over the whole image"
                )));
            }
            mounts.push(Mount {
                target,
                from: From::Volume(mount["name"].as_str().unwrap_or_default().to_owned()),
                sub_path: mount["subPath"]
                    .as_str()
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned),
                read_only: mount["readOnly"] == true,
            });
        }
        mounts.sort_by_key(|m| m.target.matches('/').count());
        let mut env = started.env;
        let own_path = env
            .iter()
            .find(|(n, _)| n == "PATH")
            .map_or(SYSTEM_PATH, |(_, v)| v.as_str());
        let path_value = format!("{}:{own_path}", self.python_bin.display());
        env.retain(|(n, _)| n != "PATH");
        env.insert(0, ("PATH".to_owned(), path_value));
        env.insert(1, ("HOSTNAME".to_owned(), self.pod.hostname.clone()));
        if !env.iter().any(|(n, _)| n == "HOME") {
            env.insert(2, ("HOME".to_owned(), "/root".to_owned()));
        }
        if started.argv.is_empty() {
            return Err(RunError::invalid(format!(
                "pod {pod}: container `{name}` has an empty command"
            )));
        }
        let working_dir = started
            .working_dir
            .filter(|d| !d.is_empty())
            .map_or_else(|| "/".to_owned(), |d| pod::absolute_mount_path(&d));
        Ok(ContainerPlan {
            name: name.to_owned(),
            label: if named {
                format!("{pod}/{name}")
            } else {
                pod.clone()
            },
            argv: started.argv,
            env,
            working_dir,
            mounts,
            // Kubernetes allows `restartPolicy` on init containers only.
            sidecar: container["restartPolicy"] == "Always",
        })
    }
}

/// `/etc/hosts` for every pod, and every name it resolves: each pod's
/// hostname, its own DNS names ([`Workload::dns_names`]), and the name of
/// each Service that selects several pods (its first pod here; the cluster's
/// DNS answers with every one), each with the forms the cluster's search
/// path completes (`.<namespace>`, `.<namespace>.svc`,
/// `.<namespace>.svc.cluster.local`).
fn hosts(workload: &Workload, ips: &[String], services: &[Service]) -> (String, Vec<String>) {
    let pods = &workload.pods;
    let mut text =
        String::from("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n");
    let mut all = Vec::new();
    for (index, (pod, ip)) in pods.iter().zip(ips).enumerate() {
        let mut short = workload.dns_names(index, services);
        for service in services {
            let selected = workload.selected(service);
            if selected.len() > 1 && selected[0] == index {
                short.push(service.name.clone());
            }
        }
        let mut names = vec![pod.hostname.clone()];
        for name in short {
            let namespace = &pod.namespace;
            let forms = [
                format!("{name}.{namespace}"),
                format!("{name}.{namespace}.svc"),
                format!("{name}.{namespace}.svc.cluster.local"),
            ];
            names.push(name);
            names.extend(forms);
        }
        names.dedup();
        let _ = writeln!(text, "{ip}\t{}", names.join(" "));
        all.extend(names);
    }
    (text, all)
}

fn header(workload: &Workload, ips: &[String], options: &Options) -> String {
    let mut out = format!(
        "trainc run: {}, {} pods\n",
        workload.job,
        workload.pods.len()
    );
    for (pod, ip) in workload.pods.iter().zip(ips) {
        let _ = writeln!(out, "  {} ({}) at {ip}", pod.name, pod.role);
    }
    let _ = writeln!(
        out,
        "  the image's place is taken by {}",
        options.python.display()
    );
    if !options.isolate {
        out.push_str("  no user namespaces here: containers run as plain processes, their mount paths and pod names rewritten to local directories and 127.0.0.1\n");
    }
    for note in &workload.notes {
        let _ = writeln!(out, "  note: {note}");
    }
    // A Secret's value on a command line: every user of this machine reads
    // it while the job runs, as every user of a node does on the cluster.
    let mut said: Vec<(String, String)> = Vec::new();
    for pod in &workload.pods {
        for container in pod.containers(true).iter().chain(pod.containers(false)) {
            let name = container["name"].as_str().unwrap_or_default();
            for found in crate::cluster::kubelet::secrets_on_command_line(container) {
                if said.contains(&(name.to_owned(), found.variable.clone())) {
                    continue;
                }
                let _ = writeln!(
                    out,
                    "  warning: container `{name}` expands `$({})` into its command line: {} is there for every user of this machine to read (`ps`)\n    help: {}",
                    found.variable,
                    found.source(),
                    found.help()
                );
                said.push((name.to_owned(), found.variable));
            }
        }
    }
    out
}
