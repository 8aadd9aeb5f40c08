//! The command line, as clap types only: no logic lives here.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

mod values;
use trainc::verify::kubernetes::Release as KubernetesRelease;
use values::kubernetes_release;
pub(crate) use values::*;

/// Compile a compact training spec into the Kubernetes objects that run distributed PyTorch.
#[derive(Debug, Parser)]
#[command(name = "trainc", version, long_version = LONG_VERSION, about, propagate_version = true)]
pub(crate) struct Cli {
    /// When to colour diagnostics: `auto` colours a terminal unless `NO_COLOR`
    /// is set; `always` colours even a pipe.
    #[arg(long, value_enum, global = true, default_value_t = ColorArg::Auto, value_name = "WHEN")]
    pub(crate) color: ColorArg,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// `trainc --version`: the release, then the operator APIs its output is made for.
pub(crate) const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\n",
    "targets:\n",
    "  pytorchjob  kubeflow.org/v1 PyTorchJob: Kubeflow Training Operator v1.7 to v1.9\n",
    "  trainjob    trainer.kubeflow.org/v1alpha1 TrainJob: Kubeflow Trainer v2.0, v2.1, v2.2, v2.3\n",
    "              (--api-level; strict schemas of Trainer v2.0.0, v2.1.0, v2.3.0)\n",
    "  jobset      jobset.x-k8s.io/v1alpha2 JobSet: JobSet v0.8 to v0.12\n",
    "  job         batch/v1 Job (Indexed) and a headless Service: Kubernetes 1.28+\n",
    "  alongside   v1 Service, PersistentVolumeClaim, ConfigMap: Kubernetes 1.28+\n",
    "queues:       Kueue labels, Volcano and scheduler-plugins gang scheduling",
);

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorArg {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Validate specs and print every problem with its `file:line:col`.
    ///
    /// Exit status: 0 when no spec has an error (warnings allowed), 1 when any
    /// spec is invalid, 2 on a usage error or an unreadable file.
    Check(CheckArgs),
    /// Compile a spec into Kubernetes objects, printed as YAML in apply order.
    ///
    /// Exit status: 0 when the objects were written, 1 when the spec is
    /// invalid (nothing is written), 2 on a usage or I/O error.
    Build(BuildArgs),
    /// Check Kubernetes manifests (any multi-document YAML, hand-written or
    /// generated) against strict schemas and the operators' webhook rules.
    ///
    /// Checks every built-in kind of Kubernetes (1.36, or the
    /// `--kubernetes-version` given) and Kubeflow's PyTorchJob, TrainJob,
    /// TrainingRuntime and ClusterTrainingRuntime, with values read as
    /// kubectl reads them (YAML 1.1); other kinds are counted
    /// as not checked (`--require-schemas` fails them). Exit status: 0 when
    /// every object checked is valid, 1 when any is not, 2 on a usage error
    /// or an unreadable file.
    Verify(VerifyArgs),
    /// Turn PyTorchJobs and TrainJobs (with their claims and Services) into specs.
    ///
    /// Reads multi-document YAML (`-` for stdin) and writes the shortest spec
    /// that builds the same run for each job: one on stdout, several into
    /// `--output-dir`. Every field the spec does not carry is a warning at its
    /// line. Exit status: 0 when every job was imported (warnings allowed
    /// unless `--strict`), 1 when one could not be (nothing is written), 2 on
    /// a usage or I/O error.
    Import(ImportArgs),
    /// Turn PyTorchJobs into TrainJobs, the objects beside them kept, every behaviour change said.
    ///
    /// Reads manifests (files, directories, `-`) and writes the same
    /// objects in the same order, each PyTorchJob replaced by a TrainJob (and
    /// the TrainingRuntime it needs, when its patches cannot carry the job);
    /// the rest passes through byte for byte. Every change in how the job
    /// runs is a warning at its line (`trainc::migrate::*`). Exit status: 0
    /// when every PyTorchJob migrated (warnings allowed), 1 when one could
    /// not be (nothing is written unless `--keep-going`), 2 on a usage or
    /// I/O error.
    Migrate(MigrateArgs),
    /// Say what a spec will do on the cluster: nodes, processes, resources,
    /// volumes, env, scheduling, warnings, and the kubectl commands to run it.
    Describe(DescribeArgs),
    /// Run the job here as the cluster would: build the objects, make the
    /// pods the job's controller makes (env, hostnames, DNS names, volumes)
    /// and start each as local processes, a local Python standing in for the
    /// image.
    ///
    /// Exit status: 0 when the job succeeded by its controller's rule, 1
    /// when the spec or objects are invalid, 2 on a usage or I/O error, 3 when
    /// the job failed, 130 when interrupted.
    Run(RunArgs),
    /// Write a starter spec that passes `trainc check` as written.
    Init(InitArgs),
    /// Turn a spec or an overlay into another form (TOML, bare YAML, the KRM
    /// `TrainSpec` kustomize reads), its comments kept.
    ///
    /// Writes to standard output. An overlay (`--as-overlay`) becomes a
    /// TrainSpec patch for a kustomization's `patches`, its `unset` entries
    /// `null`s, and back. The text written is read back and must be the same
    /// document; the document is not checked (`trainc check` does that).
    /// Exit status: 0 when it was converted (warnings allowed), 1 when it
    /// cannot be (nothing is written), 2 on a usage or I/O error.
    Convert(ConvertArgs),
    /// Run as a KRM function: a ResourceList on stdin, a ResourceList on stdout.
    ///
    /// The TrainSpec is the ResourceList's functionConfig; the generated
    /// objects are added after the input items. Run with no arguments and a
    /// ResourceList on stdin, trainc does the same.
    Fn,
    /// Manage the kustomize exec plugin.
    #[command(subcommand)]
    Plugin(PluginCommand),
    /// Print a shell completion script: `trainc completions bash > FILE`.
    Completions {
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the manual page (roff), for `man -l -`; with `--dir`, write a page per command there.
    Man {
        /// Write `trainc.1` and a page per command (`trainc-build.1`, ...) into this directory, made as needed: `~/.cargo/share/man/man1` beside a `cargo install`ed trainc, where `man` looks.
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
    /// Print the JSON Schema of the spec (for editors and CI).
    Schema {
        /// The schema of an overlay instead: nothing required, plus `unset`.
        #[arg(long)]
        overlay: bool,
        /// The KRM form (`kind: TrainSpec`, for kustomize and kpt); with
        /// `--overlay`, a partial TrainSpec such as a kustomize patch.
        #[arg(long)]
        krm: bool,
    },
}

#[derive(Debug, clap::Args)]
pub(crate) struct CheckArgs {
    /// Spec files (TOML or YAML); `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    pub(crate) files: Vec<PathBuf>,
    /// How to print diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub(crate) format: Format,
    /// The files are overlays: check each on its own (keys, value types,
    /// `unset` paths). To check an overlay with the spec it modifies, use
    /// `trainc check SPEC -O OVERLAY`.
    #[arg(long, conflicts_with_all = ["overlays", "sets", "target", "api_level", "verify"])]
    pub(crate) as_overlay: bool,
    #[command(flatten)]
    pub(crate) compose: ComposeArgs,
    #[command(flatten)]
    pub(crate) generate: GenerateArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct DescribeArgs {
    /// The spec (TOML or YAML); `-` reads standard input.
    #[arg(value_name = "SPEC")]
    pub(crate) spec: PathBuf,
    /// Also every pod the operator will create: its name, DNS name, role,
    /// ranks and the distributed environment it will see.
    #[arg(long)]
    pub(crate) pods: bool,
    /// How to print: `text` for a person, or `json`, the pods alone as a
    /// `v1 List` of `Pod` objects as the controllers will make them (as
    /// with `--pods`, which it implies).
    #[arg(long, value_enum, default_value_t = DescribeFormat::Text)]
    pub(crate) format: DescribeFormat,
    #[command(flatten)]
    pub(crate) compose: ComposeArgs,
    #[command(flatten)]
    pub(crate) generate: GenerateArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The spec (TOML or YAML); with `--manifests`, built objects instead.
    #[arg(value_name = "SPEC")]
    pub(crate) spec: PathBuf,
    /// SPEC is a manifest (what `trainc build` wrote, edited or not): run
    /// its objects as they are.
    #[arg(long, conflicts_with_all = ["overlays", "sets", "code_root", "target"])]
    pub(crate) manifests: bool,
    /// The Python that stands in for the image: its directory comes first on
    /// the containers' PATH, so `python` and `torchrun` are its
    /// (default: `python3` on PATH).
    #[arg(long, value_name = "PATH")]
    pub(crate) python: Option<PathBuf>,
    /// Give a path of the image from a local directory: `--map /app=./src`.
    #[arg(long = "map", value_name = "IMAGE_PATH=DIR", value_parser = name_and_path)]
    pub(crate) maps: Vec<(String, PathBuf)>,
    /// A claim that holds data in the cluster, from a local directory.
    #[arg(long = "claim", value_name = "NAME=DIR", value_parser = name_and_path)]
    pub(crate) claims: Vec<(String, PathBuf)>,
    /// A ConfigMap that lives only in the cluster: a directory (a file per
    /// key) or a file of KEY=VALUE lines.
    #[arg(long = "configmap", value_name = "NAME=PATH", value_parser = name_and_path)]
    pub(crate) configmaps: Vec<(String, PathBuf)>,
    /// A Secret, as `--configmap` gives a ConfigMap.
    #[arg(long = "secret", value_name = "NAME=PATH", value_parser = name_and_path)]
    pub(crate) secrets: Vec<(String, PathBuf)>,
    /// What the image's entrypoint is, for a container without a `command`
    /// (a spec with `imageEntrypoint = true`): its words, separated by
    /// spaces, e.g. `--entrypoint "python3 /app/train.py"`; the container's
    /// args follow them.
    #[arg(long, value_name = "WORDS")]
    pub(crate) entrypoint: Option<String>,
    /// Stop the job after this long (`90s`, `10m`), besides its own deadline.
    #[arg(long, value_name = "DURATION")]
    pub(crate) timeout: Option<String>,
    /// Run containers as plain processes even where user namespaces are
    /// available: mount paths and pod names are rewritten to local
    /// directories and 127.0.0.1.
    #[arg(long)]
    pub(crate) no_namespaces: bool,
    #[command(flatten)]
    pub(crate) compose: ComposeArgs,
    #[command(flatten)]
    pub(crate) generate: GenerateArgs,
}

/// `NAME=PATH`.
fn name_and_path(text: &str) -> Result<(String, PathBuf), String> {
    match text.split_once('=') {
        Some((name, path)) if !name.is_empty() && !path.is_empty() => {
            Ok((name.to_owned(), PathBuf::from(path)))
        }
        _ => Err(format!("`{text}` is not NAME=PATH")),
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct ImportArgs {
    /// Manifest files (YAML or JSON, `---`-separated documents, `v1 List`s), or directories
    /// to search for `.yaml`, `.yml` and `.json` files; `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    pub(crate) files: Vec<PathBuf>,
    /// Write one spec per job into this directory, named after the job
    /// (`<name>.toml`); needed when the input holds more than one job.
    #[arg(long, value_name = "DIR")]
    pub(crate) output_dir: Option<PathBuf>,
    /// With `--output-dir`: replace specs already there.
    #[arg(long, requires = "output_dir")]
    pub(crate) force: bool,
    /// How to write the specs: TOML, the bare spec as YAML, or the KRM
    /// `TrainSpec` for kustomize and kpt.
    #[arg(long, value_enum, default_value_t = ImportFormat::Toml)]
    pub(crate) format: ImportFormat,
    /// Treat every warning (a field the spec does not carry) as an error.
    #[arg(long)]
    pub(crate) strict: bool,
    /// The Kubeflow Trainer release the TrainJobs were written for (default:
    /// v2.0 or v2.1 by their patch field, else v2.3).
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub(crate) api_level: Option<ApiLevelArg>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct MigrateArgs {
    /// Manifest files (YAML or JSON, `---`-separated documents, `v1 List`s), or directories
    /// to search for `.yaml`, `.yml` and `.json` files; `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    pub(crate) files: Vec<PathBuf>,
    /// The Kubeflow Trainer release of the cluster: the TrainJob's patch form (default: v2.3, the newest this trainc knows).
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub(crate) api_level: Option<ApiLevelArg>,
    /// The runtime every TrainJob names (default: `torch-distributed`).
    #[arg(long, value_name = "NAME")]
    pub(crate) runtime: Option<String>,
    /// The cluster's runtimes (`kubectl get clustertrainingruntimes,trainingruntimes -A -o yaml`),
    /// for a runtime Trainer does not ship.
    #[arg(long, value_name = "FILE")]
    pub(crate) runtimes: Option<PathBuf>,
    /// The scheduler that gangs a job's pods (the Training Operator's `--gang-scheduler-name`:
    /// `volcano`, or a scheduler-plugins scheduler), for gang-scheduled PyTorchJobs that name none.
    #[arg(long, value_name = "NAME")]
    pub(crate) gang_scheduler: Option<String>,
    /// The cluster's Training Operator release, whose pods the TrainJob's are compared
    /// with (default: v1.9).
    #[arg(long, value_enum, value_name = "RELEASE")]
    pub(crate) training_operator: Option<TrainingOperatorArg>,
    /// Write into this directory, each input file under its own name
    /// (with `--spec`, one `<name>.toml` per job) instead of to standard output.
    #[arg(long, value_name = "DIR")]
    pub(crate) output_dir: Option<PathBuf>,
    /// With `--output-dir`: replace files already there.
    #[arg(long, requires = "output_dir")]
    pub(crate) force: bool,
    /// Write each job's spec (`target = "trainjob"`) instead of manifests.
    #[arg(long)]
    pub(crate) spec: bool,
    /// Write what migrated even when a PyTorchJob could not be (it is kept as it was); exit 1.
    #[arg(long)]
    pub(crate) keep_going: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ImportFormat {
    Toml,
    Yaml,
    Krm,
}

#[derive(Debug, clap::Args)]
pub(crate) struct VerifyArgs {
    /// Manifest files (YAML or JSON, `---`-separated documents, `v1 List`s), or directories
    /// to search for `.yaml`, `.yml` and `.json` files; `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    pub(crate) files: Vec<PathBuf>,
    /// How to print diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub(crate) format: Format,
    /// The Kubeflow Trainer release of the cluster, for TrainJobs (default: v2.3, the newest this trainc knows).
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub(crate) api_level: Option<ApiLevelArg>,
    /// The cluster's runtimes (`kubectl get clustertrainingruntimes,trainingruntimes -A -o yaml`):
    /// a TrainJob whose runtime the files do not hold is checked against these.
    #[arg(long, value_name = "FILE")]
    pub(crate) runtimes: Option<PathBuf>,
    /// The cluster's Training Operator release, for PyTorchJobs (default: v1.9).
    #[arg(long, value_enum, value_name = "RELEASE")]
    pub(crate) training_operator: Option<TrainingOperatorArg>,
    /// The cluster's JobSet release, for JobSets (default: v0.12): a field a
    /// release lacks is an error.
    #[arg(long, value_enum, value_name = "RELEASE")]
    pub(crate) jobset: Option<JobSetArg>,
    /// The cluster's Kubernetes release, for its built-in kinds (default: 1.36):
    /// a field the release lacks is an error, a kind it does not serve a warning.
    #[arg(long, value_name = "RELEASE", value_parser = kubernetes_release())]
    pub(crate) kubernetes_version: Option<KubernetesRelease>,
    /// Fail on objects of kinds trainc has no schema for (custom resources
    /// other than Kubeflow's), instead of counting them as not checked.
    #[arg(long)]
    pub(crate) require_schemas: bool,
    /// CustomResourceDefinitions (a file, or a directory of them; repeatable), as
    /// `kubectl get crd NAME -o yaml` prints them: objects of their kinds are checked
    /// against each served version's schema and its CEL rules.
    #[arg(long = "crd", value_name = "PATH")]
    pub(crate) crds: Vec<PathBuf>,
}

/// What to generate for, for `build` and `check` (which checks what `build` builds).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct GenerateArgs {
    /// Generate for this target instead of the spec's `target`.
    #[arg(long, value_enum)]
    pub(crate) target: Option<TargetArg>,
    /// For a TrainJob: the Trainer API of the cluster, instead of `[trainjob] apiLevel`.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub(crate) api_level: Option<ApiLevelArg>,
    /// The namespace of every object, instead of the spec's `namespace` (as kubectl's `-n`).
    #[arg(short = 'n', long, value_name = "NAMESPACE")]
    pub(crate) namespace: Option<String>,
    /// Check the objects against the operators' strict schemas and webhook rules.
    #[arg(long)]
    pub(crate) verify: bool,
}

/// What goes on top of a spec, for `build` and `check`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ComposeArgs {
    /// An overlay (a partial spec, TOML or YAML) merged over the spec; repeat to apply several in order.
    #[arg(short = 'O', long = "overlay", value_name = "FILE")]
    pub(crate) overlays: Vec<PathBuf>,
    /// A template variable, over the spec's `[vars]` (`tag=2.3.2` or `vars.tag=2.3.2`); repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
    pub(crate) sets: Vec<(String, String)>,
    /// Where `[code]` files may be read from (default: the spec's directory).
    /// A file outside it, or a link leading out of it, is an error.
    #[arg(long, value_name = "DIR")]
    pub(crate) code_root: Option<PathBuf>,
    /// For a TrainJob: the cluster's runtimes, as `kubectl get
    /// clustertrainingruntimes,trainingruntimes -A -o yaml` prints them
    /// (instead of `[trainjob] runtimesFile`). The TrainJob is checked against
    /// the runtime it names.
    #[arg(long, value_name = "FILE")]
    pub(crate) runtimes: Option<PathBuf>,
}

/// `NAME=VALUE`, NAME a `[vars]` key as written in the spec or as a template reads it (`vars.NAME`).
fn parse_set(text: &str) -> Result<(String, String), String> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!(
            "`--set` takes NAME=VALUE, as in `--set tag=2.3.2`; `{text}` has no `=`"
        ));
    };
    // `vars.tag`, as the template reads it (`{{ vars.tag }}`), is `tag`.
    let name = name.strip_prefix("vars.").unwrap_or(name);
    if name.contains('.') {
        return Err(format!(
            "`--set` sets a `[vars]` value (read as `{{{{ vars.NAME }}}}` in the spec), not a spec field such as `{name}`; \
             to change a field, lay an overlay over the spec with `-O FILE`"
        ));
    }
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "`--set` takes NAME=VALUE with a `[vars]` name of letters, digits, `_` and `-`; found `{name}`"
        ));
    }
    Ok((name.to_owned(), value.to_owned()))
}

#[derive(Debug, clap::Args)]
pub(crate) struct BuildArgs {
    /// The spec (TOML or YAML); `-` reads standard input.
    #[arg(value_name = "SPEC")]
    pub(crate) spec: PathBuf,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = OutputFormat::Yaml)]
    pub(crate) output: OutputFormat,
    /// Write one file per object into DIR (created if missing) instead of
    /// stdout, replacing the files an earlier build of this job wrote there.
    #[arg(long, value_name = "DIR")]
    pub(crate) output_dir: Option<PathBuf>,
    /// With --output-dir: write even when DIR holds manifests trainc did not
    /// write (they are left as they are).
    #[arg(long, requires = "output_dir")]
    pub(crate) force: bool,
    #[command(flatten)]
    pub(crate) compose: ComposeArgs,
    #[command(flatten)]
    pub(crate) generate: GenerateArgs,
}

#[derive(Debug, Subcommand)]
pub(crate) enum PluginCommand {
    /// Link trainc as kustomize's exec plugin for `kind: TrainSpec`.
    Install {
        /// The kustomize plugin root. Default: $XDG_CONFIG_HOME/kustomize/plugin.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Link a build in cargo's target directory anyway (when working on
        /// trainc itself); the link breaks on `cargo clean`.
        #[arg(long)]
        dev: bool,
    },
    /// Print the kustomize transformer configuration for the kinds trainc
    /// generates: list it under `configurations:` so that `namePrefix`,
    /// `nameSuffix`, hash-suffixed generators, labels and `images` reach inside
    /// PyTorchJobs and TrainJobs.
    Config,
}

#[derive(Debug, clap::Args)]
pub(crate) struct InitArgs {
    /// Where to write it: `.toml`, or `.yaml`/`.yml` for YAML; `-` writes to stdout.
    #[arg(value_name = "FILE", default_value = "trainspec.toml")]
    pub(crate) file: PathBuf,
    /// Write the KRM form (`kind: TrainSpec`) for kustomize and kpt (YAML).
    #[arg(long)]
    pub(crate) krm: bool,
    /// The job's name (a DNS-1035 label). Default: the current directory's name.
    #[arg(long)]
    pub(crate) name: Option<String>,
    /// What the spec is for.
    #[arg(long, value_enum, default_value_t = TargetArg::Pytorchjob)]
    pub(crate) target: TargetArg,
    /// Start from a GPU job: one GPU per pod, a process per GPU, /dev/shm, the GPU toleration.
    #[arg(long)]
    pub(crate) gpu: bool,
    /// Overwrite FILE if it exists.
    #[arg(long)]
    pub(crate) force: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ConvertArgs {
    /// The spec or overlay (TOML, YAML, or a TrainSpec); `-` reads standard input.
    #[arg(value_name = "FILE")]
    pub(crate) file: PathBuf,
    /// The form to write.
    #[arg(long, value_enum, value_name = "FORM")]
    pub(crate) to: ConvertForm,
    /// The file is an overlay (as `trainc check --as-overlay`).
    #[arg(long)]
    pub(crate) as_overlay: bool,
    /// With `--as-overlay --to trainspec`: the `name` of the spec the patch
    /// goes over (a kustomize patch names what it patches).
    #[arg(long, value_name = "NAME", requires = "as_overlay")]
    pub(crate) name: Option<String>,
    /// With `--name`: the spec's namespace, when it has one (a patch names
    /// the namespace of what it patches too).
    #[arg(short = 'n', long, value_name = "NAMESPACE", requires = "name")]
    pub(crate) namespace: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ConvertForm {
    /// TOML, as `trainc init` writes it.
    Toml,
    /// The bare spec as YAML.
    Yaml,
    /// The KRM `TrainSpec` (kustomize, kpt); for an overlay, a TrainSpec patch.
    /// `krm` too, as `import --format krm` and `init --krm` say it.
    #[value(alias = "krm")]
    Trainspec,
}
