//! What is beside a job among the objects checked together, found by an
//! index rather than a search: the Services of its namespace by name, by
//! the Training Operator's name stem and by what they select
//! ([`crate::cluster::BySelector`]); Trainer's runtimes by kind, name and
//! namespace. A namespace of thousands of jobs and Services costs their
//! number, not its square.

use std::collections::HashMap;

use serde_json::Value;

fn name(value: &Value) -> &str {
    value["metadata"]["name"].as_str().unwrap_or("")
}

/// An object and its index among those checked (where its problems point).
#[derive(Clone, Copy)]
pub(super) struct Indexed<'v> {
    pub(super) index: usize,
    pub(super) value: &'v Value,
}

/// The Services of one namespace, found by name and by what they select.
pub(super) struct Services<'v> {
    named: HashMap<&'v str, Vec<Indexed<'v>>>,
    /// By the name up to a last `-<digits>` (`job-worker` of
    /// `job-worker-3`): the names the Training Operator gives its Services.
    pub(super) stems: HashMap<&'v str, Vec<Indexed<'v>>>,
    selectors: crate::cluster::BySelector<Indexed<'v>>,
}

impl<'v> Services<'v> {
    pub(super) fn new(list: Vec<(usize, &'v Value)>) -> Services<'v> {
        let mut named: HashMap<&str, Vec<Indexed<'_>>> = HashMap::new();
        let mut stems: HashMap<&str, Vec<Indexed<'_>>> = HashMap::new();
        let mut selectors = Vec::new();
        for (index, value) in list {
            let service = Indexed { index, value };
            let name = name(value);
            named.entry(name).or_default().push(service);
            if let Some(stem) = numbered_stem(name) {
                stems.entry(stem).or_default().push(service);
            }
            if let Some(selector) = selector(value) {
                selectors.push((service, selector.clone()));
            }
        }
        Services {
            named,
            stems,
            selectors: crate::cluster::BySelector::new(selectors),
        }
    }

    pub(super) fn named(&self, name: &str) -> &[Indexed<'v>] {
        self.named.get(name).map_or(&[], Vec::as_slice)
    }

    /// The Services that select pods labelled `labels`, in their order.
    pub(super) fn selecting(&self, labels: &serde_json::Map<String, Value>) -> Vec<Indexed<'v>> {
        self.selectors.selecting(labels)
    }
}

/// `name` up to its last `-<digits>`, when it ends so.
fn numbered_stem(name: &str) -> Option<&str> {
    let (stem, number) = name.rsplit_once('-')?;
    (!number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())).then_some(stem)
}

fn selector(service: &Value) -> Option<&serde_json::Map<String, Value>> {
    service.pointer("/spec/selector").and_then(Value::as_object)
}

/// Trainer's runtimes among the objects, by kind, name and (for a
/// TrainingRuntime) namespace: the first of each, as a search in order
/// finds it.
pub(super) struct Runtimes<'v>(HashMap<(&'v str, &'v str, Option<&'v str>), &'v Value>);

impl<'v> Runtimes<'v> {
    pub(super) fn new(runtimes: &[&'v Value]) -> Runtimes<'v> {
        let mut found = HashMap::new();
        for runtime in runtimes {
            let kind = runtime["kind"].as_str().unwrap_or_default();
            let namespace = runtime["metadata"]["namespace"]
                .as_str()
                .filter(|_| kind == "TrainingRuntime");
            found
                .entry((kind, name(runtime), namespace))
                .or_insert(*runtime);
        }
        Runtimes(found)
    }

    /// The runtime `job` names: a ClusterTrainingRuntime, or a
    /// TrainingRuntime of the job's namespace.
    pub(super) fn named(&self, job: &Value) -> Option<&'v Value> {
        let reference = &job["spec"]["runtimeRef"];
        let kind = reference["kind"]
            .as_str()
            .unwrap_or("ClusterTrainingRuntime");
        let namespace = job["metadata"]["namespace"]
            .as_str()
            .filter(|_| kind == "TrainingRuntime");
        let name = reference["name"].as_str()?;
        self.0.get(&(kind, name, namespace)).copied()
    }
}
