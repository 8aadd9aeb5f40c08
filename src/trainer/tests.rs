//! The catalogue reads, and says what the manifests at each tag say.

use super::Release;
use super::catalogue::{find, shipped};
use super::runtime::Framework;

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
