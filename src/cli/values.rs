//! The values options take: targets, releases, formats, shells.

use clap::ValueEnum;
use trainc::verify::kubernetes::Release as KubernetesRelease;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TargetArg {
    /// Kubeflow Training Operator PyTorchJob.
    Pytorchjob,
    /// Kubeflow Trainer v2 TrainJob.
    Trainjob,
    /// An Indexed Job and a headless Service, for a cluster without an operator.
    Job,
    /// A JobSet, for a cluster with the JobSet controller.
    Jobset,
}

/// `--kubernetes-version`: one of the releases trainc bundles, listed from
/// their table.
pub(super) fn kubernetes_release() -> impl clap::builder::TypedValueParser<Value = KubernetesRelease>
{
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let values = KubernetesRelease::all().map(|release| {
        let value = PossibleValue::new(release.name());
        match release.note() {
            Some(note) => value.help(note),
            None => value,
        }
    });
    PossibleValuesParser::new(values)
        .map(|name| KubernetesRelease::named(&name).expect("a listed release"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum JobSetArg {
    /// v0.12: `RestartJob` actions (behind a feature gate), `dependsOn` without `status`.
    #[value(name = "v0.12")]
    V0_12,
    /// v0.11: `volumeClaimPolicies`, `InPlaceRestart` (behind a feature gate).
    #[value(name = "v0.11")]
    V0_11,
    /// v0.10: failure policy rules' `onJobFailureMessagePatterns`.
    #[value(name = "v0.10")]
    V0_10,
    /// v0.9: `groupName`, up to 5 `dependsOn` items.
    #[value(name = "v0.9")]
    V0_9,
    /// v0.8: the oldest trainc knows; trainc's own JobSets are for it and later.
    #[value(name = "v0.8")]
    V0_8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TrainingOperatorArg {
    /// v1.9: the webhook, with `managedBy` and the elastic job's Workers.
    #[value(name = "v1.9")]
    V1_9,
    /// v1.8: the webhook.
    #[value(name = "v1.8")]
    V1_8,
    /// v1.7: no webhook; the controller refuses to run an invalid job.
    #[value(name = "v1.7")]
    V1_7,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ApiLevelArg {
    /// Trainer v2.3, the newest this trainc knows: `runtimePatches`.
    #[value(name = "v2.3")]
    V2_3,
    /// Trainer v2.2: `runtimePatches`.
    #[value(name = "v2.2")]
    V2_2,
    /// Trainer v2.1: `podTemplateOverrides`.
    #[value(name = "v2.1")]
    V2_1,
    /// Trainer v2.0: `podSpecOverrides`.
    #[value(name = "v2.0")]
    V2_0,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum DescribeFormat {
    /// The description in words, at 80 columns.
    Text,
    /// The pods as a `v1 List` of `Pod` objects, in JSON.
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    /// Multi-document YAML.
    Yaml,
    /// A `v1 List` in JSON.
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Source snippets with labels, on standard error.
    Human,
    /// One JSON object per diagnostic and line, on standard output.
    Json,
    /// GitHub Actions annotations (`::error file=...`), on standard output.
    Github,
    /// One SARIF 2.1.0 log, on standard output (GitHub code scanning).
    Sarif,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
    Elvish,
}
