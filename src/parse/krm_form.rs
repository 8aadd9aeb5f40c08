//! The KRM form of a spec (`apiVersion`, `kind`, `metadata`, `spec`) into
//! the bare form the rest of trainc reads.

use super::{KRM_API_VERSION, KRM_KIND};
use crate::diagnostic::{Diagnostic, codes};
use crate::tree::{Entry, Node, Value};

/// A Kubernetes object that is no TrainSpec at all (a built PyTorchJob, a
/// Job): what to run on it instead, rather than how to turn its header into
/// a TrainSpec's.
fn other_object(root: &Node) -> Option<Diagnostic> {
    let api_version = root.get("apiVersion")?.value.as_str()?;
    let kind = root.get("kind")?;
    let kind_text = kind.value.as_str()?;
    if api_version.starts_with("trainc.dev/") || kind_text == KRM_KIND {
        return None;
    }
    let import = if matches!(kind_text, "PyTorchJob" | "TrainJob" | "Job") {
        ", or turn it into a spec with `trainc import FILE`"
    } else {
        ""
    };
    Some(
        Diagnostic::error(
            codes::KRM_KIND,
            kind.value.span,
            format!("this is a {kind_text} ({api_version}), not a TrainSpec, the training spec trainc reads"),
        )
        .with_help(format!(
            "check built Kubernetes objects with `trainc verify FILE`{import}"
        )),
    )
}

/// `metadata.name` and `metadata.namespace` of the KRM form `root` into
/// `spec`, where they name the job.
fn name_from_metadata(root: &Node, spec: &mut Node, problems: &mut Vec<Diagnostic>) {
    let metadata = root.get("metadata").map(|e| &e.value);
    for field in ["name", "namespace"] {
        let Some(from_metadata) = metadata.and_then(|m| m.get(field)) else {
            continue;
        };
        let Value::Table(spec_entries) = &mut spec.value else {
            unreachable!("spec is a table")
        };
        match spec_entries.iter().find(|e| e.key == field) {
            Some(in_spec) if in_spec.value.value != from_metadata.value.value => problems.push(
                Diagnostic::error(
                    codes::KRM_NAME_CONFLICT,
                    in_spec.value.span,
                    format!("`spec.{field}` differs from `metadata.{field}`"),
                )
                .with_secondary(
                    from_metadata.value.span,
                    format!("`metadata.{field}` is set here"),
                )
                .with_help(format!(
                    "remove `{field}` from `spec`; `metadata.{field}` names the job"
                )),
            ),
            Some(_) => {}
            None => spec_entries.insert(0, from_metadata.clone()),
        }
    }
    // The KRM form is named by its metadata, as every Kubernetes object (and
    // kustomize and kpt need it too).
    if spec.get("name").is_none() {
        let (span, under) = match root.get("metadata") {
            Some(entry) => (entry.key_span, "under `metadata:`"),
            None => (root.span, "as `metadata:` with `name:` under it"),
        };
        problems.push(
            Diagnostic::error(
                codes::SCHEMA_MISSING_KEY,
                span,
                "the TrainSpec has no `metadata.name`",
            )
            .with_help(format!(
                "add `name: my-job` {under}: the job's name, a DNS-1035 label (lowercase letters, digits and `-`, starting with a letter)"
            )),
        );
    }
}

/// Annotations of the tools that hand a TrainSpec to trainc (kustomize, kpt,
/// the KRM function specification): about the config object, not the job.
const TOOL_ANNOTATIONS: [&str; 6] = [
    "config.kubernetes.io/",
    "internal.config.kubernetes.io/",
    "config.k8s.io/",
    "kustomize.config.k8s.io/",
    "kpt.dev/",
    "kubectl.kubernetes.io/",
];

/// `metadata.labels` and `metadata.annotations` of the KRM form `root` are
/// the job's, as `labels` and `annotations` are: put on every object trainc
/// writes. Tools' own annotations (`config.kubernetes.io/local-config`, ...)
/// are left out. A key set in both places with two values is an error.
fn labels_from_metadata(root: &Node, spec: &mut Node, problems: &mut Vec<Diagnostic>) {
    let Some(metadata) = root.get("metadata").map(|e| &e.value) else {
        return;
    };
    for field in ["labels", "annotations"] {
        let Some(from) = metadata.get(field) else {
            continue;
        };
        let Some(written) = from.value.as_table() else {
            continue; // not a mapping: the schema says so at `metadata`
        };
        let Value::Table(spec_entries) = &mut spec.value else {
            unreachable!("spec is a table")
        };
        let index = spec_entries
            .iter()
            .position(|e| e.key == field)
            .unwrap_or_else(|| {
                spec_entries.push(Entry {
                    key: field.to_owned(),
                    key_span: from.key_span,
                    value: Node::new(Value::Table(Vec::new()), from.value.span),
                });
                spec_entries.len() - 1
            });
        let Value::Table(target) = &mut spec_entries[index].value.value else {
            continue; // `spec.labels` is not a mapping: the schema says so there
        };
        for entry in written {
            if field == "annotations" && TOOL_ANNOTATIONS.iter().any(|p| entry.key.starts_with(p)) {
                continue;
            }
            match target.iter().find(|e| e.key == entry.key) {
                Some(in_spec) if in_spec.value.value != entry.value.value => problems.push(
                    Diagnostic::error(
                        codes::KRM_METADATA_CONFLICT,
                        in_spec.value.span,
                        format!(
                            "`spec.{field}` and `metadata.{field}` give `{}` two values",
                            entry.key
                        ),
                    )
                    .with_secondary(entry.value.span, format!("`metadata.{field}` sets it here"))
                    .with_help(format!(
                        "both are the job's {field}: keep `{}` in one of them",
                        entry.key
                    )),
                ),
                Some(_) => {}
                None => target.push(entry.clone()),
            }
        }
    }
}

/// Turns the KRM form into the bare form; leaves a bare spec as it is.
///
/// `metadata.name` and `metadata.namespace` become `name` and `namespace`
/// (keeping their spans); `metadata.labels` and `metadata.annotations` join
/// the spec's `labels` and `annotations`, but the annotations of kustomize
/// and kpt about the config object itself.
pub(super) fn unwrap_krm(root: Node) -> Result<Node, Vec<Diagnostic>> {
    let Some(entries) = root.as_table() else {
        return Err(vec![
            Diagnostic::error(codes::PARSE_NOT_A_TABLE, root.span, "a spec must be a mapping of fields")
                .with_help("start with `name: my-job` and `image: ...`, or use the KRM form with `apiVersion`, `kind` and `spec`"),
        ]);
    };
    if root.get("apiVersion").is_none() && root.get("kind").is_none() {
        return Ok(root);
    }
    if let Some(problem) = other_object(&root) {
        return Err(vec![problem]);
    }
    let mut problems = Vec::new();
    let expect =
        |key: &str, expected: &str, code: &'static str, problems: &mut Vec<Diagnostic>| match root
            .get(key)
        {
            Some(entry) if entry.value.as_str() == Some(expected) => {}
            Some(entry) => problems.push(
                Diagnostic::error(
                    code,
                    entry.value.span,
                    format!("`{key}` of a TrainSpec must be `{expected}`"),
                )
                .with_help(format!("write `{key}: {expected}`")),
            ),
            None => problems.push(
                Diagnostic::error(
                    code,
                    root.span,
                    format!("the KRM form needs `{key}: {expected}`"),
                )
                .with_help(format!("add `{key}: {expected}` at the top level")),
            ),
        };
    expect(
        "apiVersion",
        KRM_API_VERSION,
        codes::KRM_API_VERSION,
        &mut problems,
    );
    expect("kind", KRM_KIND, codes::KRM_KIND, &mut problems);

    let mut spec = match root.get("spec") {
        Some(entry) if entry.value.as_table().is_some() => entry.value.clone(),
        Some(entry) if entry.value.value == Value::Null => {
            Node::new(Value::Table(Vec::new()), entry.key_span)
        }
        Some(entry) => {
            problems.push(Diagnostic::error(
                codes::PARSE_NOT_A_TABLE,
                entry.value.span,
                "`spec` must be a mapping of fields",
            ));
            Node::new(Value::Table(Vec::new()), entry.key_span)
        }
        None => Node::new(Value::Table(Vec::new()), root.span),
    };
    for entry in entries {
        if !matches!(
            entry.key.as_str(),
            "apiVersion" | "kind" | "metadata" | "spec"
        ) {
            problems.push(
                Diagnostic::error(codes::SCHEMA_UNKNOWN_KEY, entry.key_span, format!("unknown key `{}` in a TrainSpec object", entry.key))
                    .with_help("a TrainSpec object has `apiVersion`, `kind`, `metadata` and `spec`; spec fields go under `spec`"),
            );
        }
    }
    name_from_metadata(&root, &mut spec, &mut problems);
    labels_from_metadata(&root, &mut spec, &mut problems);
    if problems.is_empty() {
        Ok(spec)
    } else {
        Err(problems)
    }
}
