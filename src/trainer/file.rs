//! The cluster's own runtimes, from a file: what
//! `kubectl get clustertrainingruntimes,trainingruntimes -A -o yaml` prints
//! (a `v1 List`), or multi-document YAML of runtimes, so a team can keep its
//! cluster's runtimes beside its specs.

use std::collections::HashMap;

use crate::diagnostic::{Diagnostic, codes};
use crate::source::{SourceId, Sources, Span};

use super::runtime::{Kind, Runtime};

/// Deep enough for a runtime (its containers sit 9 levels down).
const MAX_DEPTH: usize = 64;
/// More runtimes than a cluster holds.
const MAX_DOCUMENTS: usize = 10_000;

/// A runtimes file given on the command line (`--runtimes FILE`), read into
/// the sources: what it holds is read from its text once, on first use,
/// however many specs are built against it (`trainc migrate` builds one a
/// job, `trainc check` one a file).
#[derive(Debug, Clone)]
pub struct RuntimesFile {
    id: SourceId,
    read: std::sync::Arc<std::sync::OnceLock<(Vec<Runtime>, Vec<Diagnostic>)>>,
}

impl RuntimesFile {
    pub fn new(id: SourceId) -> RuntimesFile {
        RuntimesFile {
            id,
            read: std::sync::Arc::default(),
        }
    }

    pub fn id(&self) -> SourceId {
        self.id
    }

    /// Its runtimes and its problems ([`read`]), read the first time asked.
    pub fn runtimes(&self, sources: &Sources) -> &(Vec<Runtime>, Vec<Diagnostic>) {
        self.read.get_or_init(|| read(sources, self.id))
    }
}

/// The runtimes of the file `id`, with where each is, and every problem of
/// the file. Objects of other kinds are skipped with a warning: a file from
/// `kubectl get` may hold what was asked for and nothing else, but one
/// written by hand may not.
pub fn read(sources: &Sources, id: SourceId) -> (Vec<Runtime>, Vec<Diagnostic>) {
    let text = &sources.get(id).text;
    let documents = match crate::parse::parse_yaml_stream(id, text, MAX_DEPTH, MAX_DOCUMENTS) {
        Ok(documents) => documents,
        Err(diagnostics) => return (Vec::new(), diagnostics),
    };
    let (objects, not_objects) = crate::parse::stream_objects(&documents);
    let mut problems = crate::parse::not_objects_errors(
        not_objects,
        codes::TRAINJOB_RUNTIME,
        " of the runtimes file",
        "the file holds ClusterTrainingRuntime and TrainingRuntime objects, e.g. the output of `kubectl get clustertrainingruntimes,trainingruntimes -A -o yaml`",
    );
    let mut runtimes: Vec<Runtime> = Vec::new();
    // Where each (kind, namespace, name) was first found.
    let mut seen: HashMap<(Kind, Option<String>, String), Span> = HashMap::new();
    for object in objects {
        let json = object.node.to_sent_json();
        let at = object
            .node
            .get("kind")
            .map_or(object.node.span, |k| k.value.span);
        let kind = json["kind"].as_str().unwrap_or("");
        if Kind::from_kind(kind).is_none() {
            problems.push(
                Diagnostic::warning(
                    codes::TRAINJOB_RUNTIME,
                    at,
                    format!("document {}: a `{kind}` is not a runtime; skipped", object.document),
                )
                .with_help("keep only ClusterTrainingRuntime and TrainingRuntime objects in the runtimes file"),
            );
            continue;
        }
        match Runtime::from_json(&json) {
            Ok(runtime) => {
                let key = (
                    runtime.kind,
                    runtime.namespace.clone(),
                    runtime.name.clone(),
                );
                if let Some(first) = seen.get(&key) {
                    problems.push(
                        Diagnostic::error(
                            codes::TRAINJOB_RUNTIME,
                            object.node.span,
                            format!(
                                "the {} `{}` is in the runtimes file twice",
                                runtime.kind.as_str(),
                                runtime.name
                            ),
                        )
                        .with_secondary(*first, "first here")
                        .with_help("keep one copy of each runtime"),
                    );
                } else {
                    seen.insert(key, object.node.span);
                    runtimes.push(runtime);
                }
            }
            Err(why) => problems.push(
                Diagnostic::error(
                    codes::TRAINJOB_RUNTIME,
                    object.node.span,
                    format!(
                        "document {}: the {kind} cannot be read: {why}",
                        object.document
                    ),
                )
                .with_help(format!(
                    "a runtimes file holds runtimes as the cluster has them: `kubectl get {} NAME -o yaml` writes one",
                    kind.to_ascii_lowercase()
                )),
            ),
        }
    }
    (runtimes, problems)
}
