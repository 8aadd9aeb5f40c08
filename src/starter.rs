//! The starter spec `trainc init` writes: every commonly used field with a
//! one-line comment, valid as written (the tests check it with `trainc check`
//! for each target, with and without GPUs).

use crate::spec::Target;

/// What the starter is for.
#[derive(Debug, Clone)]
pub struct Starter {
    /// The file it is written to, named in its header.
    pub file: String,
    pub name: String,
    pub target: Target,
    pub gpu: bool,
}

/// Trailing comments start in this column.
const COMMENT_COLUMN: usize = 40;

/// The starter spec as TOML.
pub fn render(starter: &Starter) -> String {
    let Starter {
        file,
        name,
        target,
        gpu,
    } = starter;
    let pytorchjob = *target == Target::Pytorchjob;
    let mut s = Lines(String::new());
    s.line("#:schema ./trainspec.schema.json");
    s.line("# Editor completion and docs: trainc schema > trainspec.schema.json");
    s.line(&format!("# Check it: trainc check {file}"));
    s.line(&format!(
        "# Run it:   trainc build {file} | kubectl apply -f -"
    ));
    s.line("");
    s.entry(
        &format!("name = \"{name}\""),
        "the job; object and pod names derive from it",
    );
    s.entry(
        "# namespace = \"ml\"",
        "default: the namespace kubectl or kustomize applies to",
    );
    if pytorchjob {
        s.entry(
            "target = \"pytorchjob\"",
            "Kubeflow Training Operator; or \"trainjob\" for Trainer v2",
        );
    } else {
        s.entry(
            "target = \"trainjob\"",
            "Kubeflow Trainer v2; or \"pytorchjob\" for the Training Operator",
        );
    }
    s.entry(
        "image = \"ghcr.io/acme/train:1.0\"",
        "your training image; pin a tag or digest",
    );
    s.entry(
        "script = \"/app/train.py\"",
        "runs torchrun /app/train.py ARGS; or module = \"acme.train\"",
    );
    s.line("args = [\"--epochs\", \"10\"]");
    s.entry(
        "replicas = 2",
        if pytorchjob {
            "pods (nodes); \"2:4\" makes an elastic job"
        } else {
            "pods (nodes)"
        },
    );
    if *gpu {
        s.entry("nProcPerNode = \"gpu\"", "one process per GPU");
    } else {
        s.entry(
            "nProcPerNode = 1",
            "one process per pod, using all its cores (OMP_NUM_THREADS)",
        );
    }
    pod(&mut s, starter);
    s.0
}

/// Resources, env and volumes of each pod.
fn pod(s: &mut Lines, starter: &Starter) {
    let gpu = &starter.gpu;
    s.line("");
    s.entry("[resources]", "per pod; requests = limits");
    s.line("cpu = \"4\"");
    s.line("memory = \"16Gi\"");
    if *gpu {
        s.entry("gpus = 1", "nvidia.com/gpu; set gpuResource for others");
        s.entry("shm = \"4Gi\"", "/dev/shm for NCCL and DataLoader workers");
    }
    s.line("");
    s.line("[env]");
    if *gpu {
        s.line("NCCL_DEBUG = \"WARN\"");
    } else {
        s.entry("OMP_NUM_THREADS = \"4\"", "match resources.cpu");
    }
    s.entry(
        "# HF_TOKEN = { secret = \"hf\", key = \"token\" }",
        "secrets from a Secret, never literal",
    );
    s.line("");
    s.entry("# [volumes.data]", "mounted in every pod");
    s.line("# mountPath = \"/data\"");
    s.entry(
        "# size = \"100Gi\"",
        "a new PVC; or claim = \"existing-pvc\", emptyDir = true",
    );
    placement(s, starter);
}

/// Where the pods run and what happens to the job.
fn placement(s: &mut Lines, starter: &Starter) {
    let (gpu, pytorchjob) = (&starter.gpu, starter.target == Target::Pytorchjob);
    s.line("");
    s.line("[scheduling]");
    s.entry("# queue = \"team-a\"", "Kueue LocalQueue");
    if *gpu {
        s.line("tolerations = [{ key = \"nvidia.com/gpu\", operator = \"Exists\", effect = \"NoSchedule\" }]");
    } else {
        s.line("# tolerations = [{ key = \"dedicated\", operator = \"Equal\", value = \"training\", effect = \"NoSchedule\" }]");
    }
    s.line("");
    s.line("[policy]");
    if pytorchjob {
        s.entry("backoffLimit = 3", "retries before the job fails");
        s.entry(
            "ttlAfterFinished = \"1d\"",
            "delete the finished job after a day",
        );
    }
    s.entry(
        "# activeDeadline = \"24h\"",
        "fail the job if it runs longer",
    );
    s.entry("# suspend = true", "create it suspended (Kueue admits it)");
    if !pytorchjob {
        s.line("");
        s.line("[trainjob]");
        s.entry(
            "runtime = \"torch-distributed\"",
            "the ClusterTrainingRuntime",
        );
        s.entry(
            "# apiLevel = \"v2.1\"",
            "for clusters on Trainer v2.1 (or \"v2.0\")",
        );
    }
}

struct Lines(String);

impl Lines {
    fn line(&mut self, text: &str) {
        self.0.push_str(text);
        self.0.push('\n');
    }

    /// `code`, then `# comment` aligned at [`COMMENT_COLUMN`].
    fn entry(&mut self, code: &str, comment: &str) {
        let pad = COMMENT_COLUMN
            .saturating_sub(code.chars().count() + 1)
            .max(1);
        self.line(&format!("{code}{}# {comment}", " ".repeat(pad)));
    }
}
