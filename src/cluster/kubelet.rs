//! What the kubelet does with a container before it starts (kubernetes
//! v1.33, `pkg/kubelet/kubelet_pods.go` `makeEnvironmentVariables`, and
//! `third_party/forked/golang/expansion/expand.go` `Expand`):
//!
//! - `envFrom` first, each key of the ConfigMap or Secret under its
//!   `prefix` (keys that are not variable names are skipped); then `env` in
//!   order, a value's `$(NAME)` expanded from the variables set so far, a
//!   `valueFrom` read from the pod's fields or a ConfigMap or Secret key. A
//!   later variable of the same name replaces an earlier one.
//! - `command` and `args` are expanded from the final variables. `$$` is a
//!   `$`; `$(NAME)` of a variable not set stays as written; a `$(` without
//!   its `)` is text.
//! - `workingDir` as written (the image's default otherwise).

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::Pod;

/// A ConfigMap's or Secret's data, key to value.
pub type Data = BTreeMap<String, Vec<u8>>;

/// Where ConfigMaps and Secrets come from.
pub trait Store {
    /// The data of the ConfigMap (`secret` false) or Secret named `name`, or
    /// `None` when there is none.
    fn data(&self, secret: bool, name: &str) -> Result<Option<Data>, String>;

    /// What a reference to data the store does not hold reads instead, for
    /// a description that needs no values: `key` of the ConfigMap or Secret
    /// `name` (`None`: all its keys, `envFrom`, which then adds none). `None`
    /// (the default) makes it an error, as on the cluster.
    fn stand_in(&self, _secret: bool, _name: &str, _key: Option<&str>) -> Option<String> {
        None
    }
}

/// A container as it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    /// `command` and `args`; without a `command`, the args alone.
    pub argv: Vec<String>,
    /// Without a `command`: the image whose entrypoint runs (with `argv`
    /// in place of its CMD), which only the image knows.
    pub image_entrypoint: Option<String>,
    /// In the order set, later names replacing earlier ones in place.
    pub env: Vec<(String, String)>,
    pub working_dir: Option<String>,
}

/// The pod's own field values (`fieldRef`): its IP, the node's name.
pub struct Fields<'a> {
    pub pod: &'a Pod,
    pub pod_ip: &'a str,
    pub host_ip: &'a str,
    pub node_name: &'a str,
}

/// `container` (of `fields.pod`) as the kubelet starts it. Without a
/// `command` it runs the image's entrypoint, which only the image knows.
pub fn start(container: &Json, fields: &Fields<'_>, store: &dyn Store) -> Result<Started, String> {
    let cname = container["name"].as_str().unwrap_or("?");
    let mut env: Vec<(String, String)> = Vec::new();
    let set = |env: &mut Vec<(String, String)>, name: String, value: String| match env
        .iter_mut()
        .find(|(n, _)| *n == name)
    {
        Some(slot) => slot.1 = value,
        None => env.push((name, value)),
    };
    for source in container["envFrom"].as_array().into_iter().flatten() {
        let prefix = source["prefix"].as_str().unwrap_or("");
        let (secret, reference) = if source["secretRef"].is_object() {
            (true, &source["secretRef"])
        } else {
            (false, &source["configMapRef"])
        };
        let name = reference["name"].as_str().unwrap_or_default();
        match store.data(secret, name)? {
            Some(data) => {
                for (key, value) in data {
                    let var = format!("{prefix}{key}");
                    if crate::syntax::names::env_name(&var).is_ok() {
                        set(&mut env, var, String::from_utf8_lossy(&value).into_owned());
                    }
                }
            }
            None if reference["optional"] == true => {}
            None if store.stand_in(secret, name, None).is_some() => {}
            None => {
                return Err(missing(
                    secret,
                    name,
                    &format!("container `{cname}` `envFrom`"),
                ));
            }
        }
    }
    for var in container["env"].as_array().into_iter().flatten() {
        let name = var["name"].as_str().unwrap_or_default().to_owned();
        let value = match (&var["value"], &var["valueFrom"]) {
            (Json::String(v), _) if !v.is_empty() || var["valueFrom"].is_null() => {
                Some(expand(v, |n| lookup(&env, n)))
            }
            (_, Json::Null) => Some(String::new()),
            (_, from) => value_from(from, fields, store, &name, cname)?,
        };
        if let Some(value) = value {
            set(&mut env, name, value);
        }
    }
    let words = |key: &str| -> Vec<String> {
        container[key]
            .as_array()
            .into_iter()
            .flatten()
            .map(|w| expand(w.as_str().unwrap_or_default(), |n| lookup(&env, n)))
            .collect()
    };
    let mut argv = words("command");
    let image_entrypoint = argv.is_empty().then(|| {
        container["image"]
            .as_str()
            .unwrap_or("(no image)")
            .to_owned()
    });
    argv.extend(words("args"));
    Ok(Started {
        argv,
        image_entrypoint,
        env,
        working_dir: container["workingDir"].as_str().map(str::to_owned),
    })
}

fn lookup(env: &[(String, String)], name: &str) -> Option<String> {
    env.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
}

/// `valueFrom`: `None` for an optional key that is absent (the variable is
/// not set).
fn value_from(
    from: &Json,
    fields: &Fields<'_>,
    store: &dyn Store,
    var: &str,
    cname: &str,
) -> Result<Option<String>, String> {
    if let Some(path) = from["fieldRef"]["fieldPath"].as_str() {
        return field(path, fields).map(Some).ok_or_else(|| {
            format!("`{var}` of container `{cname}` reads the field `{path}`, which trainc run does not know")
        });
    }
    let (secret, reference) = if from["secretKeyRef"].is_object() {
        (true, &from["secretKeyRef"])
    } else if from["configMapKeyRef"].is_object() {
        (false, &from["configMapKeyRef"])
    } else {
        return Err(format!(
            "`{var}` of container `{cname}` is set from a source trainc run does not read (only fieldRef, configMapKeyRef and secretKeyRef)"
        ));
    };
    let name = reference["name"].as_str().unwrap_or_default();
    let key = reference["key"].as_str().unwrap_or_default();
    let optional = reference["optional"] == true;
    let data = store.data(secret, name)?;
    if data.as_ref().is_none_or(|d| !d.contains_key(key))
        && let Some(value) = store.stand_in(secret, name, Some(key))
    {
        return Ok(Some(value));
    }
    match data {
        Some(data) => match data.get(key) {
            Some(value) => Ok(Some(String::from_utf8_lossy(value).into_owned())),
            None if optional => Ok(None),
            None => Err(format!(
                "`{var}` of container `{cname}` reads the key `{key}` of the {} `{name}`, which has no such key",
                if secret { "Secret" } else { "ConfigMap" }
            )),
        },
        None if optional => Ok(None),
        None => Err(missing(
            secret,
            name,
            &format!("`{var}` of container `{cname}`"),
        )),
    }
}

fn missing(secret: bool, name: &str, user: &str) -> String {
    let (kind, flag) = if secret {
        ("Secret", "--secret")
    } else {
        ("ConfigMap", "--configmap")
    };
    format!(
        "{user} reads the {kind} `{name}`, which lives only in the cluster: give its values with `{flag} {name}=PATH` (a directory of files, one per key, or a file of KEY=VALUE lines)"
    )
}

/// A `fieldRef` path's value (`pkg/kubelet/kubelet_pods.go`
/// `podFieldSelectorRuntimeValue`, `pkg/fieldpath` `ExtractFieldPathAsString`).
fn field(path: &str, fields: &Fields<'_>) -> Option<String> {
    let pod = fields.pod;
    let keyed = |prefix: &str, map: &serde_json::Map<String, Json>| {
        let key = path.strip_prefix(prefix)?.strip_suffix("']")?;
        Some(
            map.get(key)
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_owned(),
        )
    };
    match path {
        "metadata.name" => Some(pod.name.clone()),
        "metadata.namespace" => Some(pod.namespace.clone()),
        "metadata.uid" => Some(format!("trainc-run-{}", pod.name)),
        "spec.nodeName" => Some(fields.node_name.to_owned()),
        "spec.serviceAccountName" => Some(
            pod.spec["serviceAccountName"]
                .as_str()
                .unwrap_or("default")
                .to_owned(),
        ),
        "status.hostIP" | "status.hostIPs" => Some(fields.host_ip.to_owned()),
        "status.podIP" | "status.podIPs" => Some(fields.pod_ip.to_owned()),
        _ => keyed("metadata.labels['", &pod.labels)
            .or_else(|| keyed("metadata.annotations['", &pod.annotations)),
    }
}

/// Expands `$(NAME)` in `text` as the kubelet does, `value` giving a
/// variable's value (`None`: not set, the reference stays).
pub fn expand(text: &str, mut value: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    scan(text, |piece| match piece {
        Piece::Text(t) => out.push_str(t),
        Piece::Reference(name) => {
            if let Some(v) = value(name) {
                out.push_str(&v);
            } else {
                out.push_str("$(");
                out.push_str(name);
                out.push(')');
            }
        }
    });
    out
}

/// A part of a value as the kubelet reads it.
pub enum Piece<'a> {
    Text(&'a str),
    Reference(&'a str),
}

/// Splits `text` into text and `$(NAME)` references, in order (`$$` gives
/// the text `$`).
pub fn scan<'a>(text: &'a str, mut piece: impl FnMut(Piece<'a>)) {
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        piece(Piece::Text(&rest[..at]));
        let after = &rest[at + 1..];
        if let Some(next) = after.strip_prefix('$') {
            piece(Piece::Text("$"));
            rest = next;
        } else if let Some(open) = after.strip_prefix('(') {
            if let Some(close) = open.find(')') {
                piece(Piece::Reference(&open[..close]));
                rest = &open[close + 1..];
            } else {
                piece(Piece::Text("$("));
                rest = open;
            }
        } else {
            piece(Piece::Text("$"));
            rest = after;
        }
    }
    piece(Piece::Text(rest));
}

#[cfg(test)]
mod tests {
    use super::expand;

    #[test]
    fn expands_as_the_kubelet_does() {
        let env = |n: &str| (n == "A").then(|| "x".to_owned());
        assert_eq!(expand("$(A)-$(B)", env), "x-$(B)");
        assert_eq!(expand("$$(A) $$ $", env), "$(A) $ $");
        assert_eq!(expand("$(A $(A)", env), "$(A $(A)");
        assert_eq!(expand("a$b", env), "a$b");
        assert_eq!(expand("$(A)$(A)", env), "xx");
    }
}
