//! Container ports and the Services that expose them: a Service of the job
//! that selects its rank-0 pod becomes `[ports]` (trainc builds it again as
//! `<name>-ports`); any other container port stays on the training container
//! through `[podTemplate]`.

use serde_json::{Map, Value as Json, json};

use super::{Job, Others, warn_at};

/// `rank0` is every label the rank-0 pod carries (its template's and the
/// operator's); `container` the training container's ports beyond the
/// operator's own.
/// `[ports]` of a job whose rank-0 pod is made from `template` and carries,
/// beside its template's labels and trainc's (`own`), the controller's
/// `labels`: the Services that select it, and the training container's
/// ports but the controller's own `port` (name and number).
pub(super) fn import_rank0(
    job: &mut Job<'_>,
    others: &mut Others<'_, '_>,
    template: &Json,
    container: &Json,
    own: Map<String, Json>,
    labels: &[(&str, String)],
    port: (&str, u16),
) {
    let mut rank0 = template["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    rank0.extend(own);
    for (key, value) in labels {
        rank0.insert((*key).to_owned(), Json::from(value.clone()));
    }
    let ports: Vec<Json> = container["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| !(p["name"] == port.0 && p["containerPort"] == port.1))
        .cloned()
        .collect();
    import(job, others, &rank0, &ports);
}

pub(super) fn import(
    job: &mut Job<'_>,
    others: &mut Others<'_, '_>,
    rank0: &Map<String, Json>,
    container: &[Json],
) {
    let namespace = job.namespace.clone();
    let mut ports = Map::new();
    let derived = crate::derived::ports_service(&job.name);
    // `trainc migrate` rewrites the job's Services itself.
    let services = if job.migrating {
        Vec::new()
    } else {
        others.services(rank0, namespace.as_deref())
    };
    for (service, node) in services {
        let name = service["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let spec = &service["spec"];
        if name != derived {
            warn_at(
                job,
                node,
                "/metadata/name",
                format!(
                    "Service `{name}` becomes `{derived}`: trainc names the Service of `[ports]` after the job"
                ),
                "refer to it by its new name",
            );
        }
        for key in spec.as_object().into_iter().flat_map(Map::keys) {
            let fine = matches!(key.as_str(), "ports" | "selector")
                || (key == "type" && spec[key] == "ClusterIP");
            if !fine {
                warn_at(
                    job,
                    node,
                    &format!("/spec/{key}"),
                    format!(
                        "`{key}` of Service `{name}` is not imported: trainc's Service of `[ports]` is a ClusterIP Service on rank 0"
                    ),
                    "patch the built Service if it needs it",
                );
            }
        }
        for (i, port) in spec["ports"].as_array().into_iter().flatten().enumerate() {
            let number = &port["port"];
            let target_ok = port
                .get("targetPort")
                .is_none_or(|t| t == number || t == &port["name"]);
            let protocol_ok = port.get("protocol").is_none_or(|p| p == "TCP");
            match port["name"].as_str() {
                Some(port_name) if number.is_u64() && target_ok && protocol_ok => {
                    ports.insert(port_name.to_owned(), number.clone());
                }
                _ => warn_at(
                    job,
                    node,
                    &format!("/spec/ports/{i}"),
                    format!(
                        "a port of Service `{name}` is not imported: `[ports]` maps a name to a TCP port the container listens on"
                    ),
                    "give the port a name, and the same `port` and `targetPort`",
                ),
            }
        }
    }
    let rest: Vec<Json> = container
        .iter()
        .filter(|p| {
            let named = p["name"].as_str().and_then(|n| ports.get(n));
            let plain = p.as_object().is_some_and(|m| {
                m.keys().all(|k| {
                    k == "name" || k == "containerPort" || (k == "protocol" && m[k] == "TCP")
                })
            });
            !(plain && named == Some(&p["containerPort"]))
        })
        .cloned()
        .collect();
    if !rest.is_empty() {
        job.trainer_rest.insert("ports".into(), Json::Array(rest));
    }
    if !ports.is_empty() {
        job.set("/ports", json!(ports));
    }
}
