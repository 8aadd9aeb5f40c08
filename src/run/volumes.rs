//! The pods' volumes, as values ([`Volume`]): ConfigMaps and Secrets as the
//! files the kubelet writes for them (from the objects, or from the user's
//! local stand-ins for those that live only in the cluster), emptyDirs as
//! directories of their own, claims as directories every pod shares (a new
//! claim starts empty; one that holds data in the cluster needs `--claim
//! NAME=DIR`), hostPaths as they are. Nothing is written here:
//! [`super::workdir`] lays the files out.
//!
//! A file's name is its key or its item's `path`, both checked as the API
//! server checks them ([`crate::syntax::pod`]), and its mode is the
//! kubelet's: the item's `mode`, else the volume's `defaultMode`, else 0644
//! (kubernetes v1.30.0 `pkg/volume/configmap`, `pkg/volume/secret`,
//! `pkg/volume/util/atomic_writer.go`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::error::RunError;
use crate::cluster::kubelet::{Data, Store};
use crate::cluster::{Pod, namespace_of};
use crate::syntax::names;

/// The most a ConfigMap or Secret holds (the API server's limit), and so the
/// most a local stand-in may.
pub const MAX_DATA: usize = 1024 * 1024;

/// The mode of a volume's file when neither its item nor the volume says.
pub const DEFAULT_MODE: u32 = 0o644;

/// ConfigMaps and Secrets: the objects', then the user's (`--configmap`,
/// `--secret`).
pub struct Objects<'a> {
    pub objects: &'a [Json],
    pub configmaps: &'a [(String, PathBuf)],
    pub secrets: &'a [(String, PathBuf)],
}

impl Store for Objects<'_> {
    fn data(&self, secret: bool, name: &str) -> Result<Option<Data>, String> {
        let given = if secret {
            self.secrets
        } else {
            self.configmaps
        };
        if let Some((_, path)) = given.iter().find(|(n, _)| n == name) {
            let flag = if secret { "--secret" } else { "--configmap" };
            return read_local(path)
                .map(Some)
                .map_err(|e| format!("{flag} {name}: {e}"));
        }
        let kind = if secret { "Secret" } else { "ConfigMap" };
        let Some(object) = self
            .objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        else {
            return Ok(None);
        };
        let mut data = Data::new();
        let text_key = if secret { "stringData" } else { "data" };
        let binary_key = if secret { "data" } else { "binaryData" };
        for (key, value) in object[binary_key].as_object().into_iter().flatten() {
            let bytes = crate::syntax::base64::decode(value.as_str().unwrap_or_default())
                .ok_or_else(|| format!("the {kind} `{name}` key `{key}` is not base64"))?;
            data.insert(key.clone(), bytes);
        }
        for (key, value) in object[text_key].as_object().into_iter().flatten() {
            data.insert(
                key.clone(),
                value.as_str().unwrap_or_default().as_bytes().to_vec(),
            );
        }
        for key in data.keys() {
            names::config_map_key(key).map_err(|why| {
                format!("the {kind} `{name}` has the key `{key}`, which is not a key Kubernetes accepts: {why}")
            })?;
        }
        Ok(Some(data))
    }
}

/// A local stand-in: a directory (each regular file a key, as `kubectl
/// create configmap --from-file=DIR` reads it; read as `[code]` files are,
/// never through a link out of it) or a file of `KEY=VALUE` lines (as
/// `--from-env-file` reads it). At most [`MAX_DATA`] bytes in all.
fn read_local(path: &Path) -> Result<Data, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path)
        .map_err(|e| format!("{shown}: {}", crate::source::io_reason(&e)))?;
    let mut data = Data::new();
    let mut total = 0usize;
    if meta.is_dir() {
        let entries = std::fs::read_dir(path)
            .map_err(|e| format!("{shown}: {}", crate::source::io_reason(&e)))?;
        let mut files: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        files.sort();
        for file in files {
            let key = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            // A directory in it is not a key (kubectl skips it too).
            if std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_dir()) {
                continue;
            }
            let bytes = crate::bind::read::read_within(&file, path, MAX_DATA)
                .map_err(|why| format!("`{}`: {why}", file.display()))?;
            names::config_map_key(&key).map_err(|why| {
                format!(
                    "`{}`: its name is not a key Kubernetes accepts: {why}",
                    file.display()
                )
            })?;
            total += bytes.len();
            if total > MAX_DATA {
                return Err(format!(
                    "{shown}: its files come to more than {} KiB, all a ConfigMap or Secret holds",
                    MAX_DATA / 1024
                ));
            }
            data.insert(key, bytes);
        }
        return Ok(data);
    }
    let bytes = crate::bind::read::read_within(path, crate::source::directory_of(path), MAX_DATA)
        .map_err(|why| format!("{shown}: {why}"))?;
    let text = String::from_utf8(bytes).map_err(|_| format!("{shown}: not UTF-8 text"))?;
    for (number, line) in text.lines().enumerate() {
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| format!("{shown}:{}: not a KEY=VALUE line", number + 1))?;
        data.insert(key.trim_end().to_owned(), value.as_bytes().to_vec());
    }
    Ok(data)
}

/// Where a volume's files are on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A directory of the pod's own in the run's directory (emptyDir,
    /// ConfigMap, Secret), holding the volume's [`File`]s.
    Own,
    /// A claim the objects create: a directory of the run's, shared by
    /// every pod that mounts it.
    Claim(String),
    /// A directory of this machine: a hostPath, or a claim given with
    /// `--claim`. The run writes nothing there.
    Host(PathBuf),
}

/// One file of a ConfigMap or Secret volume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// Relative, without `..` ([`crate::syntax::pod::item_path`]).
    pub path: String,
    pub bytes: Vec<u8>,
    pub mode: u32,
}

/// One volume of a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Volume {
    /// A DNS-1123 label.
    pub name: String,
    pub source: Source,
    pub files: Vec<File>,
}

/// The volumes of `pod`, whose names and paths are checked already.
pub fn plan(
    pod: &Pod,
    store: &Objects<'_>,
    claims: &[(String, PathBuf)],
) -> Result<Vec<Volume>, RunError> {
    let mut volumes = Vec::new();
    for volume in pod.spec["volumes"].as_array().into_iter().flatten() {
        let name = volume["name"].as_str().unwrap_or_default().to_owned();
        let (source, files) = if volume["emptyDir"].is_object() {
            (Source::Own, Vec::new())
        } else if let Some(claim) = volume["persistentVolumeClaim"]["claimName"].as_str() {
            (claim_source(pod, claim, store.objects, claims)?, Vec::new())
        } else if let Some(host) = volume["hostPath"]["path"].as_str() {
            if !host.starts_with('/') {
                return Err(RunError::invalid(format!(
                    "pod {}: the hostPath volume `{name}` has the relative path `{host}`; a node's path is absolute",
                    pod.name
                )));
            }
            (Source::Host(PathBuf::from(host)), Vec::new())
        } else if volume["configMap"].is_object() || volume["secret"].is_object() {
            (Source::Own, data_files(pod, &name, volume, store)?)
        } else {
            let kind = volume
                .as_object()
                .and_then(|v| v.keys().find(|k| *k != "name"))
                .map_or("unknown", String::as_str);
            return Err(RunError::invalid(format!(
                "pod {} has the volume `{name}` of kind `{kind}`, which trainc run cannot make here (it makes emptyDir, configMap, secret, persistentVolumeClaim and hostPath volumes)",
                pod.name
            )));
        };
        volumes.push(Volume {
            name,
            source,
            files,
        });
    }
    Ok(volumes)
}

/// The files of a ConfigMap or Secret volume: its keys, or the `items`
/// chosen, each with the kubelet's mode.
fn data_files(
    pod: &Pod,
    name: &str,
    volume: &Json,
    store: &Objects<'_>,
) -> Result<Vec<File>, RunError> {
    let secret = volume["secret"].is_object();
    let (source, kind, flag) = if secret {
        (&volume["secret"], "Secret", "--secret")
    } else {
        (&volume["configMap"], "ConfigMap", "--configmap")
    };
    let object = source[if secret { "secretName" } else { "name" }]
        .as_str()
        .unwrap_or_default();
    let data = match store.data(secret, object) {
        Ok(Some(data)) => data,
        Ok(None) if source["optional"] == true => return Ok(Vec::new()),
        Ok(None) => {
            return Err(RunError::missing(format!(
                "pod {} mounts the {kind} `{object}` (volume `{name}`), which lives only in the cluster",
                pod.name
            ))
            .with_help(format!(
                "give its files with `{flag} {object}=PATH` (a directory, one file per key, or a file of KEY=VALUE lines)"
            )));
        }
        Err(message) => return Err(RunError::invalid(message)),
    };
    let default = mode(&source["defaultMode"]).unwrap_or(DEFAULT_MODE);
    let mut files: BTreeMap<String, File> = BTreeMap::new();
    let mut add = |key: &str, path: &str, mode: u32| -> Result<(), RunError> {
        let bytes = data.get(key).ok_or_else(|| {
            RunError::invalid(format!(
                "pod {}: the {kind} `{object}` has no key `{key}` for its item `{path}` (volume `{name}`)",
                pod.name
            ))
        })?;
        crate::syntax::pod::item_path(path).map_err(|why| {
            RunError::invalid(format!(
                "pod {}: the file `{path}` of the volume `{name}` must be a relative path inside the volume: {why}",
                pod.name
            ))
        })?;
        files.insert(
            path.to_owned(),
            File {
                path: path.to_owned(),
                bytes: bytes.clone(),
                mode,
            },
        );
        Ok(())
    };
    match source["items"].as_array() {
        Some(items) => {
            for item in items {
                let key = item["key"].as_str().unwrap_or_default();
                let path = item["path"].as_str().unwrap_or_default();
                add(key, path, mode(&item["mode"]).unwrap_or(default))?;
            }
        }
        None => {
            for key in data.keys() {
                add(key, key, default)?;
            }
        }
    }
    Ok(files.into_values().collect())
}

/// A file mode from the API (a number, decimal in JSON), when one of
/// 0–0777.
fn mode(value: &Json) -> Option<u32> {
    value
        .as_u64()
        .filter(|m| *m <= crate::syntax::pod::MAX_MODE)
        .and_then(|m| u32::try_from(m).ok())
}

fn claim_source(
    pod: &Pod,
    claim: &str,
    objects: &[Json],
    claims: &[(String, PathBuf)],
) -> Result<Source, RunError> {
    if let Some((_, path)) = claims.iter().find(|(n, _)| n == claim) {
        return Ok(Source::Host(path.clone()));
    }
    let created = objects.iter().any(|o| {
        o["kind"] == "PersistentVolumeClaim"
            && o["metadata"]["name"] == claim
            && namespace_of(o) == pod.namespace
    });
    if created {
        names::dns1123_subdomain(claim).map_err(|why| {
            RunError::invalid(format!(
                "pod {}: the claim name `{claim}` is not a DNS-1123 subdomain: {why}",
                pod.name
            ))
        })?;
        return Ok(Source::Claim(claim.to_owned()));
    }
    Err(RunError::missing(format!(
        "pod {} mounts the claim `{claim}`, which holds its data in the cluster",
        pod.name
    ))
    .with_help(format!(
        "give a local directory for it with `--claim {claim}=DIR`"
    )))
}
