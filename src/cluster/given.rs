//! Pods given as they are: what a cluster's controllers made (`kubectl get
//! pods -o yaml`), run by `trainc run --manifests` without a controller of
//! trainc's in between. Each Pod is one pod of the job, with the name,
//! hostname, labels, annotations and spec it was made with; the Services
//! beside them give the pods their DNS names, as on the cluster.

use serde_json::Value as Json;

use super::{Pod, Success, Workload};

/// The containers that train, by the name each operator gives them: the
/// Training Operator's `pytorch`, Trainer's `node`, trainc's own.
const TRAINERS: [&str; 3] = [
    super::pytorchjob::CONTAINER,
    super::trainjob::NODE,
    super::job::CONTAINER,
];

/// The workload of the Pods among `objects`, `None` when there are none.
pub fn workload(objects: &[Json]) -> Option<Result<Workload, String>> {
    let pods: Vec<&Json> = objects
        .iter()
        .filter(|o| o["apiVersion"] == "v1" && o["kind"] == "Pod")
        .collect();
    if pods.is_empty() {
        return None;
    }
    Some(made(&pods))
}

fn made(given: &[&Json]) -> Result<Workload, String> {
    let mut pods = Vec::new();
    let mut trainer = None;
    let mut waits = false;
    for (i, pod) in given.iter().enumerate() {
        let meta = &pod["metadata"];
        let name = meta["name"]
            .as_str()
            .or_else(|| {
                meta["generateName"]
                    .as_str()
                    .map(|n| n.trim_end_matches('-'))
            })
            .ok_or_else(|| format!("Pod {} (item {i}) has no `metadata.name`", i + 1))?;
        let mut spec = pod["spec"].clone();
        // The Training Operator's `init-pytorch` waits until the Master's
        // name resolves; here every name resolves from the start
        // ([`super::pytorchjob::MASTER_LOOKUPS`]), so it has nothing to wait for.
        if let Some(inits) = spec["initContainers"].as_array_mut() {
            let before = inits.len();
            inits.retain(|c| c["name"] != super::pytorchjob::INIT_CONTAINER);
            waits |= inits.len() < before;
        }
        if !spec["containers"].is_array() {
            return Err(format!("Pod/{name} has no `spec.containers`"));
        }
        let names: Vec<&str> = (spec["containers"].as_array().into_iter().flatten())
            .filter_map(|c| c["name"].as_str())
            .collect();
        if trainer.is_none() {
            trainer = names
                .iter()
                .find(|n| TRAINERS.contains(n))
                .or(names.first())
                .map(|n| (*n).to_owned());
        }
        let hostname = spec["hostname"].as_str().unwrap_or(name).to_owned();
        pods.push(Pod {
            name: name.to_owned(),
            hostname,
            namespace: super::namespace_of(pod).to_owned(),
            role: format!("pod {i}, as given"),
            labels: meta["labels"].as_object().cloned().unwrap_or_default(),
            annotations: meta["annotations"].as_object().cloned().unwrap_or_default(),
            on_failure: super::restart_words(spec["restartPolicy"].as_str()).to_owned(),
            spec,
            retries: Some(0),
            stage: 0,
        });
    }
    let total = pods.len() as u64;
    let mut notes =
        vec!["the Pods run as given: no controller replaces or restarts them here".to_owned()];
    if waits {
        notes.push(format!(
            "the Workers' `{}` init containers are not run: they wait for the Master's name, which resolves here from the start",
            super::pytorchjob::INIT_CONTAINER
        ));
    }
    Ok(Workload {
        job: format!("{total} Pods as given"),
        made_by: "the controllers that made them (given as they are)",
        trainer: trainer.unwrap_or_default(),
        suffixed: false,
        pods,
        total,
        success: Success::AllPods,
        deadline: None,
        group: None,
        services: Vec::new(),
        notes,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn pods_run_as_given_without_the_operators_wait_for_the_master() {
        let worker = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "j-worker-0", "namespace": "ml", "labels": {"a": "b"}},
            "spec": {"initContainers": [{"name": "init-pytorch", "image": "alpine:3.10"}],
                "containers": [{"name": "pytorch", "image": "x"}]}});
        let job_pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"generateName": "d-1-"},
            "spec": {"hostname": "d-1", "containers": [{"name": "side", "image": "y"}, {"name": "trainer", "image": "x"}]}});
        let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "d"}});
        let workload = super::workload(&[worker, job_pod, service])
            .unwrap()
            .unwrap();
        assert_eq!(workload.total, 2);
        assert_eq!(workload.trainer, "pytorch");
        let names: Vec<(&str, &str, &str)> = workload
            .pods
            .iter()
            .map(|p| (p.name.as_str(), p.hostname.as_str(), p.namespace.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("j-worker-0", "j-worker-0", "ml"),
                ("d-1", "d-1", "default")
            ]
        );
        assert!(workload.pods[0].containers(true).is_empty());
        assert!(workload.notes.iter().any(|n| n.contains("init-pytorch")));
        assert!(super::workload(&[json!({"kind": "Service"})]).is_none());
    }
}
