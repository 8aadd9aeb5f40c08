//! `--verify`: the generated objects against the strict upstream schemas in
//! `schemas/k8s/` and against the admission-webhook rules those schemas
//! cannot express. A failure here is a bug in trainc, reported as an error
//! rather than handed to the cluster.
//!
//! Mirrors `validate.py`: a schema is chosen by `apiVersion` + `kind` (from
//! the schema's `x-kubernetes-group-version-kind`), and because CRD schemas
//! leave `metadata` open, a CRD's metadata is also checked against ObjectMeta.

use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::Value;

use crate::render::{Object, pytorchjob, trainjob};
use crate::spec::ApiLevel;
use crate::syntax::names;

/// One problem with one generated object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// `Kind/name` of the object.
    pub object: String,
    /// Where in the object, as a JSON pointer (`/spec/...`); empty for the whole.
    pub path: String,
    pub message: String,
    /// `schema` or `webhook`: which contract the object breaks.
    pub contract: &'static str,
}

impl Problem {
    fn webhook(object: &str, path: &str, message: String) -> Problem {
        Problem {
            object: object.to_owned(),
            path: path.to_owned(),
            message,
            contract: "webhook",
        }
    }
}

struct Schema {
    api_version: String,
    kind: String,
    validator: Validator,
    /// Whether `metadata` is left open (a CRD) and must be checked separately.
    open_metadata: bool,
}

/// Schemas of the kinds that have one API.
const COMMON: &[&str] = &[
    include_str!("../schemas/k8s/pytorchjob-kubeflow-v1.json"),
    include_str!("../schemas/k8s/service-v1.json"),
    include_str!("../schemas/k8s/persistentvolumeclaim-v1.json"),
];
/// TrainJob on Trainer v2.2 and later (the schema is v2.3.0's CRD), and on v2.1.
const TRAINJOB_CURRENT: &str = include_str!("../schemas/k8s/trainjob-trainer-v1alpha1.json");
const TRAINJOB_V2_1: &str =
    include_str!("../schemas/k8s/variants/trainjob-trainer-v1alpha1-v2.1.0.json");
const OBJECT_META: &str = include_str!("../schemas/k8s/objectmeta-meta-v1.json");

/// A bundled schema, compiled, with the group-version-kind it names.
fn compile(text: &str) -> Schema {
    let mut schema: Value = serde_json::from_str(text).expect("bundled schemas are JSON");
    bound_integer_formats(&mut schema);
    let validator = jsonschema::draft7::new(&schema).expect("bundled schemas compile");
    let open_metadata = schema.pointer("/properties/metadata/properties").is_none();
    // Each bundled file names exactly one group-version-kind.
    let gvk = &schema["x-kubernetes-group-version-kind"][0];
    let group = gvk["group"].as_str().unwrap_or("");
    let version = gvk["version"].as_str().unwrap_or("");
    let api_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    let kind = gvk["kind"].as_str().unwrap_or("").to_owned();
    Schema {
        api_version,
        kind,
        validator,
        open_metadata,
    }
}

/// JSON Schema validators treat `format` as a note on strings, so an int32
/// field of a CRD (`replicas`, `backoffLimit`, `numNodes`, ...) would accept
/// any integer; the API server rejects what does not fit. This turns every
/// `format: int32` / `int64` into the bounds it stands for, keeping any
/// tighter bound the schema already has.
fn bound_integer_formats(schema: &mut Value) {
    match schema {
        Value::Object(node) => {
            let bounds = match node.get("format").and_then(Value::as_str) {
                Some("int32") => Some((i64::from(i32::MIN), i64::from(i32::MAX))),
                Some("int64") => Some((i64::MIN, i64::MAX)),
                _ => None,
            };
            if let Some((min, max)) = bounds {
                let tighter = |key: &str, bound: i64, keep: fn(i64, i64) -> i64| {
                    node.get(key)
                        .and_then(Value::as_i64)
                        .map_or(bound, |own| keep(own, bound))
                };
                let (min, max) = (
                    tighter("minimum", min, i64::max),
                    tighter("maximum", max, i64::min),
                );
                node.insert("minimum".to_owned(), Value::from(min));
                node.insert("maximum".to_owned(), Value::from(max));
            }
            node.values_mut().for_each(bound_integer_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(bound_integer_formats),
        _ => {}
    }
}

/// The schemas of the kinds with one API, and ObjectMeta; compiled once, on first use.
fn common() -> &'static (Vec<Schema>, Validator) {
    static COMMON_SCHEMAS: OnceLock<(Vec<Schema>, Validator)> = OnceLock::new();
    COMMON_SCHEMAS.get_or_init(|| {
        (
            COMMON.iter().map(|text| compile(text)).collect(),
            compile(OBJECT_META).validator,
        )
    })
}

/// The TrainJob schema of one Trainer API level; compiled only when a TrainJob is checked.
fn trainjob_schema(level: ApiLevel) -> &'static Schema {
    static CURRENT: OnceLock<Schema> = OnceLock::new();
    static V2_1: OnceLock<Schema> = OnceLock::new();
    match level {
        ApiLevel::V2_2 => CURRENT.get_or_init(|| compile(TRAINJOB_CURRENT)),
        ApiLevel::V2_1 => V2_1.get_or_init(|| compile(TRAINJOB_V2_1)),
    }
}

/// Every problem of every object; a TrainJob is checked for Trainer `level`.
pub fn verify(objects: &[Object], level: ApiLevel) -> Vec<Problem> {
    let values: Vec<&Value> = objects.iter().map(|o| &o.value).collect();
    verify_values(&values, level)
}

/// Every problem of every object given as JSON (as read back from YAML).
pub fn verify_values(values: &[&Value], level: ApiLevel) -> Vec<Problem> {
    let (list, meta) = common();
    let mut problems = Vec::new();
    for value in values {
        let id = format!(
            "{}/{}",
            value["kind"].as_str().unwrap_or("?"),
            value["metadata"]["name"].as_str().unwrap_or("?")
        );
        let api_version = value["apiVersion"].as_str().unwrap_or("");
        let kind = value["kind"].as_str().unwrap_or("");
        let schema = list
            .iter()
            .find(|s| s.api_version == api_version && s.kind == kind)
            .or_else(|| {
                (kind == trainjob::KIND)
                    .then(|| trainjob_schema(level))
                    .filter(|t| t.api_version == api_version)
            });
        let Some(schema) = schema else {
            problems.push(Problem {
                object: id,
                path: String::new(),
                message: format!("no schema for {api_version} {kind}"),
                contract: "schema",
            });
            continue;
        };
        for error in schema.validator.iter_errors(value) {
            problems.push(Problem {
                object: id.clone(),
                path: error.instance_path().to_string(),
                message: error.to_string(),
                contract: "schema",
            });
        }
        if schema.open_metadata {
            for error in meta.iter_errors(&value["metadata"]) {
                problems.push(Problem {
                    object: id.clone(),
                    path: format!("/metadata{}", error.instance_path()),
                    message: error.to_string(),
                    contract: "schema",
                });
            }
        }
        if kind == pytorchjob::KIND || kind == trainjob::KIND {
            // Both operators want the job name to be a DNS-1035 label.
            let name = value["metadata"]["name"].as_str().unwrap_or("");
            if let Err(why) = names::dns1035_label(name) {
                problems.push(Problem::webhook(
                    &id,
                    "/metadata/name",
                    format!("the job name is not a DNS-1035 label: {why}"),
                ));
            }
        }
        if kind == pytorchjob::KIND {
            pytorchjob_webhook(&id, value, &mut problems);
        }
        if kind == trainjob::KIND {
            trainjob_webhook(&id, value, &mut problems);
        }
    }
    problems
}

/// What the Training Operator's webhook rejects.
fn pytorchjob_webhook(id: &str, job: &Value, problems: &mut Vec<Problem>) {
    let mut reject =
        |path: &str, message: String| problems.push(Problem::webhook(id, path, message));
    let name = job["metadata"]["name"].as_str().unwrap_or("");
    if job.pointer("/spec/elasticPolicy/nProcPerNode").is_some() {
        reject(
            "/spec/elasticPolicy/nProcPerNode",
            "the deprecated elasticPolicy.nProcPerNode is set".to_owned(),
        );
    }
    let Some(replicas) = job
        .pointer("/spec/pytorchReplicaSpecs")
        .and_then(Value::as_object)
    else {
        reject("/spec/pytorchReplicaSpecs", "no replica specs".to_owned());
        return;
    };
    for (kind, spec) in replicas {
        let path = format!("/spec/pytorchReplicaSpecs/{kind}");
        if kind != "Master" && kind != "Worker" {
            reject(
                &path,
                format!("replica type `{kind}` is neither Master nor Worker"),
            );
        }
        let count = spec["replicas"].as_u64();
        if kind == "Master" && count != Some(1) {
            reject(
                &format!("{path}/replicas"),
                format!("Master must have replicas: 1 set explicitly, found {count:?}"),
            );
        }
        let containers = spec
            .pointer("/template/spec/containers")
            .and_then(Value::as_array);
        if !containers
            .into_iter()
            .flatten()
            .any(|c| c["name"] == pytorchjob::CONTAINER)
        {
            reject(
                &format!("{path}/template/spec/containers"),
                format!("no container named `{}`", pytorchjob::CONTAINER),
            );
        }
        let last = count.unwrap_or(1).saturating_sub(1);
        let derived = format!("{name}-{}-{last}", kind.to_ascii_lowercase());
        if derived.len() > names::MAX_LABEL {
            reject(
                "/metadata/name",
                format!(
                    "the operator would name a pod and Service `{derived}`, longer than {} characters",
                    names::MAX_LABEL
                ),
            );
        }
    }
}

/// What Trainer's webhook and the TrainJob CRD's CEL rules reject.
fn trainjob_webhook(id: &str, job: &Value, problems: &mut Vec<Problem>) {
    let mut reject =
        |path: &str, message: String| problems.push(Problem::webhook(id, path, message));
    let name = job["metadata"]["name"].as_str().unwrap_or("");
    let nodes = job
        .pointer("/spec/trainer/numNodes")
        .and_then(Value::as_u64)
        .unwrap_or(1);
    let hostname = format!("{name}-{}-0-{}", trainjob::NODE, nodes.saturating_sub(1));
    if hostname.len() > names::MAX_LABEL {
        reject(
            "/metadata/name",
            format!(
                "JobSet would name a pod's host `{hostname}`, longer than {} characters",
                names::MAX_LABEL
            ),
        );
    }
    for (i, var) in job
        .pointer("/spec/trainer/env")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let var_name = var["name"].as_str().unwrap_or("");
        if var_name.starts_with("PET_")
            && [
                "PET_NNODES",
                "PET_NPROC_PER_NODE",
                "PET_NODE_RANK",
                "PET_MASTER_ADDR",
                "PET_MASTER_PORT",
            ]
            .contains(&var_name)
        {
            reject(
                &format!("/spec/trainer/env/{i}"),
                format!("`{var_name}` is reserved for the torch runtime"),
            );
        }
    }
    for (i, patch) in job
        .pointer("/spec/runtimePatches")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let manager = patch["manager"].as_str().unwrap_or("");
        let domain_prefixed = manager.split_once('/').is_some_and(|(domain, path)| {
            domain.contains('.') && names::dns1123_subdomain(domain).is_ok() && !path.is_empty()
        });
        if !domain_prefixed {
            reject(
                &format!("/spec/runtimePatches/{i}/manager"),
                format!("manager `{manager}` is not a domain-prefixed path"),
            );
        }
        let jobs = patch
            .pointer("/trainingRuntimeSpec/template/spec/replicatedJobs")
            .and_then(Value::as_array);
        for job in jobs.into_iter().flatten() {
            let containers = job
                .pointer("/template/spec/template/spec/containers")
                .and_then(Value::as_array);
            if containers
                .into_iter()
                .flatten()
                .any(|c| c["name"] == trainjob::NODE && c.get("env").is_some())
            {
                reject(
                    &format!("/spec/runtimePatches/{i}"),
                    "env is patched into the `node` container; it belongs in trainer.env"
                        .to_owned(),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Value {
        serde_json::json!({
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": "demo"},
            "spec": {
                "nprocPerNode": "2",
                "pytorchReplicaSpecs": {
                    "Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": {"spec": {"containers": [{"name": "pytorch", "image": "x:1"}]}}},
                    "Worker": {"replicas": 3, "restartPolicy": "OnFailure", "template": {"spec": {"containers": [{"name": "pytorch", "image": "x:1"}]}}}
                }
            }
        })
    }

    /// Every needle appears in some webhook problem of `value`.
    fn assert_webhook_finds(value: &Value, needles: &[&str]) {
        let messages: Vec<String> = problems(value)
            .into_iter()
            .filter(|p| p.contract == "webhook")
            .map(|p| p.message)
            .collect();
        for needle in needles {
            assert!(
                messages.iter().any(|m| m.contains(needle)),
                "{needle}: {messages:?}"
            );
        }
    }

    fn problems(value: &Value) -> Vec<Problem> {
        verify_values(&[value], ApiLevel::V2_2)
    }

    #[test]
    fn a_valid_job_passes() {
        assert_eq!(problems(&job()), vec![]);
    }

    #[test]
    fn schema_violations_are_found() {
        let mut bad = job();
        bad["spec"]["nprocPerNode"] = serde_json::json!(2); // must be a string
        bad["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["imagee"] =
            serde_json::json!("x");
        bad["metadata"]["labelz"] = serde_json::json!({});
        let found = problems(&bad);
        let paths: Vec<&str> = found.iter().map(|p| p.path.as_str()).collect();
        assert!(paths.contains(&"/spec/nprocPerNode"), "{found:?}");
        assert!(
            paths
                .iter()
                .any(|p| p
                    .starts_with("/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0")),
            "{found:?}"
        );
        assert!(
            paths.contains(&"/metadata"),
            "metadata is checked against ObjectMeta: {found:?}"
        );
        assert!(found.iter().all(|p| p.contract == "schema"));
    }

    #[test]
    fn webhook_rules_are_found() {
        let mut bad = job();
        bad["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = serde_json::json!(2);
        bad["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["name"] =
            serde_json::json!("main");
        bad["spec"]["pytorchReplicaSpecs"]["Chief"] =
            bad["spec"]["pytorchReplicaSpecs"]["Master"].clone();
        bad["spec"]["elasticPolicy"] = serde_json::json!({"nProcPerNode": 2});
        bad["metadata"]["name"] = serde_json::json!("a".repeat(60));
        assert_webhook_finds(
            &bad,
            &[
                "Master must have replicas: 1",
                "no container named `pytorch`",
                "`Chief` is neither",
                "elasticPolicy.nProcPerNode",
                "longer than 63",
            ],
        );
    }

    fn trainjob() -> Value {
        serde_json::json!({
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "metadata": {"name": "demo"},
            "spec": {
                "runtimeRef": {"name": "torch-distributed"},
                "trainer": {"image": "x:1", "numNodes": 2, "numProcPerNode": 4, "env": [{"name": "A", "value": "1"}]},
                "runtimePatches": [{"manager": "trainc.dev/trainc", "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
                    {"name": "node", "template": {"spec": {"template": {"spec": {"containers": [{"name": "node"}]}}}}}
                ]}}}}]
            }
        })
    }

    #[test]
    fn a_valid_trainjob_passes_at_its_level_only() {
        assert_eq!(problems(&trainjob()), vec![]);
        // runtimePatches do not exist on v2.1, and numProcPerNode "auto" not on v2.2+.
        assert!(!verify_values(&[&trainjob()], ApiLevel::V2_1).is_empty());
        let mut auto = trainjob();
        auto["spec"]["trainer"]["numProcPerNode"] = serde_json::json!("auto");
        assert!(
            problems(&auto)
                .iter()
                .any(|p| p.path == "/spec/trainer/numProcPerNode")
        );
    }

    #[test]
    fn trainjob_webhook_rules_are_found() {
        let mut bad = trainjob();
        bad["spec"]["trainer"]["env"][0]["name"] = serde_json::json!("PET_NNODES");
        bad["spec"]["runtimePatches"][0]["manager"] = serde_json::json!("trainc");
        bad["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
            [0]["template"]["spec"]["template"]["spec"]["containers"][0]["env"] =
            serde_json::json!([{"name": "B", "value": "2"}]);
        bad["metadata"]["name"] = serde_json::json!("a".repeat(60));
        assert_webhook_finds(
            &bad,
            &[
                "`PET_NNODES` is reserved",
                "not a domain-prefixed path",
                "belongs in trainer.env",
                "longer than 63",
            ],
        );
    }

    #[test]
    fn int32_and_int64_fields_are_bounded() {
        let mut bad = job();
        bad["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] =
            serde_json::json!(3_000_000_000_u64);
        bad["spec"]["runPolicy"] = serde_json::json!({
            "backoffLimit": 2_147_483_648_u64,
            "ttlSecondsAfterFinished": -2_147_483_649_i64,
            "activeDeadlineSeconds": 9_223_372_036_854_775_807_i64,
        });
        let found = problems(&bad);
        let paths: Vec<&str> = found.iter().map(|p| p.path.as_str()).collect();
        assert!(
            paths.contains(&"/spec/pytorchReplicaSpecs/Worker/replicas"),
            "{found:?}"
        );
        assert!(paths.contains(&"/spec/runPolicy/backoffLimit"), "{found:?}");
        assert!(
            paths.contains(&"/spec/runPolicy/ttlSecondsAfterFinished"),
            "{found:?}"
        );
        assert!(
            !paths.contains(&"/spec/runPolicy/activeDeadlineSeconds"),
            "an int64 takes i64::MAX: {found:?}"
        );
        let mut big = trainjob();
        big["spec"]["trainer"]["numNodes"] = serde_json::json!(2_147_483_648_u64);
        assert!(
            problems(&big)
                .iter()
                .any(|p| p.path == "/spec/trainer/numNodes"),
        );
        // A tighter bound of the schema's own stays: activeDeadlineSeconds >= 1.
        let mut zero = trainjob();
        zero["spec"]["activeDeadlineSeconds"] = serde_json::json!(0);
        assert!(
            problems(&zero)
                .iter()
                .any(|p| p.path == "/spec/activeDeadlineSeconds"),
        );
    }

    #[test]
    fn unknown_kinds_have_no_schema() {
        let found = problems(
            &serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}),
        );
        assert_eq!(found[0].message, "no schema for v1 ConfigMap");
    }
}
