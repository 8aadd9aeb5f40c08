//! trainc compiles a compact training spec into the Kubernetes objects that run
//! distributed PyTorch.
//!
//! The pipeline runs in one direction, one stage per module, chained here:
//!
//! ```text
//! read      source      file -> text, size-limited, UTF-8 checked
//! parse     parse       TOML / YAML / KRM -> Node tree, a span on every key and value
//! compose   compose     overlays deep-merged in order, command-line settings on top;
//!           template    then `{{ }}` templates rendered
//! validate  validate    JSON Schema (every violation), then semantic rules
//! bind      bind        what a valid spec names outside itself: the `[code]` files
//!                       and a TrainJob's runtime, then the rules that need it
//! resolve   resolve     typed spec + defaults -> Model, nothing left to decide
//! render    render      Model -> objects in apply order (PVCs, Services, the job)
//! verify    verify      (--verify) objects against the strict upstream schemas
//! emit      emit        objects -> YAML, JSON, or one file per object
//! ```
//!
//! Under the stages lie the shared foundations (`source`, `diagnostic`,
//! `syntax`, `tree`, `yaml`, `schema_verdict`) and the knowledge every stage
//! reads: what the spec means (`spec`, with its defaults, and `code`) and
//! what each operator does (`trainer`, `cluster`). A module imports only
//! its own layer and those below (CONTRIBUTING.md, "Which module may import
//! which"; `tests/layering.rs` holds the code to it).
//!
//! Each stage collects every problem it finds; the pipeline stops between
//! stages when one is an error, so a user sees all errors of a stage at once.
//! The library never prints and never sees the command line: it returns
//! [`Diagnostic`]s, and the binary (`src/main.rs`, with `cli` and
//! `commands`) parses the command line, decides how to show them, and exits.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod bind;
pub mod cluster;
pub(crate) mod code;
pub mod compose;
pub mod convert;
pub(crate) mod derived;
pub(crate) mod describe;
pub mod diagnostic;
pub mod embedded;
pub mod emit;
pub mod import;
pub mod krm;
pub mod kustomize;
pub mod migrate;
pub mod model;
pub mod parse;
pub mod render;
pub mod resolve;
// `trainc run` starts processes in Linux namespaces under a subreaper:
// Linux only. Elsewhere the command says so (the binary's run_elsewhere).
#[cfg(target_os = "linux")]
pub mod run;
pub mod schema_verdict;
pub mod source;
pub mod spec;
pub mod starter;
pub mod syntax;
pub mod template;
pub mod trainer;
pub mod tree;
pub mod validate;
pub mod verify;
pub mod yaml;

pub use describe::PodList;
pub use diagnostic::Diagnostic;
pub use source::{SourceId, Sources};

use diagnostic::codes;
use render::Object;
use source::Span;
use spec::{ApiLevel, Target};

/// What the front end made of a spec: the typed spec when there was no
/// error, what it was bound to, and every diagnostic (warnings included).
#[derive(Debug)]
pub struct Checked {
    pub spec: Option<spec::Spec>,
    pub bindings: bind::Bindings,
    pub diagnostics: Vec<Diagnostic>,
    /// The warnings the spec's `allowWarnings` acknowledges: not among
    /// `diagnostics`, but listed by `describe`.
    pub acknowledged: Vec<Diagnostic>,
}

impl Checked {
    /// The problems that stopped a stage before bind.
    fn stopped(diagnostics: Vec<Diagnostic>) -> Checked {
        Checked {
            spec: None,
            bindings: bind::Bindings::default(),
            diagnostics,
            acknowledged: Vec::new(),
        }
    }
}

/// The front end for one spec already read into `sources`: parse, then
/// validate and bind.
pub fn check(sources: &Sources, id: SourceId) -> Checked {
    front_end(&mut sources.clone(), &Input::spec(id), &Options::default())
}

/// The files of one compilation, already read into [`Sources`].
#[derive(Debug, Clone)]
pub struct Input {
    pub spec: SourceId,
    /// Merged over the spec in order.
    pub overlays: Vec<SourceId>,
    /// `--runtimes FILE`: the cluster's runtimes, over `[trainjob] runtimesFile`.
    pub runtimes: Option<trainer::file::RuntimesFile>,
}

impl Input {
    pub fn spec(spec: SourceId) -> Input {
        Input {
            spec,
            overlays: Vec::new(),
            runtimes: None,
        }
    }
}

/// What the command line adds to a spec.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--target`: overrides the spec's `target`.
    pub target: Option<Target>,
    /// `--api-level`: overrides `[trainjob] apiLevel`.
    pub api_level: Option<ApiLevel>,
    /// `-n`/`--namespace`: overrides the spec's `namespace`.
    pub namespace: Option<String>,
    /// `--set NAME=VALUE`: template vars over `[vars]`, in order.
    pub sets: Vec<(String, String)>,
    /// `--verify`: check the objects against the upstream schemas and webhook rules.
    pub verify: bool,
    /// `--code-root DIR`: where `[code]` files may be read from, instead of
    /// the spec's directory (see [`bind::Root`]).
    pub code_root: Option<std::path::PathBuf>,
}

/// The result of a build: the objects when there was no error, and every
/// diagnostic (warnings included) found on the way.
#[derive(Debug)]
pub struct Built {
    pub objects: Option<Vec<Object>>,
    pub diagnostics: Vec<Diagnostic>,
    /// What a TrainJob among the objects runs on, for `trainc run`: the
    /// Trainer API level they were built for and the runtime, when trainc
    /// knows it (the runtimes file's or the release's).
    pub trainjob: Option<(ApiLevel, Option<trainer::runtime::Runtime>)>,
}

/// The whole pipeline up to emit, for one spec already read into `sources`.
/// The front end with overlays and command-line settings: parse, compose,
/// render templates, validate, bind.
pub fn check_input(sources: &mut Sources, input: &Input, options: &Options) -> Checked {
    front_end(sources, input, options)
}

/// An overlay checked on its own, without a spec under it: parse, `unset`
/// paths, keys and value types.
pub fn check_overlay(sources: &Sources, overlay: SourceId) -> Vec<Diagnostic> {
    match parse::parse(overlay, sources.get(overlay)) {
        Ok(tree) => {
            let mut problems = compose::check_unset(&tree);
            problems.extend(validate::validate_overlay(&tree, sources));
            problems
        }
        Err(problems) => problems,
    }
}

/// `trainc describe`: the spec in words, or `None` (and the errors) when it is invalid.
/// `build` is the `trainc build ...` command that builds the same objects.
pub fn describe(
    sources: &mut Sources,
    input: &Input,
    options: &Options,
    build: &str,
    with_pods: bool,
) -> (Option<String>, Vec<Diagnostic>) {
    let (model, checked) = resolved(sources, input, options);
    let Some(model) = model else {
        return (None, checked.diagnostics);
    };
    let warnings: Vec<Diagnostic> = checked
        .diagnostics
        .iter()
        .filter(|d| !d.is_error())
        .cloned()
        .collect();
    let text = describe::describe(
        &model,
        &warnings,
        &checked.acknowledged,
        sources,
        build,
        with_pods,
    );
    (Some(text), checked.diagnostics)
}

/// `trainc describe --pods --format json`: the pods the job's controllers
/// make, as a `v1 List` of `Pod` objects (JSON text), and a note when the
/// list holds only some of them; `None` (and the errors) when the spec is
/// invalid, or (an error) when trainc knows of no pods for it.
pub fn describe_pods(
    sources: &mut Sources,
    input: &Input,
    options: &Options,
) -> (Option<PodList>, Vec<Diagnostic>) {
    let (model, checked) = resolved(sources, input, options);
    (model.map(|m| describe::pod_list(&m)), checked.diagnostics)
}

/// The spec's model, when the front end finds no error, and what it found.
fn resolved(
    sources: &mut Sources,
    input: &Input,
    options: &Options,
) -> (Option<model::Model>, Checked) {
    let checked = front_end(sources, input, options);
    let spec = checked
        .spec
        .as_ref()
        .filter(|_| !checked.diagnostics.iter().any(Diagnostic::is_error));
    let bound = &checked.bindings;
    let model = spec.map(|spec| resolve::resolve(spec, &bound.code, bound.runtime.as_ref()));
    (model, checked)
}

/// The whole pipeline up to emit.
pub fn build(sources: &mut Sources, input: &Input, options: &Options) -> Built {
    let checked = front_end(sources, input, options);
    back_end(checked, Span::new(input.spec, 0, 0), options)
}

/// The whole pipeline for a spec already parsed (such as a ResourceList's
/// `functionConfig`), with no overlays: compose, validate, resolve, render.
pub fn build_parsed(sources: &mut Sources, tree: tree::Node, options: &Options) -> Built {
    let start = Span::new(tree.span.source, tree.span.start, tree.span.start);
    let checked = compose_and_validate(sources, tree, Vec::new(), Vec::new(), None, options);
    back_end(checked, start, options)
}

/// Resolve, render and (with `--verify`) verify a checked spec; `start` is
/// where problems with the output itself are reported.
fn back_end(checked: Checked, start: Span, options: &Options) -> Built {
    let Checked {
        spec,
        bindings: bind::Bindings { code, runtime },
        mut diagnostics,
        acknowledged: _,
    } = checked;
    let Some(spec) = spec else {
        return Built {
            objects: None,
            diagnostics,
            trainjob: None,
        };
    };
    let model = resolve::resolve(&spec, &code, runtime.as_ref());
    let objects = render::render(&model);
    if options.verify {
        let known: Vec<_> = runtime
            .iter()
            .filter_map(|b| b.runtime().cloned())
            .collect();
        for problem in verify::verify(&objects, model.trainjob.api_level, &known) {
            let code = problem.code();
            let at = if problem.path.is_empty() {
                String::new()
            } else {
                format!(" at `{}`", problem.path)
            };
            diagnostics.push(
                Diagnostic::error(
                    code,
                    start,
                    format!(
                        "generated {}{at} would be rejected: {}",
                        problem.object, problem.message
                    ),
                )
                .with_help("this is a bug in trainc; please report it with the spec"),
            );
        }
    }
    let failed = diagnostics.iter().any(Diagnostic::is_error);
    let trainjob = (model.target == Target::Trainjob).then(|| {
        let runtime = runtime.as_ref().and_then(|b| b.runtime().cloned());
        (model.trainjob.api_level, runtime)
    });
    Built {
        objects: (!failed).then_some(objects),
        diagnostics,
        trainjob,
    }
}

fn front_end(sources: &mut Sources, input: &Input, options: &Options) -> Checked {
    let mut checked = front_end_in_toml_words(sources, input, options);
    for d in checked
        .diagnostics
        .iter_mut()
        .chain(checked.acknowledged.iter_mut())
    {
        let source = sources.get(d.primary.span.source);
        // The help only: a message quotes what the file says, which stays.
        if parse::Format::detect(source) == parse::Format::Yaml {
            d.help = d.help.as_deref().map(diagnostic::in_yaml);
        }
    }
    checked
}

/// [`front_end`], its fixes said as TOML writes them.
fn front_end_in_toml_words(sources: &mut Sources, input: &Input, options: &Options) -> Checked {
    let parsed = |id: SourceId| parse::parse(id, sources.get(id));
    let mut problems = Vec::new();
    if let Some(empty) = parse::empty_spec(input.spec, sources.get(input.spec)) {
        return Checked::stopped(vec![empty]);
    }
    let tree = parsed(input.spec).map_err(|d| problems.extend(d)).ok();
    problems.extend(parse::exec_function_warning(
        input.spec,
        sources.get(input.spec),
    ));
    let overlays: Vec<_> = input
        .overlays
        .iter()
        .filter_map(|&id| parsed(id).map_err(|d| problems.extend(d)).ok())
        .collect();
    let Some(tree) = tree.filter(|_| !problems.iter().any(Diagnostic::is_error)) else {
        return Checked::stopped(problems);
    };
    if let Some(swapped) = compose::given_as_spec(&tree, &overlays, sources) {
        problems.push(swapped);
        return Checked::stopped(problems);
    }
    compose_and_validate(
        sources,
        tree,
        overlays,
        problems,
        input.runtimes.as_ref(),
        options,
    )
}

/// What the command line sets over the spec and its overlays: `--target`,
/// `--api-level`, `-n`, `--set`.
fn set_from_command_line(tree: &mut tree::Node, sources: &mut Sources, options: &Options) {
    if let Some(target) = options.target {
        compose::set_from_command_line(
            tree,
            sources,
            "--target ",
            &["target"],
            target.as_str(),
            false,
        );
    }
    if let Some(level) = options.api_level {
        compose::set_from_command_line(
            tree,
            sources,
            "--api-level ",
            &["trainjob", "apiLevel"],
            level.as_str(),
            false,
        );
    }
    if let Some(namespace) = &options.namespace {
        compose::set_from_command_line(
            tree,
            sources,
            "--namespace ",
            &["namespace"],
            namespace,
            false,
        );
    }
    for (name, value) in &options.sets {
        compose::set_from_command_line(
            tree,
            sources,
            &format!("--set {name}="),
            &["vars", name],
            value,
            true,
        );
    }
}

/// Overlays and command-line settings on top of `tree`, templates,
/// validation, bind.
fn compose_and_validate(
    sources: &mut Sources,
    mut tree: tree::Node,
    overlays: Vec<tree::Node>,
    mut problems: Vec<Diagnostic>,
    runtimes: Option<&trainer::file::RuntimesFile>,
    options: &Options,
) -> Checked {
    // `--set` first: a name given both ways is said once, as the `--set`.
    let mut required: Vec<template::Required> = options
        .sets
        .iter()
        .map(|(name, _)| template::Required::Set(name.clone()))
        .collect();
    let mut unset = Vec::new();
    for overlay in overlays {
        unset.extend(
            compose::unset_entries(&overlay)
                .into_iter()
                .map(|(path, span)| {
                    let source = sources.get(span.source);
                    let (line, col) = source.line_col(span.start);
                    (path, format!("{}:{line}:{col}", source.name))
                }),
        );
        let vars = overlay.get("vars").and_then(|e| e.value.as_table());
        required.extend(
            vars.into_iter()
                .flatten()
                .map(|e| template::Required::Overlay(e.key.clone())),
        );
        problems.extend(compose::merge_overlay(&mut tree, overlay));
    }
    set_from_command_line(&mut tree, sources, options);
    // A template that failed leaves its text in the tree, which validation
    // would then misreport; any other problem so far (an overlay's bad
    // `unset`, an unused `--set`) still lets validation find the rest.
    template::keep_written(&mut tree, sources);
    let rendered = template::render(&mut tree, &required);
    let unrendered = rendered
        .problems
        .iter()
        .any(|d| d.is_error() && d.code != codes::TEMPLATE_UNUSED_SET);
    problems.extend(rendered.problems);
    if unrendered {
        return Checked::stopped(problems);
    }
    let validated = validate::validate(&tree, sources);
    let mut diagnostics = validated.diagnostics;
    let whole = validated.spec.is_some();
    let mut checked_spec = None;
    let mut bindings = bind::Bindings::default();
    if let Some(spec) = validated.spec.or(validated.partial) {
        let root = bind::Root::of(options.code_root.as_deref(), sources, tree.span.source);
        // A runtime name already found wrong names nothing to look up.
        let named = !diagnostics
            .iter()
            .any(|d| d.is_error() && d.code == codes::TRAINJOB_RUNTIME);
        let (bound, mut found) = bind::bind(&spec, &tree, sources, &root, runtimes, whole, named);
        validated.meant.drop_knock_ons(&mut found);
        diagnostics.append(&mut found);
        bindings = bound;
        if whole && !diagnostics.iter().any(Diagnostic::is_error) {
            checked_spec = Some(spec);
        }
    }
    template::explain(&mut diagnostics, &rendered.strings, &tree, sources);
    validate::knock_on::point_at_unset(&mut diagnostics, &unset);
    problems.append(&mut diagnostics);
    let checked = Checked {
        spec: checked_spec,
        bindings,
        diagnostics: problems,
        acknowledged: Vec::new(),
    };
    warnings_as_errors(&tree, acknowledge(&tree, checked))
}

/// `allowWarnings`: the warnings the spec acknowledges, by code, moved out
/// of the diagnostics (and so out of `warnings = "error"`'s count) into
/// `acknowledged`, which `describe` lists.
fn acknowledge(tree: &tree::Node, mut checked: Checked) -> Checked {
    let Some(tree::Value::Array(items)) = tree.get("allowWarnings").map(|e| &e.value.value) else {
        return checked;
    };
    let allowed: Vec<&str> = items.iter().filter_map(tree::Node::as_str).collect();
    let (acknowledged, kept) = std::mem::take(&mut checked.diagnostics)
        .into_iter()
        .partition(|d| d.severity == diagnostic::Severity::Warning && allowed.contains(&d.code));
    checked.diagnostics = kept;
    checked.acknowledged = acknowledged;
    checked
}

/// `warnings = "error"`: one error that makes the warnings fail the check
/// and the build, at the setting, when there is any warning and no error
/// already; the spec is then not built.
fn warnings_as_errors(tree: &tree::Node, mut checked: Checked) -> Checked {
    let Some(setting) = tree.get("warnings") else {
        return checked;
    };
    let count = checked.diagnostics.len();
    if setting.value.value != tree::Value::String("error".to_owned())
        || count == 0
        || checked.diagnostics.iter().any(Diagnostic::is_error)
    {
        return checked;
    }
    checked.spec = None;
    checked.diagnostics.push(
        Diagnostic::error(
            codes::WARNINGS_AS_ERRORS,
            setting.value.span,
            format!(
                "{count} warning{}, and the spec sets `warnings` to `error`: it fails until {} fixed",
                if count == 1 { "" } else { "s" },
                if count == 1 { "that one is" } else { "they are" }
            ),
        )
        .with_help("fix what the warnings say; `warnings = \"report\"` (the default) lets the build go on with them"),
    );
    checked
}
