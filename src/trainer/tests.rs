//! The catalogue reads, and says what the manifests at each tag say.

use super::Release;
use super::catalogue::{find, shipped};
use super::runtime::{Framework, InitializerGap};

#[test]
fn every_release_ships_torch_distributed_with_a_node_container() {
    for release in Release::ALL {
        let runtime = find(release, "torch-distributed")
            .unwrap_or_else(|| panic!("{}: no torch-distributed", release.tag()));
        let node = runtime.trainer_container().expect("a node container");
        assert!(
            node.image
                .as_deref()
                .is_some_and(|i| i.starts_with("pytorch/pytorch:")),
            "{}: {:?}",
            release.tag(),
            node.image
        );
        assert!(matches!(runtime.policy.framework, Framework::Torch { .. }));
    }
}

#[test]
fn the_runtimes_each_release_ships() {
    let names =
        |release| -> Vec<&str> { shipped(release).iter().map(|r| r.name.as_str()).collect() };
    // manifests/base/runtimes/ at each tag, and data-cache from v2.1.0.
    assert!(names(Release::V2_0).contains(&"mpi-distributed"));
    assert!(!names(Release::V2_1).contains(&"mpi-distributed"));
    assert!(!names(Release::V2_0).contains(&"torch-distributed-with-cache"));
    for release in [Release::V2_1, Release::V2_2, Release::V2_3] {
        assert!(names(release).contains(&"torch-distributed-with-cache"));
    }
    assert!(!names(Release::V2_1).contains(&"jax-distributed"));
    assert!(names(Release::V2_2).contains(&"jax-distributed"));
}

#[test]
fn numprocpernode_auto_was_dropped_from_the_torch_runtime_at_v2_2() {
    let npp = |release| match &find(release, "torch-distributed").unwrap().policy.framework {
        Framework::Torch { num_proc_per_node } => num_proc_per_node.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(npp(Release::V2_0).as_deref(), Some("auto"));
    assert_eq!(npp(Release::V2_1).as_deref(), Some("auto"));
    assert_eq!(npp(Release::V2_3), None);
}

#[test]
fn the_cache_runtime_dataset_initializer_has_no_initializer_mount() {
    for release in [Release::V2_1, Release::V2_2, Release::V2_3] {
        let runtime = find(release, "torch-distributed-with-cache").unwrap();
        let job = runtime.job("dataset-initializer").expect("the job");
        let container = job.container("dataset-initializer").expect("the container");
        assert!(
            container
                .mounts
                .iter()
                .all(|(name, _)| name != "initializer")
        );
        assert_eq!(
            runtime.trainer_job().unwrap().depends_on,
            ["dataset-initializer"]
        );
    }
    // What the webhook finds missing, release by release.
    let gap = |release, name| {
        find(release, name)
            .unwrap()
            .initializer_gap(release, "dataset")
    };
    assert_eq!(
        gap(Release::V2_3, "torch-distributed-with-cache"),
        Some(InitializerGap::NoMount)
    );
    assert_eq!(gap(Release::V2_2, "torch-distributed-with-cache"), None);
    assert_eq!(
        gap(Release::V2_3, "torch-distributed"),
        Some(InitializerGap::NoJob)
    );
    assert_eq!(gap(Release::V2_3, "torchtune-llama3.2-1b"), None);
    // The torchtune runtimes mount it in both initializers.
    let tune = find(Release::V2_3, "torchtune-llama3.2-1b").unwrap();
    for job in ["dataset-initializer", "model-initializer"] {
        let c = tune.job(job).unwrap().container(job).unwrap();
        assert!(
            c.mounts
                .iter()
                .any(|(name, path)| name == "initializer" && path == "/workspace")
        );
    }
}

/// The runtimes of `text` read as a runtimes file, and its problems' messages.
fn read_file(text: &str) -> (Vec<String>, Vec<String>) {
    let mut sources = crate::source::Sources::new();
    let id = sources.add("runtimes.yaml", text);
    let (runtimes, problems) = super::file::read(&sources, id);
    (
        runtimes
            .iter()
            .map(|r| format!("{} {}", r.kind.as_str(), r.name))
            .collect(),
        problems.iter().map(|d| d.message.clone()).collect(),
    )
}

const OURS: &str = "apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: ours, namespace: ml}
spec:
  mlPolicy: {numNodes: 1, torch: {numProcPerNode: 2}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                containers:
                - {name: node, image: 'ghcr.io/acme/base:1'}
";

#[test]
fn a_runtimes_file_is_a_list_or_a_stream_of_runtimes() {
    let indented: String = OURS.lines().flat_map(|l| ["  ", l, "\n"]).collect();
    let list = format!("apiVersion: v1\nkind: List\nitems:\n-{}", &indented[1..]);
    let (runtimes, problems) = read_file(&list);
    assert_eq!(runtimes, ["TrainingRuntime ours"], "{problems:?}");
    assert!(problems.is_empty(), "{problems:?}");

    let stream =
        format!("{OURS}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\n---\n{OURS}");
    let (runtimes, problems) = read_file(&stream);
    assert_eq!(runtimes, ["TrainingRuntime ours"]);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("a `ConfigMap` is not a runtime; skipped"));
    assert!(problems[1].contains("the TrainingRuntime `ours` is in the runtimes file twice"));
}

#[test]
fn a_runtime_that_cannot_be_read_is_located() {
    let (runtimes, problems) = read_file(
        "- a\n---\nkind: ClusterTrainingRuntime\nmetadata: {name: x}\nspec: {template: {spec: {replicatedJobs: 3}}}\n",
    );
    assert!(runtimes.is_empty());
    assert!(
        problems[0].contains("document 1 of the runtimes file is not a Kubernetes object"),
        "{problems:?}"
    );
    assert!(problems[1].contains("is not a list"), "{problems:?}");
}
