//! The job under construction (the spec so far, what goes in
//! `[podTemplate]`, the warnings at their lines), the pod it describes, and
//! the input's other objects a job may claim (its Services and claims).

use std::collections::HashMap;

use serde_json::{Map, Value as Json};

use super::{Object, escape_templates};
use crate::diagnostic::{Diagnostic, codes};
use crate::source::Span;
use crate::spec::Spec;
use crate::tree::Node;

/// The pod a job describes, as the job-kind importers hand it over.
pub(crate) struct Pod<'t> {
    /// The pod spec (or a TrainJob's patch of it).
    pub spec: &'t Json,
    /// Its JSON pointer in the job object.
    pub base: String,
    /// The training container's name: `pytorch`, or the runtime's `node`.
    pub trainer: &'static str,
    /// The most pods the job runs, for the default access mode of a claim.
    pub max_nodes: u64,
    /// Labels that select this job's pods and no other's, for `spreadAcrossNodes`.
    pub own_labels: Vec<Map<String, Json>>,
}

/// One job being imported: the spec so far, what goes in `[podTemplate]`,
/// and the warnings, each at its line of the input.
pub(crate) struct Job<'a> {
    pub(super) node: &'a Node,
    pub(crate) name: String,
    pub(crate) namespace: Option<String>,
    pub(super) at: Span,
    /// The spec's fields, in any order (the typed [`Spec`] orders them).
    pub(super) spec: Map<String, Json>,
    /// `[podTemplate]`: pod metadata, pod spec, and the training container's
    /// fields no spec field carries.
    pub(super) template_metadata: Map<String, Json>,
    pub(super) template_spec: Map<String, Json>,
    pub(super) trainer_rest: Map<String, Json>,
    /// The user's own runtimes the job names, found beside it.
    pub(crate) runtimes: Vec<Json>,
    pub(super) diagnostics: Vec<Diagnostic>,
    /// The spec is for `trainc migrate`, which keeps the objects beside the
    /// job as they are: a claim is used by name, not created again; Services
    /// are left to it; and what a rebuilt PyTorchJob would change is not said.
    pub(super) migrating: bool,
}

impl<'a> Job<'a> {
    /// The job of `object`, its spec named (and placed in its namespace) after it.
    pub(super) fn new(object: &Object<'a>) -> Job<'a> {
        let name = object.name().to_owned();
        let namespace = object.namespace().map(str::to_owned);
        let mut spec = Map::new();
        spec.insert("name".into(), Json::from(name.clone()));
        if let Some(namespace) = &namespace {
            spec.insert("namespace".into(), Json::from(namespace.clone()));
        }
        Job {
            node: object.node,
            name,
            namespace,
            at: object.start(),
            spec,
            template_metadata: Map::new(),
            template_spec: Map::new(),
            trainer_rest: Map::new(),
            runtimes: Vec::new(),
            diagnostics: Vec::new(),
            migrating: false,
        }
    }

    /// Sets a spec field at a JSON pointer of the spec (`/resources/cpu`).
    pub(crate) fn set(&mut self, pointer: &str, value: Json) {
        let mut map = &mut self.spec;
        let mut segments = pointer
            .split('/')
            .skip(1)
            .map(crate::tree::segment_key)
            .peekable();
        while let Some(segment) = segments.next() {
            if segments.peek().is_none() {
                map.insert(segment, value);
                return;
            }
            let next = map
                .entry(segment)
                .or_insert_with(|| Json::Object(Map::new()));
            if !next.is_object() {
                *next = Json::Object(Map::new());
            }
            map = next.as_object_mut().expect("just made an object");
        }
    }

    /// Removes the spec field at a JSON pointer, and returns it.
    pub(crate) fn take(&mut self, pointer: &str) -> Option<Json> {
        let (parent, last) = pointer.rsplit_once('/')?;
        let last = crate::tree::segment_key(last);
        if parent.is_empty() {
            return self.spec.remove(&last);
        }
        let mut segments = parent.split('/').skip(1).map(crate::tree::segment_key);
        let mut value = self.spec.get_mut(&segments.next()?)?;
        for segment in segments {
            value = value.get_mut(&segment)?;
        }
        value.as_object_mut()?.remove(&last)
    }

    pub(crate) fn get(&self, pointer: &str) -> Option<&Json> {
        let mut segments = pointer.split('/').skip(1).map(crate::tree::segment_key);
        let mut value = self.spec.get(&segments.next()?)?;
        for segment in segments {
            value = value.get(&segment)?;
        }
        Some(value)
    }

    /// A warning at the input's field `pointer` (relative to the job object).
    /// Locates what follows in `node` (another object: a runtime trainc
    /// wrote), until put back; returns the node it replaced.
    pub(crate) fn locate_in(&mut self, node: &'a Node) -> &'a Node {
        std::mem::replace(&mut self.node, node)
    }

    pub(crate) fn warn(&mut self, pointer: &str, message: impl Into<String>, help: &str) {
        let span = self.node.key_span_at(pointer);
        let mut d = Diagnostic::warning(codes::IMPORT_DROPPED, span, message);
        if !help.is_empty() {
            d = d.with_help(help.to_owned());
        }
        self.diagnostics.push(d);
    }

    /// A note at the input's field `pointer`: carried, differently written.
    pub(crate) fn note(&mut self, pointer: &str, message: impl Into<String>) {
        let span = self.node.key_span_at(pointer);
        self.diagnostics
            .push(Diagnostic::note(codes::IMPORT_DROPPED, span, message));
    }

    /// An error: the input says something trainc cannot build at all.
    pub(crate) fn error(&mut self, pointer: &str, message: impl Into<String>, help: &str) {
        let span = self.node.key_span_at(pointer);
        self.diagnostics
            .push(Diagnostic::error(codes::IMPORT, span, message).with_help(help.to_owned()));
    }

    /// Every key of `map` not in `known`, as a warning: a field nothing carries.
    pub(crate) fn unknown_keys(&mut self, map: &Json, pointer: &str, known: &[&str], what: &str) {
        for key in map.as_object().into_iter().flat_map(Map::keys) {
            if !known.contains(&key.as_str()) {
                let at = format!("{pointer}/{}", crate::tree::pointer_segment(key));
                self.warn(
                    &at,
                    format!("`{key}` is not imported: {what}"),
                    "set it again on the objects trainc builds (kustomize patch) if the job needs it",
                );
            }
        }
    }

    /// The typed spec, with `[podTemplate]`; `Err` when an error was found.
    pub(super) fn finish(mut self) -> Result<(Spec, Vec<Diagnostic>), Vec<Diagnostic>> {
        let mut template = Map::new();
        if !self.template_metadata.is_empty() {
            template.insert(
                "metadata".into(),
                Json::Object(std::mem::take(&mut self.template_metadata)),
            );
        }
        if !self.trainer_rest.is_empty() {
            let mut trainer = Map::new();
            trainer.insert(
                "name".into(),
                Json::from(crate::spec::defaults::TRAINER_CONTAINER),
            );
            trainer.extend(std::mem::take(&mut self.trainer_rest));
            let containers = self
                .template_spec
                .entry("containers")
                .or_insert_with(|| Json::Array(Vec::new()));
            if let Json::Array(list) = containers {
                list.insert(0, Json::Object(trainer));
            }
        }
        if !self.template_spec.is_empty() {
            template.insert(
                "spec".into(),
                Json::Object(std::mem::take(&mut self.template_spec)),
            );
        }
        if !template.is_empty() {
            self.spec
                .insert("podTemplate".into(), Json::Object(template));
        }
        if self.diagnostics.iter().any(Diagnostic::is_error) {
            return Err(self.diagnostics);
        }
        let mut spec = Json::Object(self.spec);
        escape_templates(&mut spec);
        match serde_json::from_value::<Spec>(spec) {
            Ok(spec) => Ok((spec, self.diagnostics)),
            Err(error) => {
                self.diagnostics.push(
                    Diagnostic::error(
                        codes::IMPORT,
                        self.at,
                        format!(
                            "job `{}` gives a spec trainc cannot read: {error}",
                            self.name
                        ),
                    )
                    .with_help(
                        "this is a bug in trainc import; please report it with the manifest",
                    ),
                );
                Err(self.diagnostics)
            }
        }
    }
}

/// The input's objects other than the jobs, for the claims and services
/// that belong to a job.
pub(crate) struct Others<'o, 'a> {
    pub(super) objects: &'o mut [Object<'a>],
    pub(super) index: &'o Index,
}

/// The input's objects found by kind, name and namespace (the first of
/// each), and its Services by namespace and what they select: looked up,
/// not searched, so that thousands of jobs beside thousands of objects cost
/// their number, not its square.
pub(crate) struct Index {
    named: HashMap<(String, String, Option<String>), usize>,
    services: HashMap<Option<String>, crate::cluster::BySelector<usize>>,
}

/// A Service, by its place among the objects, and its selector.
type Selector = (usize, Map<String, Json>);

impl Index {
    pub(super) fn new(objects: &[Object<'_>]) -> Index {
        let mut named = HashMap::new();
        let mut services: HashMap<Option<String>, Vec<Selector>> = HashMap::new();
        for (i, o) in objects.iter().enumerate() {
            let key = (
                o.kind().to_owned(),
                o.name().to_owned(),
                o.namespace().map(str::to_owned),
            );
            named.entry(key).or_insert(i);
            if o.kind() == "Service"
                && let Some(selector) = o.json["spec"]["selector"].as_object()
            {
                let namespace = o.namespace().map(str::to_owned);
                services
                    .entry(namespace)
                    .or_default()
                    .push((i, selector.clone()));
            }
        }
        Index {
            named,
            services: services
                .into_iter()
                .map(|(namespace, list)| (namespace, crate::cluster::BySelector::new(list)))
                .collect(),
        }
    }

    fn named(&self, kind: &str, name: &str, namespace: Option<&str>) -> Option<usize> {
        let key = (
            kind.to_owned(),
            name.to_owned(),
            namespace.map(str::to_owned),
        );
        self.named.get(&key).copied()
    }
}

impl<'a> Others<'_, 'a> {
    /// The PersistentVolumeClaim `name` in `namespace`, marked as used.
    pub(super) fn claim(
        &mut self,
        name: &str,
        namespace: Option<&str>,
    ) -> Option<(Json, &'a Node)> {
        let i = self.index.named("PersistentVolumeClaim", name, namespace)?;
        let object = &mut self.objects[i];
        object.used = true;
        Some((object.json.clone(), object.node))
    }

    /// The runtime of `kind` named `name` (a TrainingRuntime in
    /// `namespace`; a ClusterTrainingRuntime in none), marked as used.
    pub(crate) fn training_runtime(
        &mut self,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
    ) -> Option<(Json, &'a Node)> {
        let namespace = if kind == "TrainingRuntime" {
            namespace
        } else {
            None
        };
        let i = self.index.named(kind, name, namespace)?;
        let object = &mut self.objects[i];
        object.used = true;
        Some((object.json.clone(), object.node))
    }

    /// Services in `namespace` whose selector picks pods with all of `labels`.
    pub(super) fn services(
        &mut self,
        labels: &Map<String, Json>,
        namespace: Option<&str>,
    ) -> Vec<(Json, &'a Node)> {
        let Some(services) = self.index.services.get(&namespace.map(str::to_owned)) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for i in services.selecting(labels) {
            let object = &mut self.objects[i];
            object.used = true;
            found.push((object.json.clone(), object.node));
        }
        found
    }
}

/// A warning about a field of another object (a claim, a service).
pub(crate) fn warn_at(job: &mut Job<'_>, node: &Node, pointer: &str, message: String, help: &str) {
    let span = node.key_span_at(pointer);
    job.diagnostics
        .push(Diagnostic::warning(codes::IMPORT_DROPPED, span, message).with_help(help.to_owned()));
}

/// Seconds as the spec writes a duration: `"1d"`, `"6h"`, `"90m"` when
/// whole, else the number.
pub(crate) fn duration(seconds: u64) -> Json {
    for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60)] {
        if seconds > 0 && seconds.is_multiple_of(size) {
            return Json::from(format!("{}{unit}", seconds / size));
        }
    }
    Json::from(seconds)
}
