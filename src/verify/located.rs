//! A problem of an object at its line: the field's place in the object's
//! tree (the value, else the nearest enclosing one), the document, and where
//! to read what the field takes (`kubectl explain`).

use serde_json::Value as Json;

use super::Problem;
use crate::diagnostic::{Diagnostic, codes};
use crate::source::{SourceId, Span};
use crate::tree::{Node, field_path};

/// A problem at its line, with the span of the value it is about.
pub(super) struct Placed {
    pub(super) diagnostic: Diagnostic,
    pub(super) value: Option<Span>,
    pub(super) unchecked: Option<(String, String)>,
}

/// A problem at its line in `object` (its node and its JSON).
pub(super) fn place(
    problem: &Problem,
    object: Option<(&Located<'_>, &Json)>,
    id: SourceId,
) -> Placed {
    let value = object
        .and_then(|(o, _)| o.node.pointer(&problem.path))
        .map(|(value, _)| value.span);
    let unchecked = (!problem.contract.checked()).then(|| {
        object.map_or_else(Default::default, |(_, json)| {
            (
                json["apiVersion"].as_str().unwrap_or("").to_owned(),
                json["kind"].as_str().unwrap_or("").to_owned(),
            )
        })
    });
    Placed {
        diagnostic: locate(problem, object, id),
        value,
        unchecked,
    }
}

/// One object of the file: where it is and what it says.
pub(super) struct Located<'a> {
    /// Its part of the stream, and which object of it.
    pub(super) part: usize,
    pub(super) ordinal: usize,
    /// 1-based, among the file's non-empty documents.
    pub(super) document: usize,
    pub(super) node: &'a Node,
}

impl Located<'_> {
    /// Where the object begins: its diagnostics' place when they are about
    /// the whole object.
    pub(super) fn start(&self) -> Span {
        Span::new(
            self.node.span.source,
            self.node.span.start,
            self.node.span.start,
        )
    }
}

/// An object without `apiVersion`, `kind` or a name gets one clear error
/// rather than a schema lookup for `?`.
pub(super) fn missing_identity(object: &Located<'_>, json: &Json) -> Option<Diagnostic> {
    let missing: Vec<&str> = [
        (
            "apiVersion",
            json["apiVersion"].as_str().is_some_and(|s| !s.is_empty()),
        ),
        ("kind", json["kind"].as_str().is_some_and(|s| !s.is_empty())),
        (
            "metadata.name",
            json["metadata"]["name"]
                .as_str()
                .is_some_and(|s| !s.is_empty()),
        ),
    ]
    .into_iter()
    .filter(|(_, present)| !present)
    .map(|(field, _)| field)
    .collect();
    (!missing.is_empty()).then(|| {
        Diagnostic::error(
            codes::VERIFY_SCHEMA,
            object.start(),
            format!(
                "document {}, `{}`: the object has no {}",
                object.document,
                missing[0],
                missing
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .with_help("every Kubernetes object names its `apiVersion`, `kind` and `metadata.name`")
    })
}

/// A problem as a diagnostic at the line of the field it is about: the value
/// when it exists, else the nearest enclosing one (a missing field is
/// reported at the object that should hold it).
fn locate(problem: &Problem, object: Option<(&Located<'_>, &Json)>, id: SourceId) -> Diagnostic {
    let code = problem.code();
    let (span, document) = match object {
        Some((o, _)) => {
            // A field the object lacks is shown at the key of the
            // object that should hold it.
            let parent = || {
                let (up, _) = problem.path.rsplit_once('/')?;
                o.node.pointer(up)?.1
            };
            let span = match o.node.pointer(&problem.path) {
                Some((_, Some(key))) => key,
                Some(_) => o.node.span_at(&problem.path),
                None => parent().unwrap_or_else(|| o.node.span_at(&problem.path)),
            };
            (span, o.document)
        }
        None => (Span::new(id, 0, 0), 0),
    };
    let field = if problem.path.is_empty() {
        String::new()
    } else {
        format!(", `{}`", field_path(&problem.path))
    };
    let document = if document == 0 {
        String::new()
    } else {
        format!("document {document}, ")
    };
    let help = problem.contract.help().map_or_else(
        || schema_help(problem, object.map(|(_, json)| json)),
        str::to_owned,
    );
    let mut diagnostic = Diagnostic::error(
        code,
        span,
        format!("{document}{}{field}: {}", problem.object, problem.message),
    )
    .with_help(help);
    diagnostic.severity = problem.contract.severity();
    diagnostic
}

/// Where to read what a field takes: `kubectl explain` of the object that
/// holds it (`deployment.spec.template.spec` for an unknown field there).
fn schema_help(problem: &Problem, object: Option<&Json>) -> String {
    let rejects = "the API server rejects an object that does not match its kind's schema";
    let Some(kind) = object.and_then(|o| o["kind"].as_str()) else {
        return rejects.to_owned();
    };
    let mut holder: Vec<String> = problem
        .path
        .split('/')
        .skip(1)
        .filter(|segment| segment.parse::<usize>().is_err())
        .map(crate::tree::segment_key)
        .collect();
    // A missing field is reported at the object that should hold it.
    if !problem.message.starts_with("missing required field") {
        holder.pop();
    }
    let explain = std::iter::once(kind.to_ascii_lowercase())
        .chain(holder)
        .collect::<Vec<_>>()
        .join(".");
    crate::diagnostic::escape_controls(format!(
        "{rejects}; `kubectl explain {explain}` lists the fields there and what each takes"
    ))
}
