//! What the API server refuses in the core objects a job brings beside it,
//! a Service and a PersistentVolumeClaim, that no JSON Schema says
//! (kubernetes v1.36.3, `pkg/apis/core/validation/validation.go`:
//! `ValidateService`, `validateServicePort`, `ValidatePortNumOrName`,
//! `ValidatePersistentVolumeClaimSpec`; `pkg/apis/core/v1/defaults.go`
//! `SetDefaults_ServicePort`, which gives a port without a protocol `TCP`
//! and one without a `targetPort` its `port`). Found missing on the real
//! control plane (tests/cluster's differential suite).

use serde_json::Value as Json;

use super::job_spec::Refused;
use crate::syntax::{names, quantity};

const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

fn refused(pointer: impl Into<String>, message: impl Into<String>) -> Refused {
    Refused {
        pointer: pointer.into(),
        message: message.into(),
    }
}

/// A Service's refusals (`value` the whole object; pointers from its root).
pub fn service(value: &Json) -> Vec<Refused> {
    let spec = &value["spec"];
    let mut out = Vec::new();
    let headless = spec["clusterIP"] == "None";
    let external = spec["type"] == "ExternalName";
    let ports = spec["ports"].as_array().map_or(&[][..], Vec::as_slice);
    if ports.is_empty() && !headless && !external {
        out.push(refused(
            "/spec/ports",
            "a Service needs `ports`, unless it is headless (`clusterIP: None`) or an `ExternalName`",
        ));
    }
    let mut names_seen = std::collections::HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let at = format!("/spec/ports/{i}");
        match port["name"].as_str().filter(|n| !n.is_empty()) {
            None if ports.len() > 1 => out.push(refused(
                format!("{at}/name"),
                "a Service with more than one port names each",
            )),
            None => {}
            Some(name) => {
                if let Err(why) = names::dns1123_label(name) {
                    out.push(refused(
                        format!("{at}/name"),
                        format!("the port name `{name}` is not a DNS-1123 label: {why}"),
                    ));
                } else if !names_seen.insert(name) {
                    out.push(refused(
                        format!("{at}/name"),
                        format!("two ports are named `{name}`"),
                    ));
                }
            }
        }
        // A port left out (or a null item, which Go decodes as a zero port)
        // is port 0.
        let number = port["port"].as_i64().unwrap_or(0);
        if !(1..=65535).contains(&number) {
            out.push(refused(
                format!("{at}/port"),
                format!("the port {number} is not from 1 to 65535"),
            ));
        }
        if let Some(protocol) = port["protocol"].as_str()
            && !protocol.is_empty()
            && !PROTOCOLS.contains(&protocol)
        {
            out.push(refused(
                format!("{at}/protocol"),
                format!("the protocol `{protocol}` is not one of `SCTP`, `TCP`, `UDP`"),
            ));
        }
        match &port["targetPort"] {
            Json::Number(n)
                if n.as_i64()
                    .is_some_and(|n| n != 0 && !(1..=65535).contains(&n)) =>
            {
                out.push(refused(
                    format!("{at}/targetPort"),
                    format!("the target port {n} is not from 1 to 65535"),
                ));
            }
            Json::String(name) if !name.is_empty() => {
                if let Err(why) = names::port_name(name) {
                    out.push(refused(
                        format!("{at}/targetPort"),
                        format!("the target port `{name}` is neither a number nor a container port's name: {why}"),
                    ));
                }
            }
            _ => {}
        }
    }
    for (key, label) in spec["selector"].as_object().into_iter().flatten() {
        let pointer = format!("/spec/selector/{}", crate::tree::pointer_segment(key));
        if let Err(why) = names::qualified_name(key) {
            out.push(refused(
                pointer,
                format!("the selector's key `{key}` is not a label key: {why}"),
            ));
        } else if let Err(why) = names::label_value(label.as_str().unwrap_or_default()) {
            out.push(refused(
                pointer,
                format!("the selector's value for `{key}` is not a label value: {why}"),
            ));
        }
    }
    if let Some(ip) = spec["clusterIP"].as_str()
        && !ip.is_empty()
        && ip != "None"
        && ip.parse::<std::net::IpAddr>().is_err()
    {
        out.push(refused(
            "/spec/clusterIP",
            format!("`clusterIP` `{ip}` is not an IP address, `None` (headless) or empty"),
        ));
    }
    out
}

/// A PersistentVolumeClaim's refusals (`value` the whole object).
pub fn claim(value: &Json) -> Vec<Refused> {
    let spec = &value["spec"];
    let mut out = Vec::new();
    let modes: Vec<&str> = spec["accessModes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    if modes.is_empty() {
        out.push(refused(
            "/spec/accessModes",
            "a claim needs at least one access mode, such as `ReadWriteOnce`",
        ));
    }
    for (i, mode) in modes.iter().enumerate() {
        if !ACCESS_MODES.contains(mode) {
            out.push(refused(
                format!("/spec/accessModes/{i}"),
                format!(
                    "the access mode `{mode}` is not one of `ReadWriteOnce`, `ReadOnlyMany`, `ReadWriteMany`, `ReadWriteOncePod`"
                ),
            ));
        }
    }
    if modes.contains(&"ReadWriteOncePod") && modes.iter().any(|m| *m != "ReadWriteOncePod") {
        out.push(refused(
            "/spec/accessModes",
            "`ReadWriteOncePod` may not be given with other access modes",
        ));
    }
    for (resource, amount) in spec["resources"]["requests"]
        .as_object()
        .into_iter()
        .flatten()
    {
        if resource == "storage" {
            continue;
        }
        let text = match amount {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        };
        if let Err(e) = quantity::parse(&text) {
            out.push(refused(
                format!(
                    "/spec/resources/requests/{}",
                    crate::tree::pointer_segment(resource)
                ),
                format!("`{text}` is not a quantity: {}", e.reason),
            ));
        }
    }
    if let Some(class) = spec["storageClassName"].as_str()
        && !class.is_empty()
        && let Err(why) = names::dns1123_subdomain(class)
    {
        out.push(refused(
            "/spec/storageClassName",
            format!("the storage class `{class}` is not a DNS-1123 subdomain: {why}"),
        ));
    }
    match &spec["resources"]["requests"]["storage"] {
        Json::Null => out.push(refused(
            "/spec/resources/requests",
            "a claim asks for its size in `resources.requests.storage`, such as `10Gi`",
        )),
        size => {
            let text = match size {
                Json::String(s) => s.clone(),
                other => other.to_string(),
            };
            match quantity::parse(&text) {
                Ok(q) if q.value <= 0.0 => out.push(refused(
                    "/spec/resources/requests/storage",
                    format!("the size `{text}` must be more than zero"),
                )),
                Err(e) => out.push(refused(
                    "/spec/resources/requests/storage",
                    format!("the size `{text}` is not a quantity: {}", e.reason),
                )),
                Ok(_) => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    fn pointers(refused: Vec<super::Refused>) -> Vec<String> {
        refused.into_iter().map(|r| r.pointer).collect()
    }

    #[test]
    fn a_service_needs_ports_unless_headless_and_names_them_when_several() {
        let headless = json!({"spec": {"clusterIP": "None", "selector": {"app": "x"}}});
        assert!(super::service(&headless).is_empty());
        let plain = json!({"spec": {"selector": {"app": "x"}}});
        assert_eq!(pointers(super::service(&plain)), ["/spec/ports"]);
        let two = json!({"spec": {"ports": [{"port": 80}, {"port": 81, "name": "b"}]}});
        assert_eq!(pointers(super::service(&two)), ["/spec/ports/0/name"]);
        let bad = json!({"spec": {"clusterIP": "text", "selector": {"app": "has space"},
            "ports": [{"port": 70000, "protocol": "-leading", "targetPort": "way-too-long-a-name"}]}});
        assert_eq!(
            pointers(super::service(&bad)),
            [
                "/spec/ports/0/port",
                "/spec/ports/0/protocol",
                "/spec/ports/0/targetPort",
                "/spec/selector/app",
                "/spec/clusterIP"
            ]
        );
    }

    #[test]
    fn a_claim_needs_access_modes_and_a_size() {
        let good = json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
        assert!(super::claim(&good).is_empty());
        let bad = json!({"spec": {"accessModes": ["text", "ReadWriteOncePod"], "resources": {}}});
        assert_eq!(
            pointers(super::claim(&bad)),
            [
                "/spec/accessModes/0",
                "/spec/accessModes",
                "/spec/resources/requests"
            ]
        );
        let zero = json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "0"}}}});
        assert_eq!(
            pointers(super::claim(&zero)),
            ["/spec/resources/requests/storage"]
        );
    }
}
