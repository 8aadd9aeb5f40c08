//! `build --output-dir DIR`: one file per object, and the directory's
//! trainc-generated files owned by the build.
//!
//! `kubectl apply -f DIR` applies every `.yaml`, `.yml` and `.json` file in
//! it, in name order. A file the previous build wrote and this one does not
//! (the claim of a dropped volume, a job renamed, `02-pytorchjob-x.yaml` after
//! the order changed) would still be applied, and a stale job would win. So
//! each build replaces all the files of its job: those whose object carries
//! trainc's labels with this job's name (`app.kubernetes.io/managed-by:
//! trainc`, `app.kubernetes.io/name`). Files of other trainc jobs are left
//! alone; any other manifest is a file trainc did not write, and the build
//! refuses the directory unless `--force` (and then still leaves it alone).
//! All files are written to hidden temporary files and renamed into place
//! only when every one is written (`super::atomic`).

use std::path::{Path, PathBuf};

use trainc::source::io_reason;
use trainc::spec::defaults::{LABEL_MANAGED_BY, LABEL_NAME};

/// What `kubectl apply -f DIR` reads.
const MANIFEST_EXTENSIONS: &[&str] = &["yaml", "yml", "json"];

/// Who wrote a file in the directory.
enum Owner {
    /// This job's earlier build.
    Ours,
    /// Another trainc job.
    Other,
    /// Not trainc.
    Foreign,
}

/// The largest file an earlier build can have written: one object, at most
/// a ConfigMap of 1 MiB as YAML. A larger file is not read at all.
const MAX_OURS_BYTES: u64 = 4 * 1024 * 1024;

fn owner(path: &Path, job: &str) -> Owner {
    use std::io::Read as _;
    // Not followed, not waited on, not read past what trainc writes.
    let Ok(file) = trainc::source::open_no_wait(path) else {
        return Owner::Foreign;
    };
    let regular = file
        .metadata()
        .is_ok_and(|m| m.is_file() && m.len() <= MAX_OURS_BYTES);
    let mut text = String::new();
    if !regular
        || file
            .take(MAX_OURS_BYTES + 1)
            .read_to_string(&mut text)
            .is_err()
    {
        return Owner::Foreign;
    }
    let parsed: Option<serde_json::Value> = if path.extension().is_some_and(|e| e == "json") {
        serde_json::from_str(&text).ok()
    } else {
        // trainc's own reader, with its limits on nesting and aliases.
        trainc::parse::parse_yaml_document(trainc::SourceId(0), &text, 64)
            .ok()
            .map(|node| node.to_json())
    };
    let labels = parsed
        .as_ref()
        .and_then(|v| v.pointer("/metadata/labels"))
        .cloned()
        .unwrap_or_default();
    if labels[LABEL_MANAGED_BY] != "trainc" {
        Owner::Foreign
    } else if labels[LABEL_NAME] == job {
        Owner::Ours
    } else {
        Owner::Other
    }
}

/// Writes `files` into `dir` for the job `job`: see the module documentation.
pub(super) fn write(
    dir: &Path,
    files: &[(String, String)],
    job: &str,
    force: bool,
) -> Result<(), String> {
    // A directory not there yet holds nothing: the writer makes it.
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => Some(entries),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(format!(
                "cannot read `{}`: {}",
                dir.display(),
                io_reason(&e)
            ));
        }
    };
    let mut ours = Vec::new();
    let mut foreign = Vec::new();
    for entry in entries.into_iter().flatten().flatten() {
        let path = entry.path();
        // `kubectl apply -f DIR` skips directories; it reads links and FIFOs,
        // which `owner` counts as foreign without following or reading them.
        let is_manifest = entry.file_type().is_ok_and(|t| !t.is_dir())
            && path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| MANIFEST_EXTENSIONS.contains(&e))
            && !entry.file_name().to_string_lossy().starts_with('.');
        if !is_manifest {
            continue;
        }
        match owner(&path, job) {
            Owner::Ours => ours.push(path),
            Owner::Other => {}
            Owner::Foreign => foreign.push(path),
        }
    }
    if !foreign.is_empty() && !force {
        foreign.sort();
        let names: Vec<String> = foreign
            .iter()
            .map(|p| format!("`{}`", p.file_name().unwrap_or_default().to_string_lossy()))
            .collect();
        return Err(format!(
            "`{}` holds manifests trainc did not write ({}); `kubectl apply -f` would apply them with the job's\n  help: write into a directory of its own, or pass --force to write beside them (they are left as they are)",
            dir.display(),
            names.join(", ")
        ));
    }
    let targets: Vec<(PathBuf, &str)> = files
        .iter()
        .map(|(name, text)| (PathBuf::from(name), text.as_str()))
        .collect();
    super::atomic::write_all(dir, &targets, super::atomic::Existing::Replace).map_err(
        |(path, e)| {
            format!(
                "cannot write `{}`: {}; nothing was written",
                path.display(),
                io_reason(&e)
            )
        },
    )?;
    let written: Vec<PathBuf> = targets
        .into_iter()
        .map(|(name, _)| dir.join(name))
        .collect();
    for stale in ours.iter().filter(|p| !written.contains(p)) {
        std::fs::remove_file(stale).map_err(|e| {
            format!(
                "cannot remove the stale `{}`: {}",
                stale.display(),
                io_reason(&e)
            )
        })?;
    }
    Ok(())
}
