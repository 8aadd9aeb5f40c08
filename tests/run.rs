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

/// `trainc run --python ENV/python3 --timeout 60s ARGS`: its exit status and
/// all it said.
pub(crate) fn run(env: &Path, args: &[&str]) -> (i32, String) {
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

/// The work directory was `$TMPDIR/trainc-run-<pid>`, reused if there: a
/// user who made it first (with a link inside) had trainc write through the
/// link, and saw trainc delete their files. Here the old path is made by
/// another user (as root: `nobody`) for the very pid trainc runs as, with a
/// link to a victim file in it: the run succeeds in a directory of its own,
/// and the victim, the directory and the link are as they were.
#[test]
fn a_work_directory_made_in_advance_by_another_user_changes_nothing() {
    let env = fake_env("run-premade");
    let tmp = env.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let victim = env.join("victim.txt");
    std::fs::write(&victim, "the victim's own\n").unwrap();
    let as_root = std::fs::metadata("/proc/self").is_ok_and(|m| {
        use std::os::unix::fs::MetadataExt as _;
        m.uid() == 0
    });
    // The shell makes the old path for its own pid, then becomes trainc.
    let script = format!(
        "set -e; old=\"$TMPDIR/trainc-run-$$\"; mkdir \"$old\"; ln -s {victim} \"$old/hosts\"; \
         {chown} exec {trainc} run --python {python} --timeout 60s {spec}",
        victim = victim.display(),
        chown = if as_root {
            "chown -h -R 65534:65534 \"$old\";"
        } else {
            ""
        },
        trainc = env!("CARGO_BIN_EXE_trainc"),
        python = env.join("python3").display(),
        spec = root().join("examples/plain-job.toml").display(),
    );
    let output = std::process::Command::new("sh")
        .args(["-c", &script])
        .env("TMPDIR", &tmp)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let said = format!("{}{}", text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "the victim's own\n"
    );
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(left.len(), 1, "only the old directory is there: {left:?}");
    let link = left[0].join("hosts");
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        victim,
        "the link is untouched"
    );
    if as_root {
        use std::os::unix::fs::MetadataExt as _;
        assert_eq!(std::fs::symlink_metadata(&left[0]).unwrap().uid(), 65534);
    }
}

/// Two runs of one job on one machine share its ports: a port in use is
/// found before anything starts, with the process that holds it.
#[test]
fn a_port_another_process_holds_is_named_before_the_run_starts() {
    let env = fake_env("run-port");
    let held = std::net::TcpListener::bind(("0.0.0.0", 0)).unwrap();
    let port = held.local_addr().unwrap().port();
    let built = trainc(&root(), &["build", "examples/plain-job.toml"]);
    let manifest = env.join("job.yaml");
    std::fs::write(
        &manifest,
        text(&built.stdout).replace("--master_port=29500", &format!("--master_port={port}")),
    )
    .unwrap();
    let (status, said) = run(&env, &["--manifests", manifest.to_str().unwrap()]);
    assert_eq!(status, 1, "{said}");
    assert!(
        said.contains(&format!(
            "port {port} is in use on this machine, by process {}",
            std::process::id()
        )) && said.contains("pod ddp-demo-0 listens on it")
            && said.contains("trainc::run::cannot_start"),
        "{said}"
    );
    assert!(!said.contains("[ddp-demo-"), "nothing started: {said}");
    drop(held);
}

/// A flag's value that cannot be used is 2, as is this machine refusing the
/// run's directory; what only the cluster has is 1; each with its code.
#[test]
fn each_class_of_error_has_its_code_and_exit_status() {
    let env = fake_env("run-codes");
    let (status, said) = run(&env, &["examples/plain-job.toml", "--map", "app=/tmp"]);
    assert_eq!(status, 2, "{said}");
    assert!(
        said.contains("trainc::run::usage")
            && said.contains("--map app=/tmp: the image path must be absolute"),
        "{said}"
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_trainc"))
        .args(["run", "--python"])
        .arg(env.join("python3"))
        .arg(root().join("examples/plain-job.toml"))
        .env("TMPDIR", env.join("no-such-directory"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let said = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert!(
        said.contains("trainc::run::io") && said.contains("no-such-directory"),
        "{said}"
    );
    let (status, said) = run(
        &env,
        &["examples/gpu-multinode.toml", "-O", "overlays/cpu.toml"],
    );
    assert_eq!(status, 1, "{said}");
    assert!(said.contains("trainc::run::missing"), "{said}");
}

/// A JobSet's failure policy as JobSet applies it after a job fails: the
/// first rule that applies to the Job's failure (its reason, message and
/// replicated job) decides, and with none `RestartJobSet` up to
/// `maxRestarts`. The plain-job example as a JobSet, node 1 failing with
/// exit code 7 (the pod failure policy fails its Job: `PodFailurePolicy`).
#[test]
fn a_jobset_fails_or_restarts_as_its_failure_policy_rules_say() {
    let env = fake_env("run-jobset-rules");
    let overlay = env.join("fail.toml");
    std::fs::write(&overlay, "[env]\nFAIL_NODE = \"1\"\n").unwrap();
    let built = trainc(
        &root(),
        &[
            "build",
            "-o",
            "json",
            "examples/plain-job.toml",
            "--target",
            "jobset",
            "-O",
            overlay.to_str().unwrap(),
        ],
    );
    assert!(built.status.success(), "{}", text(&built.stderr));
    let list: serde_json::Value = serde_json::from_slice(&built.stdout).unwrap();
    let with_policy = |policy: serde_json::Value| -> (i32, String) {
        let mut list = list.clone();
        for item in list["items"].as_array_mut().unwrap() {
            if item["kind"] == "JobSet" {
                item["spec"]["failurePolicy"] = policy.clone();
            }
        }
        let path = env.join("jobset.json");
        std::fs::write(&path, list.to_string()).unwrap();
        run(&env, &["--manifests", path.to_str().unwrap()])
    };
    // A rule for this failure: the JobSet fails at once.
    let (status, said) = with_policy(serde_json::json!({
        "maxRestarts": 3,
        "rules": [
            { "name": "lostNode", "action": "RestartJobSet", "onJobFailureReasons": ["BackoffLimitExceeded"] },
            { "name": "codeBug", "action": "FailJobSet", "onJobFailureReasons": ["PodFailurePolicy"], "targetReplicatedJobs": ["node"] },
        ],
    }));
    assert_eq!(status, 3, "{said}");
    assert!(!said.contains("make them all again"), "{said}");
    assert!(
        said.contains(
            "failure policy rule `codeBug` matches the Job's failure (PodFailurePolicy): FailJobSet"
        ),
        "{said}"
    );
    // No rule applies: RestartJobSet, counted, then maxRestarts is reached.
    let (status, said) = with_policy(serde_json::json!({
        "maxRestarts": 1,
        "rules": [{ "name": "lostNode", "action": "FailJobSet", "onJobFailureReasons": ["BackoffLimitExceeded"] }],
    }));
    assert_eq!(status, 3, "{said}");
    assert_eq!(said.matches("make them all again").count(), 1, "{said}");
    assert!(said.contains("failed after 1 restart:"), "{said}");
    assert!(
        said.contains("failurePolicy.maxRestarts (1) is reached"),
        "{said}"
    );
    // A message pattern (Kubernetes' words for the pod failure policy) and
    // restarts that do not count: JobSet makes them for ever, trainc run
    // stops after ten.
    let (status, said) = with_policy(serde_json::json!({
        "rules": [{
            "name": "flaky",
            "action": "RestartJobSetAndIgnoreMaxRestarts",
            "onJobFailureMessagePatterns": ["failed with exit code 7 matching FailJob rule"],
        }],
    }));
    assert_eq!(status, 3, "{said}");
    assert_eq!(said.matches("make them all again").count(), 10, "{said}");
    assert!(
        said.contains("a restart that does not count towards maxRestarts"),
        "{said}"
    );
    assert!(
        said.contains("trainc run stops after 10 restarts that do not count"),
        "{said}"
    );
}

/// A sidecar (an init container with `restartPolicy: Always`) starts, the
/// next init container starts without waiting for it to end, it runs beside
/// training, and it is stopped when the pod's containers have ended, which
/// then succeed: the run ends, as the kubelet's pod does.
#[test]
fn a_sidecar_runs_beside_training_and_is_stopped_when_it_ends() {
    let env = fake_env("run-sidecar");
    let overlay = env.join("sidecar.toml");
    std::fs::write(
        &overlay,
        "[[podTemplate.spec.initContainers]]\nname = \"metrics\"\nimage = \"busybox:1.36\"\n\
         command = [\"sh\", \"-c\", \"echo sidecar up; trap 'echo sidecar stopping; exit 0' TERM; while true; do sleep 0.2; done\"]\n\
         restartPolicy = \"Always\"\n\n\
         [[podTemplate.spec.initContainers]]\nname = \"prepare\"\nimage = \"busybox:1.36\"\n\
         command = [\"sh\", \"-c\", \"echo prepared\"]\n",
    )
    .unwrap();
    let started = std::time::Instant::now();
    let (status, said) = run(
        &env,
        &["examples/plain-job.toml", "-O", overlay.to_str().unwrap()],
    );
    assert_eq!(status, 0, "{said}");
    for index in 0..2 {
        let pod = format!("ddp-demo-{index}");
        let at = |line: &str| {
            said.find(&format!("[{line}"))
                .unwrap_or_else(|| panic!("no `{line}`:\n{said}"))
        };
        // The sidecar and the next init container run at once: their
        // lines come in either order.
        at(&format!("{pod}/metrics] sidecar up"));
        let prepared = at(&format!("{pod}/prepare] prepared"));
        let trained = at(&format!("{pod}] args:"));
        let stopping = at(&format!("{pod}/metrics] sidecar stopping"));
        assert!(prepared < trained && trained < stopping, "{said}");
    }
    assert!(
        said.contains("trainc run: Job/ddp-demo succeeded"),
        "{said}"
    );
    assert!(started.elapsed().as_secs() < 30, "{said}");
}
