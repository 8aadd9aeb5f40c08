//! `trainc run` without PyTorch: a stand-in `torchrun` (a shell script)
//! prints what it was given, so the emulation of the controllers, the
//! kubelet's expansion, the pods' hostnames and DNS names and the job's end
//! are checked on every `cargo test`. `.ci/check-run` runs real torchrun.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use crate::support::{root, temp_dir, text, trainc};

/// A Python environment whose `torchrun` prints its arguments, the
/// completion index, its hostname, what the master's name resolves to and
/// whether its last argument (the script) is a file, and fails on the node rank in `FAIL_NODE` (an env of the spec).
fn fake_env(name: &str) -> PathBuf {
    let dir = temp_dir(name);
    let torchrun = dir.join("torchrun");
    std::fs::write(
        &torchrun,
        "#!/bin/sh\necho \"args: $*\"\necho \"index=$JOB_COMPLETION_INDEX host=$(cat /proc/sys/kernel/hostname)\"\n\
         getent hosts ddp-demo-0.ddp-demo | sed 's/^/master: /'\n\
         for last; do :; done; [ -f \"$last\" ] && echo \"script found\"\n\
         [ \"$JOB_COMPLETION_INDEX\" != \"$FAIL_NODE\" ] || { echo failing >&2; exit 7; }\n",
    )
    .unwrap();
    std::fs::set_permissions(&torchrun, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(dir.join("python3"), "").unwrap();
    dir
}

fn run(env: &Path, args: &[&str]) -> (i32, String) {
    let python = env.join("python3");
    let mut all = vec![
        "run",
        "--python",
        python.to_str().unwrap(),
        "--timeout",
        "60s",
    ];
    all.extend_from_slice(args);
    let output = trainc(&root(), &all);
    let said = format!("{}{}", text(&output.stdout), text(&output.stderr));
    (output.status.code().unwrap_or(-1), said)
}

#[test]
fn a_job_runs_as_the_job_controller_makes_its_pods() {
    let env = fake_env("run-job");
    let (status, said) = run(&env, &["examples/plain-job.toml"]);
    assert_eq!(status, 0, "{said}");
    // The kubelet expanded $(JOB_COMPLETION_INDEX) in the command.
    assert!(
        said.contains("[ddp-demo-1] args: --nnodes=2 --nproc_per_node=2 --node_rank=1 --master_addr=ddp-demo-0.ddp-demo"),
        "{said}"
    );
    for index in 0..2 {
        assert!(
            said.contains(&format!("[ddp-demo-{index}] index={index}")),
            "{said}"
        );
    }
    if said.contains("no user namespaces here") {
        return; // names rewritten to 127.0.0.1; nothing more to see
    }
    assert!(
        said.contains("[ddp-demo-1] index=1 host=ddp-demo-1"),
        "{said}"
    );
    assert!(said.contains("[ddp-demo-1] master: 127.77.0.2"), "{said}");
    assert!(said.contains("[ddp-demo-1] script found"), "{said}");
    assert!(
        said.contains("trainc run: Job/ddp-demo succeeded"),
        "{said}"
    );
}

#[test]
fn a_failing_pod_fails_the_run_with_what_the_cluster_would_do() {
    let env = fake_env("run-fail");
    let overlay = env.join("fail.toml");
    std::fs::write(&overlay, "[env]\nFAIL_NODE = \"1\"\n").unwrap();
    let (status, said) = run(
        &env,
        &["examples/plain-job.toml", "-O", overlay.to_str().unwrap()],
    );
    assert_eq!(status, 3, "{said}");
    assert!(
        said.contains("failed: pod ddp-demo-1: container `trainer` exited with 7; on the cluster the pod is not restarted (restartPolicy Never)"),
        "{said}"
    );
}

#[test]
fn what_only_the_cluster_or_the_image_has_is_asked_for() {
    let env = fake_env("run-missing");
    for (example, asked) in [
        (
            "examples/cpu-minimal.toml",
            "`--map /opt/pytorch-mnist=DIR`",
        ),
        ("examples/elastic.toml", "`--claim resnet-checkpoints=DIR`"),
        ("examples/gpu-multinode.toml", "`--secret huggingface=PATH`"),
    ] {
        let (status, said) = run(&env, &[example, "-O", "overlays/cpu.toml"]);
        assert_eq!(status, 1, "{said}");
        assert!(said.contains(asked), "{example}: {said}");
    }
}

/// A container without a `command` runs its image's entrypoint, which the
/// run is told with `--entrypoint`, the container's args after it; given
/// where no container needs it, the flag is an error.
#[test]
fn the_image_entrypoint_is_asked_for_and_given_with_entrypoint() {
    let env = fake_env("run-entrypoint");
    let spec = "examples/image-entrypoint.toml";
    let (status, said) = run(&env, &[spec, "--target", "job"]);
    assert_eq!(status, 1, "{said}");
    assert!(
        said.contains("say what it is: `--entrypoint \"python3 /app/train.py\"`"),
        "{said}"
    );
    let (status, said) = run(&env, &[spec, "--target", "job", "--entrypoint", "torchrun"]);
    assert_eq!(status, 0, "{said}");
    assert!(
        said.contains("[mnist-entrypoint-1] args: --epochs 1 --backend gloo"),
        "{said}"
    );
    let (status, said) = run(
        &env,
        &["examples/plain-job.toml", "--entrypoint", "torchrun"],
    );
    assert_eq!(status, 1, "{said}");
    assert!(
        said.contains("every container here has a `command`"),
        "{said}"
    );
}

/// A manifest is read as `verify` reads it: a document that is not an
/// object stops the run at its place.
#[test]
fn a_manifest_document_that_is_not_an_object_is_an_error() {
    let env = fake_env("run-not-object");
    let manifest = env.join("job.yaml");
    let built = trainc(&root(), &["build", "examples/plain-job.toml"]);
    let mut yaml = text(&built.stdout);
    yaml.push_str("---\n- just a list\n");
    std::fs::write(&manifest, yaml).unwrap();
    let (status, said) = run(&env, &["--manifests", manifest.to_str().unwrap()]);
    assert_eq!(status, 1, "{said}");
    assert!(
        said.contains("document 4 is not a Kubernetes") && said.contains("job.yaml:147:1"),
        "{said}"
    );
}

/// Without namespaces, containers are plain processes: the pods' names in
/// their command become 127.0.0.1 and mount paths local directories, and
/// the run says so.
#[test]
fn without_namespaces_names_and_paths_are_rewritten() {
    let env = fake_env("run-plain");
    let (status, said) = run(&env, &["--no-namespaces", "examples/plain-job.toml"]);
    assert_eq!(status, 0, "{said}");
    assert!(said.contains("no user namespaces here"), "{said}");
    let args = said
        .lines()
        .find(|l| l.starts_with("[ddp-demo-1] args: "))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(
        args.contains("--node_rank=1 --master_addr=127.0.0.1 --master_port=29500"),
        "{args}"
    );
    // The code ConfigMap's mount, /trainc/code, is a directory of the run.
    let script = args.split(' ').next_back().unwrap();
    assert!(
        script.ends_with("/train.py") && !script.starts_with("/trainc/"),
        "{args}"
    );
    assert!(said.contains("[ddp-demo-1] index=1"), "{said}");
    assert!(said.contains("[ddp-demo-1] script found"), "{said}");
    assert!(
        said.contains("trainc run: Job/ddp-demo succeeded"),
        "{said}"
    );
}

/// A local stand-in that cannot be read is named by its flag, in words.
#[test]
fn an_unreadable_stand_in_is_named_by_its_flag() {
    let env = fake_env("run-unreadable");
    let missing = env.join("nothing-here");
    let secret = format!("huggingface={}", missing.display());
    let (status, said) = run(
        &env,
        &[
            "examples/gpu-multinode.toml",
            "-O",
            "overlays/cpu.toml",
            "--secret",
            &secret,
        ],
    );
    assert_eq!(status, 1, "{said}");
    assert!(
        said.contains("--secret huggingface: ") && said.contains("nothing-here: no such file"),
        "{said}"
    );
    assert!(!said.contains("os error"), "{said}");
}
