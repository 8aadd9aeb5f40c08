//! `trainc run`: the emitted objects, run here as the cluster would run them.
//!
//! [`crate::cluster`] says which pods the job's controller makes and what
//! each container is given; this module makes their volumes
//! ([`volumes`]), starts every container as a process in namespaces of its
//! own ([`sandbox`]) with a local Python environment standing in for the
//! image, and follows them to the job's end ([`supervise`]).

pub mod sandbox;
pub mod supervise;
pub mod volumes;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::cluster::kubelet::{self, Fields};
use crate::cluster::{Pod, Service, Success, Workload};
use sandbox::Mount;

/// More pods than a run on one machine should start.
pub const MAX_PODS: usize = 32;
const _: () = assert!(MAX_PODS <= crate::cluster::MADE_AT_MOST);

/// The `PATH` of a container that sets none (the image's, which trainc run
/// does not have, is most often this), and of `unshare` itself.
pub const SYSTEM_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// `program` in a directory of trainc's own `PATH`, made absolute.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .map(|p| std::path::absolute(&p).unwrap_or(p))
        .find(|p| p.is_file())
}

/// An I/O error on `path` in words (no "os error" numbers).
pub fn io_error(path: &Path) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("{}: {}", path.display(), crate::source::io_reason(&e))
}

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
    /// Where the run's files go (volumes, roots); removed after.
    pub work: PathBuf,
}

/// One container, ready to start.
pub struct Launch {
    /// `pod` or `pod/container` for the output's prefix.
    pub label: String,
    /// The container's name.
    pub container: String,
    pub command: std::process::Command,
}

/// One pod, ready to start.
pub struct PodRun {
    pub name: String,
    pub stage: u32,
    pub on_failure: String,
    pub init: Vec<Launch>,
    pub containers: Vec<Launch>,
}

/// The run.
pub struct Plan {
    pub job: String,
    pub pods: Vec<PodRun>,
    pub success: Success,
    pub deadline: Option<u64>,
    /// What the run says before it starts: the pods, their addresses, what
    /// differs from the cluster.
    pub header: String,
}

/// The loopback address of pod `index`.
fn address(index: usize) -> String {
    let n = index + 1;
    format!("127.77.{}.{}", n / 250, n % 250 + 1)
}

/// Whether this machine should start every pod of `workload`.
pub fn fits(workload: &Workload) -> Result<(), String> {
    if workload.total > MAX_PODS as u64 {
        return Err(format!(
            "{} has {} pods; trainc run starts every pod on this machine, at most {MAX_PODS}: run a variant with fewer pods (`replicas = 2` in a spec or an overlay; `replicas` or `completions` in a manifest)",
            workload.job, workload.total
        ));
    }
    Ok(())
}

/// Prepares the run of `workload`, made from `objects` ([`fits`] first).
pub fn prepare(objects: &[Json], workload: &Workload, options: &Options) -> Result<Plan, String> {
    let services = workload.services(objects);
    let ips: Vec<String> = (0..workload.pods.len()).map(address).collect();
    let (hosts, names) = hosts(workload, &ips, &services);
    let hosts_file = options.work.join("hosts");
    std::fs::write(&hosts_file, &hosts).map_err(io_error(&hosts_file))?;
    let store = volumes::Objects {
        objects,
        configmaps: &options.configmaps,
        secrets: &options.secrets,
    };
    let given = volumes::Given {
        claims: &options.claims,
    };
    let python_bin = options
        .python
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut pods = Vec::new();
    for (index, pod) in workload.pods.iter().enumerate() {
        let pod_dir = options.work.join("pods").join(&pod.name);
        let made = volumes::make(
            pod,
            &pod_dir.join("volumes"),
            &options.work.join("claims"),
            &store,
            &given,
        )?;
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
            made: &made,
            options,
            python_bin: &python_bin,
            hosts_file: &hosts_file,
            names: &names,
            pod_dir: &pod_dir,
        };
        let several = pod.containers(false).len() > 1;
        let init = pod
            .containers(true)
            .iter()
            .map(|c| context.launch(c, true))
            .collect::<Result<_, _>>()?;
        let containers = pod
            .containers(false)
            .iter()
            .map(|c| context.launch(c, several))
            .collect::<Result<_, _>>()?;
        pods.push(PodRun {
            name: pod.name.clone(),
            stage: pod.stage,
            on_failure: pod.on_failure.clone(),
            init,
            containers,
        });
    }
    Ok(Plan {
        job: workload.job.clone(),
        success: workload.success.clone(),
        deadline: workload.deadline,
        header: header(workload, &ips, options),
        pods,
    })
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
    out
}

/// What a container's launch is made from.
struct Context<'a> {
    pod: &'a Pod,
    fields: &'a Fields<'a>,
    store: &'a volumes::Objects<'a>,
    made: &'a volumes::Made,
    options: &'a Options,
    python_bin: &'a Path,
    hosts_file: &'a Path,
    names: &'a [String],
    pod_dir: &'a Path,
}

impl Context<'_> {
    fn launch(&self, container: &Json, named: bool) -> Result<Launch, String> {
        let cname = container["name"].as_str().unwrap_or("?");
        let pod = &self.pod.name;
        let mut started = kubelet::start(container, self.fields, self.store)
            .map_err(|e| format!("pod {pod}: {e}"))?;
        if let Some(image) = &started.image_entrypoint {
            if self.options.entrypoint.is_empty() {
                return Err(format!(
                    "pod {pod}: container `{cname}` has no `command`: it runs the entrypoint of the image {image}, which trainc run cannot see (it runs commands on this machine, not images); say what it is: `--entrypoint \"python3 /app/train.py\"`"
                ));
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
                target: target.clone(),
                source: source.clone(),
                read_only: false,
            })
            .collect();
        for mount in container["volumeMounts"].as_array().into_iter().flatten() {
            let volume = mount["name"].as_str().unwrap_or_default();
            let source = self
                .made
                .paths
                .get(volume)
                .ok_or_else(|| format!("pod {pod} container `{cname}` mounts the volume `{volume}`, which the pod does not have"))?;
            let source = match mount["subPath"].as_str().filter(|s| !s.is_empty()) {
                Some(sub) => source.join(sub),
                None => source.clone(),
            };
            mounts.push(Mount {
                target: mount["mountPath"].as_str().unwrap_or_default().to_owned(),
                source,
                read_only: mount["readOnly"] == true,
            });
        }
        let mut env = started.env.clone();
        let own_path = env
            .iter()
            .find(|(n, _)| n == "PATH")
            .map_or(SYSTEM_PATH, |(_, v)| v.as_str());
        let path_value = format!("{}:{own_path}", self.python_bin.display());
        env.retain(|(n, _)| n != "PATH");
        env.insert(0, ("PATH".to_owned(), path_value.clone()));
        env.insert(1, ("HOSTNAME".to_owned(), self.pod.hostname.clone()));
        if !env.iter().any(|(n, _)| n == "HOME") {
            env.insert(2, ("HOME".to_owned(), "/root".to_owned()));
        }
        check_programs(
            &started.argv,
            &mounts,
            &path_value,
            self.python_bin,
            container,
            pod,
        )?;
        let working_dir = started.working_dir.as_deref().unwrap_or("/");
        let root = self.pod_dir.join("roots").join(cname);
        std::fs::create_dir_all(&root).map_err(io_error(&root))?;
        let spec = sandbox::Container {
            argv: &started.argv,
            env: &env,
            working_dir,
            hostname: &self.pod.hostname,
            hosts_file: self.hosts_file,
            mounts: &mounts,
            root: &root,
        };
        let command = if self.options.isolate {
            sandbox::isolated(&spec).map_err(|e| format!("pod {pod} container `{cname}`: {e}"))?
        } else {
            sandbox::plain(&spec, &sandbox::Rewrite::new(&mounts, self.names))
        };
        Ok(Launch {
            label: if named {
                format!("{pod}/{cname}")
            } else {
                pod.clone()
            },
            container: cname.to_owned(),
            command,
        })
    }
}

/// The program and the scripts a container's command names must be here:
/// the program on the container's `PATH` (`path`), every absolute `*.py` or `*.sh`
/// path in a mount or on this machine. What only the image has is an error
/// that says how to give it.
fn check_programs(
    argv: &[String],
    mounts: &[Mount],
    path: &str,
    python_bin: &Path,
    container: &Json,
    pod: &str,
) -> Result<(), String> {
    let cname = container["name"].as_str().unwrap_or("?");
    let image = container["image"].as_str().unwrap_or("its image");
    let program = &argv[0];
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
            return Err(format!(
                "pod {pod} container `{cname}` runs `{program}`, which is not in {} (the Python environment standing in for {image}) nor on the system path: {hint}",
                python_bin.display()
            ));
        }
    }
    for word in argv {
        let path = word.split_once('=').map_or(word.as_str(), |(_, v)| v);
        let is_file = path.starts_with('/')
            && Path::new(path)
                .extension()
                .is_some_and(|e| e == "py" || e == "sh");
        if !is_file {
            continue;
        }
        let mounted = mounts
            .iter()
            .filter(|m| path.starts_with(&format!("{}/", m.target.trim_end_matches('/'))))
            .max_by_key(|m| m.target.len());
        let local = match mounted {
            Some(m) => m
                .source
                .join(&path[m.target.trim_end_matches('/').len() + 1..]),
            None => PathBuf::from(path),
        };
        if !local.exists() {
            let dir = Path::new(path)
                .parent()
                .map_or("/".into(), |d| d.display().to_string());
            return Err(match mounted {
                Some(m) => format!(
                    "pod {pod} container `{cname}` runs `{path}`, which is not in {} (mounted at {})",
                    m.source.display(),
                    m.target
                ),
                None => format!(
                    "pod {pod} container `{cname}` runs `{path}`, which only the image {image} has (trainc run does not pull images): give a local directory for {dir} with `--map {dir}=DIR`"
                ),
            });
        }
    }
    Ok(())
}
