//! Validation pass 2: semantic rules on the typed spec.
//!
//! Each submodule checks one area and reports through [`Rules`], which turns
//! a JSON pointer into the span the user wrote. Rules read the spec and never
//! change it; defaults are not applied here (that is the resolve stage's job),
//! but a rule that depends on one (the replica count) uses the same default.

use crate::diagnostic::Diagnostic;
use crate::source::{Sources, Span};
use crate::spec::{ApiLevel, Spec, Target};
use crate::tree::{Node, pointer_segment};

mod code;
mod env;
mod env_refs;
mod indexed;
mod initializer;
mod injected;
mod job;
mod kueue;
mod master;
mod metadata;
mod nproc;
mod pod;
mod pod_template;
mod resources;
mod runtime;
mod scheduling;
mod target;
mod text;
mod torchtune;
mod volumes;
mod warnings;

/// Runs every rule; returns errors and warnings in no particular order.
pub(crate) fn check(spec: &Spec, tree: &Node, sources: &Sources) -> Vec<Diagnostic> {
    let mut rules = Rules {
        spec,
        tree,
        sources,
        out: Vec::new(),
    };
    job::check(&mut rules);
    master::check(&mut rules);
    nproc::check(&mut rules);
    resources::check(&mut rules);
    code::check(&mut rules);
    env::check(&mut rules);
    pod::check(&mut rules);
    pod_template::check(&mut rules);
    volumes::check(&mut rules);
    metadata::check(&mut rules);
    scheduling::check(&mut rules);
    kueue::check(&mut rules);
    target::check(&mut rules);
    initializer::check(&mut rules);
    text::check(&mut rules);
    warnings::check(&mut rules);
    rules.out
}

/// The rules that read the runtime a TrainJob runs on, once it is known
/// (see [`crate::bind::runtime`]).
pub(crate) fn check_runtime(
    spec: &Spec,
    tree: &Node,
    sources: &Sources,
    bound: &crate::trainer::bind::Bound,
) -> Vec<Diagnostic> {
    let mut rules = Rules {
        spec,
        tree,
        sources,
        out: Vec::new(),
    };
    runtime::check(&mut rules, bound);
    initializer::against(&mut rules, bound);
    rules.out
}

/// What every rule needs: the spec, where each of its values was written, and
/// somewhere to put diagnostics.
pub(crate) struct Rules<'a> {
    pub(crate) spec: &'a Spec,
    tree: &'a Node,
    sources: &'a Sources,
    pub(crate) out: Vec<Diagnostic>,
}

impl Rules<'_> {
    /// Span of the value at a JSON pointer.
    pub(crate) fn value(&self, pointer: &str) -> Span {
        self.tree.span_at(pointer)
    }

    /// The value at a JSON pointer as the user wrote it (see [`crate::validate::written`]).
    pub(crate) fn written(&self, pointer: &str) -> String {
        crate::validate::written(self.tree, self.sources, pointer)
    }

    /// `key` set to `value` (written in TOML's syntax, which YAML's
    /// matches for numbers and quoted strings) as the file at `pointer`
    /// writes it: `key = value` or `key: value`.
    pub(crate) fn line(&self, pointer: &str, key: &str, value: &str) -> String {
        match crate::parse::Format::detect(self.sources.get(self.value(pointer).source)) {
            crate::parse::Format::Toml => format!("{key} = {value}"),
            crate::parse::Format::Yaml => format!("{key}: {value}"),
        }
    }

    /// Whether the user wrote something at a JSON pointer.
    pub(crate) fn tree_has(&self, pointer: &str) -> bool {
        self.tree.pointer(pointer).is_some()
    }

    /// Whether the table at `pointer` holds a key the spec's schema does not
    /// have there (an unknown key, reported by the schema stage and set
    /// aside before the rules run).
    pub(crate) fn has_unknown_keys(&self, pointer: &str) -> bool {
        let known = crate::spec::schema_lookup::schema_at_pointer(pointer)
            .and_then(|s| s.get("properties"))
            .and_then(serde_json::Value::as_object);
        let Some(known) = known else { return false };
        self.tree
            .pointer(pointer)
            .and_then(|(node, _)| node.as_table())
            .into_iter()
            .flatten()
            .any(|e| !known.contains_key(&e.key))
    }

    /// Span of the key at a JSON pointer.
    pub(crate) fn key(&self, pointer: &str) -> Span {
        self.tree.key_span_at(pointer)
    }

    /// Span of `key = value` at a JSON pointer.
    pub(crate) fn entry(&self, pointer: &str) -> Span {
        self.tree.entry_span_at(pointer)
    }

    /// Span at the start of the file the spec's root came from.
    pub(crate) fn start(&self) -> Span {
        Span::new(
            self.tree.span.source,
            self.tree.span.start,
            self.tree.span.start,
        )
    }

    pub(crate) fn target(&self) -> Target {
        self.spec.target.unwrap_or(Target::Pytorchjob)
    }

    /// The Trainer API level a TrainJob is built for.
    pub(crate) fn api_level(&self) -> ApiLevel {
        self.spec
            .trainjob
            .as_ref()
            .and_then(|t| t.api_level)
            .unwrap_or(crate::spec::defaults::TRAINJOB_API_LEVEL)
    }

    /// Whether trainc writes the TrainingRuntime the TrainJob runs on
    /// (`[trainjob] writeRuntime`), which carries the whole pod.
    pub(crate) fn writes_runtime(&self) -> bool {
        self.target() == Target::Trainjob
            && self.spec.trainjob.as_ref().and_then(|t| t.write_runtime) == Some(true)
    }

    /// Most pods the job can run; 1 when `replicas` is not set.
    pub(crate) fn max_replicas(&self) -> u32 {
        self.spec
            .replicas
            .as_ref()
            .map_or(1, crate::spec::Replicas::max)
    }

    /// Whether `replicas` is an elastic `"min:max"` range.
    pub(crate) fn is_elastic(&self) -> bool {
        self.spec
            .replicas
            .as_ref()
            .is_some_and(crate::spec::Replicas::is_elastic)
    }

    pub(crate) fn gpus(&self) -> u32 {
        self.spec
            .resources
            .as_ref()
            .and_then(|r| r.gpus)
            .unwrap_or(0)
    }

    /// Where to point at a TrainJob's runtime: its name, else `target`.
    pub(crate) fn at_runtime(&self) -> Span {
        if self.tree_has("/trainjob/runtime") {
            self.value("/trainjob/runtime")
        } else {
            self.value("/target")
        }
    }

    pub(crate) fn push(&mut self, diagnostic: Diagnostic) {
        self.out.push(diagnostic);
    }
}

/// `/base/key` with `key` escaped.
pub(crate) fn at(base: &str, key: &str) -> String {
    format!("{base}/{}", pointer_segment(key))
}

/// An error about a name that failed its syntax (`bad`), with the nearest
/// valid name as its help.
pub(crate) fn name_error(
    code: &'static str,
    span: Span,
    message: String,
    bad: &crate::syntax::names::Invalid,
) -> Diagnostic {
    let d = Diagnostic::error(code, span, message);
    match &bad.better {
        Some(better) => d.with_help(format!("try `{better}`")),
        None => d,
    }
}

/// "target `T` cannot express WHAT" at the key at `pointer`, with what to do
/// instead.
fn cannot_express(r: &mut Rules<'_>, pointer: &str, what: &str, help: &str) {
    r.push(
        Diagnostic::error(
            crate::diagnostic::codes::TARGET_UNSUPPORTED,
            r.key(pointer),
            format!("target `{}` cannot express {what}", r.target().as_str()),
        )
        .with_help(help.to_owned()),
    );
}
