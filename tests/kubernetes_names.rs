//! The Kubernetes names of the spec's keys, found by building: each key is
//! set to a value no other key writes, built for every target, and wherever
//! that value lands in the objects the field's name is recorded (or the
//! torchrun flag's, where it lands as `--flag=VALUE` in a command). The table
//! in `schemas/kubernetes-names.tsv`, which `check` reads to answer a
//! Kubernetes name written in a spec with the spec's key, must be exactly
//! what these builds find (`TRAINC_BLESS=1 cargo test kubernetes_names`
//! writes it; read the diff before committing). A second test writes every
//! name in the table into a spec and asserts that `check` answers it with
//! its key.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::support::{compare, root};

/// The spec keys trainc writes into an object field, each with a value
/// that no other key writes, and the lines (a table's other keys) it needs
/// to build. Keys not here write no field of their own ([`NO_FIELD`]).
const PROBES: &[(&str, &str, &str)] = &[
    ("namespace", "\"probe-ns\"", ""),
    ("image", "\"example.com/probe:7\"", ""),
    ("imagePullPolicy", "\"Never\"", ""),
    ("workingDir", "\"/probe-dir\"", ""),
    ("replicas", "7", ""),
    ("nProcPerNode", "7", ""),
    ("resources.cpu", "\"7\"", ""),
    ("resources.memory", "\"7Gi\"", ""),
    ("resources.gpus", "7", ""),
    ("resources.shm", "\"17Gi\"", ""),
    ("resources.ephemeralStorage", "\"27Gi\"", ""),
    ("resources.limits.cpu", "\"37\"", "resources.cpu = \"7\"\n"),
    (
        "resources.limits.memory",
        "\"37Gi\"",
        "resources.memory = \"7Gi\"\n",
    ),
    (
        "resources.limits.ephemeralStorage",
        "\"47Gi\"",
        "resources.ephemeralStorage = \"27Gi\"\n",
    ),
    ("master.image", "\"example.com/master:7\"", ""),
    ("master.nProcPerNode", "7", ""),
    ("master.resources.cpu", "\"57\"", ""),
    ("master.resources.memory", "\"57Gi\"", ""),
    ("master.resources.gpus", "5", ""),
    ("master.resources.shm", "\"67Gi\"", ""),
    ("master.resources.ephemeralStorage", "\"77Gi\"", ""),
    ("master.restartPolicy", "\"Never\"", ""),
    ("securityContext.capabilities", "[\"SYS_PTRACE\"]", ""),
    ("securityContext.privileged", "true", ""),
    ("securityContext.runAsUser", "4137", ""),
    ("securityContext.runAsGroup", "4138", ""),
    ("securityContext.runAsNonRoot", "true", ""),
    ("securityContext.allowPrivilegeEscalation", "false", ""),
    ("securityContext.readOnlyRootFilesystem", "true", ""),
    ("securityContext.fsGroup", "4139", ""),
    ("hostNetwork", "true", ""),
    ("dnsPolicy", "\"Default\"", ""),
    (
        "volumes.*.claim",
        "\"probe-claim\"",
        "volumes.data.mountPath = \"/data\"\n",
    ),
    (
        "volumes.*.size",
        "\"87Gi\"",
        "volumes.data.mountPath = \"/data\"\n",
    ),
    (
        "volumes.*.emptyDir",
        "\"97Gi\"",
        "volumes.data.mountPath = \"/data\"\n",
    ),
    (
        "volumes.*.configMap",
        "\"probe-config\"",
        "volumes.data.mountPath = \"/data\"\n",
    ),
    (
        "volumes.*.secret",
        "\"probe-secret\"",
        "volumes.data.mountPath = \"/data\"\n",
    ),
    (
        "volumes.*.mountPath",
        "\"/probe-mount\"",
        "volumes.data.claim = \"c\"\n",
    ),
    (
        "volumes.*.accessModes",
        "[\"ReadWriteMany\"]",
        "volumes.data.mountPath = \"/data\"\nvolumes.data.size = \"1Gi\"\n",
    ),
    (
        "volumes.*.storageClass",
        "\"probe-class\"",
        "volumes.data.mountPath = \"/data\"\nvolumes.data.size = \"1Gi\"\n",
    ),
    (
        "volumes.*.readOnly",
        "true",
        "volumes.data.mountPath = \"/data\"\nvolumes.data.claim = \"c\"\n",
    ),
    (
        "volumes.*.subPath",
        "\"probe-sub\"",
        "volumes.data.mountPath = \"/data\"\nvolumes.data.claim = \"c\"\n",
    ),
    ("elastic.startReplicas", "3", "replicas = \"2:4\"\n"),
    ("elastic.maxRestarts", "37", "replicas = \"2:4\"\n"),
    (
        "elastic.rdzvBackend",
        "\"etcd\"",
        "replicas = \"2:4\"\nelastic.rdzvEndpoint = \"etcd:2379\"\n",
    ),
    (
        "elastic.rdzvEndpoint",
        "\"probe-etcd:2379\"",
        "replicas = \"2:4\"\nelastic.rdzvBackend = \"etcd\"\n",
    ),
    ("policy.restartPolicy", "\"Never\"", ""),
    ("policy.backoffLimit", "37", ""),
    ("policy.ttlAfterFinished", "\"1h7m\"", ""),
    ("policy.activeDeadline", "\"1h8m\"", ""),
    ("policy.cleanPodPolicy", "\"All\"", ""),
    ("policy.groupRestarts", "37", ""),
    ("policy.suspend", "true", ""),
    ("policy.joinTimeout", "\"7m\"", ""),
    ("scheduling.queue", "\"probe-queue\"", ""),
    (
        "scheduling.workloadPriorityClass",
        "\"probe-workload-priority\"",
        "",
    ),
    ("scheduling.volcanoQueue", "\"probe-volcano-queue\"", ""),
    ("scheduling.priorityClassName", "\"probe-priority\"", ""),
    ("scheduling.schedulerName", "\"probe-scheduler\"", ""),
    ("scheduling.gang", "true", ""),
    ("scheduling.nodeSelector", "{ probe = \"node-7\" }", ""),
    (
        "scheduling.tolerations",
        "[{ key = \"probe-taint\", operator = \"Exists\" }]",
        "",
    ),
    ("scheduling.exclusiveTopology", "\"probe.io/zone\"", ""),
    ("scheduling.serviceAccountName", "\"probe-account\"", ""),
    ("scheduling.imagePullSecrets", "[\"probe-pull\"]", ""),
    (
        "trainjob.initializer.dataset.storageUri",
        "\"hf://probe/dataset\"",
        "trainjob.runtime = \"torchtune-llama3.2-1b\"\n",
    ),
    (
        "trainjob.initializer.model.storageUri",
        "\"hf://probe/model\"",
        "trainjob.runtime = \"torchtune-llama3.2-1b\"\n",
    ),
];

/// The spec's keys that say what trainc does rather than name one field,
/// or name a table whose entries are the user's own.
const NO_FIELD: &[&str] = &[
    "name",
    "target",
    "script",
    "module",
    "command",
    "imageEntrypoint",
    "code",
    "args",
    "resources.gpuResource",
    "resources.extended",
    "master.resources.gpuResource",
    "master.resources.extended",
    "master.resources.limits",
    "env",
    "envFrom",
    "volumes",
    "elastic.rdzvConf",
    "scheduling.spreadAcrossNodes",
    "ports",
    "labels",
    "annotations",
    "podTemplate",
    "trainjob.runtime",
    "trainjob.runtimeKind",
    "trainjob.apiLevel",
    "trainjob.initializer.dataset.env",
    "trainjob.initializer.dataset.secret",
    "trainjob.initializer.model.env",
    "trainjob.initializer.model.secret",
    "trainjob.runtimesFile",
    "trainjob.writeRuntime",
    "warnings",
    "allowWarnings",
    "vars",
];

/// Names too common to point at one key: an entry's `name` and `value`.
const GENERIC: &[&str] = &["name", "value", "key", "add"];

const TARGETS: &[&str] = &["pytorchjob", "trainjob", "jobset", "job"];

/// The dotted leaves of the spec's schema (`*` for a table keyed by the user).
fn leaves() -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join("schemas/trainspec.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    let mut out = BTreeSet::new();
    walk(&schema, &schema, "", &mut out);
    out
}

fn walk(root: &Value, node: &Value, path: &str, out: &mut BTreeSet<String>) {
    let node = match node.get("$ref").and_then(Value::as_str) {
        Some(r) => root.pointer(r.trim_start_matches('#')).unwrap(),
        None => node,
    };
    let join = |k: &str| {
        if path.is_empty() {
            k.to_owned()
        } else {
            format!("{path}.{k}")
        }
    };
    if let Some(props) = node.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            if NO_FIELD.contains(&join(k).as_str()) {
                out.insert(join(k));
            } else {
                walk(root, v, &join(k), out);
            }
        }
    } else if let Some(entry) = node
        .get("additionalProperties")
        .filter(|a| a.get("$ref").is_some())
    {
        walk(root, entry, &join("*"), out);
    } else {
        out.insert(path.to_owned());
    }
}

/// The smallest spec for `target`, with an image unless `key` sets it.
fn base(target: &str, key: &str) -> String {
    let image = if key == "image" {
        ""
    } else {
        "image = \"example.com/train:1\"\n"
    };
    format!("name = \"probe\"\ntarget = \"{target}\"\n{image}module = \"train\"\n")
}

/// The objects `text` builds, or `None` where the spec is not valid for
/// that target.
fn build(text: &str) -> Option<Vec<Value>> {
    let mut sources = trainc::Sources::new();
    let id = sources.add("probe.toml", text);
    let built = trainc::build(
        &mut sources,
        &trainc::Input::spec(id),
        &trainc::Options::default(),
    );
    Some(built.objects?.into_iter().map(|o| o.value).collect())
}

/// Every node of `value` with its path (`a.b[0].c`).
fn nodes<'v>(value: &'v Value, path: String, out: &mut Vec<(String, &'v Value)>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let inner = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                nodes(v, inner, out);
            }
        }
        Value::Array(list) => {
            for (i, v) in list.iter().enumerate() {
                nodes(v, format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
    out.push((path, value));
}

/// The field a path ends in: its last key, and of a label's or a
/// resource's `domain/name`, the name.
fn field_name(path: &str) -> &str {
    let path = path.trim_end_matches(|c: char| c.is_ascii_digit() || c == '[' || c == ']');
    let last = path.rsplit_once('.').map_or(path, |(_, l)| l);
    last.rsplit_once('/').map_or(last, |(_, n)| n)
}

/// A spec's TOML value as trainc may write it, with how: as it is
/// (`same`), a duration as its seconds (`seconds`), a number as text
/// (`text`, as a resource quantity).
fn written(value: &str) -> Vec<(Value, &'static str)> {
    let parsed: toml::Table = toml::from_str(&format!("v = {value}")).unwrap();
    let json = serde_json::to_value(&parsed["v"]).unwrap();
    let mut out = vec![(json.clone(), "same")];
    if let Some(seconds) = json.as_str().and_then(seconds) {
        out.push((Value::from(seconds), "seconds"));
    }
    if json.is_number() {
        out.push((Value::from(json.to_string()), "text"));
    }
    out
}

fn seconds(text: &str) -> Option<u64> {
    let (mut total, mut number) = (0, 0);
    for c in text.chars() {
        match c {
            '0'..='9' => number = number * 10 + u64::from(c.to_digit(10)?),
            'h' => (total, number) = (total + number * 3600, 0),
            'm' => (total, number) = (total + number * 60, 0),
            's' => (total, number) = (total + number, 0),
            _ => return None,
        }
    }
    (number == 0 && total > 0).then_some(total)
}

/// The table's rows: target, Kubernetes name, spec key, how the value is
/// written ([`written`]), and the object's field; and a row per key a
/// target builds (`-`, key, `builds`, `-`), so that a key's own name is
/// known to be the spec's word for that target.
fn derive() -> (BTreeSet<String>, Vec<String>) {
    let mut rows = BTreeSet::new();
    let mut unbuilt = Vec::new();
    for (key, value, context) in PROBES {
        let line = format!("{} = {value}\n", key.replace('*', "data"));
        let mut landed = false;
        for target in TARGETS {
            let before = build(&format!("{}{context}", base(target, key)));
            let Some(after) = build(&format!("{}{context}{line}", base(target, key))) else {
                continue;
            };
            landed = true;
            rows.insert(format!("{target}\t-\t{key}\tbuilds\t-"));
            let before = before.unwrap_or_default();
            for (index, object) in after.iter().enumerate() {
                let kind = object["kind"].as_str().unwrap_or_default();
                let mut was = Vec::new();
                if let Some(b) = before.iter().find(|b| b["kind"] == object["kind"]) {
                    nodes(b, String::new(), &mut was);
                }
                let mut now = Vec::new();
                nodes(object, String::new(), &mut now);
                for (path, node) in &now {
                    // torchrun's `--flag=VALUE` in a command.
                    let flag = node
                        .as_str()
                        .and_then(|a| a.strip_prefix("--"))
                        .and_then(|a| a.split_once('='))
                        .map(|(flag, v)| (flag, Value::from(v)));
                    let landed_as = flag.as_ref().map_or(*node, |(_, v)| v);
                    let Some((_, how)) = written(value).into_iter().find(|(w, _)| w == landed_as)
                    else {
                        continue;
                    };
                    if was.iter().any(|(p, n)| p == path && n == node) {
                        continue;
                    }
                    let dashed = flag.map(|(f, _)| format!("--{f}"));
                    let name = dashed.as_deref().unwrap_or_else(|| field_name(path));
                    if name.is_empty() || GENERIC.contains(&name) {
                        continue;
                    }
                    let _ = index;
                    // One field per name: the first (a limit before its request).
                    let path = path.strip_prefix("spec.").unwrap_or(path);
                    let head = format!("{target}\t{name}\t{key}\t{how}\t");
                    if !rows.iter().any(|r: &String| r.starts_with(&head)) {
                        rows.insert(format!("{head}{kind} {path}"));
                    }
                }
            }
        }
        if !landed {
            unbuilt.push((*key).to_owned());
        }
    }
    (rows, unbuilt)
}

#[test]
fn every_key_is_probed_or_writes_no_field() {
    let probed: BTreeSet<String> = PROBES.iter().map(|(k, _, _)| (*k).to_owned()).collect();
    let no_field: BTreeSet<String> = NO_FIELD.iter().map(|k| (*k).to_owned()).collect();
    let missing: Vec<_> = leaves()
        .into_iter()
        .filter(|l| !probed.contains(l) && !no_field.contains(l))
        .collect();
    assert!(missing.is_empty(), "spec keys with no probe: {missing:?}");
}

#[test]
fn the_table_is_what_building_finds() {
    let (rows, unbuilt) = derive();
    assert!(
        unbuilt.is_empty(),
        "probes that build for no target: {unbuilt:?}"
    );
    let mut text = String::from(
        "# The Kubernetes names of the spec's keys, found by building each key for\n\
         # every target (tests/kubernetes_names.rs). Written by\n\
         # TRAINC_BLESS=1 cargo test kubernetes_names; do not edit.\n\
         # target\tname\tspec key\tvalue\tfield (or: target - key builds -)\n",
    );
    for row in &rows {
        text.push_str(row);
        text.push('\n');
    }
    if let Some(diff) = compare(&root().join("schemas/kubernetes-names.tsv"), &text) {
        panic!("{diff}");
    }
}

/// The help `check` gives for `line` written at the top level and, where
/// the key belongs in a table, in that table.
fn answers(target: &str, line: &str, table: Option<&str>) -> Vec<String> {
    let mut texts = vec![format!("{}{line}", base(target, ""))];
    if let Some(table) = table {
        texts.push(format!("{}[{table}]\n{line}", base(target, "")));
    }
    texts
        .iter()
        .map(|text| {
            let mut sources = trainc::Sources::new();
            let id = sources.add("spec.toml", text.as_str());
            let checked = trainc::check(&sources, id);
            checked
                .diagnostics
                .iter()
                .find(|d| d.code == "trainc::schema::unknown_key")
                .and_then(|d| d.help.clone())
                .unwrap_or_else(|| format!("no unknown-key help for {text:?}"))
        })
        .collect()
}

/// Every Kubernetes name in the table, written in a spec for its target
/// with the value it holds in the objects, is answered with its spec key
/// and the value the spec writes: the table read back, not a list.
#[test]
fn every_kubernetes_name_is_answered_with_its_key() {
    let table = std::fs::read_to_string(root().join("schemas/kubernetes-names.tsv")).unwrap();
    let norm = |s: &str| {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase()
    };
    let rows: Vec<&str> = table.lines().filter(|l| !l.starts_with('#')).collect();
    // Each target's spec words, answered by where they belong instead.
    let words: BTreeSet<(String, String)> = rows
        .iter()
        .filter_map(|r| {
            let mut cols = r.split('\t');
            let target = cols.next()?;
            Some((target.to_owned(), norm(cols.nth(1)?.rsplit('.').next()?)))
        })
        .collect();
    let leaves = leaves();
    let mut failures = Vec::new();
    let mut asked = 0;
    for row in &rows {
        let cols: Vec<&str> = row.split('\t').collect();
        let [target, name, key, how, _field] = cols[..] else {
            panic!("a row of five columns: {row:?}");
        };
        if how == "builds" {
            continue;
        }
        let own = key.rsplit('.').next().unwrap();
        if words.contains(&((*target).to_owned(), norm(name))) {
            continue;
        }
        // A name several keys land in is answered with the one spelt like
        // it (`numProcPerNode`: `nProcPerNode`, not `resources.gpus`).
        let siblings: Vec<&str> = rows
            .iter()
            .filter_map(|r| {
                let c: Vec<&str> = r.split('\t').collect();
                (c[0] == target && c[1] == name && c[3] != "builds")
                    .then(|| c[2].rsplit('.').next().unwrap())
            })
            .collect();
        if siblings.len() > 1
            && trainc::diagnostic::suggest(name, siblings.iter().copied())
                .is_some_and(|near| near != own)
        {
            continue;
        }
        let (_, value, _) = PROBES.iter().find(|(k, _, _)| *k == key).unwrap();
        let written_value = written(value)
            .into_iter()
            .find(|(_, h)| *h == how)
            .map(|(v, _)| v.to_string())
            .unwrap();
        let bare = if name.contains('-') {
            format!("\"{name}\"")
        } else {
            name.to_owned()
        };
        let line = format!("{bare} = {written_value}\n");
        let table = key
            .rsplit_once('.')
            .map(|(parent, _)| parent.replace('*', "data"))
            .filter(|p| !p.contains("data") && !p.starts_with("trainjob"));
        let spec_form = format!("{own} = {value}");
        let mut helps = answers(target, &line, table.as_deref());
        if key.starts_with("master.") || leaves.contains(name) {
            // A Master's key is meant only inside `[master]`; a top-level
            // key is no Kubernetes name there.
            helps.remove(0);
        }
        for help in helps {
            asked += 1;
            let dotted = key.replace('*', "NAME");
            if !help.contains(&format!("`{dotted}`")) || !help.contains(&spec_form) {
                failures.push(format!(
                    "{target} {name}: {help}\n  (wanted `{dotted}` and `{spec_form}`)"
                ));
            }
        }
    }
    assert!(asked > 50, "only {asked} names asked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every field of Kubernetes' pod spec and container, written at a spec's
/// top level, is answered: with the spec's key where the spec has one (the
/// table above, or the table it belongs in), else with `[podTemplate]`,
/// the field and where to write it. Read from the PodTemplateSpec schema
/// `[podTemplate]` is checked against, so a field Kubernetes adds is asked
/// too; no field gets the bare list of known keys.
#[test]
fn every_pod_and_container_field_is_answered() {
    let text =
        std::fs::read_to_string(root().join("schemas/compact/podtemplate-fragment.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    let spec = &schema["properties"]["podTemplate"]["properties"]["spec"]["properties"];
    let container = &spec["containers"]["items"]["properties"];
    let spec_keys: BTreeSet<String> = leaves()
        .iter()
        .map(|l| l.split('.').next().unwrap().to_owned())
        .collect();
    let mut failures = Vec::new();
    let mut templated = 0;
    for (whose, fields, under) in [
        ("pod", spec, "`[podTemplate.spec"),
        ("container", container, "`[[podTemplate.spec.containers]]`"),
    ] {
        for (field, schema) in fields.as_object().unwrap() {
            if spec_keys.contains(field) {
                continue;
            }
            let value = match schema["type"].as_str() {
                Some("string") => "\"probe\"",
                Some("integer") => "7",
                Some("boolean") => "true",
                Some("array") => "[]",
                _ => "{}",
            };
            for help in answers("pytorchjob", &format!("{field} = {value}\n"), None) {
                if help.starts_with("known keys here") || help.starts_with("no unknown-key") {
                    failures.push(format!("{whose} {field}: {help}"));
                } else if help.contains("podTemplate") {
                    templated += 1;
                    if !help.contains(&format!("`{field}")) || !help.contains(under) {
                        failures.push(format!("{whose} {field}: {help}\n  (wanted {under})"));
                    }
                }
            }
        }
    }
    assert!(
        templated > 30,
        "only {templated} fields sent to podTemplate"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
