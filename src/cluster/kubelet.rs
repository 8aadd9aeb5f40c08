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
//!
//! The kubelet expands without a limit, so nested references can grow a
//! value geometrically; but the container runtime starts the container with
//! `execve`, which refuses one argument or variable longer than
//! [`MAX_ARG`] and all of them together past [`MAX_ARGS_TOTAL`] (E2BIG).
//! [`start`] stops at those limits and says the container cannot start.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::Pod;

/// The longest argument or variable (`NAME=value`, with its NUL) Linux
/// starts a program with: `MAX_ARG_STRLEN`, 32 pages.
pub const MAX_ARG: usize = 128 * 1024;

/// The most the arguments and environment may take together when a
/// program starts: a quarter of the default 8 MiB stack limit.
pub const MAX_ARGS_TOTAL: usize = 2 * 1024 * 1024;

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

/// ConfigMaps and Secrets read by name only: a description, or a
/// comparison of two, needs no values (`<key of Secret name>` stands in).
pub struct Unread;

impl Store for Unread {
    fn data(&self, _secret: bool, _name: &str) -> Result<Option<Data>, String> {
        Ok(None)
    }

    fn stand_in(&self, secret: bool, name: &str, key: Option<&str>) -> Option<String> {
        let kind = if secret { "Secret" } else { "ConfigMap" };
        Some(format!("<{} of {kind} {name}>", key.unwrap_or("every key")))
    }
}

/// Why a container cannot start as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartError {
    pub message: String,
    /// What it reads lives only in the cluster: a ConfigMap or Secret that
    /// no object holds and no stand-in gives.
    pub missing: bool,
}

impl From<String> for StartError {
    fn from(message: String) -> StartError {
        StartError {
            message,
            missing: false,
        }
    }
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
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

/// The variables set so far, in order, and the bytes `execve` would be
/// given for them and the words (each `NAME=value` or word and its NUL).
struct Environment<'c> {
    container: &'c str,
    vars: Vec<(String, String)>,
    total: usize,
}

impl Environment<'_> {
    /// Sets `name`, a later value replacing an earlier one in place.
    fn set(&mut self, name: String, value: String) -> Result<(), String> {
        let size = name.len() + value.len() + 2;
        if let Some(slot) = self.vars.iter_mut().find(|(n, _)| *n == name) {
            self.total = self.total - (slot.0.len() + slot.1.len() + 2) + size;
            slot.1 = value;
        } else {
            self.total += size;
            self.vars.push((name, value));
        }
        self.within()
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// `text` expanded from the variables set so far, at most `limit` bytes.
    fn expand(&self, text: &str, limit: usize, what: &str) -> Result<String, String> {
        expand(text, limit, |n| self.get(n)).map_err(|Overflow| {
            format!(
                "{what} of container `{}` expands to more than {} KiB; the container cannot start (Linux starts no program with {} that long: E2BIG)",
                self.container,
                MAX_ARG >> 10,
                if what.starts_with('`') { "a variable" } else { "an argument" },
            )
        })
    }

    /// The words of `key` (`command`, `args`), expanded.
    fn words(&mut self, container: &Json, key: &str) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        for word in container[key].as_array().into_iter().flatten() {
            let what = format!("a word of the `{key}`");
            let word = self.expand(word.as_str().unwrap_or_default(), MAX_ARG - 1, &what)?;
            self.total += word.len() + 1;
            self.within()?;
            out.push(word);
        }
        Ok(out)
    }

    fn within(&self) -> Result<(), String> {
        if self.total <= MAX_ARGS_TOTAL {
            return Ok(());
        }
        Err(format!(
            "the environment and arguments of container `{}` come to more than {} MiB once `$(…)` is expanded; the container cannot start (Linux, with the default 8 MiB stack, starts no program with more: E2BIG)",
            self.container,
            MAX_ARGS_TOTAL >> 20
        ))
    }
}

/// `container` (of `fields.pod`) as the kubelet starts it. Without a
/// `command` it runs the image's entrypoint, which only the image knows.
pub fn start(
    container: &Json,
    fields: &Fields<'_>,
    store: &dyn Store,
) -> Result<Started, StartError> {
    let cname = container["name"].as_str().unwrap_or("?");
    let mut env = Environment {
        container: cname,
        vars: Vec::new(),
        total: 0,
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
                        env.set(var, String::from_utf8_lossy(&value).into_owned())?;
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
                let room = MAX_ARG.saturating_sub(name.len() + 2);
                Some(env.expand(v, room, &format!("`{name}`"))?)
            }
            (_, Json::Null) => Some(String::new()),
            (_, from) => value_from(from, fields, store, &name, cname)?,
        };
        if let Some(value) = value {
            env.set(name, value)?;
        }
    }
    let mut argv = env.words(container, "command")?;
    let image_entrypoint = argv.is_empty().then(|| {
        container["image"]
            .as_str()
            .unwrap_or("(no image)")
            .to_owned()
    });
    argv.extend(env.words(container, "args")?);
    Ok(Started {
        argv,
        image_entrypoint,
        env: env.vars,
        working_dir: container["workingDir"].as_str().map(str::to_owned),
    })
}

/// `valueFrom`: `None` for an optional key that is absent (the variable is
/// not set).
fn value_from(
    from: &Json,
    fields: &Fields<'_>,
    store: &dyn Store,
    var: &str,
    cname: &str,
) -> Result<Option<String>, StartError> {
    if let Some(path) = from["fieldRef"]["fieldPath"].as_str() {
        return field(path, fields).map(Some).ok_or_else(|| {
            format!("`{var}` of container `{cname}` reads the field `{path}`, which trainc run does not know").into()
        });
    }
    let (secret, reference) = if from["secretKeyRef"].is_object() {
        (true, &from["secretKeyRef"])
    } else if from["configMapKeyRef"].is_object() {
        (false, &from["configMapKeyRef"])
    } else {
        return Err(format!(
            "`{var}` of container `{cname}` is set from a source trainc run does not read (only fieldRef, configMapKeyRef and secretKeyRef)"
        ).into());
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
            )
            .into()),
        },
        None if optional => Ok(None),
        None => Err(missing(
            secret,
            name,
            &format!("`{var}` of container `{cname}`"),
        )),
    }
}

fn missing(secret: bool, name: &str, user: &str) -> StartError {
    let (kind, flag) = if secret {
        ("Secret", "--secret")
    } else {
        ("ConfigMap", "--configmap")
    };
    StartError {
        message: format!(
            "{user} reads the {kind} `{name}`, which lives only in the cluster: give its values with `{flag} {name}=PATH` (a directory of files, one per key, or a file of KEY=VALUE lines)"
        ),
        missing: true,
    }
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

/// An expansion longer than its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow;

/// Expands `$(NAME)` in `text` as the kubelet does, `value` giving a
/// variable's value (`None`: not set, the reference stays); [`Overflow`]
/// as soon as the result would pass `limit` bytes.
pub fn expand<'v>(
    text: &str,
    limit: usize,
    mut value: impl FnMut(&str) -> Option<&'v str>,
) -> Result<String, Overflow> {
    let mut out = String::with_capacity(text.len().min(limit));
    let mut over = false;
    scan(text, |piece| {
        if over {
            return;
        }
        let (a, b, c) = match piece {
            Piece::Text(t) => (t, "", ""),
            Piece::Reference(name) => match value(name) {
                Some(v) => (v, "", ""),
                None => ("$(", name, ")"),
            },
        };
        if out.len() + a.len() + b.len() + c.len() > limit {
            over = true;
            return;
        }
        out.push_str(a);
        out.push_str(b);
        out.push_str(c);
    });
    if over { Err(Overflow) } else { Ok(out) }
}

/// A Secret's value that the kubelet writes into a container's command
/// line: `command` or `args` item `index` expands `$(variable)`, and the
/// container's last `variable` reads key `key` of Secret `secret`
/// (`valueFrom.secretKeyRef`, or `envFrom`: [`Self::every_key`]). A command line is no secret: every user of
/// the node reads it (`ps`, `/proc/PID/cmdline`), and of the machine under
/// `trainc run`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretOnCommandLine {
    pub field: &'static str,
    pub index: usize,
    pub variable: String,
    pub secret: String,
    pub key: String,
    /// The variable is none of `env`'s: it comes from an `envFrom` that
    /// makes every key of the Secret a variable (when the Secret has it).
    pub every_key: bool,
}

impl SecretOnCommandLine {
    /// Where the value comes from, in words.
    pub fn source(&self) -> String {
        if self.every_key {
            format!(
                "key `{}` of Secret `{}` (whose every key `envFrom` makes a variable)",
                self.key, self.secret
            )
        } else {
            format!("key `{}` of Secret `{}`", self.key, self.secret)
        }
    }

    /// What to do instead, for a diagnostic's help.
    pub fn help(&self) -> String {
        format!(
            "read `{}` from the environment inside the program (in Python, `os.environ[\"{}\"]`), where only the process sees it, rather than expanding `$({})` into its command line; or mount Secret `{}` as a file and pass the file's path",
            self.variable, self.variable, self.variable, self.secret
        )
    }
}

/// Every [`SecretOnCommandLine`] of `container` (a Kubernetes container:
/// `command`, `args`, `env`, `envFrom`), in the order of its command line;
/// each variable said once. A variable `env` does not set is a Secret's
/// when every `envFrom` whose prefix it starts with is a Secret's (the last
/// of them wins, as later sources replace earlier ones).
pub fn secrets_on_command_line(container: &Json) -> Vec<SecretOnCommandLine> {
    // Each `envFrom`: whether it is a Secret's, its name, its prefix.
    let every_key: Vec<(bool, &str, &str)> = container["envFrom"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|source| {
            let prefix = source["prefix"].as_str().unwrap_or_default();
            match (
                source["secretRef"]["name"].as_str(),
                source["configMapRef"]["name"].as_str(),
            ) {
                (Some(secret), _) => Some((true, secret, prefix)),
                (None, Some(config_map)) => Some((false, config_map, prefix)),
                (None, None) => None,
            }
        })
        .collect();
    let from_every_key = |name: &str| -> Option<(String, String)> {
        let sources: Vec<&(bool, &str, &str)> = every_key
            .iter()
            .filter(|(_, _, prefix)| name.starts_with(prefix))
            .collect();
        let (_, secret, prefix) = sources.last()?;
        sources
            .iter()
            .all(|(is_secret, _, _)| *is_secret)
            .then(|| ((*secret).to_owned(), name[prefix.len()..].to_owned()))
    };
    // The last definition of a name wins, as in `makeEnvironmentVariables`.
    let mut from_secret: BTreeMap<&str, Option<(&str, &str)>> = BTreeMap::new();
    for var in container["env"].as_array().into_iter().flatten() {
        let Some(name) = var["name"].as_str() else {
            continue;
        };
        let reference = &var["valueFrom"]["secretKeyRef"];
        let secret = reference["name"]
            .as_str()
            .map(|secret| (secret, reference["key"].as_str().unwrap_or_default()));
        from_secret.insert(name, secret);
    }
    let mut found: Vec<SecretOnCommandLine> = Vec::new();
    for field in ["command", "args"] {
        let words = container[field].as_array().into_iter().flatten();
        for (index, word) in words.enumerate() {
            let Some(word) = word.as_str() else { continue };
            scan(word, |piece| {
                let Piece::Reference(name) = piece else {
                    return;
                };
                let (secret, key, every_key) = match from_secret.get(name) {
                    Some(Some((secret, key))) => ((*secret).to_owned(), (*key).to_owned(), false),
                    Some(None) => return,
                    None => match from_every_key(name) {
                        Some((secret, key)) => (secret, key, true),
                        None => return,
                    },
                };
                if found.iter().any(|f| f.variable == name) {
                    return;
                }
                found.push(SecretOnCommandLine {
                    field,
                    index,
                    variable: name.to_owned(),
                    secret,
                    key,
                    every_key,
                });
            });
        }
    }
    found
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
    use super::{Overflow, expand};

    #[test]
    fn expands_as_the_kubelet_does() {
        let env = |n: &str| (n == "A").then_some("x");
        let expand = |text: &str| expand(text, 100, env).unwrap();
        assert_eq!(expand("$(A)-$(B)"), "x-$(B)");
        assert_eq!(expand("$$(A) $$ $"), "$(A) $ $");
        assert_eq!(expand("$(A $(A)"), "$(A $(A)");
        assert_eq!(expand("a$b"), "a$b");
        assert_eq!(expand("$(A)$(A)"), "xx");
    }

    #[test]
    fn a_secret_on_a_command_line_is_found_through_env_and_env_from() {
        let container = serde_json::json!({
            "command": ["torchrun", "--token=$(TOKEN)"],
            "args": ["$(PLAIN)", "$(FROM_ALL)", "$(APP_X)", "$$(TOKEN)", "$(TOKEN)"],
            "env": [
                { "name": "TOKEN", "valueFrom": { "secretKeyRef": { "name": "hf", "key": "token" } } },
                { "name": "PLAIN", "value": "x" },
            ],
            "envFrom": [
                { "secretRef": { "name": "creds" } },
                { "configMapRef": { "name": "settings" }, "prefix": "APP_" },
            ],
        });
        let found = super::secrets_on_command_line(&container);
        let said: Vec<(&str, usize, &str, &str, &str, bool)> = found
            .iter()
            .map(|f| {
                (
                    f.field,
                    f.index,
                    f.variable.as_str(),
                    f.secret.as_str(),
                    f.key.as_str(),
                    f.every_key,
                )
            })
            .collect();
        assert_eq!(
            said,
            [
                ("command", 1, "TOKEN", "hf", "token", false),
                ("args", 1, "FROM_ALL", "creds", "FROM_ALL", true),
            ]
        );
    }

    #[test]
    fn expansion_stops_at_its_limit() {
        let env = |n: &str| (n == "A").then_some("xyz");
        assert_eq!(expand("$(A)$(A)", 6, env).as_deref(), Ok("xyzxyz"));
        assert_eq!(expand("$(A)$(A)", 5, env), Err(Overflow));
        assert_eq!(expand("$(B)", 3, env), Err(Overflow));
    }
}
