//! `trainc verify FILE|DIR...`: Kubernetes manifests against the strict
//! schemas and the operators' rules, every problem at its line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::Status;
use crate::cli::{JobSetArg, VerifyArgs};
use trainc::cluster::jobset::release::Release as JobSetRelease;
use trainc::diagnostic::{Diagnostic, codes};
use trainc::source::{self, Sources, Span};
use trainc::verify::kubernetes::Release as Kubernetes;
use trainc::verify::manifests::{Options, verify_file_into};

pub(super) fn run(args: &VerifyArgs) -> Status {
    let level = super::api_level(args.api_level).unwrap_or(trainc::spec::ApiLevel::V2_3);
    let mut sources = Sources::new();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut status = Status::Ok;
    let mut runtimes = Vec::new();
    if let Some(path) = &args.runtimes
        && let Some(id) = read(&mut sources, path, &mut diagnostics, &mut status)
    {
        let (found, problems) = trainc::trainer::file::read(&sources, id);
        runtimes = found;
        diagnostics.extend(problems);
    }
    let mut crds = trainc::verify::crd::Crds::default();
    for path in manifests(&args.crds, &mut sources, &mut diagnostics, &mut status) {
        if let Some(id) = read(&mut sources, &path, &mut diagnostics, &mut status) {
            diagnostics.extend(crds.read(&sources, id));
        }
    }
    let options = Options {
        crds: &crds,
        require_schemas: args.require_schemas,
        releases: trainc::verify::Releases {
            operator: super::training_operator(args.training_operator),
            jobset: match args.jobset {
                Some(JobSetArg::V0_8) => JobSetRelease::V0_8,
                Some(JobSetArg::V0_9) => JobSetRelease::V0_9,
                Some(JobSetArg::V0_10) => JobSetRelease::V0_10,
                Some(JobSetArg::V0_11) => JobSetRelease::V0_11,
                Some(JobSetArg::V0_12) | None => JobSetRelease::V0_12,
            },
            kubernetes: args.kubernetes_version.unwrap_or_default(),
        },
    };
    let mut files = 0;
    let mut objects = 0;
    let mut unchecked = BTreeMap::new();
    let paths = manifests(&args.files, &mut sources, &mut diagnostics, &mut status);
    // Each file's problems printed as they are found, after what was said
    // of the arguments, the runtimes and the CRDs.
    trainc::diagnostic::sort(&mut diagnostics);
    let mut printer = super::printer::Printer::new(args.format);
    for d in diagnostics {
        printer.add(&sources, d);
    }
    for path in paths {
        let mut said = Vec::new();
        let id = read(&mut sources, &path, &mut said, &mut status);
        for d in said {
            printer.add(&sources, d);
        }
        let Some(id) = id else {
            continue;
        };
        files += 1;
        let counted = verify_file_into(&sources, id, level, &runtimes, options, &mut |d| {
            printer.add(&sources, d);
        });
        objects += counted.objects;
        for (kind, count) in counted.unchecked {
            *unchecked.entry(kind).or_insert(0) += count;
        }
    }
    if objects == 0 && files > 0 && !printer.has_errors() {
        // `kubectl kustomize DIR | trainc verify -` where kustomize failed:
        // an empty stream must not pass as a verified one.
        let id = sources.add("<input>", String::new());
        printer.add(
            &sources,
            Diagnostic::error(
                codes::VERIFY_SCHEMA,
                Span::new(id, 0, 0),
                "no objects to verify: the input holds no Kubernetes object",
            )
            .with_help("if a command feeds trainc verify, check that it succeeded (`set -o pipefail` makes a shell pipeline fail with it)"),
        );
    }
    let what = summary(objects, files, &unchecked, options.releases.kubernetes);
    printer.finish(&sources, &what, status)
}

/// A manifest file (or standard input) as a source, up to
/// [`source::MAX_MANIFEST_BYTES`]; `None`, with the reason among the
/// diagnostics, when it cannot be read.
fn read(
    sources: &mut Sources,
    path: &Path,
    diagnostics: &mut Vec<Diagnostic>,
    status: &mut Status,
) -> Option<trainc::SourceId> {
    super::read_source(sources, path, source::MAX_MANIFEST_BYTES, diagnostics).unwrap_or_else(
        |failed| {
            *status = (*status).max(failed);
            None
        },
    )
}

/// The files to verify: each argument, a directory replaced by the
/// `.yaml`, `.yml` and `.json` files under it in name order. Hidden
/// entries (`.git`) are skipped, links to directories are not followed (no
/// loops), a link to a file outside the directory is not read (a warning
/// says so), and only regular files are read (a FIFO would wait forever).
pub(super) fn manifests(
    arguments: &[PathBuf],
    sources: &mut Sources,
    diagnostics: &mut Vec<Diagnostic>,
    status: &mut Status,
) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for argument in arguments {
        if argument == Path::new("-") || !argument.is_dir() {
            files.push(argument.clone());
            continue;
        }
        let mut walk = Walk {
            root: std::fs::canonicalize(argument).unwrap_or_else(|_| argument.clone()),
            files: Vec::new(),
            unreadable: Vec::new(),
            outside: Vec::new(),
        };
        walk.dir(argument);
        for (path, error) in walk.unreadable {
            diagnostics.push(super::unreadable(
                sources,
                &path.display().to_string(),
                &error,
            ));
            *status = (*status).max(Status::Usage);
        }
        let name = argument.display().to_string();
        for link in walk.outside {
            let link = link.display().to_string();
            let id = sources.add(&link, String::new());
            diagnostics.push(
                Diagnostic::warning(
                    codes::SOURCE_UNREADABLE,
                    Span::new(id, 0, 0),
                    format!("`{link}` links to a file outside `{name}`: not read"),
                )
                .with_help("a directory's manifests are read from inside it; pass the file itself to verify it"),
            );
        }
        if walk.files.is_empty() {
            let id = sources.add(&name, String::new());
            diagnostics.push(
                Diagnostic::error(
                    codes::SOURCE_UNREADABLE,
                    Span::new(id, 0, 0),
                    format!("`{name}` holds no `.yaml`, `.yml` or `.json` file"),
                )
                .with_help("pass the directory that holds the manifests, or the files themselves"),
            );
            *status = (*status).max(Status::Usage);
        }
        files.extend(walk.files);
    }
    files
}

/// What a walk of one directory argument found.
struct Walk {
    /// The directory, its links resolved: no file outside it is read.
    root: PathBuf,
    files: Vec<PathBuf>,
    unreadable: Vec<(PathBuf, std::io::Error)>,
    /// Links to manifest files outside `root`.
    outside: Vec<PathBuf>,
}

impl Walk {
    fn dir(&mut self, dir: &Path) {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error) => {
                self.unreadable.push((dir.to_path_buf(), error));
                return;
            }
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                !p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect();
        paths.sort();
        for path in paths {
            let Ok(link) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if link.is_dir() {
                self.dir(&path);
                continue;
            }
            let manifest = path
                .extension()
                .is_some_and(|e| matches!(e.to_str(), Some("yaml" | "yml" | "json")));
            // A link is followed to a file inside the directory, never to
            // a directory nor out of it.
            if !manifest || !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
                continue;
            }
            if std::fs::canonicalize(&path).is_ok_and(|real| real.starts_with(&self.root)) {
                self.files.push(path);
            } else {
                self.outside.push(path);
            }
        }
    }
}

/// `verified 12 objects in 3 files against Kubernetes 1.36; not checked: 1
/// LocalQueue (kueue.x-k8s.io/v1beta1)`.
fn summary(
    objects: usize,
    files: usize,
    unchecked: &BTreeMap<(String, String), usize>,
    kubernetes: Kubernetes,
) -> String {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let skipped: usize = unchecked.values().sum();
    let checked = if skipped == 0 {
        format!("{objects} object{}", plural(objects))
    } else {
        format!(
            "{} of {objects} object{}",
            objects - skipped,
            plural(objects)
        )
    };
    let mut what = format!(
        "verified {checked} in {files} file{} against Kubernetes {}",
        plural(files),
        kubernetes,
    );
    if !unchecked.is_empty() {
        let kinds: Vec<String> = unchecked
            .iter()
            .map(|((api_version, kind), count)| {
                trainc::diagnostic::escape_controls(format!("{count} {kind} ({api_version})"))
            })
            .collect();
        what.push_str("; not checked: ");
        what.push_str(&kinds.join(", "));
    }
    what
}
