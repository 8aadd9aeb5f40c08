//! Which runtime a TrainJob runs on: the one its `runtimeRef` names, looked
//! up first in the cluster's runtimes file (what the cluster really has) and
//! then, for a ClusterTrainingRuntime, in the catalogue of what the Trainer
//! release ships. A TrainingRuntime is the user's own: only a file knows it.

use super::Release;
use super::catalogue;
use super::runtime::{Kind, Runtime};

/// Where the runtime was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The runtimes file (or the objects beside the TrainJob, for `verify`).
    File,
    /// The ClusterTrainingRuntimes this release ships.
    Shipped(Release),
}

/// The runtime a TrainJob names, and what trainc knows of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    pub kind: Kind,
    pub name: String,
    /// The runtime, when the file or the catalogue has it.
    pub known: Option<(Runtime, Origin)>,
    /// Whether a runtimes file was given.
    pub with_file: bool,
    /// When the file has no such runtime, what it has that comes near: the
    /// same name in another namespace, or a name like it.
    pub near: Option<String>,
}

impl Bound {
    pub fn runtime(&self) -> Option<&Runtime> {
        self.known.as_ref().map(|(r, _)| r)
    }

    /// The image the trainer runs when the TrainJob sets none: the runtime's
    /// `node` container's (kubeflow/trainer v2.0.0–v2.3.0,
    /// `pkg/runtime/framework/plugins/jobset/jobset.go`: the TrainJob's
    /// `trainer.image`, when set, replaces it).
    pub fn image(&self) -> Option<&str> {
        self.runtime()?.trainer_container()?.image.as_deref()
    }

    /// How to name the runtime to a user: "the ClusterTrainingRuntime `x` of
    /// Trainer v2.3.0" or "the TrainingRuntime `x` of the runtimes file".
    pub fn describe(&self) -> String {
        let whose = match &self.known {
            Some((_, Origin::Shipped(release))) => format!(" of Trainer {}", release.tag()),
            Some((_, Origin::File)) | None => String::new(),
        };
        format!("the {} `{}`{whose}", self.kind.as_str(), self.name)
    }
}

/// The runtime `kind`/`name` in `namespace` (the TrainJob's, when the spec
/// sets one), from `file` (the runtimes file's, in order) or the catalogue of
/// `release`. A TrainingRuntime is namespaced: one in another namespace than
/// the TrainJob's is not the one it runs on; a TrainJob without a namespace
/// runs where it is applied, so any namespace's runtime of that name fits.
pub fn bind(
    kind: Kind,
    name: &str,
    namespace: Option<&str>,
    release: Release,
    file: Option<&[Runtime]>,
) -> Bound {
    let from_file = file.and_then(|runtimes| {
        runtimes.iter().find(|r| {
            r.kind == kind
                && r.name == name
                && (kind == Kind::Cluster
                    || namespace.is_none()
                    || r.namespace.is_none()
                    || r.namespace.as_deref() == namespace)
        })
    });
    let known = match from_file {
        Some(runtime) => Some((runtime.clone(), Origin::File)),
        None if kind == Kind::Cluster => catalogue::find(release, name)
            .map(|runtime| (runtime.clone(), Origin::Shipped(release))),
        None => None,
    };
    let near = match (&known, file) {
        (None, Some(runtimes)) => near(kind, name, namespace.unwrap_or_default(), runtimes),
        _ => None,
    };
    Bound {
        kind,
        name: name.to_owned(),
        known,
        with_file: file.is_some(),
        near,
    }
}

/// What the file has that the user may have meant by `kind`/`name`.
fn near(kind: Kind, name: &str, namespace: &str, runtimes: &[Runtime]) -> Option<String> {
    let same_kind = || runtimes.iter().filter(|r| r.kind == kind);
    if let Some(elsewhere) = same_kind().find(|r| r.name == name) {
        return Some(format!(
            "the runtimes file has it in the namespace `{}`, not in `{namespace}`, the TrainJob's.",
            elsewhere.namespace.as_deref().unwrap_or_default()
        ));
    }
    if let Some(other) = runtimes.iter().find(|r| r.kind != kind && r.name == name) {
        return Some(format!(
            "the runtimes file has a {} of that name: set `runtimeKind = \"{}\"`.",
            other.kind.as_str(),
            other.kind.as_str()
        ));
    }
    crate::diagnostic::suggest(name, same_kind().map(|r| r.name.as_str()))
        .map(|n| format!("did you mean `{n}`?"))
}
