//! `[master]`: the Master pod of a PyTorchJob, where it differs from the
//! Workers. Everything else of the spec is the same on every pod.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{NProcPerNode, Quantity, ResourceLimits, Resources, RestartPolicy};

/// The Master pod of a PyTorchJob or a JobSet (rank 0, node rank 0), where it differs from the Workers: the rest of the spec describes the Workers, and the Master too except for what is written here. Targets `pytorchjob` and `jobset` only, with a fixed `replicas` (an elastic job has no Master).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Master {
    /// The Master's image, in place of `image`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Processes on the Master pod, in place of `nProcPerNode`. Default: one per GPU of the Master when `nProcPerNode` is not set or is `"gpu"`, else `nProcPerNode`. torchrun sums every pod's count into the world size. Not with `command` or `imageEntrypoint`, which are told one count for every pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_proc_per_node: Option<NProcPerNode>,
    /// The Master's resources where they differ from `[resources]`: a key not written here is as in `[resources]`. A request written here without its own `[master.resources.limits]` entry has limit = request. `gpus = 0` for a Master without GPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
    /// When the Master pod is restarted, in place of `policy.restartPolicy`: `Never`, `OnFailure`, `Always` or `ExitCode`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<RestartPolicy>,
}

/// Which table a resource of the Master comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `[resources]`, as the Workers have it.
    Workers,
    /// `[master.resources]`.
    Master,
}

impl Origin {
    /// The JSON pointer of the table: `/resources` or `/master/resources`.
    pub fn table(self) -> &'static str {
        match self {
            Origin::Workers => "/resources",
            Origin::Master => "/master/resources",
        }
    }
}

/// One request or limit of the Master, and where it was written.
pub(super) type Written<'a> = (&'a Quantity, Origin);

/// A pod's cpu, memory or ephemeral storage: its request, and its limit as
/// it stands (`None`: limit = request), with where each was written.
#[derive(Clone, Copy, Default)]
pub struct PodQuantity<'a> {
    pub request: Option<Written<'a>>,
    pub limit: Option<Written<'a>>,
}

/// The keys of the quantities with a request and a limit, as the spec and
/// `[resources.limits]` spell them.
pub const LIMITED: [&str; 3] = ["cpu", "memory", "ephemeralStorage"];

impl Resources {
    /// The request of `key`, one of [`LIMITED`].
    pub fn request(&self, key: &str) -> Option<&Quantity> {
        match key {
            "cpu" => self.cpu.as_ref(),
            "memory" => self.memory.as_ref(),
            _ => self.ephemeral_storage.as_ref(),
        }
    }

    /// The request and limit of `key` (one of [`LIMITED`]) as the Workers
    /// have them, from `[resources]`.
    pub fn quantity(&self, key: &str) -> PodQuantity<'_> {
        PodQuantity {
            request: self.request(key).map(|q| (q, Origin::Workers)),
            limit: self
                .limits
                .as_ref()
                .and_then(|l| l.limit(key))
                .map(|q| (q, Origin::Workers)),
        }
    }
}

/// A field of `[master.resources]`, else of `[resources]`.
fn laid_over<T: Clone>(
    own: Option<&Resources>,
    workers: Option<&Resources>,
    field: impl Fn(&Resources) -> Option<&T>,
) -> Option<T> {
    own.and_then(&field)
        .or_else(|| workers.and_then(&field))
        .cloned()
}

impl ResourceLimits {
    /// The limit of `key`, one of [`LIMITED`].
    pub fn limit(&self, key: &str) -> Option<&Quantity> {
        match key {
            "cpu" => self.cpu.as_ref(),
            "memory" => self.memory.as_ref(),
            _ => self.ephemeral_storage.as_ref(),
        }
    }
}

impl Master {
    /// The Master's request and limit of `key` (one of [`LIMITED`]): a
    /// value of `[master.resources]` wins; a request written there without
    /// its own limit is not limited by `[resources.limits]`, which was
    /// written against the Workers' request.
    pub fn quantity<'a>(&'a self, workers: Option<&'a Resources>, key: &str) -> PodQuantity<'a> {
        let own = self.resources.as_ref();
        let own_request = own.and_then(|r| r.request(key));
        let own_limit = own
            .and_then(|r| r.limits.as_ref())
            .and_then(|l| l.limit(key));
        let theirs = workers.map(|r| r.quantity(key));
        let request = own_request
            .map(|q| (q, Origin::Master))
            .or_else(|| theirs.and_then(|q| q.request));
        let limit = match (own_limit, own_request) {
            (Some(q), _) => Some((q, Origin::Master)),
            (None, Some(_)) => None,
            (None, None) => theirs.and_then(|q| q.limit),
        };
        PodQuantity { request, limit }
    }

    /// The Master's GPUs: its own `gpus`, else the Workers'.
    pub fn gpus(&self, workers: Option<&Resources>) -> Option<u32> {
        laid_over(self.resources.as_ref(), workers, |r| r.gpus.as_ref())
    }

    /// The Master's resources as one table, `[resources]` with
    /// `[master.resources]` laid over it (see [`Master::quantity`]).
    pub fn resources(&self, workers: Option<&Resources>) -> Option<Resources> {
        if self.resources.is_none() {
            return workers.cloned();
        }
        let own = self.resources.as_ref();
        let pick = |key: &str| {
            let q = self.quantity(workers, key);
            (
                q.request.map(|(q, _)| q.clone()),
                q.limit.map(|(q, _)| q.clone()),
            )
        };
        let (cpu, cpu_limit) = pick("cpu");
        let (memory, memory_limit) = pick("memory");
        let (ephemeral_storage, ephemeral_limit) = pick("ephemeralStorage");
        let limits = ResourceLimits {
            cpu: cpu_limit,
            memory: memory_limit,
            ephemeral_storage: ephemeral_limit,
        };
        Some(Resources {
            cpu,
            memory,
            ephemeral_storage,
            gpus: self.gpus(workers),
            gpu_resource: laid_over(own, workers, |r| r.gpu_resource.as_ref()),
            shm: laid_over(own, workers, |r| r.shm.as_ref()),
            extended: laid_over(own, workers, |r| r.extended.as_ref()),
            limits: (limits != ResourceLimits::default()).then_some(limits),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resources(toml: &str) -> Resources {
        toml::from_str(toml).unwrap()
    }

    #[test]
    fn the_masters_resources_are_laid_over_the_workers_key_by_key() {
        let workers = resources(
            "cpu = 8\nmemory = \"64Gi\"\ngpus = 8\nshm = \"16Gi\"\n[limits]\ncpu = \"none\"\nmemory = \"96Gi\"",
        );
        let master = Master {
            image: None,
            n_proc_per_node: None,
            resources: Some(resources("memory = \"512Gi\"\ngpus = 0")),
            restart_policy: None,
        };
        let pod = master.resources(Some(&workers)).unwrap();
        // Not written: the Workers' request and limit (here none).
        assert_eq!(pod.cpu, workers.cpu);
        assert!(
            pod.limits
                .as_ref()
                .unwrap()
                .cpu
                .as_ref()
                .unwrap()
                .is_no_limit()
        );
        // Written without its own limit: limit = request, not the Workers' 96Gi.
        assert_eq!(pod.memory, Some(Quantity::Text("512Gi".into())));
        assert_eq!(pod.limits.as_ref().unwrap().memory, None);
        assert_eq!(pod.gpus, Some(0));
        assert_eq!(pod.shm, workers.shm);
        let q = master.quantity(Some(&workers), "memory");
        assert_eq!(q.request.map(|(_, from)| from), Some(Origin::Master));
        assert!(q.limit.is_none());
        let q = master.quantity(Some(&workers), "cpu");
        assert_eq!(q.limit.map(|(_, from)| from), Some(Origin::Workers));
    }

    #[test]
    fn a_master_without_resources_has_the_workers() {
        let workers = resources("cpu = 2");
        let master = Master {
            image: Some("ghcr.io/acme/coord:1".into()),
            n_proc_per_node: None,
            resources: None,
            restart_policy: None,
        };
        assert_eq!(master.resources(Some(&workers)), Some(workers));
        assert_eq!(master.resources(None), None);
    }
}
