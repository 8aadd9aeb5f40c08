//! The directory a spec's files may be read from, and how to name it to a user.

use std::path::{Path, PathBuf};

use crate::diagnostic::escape_for_terminal;
use crate::source::Sources;

/// The directory `[code]` files must lie in, and how to name it to a user.
///
/// The rule, the same in every mode: a file is read only when its real path
/// (every link resolved) is inside the root, it is a regular file (not a
/// directory, FIFO, socket or device, nothing under `/proc`, `/sys` or
/// `/dev`), and it is UTF-8 text without NUL. The root is `--code-root` when
/// given, else the directory of the spec being built; for `trainc fn` and the
/// kustomize plugin, which have no spec file, it is the working directory,
/// where kustomize and kpt run functions (the kustomization's or package's
/// directory). A package a user did not write can so never ship
/// `../../etc/shadow`, `/proc/self/environ` or a link to either.
#[derive(Debug, Clone)]
pub(crate) struct Root {
    pub dir: PathBuf,
    pub origin: RootOrigin,
}

/// Where the [`Root`] came from, for the help of a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RootOrigin {
    /// `--code-root DIR`.
    Flag,
    /// The spec file's directory.
    Spec,
    /// The working directory: a spec on stdin, `trainc fn`, the kustomize plugin.
    WorkingDirectory,
}

impl Root {
    /// The root for a spec read from `source`, unless `flag` names one.
    pub(crate) fn of(flag: Option<&Path>, sources: &Sources, spec: crate::SourceId) -> Root {
        match (flag, &sources.get(spec).dir) {
            (Some(dir), _) => Root {
                dir: dir.to_path_buf(),
                origin: RootOrigin::Flag,
            },
            (None, Some(dir)) => Root {
                dir: if dir.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    dir.clone()
                },
                origin: RootOrigin::Spec,
            },
            (None, None) => Root {
                dir: PathBuf::from("."),
                origin: RootOrigin::WorkingDirectory,
            },
        }
    }

    /// How to fix a refusal of `what` (`[code]` files, the runtimes file).
    pub(super) fn help(&self, what: &str) -> String {
        let shown = escape_for_terminal(&self.dir.display().to_string());
        match self.origin {
            RootOrigin::Flag => format!(
                "{what} must be inside `{shown}` (`--code-root`); move the file there or pass a `--code-root` that holds it"
            ),
            RootOrigin::Spec => format!(
                "{what} must be inside the spec's directory `{shown}`; keep it beside the spec, or pass `--code-root DIR` with a directory that holds both"
            ),
            RootOrigin::WorkingDirectory => format!(
                "as a KRM function or kustomize plugin (or with the spec on stdin), {what} must be inside the working directory, where kustomize and kpt run trainc: the kustomization's or package's directory"
            ),
        }
    }
}
