//! The report against the two clusters' stories: for every case of
//! `tests/migrate`, Kubeflow's own PyTorchJob examples and every example
//! built as a PyTorchJob, the PyTorchJob's pods and those of the TrainJob
//! written (read back from the output, its runtime beside it) are compared,
//! and the report names each aspect in which they differ, at the job, and
//! no aspect in which they agree.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::compare::{self, Aspect};
use crate::diagnostic::{Diagnostic, codes};
use crate::source::Sources;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

/// The objects of a YAML stream, a `v1 List`'s items one by one, each with
/// where it is.
fn located(name: &str, text: &str) -> Vec<(Json, std::ops::Range<usize>)> {
    let mut sources = Sources::new();
    let id = sources.add(name, text);
    let documents = crate::parse::parse_yaml_stream(id, text, 64, 10_000).unwrap_or_default();
    let mut out = Vec::new();
    for document in &documents {
        let items = match document.get("items").map(|e| &e.value.value) {
            Some(crate::tree::Value::Array(items)) if document.to_json()["kind"] == "List" => {
                items.iter().collect()
            }
            _ => vec![document],
        };
        for node in items {
            let value = node.to_json();
            if value.is_object() {
                out.push((value, node.span.start..node.span.end));
            }
        }
    }
    out
}

fn objects(name: &str, text: &str) -> Vec<Json> {
    located(name, text).into_iter().map(|(v, _)| v).collect()
}

/// The aspect a report entry names, for the entries that say a difference.
fn aspects_said(d: &Diagnostic) -> Vec<Aspect> {
    match d.code {
        c if c == codes::MIGRATE_POD_NAMES => vec![Aspect::Names],
        c if c == codes::MIGRATE_WORLD => vec![Aspect::World],
        c if c == codes::MIGRATE_COMMAND => vec![Aspect::CommandLine],
        c if c == codes::MIGRATE_ENV && d.severity != crate::diagnostic::Severity::Note => {
            vec![Aspect::Env]
        }
        c if c == codes::MIGRATE_LABELS && d.message.starts_with("the pods'") => {
            vec![Aspect::Labels]
        }
        c if c == codes::MIGRATE_POD => vec![Aspect::Pod],
        // A note of what becomes of the pods after a failure is beyond
        // the pods' story.
        c if c == codes::MIGRATE_RESTARTS && d.severity != crate::diagnostic::Severity::Note => {
            vec![Aspect::Restarts, Aspect::Deadline]
        }
        c if c == codes::MIGRATE_SUCCESS => vec![Aspect::Success],
        _ => Vec::new(),
    }
}

/// Compares one input's report with the stories of its jobs; returns the
/// jobs compared.
fn check(name: &str, text: &str, failures: &mut Vec<String>) -> usize {
    let mut sources = Sources::new();
    let id = sources.add(name, text);
    let migrated = super::migrate(&mut sources, id, &super::Options::default());
    let written = objects(name, &migrated.text);
    let mut compared = 0;
    for (job, span) in located(name, text)
        .into_iter()
        .filter(|(o, _)| o["kind"] == "PyTorchJob" && o["apiVersion"] == "kubeflow.org/v1")
    {
        let job_name = job["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let mine: Vec<Json> = written
            .iter()
            .filter(|o| {
                o["metadata"]["name"] == job_name.as_str()
                    && (o["kind"] == "TrainJob" || o["kind"] == "TrainingRuntime")
            })
            .cloned()
            .collect();
        if !mine.iter().any(|o| o["kind"] == "TrainJob") {
            continue; // refused, or written as it was
        }
        let stored = crate::verify::nulls::stored(&job).unwrap_or(job);
        let before = crate::cluster::pytorchjob::workload(&stored).unwrap();
        let runtimes = crate::trainer::catalogue::shipped(crate::trainer::Release::V2_3);
        let after = crate::cluster::workload(&mine, runtimes, crate::trainer::Release::V2_3)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let found: BTreeSet<Aspect> = compare::differences(&before, &after)
            .iter()
            .map(|d| d.aspect)
            .collect();
        // The report's entries about this job: those inside it.
        let said: BTreeSet<Aspect> = migrated
            .diagnostics
            .iter()
            .filter(|d| d.primary.span.source == id && span.contains(&d.primary.span.start))
            .flat_map(aspects_said)
            .collect();
        for aspect in &found {
            let covered = said.contains(aspect)
                // The process count chosen says its own change.
                || (*aspect == Aspect::World && migrated.diagnostics.iter().any(|d| d.code == codes::MIGRATE_WORLD));
            if !covered {
                failures.push(format!(
                    "{name} `{job_name}`: {aspect:?} differs, and the report does not say so"
                ));
            }
        }
        for aspect in &said {
            let paired = found.contains(aspect)
                || (*aspect == Aspect::Restarts && found.contains(&Aspect::Deadline))
                || (*aspect == Aspect::Deadline && found.contains(&Aspect::Restarts));
            if !paired && *aspect != Aspect::Deadline {
                failures.push(format!(
                    "{name} `{job_name}`: the report says {aspect:?} changes, and the stories agree"
                ));
            }
        }
        compared += 1;
    }
    compared
}

#[test]
fn the_report_names_every_difference_of_the_two_stories_and_no_other() {
    let mut failures = Vec::new();
    let mut compared = 0;
    let dirs = [
        root().join("tests/migrate"),
        root().join("tests/upstream/kubeflow-trainer-v1.9.2"),
    ];
    for file in dirs.iter().flat_map(|d| yaml_files(d)) {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        compared += check(&name, &text, &mut failures);
    }
    // Every example that builds as a PyTorchJob.
    let mut examples: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    examples.sort();
    for example in examples {
        let mut sources = Sources::new();
        let text = std::fs::read_to_string(&example).unwrap();
        let id = sources.add(example.to_string_lossy().into_owned(), text);
        let built = crate::build(
            &mut sources,
            &crate::Input {
                spec: id,
                overlays: Vec::new(),
                runtimes: None,
            },
            &crate::Options {
                target: Some(crate::spec::Target::Pytorchjob),
                ..crate::Options::default()
            },
        );
        let Some(objects) = built.objects else {
            continue;
        };
        let yaml = crate::emit::stream(&objects, crate::emit::Format::Yaml);
        let name = format!(
            "{} (as a PyTorchJob)",
            example.file_name().unwrap().to_string_lossy()
        );
        compared += check(&name, &yaml, &mut failures);
    }
    assert!(compared >= 20, "{compared} jobs compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
