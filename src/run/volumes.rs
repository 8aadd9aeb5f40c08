//! The pods' volumes, made here: ConfigMaps and Secrets written out as files
//! (from the objects, or from the user's local files for those that live
//! only in the cluster), emptyDirs as empty directories, claims as
//! directories every pod shares (a new claim starts empty; one that holds
//! data in the cluster needs `--claim NAME=DIR`), hostPaths as they are.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::cluster::kubelet::{Data, Store};
use crate::cluster::{Pod, namespace_of};

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
            let bytes = base64(value.as_str().unwrap_or_default())
                .ok_or_else(|| format!("the {kind} `{name}` key `{key}` is not base64"))?;
            data.insert(key.clone(), bytes);
        }
        for (key, value) in object[text_key].as_object().into_iter().flatten() {
            data.insert(
                key.clone(),
                value.as_str().unwrap_or_default().as_bytes().to_vec(),
            );
        }
        Ok(Some(data))
    }
}

/// A local stand-in: a directory (each file a key, as a mounted ConfigMap
/// looks) or a file of `KEY=VALUE` lines (as `kubectl create
/// --from-env-file` reads it).
fn read_local(path: &Path) -> Result<Data, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(super::io_error(path))?;
    let mut data = Data::new();
    if meta.is_dir() {
        let entries = std::fs::read_dir(path).map_err(super::io_error(path))?;
        for entry in entries {
            let entry = entry.map_err(super::io_error(path))?;
            let file = entry.path();
            if file.is_file() {
                let key = entry.file_name().to_string_lossy().into_owned();
                let bytes = std::fs::read(&file).map_err(super::io_error(&file))?;
                data.insert(key, bytes);
            }
        }
        return Ok(data);
    }
    let text = std::fs::read_to_string(path).map_err(super::io_error(path))?;
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

/// Standard base64 (what `data` of a Secret and `binaryData` hold).
fn base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
    {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((acc >> bits) & 0xff).expect("masked"));
        }
    }
    Some(out)
}

/// Where a volume's files are on this machine.
pub struct Made {
    /// Volume name to local path.
    pub paths: BTreeMap<String, PathBuf>,
}

/// The user's stand-ins for what lives only in the cluster.
pub struct Given<'a> {
    pub claims: &'a [(String, PathBuf)],
}

/// Makes `pod`'s volumes under `dir` (claims the objects create under
/// `claims_dir`, shared by every pod).
pub fn make(
    pod: &Pod,
    dir: &Path,
    claims_dir: &Path,
    store: &Objects<'_>,
    given: &Given<'_>,
) -> Result<Made, String> {
    let mut paths = BTreeMap::new();
    for volume in pod.spec["volumes"].as_array().into_iter().flatten() {
        let name = volume["name"].as_str().unwrap_or_default();
        let own = dir.join(name);
        let path = if volume["emptyDir"].is_object() {
            create(&own)?;
            own
        } else if let Some(claim) = volume["persistentVolumeClaim"]["claimName"].as_str() {
            claim_path(pod, claim, claims_dir, store.objects, given)?
        } else if let Some(host) = volume["hostPath"]["path"].as_str() {
            PathBuf::from(host)
        } else if volume["configMap"].is_object() || volume["secret"].is_object() {
            let secret = volume["secret"].is_object();
            let source = if secret {
                &volume["secret"]
            } else {
                &volume["configMap"]
            };
            let object = source[if secret { "secretName" } else { "name" }]
                .as_str()
                .unwrap_or_default();
            create(&own)?;
            match store.data(secret, object)? {
                Some(data) => write_items(&own, &data, &source["items"], object)?,
                None if source["optional"] == true => {}
                None => {
                    let (kind, flag) = if secret {
                        ("Secret", "--secret")
                    } else {
                        ("ConfigMap", "--configmap")
                    };
                    return Err(format!(
                        "pod {} mounts the {kind} `{object}` (volume `{name}`), which lives only in the cluster: give its files with `{flag} {object}=PATH` (a directory, one file per key, or a file of KEY=VALUE lines)",
                        pod.name
                    ));
                }
            }
            own
        } else {
            let kind = volume
                .as_object()
                .and_then(|v| v.keys().find(|k| *k != "name"))
                .map_or("unknown", String::as_str);
            return Err(format!(
                "pod {} has the volume `{name}` of kind `{kind}`, which trainc run cannot make here (it makes emptyDir, configMap, secret, persistentVolumeClaim and hostPath volumes)",
                pod.name
            ));
        };
        paths.insert(name.to_owned(), path);
    }
    Ok(Made { paths })
}

fn claim_path(
    pod: &Pod,
    claim: &str,
    claims_dir: &Path,
    objects: &[Json],
    given: &Given<'_>,
) -> Result<PathBuf, String> {
    if let Some((_, path)) = given.claims.iter().find(|(n, _)| n == claim) {
        return if path.is_dir() {
            Ok(path.clone())
        } else {
            Err(format!(
                "--claim {claim}={}: not a directory",
                path.display()
            ))
        };
    }
    let created = objects.iter().any(|o| {
        o["kind"] == "PersistentVolumeClaim"
            && o["metadata"]["name"] == claim
            && namespace_of(o) == pod.namespace
    });
    if created {
        let path = claims_dir.join(claim);
        create(&path)?;
        return Ok(path);
    }
    Err(format!(
        "pod {} mounts the claim `{claim}`, which holds its data in the cluster: give a local directory for it with `--claim {claim}=DIR`",
        pod.name
    ))
}

/// Writes the keys of `data` (or the `items` chosen) as files.
fn write_items(dir: &Path, data: &Data, items: &Json, object: &str) -> Result<(), String> {
    let chosen: Vec<(String, String)> = match items.as_array() {
        Some(items) => items
            .iter()
            .map(|i| {
                (
                    i["key"].as_str().unwrap_or_default().to_owned(),
                    i["path"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect(),
        None => data.keys().map(|k| (k.clone(), k.clone())).collect(),
    };
    for (key, relative) in chosen {
        let bytes = data
            .get(&key)
            .ok_or_else(|| format!("`{object}` has no key `{key}` for its item `{relative}`"))?;
        if relative
            .split('/')
            .any(|part| part == ".." || part.is_empty())
        {
            return Err(format!(
                "`{object}` item path `{relative}` leaves its volume"
            ));
        }
        let file = dir.join(&relative);
        if let Some(parent) = file.parent() {
            create(parent)?;
        }
        std::fs::write(&file, bytes).map_err(super::io_error(&file))?;
    }
    Ok(())
}

fn create(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(super::io_error(dir))
}

#[cfg(test)]
mod tests {
    use super::base64;

    #[test]
    fn base64_decodes() {
        assert_eq!(base64("aGVsbG8=").as_deref(), Some(&b"hello"[..]));
        assert_eq!(base64("aGk=\n").as_deref(), Some(&b"hi"[..]));
        assert_eq!(base64("a*"), None);
    }
}
