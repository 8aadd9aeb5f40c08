//! Stage 2, parse: TOML or YAML text into a [`Node`] tree with a span on every
//! key and value.
//!
//! YAML comes bare (the spec's fields at the top level) or wrapped as a KRM
//! object (`apiVersion: trainc.dev/v1alpha1`, `kind: TrainSpec`, `metadata`,
//! `spec`); both unwrap to the same tree. The format is chosen by extension,
//! else by content. This stage knows nothing about which keys a spec has.

use crate::diagnostic::{Diagnostic, codes};
use crate::source::{Source, SourceId};
use crate::tree::{Node, Value};

mod krm_form;
mod readings;
mod syntax_help;
mod toml;
mod yaml;

use self::krm_form::unwrap_krm;
use self::toml::parse_toml;
use self::yaml::parse_yaml;

/// The KRM apiVersion and kind of a TrainSpec.
pub const KRM_API_VERSION: &str = "trainc.dev/v1alpha1";
pub const KRM_KIND: &str = "TrainSpec";

/// No valid spec nests deeper than 5 levels (`volumes.data.accessModes[0]`, one
/// more in the KRM form); anything past this is rejected before it is walked.
pub const MAX_DEPTH: usize = 12;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Toml,
    Yaml,
}

impl Format {
    /// By extension; otherwise a YAML-looking first line (`key: value`, `---`)
    /// means YAML and anything else TOML.
    pub fn detect(source: &Source) -> Format {
        let extension = std::path::Path::new(&source.name)
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("");
        if extension.eq_ignore_ascii_case("toml") {
            return Format::Toml;
        }
        if extension.eq_ignore_ascii_case("yaml") || extension.eq_ignore_ascii_case("yml") {
            return Format::Yaml;
        }
        let first = source
            .text
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty() && !line.starts_with('#'));
        match first {
            // A YAML directive, or JSON (which is YAML): TOML has neither.
            Some(line)
                if line.starts_with('%') || line.starts_with('{') || line.starts_with("[{") =>
            {
                Format::Yaml
            }
            Some(line) if line.starts_with("---") || line.starts_with("- ") => Format::Yaml,
            Some(line) if line.starts_with('[') => Format::Toml,
            Some(line) => match (line.find(':'), line.find('=')) {
                (Some(colon), Some(eq)) if colon < eq => Format::Yaml,
                (Some(_), None) => Format::Yaml,
                _ => Format::Toml,
            },
            None => Format::Toml,
        }
    }
}

/// Whether `source` is a trainc spec rather than Kubernetes manifests: TOML
/// (which no manifest is), or YAML whose top level has `name` and no
/// `apiVersion` or `kind`. `verify`, `import` and `migrate` read manifests,
/// and say so.
pub fn is_spec(source: &Source) -> bool {
    if Format::detect(source) == Format::Toml {
        return true;
    }
    let top = |key: &str| {
        source
            .text
            .lines()
            .any(|l| l.strip_prefix(key).is_some_and(|r| r.starts_with(':')))
    };
    top("name") && !top("apiVersion") && !top("kind") && !top("---")
}

/// Whether `text` holds nothing but blank lines, comments and `---`.
pub fn is_blank(text: &str) -> bool {
    text.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#') || l == "---"
    })
}

/// A spec with nothing in it but blank lines and comments: an error of its
/// own, not a spec missing `name`.
pub fn empty_spec(id: SourceId, source: &Source) -> Option<Diagnostic> {
    is_blank(&source.text).then(|| {
        let stdin = source.name == "<stdin>";
        let (what, help) = if stdin {
            (
                "the standard input is empty",
                "if a command feeds trainc, check that it succeeded (`set -o pipefail` makes a shell pipeline fail with it)",
            )
        } else {
            (
                "the spec is empty",
                "write a spec in it: `trainc init FILE` writes a starter that passes `trainc check`",
            )
        };
        Diagnostic::error(codes::PARSE_EMPTY, crate::source::Span::new(id, 0, 0), what)
            .with_help(help)
    })
}

/// Parses one source into a tree whose root is a table of spec fields.
pub fn parse(id: SourceId, source: &Source) -> Result<Node, Vec<Diagnostic>> {
    let format = Format::detect(source);
    let parsed = match format {
        Format::Toml => parse_toml(id, &source.text).and_then(within_depth),
        Format::Yaml => parse_yaml(id, &source.text, MAX_DEPTH).and_then(spec_from_node),
    };
    parsed.map_err(|problems| other_format(id, source, format).map_or(problems, |d| vec![d]))
}

/// One source as written, in its format: the KRM form is not unwrapped (what
/// `trainc convert` reads, to write the document back in another form).
pub fn parse_as_written(id: SourceId, source: &Source) -> Result<(Node, Format), Vec<Diagnostic>> {
    let format = Format::detect(source);
    let parsed = match format {
        Format::Toml => parse_toml(id, &source.text),
        Format::Yaml => parse_yaml(id, &source.text, MAX_DEPTH + 2),
    };
    let parsed = parsed.and_then(within_depth_of(MAX_DEPTH + 2));
    match parsed {
        Ok(root) => Ok((root, format)),
        Err(problems) => Err(other_format(id, source, format).map_or(problems, |d| vec![d])),
    }
}

/// A file its name calls YAML that is TOML, or the reverse: the one error to
/// report instead of the parser's (a YAML parser reads `name = "a"` lines as
/// one plain string).
fn other_format(id: SourceId, source: &Source, format: Format) -> Option<Diagnostic> {
    let path = std::path::Path::new(&source.name);
    let extension = path.extension()?.to_str()?;
    let (written, other_extension) = match format {
        Format::Yaml => {
            let root = parse_toml(id, &source.text).ok()?;
            (root.as_table().is_some_and(|t| !t.is_empty()), "toml")
        }
        Format::Toml => {
            let root = parse_yaml(id, &source.text, MAX_DEPTH).ok()?;
            (root.as_table().is_some_and(|t| !t.is_empty()), "yaml")
        }
    };
    if !written {
        return None;
    }
    let (found, read_as, example) = match format {
        Format::Yaml => ("TOML", "YAML", "`name: my-job`"),
        Format::Toml => ("YAML", "TOML", "`name = \"my-job\"`"),
    };
    let first = source
        .text
        .lines()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .unwrap_or("");
    let start = first.as_ptr() as usize - source.text.as_ptr() as usize;
    let renamed = path.with_extension(other_extension);
    let renamed = renamed.file_name().and_then(|n| n.to_str()).unwrap_or("");
    Some(
        Diagnostic::error(
            codes::PARSE_OTHER_FORMAT,
            crate::source::Span::new(id, start, start + first.len()),
            format!("this file is {found}, but its name ends in `.{extension}`, so it is read as {read_as}"),
        )
        .with_help(format!("rename it `{renamed}`, or write it as {read_as} ({example})")),
    )
}

/// A warning for a TrainSpec that asks to be run as an exec KRM function
/// (`config.kubernetes.io/function: exec:`) from a kustomization: `kubectl
/// kustomize` has no `--enable-exec` (kubectl v1.32, kustomize v5.5.0), and
/// kustomize then skips the function without a word (kubernetes-sigs/kustomize
/// kustomize/v5.5.0, api/internal/plugins/fnplugin/fnplugin.go with
/// kyaml/runfn/runfn.go `EnableExec`): the build succeeds with no job in it.
pub fn exec_function_warning(id: SourceId, source: &Source) -> Option<Diagnostic> {
    const KEY: &str = "config.kubernetes.io/function";
    if Format::detect(source) != Format::Yaml || !source.text.contains(KEY) {
        return None;
    }
    let root = parse_yaml(id, &source.text, MAX_DEPTH).ok()?;
    let entry = root
        .get("metadata")?
        .value
        .get("annotations")?
        .value
        .get(KEY)?;
    let exec = entry
        .value
        .as_str()?
        .lines()
        .any(|l| l.trim_start().starts_with("exec:"));
    exec.then(|| {
        Diagnostic::warning(
            codes::KRM_EXEC_FUNCTION,
            entry.key_span,
            "`kubectl kustomize` never runs an exec function: with this annotation it generates nothing and succeeds",
        )
        .with_help("remove the annotation and install trainc as kustomize's plugin (`trainc plugin install`, then `kubectl kustomize --enable-alpha-plugins`); standalone `kustomize build --enable-alpha-plugins --enable-exec` does run it")
    })
}

/// A spec from a YAML node parsed elsewhere (a ResourceList's functionConfig):
/// bare or KRM form, nesting checked.
pub fn spec_from_node(node: Node) -> Result<Node, Vec<Diagnostic>> {
    within_depth(unwrap_krm(node)?)
}

/// A YAML node read elsewhere (a ResourceList's functionConfig) as a tree,
/// every scalar resolved as in a spec.
pub fn yaml_to_node(raw: &crate::yaml::Raw<'_>) -> Result<Node, Vec<Diagnostic>> {
    yaml::to_node(raw.clone())
}

/// The diagnostic for YAML that could not be read as Kubernetes objects.
pub fn yaml_load_error(
    id: SourceId,
    text: &str,
    error: &crate::yaml::LoadError,
    max_depth: usize,
) -> Diagnostic {
    yaml::load_error(id, text, error, max_depth, yaml::Subject::Objects)
}

/// Any single YAML document, with spans, nesting at most `max_depth` levels.
pub fn parse_yaml_document(
    id: SourceId,
    text: &str,
    max_depth: usize,
) -> Result<Node, Vec<Diagnostic>> {
    parse_yaml(id, text, max_depth)
}

/// Every document of a YAML stream (Kubernetes manifests), with spans, each
/// scalar read as Kubernetes reads it (see [`ManifestStream`]).
pub fn parse_yaml_stream(
    id: SourceId,
    text: &str,
    max_depth: usize,
    max_documents: usize,
) -> Result<Vec<Node>, Vec<Diagnostic>> {
    parse_manifest_stream(id, text, max_depth, max_documents).map(|s| s.documents)
}

/// [`parse_yaml_stream`], each document (its number, from 1, and its
/// tree) given to `f` as it is made and not held after; see
/// [`yaml::each_manifest`] for what an `Err` means for the documents given.
pub fn each_yaml_document(
    id: SourceId,
    text: &str,
    max_depth: usize,
    max_documents: usize,
    f: &mut dyn FnMut(usize, Node),
) -> Result<(), Vec<Diagnostic>> {
    yaml::each_manifest(id, text, 0..text.len(), max_depth, max_documents, f).map(|_| ())
}

/// The documents of a manifest stream, each scalar read as Kubernetes reads
/// it (YAML 1.1: see [`crate::yaml::kubernetes`]), and a warning at each
/// scalar a YAML 1.2 reader reads otherwise (`0644`, `yes`, `1_0`).
pub struct ManifestStream {
    pub documents: Vec<Node>,
    pub readings: Vec<Diagnostic>,
}

/// [`parse_yaml_stream`] with the warnings of [`ManifestStream`].
pub fn parse_manifest_stream(
    id: SourceId,
    text: &str,
    max_depth: usize,
    max_documents: usize,
) -> Result<ManifestStream, Vec<Diagnostic>> {
    yaml::parse_manifest_stream(id, text, 0..text.len(), max_depth, max_documents)
}

/// [`parse_manifest_stream`] of the bytes `part` of `text` alone (a
/// [`crate::yaml::Part`], or several), its spans the whole text's.
pub fn parse_manifest_part(
    id: SourceId,
    text: &str,
    part: std::ops::Range<usize>,
    max_depth: usize,
    max_documents: usize,
) -> Result<ManifestStream, Vec<Diagnostic>> {
    yaml::parse_manifest_stream(id, text, part, max_depth, max_documents)
}

/// One object of a manifest stream: its document (1-based, among the
/// stream's documents) and its node. A `v1 List` (what `kubectl get -o yaml`
/// prints) gives one per item.
pub struct StreamObject<'a> {
    pub document: usize,
    pub node: &'a Node,
}

/// The objects of `documents`, a `v1 List`'s items one by one, and the
/// documents that are not mappings (not objects at all).
pub fn stream_objects(documents: &[Node]) -> (Vec<StreamObject<'_>>, Vec<(usize, &Node)>) {
    let mut objects = Vec::new();
    let mut not_objects = Vec::new();
    for (i, node) in documents.iter().enumerate() {
        let document = i + 1;
        // An empty document (nothing, or comments only, after `---`) is
        // skipped, as kubectl's decoder skips it.
        if matches!(node.value, Value::Null) {
            continue;
        }
        if !matches!(node.value, Value::Table(_)) {
            not_objects.push((document, node));
            continue;
        }
        let is_list = node.get("kind").and_then(|k| k.value.as_str()) == Some("List");
        match node.get("items").map(|e| &e.value.value) {
            Some(Value::Array(items)) if is_list => {
                objects.extend(items.iter().map(|node| StreamObject { document, node }));
            }
            _ => objects.push(StreamObject { document, node }),
        }
    }
    (objects, not_objects)
}

/// An error for each document of `not_objects` ([`stream_objects`]);
/// `of` names the file where the reader needs telling (" of the runtimes
/// file"), `help` says what belongs in it.
pub fn not_objects_errors(
    not_objects: Vec<(usize, &Node)>,
    code: &'static str,
    of: &str,
    help: &str,
) -> Vec<Diagnostic> {
    not_objects
        .into_iter()
        .map(|(number, document)| {
            Diagnostic::error(
                code,
                document.span,
                format!("document {number}{of} is not a Kubernetes object (a mapping with `apiVersion` and `kind`)"),
            )
            .with_help(help)
        })
        .collect()
}

fn within_depth(root: Node) -> Result<Node, Vec<Diagnostic>> {
    within_depth_of(MAX_DEPTH)(root)
}

fn within_depth_of(limit: usize) -> impl Fn(Node) -> Result<Node, Vec<Diagnostic>> {
    move |root| {
        if let Some(deep) = root.deeper_than(limit) {
            return Err(vec![
                Diagnostic::error(
                    codes::PARSE_TOO_DEEP,
                    deep,
                    format!("the document nests deeper than {limit} levels"),
                )
                .with_help("no spec nests this deep; check that this is a training spec"),
            ]);
        }
        Ok(root)
    }
}

pub(super) fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) if !chars.as_str().starts_with(|c: char| c.is_uppercase()) => {
            first.to_lowercase().chain(chars).collect()
        }
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Sources;

    fn parse_text(name: &str, text: &str) -> Result<Node, Vec<Diagnostic>> {
        let mut sources = Sources::new();
        let id = sources.add(name, text);
        parse(id, sources.get(id))
    }

    #[test]
    fn toml_and_yaml_give_the_same_json() {
        let toml = parse_text("a.toml", "name = \"x\"\nreplicas = 2\n[env]\nA = \"1\"\n").unwrap();
        let yaml = parse_text("a.yaml", "name: x\nreplicas: 2\nenv:\n  A: \"1\"\n").unwrap();
        assert_eq!(toml.to_json(), yaml.to_json());
    }

    #[test]
    fn krm_form_unwraps_to_the_bare_form() {
        let krm = "apiVersion: trainc.dev/v1alpha1\nkind: TrainSpec\nmetadata:\n  name: x\n  annotations: {a: b, config.kubernetes.io/local-config: \"true\"}\nspec:\n  replicas: 2\n";
        let node = parse_text("k.yaml", krm).unwrap();
        // The job's annotations join the spec; the tools' own are left out.
        assert_eq!(
            node.to_json(),
            serde_json::json!({"name": "x", "replicas": 2, "annotations": {"a": "b"}})
        );
        let (name, _) = node.pointer("/name").unwrap();
        assert_eq!(&krm[name.span.start..name.span.end], "x");
    }

    #[test]
    fn content_decides_without_an_extension() {
        assert!(parse_text("-", "name: x\n").unwrap().get("name").is_some());
        assert!(
            parse_text("-", "# c\nname = \"x\"\n")
                .unwrap()
                .get("name")
                .is_some()
        );
    }

    #[test]
    fn yaml_11_booleans_stay_strings() {
        let node = parse_text("a.yaml", "suspend: yes\n").unwrap();
        assert_eq!(node.to_json(), serde_json::json!({"suspend": "yes"}));
    }

    #[test]
    fn deep_nesting_is_rejected_not_a_crash() {
        for text in [
            format!("a = {}1{}", "[".repeat(100_000), "]".repeat(100_000)),
            format!("a: {}1{}", "[".repeat(100_000), "]".repeat(100_000)),
        ] {
            let name = if text.contains('=') {
                "d.toml"
            } else {
                "d.yaml"
            };
            assert!(parse_text(name, &text).is_err());
        }
        let dotted = format!(
            "{} = 1",
            (0..20)
                .map(|i| format!("k{i}"))
                .collect::<Vec<_>>()
                .join(".")
        );
        let errs = parse_text("d.toml", &dotted).unwrap_err();
        assert_eq!(errs[0].code, codes::PARSE_TOO_DEEP);
    }
}
