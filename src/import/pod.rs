//! A pod template back into spec fields: the training container's settings,
//! its volumes, where the pods run. What no spec field says goes into
//! `[podTemplate]`, which trainc merges into every pod it builds.

use serde_json::{Map, Value as Json, json};

use super::{Job, Others, Pod, text};
use crate::spec::defaults;

/// Pod-spec fields a spec field carries; the rest go to `[podTemplate.spec]`.
const POD_FIELDS: &[&str] = &[
    "containers",
    "volumes",
    "nodeSelector",
    "tolerations",
    "affinity",
    "priorityClassName",
    "schedulerName",
    "serviceAccountName",
    "imagePullSecrets",
    "hostNetwork",
    "dnsPolicy",
    "securityContext",
];

/// The labels trainc puts on every object and pod of the job `name`, which
/// select its pods and no other's.
pub(super) fn own_labels(name: &str) -> Map<String, Json> {
    Map::from_iter([
        (defaults::LABEL_MANAGED_BY.to_owned(), json!("trainc")),
        (defaults::LABEL_NAME.to_owned(), json!(name)),
    ])
}

/// [`import`], and an error at the pod's containers when none is the
/// training container, which `runs` (the operator, in words) runs.
pub(super) fn import_trainer<'t>(
    job: &mut Job<'_>,
    others: &mut Others<'_, '_>,
    pod: &Pod<'t>,
    runs: &str,
) -> Option<(&'t Json, String)> {
    let found = import(job, others, pod);
    if found.is_none() {
        let trainer = pod.trainer;
        job.error(
            &format!("{}/containers", pod.base),
            format!("no container is named `{trainer}`; {runs} the one named so"),
            &format!("name the training container `{trainer}`"),
        );
    }
    found
}

/// Imports the pod-level fields and the training container's mounts; returns
/// the training container (for the caller's own container fields) and its
/// pointer, when there is one.
pub(super) fn import<'t>(
    job: &mut Job<'_>,
    others: &mut Others<'_, '_>,
    pod: &Pod<'t>,
) -> Option<(&'t Json, String)> {
    let spec = pod.spec;
    let base = &pod.base;
    let containers = spec["containers"].as_array().cloned().unwrap_or_default();
    let index = containers.iter().position(|c| c["name"] == pod.trainer);
    let trainer = index.map(|i| (&spec["containers"][i], format!("{base}/containers/{i}")));
    let others_list: Vec<Json> = containers
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != index)
        .map(|(_, c)| c.clone())
        .collect();
    if !others_list.is_empty() {
        job.template_spec
            .insert("containers".into(), Json::Array(others_list));
    }
    super::volumes::import(
        job,
        others,
        pod,
        trainer.as_ref().map(|(c, p)| (*c, p.as_str())),
    );
    scheduling(job, pod);
    for (key, value) in spec.as_object().into_iter().flatten() {
        if !POD_FIELDS.contains(&key.as_str()) {
            if key == "restartPolicy" {
                job.warn(
                    &format!("{base}/restartPolicy"),
                    "the pod's `restartPolicy` is not imported: the operator replaces it with the replica's",
                    "set `policy.restartPolicy` if the replica's is not what you meant",
                );
                continue;
            }
            job.template_spec.insert(key.clone(), value.clone());
        }
    }
    trainer
}

/// Where the pods run and as whom.
fn scheduling(job: &mut Job<'_>, pod: &Pod<'_>) {
    let spec = pod.spec;
    let base = &pod.base;
    if let Some(selector) = spec
        .get("nodeSelector")
        .filter(|s| s.as_object().is_some_and(|m| !m.is_empty()))
    {
        job.set("/scheduling/nodeSelector", selector.clone());
    }
    if let Some(tolerations) = spec
        .get("tolerations")
        .and_then(Json::as_array)
        .filter(|t| !t.is_empty())
    {
        let typed: Result<Vec<crate::spec::Toleration>, _> = tolerations
            .iter()
            .map(|t| serde_json::from_value(t.clone()))
            .collect();
        if typed.is_ok() {
            job.set("/scheduling/tolerations", Json::Array(tolerations.clone()));
        } else {
            job.template_spec
                .insert("tolerations".into(), Json::Array(tolerations.clone()));
        }
    }
    if let Some(affinity) = spec.get("affinity") {
        if is_spread(affinity, &pod.own_labels) {
            job.set("/scheduling/spreadAcrossNodes", json!(true));
        } else {
            job.template_spec
                .insert("affinity".into(), affinity.clone());
        }
    }
    for key in ["priorityClassName", "schedulerName", "serviceAccountName"] {
        if let Some(value) = spec.get(key).filter(|v| v.is_string()) {
            job.set(&format!("/scheduling/{key}"), value.clone());
        }
    }
    if let Some(secrets) = spec.get("imagePullSecrets").and_then(Json::as_array) {
        let names: Option<Vec<Json>> = secrets
            .iter()
            .map(|s| {
                let only_name = s.as_object().is_some_and(|m| m.len() == 1);
                s.get("name")
                    .filter(|n| n.is_string() && only_name)
                    .cloned()
            })
            .collect();
        match names {
            Some(names) if !names.is_empty() => {
                job.set("/scheduling/imagePullSecrets", Json::Array(names));
            }
            Some(_) => {}
            None => {
                job.template_spec
                    .insert("imagePullSecrets".into(), Json::Array(secrets.clone()));
            }
        }
    }
    let host_network = spec["hostNetwork"] == true;
    if host_network {
        job.set("/hostNetwork", json!(true));
    }
    if let Some(policy) = spec.get("dnsPolicy").and_then(Json::as_str) {
        let implied = host_network && policy == defaults::DNS_POLICY_HOST_NETWORK;
        if !implied {
            job.set("/dnsPolicy", json!(policy));
        }
    } else if host_network {
        job.warn(
            &format!("{base}/hostNetwork"),
            "the pods use the host network with the `ClusterFirst` DNS policy; trainc sets `ClusterFirstWithHostNet`, so that they still find each other by name",
            "write `dnsPolicy = \"ClusterFirst\"` in the spec to keep the input's",
        );
    }
    if let Some(context) = spec.get("securityContext").and_then(Json::as_object) {
        match (context.len(), context.get("fsGroup")) {
            (0, _) => {}
            (1, Some(group)) if group.is_i64() => {
                job.set("/securityContext/fsGroup", group.clone());
            }
            _ => {
                job.template_spec
                    .insert("securityContext".into(), Json::Object(context.clone()));
            }
        }
    }
}

/// The pod anti-affinity `spreadAcrossNodes` writes: one required term on
/// the node's hostname, selecting this job's pods.
fn is_spread(affinity: &Json, own: &[Map<String, Json>]) -> bool {
    let Some(map) = affinity.as_object() else {
        return false;
    };
    let Some(anti) = map.get("podAntiAffinity").and_then(Json::as_object) else {
        return false;
    };
    let Some(terms) = anti
        .get("requiredDuringSchedulingIgnoredDuringExecution")
        .and_then(Json::as_array)
    else {
        return false;
    };
    let [term] = terms.as_slice() else {
        return false;
    };
    let Some(term_map) = term.as_object() else {
        return false;
    };
    let Some(selector) = term["labelSelector"].as_object() else {
        return false;
    };
    map.len() == 1
        && anti.len() == 1
        && term_map.len() == 2
        && term["topologyKey"] == "kubernetes.io/hostname"
        && selector.len() == 1
        && term["labelSelector"]["matchLabels"]
            .as_object()
            .is_some_and(|labels| own.iter().any(|o| o == labels))
}

/// The training container's env: `[env]` where each value is one the spec
/// can say, else `Err` with the entries it cannot.
pub(super) fn env(list: &[Json]) -> Result<Map<String, Json>, ()> {
    let mut env = Map::new();
    for var in list {
        let name = text(var, "name").ok_or(())?;
        if env.contains_key(&name) {
            return Err(());
        }
        let value = match (var.get("value"), var.get("valueFrom")) {
            (Some(Json::String(v)), None) => json!(v),
            (None, None) => json!(""),
            (None, Some(from)) => env_source(from).ok_or(())?,
            _ => return Err(()),
        };
        env.insert(name, value);
    }
    Ok(env)
}

fn env_source(from: &Json) -> Option<Json> {
    let from = from.as_object().filter(|f| f.len() == 1)?;
    let (kind, source) = from.iter().next()?;
    let source = source.as_object()?;
    let mut out = Map::new();
    match kind.as_str() {
        "secretKeyRef" | "configMapKeyRef" => {
            if source
                .keys()
                .any(|k| !["name", "key", "optional"].contains(&k.as_str()))
            {
                return None;
            }
            let which = if kind == "secretKeyRef" {
                "secret"
            } else {
                "configMap"
            };
            reference(&mut out, which, source)?;
            out.insert("key".into(), source.get("key")?.clone());
        }
        "fieldRef" => {
            let version_ok = source.get("apiVersion").is_none_or(|v| v == "v1");
            if !version_ok || source.keys().any(|k| k != "fieldPath" && k != "apiVersion") {
                return None;
            }
            out.insert("field".into(), source.get("fieldPath")?.clone());
        }
        _ => return None,
    }
    Some(Json::Object(out))
}

/// `which = NAME` and `optional` of a Secret or ConfigMap reference, as
/// `[env]` and `envFrom` write them; `None` without a name.
fn reference(out: &mut Map<String, Json>, which: &str, source: &Map<String, Json>) -> Option<()> {
    out.insert(which.into(), source.get("name")?.clone());
    if let Some(optional) = source.get("optional") {
        out.insert("optional".into(), optional.clone());
    }
    Some(())
}

/// `envFrom` as the spec's list, if every entry is one the spec can say.
pub(super) fn env_from(list: &[Json]) -> Option<Vec<Json>> {
    list.iter()
        .map(|entry| {
            let entry = entry.as_object()?;
            let mut out = Map::new();
            for (key, value) in entry {
                match key.as_str() {
                    "prefix" => {
                        out.insert("prefix".into(), value.clone());
                    }
                    "secretRef" | "configMapRef" => {
                        let source = value.as_object()?;
                        if source.keys().any(|k| k != "name" && k != "optional") {
                            return None;
                        }
                        let which = if key == "secretRef" {
                            "secret"
                        } else {
                            "configMap"
                        };
                        reference(&mut out, which, source)?;
                    }
                    _ => return None,
                }
            }
            Some(Json::Object(out))
        })
        .collect()
}
