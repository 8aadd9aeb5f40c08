//! `trainc convert`: a spec or an overlay from one of its forms into
//! another — TOML, bare YAML, or the KRM `TrainSpec` kustomize and kpt read
//! (for an overlay, the `TrainSpec` patch a kustomization lists under
//! `patches`) — with its comments where they were.
//!
//! The document is converted as written, not checked (`trainc check` does
//! that) and not merged. What one form cannot say in another is said: an
//! overlay's `unset` entries are a patch's `null`s and back; a spec's `null`
//! has no TOML and is left out with a warning; a patch cannot rename or move
//! the TrainSpec it patches. The text written is read back and compared
//! with what was read, so that nothing is lost without a word.

mod comments;
mod overlay;
mod toml_out;
mod yaml_out;

use crate::compose::{UNSET, split_path};
use crate::diagnostic::{Diagnostic, codes};
use crate::parse::{self, KRM_API_VERSION, KRM_KIND};
use crate::source::{SourceId, Sources, Span};
use crate::tree::{Entry, Node, Value};

use self::comments::{Comments, Notes, Place};
use self::overlay::{dotted, is_set, nulls_to_unset, take_nulls, unset_to_nulls};

/// The form to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Toml,
    /// The bare spec (or overlay) as YAML.
    Yaml,
    /// The KRM `TrainSpec` (for an overlay, a `TrainSpec` patch).
    TrainSpec,
}

#[derive(Debug, Clone)]
pub struct Request {
    pub to: Form,
    /// The document is an overlay (`trainc check --as-overlay`).
    pub overlay: bool,
    /// For an overlay written as a patch: the TrainSpec it patches, and
    /// its namespace.
    pub name: Option<String>,
    pub namespace: Option<String>,
}

#[derive(Debug)]
pub struct Converted {
    pub text: String,
    /// Warnings: what the target form leaves out.
    pub notes: Vec<Diagnostic>,
}

/// The document of `id` in the form `request` asks for.
pub fn convert(
    sources: &Sources,
    id: SourceId,
    request: &Request,
) -> Result<Converted, Vec<Diagnostic>> {
    let source = sources.get(id);
    if let Some(empty) = parse::empty_spec(id, source) {
        return Err(vec![empty]);
    }
    let (root, _) = parse::parse_as_written(id, source)?;
    let mut comments = comments::read(&source.text, &root);
    // A file whose schema line names the overlay's or the patch's schema is one.
    let named_overlay = comments.schema.as_deref().is_some_and(|path| {
        path.ends_with("overlay.schema.json") || path.ends_with("trainspec-patch.schema.json")
    });
    let request = &Request {
        overlay: request.overlay || named_overlay,
        ..request.clone()
    };
    // What the written text must read back as, from the tree already read.
    let original = canonical(root.clone(), id, request.overlay);
    let mut notes = Vec::new();
    let mut doc = bare(root, &mut comments, request.overlay, &mut notes)?;
    if let (Some(patched), false) = (doc.patched.first(), request.to == Form::TrainSpec) {
        notes.push(
            Diagnostic::warning(
                codes::CONVERT_LEFT_OUT,
                patched.value.span,
                "the patch's `metadata` names the TrainSpec it goes over; the overlay leaves it out",
            )
            .with_help("an overlay's `name` would rename the job; convert back with `--name` (and `--namespace`) to name the TrainSpec again"),
        );
    }
    let synthetic = Span::new(id, usize::MAX, usize::MAX);
    let tree = match (request.to, request.overlay) {
        (Form::Toml, true) => {
            nulls_to_unset(&mut doc, &mut comments, synthetic);
            doc.entries
        }
        (Form::Toml, false) => {
            drop_nulls(&mut doc.entries, &mut notes);
            doc.entries
        }
        (Form::Yaml, _) => doc.entries,
        (Form::TrainSpec, overlay) => {
            if overlay {
                unset_to_nulls(&mut doc, &mut comments, synthetic)?;
            }
            krm(doc, request, synthetic)?
        }
    };
    let schema = comments
        .schema
        .clone()
        .map(|path| schema_for(&path, request));
    let text = match request.to {
        Form::Toml => toml_out::write(&tree, &comments, schema.as_deref()),
        Form::Yaml | Form::TrainSpec => yaml_out::write(&tree, &comments, schema.as_deref()),
    };
    read_back(original, id, request, &text)?;
    Ok(Converted { text, notes })
}

/// A document in its bare form: the spec's (or overlay's) keys at the top.
struct Bare {
    entries: Vec<Entry>,
    /// A patch's `metadata.name` and `namespace`: the TrainSpec it patches,
    /// no keys of an overlay.
    patched: Vec<Entry>,
}

/// The KRM form's `apiVersion`, `kind` and `metadata` taken off; the
/// comments on them go to the file's.
fn bare(
    root: Node,
    comments: &mut Comments,
    overlay: bool,
    notes: &mut Vec<Diagnostic>,
) -> Result<Bare, Vec<Diagnostic>> {
    let Value::Table(top) = root.value else {
        return Err(vec![
            Diagnostic::error(
                codes::SCHEMA_TYPE,
                root.span,
                "a spec is a table of keys, and this document is not one",
            )
            .with_help("write the spec's keys at the top level: `name = \"my-job\"`"),
        ]);
    };
    let is_krm = top.iter().any(|e| e.key == "apiVersion" || e.key == "kind");
    if !is_krm {
        return Ok(Bare {
            entries: top,
            patched: Vec::new(),
        });
    }
    let mut spec = Vec::new();
    let mut metadata = Vec::new();
    for entry in top {
        let own = comments.take(Place::Key(entry.key_span.start));
        comments.header.extend(own_lines(own));
        match entry.key.as_str() {
            "apiVersion" if entry.value.as_str() != Some(KRM_API_VERSION) => {
                return Err(vec![not_trainspec(&entry, "apiVersion", KRM_API_VERSION)]);
            }
            "kind" if entry.value.as_str() != Some(KRM_KIND) => {
                return Err(vec![not_trainspec(&entry, "kind", KRM_KIND)]);
            }
            "apiVersion" | "kind" => {}
            "spec" => match entry.value.value {
                Value::Table(entries) => spec = entries,
                Value::Null => {}
                _ => return Err(vec![not_a_table(&entry)]),
            },
            "metadata" => match entry.value.value {
                Value::Table(entries) => metadata = entries,
                Value::Null => {}
                _ => return Err(vec![not_a_table(&entry)]),
            },
            _ => notes.push(
                Diagnostic::warning(
                    codes::CONVERT_LEFT_OUT,
                    entry.key_span,
                    format!("`{}` is no part of a TrainSpec and is left out", entry.key),
                )
                .with_help("a TrainSpec has `apiVersion`, `kind`, `metadata` and `spec`"),
            ),
        }
    }
    let mut front = Vec::new();
    let mut patched = Vec::new();
    for entry in metadata {
        match entry.key.as_str() {
            "name" | "namespace" if overlay => patched.push(entry),
            "name" | "namespace" => front.push(entry),
            "labels" | "annotations" => merge_into(&mut spec, &mut front, entry),
            _ => {
                let own = comments.take(Place::Key(entry.key_span.start));
                comments.header.extend(own_lines(own));
                notes.push(
                    Diagnostic::warning(
                        codes::CONVERT_LEFT_OUT,
                        entry.key_span,
                        format!(
                            "`metadata.{}` is no part of a spec and is left out",
                            entry.key
                        ),
                    )
                    .with_help(
                        "a spec keeps `metadata.name`, `namespace`, `labels` and `annotations`",
                    ),
                );
            }
        }
    }
    front.append(&mut spec);
    Ok(Bare {
        entries: front,
        patched,
    })
}

/// `metadata.labels` (or `annotations`) put before the spec's own, which
/// win on a key set in both (as `trainc build` reads them, it is an error
/// there).
fn merge_into(spec: &mut [Entry], front: &mut Vec<Entry>, entry: Entry) {
    let Some(in_spec) = spec.iter_mut().find(|e| e.key == entry.key) else {
        front.push(entry);
        return;
    };
    if let (Value::Table(mine), Value::Table(theirs)) =
        (&mut in_spec.value.value, entry.value.value)
    {
        let mut merged: Vec<Entry> = theirs
            .into_iter()
            .filter(|t| !mine.iter().any(|m| m.key == t.key))
            .collect();
        merged.append(mine);
        *mine = merged;
    }
}

fn own_lines(notes: Notes) -> impl Iterator<Item = String> {
    notes
        .above
        .into_iter()
        .filter(|l| !l.is_empty())
        .chain(notes.after)
}

fn not_trainspec(entry: &Entry, field: &str, expected: &str) -> Diagnostic {
    let found = entry.value.as_str().unwrap_or("?");
    Diagnostic::error(
        codes::KRM_KIND,
        entry.value.span,
        format!("this is no TrainSpec: its {field} is `{found}`, where a TrainSpec's is `{expected}`"),
    )
    .with_help("`trainc convert` turns specs and overlays from one form into another; `trainc import` turns PyTorchJobs and TrainJobs into specs")
}

fn not_a_table(entry: &Entry) -> Diagnostic {
    Diagnostic::error(
        codes::SCHEMA_TYPE,
        entry.value.span,
        format!("`{}` must be a mapping", entry.key),
    )
}

/// A spec's `null`s: TOML has none, and a spec's `null` sets nothing.
fn drop_nulls(entries: &mut Vec<Entry>, notes: &mut Vec<Diagnostic>) {
    entries.retain_mut(|entry| {
        if matches!(entry.value.value, Value::Null) {
            notes.push(
                Diagnostic::warning(
                    codes::CONVERT_LEFT_OUT,
                    entry.key_span,
                    format!("`{}` is `null`, which TOML cannot write: it is left out", entry.key),
                )
                .with_help("a `null` in a spec sets nothing; in an overlay it removes the key (convert it with `--as-overlay`)"),
            );
            return false;
        }
        if let Value::Table(inner) = &mut entry.value.value {
            drop_nulls(inner, notes);
        }
        true
    });
}

/// The KRM form of the bare `doc`: `name` and `namespace` in `metadata`.
fn krm(doc: Bare, request: &Request, synthetic: Span) -> Result<Vec<Entry>, Vec<Diagnostic>> {
    let mut metadata = Vec::new();
    let mut spec = Vec::new();
    let mut problems = Vec::new();
    for entry in doc.entries {
        match entry.key.as_str() {
            "name" | "namespace" if request.overlay => problems.push(
                Diagnostic::error(
                    codes::CONVERT_NO_FORM,
                    entry.key_span,
                    format!("an overlay's `{}` has no form as a kustomize patch: the patch names the TrainSpec it changes and cannot change that", entry.key),
                )
                .with_help(if entry.key == "name" {
                    "rename with the kustomization's `nameSuffix: -gpu` (or `namePrefix`), and leave `name` out of the overlay"
                } else {
                    "set the namespace with the kustomization's `namespace:`, and leave it out of the overlay"
                }),
            ),
            "name" | "namespace" => metadata.push(entry),
            _ => spec.push(entry),
        }
    }
    if request.overlay {
        let named = match &request.name {
            Some(name) => {
                let mut named = vec![text_entry("name", name, synthetic)];
                if let Some(namespace) = &request.namespace {
                    named.push(text_entry("namespace", namespace, synthetic));
                }
                named
            }
            None => doc.patched,
        };
        if named.is_empty() {
            problems.push(
                Diagnostic::error(
                    codes::CONVERT_NO_FORM,
                    Span::new(synthetic.source, 0, 0),
                    "a TrainSpec patch names the TrainSpec it patches, and an overlay has no name",
                )
                .with_help("give it: `--name NAME`, the `name` of the spec this overlay goes over (and `--namespace` for a spec's namespace)"),
            );
        }
        metadata.splice(0..0, named);
    } else if !metadata.iter().any(|e| e.key == "name") {
        problems.push(
            Diagnostic::error(
                codes::SCHEMA_MISSING_KEY,
                Span::new(synthetic.source, 0, 0),
                "the spec has no `name`, and a TrainSpec is named by its `metadata.name`",
            )
            .with_help("add `name = \"my-job\"` to the spec; if this is an overlay, convert it with `--as-overlay`"),
        );
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(vec![
        text_entry("apiVersion", KRM_API_VERSION, synthetic),
        text_entry("kind", KRM_KIND, synthetic),
        table_entry("metadata", metadata, synthetic),
        table_entry("spec", spec, synthetic),
    ])
}

fn text_entry(key: &str, text: &str, synthetic: Span) -> Entry {
    Entry {
        key: key.to_owned(),
        key_span: synthetic,
        value: Node::new(Value::String(text.to_owned()), synthetic),
    }
}

fn table_entry(key: &str, entries: Vec<Entry>, synthetic: Span) -> Entry {
    Entry {
        key: key.to_owned(),
        key_span: synthetic,
        value: Node::new(Value::Table(entries), synthetic),
    }
}

/// The schema the target form's editors read, beside the one named:
/// `../schemas/trainspec.schema.json` for TOML and bare YAML,
/// `trainspec-krm.schema.json` for a TrainSpec, and the overlay's and
/// patch's own.
fn schema_for(path: &str, request: &Request) -> String {
    let file = match (request.to, request.overlay) {
        (Form::TrainSpec, true) => "trainspec-patch.schema.json",
        (_, true) => "overlay.schema.json",
        (Form::TrainSpec, false) => "trainspec-krm.schema.json",
        (_, false) => "trainspec.schema.json",
    };
    match path.rfind('/') {
        Some(slash) => format!("{}{file}", &path[..=slash]),
        None => file.to_owned(),
    }
}

/// The text written, read back: the same document as what was read, in
/// its bare form (an overlay's `null`s and `unset` entries as one list), or
/// an error — a bug of `convert`'s, never a silent loss.
fn read_back(
    original: Option<serde_json::Value>,
    id: SourceId,
    request: &Request,
    text: &str,
) -> Result<(), Vec<Diagnostic>> {
    let mut scratch = Sources::new();
    let name = match request.to {
        Form::Toml => "converted.toml",
        Form::Yaml | Form::TrainSpec => "converted.yaml",
    };
    let written = scratch.add(name, text.to_owned());
    let again = parse::parse_as_written(written, scratch.get(written))
        .ok()
        .and_then(|(root, _)| canonical(root, written, request.overlay));
    match (original, again) {
        (Some(a), Some(b)) if a == b => Ok(()),
        _ => Err(vec![bug_in_convert(id)]),
    }
}

fn bug_in_convert(id: SourceId) -> Diagnostic {
    Diagnostic::error(
        codes::CONVERT_NO_FORM,
        Span::new(id, 0, 0),
        "the converted text does not read back as the same document; nothing was written",
    )
    .with_help("this is a bug in trainc; please report it with the file")
}

/// A document as JSON in a form that does not depend on how it was written.
fn canonical(root: Node, id: SourceId, overlay: bool) -> Option<serde_json::Value> {
    let mut comments = Comments::default();
    let mut doc = bare(root, &mut comments, overlay, &mut Vec::new()).ok()?;
    if overlay {
        let mut paths = Vec::new();
        take_nulls(
            &mut doc.entries,
            &mut Vec::new(),
            &mut paths,
            &mut comments,
            &mut Notes::default(),
        );
        if let Some(i) = doc.entries.iter().position(|e| e.key == UNSET) {
            let unset = doc.entries.remove(i);
            if let Value::Array(items) = unset.value.value {
                for item in items {
                    let path = split_path(item.as_str()?).ok()?;
                    paths.push(dotted(&path));
                }
            }
        }
        // An unset path the overlay also sets is replaced by its value.
        paths.retain(|p| split_path(p).is_ok_and(|path| !is_set(&doc.entries, &path)));
        paths.sort();
        paths.dedup();
        let mut json = Node::new(Value::Table(doc.entries), Span::new(id, 0, 0)).to_json();
        if !paths.is_empty() {
            json.as_object_mut()?
                .insert(UNSET.to_owned(), serde_json::json!(paths));
        }
        return Some(json);
    }
    drop_nulls(&mut doc.entries, &mut Vec::new());
    Some(Node::new(Value::Table(doc.entries), Span::new(id, 0, 0)).to_json())
}
