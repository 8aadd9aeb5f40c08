//! The command line, as clap types only: no logic lives here.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// Compile a compact training spec into the Kubernetes objects that run distributed PyTorch.
#[derive(Debug, Parser)]
#[command(name = "trainc", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
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
    /// Print the JSON Schema of the spec (for editors and CI).
    Schema,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Spec files (TOML or YAML); `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// How to print diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

#[derive(Debug, clap::Args)]
pub struct BuildArgs {
    /// The spec (TOML or YAML); `-` reads standard input.
    #[arg(value_name = "SPEC")]
    pub spec: PathBuf,
    /// Generate for this target instead of the spec's `target`.
    #[arg(long, value_enum)]
    pub target: Option<TargetArg>,
    /// For a TrainJob: the Trainer API of the cluster, instead of `[trainjob] apiLevel`.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub api_level: Option<ApiLevelArg>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = OutputFormat::Yaml)]
    pub output: OutputFormat,
    /// Write one file per object into DIR (created if missing) instead of stdout.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Check the objects against the operators' strict schemas and webhook rules before writing.
    #[arg(long)]
    pub verify: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TargetArg {
    /// Kubeflow Training Operator PyTorchJob.
    Pytorchjob,
    /// Kubeflow Trainer v2 TrainJob.
    Trainjob,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApiLevelArg {
    /// Trainer v2.2 and later: `runtimePatches`.
    #[value(name = "v2.2")]
    V2_2,
    /// Trainer v2.1: `podTemplateOverrides`.
    #[value(name = "v2.1")]
    V2_1,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Multi-document YAML.
    Yaml,
    /// A `v1 List` in JSON.
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Source snippets with labels, on standard error.
    Human,
    /// One JSON object per diagnostic and line, on standard output.
    Json,
    /// GitHub Actions annotations (`::error file=...`), on standard output.
    Github,
}
