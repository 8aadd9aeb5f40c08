//! The objects against the strict schemas in `schemas/k8s/`, embedded as
//! `schemas/compact/` holds them. Each is read only when an object of its
//! kind is checked, and compiled only when that object is not plainly valid
//! (see [`crate::schema_verdict`]): trainc's own output never needs it.

use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::Value;

use super::Problem;
use super::cel::Rules;
use crate::cluster::trainjob;
use crate::embedded::Compressed;
use crate::schema_verdict::{self, Draft, SchemaJson, Verdict};
use crate::spec::ApiLevel;

/// One embedded schema (from `schemas/compact/`): read by the quick check
/// on first use, parsed as JSON and compiled only when an object is not
/// plainly valid against it.
struct Bundled {
    text: Compressed,
    /// The `apiVersion` and `kind` it is for (none for ObjectMeta's).
    gvk: OnceLock<(String, String)>,
    quick: OnceLock<SchemaJson<'static>>,
    json: OnceLock<Value>,
    validator: OnceLock<Validator>,
    /// What a CRD's API server checks beyond the schema
    /// ([`super::compact::RULES`]), read on first use.
    skeleton: OnceLock<Value>,
    /// A CRD's CEL rules, found on first use.
    rules: OnceLock<Rules>,
}

impl Bundled {
    const fn new(bytes: &'static [u8]) -> Bundled {
        Bundled {
            text: Compressed::new(bytes),
            gvk: OnceLock::new(),
            quick: OnceLock::new(),
            json: OnceLock::new(),
            validator: OnceLock::new(),
            skeleton: OnceLock::new(),
            rules: OnceLock::new(),
        }
    }

    /// Whether the schema names `apiVersion` and `kind` in its
    /// `x-kubernetes-group-version-kind`, which [`super::compact`] puts first:
    /// read once, without parsing the rest.
    fn names(&'static self, api_version: &str, kind: &str) -> bool {
        let (named_version, named_kind) = self.gvk.get_or_init(|| {
            let gvk = leading(self.text.text().strip_prefix('{').unwrap_or(""), GVK)
                .map(|(gvk, _)| gvk)
                .unwrap_or_default();
            super::compact::api_version_and_kind(&gvk[0])
        });
        !named_kind.is_empty() && named_version == api_version && named_kind == kind
    }

    fn quick(&'static self) -> &'static SchemaJson<'static> {
        schema_verdict::embedded(&self.quick, self.text.text())
    }

    /// Whether `metadata` is left open (a CRD) and must be checked separately.
    fn open_metadata(&'static self) -> bool {
        self.quick()
            .pointer("/properties/metadata/properties")
            .is_none()
    }

    /// The CRD's CEL rules that can be checked offline (its transition
    /// rules, `self == oldSelf` on most of a TrainJob, cannot): read from
    /// the few bytes that hold them, second after the group-version-kind,
    /// without parsing the schema.
    fn rules(&'static self) -> &'static Rules {
        self.rules.get_or_init(|| Rules::of(self.skeleton()).0)
    }

    /// The CRD's rules and map lists, from the few bytes that hold them.
    fn skeleton(&'static self) -> &'static Value {
        self.skeleton.get_or_init(|| {
            leading(self.text.text().strip_prefix('{').unwrap_or(""), GVK)
                .and_then(|(_, rest)| leading(rest.strip_prefix(',')?, super::compact::RULES))
                .map(|(skeleton, _)| skeleton)
                .unwrap_or_default()
        })
    }

    /// Every error of `value`, as problems; none to look for when the quick
    /// check finds it valid.
    fn check(&'static self, id: &str, prefix: &str, value: &Value, problems: &mut Vec<Problem>) {
        if schema_verdict::verdict(self.quick(), value, Draft::Draft7) == Verdict::Valid {
            return;
        }
        let root = schema_verdict::embedded_json(&self.json, self.text.text());
        let validator = schema_verdict::validator(&self.validator, root, Draft::Draft7);
        // One past the most reported: the caller notes that there are more.
        for error in validator
            .iter_errors(value)
            .take(super::MAX_PROBLEMS_PER_OBJECT + 1)
        {
            super::wording::push_error(id, prefix, &error, root, problems);
        }
    }
}

/// The key [`super::compact`] puts first.
const GVK: &str = "x-kubernetes-group-version-kind";

/// The value of `"key":` at the start of `text`, and the text after it:
/// read without parsing the rest.
fn leading<'a>(text: &'a str, key: &str) -> Option<(Value, &'a str)> {
    let rest = text
        .strip_prefix('"')?
        .strip_prefix(key)?
        .strip_prefix("\":")?;
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
    let value = values.next()?.ok()?;
    Some((value, &rest[values.byte_offset()..]))
}

macro_rules! compact {
    ($file:literal) => {
        Bundled::new(include_bytes!(concat!(
            "../../schemas/compact/",
            $file,
            ".lz4"
        )))
    };
}

/// Schemas of the kinds that have one API.
static COMMON: [Bundled; 6] = [
    compact!("pytorchjob-kubeflow-v1.json"),
    compact!("service-v1.json"),
    compact!("persistentvolumeclaim-v1.json"),
    compact!("configmap-v1.json"),
    compact!("job-batch-v1.json"),
    compact!("jobset-jobset-v1alpha2.json"),
];
/// TrainJob on Trainer v2.2 and later (the schema is v2.3.0's CRD), on v2.1 and on v2.0.
static TRAINJOB_CURRENT: Bundled = compact!("trainjob-trainer-v1alpha1.json");
static TRAINJOB_V2_1: Bundled = compact!("trainjob-trainer-v1alpha1-v2.1.0.json");
static TRAINJOB_V2_0: Bundled = compact!("trainjob-trainer-v1alpha1-v2.0.0.json");
static OBJECT_META: Bundled = compact!("objectmeta-meta-v1.json");
/// TrainingRuntime and ClusterTrainingRuntime, the same way: v2.3.0's CRD for
/// v2.2 and later, v2.1.0's and v2.0.0's.
static RUNTIME_CURRENT: Bundled = compact!("trainingruntime-trainer-v1alpha1.json");
static RUNTIME_V2_1: Bundled = compact!("trainingruntime-trainer-v1alpha1-v2.1.0.json");
static RUNTIME_V2_0: Bundled = compact!("trainingruntime-trainer-v1alpha1-v2.0.0.json");
static CLUSTER_RUNTIME_CURRENT: Bundled = compact!("clustertrainingruntime-trainer-v1alpha1.json");
static CLUSTER_RUNTIME_V2_1: Bundled =
    compact!("clustertrainingruntime-trainer-v1alpha1-v2.1.0.json");
static CLUSTER_RUNTIME_V2_0: Bundled =
    compact!("clustertrainingruntime-trainer-v1alpha1-v2.0.0.json");

/// The schema of a Trainer kind at one API level.
fn trainer_schema(kind: &str, level: ApiLevel) -> Option<&'static Bundled> {
    let [current, v2_1, v2_0] = match kind {
        trainjob::KIND => [&TRAINJOB_CURRENT, &TRAINJOB_V2_1, &TRAINJOB_V2_0],
        "TrainingRuntime" => [&RUNTIME_CURRENT, &RUNTIME_V2_1, &RUNTIME_V2_0],
        "ClusterTrainingRuntime" => [
            &CLUSTER_RUNTIME_CURRENT,
            &CLUSTER_RUNTIME_V2_1,
            &CLUSTER_RUNTIME_V2_0,
        ],
        _ => return None,
    };
    Some(match level {
        ApiLevel::V2_2 | ApiLevel::V2_3 => current,
        ApiLevel::V2_1 => v2_1,
        ApiLevel::V2_0 => v2_0,
    })
}

/// Whether an object's schema was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Checked {
    Yes,
    /// trainc has no schema for its `apiVersion` and `kind`.
    NoSchema,
}

/// Every schema problem of one object (`id` is its `Kind/name`), and of
/// its CRD's CEL rules: a kind of `crds` is checked by the CRD given
/// rather than by trainc's own.
pub(super) fn check(
    id: &str,
    value: &Value,
    (level, kubernetes): (ApiLevel, super::kubernetes::Release),
    crds: &super::crd::Crds,
    problems: &mut Vec<Problem>,
) -> Checked {
    if super::crd::check(crds, id, value, problems) {
        OBJECT_META.check(id, "/metadata", &value["metadata"], problems);
        return Checked::Yes;
    }
    let api_version = value["apiVersion"].as_str().unwrap_or("");
    let kind = value["kind"].as_str().unwrap_or("");
    let schema = COMMON
        .iter()
        .chain(trainer_schema(kind, level))
        .find(|s| s.names(api_version, kind));
    if let Some(schema) = schema {
        schema.check(id, "", value, problems);
        if schema.open_metadata() {
            OBJECT_META.check(id, "/metadata", &value["metadata"], problems);
            super::crd::duplicates(id, value, schema.skeleton(), problems);
            let start = problems.len();
            schema.rules().check(id, value, problems);
            name_why(value, &mut problems[start..]);
        }
        return Checked::Yes;
    }
    if super::kubernetes::check(kubernetes, id, api_version, kind, value, problems) {
        Checked::Yes
    } else {
        Checked::NoSchema
    }
}

/// Trainer's CRD says only that a TrainJob's name "must match RFC 1035 DNS
/// label format" (v2.1.0 and later, `trainjob_types.go`; v2.0.0's webhook
/// checked it): the rule's failure says why it does not.
fn name_why(value: &Value, problems: &mut [Problem]) {
    let name = value["metadata"]["name"].as_str().unwrap_or("");
    let Err(why) = crate::syntax::names::dns1035_label(name) else {
        return;
    };
    for problem in problems {
        if problem.path.is_empty() && problem.message.contains("metadata.name") {
            problem.message = super::shortened(
                format!("{} (`{name}`: {why})", problem.message),
                super::MAX_SHOWN,
            );
        }
    }
}
