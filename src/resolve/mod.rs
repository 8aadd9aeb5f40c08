//! Stage 5, resolve: a validated spec into the [`Model`], with every default
//! applied here and nowhere else.
//!
//! Resolution cannot fail: validation has already rejected anything it could
//! not resolve. Where a value is unreadable anyway (which would be a bug in a
//! rule), resolution falls back to the default instead of panicking.

use std::collections::BTreeMap;

use crate::model::{
    Claim, Elastic, Initializer, Model, Nodes, Pod, Policy, Port, Scheduling, Toleration, TrainJob,
    Volume, VolumeSource,
};
use crate::spec::defaults::{
    self, LABEL_KUEUE_PRIORITY, LABEL_KUEUE_QUEUE, LABEL_MANAGED_BY, LABEL_NAME,
};
use crate::spec::{self, EmptyDir, NProc, Replicas, Spec, Target};

mod container;

use container::{container, env_vars, master};

pub fn resolve(
    spec: &Spec,
    code: &crate::code::Files,
    runtime: Option<&crate::trainer::bind::Bound>,
) -> Model {
    let target = spec.target.unwrap_or(defaults::TARGET);
    let nodes = nodes(spec);
    let gpus = spec.resources.as_ref().and_then(|r| r.gpus).unwrap_or(0);
    let nproc_per_node = NProc::of(spec.n_proc_per_node.as_ref(), gpus);
    let labels = common_labels(spec);
    // Kueue reads both labels on the job object, not on its pods
    // (kubernetes-sigs/kueue v0.17.0, pkg/controller/jobframework/reconciler.go).
    let mut job_labels = labels.clone();
    let kueue = spec.scheduling.clone().unwrap_or_default();
    for (key, value) in [
        (LABEL_KUEUE_QUEUE, kueue.queue),
        (LABEL_KUEUE_PRIORITY, kueue.workload_priority_class),
    ] {
        if let Some(value) = value {
            job_labels.insert(key.to_owned(), value);
        }
    }
    let annotations = spec.annotations.clone().unwrap_or_default();
    let mut pod_annotations = annotations.clone();
    for (key, value) in defaults::POD_ANNOTATIONS {
        pod_annotations
            .entry((*key).to_owned())
            .or_insert_with(|| (*value).to_owned());
    }
    let (volumes, claims) = volumes(spec, nodes);
    let policy = policy(spec, target, nodes);
    let command = |nproc| entrypoint(spec, target, nodes, nproc, policy.join_timeout_seconds);
    let container = container(spec, spec.resources.as_ref(), command(nproc_per_node));
    let master = spec
        .master_role()
        .map(|m| master(spec, m, &container, nproc_per_node, &policy, command));
    // torchrun sums the processes of every node into the world
    // (torch/distributed/elastic/agent/server/api.py `_assign_worker_ranks`).
    let world_size = match (nodes, nproc_per_node, master.as_ref().map(|m| m.nproc)) {
        (Nodes::Fixed(n), NProc::Count(p), None) => n.checked_mul(p),
        (Nodes::Fixed(n), NProc::Count(p), Some(NProc::Count(m))) => {
            (n - 1).checked_mul(p).and_then(|w| w.checked_add(m))
        }
        _ => None,
    };
    let mut model = Model {
        name: spec.name.clone(),
        namespace: spec.namespace.clone(),
        target,
        container,
        master,
        pod: Pod {
            host_network: spec.host_network.unwrap_or(false),
            dns_policy: spec.dns_policy.map(|p| spelled(&p)).or_else(|| {
                (spec.host_network == Some(true))
                    .then(|| defaults::DNS_POLICY_HOST_NETWORK.to_owned())
            }),
            fs_group: spec.security_context.as_ref().and_then(|s| s.fs_group),
        },
        code: crate::code::resolve(spec, code),
        pod_template: spec
            .pod_template
            .as_ref()
            .and_then(|t| serde_json::to_value(t).ok()),
        nodes,
        nproc_per_node,
        world_size,
        elastic: elastic(spec, nodes),
        policy,
        scheduling: scheduling(spec),
        volumes,
        claims,
        shm: spec
            .resources
            .as_ref()
            .and_then(|r| r.shm.as_ref())
            .map(spec::Quantity::text),
        ports_service: crate::derived::ports_service(&spec.name),
        ports: spec
            .ports
            .iter()
            .flatten()
            .map(|(name, port)| Port {
                name: name.clone(),
                port: *port,
            })
            .collect(),
        labels,
        annotations,
        pod_annotations,
        job_labels,
        trainjob: trainjob(spec, runtime),
    };
    // A Master without Workers is the whole job: the pod `[master]`
    // describes is the only one, so the job is built, described and run as
    // that pod (`trainc::master::alone` warns that the rest reaches none).
    // Its count is then also the job's `nprocPerNode`, from which the
    // Training Operator sets the pod's `PET_NPROC_PER_NODE` and
    // `WORLD_SIZE` = replicas × nprocPerNode (kubeflow/trainer v1.7.0 and
    // v1.9.2, `pkg/controller.v1/pytorch/envvar.go` `setPodEnv`).
    if matches!(model.nodes, Nodes::Fixed(1))
        && let Some(alone) = model.master.take()
    {
        model.container = alone.container;
        model.shm = alone.shm;
        model.nproc_per_node = alone.nproc;
        model.policy.restart_policy = alone.restart_policy;
    }
    model
}

fn trainjob(spec: &Spec, runtime: Option<&crate::trainer::bind::Bound>) -> TrainJob {
    let options = spec.trainjob.as_ref();
    let write_runtime = options.and_then(|t| t.write_runtime) == Some(true);
    // A runtime trainc writes is a TrainingRuntime named after the job.
    let kind = if write_runtime {
        crate::spec::RuntimeKind::TrainingRuntime
    } else {
        options
            .and_then(|t| t.runtime_kind)
            .unwrap_or(defaults::TRAINJOB_RUNTIME_KIND)
    };
    TrainJob {
        runtime_kind: kind.as_str().to_owned(),
        runtime: if write_runtime {
            spec.name.clone()
        } else {
            options
                .and_then(|t| t.runtime.clone())
                .unwrap_or_else(|| defaults::TRAINJOB_RUNTIME.to_owned())
        },
        write_runtime,
        api_level: options
            .and_then(|t| t.api_level)
            .unwrap_or(defaults::TRAINJOB_API_LEVEL),
        dataset_initializer: initializer(spec, |i| i.dataset.as_ref()),
        model_initializer: initializer(spec, |i| i.model.as_ref()),
        bound: runtime.cloned(),
    }
}

fn nodes(spec: &Spec) -> Nodes {
    match &spec.replicas {
        None => Nodes::Fixed(defaults::REPLICAS),
        Some(Replicas::Fixed(n)) => Nodes::Fixed(*n),
        Some(Replicas::Elastic(text)) => match Replicas::parse_elastic(text) {
            Ok((min, max)) => Nodes::Elastic { min, max },
            Err(_) => Nodes::Fixed(defaults::REPLICAS),
        },
    }
}

fn common_labels(spec: &Spec) -> BTreeMap<String, String> {
    let mut labels = spec.labels.clone().unwrap_or_default();
    labels.insert(LABEL_NAME.to_owned(), spec.name.clone());
    labels.insert(LABEL_MANAGED_BY.to_owned(), "trainc".to_owned());
    labels
}

/// What runs: `torchrun SCRIPT`, `torchrun -m MODULE`, or the command as written.
/// torchrun takes nodes, rank and rendezvous from the `PET_*` variables the
/// operator or the Trainer runtime injects.
///
/// On a PyTorchJob trainc also passes the processes per node as a flag, which
/// torchrun prefers to `PET_NPROC_PER_NODE`: the Training Operator v1.7 sets
/// that variable only on a job with a Master, so an elastic job (workers only)
/// would run one process per pod (fixed in v1.8.0, kubeflow/trainer#1948;
/// v1.7.0 `pkg/controller.v1/pytorch/envvar.go`). With the flag the count is
/// the spec's on every supported operator version. A TrainJob gets no flag:
/// the Trainer runtime resolves `auto`/`cpu` from the pod's resources into
/// `PET_NPROC_PER_NODE`, and a flag would undo that. `--nproc_per_node` is the
/// spelling every torchrun accepts (the dashed one is newer).
///
/// On a Job no operator sets anything, so trainc passes torchrun its whole
/// topology: the node count, the processes per node, the node rank from the
/// completion index, and where rank 0 is (see [`job_launch`]).
fn entrypoint(
    spec: &Spec,
    target: Target,
    nodes: Nodes,
    nproc: NProc,
    join_timeout: Option<u64>,
) -> Vec<String> {
    let mut torchrun = vec!["torchrun".to_owned()];
    match target {
        Target::Pytorchjob => torchrun.push(format!("--nproc_per_node={}", nproc.text())),
        Target::Trainjob => {}
        Target::Job | Target::Jobset => {
            let master = spec.master_role().is_some() && nodes.max() > 1;
            torchrun.extend(job_launch(
                &crate::derived::rendezvous(&spec.name, target, master),
                nodes,
                nproc,
            ));
        }
    }
    torchrun.extend(join_timeout.map(join_timeout_flag));
    if spec.code.is_some() {
        return crate::code::entrypoint(spec, torchrun);
    }
    if let Some(script) = &spec.script {
        torchrun.push(script.clone());
        torchrun
    } else if let Some(module) = &spec.module {
        torchrun.extend(["-m".to_owned(), module.clone()]);
        torchrun
    } else {
        spec.command.clone().unwrap_or_default()
    }
}

/// torchrun's flags on a Job: the whole topology, since no operator sets
/// `PET_*` variables there.
///
/// - `--node_rank=$(JOB_COMPLETION_INDEX)`: the Job controller adds
///   `JOB_COMPLETION_INDEX` to every container of an Indexed Job's pods, and
///   the kubelet expands `$(NAME)` in `command` from the container's
///   environment (kubernetes `pkg/controller/job/indexed_job_utils.go`
///   `addCompletionIndexEnvVariables`; trainc declares it first itself, so
///   an `env` value can refer to it too: see `render::job`).
/// - `--rdzv_conf=timeout=`: how long the pods that started wait for the
///   rest (`policy.joinTimeout`, [`defaults::JOB_JOIN_TIMEOUT_SECONDS`]).
/// - The rendezvous is torchrun's static one (no `--rdzv_backend`) at pod 0,
///   `<name>-0.<name>:29500`: node rank 0 hosts the TCPStore because its rank
///   says so. c10d was the other choice; it decides which pod hosts the store
///   by matching the endpoint's host to the pod itself (pytorch
///   `torch/distributed/elastic/rendezvous/utils.py`
///   `_matches_machine_hostname`). A pod of an Indexed Job is named
///   `<name>-0`, FQDN `<name>-0.<name>.<namespace>.svc.cluster.local`, neither
///   of which is `<name>-0.<name>`: older torchruns compare names only,
///   so no pod would host it, and later ones also compare addresses by
///   resolving the endpoint, which fails while the Service's DNS record is
///   not yet published, so pod 0 then joins as a client of a store that no
///   one hosts. c10d's gain, pods that join and leave, needs elastic
///   replicas, which this target refuses.
///   Ranks are the completion indexes, so rank 0's log is pod 0's.
/// - The spellings with `_` are the ones every torchrun accepts.
///
/// A JobSet trainc writes is one such Indexed Job, `<name>-node-0`, its pods
/// `<name>-node-0-<i>` under JobSet's headless Service `<name>`: the same
/// flags, rank 0 at `<name>-node-0-0.<name>`. With `[master]` it is a
/// `master` job of one pod and `worker` jobs of one pod each: rank 0 at
/// `<name>-master-0-0.<name>`, the node rank the job's global index
/// ([`crate::cluster::jobset::Layout`]).
pub(crate) fn job_launch(
    rendezvous: &crate::derived::Rendezvous,
    nodes: Nodes,
    nproc: NProc,
) -> Vec<String> {
    vec![
        format!("--nnodes={}", nodes.max()),
        format!("--nproc_per_node={}", nproc.text()),
        format!("--node_rank=$({})", rendezvous.node_rank),
        format!("--master_addr={}", rendezvous.master),
        format!("--master_port={}", defaults::JOB_RENDEZVOUS_PORT),
    ]
}

fn initializer(
    spec: &Spec,
    which: impl Fn(&spec::Initializers) -> Option<&spec::Initializer>,
) -> Option<Initializer> {
    let init = which(spec.trainjob.as_ref()?.initializer.as_ref()?)?;
    Some(Initializer {
        storage_uri: init.storage_uri.clone(),
        env: env_vars(init.env.as_ref()),
        secret: init.secret.clone(),
    })
}

fn volumes(spec: &Spec, nodes: Nodes) -> (Vec<Volume>, Vec<Claim>) {
    let mut volumes = Vec::new();
    let mut claims = Vec::new();
    for (name, volume) in spec.volumes.iter().flatten() {
        let source = if let Some(size) = &volume.size {
            let claim_name = crate::derived::claim(&spec.name, name);
            let default_mode = if nodes.max() > 1 {
                defaults::ACCESS_MODE_SHARED
            } else {
                defaults::ACCESS_MODE_SINGLE
            };
            let access_modes = match &volume.access_modes {
                Some(modes) => modes.iter().map(spelled).collect(),
                None => vec![default_mode.to_owned()],
            };
            claims.push(Claim {
                name: claim_name.clone(),
                size: size.text(),
                access_modes,
                storage_class: volume.storage_class.clone(),
            });
            VolumeSource::Claim(claim_name)
        } else if let Some(claim) = &volume.claim {
            VolumeSource::Claim(claim.clone())
        } else if let Some(config_map) = &volume.config_map {
            VolumeSource::ConfigMap(config_map.clone())
        } else if let Some(secret) = &volume.secret {
            VolumeSource::Secret(secret.clone())
        } else {
            let size_limit = match &volume.empty_dir {
                Some(EmptyDir::SizeLimit(q)) => Some(q.text()),
                _ => None,
            };
            VolumeSource::EmptyDir { size_limit }
        };
        volumes.push(Volume {
            name: name.clone(),
            mount_path: volume.mount_path.clone(),
            read_only: volume.read_only.unwrap_or(false),
            sub_path: volume.sub_path.clone(),
            source,
        });
    }
    let read_only_root = spec
        .security_context
        .as_ref()
        .and_then(|s| s.read_only_root_filesystem)
        == Some(true);
    let has_tmp = volumes
        .iter()
        .any(|v| v.mount_path.trim_end_matches('/') == TMP_MOUNT);
    if read_only_root && !has_tmp {
        // torchrun makes its log directory with `tempfile.mkdtemp(prefix=
        // "torchelastic_")` (pytorch/pytorch v2.4.0,
        // torch/distributed/elastic/multiprocessing/api.py, `DefaultLogsSpecs`;
        // before 2.3 agent/server/local_elastic_agent.py `_make_log_dir`) and
        // pip unpacks into the temporary directory: with a read-only root
        // filesystem both fail unless /tmp is a volume.
        volumes.push(Volume {
            name: TMP_VOLUME.to_owned(),
            mount_path: TMP_MOUNT.to_owned(),
            read_only: false,
            sub_path: None,
            source: VolumeSource::EmptyDir { size_limit: None },
        });
    }
    (volumes, claims)
}

/// The writable `/tmp` a read-only root filesystem gets.
const TMP_VOLUME: &str = "trainc-tmp";
const TMP_MOUNT: &str = "/tmp";

/// An enum as the spec spells it (`ReadWriteOnce`, `OnFailure`, `NoSchedule`).
fn spelled<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(text)) => text,
        _ => String::new(),
    }
}

fn elastic(spec: &Spec, nodes: Nodes) -> Option<Elastic> {
    let Nodes::Elastic { min, max } = nodes else {
        return None;
    };
    let settings = spec.elastic.clone().unwrap_or_default();
    let backend = settings
        .rdzv_backend
        .map_or_else(|| defaults::RDZV_BACKEND.to_owned(), |b| spelled(&b));
    Some(Elastic {
        min,
        max,
        start: settings.start_replicas.unwrap_or(max),
        max_restarts: settings.max_restarts,
        rdzv_backend: backend,
        rdzv_endpoint: settings
            .rdzv_endpoint
            .as_deref()
            .and_then(spec::Elastic::parse_endpoint),
        rdzv_conf: settings.rdzv_conf.unwrap_or_default().into_iter().collect(),
    })
}

fn policy(spec: &Spec, target: Target, nodes: Nodes) -> Policy {
    let policy = spec.policy.clone().unwrap_or_default();
    let seconds = |d: &Option<spec::Duration>| {
        d.as_ref().and_then(|d| match d {
            spec::Duration::Seconds(s) => Some(*s),
            spec::Duration::Text(text) => crate::syntax::duration::parse_seconds(text).ok(),
        })
    };
    let (restart_policy, backoff_limit) = match target {
        // The only values validation lets through on a Job: see `job_launch`.
        Target::Job | Target::Jobset => (
            defaults::JOB_RESTART_POLICY.to_owned(),
            Some(policy.backoff_limit.unwrap_or(defaults::JOB_BACKOFF_LIMIT)),
        ),
        Target::Pytorchjob | Target::Trainjob => (
            policy
                .restart_policy
                .map_or_else(|| defaults::RESTART_POLICY.to_owned(), |p| spelled(&p)),
            policy.backoff_limit,
        ),
    };
    Policy {
        restart_policy,
        backoff_limit,
        ttl_seconds_after_finished: seconds(&policy.ttl_after_finished),
        active_deadline_seconds: seconds(&policy.active_deadline),
        clean_pod_policy: policy.clean_pod_policy.map(|p| spelled(&p)),
        suspend: policy.suspend.unwrap_or(false),
        group_restarts: policy.group_restarts.filter(|_| target == Target::Jobset),
        join_timeout_seconds: join_timeout(spec, target, nodes, seconds(&policy.join_timeout)),
    }
}

/// The join timeout trainc passes to the torchrun it launches: the spec's,
/// or on a Job trainc's default. A `command` launches itself, and an elastic
/// job's rendezvous is c10d's (validation refuses the setting on both).
fn join_timeout(spec: &Spec, target: Target, nodes: Nodes, set: Option<u64>) -> Option<u64> {
    if spec.runs_as_written() || matches!(nodes, Nodes::Elastic { .. }) {
        return None;
    }
    let job = matches!(target, Target::Job | Target::Jobset);
    set.or(job.then_some(defaults::JOB_JOIN_TIMEOUT_SECONDS))
}

/// torchrun's flag for its static rendezvous' join timeout: the `timeout`
/// key of `--rdzv_conf`, which the static handler reads (pytorch
/// `static_tcp_rendezvous.py` `create_rdzv_handler`, torch 1.9 and later).
pub(crate) fn join_timeout_flag(seconds: u64) -> String {
    format!("--rdzv_conf=timeout={seconds}")
}

fn scheduling(spec: &Spec) -> Scheduling {
    let s = spec.scheduling.clone().unwrap_or_default();
    Scheduling {
        queue: s.queue,
        volcano_queue: s.volcano_queue,
        priority_class_name: s.priority_class_name,
        scheduler_name: s.scheduler_name,
        gang: s.gang.unwrap_or(false),
        node_selector: s.node_selector.unwrap_or_default(),
        tolerations: s
            .tolerations
            .unwrap_or_default()
            .into_iter()
            .map(|t| Toleration {
                key: t.key,
                operator: t.operator.map(|o| spelled(&o)),
                value: t.value,
                effect: t.effect.map(|e| spelled(&e)),
                toleration_seconds: t.toleration_seconds,
            })
            .collect(),
        spread_across_nodes: s.spread_across_nodes.unwrap_or(false),
        exclusive_topology: s.exclusive_topology,
        service_account_name: s.service_account_name,
        image_pull_secrets: s.image_pull_secrets.unwrap_or_default(),
    }
}
