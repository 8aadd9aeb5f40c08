//! A training runtime as trainc reads it: the ClusterTrainingRuntime or
//! TrainingRuntime a TrainJob names in `runtimeRef`, from the catalogue of
//! what Kubeflow Trainer ships or from the cluster's own runtimes file.
//!
//! Only what the checks need is read: the replicated jobs of its JobSet
//! template (`spec.template.spec.replicatedJobs`), their pods' containers and
//! volumes, and the ML policy (`spec.mlPolicy`). The whole object is kept,
//! for a TrainingRuntime that trainc writes from it
//! (kubeflow/trainer v2.3.0, `pkg/apis/trainer/v1alpha1/trainingruntime_types.go`).

use serde_json::Value as Json;

/// `ClusterTrainingRuntime` (cluster-wide) or `TrainingRuntime` (namespaced).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Cluster,
    Namespaced,
}

impl Kind {
    pub fn from_kind(kind: &str) -> Option<Kind> {
        match kind {
            "ClusterTrainingRuntime" => Some(Kind::Cluster),
            "TrainingRuntime" => Some(Kind::Namespaced),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Cluster => "ClusterTrainingRuntime",
            Kind::Namespaced => "TrainingRuntime",
        }
    }
}

/// One runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runtime {
    pub kind: Kind,
    pub name: String,
    /// A TrainingRuntime's namespace, when the file gives one.
    pub namespace: Option<String>,
    /// `spec.mlPolicy`.
    pub policy: MlPolicy,
    /// `spec.template.spec.replicatedJobs`, in order.
    pub jobs: Vec<Job>,
    /// The object as read.
    pub object: Json,
}

/// `spec.mlPolicy`: how many nodes, and which framework's plugin runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MlPolicy {
    pub num_nodes: Option<i64>,
    pub framework: Framework,
}

/// The ML policy source; one at most (the CRD's CEL rule,
/// `mlPolicy.torch` xor `mlPolicy.mpi` …).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Framework {
    /// `torch`, with its `numProcPerNode` (`auto`, `cpu`, `gpu` or a number)
    /// when it sets one.
    Torch {
        num_proc_per_node: Option<String>,
    },
    Mpi,
    /// Another policy source this version of trainc does not model.
    Other(String),
    /// No policy source: the plain JobSet plugin.
    #[default]
    None,
}

/// One replicated job of the runtime's JobSet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub name: String,
    pub replicas: Option<i64>,
    /// `trainer.kubeflow.org/trainjob-ancestor-step` on the job template:
    /// `trainer`, `dataset-initializer`, `model-initializer`.
    pub ancestor: Option<String>,
    /// Jobs this one waits for (`dependsOn[].name`).
    pub depends_on: Vec<String>,
    pub init_containers: Vec<Container>,
    pub containers: Vec<Container>,
    /// Names of the pod's volumes.
    pub volumes: Vec<String>,
}

/// One container of a replicated job's pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container {
    pub name: String,
    pub image: Option<String>,
    pub command: Vec<String>,
    /// `(name, mountPath)` of each volume mount.
    pub mounts: Vec<(String, String)>,
    /// `resources`, as written.
    pub resources: Json,
}

/// The label the Trainer finds a job's role by (kubeflow/trainer v2.0.0–v2.3.0,
/// `pkg/constants/constants.go` `LabelTrainJobAncestor`).
pub const ANCESTOR_LABEL: &str = "trainer.kubeflow.org/trainjob-ancestor-step";

impl Runtime {
    /// The runtime `object` describes, or why it is not one.
    pub fn from_json(object: &Json) -> Result<Runtime, String> {
        let kind = object["kind"]
            .as_str()
            .and_then(Kind::from_kind)
            .ok_or("not a ClusterTrainingRuntime or TrainingRuntime")?;
        let name = object["metadata"]["name"]
            .as_str()
            .filter(|n| !n.is_empty())
            .ok_or("it has no `metadata.name`")?
            .to_owned();
        let namespace = object["metadata"]["namespace"].as_str().map(str::to_owned);
        let spec = &object["spec"];
        let jobs = match &spec["template"]["spec"]["replicatedJobs"] {
            Json::Array(jobs) => jobs.iter().map(job).collect::<Result<_, _>>()?,
            Json::Null => Vec::new(),
            _ => return Err("`spec.template.spec.replicatedJobs` is not a list".to_owned()),
        };
        Ok(Runtime {
            kind,
            name,
            namespace,
            policy: ml_policy(&spec["mlPolicy"]),
            jobs,
            object: object.clone(),
        })
    }

    /// The replicated job named `name`.
    pub fn job(&self, name: &str) -> Option<&Job> {
        self.jobs.iter().find(|j| j.name == name)
    }

    /// The job the trainer runs in: the one labelled as the `trainer`
    /// ancestor (kubeflow/trainer v2.0.0–v2.3.0, `pkg/runtime/runtime.go`
    /// `FindPodSetByAncestor`).
    pub fn trainer_job(&self) -> Option<&Job> {
        self.jobs
            .iter()
            .find(|j| j.ancestor.as_deref() == Some("trainer"))
    }

    /// The trainer's container: `node` in the trainer job
    /// (`FindContainerByPodSetAncestorContainerName(AncestorTrainer, Node)`).
    pub fn trainer_container(&self) -> Option<&Container> {
        self.trainer_job()?.container("node")
    }

    /// Whether the runtime gangs its pods (`spec.podGroupPolicy`).
    pub fn has_pod_group_policy(&self) -> bool {
        !self.object["spec"]["podGroupPolicy"].is_null()
    }

    /// The pods of each job that the PodGroup of a TrainJob with `nodes`
    /// nodes counts, in the runtime's order: the trainer job's `nodes`, any
    /// other job its `parallelism` (1 when unset). Trainer's PodGroup
    /// plugins sum every job's count into `minMember`, whatever the jobs'
    /// `dependsOn` (kubeflow/trainer v2.0.0–v2.3.0,
    /// `pkg/runtime/core/trainingruntime.go` `newRuntimeInfo`: a PodSet's
    /// count is the job's parallelism; `plugins/torch/torch.go`: the trainer's
    /// is `numNodes`; `plugins/coscheduling/coscheduling.go` and
    /// `plugins/volcano/volcano.go` `Build`: `minMember` is their sum).
    fn pod_group_members(&self, nodes: u32) -> Vec<(&str, u64)> {
        let templates = self.object["spec"]["template"]["spec"]["replicatedJobs"].as_array();
        self.jobs
            .iter()
            .enumerate()
            .map(|(i, job)| {
                let count = if job.ancestor.as_deref() == Some("trainer") {
                    u64::from(nodes)
                } else {
                    templates
                        .and_then(|t| t.get(i))
                        .and_then(|t| t["template"]["spec"]["parallelism"].as_u64())
                        .unwrap_or(1)
                        .max(1)
                };
                (job.name.as_str(), count)
            })
            .collect()
    }

    /// The `minMember` of the PodGroup of a TrainJob with `nodes` nodes
    /// ([`Runtime::pod_group_members`]), and how it adds up, as
    /// `dataset-initializer 1 + node 2`.
    pub fn pod_group_sum(&self, nodes: u32) -> (u64, String) {
        let members = self.pod_group_members(nodes);
        let total = members.iter().map(|(_, n)| n).sum();
        let terms: Vec<String> = members
            .iter()
            .map(|(job, n)| format!("{job} {n}"))
            .collect();
        (total, terms.join(" + "))
    }
}

/// Why a runtime cannot run a TrainJob's `dataset` or `model` initializer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitializerGap {
    /// No `<kind>-initializer` replicated job.
    NoJob,
    /// The job has no container or init container of that name.
    NoContainer,
    /// From v2.3.0: its container mounts no `initializer` volume.
    NoMount,
}

/// The volume the initializers download into and the trainer reads from
/// (kubeflow/trainer v2.3.0, `pkg/runtime/framework/plugins/jobset/constants`
/// `VolumeNameInitializer`).
pub const INITIALIZER_VOLUME: &str = "initializer";

impl Runtime {
    /// What the Trainer's TrainJob webhook of `release` finds missing for a
    /// `kind` (`dataset`, `model`) initializer, if anything: the job, a
    /// container or init container named like it, and from v2.3.0 an
    /// `initializer` mount in its container ("must have dataset-initializer
    /// job when trainJob is configured with input datasetConfig", "must have
    /// volumeMount with name - initializer in container dataset-initializer
    /// …"; kubeflow/trainer v2.0.0–v2.3.0,
    /// `pkg/runtime/framework/plugins/jobset/jobset.go` `Validate`; the mount
    /// check came in v2.3.0 with #3714, and looks at `containers` only).
    pub fn initializer_gap(&self, release: super::Release, kind: &str) -> Option<InitializerGap> {
        let name = format!("{kind}-initializer");
        let Some(job) = self.job(&name) else {
            return Some(InitializerGap::NoJob);
        };
        if job.container(&name).is_none() {
            return Some(InitializerGap::NoContainer);
        }
        let mounted = job.containers.iter().filter(|c| c.name == name).any(|c| {
            c.mounts
                .iter()
                .any(|(volume, _)| volume == INITIALIZER_VOLUME)
        });
        (release >= super::Release::V2_3 && !mounted).then_some(InitializerGap::NoMount)
    }

    /// The release of Kubeflow's initializer image that runs the `kind`
    /// initializer, when it is one: `ghcr.io/kubeflow/trainer/
    /// <kind>-initializer[:<tag>]`, as every runtime Kubeflow ships has; a
    /// tag of a release trainc knows names it, any other (or none) is taken
    /// as the cluster's `release`.
    pub fn kubeflow_initializer(
        &self,
        kind: &str,
        release: super::Release,
    ) -> Option<super::Release> {
        let name = format!("{kind}-initializer");
        let image = self.job(&name)?.container(&name)?.image.as_deref()?;
        let rest = image.strip_prefix(&format!("ghcr.io/kubeflow/trainer/{name}"))?;
        if !(rest.is_empty() || rest.starts_with(':') || rest.starts_with('@')) {
            return None;
        }
        let tag = rest.strip_prefix(':').unwrap_or("");
        Some(
            super::Release::ALL
                .into_iter()
                .find(|r| r.tag() == tag)
                .unwrap_or(release),
        )
    }
}

impl InitializerGap {
    /// What is missing, in words: `named` is the runtime as
    /// [`super::bind::Bound::describe`] names it.
    pub fn message(self, kind: &str, named: &str) -> String {
        let job = format!("{kind}-initializer");
        match self {
            InitializerGap::NoJob => {
                format!("{named} has no `{job}` job; Trainer rejects a TrainJob that asks for one")
            }
            InitializerGap::NoContainer => format!(
                "the `{job}` job of {named} has no `{job}` container; Trainer rejects a TrainJob that asks for this initializer"
            ),
            InitializerGap::NoMount => format!(
                "the `{job}` container of {named} mounts no `{INITIALIZER_VOLUME}` volume; from v2.3 Trainer rejects a TrainJob whose initializer has none"
            ),
        }
    }
}

impl Job {
    /// The container or init container named `name`.
    pub fn container(&self, name: &str) -> Option<&Container> {
        self.containers
            .iter()
            .chain(&self.init_containers)
            .find(|c| c.name == name)
    }
}

fn ml_policy(policy: &Json) -> MlPolicy {
    let framework = if let Some(torch) = policy.get("torch") {
        Framework::Torch {
            num_proc_per_node: match &torch["numProcPerNode"] {
                Json::String(s) => Some(s.clone()),
                Json::Number(n) => Some(n.to_string()),
                _ => None,
            },
        }
    } else if policy.get("mpi").is_some() {
        Framework::Mpi
    } else {
        policy
            .as_object()
            .and_then(|p| p.keys().find(|k| *k != "numNodes"))
            .map_or(Framework::None, |k| Framework::Other(k.clone()))
    };
    MlPolicy {
        num_nodes: policy["numNodes"].as_i64(),
        framework,
    }
}

fn job(job: &Json) -> Result<Job, String> {
    let name = job["name"]
        .as_str()
        .ok_or("a replicated job has no `name`")?
        .to_owned();
    let pod = &job["template"]["spec"]["template"]["spec"];
    let containers = |key: &str| -> Result<Vec<Container>, String> {
        match &pod[key] {
            Json::Array(list) => list.iter().map(|c| container(&name, c)).collect(),
            Json::Null => Ok(Vec::new()),
            _ => Err(format!("`{key}` of the job `{name}` is not a list")),
        }
    };
    Ok(Job {
        replicas: job["replicas"].as_i64(),
        ancestor: job["template"]["metadata"]["labels"][ANCESTOR_LABEL]
            .as_str()
            .map(str::to_owned),
        depends_on: strings(&job["dependsOn"], "name"),
        init_containers: containers("initContainers")?,
        containers: containers("containers")?,
        volumes: strings(&pod["volumes"], "name"),
        name,
    })
}

fn container(job: &str, c: &Json) -> Result<Container, String> {
    let name = c["name"]
        .as_str()
        .ok_or_else(|| format!("a container of the job `{job}` has no `name`"))?
        .to_owned();
    Ok(Container {
        image: c["image"].as_str().map(str::to_owned),
        command: c["command"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        mounts: c["volumeMounts"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|m| {
                        Some((
                            m["name"].as_str()?.to_owned(),
                            m["mountPath"].as_str()?.to_owned(),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default(),
        resources: c["resources"].clone(),
        name,
    })
}

/// `field` of each object in `list`.
fn strings(list: &Json, field: &str) -> Vec<String> {
    list.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|o| o[field].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}
