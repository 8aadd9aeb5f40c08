//! Overlays, templates and `trainc init`, through the command line.

use serde_json::Value;

use crate::support::{root, temp_dir, text, trainc};

fn job(yaml: &str) -> Value {
    let documents: Vec<Value> = serde_saphyr::from_str_multiple(yaml).unwrap();
    documents.last().unwrap().clone()
}

/// `trainc ARGS` in `dir`, which must succeed: the job it built.
fn built(dir: &std::path::Path, args: &[&str]) -> Value {
    let output = trainc(dir, args);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    job(&text(&output.stdout))
}

fn container(job: &Value) -> Value {
    job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0].clone()
}

#[test]
fn overlays_apply_in_order_and_the_last_one_wins() {
    let dir = temp_dir("compose-order");
    std::fs::write(dir.join("spec.toml"), "name = \"demo\"\nimage = \"ghcr.io/acme/train:1.4\"\nscript = \"/app/train.py\"\n[env]\nA = \"base\"\nB = \"base\"\n").unwrap();
    std::fs::write(dir.join("one.toml"), "replicas = 3\n[env]\nA = \"one\"\n").unwrap();
    std::fs::write(dir.join("two.yaml"), "replicas: 5\nenv:\n  B: two\n").unwrap();
    let build = |args: &[&str]| {
        let mut all = vec!["build"];
        all.extend_from_slice(args);
        all.push("spec.toml");
        built(&dir, &all)
    };
    let one_two = build(&["-O", "one.toml", "-O", "two.yaml"]);
    let two_one = build(&["-O", "two.yaml", "-O", "one.toml"]);
    assert_eq!(
        one_two["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"], 4,
        "two.yaml came last: 5 pods"
    );
    assert_eq!(
        two_one["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"], 2,
        "one.toml came last: 3 pods"
    );
    let env = &container(&one_two)["env"];
    assert_eq!(
        env,
        &serde_json::json!([{"name": "A", "value": "one"}, {"name": "B", "value": "two"}])
    );
}

#[test]
fn an_overlay_removes_what_the_base_set() {
    let job = built(
        &root(),
        &[
            "build",
            "-O",
            "overlays/cpu.toml",
            "examples/gpu-multinode.toml",
        ],
    );
    let pod = &job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"];
    assert!(
        pod["containers"][0]["resources"]["limits"]
            .get("nvidia.com/gpu")
            .is_none()
    );
    assert!(pod.get("tolerations").is_none() && pod.get("nodeSelector").is_none());
    assert_eq!(job["spec"]["nprocPerNode"], "1");
}

#[test]
fn templates_use_vars_and_set_wins_over_them() {
    let dir = root().join("tests/check");
    let plain = trainc(&dir, &["build", "template-pass-set.toml"]);
    let set = trainc(
        &dir,
        &[
            "build",
            "--set",
            "tag=1.4",
            "--set",
            "run=b",
            "template-pass-set.toml",
        ],
    );
    assert_eq!(plain.status.code(), Some(0), "{}", text(&plain.stderr));
    let plain = container(&job(&text(&plain.stdout)));
    let set = container(&job(&text(&set.stdout)));
    assert_eq!(plain["image"], "ghcr.io/acme/train:1.3");
    assert_eq!(set["image"], "ghcr.io/acme/train:1.4");
    assert_eq!(
        set["args"],
        serde_json::json!(["--run=demo-b", "--literal={{x}}", "{{ raw }}"])
    );
}

/// `--set` values are typed as `[vars]` values are (`8` an integer, `1.10`
/// kept as written, `"8"` a string); a whole-value template gives a number
/// field its number; fields read rendered values.
#[test]
fn set_values_are_typed_and_templates_can_fill_numbers() {
    let dir = root().join("tests/check");
    let build = |sets: &[&str]| {
        let mut args = vec!["build", "template-pass-typed.toml"];
        for set in sets {
            args.extend(["--set", set]);
        }
        built(&dir, &args)
    };
    let default = build(&[]);
    assert_eq!(default["metadata"]["name"], "bert-a");
    assert_eq!(
        default["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"],
        7
    );
    let c = container(&default);
    assert_eq!(
        c["args"],
        serde_json::json!(["--run", "bert-a", "--nodes", "8", "--queued=true"])
    );
    assert_eq!(c["resources"]["limits"]["cpu"], "4");
    assert_eq!(
        default["spec"]["runPolicy"]["suspend"], true,
        "a boolean, not `True`"
    );
    // Digit separators read as in `[vars]`: the integer 1000.
    let thousand = build(&["n=1_000"]);
    assert_eq!(
        thousand["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"],
        1999
    );
    let set = build(&["n=8", "tag=1.10"]);
    assert_eq!(set["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"], 15);
    assert_eq!(container(&set)["image"], "ghcr.io/acme/train:1.10");
    assert_eq!(container(&set)["resources"]["limits"]["cpu"], "8");
    // A quoted value is a string, and `*` multiplies numbers only: Jinja
    // would repeat the text, which a spec never means.
    let quoted = trainc(
        &dir,
        &["build", "template-pass-typed.toml", "--set", "n=\"8\""],
    );
    assert_eq!(quoted.status.code(), Some(1));
    assert!(
        text(&quoted.stderr).contains("`*` in a spec template multiplies numbers only"),
        "{}",
        text(&quoted.stderr)
    );
}

/// A list's numbers reach templates as written, from `[vars]` and from
/// `--set` alike.
#[test]
fn list_numbers_are_kept_as_written() {
    let dir = root().join("tests/check");
    let args = |sets: &[&str]| {
        let mut args = vec!["build", "template-pass-set-list.toml"];
        for set in sets {
            args.extend(["--set", set]);
        }
        container(&built(&dir, &args))["args"].clone()
    };
    let expected = serde_json::json!(["--versions", "1.10,2,1000"]);
    assert_eq!(args(&[]), expected);
    assert_eq!(args(&["versions=[1.10, 2, 1_000]"]), expected);
    assert_eq!(
        args(&["versions=[\"1.9\", 1e3]"]),
        serde_json::json!(["--versions", "1.9,1e3"])
    );
}

/// A `[vars]` number reaches a template as written, in TOML and in YAML:
/// `tag = 1.10` builds the image `:1.10`, never `:1.1`.
#[test]
fn vars_numbers_reach_templates_as_written() {
    let dir = temp_dir("vars-as-written");
    std::fs::copy(
        root().join("tests/check/template-pass-written-numbers.toml"),
        dir.join("s.toml"),
    )
    .unwrap();
    std::fs::write(
        dir.join("s.yaml"),
        "apiVersion: trainc.dev/v1alpha1\nkind: TrainSpec\nmetadata:\n  name: mnist-cpu\nspec:\n  image: \"ghcr.io/acme/train:{{ vars.tag }}\"\n  script: /app/train.py\n  args: [\"--lr={{ vars.lr }}\", \"--steps={{ vars.steps * 2 }}\"]\n  replicas: \"{{ vars.nodes }}\"\n  vars:\n    tag: 1.10\n    lr: 1e-4\n    steps: 1000\n    nodes: 2\n",
    )
    .unwrap();
    for file in ["s.toml", "s.yaml"] {
        let job = built(&dir, &["build", file]);
        let c = container(&job);
        assert_eq!(c["image"], "ghcr.io/acme/train:1.10", "{file}");
        assert_eq!(
            c["args"],
            serde_json::json!(["--lr=1e-4", "--steps=2000"]),
            "{file}"
        );
        assert_eq!(
            job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"], 1,
            "{file}"
        );
    }
}

/// A list in `[vars]` or from `--set` is a list to templates.
#[test]
fn vars_lists_reach_templates_as_lists() {
    let dir = temp_dir("vars-lists");
    std::fs::write(
        dir.join("s.toml"),
        "name = \"a\"\nimage = \"x/y:1\"\nscript = \"/a.py\"\nargs = [\"--ids={{ vars.ids | join(',') }}\", \"--first={{ vars.ids[0] }}\"]\n[vars]\nids = [0]\n",
    )
    .unwrap();
    for (sets, ids, first) in [
        (&[][..], "--ids=0", "--first=0"),
        (&["ids=[1, 2]"][..], "--ids=1,2", "--first=1"),
    ] {
        let mut args = vec!["build", "s.toml"];
        for set in sets {
            args.extend(["--set", set]);
        }
        let c = container(&built(&dir, &args));
        assert_eq!(c["args"], serde_json::json!([ids, first]), "{sets:?}");
    }
}

/// A KRM TrainSpec's own labels and annotations are the job's; the tools'
/// annotations about the TrainSpec are not.
#[test]
fn krm_metadata_labels_and_annotations_are_the_jobs() {
    let dir = temp_dir("krm-metadata");
    std::fs::write(
        dir.join("s.yaml"),
        "apiVersion: trainc.dev/v1alpha1\nkind: TrainSpec\nmetadata:\n  name: a\n  labels: {team: vision}\n  annotations: {owner: alice, config.kubernetes.io/local-config: \"true\", internal.config.kubernetes.io/path: s.yaml}\nspec:\n  image: x/y:1\n  script: /a.py\n  labels: {app: mnist}\n",
    )
    .unwrap();
    let job = built(&dir, &["build", "s.yaml"]);
    let pod = &job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["metadata"];
    for meta in [&job["metadata"], pod] {
        assert_eq!(meta["labels"]["team"], "vision");
        assert_eq!(meta["labels"]["app"], "mnist");
        assert_eq!(meta["annotations"]["owner"], "alice");
        let annotations = meta["annotations"].as_object().unwrap();
        assert!(
            annotations
                .keys()
                .all(|k| !k.contains("config.kubernetes.io")),
            "{annotations:?}"
        );
    }
}

#[test]
fn a_bad_set_is_a_usage_error() {
    let output = trainc(
        &root(),
        &[
            "build",
            "--set",
            "no-equals-sign",
            "examples/cpu-minimal.toml",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("`--set` takes NAME=VALUE, as in `--set tag=2.3.2`"));
}

#[test]
fn the_cpu_overlay_threads_follow_set() {
    let output = trainc(
        &root(),
        &[
            "build",
            "-O",
            "overlays/cpu.toml",
            "--set",
            "ompThreads=16",
            "examples/cpu-minimal.toml",
        ],
    );
    let env = container(&job(&text(&output.stdout)))["env"].clone();
    assert_eq!(
        env,
        serde_json::json!([{"name": "OMP_NUM_THREADS", "value": "16"}])
    );
}

/// `file` checks without a diagnostic and builds with `--verify`: the objects.
fn checks_clean_and_builds(dir: &std::path::Path, file: &str) -> Vec<u8> {
    let check = trainc(dir, &["check", file]);
    assert_eq!(
        text(&check.stderr),
        "checked 1 file: 0 errors, 0 warnings\n",
        "{file}"
    );
    let build = trainc(dir, &["build", "--verify", file]);
    assert_eq!(
        build.status.code(),
        Some(0),
        "{file}: {}",
        text(&build.stderr)
    );
    build.stdout
}

#[test]
fn init_writes_specs_that_check_clean_and_build_for_every_target() {
    let dir = temp_dir("compose-init");
    for target in ["pytorchjob", "trainjob", "job"] {
        for gpu in [false, true] {
            let file = format!("{target}{}.toml", if gpu { "-gpu" } else { "" });
            let mut args = vec!["init", file.as_str(), "--target", target, "--name", "demo"];
            if gpu {
                args.push("--gpu");
            }
            let output = trainc(&dir, &args);
            assert_eq!(
                output.status.code(),
                Some(0),
                "{file}: {}",
                text(&output.stderr)
            );
            let written = std::fs::read_to_string(dir.join(&file)).unwrap();
            assert!(written.starts_with("#:schema "), "{file}");
            assert_eq!(written.contains("gpus = 1"), gpu, "{file}");
            checks_clean_and_builds(&dir, &file);
        }
    }
}

/// The file's extension decides the format: TOML, bare YAML, or with
/// `--krm` a TrainSpec; all three check clean and build the same objects.
/// `-` writes to stdout and creates no file.
#[test]
fn init_writes_the_format_the_file_name_says() {
    let dir = temp_dir("compose-init-formats");
    for target in ["pytorchjob", "trainjob", "job"] {
        let mut outputs = Vec::new();
        for (file, krm) in [
            ("s.toml", false),
            ("s.yaml", false),
            ("s.yml", false),
            ("s.krm.yaml", true),
        ] {
            let _ = std::fs::remove_file(dir.join(file));
            let mut args = vec!["init", file, "--name", "demo", "--gpu", "--target", target];
            if krm {
                args.push("--krm");
            }
            let output = trainc(&dir, &args);
            assert_eq!(
                output.status.code(),
                Some(0),
                "{file}: {}",
                text(&output.stderr)
            );
            let written = std::fs::read_to_string(dir.join(file)).unwrap();
            assert_eq!(written.contains("kind: TrainSpec"), krm, "{file}");
            assert_eq!(
                written.contains("gpus = 1"),
                std::path::Path::new(file)
                    .extension()
                    .is_some_and(|e| e == "toml"),
                "{file}"
            );
            outputs.push(checks_clean_and_builds(&dir, file));
        }
        assert!(
            outputs.windows(2).all(|w| w[0] == w[1]),
            "{target}: the formats build differently"
        );
    }
    let stdout = trainc(&dir, &["init", "-", "--name", "piped"]);
    assert_eq!(stdout.status.code(), Some(0));
    assert!(text(&stdout.stdout).contains("name = \"piped\""));
    assert!(!dir.join("-").exists(), "`-` is stdout, not a file");
    let krm = trainc(&dir, &["init", "-", "--krm", "--name", "piped"]);
    assert!(text(&krm.stdout).contains("kind: TrainSpec"));
    let wrong = trainc(&dir, &["init", "x.toml", "--krm"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(
        text(&wrong.stderr).contains(".yaml"),
        "{}",
        text(&wrong.stderr)
    );
    let unknown = trainc(&dir, &["init", "spec.txt"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(!dir.join("spec.txt").exists());
}

/// The schema a written starter's first line names is there beside it,
/// the one `trainc schema` prints; one already there is kept unless
/// `--force`; a starter on stdout names none, and says how.
#[test]
fn init_writes_the_schema_its_first_line_names() {
    let dir = temp_dir("compose-init-schema");
    for (file, krm, schema_args) in [
        ("a.toml", false, vec!["schema"]),
        ("b.yaml", false, vec!["schema"]),
        ("c.yaml", true, vec!["schema", "--krm"]),
    ] {
        let mut args = vec!["init", file, "--name", "demo"];
        if krm {
            args.push("--krm");
        }
        let output = trainc(&dir, &args);
        assert!(output.status.success(), "{file}: {}", text(&output.stderr));
        let written = std::fs::read_to_string(dir.join(file)).unwrap();
        let first = written.lines().next().unwrap();
        let Some((_, named)) = first.rsplit_once("./") else {
            panic!("{file}: {first}");
        };
        let schema = std::fs::read_to_string(dir.join(named))
            .unwrap_or_else(|_| panic!("{file}: `{named}` is not beside it"));
        assert_eq!(schema, text(&trainc(&dir, &schema_args).stdout), "{file}");
    }
    // Kept as it is when there, unless --force.
    std::fs::write(dir.join("trainspec.schema.json"), "{}").unwrap();
    let kept = trainc(&dir, &["init", "d.toml", "--name", "demo"]);
    assert!(text(&kept.stderr).contains("kept the `trainspec.schema.json` there"));
    assert_eq!(
        std::fs::read_to_string(dir.join("trainspec.schema.json")).unwrap(),
        "{}"
    );
    let forced = trainc(&dir, &["init", "d.toml", "--name", "demo", "--force"]);
    assert!(forced.status.success());
    assert_ne!(
        std::fs::read_to_string(dir.join("trainspec.schema.json")).unwrap(),
        "{}"
    );
    let piped = text(&trainc(&dir, &["init", "-", "--name", "demo"]).stdout);
    assert!(!piped.starts_with("#:schema"), "{piped}");
    assert!(
        piped.contains("trainc schema > trainspec.schema.json"),
        "{piped}"
    );
}

#[test]
fn init_never_overwrites_without_force_and_rejects_bad_names() {
    let dir = temp_dir("compose-init-force");
    assert_eq!(
        trainc(&dir, &["init", "--name", "demo"]).status.code(),
        Some(0)
    );
    assert!(dir.join("trainspec.toml").exists());
    std::fs::write(dir.join("trainspec.toml"), "mine").unwrap();
    let again = trainc(&dir, &["init", "--name", "demo"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again.stderr).contains("already exists; pass --force"));
    assert_eq!(
        std::fs::read_to_string(dir.join("trainspec.toml")).unwrap(),
        "mine"
    );
    assert_eq!(
        trainc(&dir, &["init", "--name", "demo", "--force"])
            .status
            .code(),
        Some(0)
    );
    assert_ne!(
        std::fs::read_to_string(dir.join("trainspec.toml")).unwrap(),
        "mine"
    );
    let bad = trainc(&dir, &["init", "other.toml", "--name", "My_Job"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("try `--name my-job`"),
        "{}",
        text(&bad.stderr)
    );
    assert!(!dir.join("other.toml").exists());
}
