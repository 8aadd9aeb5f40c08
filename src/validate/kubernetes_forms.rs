//! Kubernetes' own forms written where the spec has a shorter one: an `env`
//! list of `{ name, value }` and `valueFrom`, a list of `{ name, ... }` where
//! the spec keys a table by name, a TOML `[table]` where an array of tables is
//! wanted. Each gets the spec's form written out, in the file's own syntax.

use serde_json::{Map, Value as Json};

use crate::parse::Format;

/// The longest help line offered whole; a longer form is cut to its first
/// entries.
const MAX_FORM: usize = 100;

/// `value` written inline: `{ key = "v" }` in TOML, `{key: v}` in YAML.
fn inline(value: &Json, format: Format) -> String {
    match value {
        Json::String(s) => serde_json::to_string(s).unwrap_or_default(),
        Json::Object(map) => {
            let entries: Vec<String> = map.iter().map(|(k, v)| entry(k, v, format)).collect();
            match format {
                Format::Toml => format!("{{ {} }}", entries.join(", ")),
                Format::Yaml => format!("{{{}}}", entries.join(", ")),
            }
        }
        other => other.to_string(),
    }
}

fn bare_key(key: &str) -> String {
    if !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        key.to_owned()
    } else {
        serde_json::to_string(key).unwrap_or_default()
    }
}

/// The spec's value for a Kubernetes `valueFrom`: `{ secret, key }`,
/// `{ configMap, key }` or `{ field }`.
fn from_value_from(value_from: &Json) -> Option<Json> {
    let mut out = Map::new();
    let (kind, reference) = [("secret", "secretKeyRef"), ("configMap", "configMapKeyRef")]
        .into_iter()
        .find_map(|(kind, key)| Some((kind, value_from.get(key)?)))
        .map_or((None, None), |(k, r)| (Some(k), Some(r)));
    if let (Some(kind), Some(reference)) = (kind, reference) {
        out.insert(kind.to_owned(), reference.get("name")?.clone());
        out.insert("key".to_owned(), reference.get("key")?.clone());
        if let Some(optional) = reference.get("optional") {
            out.insert("optional".to_owned(), optional.clone());
        }
    } else {
        let path = value_from.get("fieldRef")?.get("fieldPath")?;
        out.insert("field".to_owned(), path.clone());
    }
    Some(Json::Object(out))
}

/// The spec's value for one Kubernetes `EnvVar`: its `value`, or its
/// `valueFrom` in the spec's form.
fn env_value(var: &Json) -> Option<Json> {
    match (var.get("value"), var.get("valueFrom")) {
        (Some(value), None) => Some(value.clone()),
        (None, Some(from)) => from_value_from(from),
        _ => None,
    }
}

/// A Kubernetes list of `{ name, ... }` written as the spec's table, each
/// element's value read by `value_of`; with the first entry alone, for a
/// form too long to read in a help line.
fn keyed(
    path: &str,
    list: &[Json],
    format: Format,
    value_of: fn(&Json) -> Option<Json>,
) -> Option<(String, String)> {
    let mut map = Map::new();
    for item in list {
        let name = item.get("name")?.as_str()?;
        map.insert(name.to_owned(), value_of(item)?);
    }
    let first = map
        .iter()
        .next()
        .map(|(name, value)| entry(name, value, format))?;
    Some((entry(path, &Json::Object(map), format), first))
}

/// `name` and its `value`, as one line of a table or one entry inline.
pub(super) fn entry(name: &str, value: &Json, format: Format) -> String {
    match format {
        Format::Toml => format!("{} = {}", bare_key(name), inline(value, format)),
        Format::Yaml => format!("{name}: {}", inline(value, format)),
    }
}

/// Help for `found`, an array at `path` (dotted), where a table is wanted.
pub(super) fn table_for_list(path: &str, found: &Json, format: Format) -> Option<String> {
    let list = found.as_array().filter(|l| !l.is_empty())?;
    let (what, value_of): (&str, fn(&Json) -> Option<Json>) = match path {
        "env" => ("a table of NAME = value", env_value),
        "ports" => ("a table of NAME = port", |p| {
            p.get("containerPort").cloned()
        }),
        _ => {
            let name = list.first()?.get("name")?.as_str()?;
            return list
                .iter()
                .all(|item| item.get("name").is_some_and(Json::is_string))
                .then(|| format!("`{path}` is a table keyed by name, not Kubernetes' list of `{{ name, ... }}`: write each as `{path}.{}`", bare_key(name)));
        }
    };
    let (whole, first) = keyed(path, list, format, value_of)?;
    Some(if whole.chars().count() <= MAX_FORM {
        format!("`{path}` is {what}, not Kubernetes' list: write `{whole}`")
    } else {
        format!("`{path}` is {what}, not Kubernetes' list: one entry each, e.g. `{first}`")
    })
}

/// Help for `found`, a string of `key=value` pairs (as kubectl writes a
/// selector) at `path` (dotted), where a table is wanted.
pub(super) fn table_for_pairs(path: &str, found: &str, format: Format) -> Option<String> {
    let mut table = serde_json::Map::new();
    for pair in found.split(',') {
        let (key, value) = pair.split_once(['=', ':'])?;
        let (key, value) = (key.trim(), value.trim());
        if key.is_empty() || key.contains(char::is_whitespace) {
            return None;
        }
        table.insert(key.to_owned(), Json::String(value.to_owned()));
    }
    let last = path.rsplit('.').next().unwrap_or(path);
    Some(format!(
        "`{path}` is a table of key = value: write `{}`",
        entry(last, &Json::Object(table), format)
    ))
}

/// Help for an unknown `valueFrom` in the env variable `name`.
pub(super) fn value_from(name: &str, value_from: &Json, format: Format) -> Option<String> {
    let value = from_value_from(value_from)?;
    Some(format!(
        "the spec reads a secret, ConfigMap or field without `valueFrom`: write `{}`",
        entry(name, &value, format)
    ))
}

/// Help for an unknown `key` (holding `value`) in the table at `pointer`
/// where Kubernetes' spelling of a spec field was written: a container's
/// `resources.requests` and GPU resource, an `EnvVarSource`'s references,
/// a volume's `persistentVolumeClaim`, an elastic policy's replica bounds.
pub(super) fn kubernetes_key(
    pointer: &str,
    key: &str,
    value: &Json,
    format: Format,
) -> Option<String> {
    let gpu = |k: &str| k.to_ascii_lowercase().contains("gpu") && k.contains('/');
    if let Some(name) = pointer.strip_prefix("/env/").filter(|n| !n.contains('/'))
        && ["secretKeyRef", "configMapKeyRef", "fieldRef"].contains(&key)
    {
        let mut from = Map::new();
        from.insert(key.to_owned(), value.clone());
        let spec = from_value_from(&Json::Object(from))?;
        return Some(format!(
            "the spec reads a secret, ConfigMap or field by `secret`, `configMap` or `field` (with `key`): write `{}`",
            entry(name, &spec, format)
        ));
    }
    if pointer.starts_with("/volumes/") && key == "persistentVolumeClaim" {
        let claim = value.get("claimName")?;
        return Some(format!(
            "a volume names its claim with `claim`: write `{}` (and `mountPath`); `size` instead makes trainc create one",
            entry("claim", claim, format)
        ));
    }
    match (pointer, key) {
        // `value` is the `[elastic]` table, with both bounds when written.
        ("/elastic", "minReplicas" | "maxReplicas") => {
            let bound = |k: &str| value[k].as_u64().map(|n| n.to_string());
            let bounds = format!(
                "{}:{}",
                bound("minReplicas").unwrap_or_else(|| "MIN".to_owned()),
                bound("maxReplicas").unwrap_or_else(|| "MAX".to_owned())
            );
            Some(format!(
                "an elastic job's bounds are the top-level `{}`; `[elastic]` has the rendezvous and restarts",
                entry("replicas", &Json::String(bounds), format)
            ))
        }
        ("/resources", "requests") => {
            let mut said: Vec<String> = Vec::new();
            for (k, v) in value.as_object()? {
                said.push(if gpu(k) {
                    entry("gpus", v, format)
                } else {
                    entry(k, v, format)
                });
            }
            Some(format!(
                "`[resources]` holds the requests itself (and `[resources.limits]` what differs): write {} in `[resources]`",
                said.iter()
                    .map(|s| format!("`{s}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
        ("/resources" | "/resources/limits", k) if gpu(k) => Some(format!(
            "GPUs are `{}` in `[resources]` (a request and a limit both){}",
            entry("gpus", value, format),
            if k == "nvidia.com/gpu" {
                String::new()
            } else {
                format!(
                    ", with `{}`",
                    entry("gpuResource", &Json::String(k.to_owned()), format)
                )
            }
        )),
        _ => None,
    }
}

/// Help for a TOML `[path]` header where `path` is an array of tables.
pub(super) fn array_of_tables(path: &str, written: &str) -> Option<String> {
    let header = written.trim();
    (header.starts_with('[') && !header.starts_with("[[")).then(|| {
        format!("`{path}` is a list: write each element under its own `[[{path}]]` header")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kubernetes_spellings_get_the_spec_form() {
        let env = kubernetes_key(
            "/env/HF_TOKEN",
            "secretKeyRef",
            &json!({"name": "hf", "key": "token"}),
            Format::Toml,
        );
        assert!(
            env.unwrap()
                .ends_with("`HF_TOKEN = { secret = \"hf\", key = \"token\" }`")
        );
        let claim = kubernetes_key(
            "/volumes/data",
            "persistentVolumeClaim",
            &json!({"claimName": "datasets"}),
            Format::Yaml,
        );
        assert!(claim.unwrap().contains("`claim: \"datasets\"`"));
        let requests = kubernetes_key(
            "/resources",
            "requests",
            &json!({"cpu": "4", "nvidia.com/gpu": 2}),
            Format::Toml,
        );
        assert!(requests.unwrap().contains("`cpu = \"4\"`, `gpus = 2`"));
        let bounds = kubernetes_key(
            "/elastic",
            "maxReplicas",
            &json!({"minReplicas": 2, "maxReplicas": 6}),
            Format::Toml,
        );
        assert!(bounds.unwrap().contains("`replicas = \"2:6\"`"));
        let amd = kubernetes_key("/resources", "amd.com/gpu", &json!(1), Format::Toml);
        assert!(amd.unwrap().contains("`gpuResource = \"amd.com/gpu\"`"));
        assert_eq!(
            kubernetes_key("/resources", "cpus", &json!(1), Format::Toml),
            None
        );
    }

    #[test]
    fn a_selector_string_becomes_the_spec_table() {
        let help = table_for_pairs("scheduling.nodeSelector", "gpu=true, zone=a", Format::Toml);
        assert_eq!(
            help.as_deref(),
            Some(
                "`scheduling.nodeSelector` is a table of key = value: write `nodeSelector = { gpu = \"true\", zone = \"a\" }`"
            )
        );
        assert_eq!(table_for_pairs("labels", "just words", Format::Toml), None);
    }

    #[test]
    fn an_env_list_becomes_the_spec_table() {
        let list = json!([
            {"name": "A", "value": "1"},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
            {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
        ]);
        let help = table_for_list("env", &list, Format::Toml).unwrap();
        assert!(
            help.ends_with(r#"`env = { A = "1", TOKEN = { secret = "s", key = "k" }, POD = { field = "metadata.name" } }`"#),
            "{help}"
        );
        let help = table_for_list("env", &json!([list[0].clone()]), Format::Yaml).unwrap();
        assert!(help.ends_with(r#"`env: {A: "1"}`"#), "{help}");
        let ports = json!([{"name": "tb", "containerPort": 6006}]);
        let help = table_for_list("ports", &ports, Format::Toml).unwrap();
        assert!(help.ends_with("`ports = { tb = 6006 }`"), "{help}");
    }

    #[test]
    fn value_from_is_written_in_the_spec_form() {
        let from = json!({"configMapKeyRef": {"name": "cfg", "key": "lr"}});
        let help = value_from("LR", &from, Format::Toml).unwrap();
        assert!(
            help.ends_with(r#"`LR = { configMap = "cfg", key = "lr" }`"#),
            "{help}"
        );
    }
}
