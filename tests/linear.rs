//! Every stage is linear in its input: for each shape of large input (many
//! volumes, keys, overlay entries, template strings, items, objects…), the
//! input at size n and at 2n, counted in instructions by callgrind (exact and
//! repeatable, where wall time on a shared machine is not). Doubling the
//! input may at most about double the count: a quadratic part of any weight
//! takes the ratio well past it (at 2n it costs four times as much).

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{temp_dir, tool_available};

/// Instructions at 2n over instructions at n, at most. Linear work gives a
/// little under 2 (the fixed cost of a run does not double): every shape
/// measures 2.00 or less. The quadratic lookups this test was written
/// against measured 2.14 to 3.57 at these sizes.
const MAX_RATIO: f64 = 2.1;
/// At least this: below it the run's fixed cost hides the input's, and the
/// measurement would say nothing (each shape's n is chosen to stay above).
const MIN_RATIO: f64 = 1.5;

const GOOD: &str =
    "name = \"demo\"\nimage = \"ghcr.io/acme/train:1.4\"\nscript = \"/app/train.py\"\n";
const RL: &str = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n";
const FC: &str = "functionConfig:\n  apiVersion: trainc.dev/v1alpha1\n  kind: TrainSpec\n  metadata: {name: demo}\n  spec: {image: 'ghcr.io/acme/train:1.4', script: /app/train.py}\n";

/// One shape: the command line (`FILE` is the input, `OVERLAY` the second
/// file), the input at size n, and the second file when there is one.
struct Shape {
    name: &'static str,
    args: &'static [&'static str],
    /// The input's file name (its extension tells TOML from YAML); `-` on stdin.
    file: &'static str,
    input: fn(usize) -> String,
    overlay: Option<fn(usize) -> String>,
    n: usize,
}

fn volumes_spec(n: usize) -> String {
    let mut s = GOOD.to_owned();
    for i in 0..n {
        let _ = writeln!(
            s,
            "[volumes.v{i}]\nmountPath = \"/m/v{i}\"\nemptyDir = true"
        );
    }
    s
}

fn claims_spec(n: usize) -> String {
    let mut s = GOOD.to_owned() + "replicas = 2\n";
    for i in 0..n {
        let _ = writeln!(
            s,
            "[volumes.v{i}]\nmountPath = \"/m/v{i}\"\nsize = \"1Gi\"\nstorageClass = \"nfs\""
        );
    }
    s
}

fn ports_spec(n: usize) -> String {
    let mut s = GOOD.to_owned() + "[ports]\n";
    for i in 0..n {
        let _ = writeln!(s, "p{i} = {}", 30000 + i);
    }
    s
}

fn env_spec(n: usize) -> String {
    let mut s = GOOD.to_owned() + "[env]\n";
    for i in 0..n {
        let _ = writeln!(s, "VAR_{i} = \"value {i}\"");
    }
    s
}

fn vars_spec(n: usize) -> String {
    let mut s = GOOD.to_owned() + "[vars]\n";
    for i in 0..n {
        let _ = writeln!(s, "k{i} = {i}");
    }
    s
}

fn overlay(n: usize) -> String {
    let unset: Vec<String> = (0..n)
        .step_by(2)
        .map(|i| format!("\"vars.k{i}\""))
        .collect();
    let mut s = format!("unset = [{}]\n[vars]\n", unset.join(", "));
    for i in (1..n).step_by(2) {
        let _ = writeln!(s, "k{i} = {}", n + i);
    }
    for i in n..2 * n {
        let _ = writeln!(s, "k{i} = {i}");
    }
    s
}

fn unknown_keys(n: usize) -> String {
    let mut s = GOOD.to_owned();
    for i in 0..n {
        let _ = writeln!(s, "unknown{i} = {i}");
    }
    s
}

fn templates(n: usize) -> String {
    let args: Vec<String> = (0..n)
        .map(|i| format!("\"--a{i}={{{{ name }}}}-{{{{ replicas * {i} }}}}\""))
        .collect();
    format!("{GOOD}args = [{}]\n", args.join(", "))
}

fn yaml_labels(n: usize) -> String {
    let mut s =
        "name: demo\nimage: ghcr.io/acme/train:1.4\nscript: /app/train.py\nlabels:\n".to_owned();
    for i in 0..n {
        let _ = writeln!(s, "  example.com/l{i}: v{i}");
    }
    s
}

fn yaml_aliases(n: usize) -> String {
    // Anchored values repeated by aliases, within the budgets.
    let mut s = "name: demo\nimage: ghcr.io/acme/train:1.4\nscript: /app/train.py\nvars: {v: &v abcdefghij}\nargs:\n".to_owned();
    for _ in 0..n {
        s += "- *v\n";
    }
    s
}

fn items(n: usize) -> String {
    let mut s = RL.to_owned() + "items:\n";
    for i in 0..n {
        let _ = write!(
            s,
            "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: c{i}, labels: {{a: b}}}}\n  data: {{k: '0{i}', n: {i}}}\n"
        );
    }
    s + FC
}

fn manifests(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: c{i}}}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {{requests: {{storage: 1Gi}}}}\n"
            )
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

fn pytorchjob(n: usize) -> String {
    let mut mounts = String::new();
    let mut volumes = String::new();
    for i in 0..n {
        let _ = writeln!(mounts, "            - {{name: v{i}, mountPath: /m/v{i}}}");
        let _ = writeln!(volumes, "          - {{name: v{i}, emptyDir: {{}}}}");
    }
    format!(
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {{name: demo}}\nspec:\n  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n      template:\n        spec:\n          containers:\n          - name: pytorch\n            image: ghcr.io/acme/train:1.4\n            command: [python, /app/train.py]\n            volumeMounts:\n{mounts}          volumes:\n{volumes}"
    )
}

fn problems_json(n: usize) -> String {
    let mut s = GOOD.to_owned() + "[labels]\n";
    for i in 0..n {
        let _ = writeln!(s, "\"bad key {i}\" = \"v\"");
    }
    s
}

/// Ten problems after `n` lines: rendering finds their lines and columns.
fn long_file(n: usize) -> String {
    let mut s = GOOD.to_owned();
    for i in 0..n {
        let _ = writeln!(s, "# line {i} of a long comment, with é and 日本 in it");
    }
    s.push_str("[labels]\n");
    for i in 0..10 {
        let _ = writeln!(s, "\"bad key {i}\" = \"v\"");
    }
    s
}

/// `n` PyTorchJobs, each beside a Service that selects its pods, in one
/// namespace.
fn namespace(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {{name: job{i}, namespace: team}}\nspec:\n  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n      template:\n        spec:\n          containers: [{{name: pytorch, image: 'ghcr.io/acme/gpt:3.0', command: [torchrun, /app/train.py]}}]\n    Worker:\n      replicas: 1\n      template:\n        spec:\n          containers: [{{name: pytorch, image: 'ghcr.io/acme/gpt:3.0', command: [torchrun, /app/train.py]}}]\n---\napiVersion: v1\nkind: Service\nmetadata: {{name: svc{i}, namespace: team}}\nspec: {{clusterIP: None, selector: {{training.kubeflow.org/job-name: job{i}}}}}\n"
            )
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

/// A `v1 List` of `n` ConfigMaps, and no job.
fn config_list(n: usize) -> String {
    let mut s = "apiVersion: v1\nkind: List\nitems:\n".to_owned();
    for i in 0..n {
        let _ = write!(
            s,
            "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: c{i}, namespace: team}}\n  data: {{key: value-{i}}}\n"
        );
    }
    s
}

/// A Widget whose keyed list (`x-kubernetes-list-type: map`) has `n` items.
fn keyed_list(n: usize) -> String {
    let mut s = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n  ports:\n"
        .to_owned();
    for i in 0..n {
        let _ = writeln!(s, "  - {{name: port-{i}, protocol: TCP, port: 1}}");
    }
    s
}

/// The CRD of [`keyed_list`]'s Widget (the same at every size).
fn widget_crd(_: usize) -> String {
    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n              ports:\n                type: array\n                x-kubernetes-list-type: map\n                x-kubernetes-list-map-keys: [name, protocol]\n                items:\n                  type: object\n                  required: [name]\n                  properties:\n                    name: {type: string}\n                    protocol: {type: string}\n                    port: {type: integer}\n".to_owned()
}

/// `n` PyTorchJobs of one namespace, each migrated against the runtimes file.
fn jobs(n: usize) -> String {
    namespace(n)
        .split("---\n")
        .filter(|d| d.contains("PyTorchJob"))
        .collect::<Vec<_>>()
        .join("---\n")
}

/// A runtimes file of `n` ClusterTrainingRuntimes and the one the jobs run
/// on: read once, it costs its size; read for every job, its size times
/// theirs.
fn runtimes(n: usize) -> String {
    (0..=n)
        .map(|i| {
            let name = if i == n {
                "torch-distributed".to_owned()
            } else {
                format!("team-{i}")
            };
            format!(
                "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {{name: {name}}}\nspec:\n  mlPolicy: {{torch: {{}}}}\n  template:\n    spec:\n      replicatedJobs:\n      - name: node\n        template:\n          metadata: {{labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}}}\n          spec:\n            template:\n              spec:\n                containers: [{{name: node, image: 'ghcr.io/acme/base:1'}}]\n"
            )
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

/// A spec whose every key has a comment above it and one after it.
fn commented_spec(n: usize) -> String {
    let mut s = format!("# the job\n{GOOD}[env]\n");
    for i in 0..n {
        let _ = writeln!(s, "# variable {i}\nV{i} = \"{i}\"  # after {i}");
    }
    s
}

/// Every shape measured, with the size n each starts from.
const SHAPES: &[Shape] = &[
    Shape {
        name: "convert: commented keys to a TrainSpec",
        args: &["convert", "FILE", "--to", "trainspec"],
        file: "s.toml",
        input: commented_spec,
        overlay: None,
        n: 2000,
    },
    Shape {
        name: "check: volumes",
        args: &["check", "FILE"],
        file: "s.toml",
        input: volumes_spec,
        overlay: None,
        n: 1500,
    },
    Shape {
        name: "build: volumes",
        args: &["build", "FILE"],
        file: "s.toml",
        input: volumes_spec,
        overlay: None,
        n: 1000,
    },
    Shape {
        name: "build --verify: claims",
        args: &["build", "--verify", "FILE"],
        file: "s.toml",
        input: claims_spec,
        overlay: None,
        n: 1000,
    },
    Shape {
        name: "build --verify: ports",
        args: &["build", "--verify", "FILE"],
        file: "s.toml",
        input: ports_spec,
        overlay: None,
        n: 1500,
    },
    Shape {
        name: "build --verify: env",
        args: &["build", "--verify", "FILE"],
        file: "s.toml",
        input: env_spec,
        overlay: None,
        n: 1500,
    },
    Shape {
        name: "describe: env",
        args: &["describe", "FILE"],
        file: "s.toml",
        input: env_spec,
        overlay: None,
        n: 1500,
    },
    Shape {
        name: "check: overlay merge and unset",
        args: &["check", "FILE", "-O", "OVERLAY"],
        file: "s.toml",
        input: vars_spec,
        overlay: Some(overlay),
        n: 2000,
    },
    Shape {
        name: "check: unknown keys",
        args: &["check", "--format", "json", "FILE"],
        file: "s.toml",
        input: unknown_keys,
        overlay: None,
        n: 150,
    },
    Shape {
        name: "check: problems rendered in a long file",
        args: &["check", "FILE"],
        file: "s.toml",
        input: long_file,
        overlay: None,
        n: 5000,
    },
    Shape {
        name: "check --format json: problems",
        args: &["check", "--format", "json", "FILE"],
        file: "s.toml",
        input: problems_json,
        overlay: None,
        n: 500,
    },
    Shape {
        name: "check: templates",
        args: &["check", "FILE"],
        file: "s.toml",
        input: templates,
        overlay: None,
        n: 300,
    },
    Shape {
        name: "check: YAML labels",
        args: &["check", "FILE"],
        file: "s.yaml",
        input: yaml_labels,
        overlay: None,
        n: 1500,
    },
    Shape {
        name: "check: YAML aliases",
        args: &["check", "FILE"],
        file: "s.yaml",
        input: yaml_aliases,
        overlay: None,
        n: 4000,
    },
    Shape {
        name: "fn: items",
        args: &["fn"],
        file: "-",
        input: items,
        overlay: None,
        n: 1000,
    },
    Shape {
        name: "verify: objects",
        args: &["verify", "FILE"],
        file: "m.yaml",
        input: manifests,
        overlay: None,
        n: 300,
    },
    Shape {
        name: "verify: a namespace of jobs and Services",
        args: &["verify", "FILE"],
        file: "m.yaml",
        input: namespace,
        overlay: None,
        n: 300,
    },
    Shape {
        name: "verify --crd: a keyed list",
        args: &["verify", "--crd", "OVERLAY", "FILE"],
        file: "m.yaml",
        input: keyed_list,
        overlay: Some(widget_crd),
        n: 3000,
    },
    Shape {
        name: "migrate: a List without a job",
        args: &["migrate", "FILE"],
        file: "m.yaml",
        input: config_list,
        overlay: None,
        n: 1500,
    },
    Shape {
        name: "migrate: a namespace of jobs and Services",
        args: &["migrate", "FILE"],
        file: "m.yaml",
        input: namespace,
        overlay: None,
        n: 150,
    },
    Shape {
        name: "migrate --runtimes: jobs and runtimes",
        args: &["migrate", "--runtimes", "OVERLAY", "FILE"],
        file: "m.yaml",
        input: jobs,
        overlay: Some(runtimes),
        n: 40,
    },
    Shape {
        name: "import: volumes",
        args: &["import", "FILE"],
        file: "m.yaml",
        input: pytorchjob,
        overlay: None,
        n: 1000,
    },
];

/// Instructions `trainc` executes on `shape` at size `n`.
fn instructions(dir: &Path, shape: &Shape, n: usize) -> u64 {
    let input = (shape.input)(n);
    let file = dir.join(if shape.file == "-" {
        "stdin"
    } else {
        shape.file
    });
    std::fs::write(&file, &input).expect("input");
    // The second file is YAML beside YAML (a CRD, a runtimes file), else
    // an overlay.
    let overlay = dir.join(
        if Path::new(shape.file)
            .extension()
            .is_some_and(|e| e == "yaml")
        {
            "o.yaml"
        } else {
            "o.toml"
        },
    );
    if let Some(make) = shape.overlay {
        std::fs::write(&overlay, make(n)).expect("overlay");
    }
    let args: Vec<String> = shape
        .args
        .iter()
        .map(|a| match *a {
            "FILE" => file.display().to_string(),
            "OVERLAY" => overlay.display().to_string(),
            other => other.to_owned(),
        })
        .collect();
    let output = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(crate::corpus::binary())
        .args(&args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(if shape.file == "-" {
            Stdio::from(std::fs::File::open(&file).expect("stdin"))
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .output()
        .expect("valgrind runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("panicked"),
        "{}: trainc panicked:\n{stderr}",
        shape.name
    );
    stderr
        .lines()
        .find_map(|l| {
            l.split_once("Collected : ")
                .map(|(_, n)| n.trim().to_owned())
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}: no instruction count in\n{stderr}", shape.name))
}

#[test]
#[ignore = "callgrind on every shape takes 1.5 min: .ci/run runs it in a stage of its own (cargo test --test integration -- --ignored)"]
fn doubling_any_input_at_most_about_doubles_the_work() {
    if !tool_available("valgrind", "--version", "the linearity check") {
        return;
    }
    // `TRAINC_LINEAR_ONLY=migrate` measures the shapes whose name holds
    // the word (while working on one stage); CI measures every one.
    // `TRAINC_CORPUS_BINARY` measures another build (to show which shapes
    // an earlier one fails).
    let only = std::env::var("TRAINC_LINEAR_ONLY").unwrap_or_default();
    let shapes: Vec<&Shape> = SHAPES.iter().filter(|s| s.name.contains(&only)).collect();
    // Two at a time: the machine has two cores, and callgrind is slow.
    let results: Vec<(String, u64, u64)> = std::thread::scope(|scope| {
        let chunks: Vec<Vec<&Shape>> = vec![
            shapes.iter().copied().step_by(2).collect(),
            shapes.iter().copied().skip(1).step_by(2).collect(),
        ];
        let handles: Vec<_> = chunks
            .into_iter()
            .enumerate()
            .map(|(c, chunk)| {
                scope.spawn(move || {
                    chunk
                        .into_iter()
                        .enumerate()
                        .map(|(i, shape)| {
                            let dir = temp_dir(&format!("linear-{c}-{i}"));
                            let small = instructions(&dir, shape, shape.n);
                            let large = instructions(&dir, shape, 2 * shape.n);
                            (shape.name.to_owned(), small, large)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a measuring thread"))
            .collect()
    });
    let mut report = String::new();
    let mut failures = Vec::new();
    for (name, small, large) in &results {
        #[allow(clippy::cast_precision_loss)] // counts far below 2^52
        let ratio = *large as f64 / *small as f64;
        let _ = writeln!(
            report,
            "{name}: {small} -> {large} instructions, x{ratio:.2}"
        );
        if ratio > MAX_RATIO {
            failures.push(format!("{name} is not linear"));
        }
        if ratio < MIN_RATIO {
            failures.push(format!("{name}: the input is too small to tell"));
        }
    }
    eprintln!("{report}");
    assert!(failures.is_empty(), "{}\n{report}", failures.join("\n"));
}
