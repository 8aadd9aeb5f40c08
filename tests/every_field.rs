//! One spec with every field the real-jobs work added, built for every
//! target and Trainer API level: each field lands in the output of every
//! target that can express it, and every target that cannot rejects it with
//! an error located at that field whose help names the alternative.

use std::path::Path;

use serde_json::Value;

use crate::support::{temp_dir, text, trainc};

/// Where trainc can put a field: the targets, by the `[trainjob]` lines they add.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Target {
    PyTorchJob,
    TrainJob(&'static str),
    /// A TrainJob on the TrainingRuntime trainc writes (`writeRuntime`):
    /// every field a PyTorchJob takes lands.
    Written(&'static str),
    JobSet,
}

const TARGETS: [Target; 7] = [
    Target::PyTorchJob,
    Target::JobSet,
    Target::TrainJob("v2.2"),
    Target::TrainJob("v2.1"),
    Target::TrainJob("v2.0"),
    Target::Written("v2.3"),
    Target::Written("v2.0"),
];

impl Target {
    fn header(self) -> String {
        match self {
            Target::PyTorchJob => "target = \"pytorchjob\"\n".to_owned(),
            Target::JobSet => "target = \"jobset\"\n".to_owned(),
            Target::TrainJob(_) | Target::Written(_) => "target = \"trainjob\"\n".to_owned(),
        }
    }

    /// A TrainJob on the user's own runtime: one with initializer jobs
    /// ([`RUNTIMES`]).
    fn table(self) -> String {
        match self {
            Target::PyTorchJob | Target::JobSet => String::new(),
            Target::TrainJob(level) => format!(
                "[trainjob]\napiLevel = \"{level}\"\nruntime = \"llm-runtime\"\nruntimeKind = \"TrainingRuntime\"\nruntimesFile = \"runtimes.yaml\"\n\n"
            ),
            Target::Written(level) => format!(
                "[trainjob]\napiLevel = \"{level}\"\nruntime = \"llm-runtime\"\nruntimeKind = \"TrainingRuntime\"\nruntimesFile = \"runtimes.yaml\"\nwriteRuntime = true\n\n"
            ),
        }
    }
}

struct Field {
    name: &'static str,
    /// TOML lines: top-level keys, or one or more tables.
    toml: &'static str,
    top_level: bool,
    /// Text the built YAML must contain when the field lands.
    lands_as: &'static [&'static str],
    /// The targets that reject it, and a word of the help that names the alternative.
    rejected_by: &'static [(Target, &'static str)],
}

const TRAINJOBS: [Target; 3] = [
    Target::TrainJob("v2.2"),
    Target::TrainJob("v2.1"),
    Target::TrainJob("v2.0"),
];

const FIELDS: &[Field] = &[
    Field {
        name: "imagePullPolicy",
        toml: "imagePullPolicy = \"IfNotPresent\"\n",
        top_level: true,
        lands_as: &["imagePullPolicy: IfNotPresent"],
        rejected_by: &[
            (TRAINJOBS[0], "TrainingRuntime"),
            (TRAINJOBS[1], "TrainingRuntime"),
            (TRAINJOBS[2], "TrainingRuntime"),
        ],
    },
    Field {
        name: "envFrom",
        toml: "envFrom = [{ configMap = \"nccl-ib\" }, { secret = \"wandb\", prefix = \"WANDB_\" }]\n",
        top_level: true,
        lands_as: &["name: nccl-ib", "prefix: WANDB_"],
        rejected_by: &[
            (TRAINJOBS[0], "[env]"),
            (TRAINJOBS[1], "[env]"),
            (TRAINJOBS[2], "[env]"),
        ],
    },
    Field {
        name: "hostNetwork",
        toml: "hostNetwork = true\n",
        top_level: true,
        lands_as: &["hostNetwork: true"],
        rejected_by: &[
            (TRAINJOBS[0], "target = \"pytorchjob\""),
            (TRAINJOBS[1], "target = \"pytorchjob\""),
            (TRAINJOBS[2], "target = \"pytorchjob\""),
        ],
    },
    Field {
        name: "dnsPolicy",
        toml: "dnsPolicy = \"ClusterFirstWithHostNet\"\n",
        top_level: true,
        lands_as: &["dnsPolicy: ClusterFirstWithHostNet"],
        rejected_by: &[
            (TRAINJOBS[0], "target = \"pytorchjob\""),
            (TRAINJOBS[1], "target = \"pytorchjob\""),
            (TRAINJOBS[2], "target = \"pytorchjob\""),
        ],
    },
    Field {
        name: "resources.extended",
        toml: "[resources]\ncpu = 16\nmemory = \"64Gi\"\ngpus = 2\nextended = { \"rdma/rdma_shared_device_a\" = 1, \"vpc.amazonaws.com/efa\" = 4 }\n",
        top_level: false,
        lands_as: &[
            "rdma/rdma_shared_device_a: \"1\"",
            "vpc.amazonaws.com/efa: \"4\"",
        ],
        rejected_by: &[],
    },
    Field {
        name: "securityContext",
        toml: "[securityContext]\ncapabilities = [\"IPC_LOCK\", \"SYS_PTRACE\"]\nprivileged = false\nrunAsUser = 1000\nrunAsGroup = 1001\nrunAsNonRoot = true\nallowPrivilegeEscalation = false\nreadOnlyRootFilesystem = true\nfsGroup = 2000\n",
        top_level: false,
        lands_as: &[
            "- IPC_LOCK",
            "- SYS_PTRACE",
            "privileged: false",
            "runAsUser: 1000",
            "runAsGroup: 1001",
            "runAsNonRoot: true",
            "allowPrivilegeEscalation: false",
            "readOnlyRootFilesystem: true",
            "fsGroup: 2000",
            "mountPath: /tmp",
        ],
        rejected_by: &[
            (TRAINJOBS[1], "apiLevel = \"v2.2\""),
            (TRAINJOBS[2], "apiLevel = \"v2.2\""),
        ],
    },
    Field {
        name: "podTemplate.spec.initContainers",
        toml: "[[podTemplate.spec.initContainers]]\nname = \"fabric-check\"\nimage = \"busybox:1.36\"\ncommand = [\"sh\", \"-c\", \"test -e /dev/infiniband\"]\n",
        top_level: false,
        lands_as: &["name: fabric-check", "test -e /dev/infiniband"],
        rejected_by: &[
            (TRAINJOBS[0], "TrainingRuntime"),
            (TRAINJOBS[1], "TrainingRuntime"),
            (TRAINJOBS[2], "TrainingRuntime"),
        ],
    },
    Field {
        name: "podTemplate.spec.containers (a sidecar)",
        toml: "[[podTemplate.spec.containers]]\nname = \"log-shipper\"\nimage = \"fluent/fluent-bit:3.1\"\n",
        top_level: false,
        lands_as: &["name: log-shipper", "image: fluent/fluent-bit:3.1"],
        rejected_by: &[
            (TRAINJOBS[0], "TrainingRuntime"),
            (TRAINJOBS[1], "TrainingRuntime"),
            (TRAINJOBS[2], "TrainingRuntime"),
        ],
    },
    Field {
        name: "podTemplate.metadata",
        toml: "[podTemplate.metadata.annotations]\n\"example.com/cost-center\" = \"nlp\"\n",
        top_level: false,
        lands_as: &["example.com/cost-center: nlp"],
        rejected_by: &[(TRAINJOBS[2], "TrainingRuntime")],
    },
    Field {
        name: "code",
        toml: "[code]\nfiles = [\"train.py\", \"utils.py\"]\nfunction = \"train.py:train\"\npackages = [\"torchvision==0.19.1\"]\npipIndexUrl = \"https://download.pytorch.org/whl/cu121\"\n",
        top_level: false,
        lands_as: &[
            "kind: ConfigMap",
            "runpy.run_path(\"/trainc/code/train.py\")[\"train\"]()",
            "'torchvision==0.19.1'",
            "https://download.pytorch.org/whl/cu121",
            "mountPath: /trainc/code",
        ],
        rejected_by: &[],
    },
    Field {
        name: "trainjob.initializer.dataset",
        toml: "[trainjob.initializer.dataset]\nstorageUri = \"hf://tatsu-lab/alpaca\"\nenv = { HF_HUB_ENABLE_HF_TRANSFER = \"1\" }\n",
        top_level: false,
        lands_as: &[
            "storageUri: hf://tatsu-lab/alpaca",
            "HF_HUB_ENABLE_HF_TRANSFER",
        ],
        rejected_by: &[
            (Target::PyTorchJob, "initContainers"),
            (Target::JobSet, "initContainers"),
        ],
    },
    Field {
        name: "trainjob.initializer.model",
        toml: "[trainjob.initializer.model]\nstorageUri = \"hf://meta-llama/Llama-3.2-1B-Instruct\"\nsecret = \"hf-token\"\n",
        top_level: false,
        lands_as: &[
            "storageUri: hf://meta-llama/Llama-3.2-1B-Instruct",
            "name: hf-token",
        ],
        rejected_by: &[
            (Target::PyTorchJob, "initContainers"),
            (Target::JobSet, "initContainers"),
        ],
    },
];

impl Field {
    fn help_when_rejected_by(&self, target: Target) -> Option<&'static str> {
        self.rejected_by
            .iter()
            .find(|(t, _)| *t == target)
            .map(|(_, help)| *help)
    }
}

/// A spec with `fields`, and the 1-based line range each field occupies.
fn spec(target: Target, fields: &[&Field]) -> (String, Vec<(usize, usize)>) {
    let mut text = format!(
        // The sidecar below is a container that runs beside training:
        // acknowledged, as a spec whose sidecar exits by itself would.
        "name = \"every-field\"\n{}image = \"pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime\"\nreplicas = 2\nallowWarnings = [\"trainc::pod_template::sidecar\"]\n",
        target.header()
    );
    if !fields.iter().any(|f| f.name == "code") {
        text.push_str("script = \"train.py\"\n");
    }
    let mut ranges = vec![(0, 0); fields.len()];
    let mut place = |text: &mut String, i: usize| {
        let first = text.lines().count() + 1;
        text.push_str(fields[i].toml);
        ranges[i] = (first, text.lines().count());
    };
    for (i, _) in fields.iter().enumerate().filter(|(_, f)| f.top_level) {
        place(&mut text, i);
    }
    text.push('\n');
    text.push_str(&target.table());
    for (i, _) in fields.iter().enumerate().filter(|(_, f)| !f.top_level) {
        place(&mut text, i);
        text.push('\n');
    }
    (text, ranges)
}

fn project(name: &str, spec: &str) -> std::path::PathBuf {
    let dir = temp_dir(name);
    std::fs::write(dir.join("spec.toml"), spec).unwrap();
    std::fs::write(
        dir.join("train.py"),
        "import utils\n\ndef train():\n    utils.run()\n",
    )
    .unwrap();
    std::fs::write(dir.join("utils.py"), "def run():\n    print('training')\n").unwrap();
    std::fs::write(dir.join("runtimes.yaml"), RUNTIMES).unwrap();
    dir
}

/// The user's own runtime: Kubeflow's initializers (with the `initializer`
/// mount v2.3 requires), a `node` trainer with the image, and the init
/// container and sidecar the spec patches.
const RUNTIMES: &str = r"apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: llm-runtime
spec:
  mlPolicy:
    numNodes: 1
    torch: {}
  template:
    spec:
      replicatedJobs:
      - name: dataset-initializer
        template:
          spec:
            template:
              spec:
                containers:
                - name: dataset-initializer
                  image: ghcr.io/kubeflow/trainer/dataset-initializer:v2.2.0
                  volumeMounts:
                  - name: initializer
                    mountPath: /workspace
      - name: model-initializer
        template:
          spec:
            template:
              spec:
                containers:
                - name: model-initializer
                  image: ghcr.io/kubeflow/trainer/model-initializer:v2.2.0
                  volumeMounts:
                  - name: initializer
                    mountPath: /workspace
      - name: node
        template:
          metadata:
            labels:
              trainer.kubeflow.org/trainjob-ancestor-step: trainer
          spec:
            template:
              spec:
                initContainers:
                - name: fabric-check
                  image: busybox:1.36
                containers:
                - name: node
                  image: ghcr.io/acme/train:1.4
                - name: log-shipper
                  image: fluent/fluent-bit:3.1
";

/// The errors `trainc check --format json` reports: (line, code, help).
fn errors(dir: &Path) -> Vec<(usize, String, String)> {
    let output = trainc(dir, &["check", "--format", "json", "spec.toml"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    text(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("one JSON diagnostic per line"))
        .filter(|d| d["severity"] == "error")
        .map(|d| {
            (
                usize::try_from(d["line"].as_u64().unwrap()).unwrap(),
                d["code"].as_str().unwrap().to_owned(),
                d["help"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn label(target: Target) -> String {
    match target {
        Target::PyTorchJob => "pytorchjob".to_owned(),
        Target::JobSet => "jobset".to_owned(),
        Target::TrainJob(level) => format!("trainjob-{level}"),
        Target::Written(level) => format!("trainjob-written-{level}"),
    }
}

#[test]
fn every_field_lands_on_each_target_that_can_express_it() {
    for target in TARGETS {
        let fields: Vec<&Field> = FIELDS
            .iter()
            .filter(|f| f.help_when_rejected_by(target).is_none())
            .collect();
        let (text_spec, _) = spec(target, &fields);
        let dir = project(&format!("every-field-lands-{}", label(target)), &text_spec);
        let output = trainc(&dir, &["build", "--verify", "spec.toml"]);
        let stderr = text(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{target:?}:\n{text_spec}\n{stderr}"
        );
        assert!(
            stderr.is_empty(),
            "{target:?}: warnings for a clean spec:\n{stderr}"
        );
        let yaml = text(&output.stdout);
        for field in &fields {
            for marker in field.lands_as {
                assert!(
                    yaml.contains(marker),
                    "{target:?}: `{}` did not land (`{marker}` missing):\n{yaml}",
                    field.name
                );
            }
        }
    }
}

#[test]
fn every_field_a_target_cannot_express_is_rejected_at_the_field_with_the_alternative() {
    let all: Vec<&Field> = FIELDS.iter().collect();
    for target in TARGETS {
        let (text_spec, ranges) = spec(target, &all);
        let dir = project(
            &format!("every-field-rejected-{}", label(target)),
            &text_spec,
        );
        let build = trainc(&dir, &["build", "spec.toml"]);
        if all
            .iter()
            .all(|f| f.help_when_rejected_by(target).is_none())
        {
            // Nothing to reject (a runtime trainc writes takes every field).
            assert_eq!(
                build.status.code(),
                Some(0),
                "{target:?}: {}",
                text(&build.stderr)
            );
            continue;
        }
        assert_eq!(build.status.code(), Some(1), "{target:?}");
        assert!(build.stdout.is_empty(), "{target:?}: partial output");
        let errors = errors(&dir);
        let field_at = |line: usize| ranges.iter().position(|(a, b)| (*a..=*b).contains(&line));
        for (line, code, _) in &errors {
            let field = field_at(*line).map(|i| FIELDS[i].name);
            assert!(
                field.is_some_and(|_| FIELDS[field_at(*line).unwrap()]
                    .help_when_rejected_by(target)
                    .is_some()),
                "{target:?}: error {code} at line {line} ({field:?}), not at a field this target rejects:\n{text_spec}"
            );
        }
        for (i, field) in FIELDS.iter().enumerate() {
            let Some(alternative) = field.help_when_rejected_by(target) else {
                continue;
            };
            let (first, last) = ranges[i];
            let at_field: Vec<_> = errors
                .iter()
                .filter(|(line, ..)| (first..=last).contains(line))
                .collect();
            assert!(
                !at_field.is_empty(),
                "{target:?}: `{}` (lines {first}-{last}) was not rejected:\n{text_spec}\n{errors:?}",
                field.name
            );
            for (line, code, help) in at_field {
                assert!(
                    help.contains(alternative),
                    "{target:?}: `{}` rejected at line {line} ({code}) without naming `{alternative}`: {help}",
                    field.name
                );
            }
        }
    }
}
