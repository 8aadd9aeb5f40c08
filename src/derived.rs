//! Every name derived from the job name, by trainc and by the operators, and
//! the limit each must meet. A name the cluster would reject makes the job
//! hang or fail at admission, so the rules check every one of them against
//! the job name the user wrote, and resolve names trainc's own objects here.
//!
//! What each operator derives (checked at the tags trainc supports):
//!
//! - Training Operator (kubeflow/trainer v1.7.0–v1.9.4,
//!   `pkg/controller.v1/common/pod.go` `createNewPod` and
//!   `pkg/core/utils.go` `GenGeneralName`): each pod, and the headless Service
//!   in front of it, is named `<job>-master-0` or `<job>-worker-<i>`. Service
//!   names are DNS-1035 labels, so each must fit in 63 characters.
//! - JobSet, which runs a TrainJob (kubernetes-sigs/jobset v0.8–v0.12,
//!   `pkg/webhooks/jobset_webhook.go` `ValidateCreate`): the JobSet and its
//!   headless Service take the TrainJob's name; its jobs are
//!   `<job>-node-0`; Kubernetes names an Indexed Job's pods
//!   `<job>-node-0-<i>-<5 random characters>`, and JobSet's webhook rejects a
//!   JobSet whose longest pod name, with `-abcde` standing in for the random
//!   part, exceeds 63 characters.
//!   trainc's own JobSet (`target = "jobset"`) names its one replicated
//!   job `node` as well, so its names are the same.
//! - Kubernetes' Job controller, for `target = "job"` (kubernetes
//!   `pkg/controller/job/job_controller.go` `manageJob`): pod `i` of the
//!   Indexed Job has the hostname `<job>-<i>` (a DNS-1123 label) under the
//!   headless Service `<job>` that trainc creates, so it is
//!   `<job>-<i>.<job>` in the namespace.
//! - trainc: one PersistentVolumeClaim `<job>-<volume>` per volume with a
//!   `size` (a DNS-1123 subdomain, at most 253), and the Service for
//!   `[ports]`, `<job>-ports` (a DNS-1035 label). The Service's name can be
//!   neither the JobSet's headless Service (`<job>`, which JobSet creates only
//!   when no Service of that name exists, and never adopts) nor a Training
//!   Operator replica Service (which end in `-<number>`).

use crate::spec::Target;
use crate::syntax::names::MAX_LABEL;

/// What Kubernetes appends to a pod name it generates: `-` and 5 characters.
pub(crate) const RANDOM_POD_SUFFIX: &str = "-xxxxx";
/// The longest DNS-1123 subdomain (PersistentVolumeClaim names).
pub(crate) const MAX_SUBDOMAIN: usize = 253;

/// The Service trainc creates for `[ports]`.
pub(crate) fn ports_service(job: &str) -> String {
    format!("{job}-ports")
}

/// A Job's pod `index`, by its hostname under the Job's headless Service:
/// the Job controller names an Indexed Job's pod `<job>-<index>` as a host
/// (kubernetes `pkg/controller/job/job_controller.go` `manageJob`,
/// `template.Spec.Hostname`), and the pod's `subdomain` is the Service.
pub(crate) fn job_host(job: &str, index: u32) -> String {
    format!("{job}-{index}.{job}")
}

/// Where a Job's ranks meet: pod 0 (see [`job_host`]).
pub(crate) fn job_rank0(job: &str) -> String {
    job_host(job, 0)
}

/// What trainc tells each pod of the topology on the targets where it
/// passes torchrun the topology itself (`job`, `jobset`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rendezvous {
    /// Where the ranks meet: pod 0 of the Indexed Job under its headless
    /// Service; on a JobSet, made of its name when the pod starts
    /// ([`crate::cluster::jobset::rank0_address_expanded`]).
    pub master: String,
    /// The variable that holds the pod's node rank: its completion index,
    /// or on a JobSet with a Master its job's global index
    /// ([`crate::cluster::jobset::Layout`]); and the `fieldRef` trainc
    /// declares it from.
    pub node_rank: &'static str,
    pub node_rank_field: &'static str,
}

/// [`Rendezvous`] of the job `job`; `master`: whether it has a Master pod
/// apart (`[master]` on more than one node).
pub(crate) fn rendezvous(job: &str, target: Target, master: bool) -> Rendezvous {
    if target == Target::Jobset {
        let layout = crate::cluster::jobset::Layout::of(master);
        let (node_rank, node_rank_field) = layout.node_rank();
        Rendezvous {
            master: crate::cluster::jobset::rank0_address_expanded(layout),
            node_rank,
            node_rank_field,
        }
    } else {
        Rendezvous {
            master: job_rank0(job),
            node_rank: crate::cluster::job::COMPLETION_INDEX_ENV,
            node_rank_field: crate::cluster::job::COMPLETION_INDEX_FIELD,
        }
    }
}

/// The PersistentVolumeClaim trainc creates for a volume with a `size`.
pub(crate) fn claim(job: &str, volume: &str) -> String {
    format!("{job}-{volume}")
}

/// One name derived from the job name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Derived {
    /// The name as it will be, `-xxxxx` standing for a random suffix.
    pub name: String,
    /// What it names, e.g. `the last worker pod and its Service`.
    pub what: &'static str,
    /// Who creates it: `the Training Operator`, `JobSet`, `trainc`.
    pub by: &'static str,
    /// Its length limit.
    pub limit: usize,
}

impl Derived {
    pub(crate) fn excess(&self) -> usize {
        self.name.len().saturating_sub(self.limit)
    }

    /// Whether the name ends in a suffix Kubernetes generates at random.
    pub(crate) fn has_random_suffix(&self) -> bool {
        self.name.ends_with(RANDOM_POD_SUFFIX)
    }
}

/// What the derived names depend on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape<'a> {
    pub job: &'a str,
    pub target: Target,
    /// The most pods the job runs.
    pub max_nodes: u32,
    /// Whether the job is elastic (a PyTorchJob of workers only).
    pub elastic: bool,
    /// Whether it has a Master pod apart (`[master]`, more than one node):
    /// a JobSet's is then a `master` job and `worker` jobs.
    pub master: bool,
    /// Whether trainc creates the Service for `[ports]`.
    pub ports: bool,
}

/// Every name derived from `shape.job`, and the claims for `volumes` (the
/// names of the spec's volumes with a `size`).
pub(crate) fn names<'v>(
    shape: Shape<'_>,
    volumes: impl IntoIterator<Item = &'v str>,
) -> Vec<Derived> {
    let job = shape.job;
    let mut out = Vec::new();
    match shape.target {
        Target::Pytorchjob => {
            if !shape.elastic {
                out.push(Derived {
                    name: format!("{job}-master-0"),
                    what: "the master pod and its Service",
                    by: "the Training Operator",
                    limit: MAX_LABEL,
                });
            }
            let workers = if shape.elastic {
                shape.max_nodes
            } else {
                shape.max_nodes.saturating_sub(1)
            };
            if workers > 0 {
                out.push(Derived {
                    name: format!("{job}-worker-{}", workers - 1),
                    what: "the last worker pod and its Service",
                    by: "the Training Operator",
                    limit: MAX_LABEL,
                });
            }
        }
        // JobSet's webhook checks the longest pod name with `-abcde` for the
        // random part (`jobset_webhook.go` `ValidateCreate`).
        Target::Jobset if shape.master => out.push(Derived {
            name: format!(
                "{job}-worker-{}-0{RANDOM_POD_SUFFIX}",
                shape.max_nodes.saturating_sub(2)
            ),
            what: "the last worker pod",
            by: "JobSet",
            limit: MAX_LABEL,
        }),
        Target::Trainjob | Target::Jobset => out.push(Derived {
            name: format!(
                "{job}-node-0-{}{RANDOM_POD_SUFFIX}",
                shape.max_nodes.saturating_sub(1)
            ),
            what: "the last node pod",
            by: "JobSet",
            limit: MAX_LABEL,
        }),
        // The pod's own name is cut to fit by the Job controller
        // (`podGenerateNameWithIndex`), but its hostname is not, and the API
        // server rejects a hostname that is not a DNS-1123 label.
        Target::Job => out.push(Derived {
            name: format!("{job}-{}", shape.max_nodes.saturating_sub(1)),
            what: "the last pod's host",
            by: "the Job controller",
            limit: MAX_LABEL,
        }),
    }
    if shape.ports {
        out.push(Derived {
            name: ports_service(job),
            what: "the Service for `[ports]`",
            by: "trainc",
            limit: MAX_LABEL,
        });
    }
    out.extend(volumes.into_iter().map(|volume| Derived {
        name: claim(job, volume),
        what: "a PersistentVolumeClaim",
        by: "trainc",
        limit: MAX_SUBDOMAIN,
    }));
    out
}

/// The derived name that exceeds its limit by the most, if any does.
pub(crate) fn too_long<'v>(
    shape: Shape<'_>,
    volumes: impl IntoIterator<Item = &'v str>,
) -> Option<Derived> {
    names(shape, volumes)
        .into_iter()
        .filter(|d| d.excess() > 0)
        .max_by_key(Derived::excess)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(job: &str, target: Target, max_nodes: u32) -> Shape<'_> {
        Shape {
            job,
            target,
            max_nodes,
            elastic: false,
            master: false,
            ports: false,
        }
    }

    #[test]
    fn a_pytorchjob_names_its_master_and_last_worker() {
        let names: Vec<String> = names(shape("mnist", Target::Pytorchjob, 4), [])
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(names, ["mnist-master-0", "mnist-worker-2"]);
        let elastic = Shape {
            elastic: true,
            ..shape("mnist", Target::Pytorchjob, 8)
        };
        let names: Vec<String> = super::names(elastic, [])
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(names, ["mnist-worker-7"]);
    }

    #[test]
    fn jobset_counts_the_random_pod_suffix() {
        // 49 + `-node-0-3` (9) = 58 fits a hostname, but not with `-xxxxx` (64).
        let job = "a".repeat(49);
        let long = too_long(shape(&job, Target::Trainjob, 4), []).expect("too long");
        assert_eq!(long.name.len(), 64);
        assert_eq!(long.by, "JobSet");
        assert!(too_long(shape(&"a".repeat(48), Target::Trainjob, 4), []).is_none());
    }

    #[test]
    fn a_jobset_with_a_master_names_its_last_worker_pod() {
        // One job per Worker: of 4 nodes, the Workers' jobs are 0 to 2.
        let with_master = Shape {
            master: true,
            ..shape("mnist", Target::Jobset, 4)
        };
        let names: Vec<String> = names(with_master, []).into_iter().map(|d| d.name).collect();
        assert_eq!(names, [format!("mnist-worker-2-0{RANDOM_POD_SUFFIX}")]);
    }

    #[test]
    fn trainc_names_its_service_and_claims_after_the_job() {
        let with_ports = Shape {
            ports: true,
            ..shape("mnist", Target::Trainjob, 2)
        };
        let names = names(with_ports, ["data"]);
        let service = names
            .iter()
            .find(|d| d.by == "trainc" && d.limit == MAX_LABEL);
        assert_eq!(service.unwrap().name, "mnist-ports");
        let claim = names.iter().find(|d| d.limit == MAX_SUBDOMAIN);
        assert_eq!(claim.unwrap().name, "mnist-data");
        // Never an operator's name: JobSet's headless Service is `mnist`, and
        // Training Operator Services end in a replica index.
        assert_ne!(ports_service("mnist"), "mnist");
        assert!(!ports_service("mnist").ends_with(|c: char| c.is_ascii_digit()));
    }
}
