//! Rules on volumes: one source each, absolute and distinct mount paths, no
//! clash with `/dev/shm`, access modes that work for the replica count.

use std::collections::HashMap;

use super::resources::{Measure, checked};
use super::{Rules, at};
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::{AccessMode, EmptyDir, Volume};
use crate::syntax::names;

/// trainc names its own volumes (such as the one behind `/dev/shm`) with this prefix.
const RESERVED_PREFIX: &str = "trainc-";

pub(super) fn check(r: &mut Rules<'_>) {
    let Some(volumes) = &r.spec.volumes else {
        return;
    };
    // Each normalised mountPath, with the pointer of the volume mounted there.
    let mut mounts: HashMap<String, String> = HashMap::new();
    for (name, volume) in volumes {
        let pointer = at("/volumes", name);
        if name.starts_with(RESERVED_PREFIX) {
            r.push(
                Diagnostic::error(codes::VOLUME_INVALID_NAME, r.key(&pointer), format!("volume name `{name}` uses the `{RESERVED_PREFIX}` prefix, which is reserved for trainc's own volumes"))
                    .with_help(format!("rename it to `{}`", name.trim_start_matches(RESERVED_PREFIX))),
            );
        } else if let Err(bad) = names::Syntax::Dns1123Label.check(name) {
            r.push(super::name_error(
                codes::VOLUME_INVALID_NAME,
                r.key(&pointer),
                format!("volume name `{name}` is not a DNS-1123 label: {}", bad.why),
                &bad,
            ));
        }
        sources(r, name, volume, &pointer);
        mount_path(r, volume, &pointer, &mut mounts);
        hides_script(r, volume, &pointer);
        references(r, volume, &pointer);
        access_modes(r, name, volume, &pointer);
        new_claim(r, name, volume, &pointer);
    }
}

/// A claim trainc creates starts empty, and its access mode decides whether
/// the cluster can provision it at all.
fn new_claim(r: &mut Rules<'_>, name: &str, volume: &Volume, pointer: &str) {
    if volume.size.is_none() {
        return;
    }
    if volume.read_only == Some(true) {
        r.push(
            Diagnostic::warning(
                codes::VOLUME_READ_ONLY_NEW_CLAIM,
                r.value(&at(pointer, "readOnly")),
                format!("volume `{name}` is a new, empty claim mounted read-only: nothing can ever write to it"),
            )
            .with_secondary(r.key(&at(pointer, "size")), "a new claim")
            .with_help("to read data that exists, mount its claim with `claim = \"NAME\"`; to fill this one, remove `readOnly`"),
        );
    }
    let replicas = r.max_replicas();
    if replicas > 1 && volume.access_modes.is_none() && volume.storage_class.is_none() {
        r.push(
            Diagnostic::warning(
                codes::VOLUME_RWX_DEFAULT_CLASS,
                r.key(pointer),
                format!("volume `{name}` asks the cluster's default storage class for a `ReadWriteMany` claim (the job has up to {replicas} pods); most clouds' default classes cannot provision one, so the claim and the pods would stay Pending"),
            )
            .with_help("name a class that provisions ReadWriteMany (`storageClass = \"nfs-client\"`, EFS, Filestore, Azure Files), or set `accessModes` to the mode you need"),
        );
    }
}

/// Which of two sources the user most likely meant, and what to remove.
fn two_sources(r: &Rules<'_>, name: &str, volume: &Volume, first: &str, other: &str) -> String {
    let pair = |a: &str, b: &str| (first == a && other == b) || (first == b && other == a);
    let size = volume
        .size
        .as_ref()
        .map(crate::spec::Quantity::text)
        .unwrap_or_default();
    if pair("claim", "size") {
        // An existing claim named outright is the more specific wish; `size`
        // (with `accessModes`, `storageClass`) describes a claim trainc would create.
        let claim = volume.claim.as_deref().unwrap_or_default();
        let mut new_only = vec!["`size`"];
        if volume.access_modes.is_some() {
            new_only.push("`accessModes`");
        }
        if volume.storage_class.is_some() {
            new_only.push("`storageClass`");
        }
        let job = &r.spec.name;
        let describe = if new_only.len() == 1 {
            "it describes"
        } else {
            "they describe"
        };
        return format!(
            "to mount the existing claim `{claim}`, remove {}: {describe} a new claim, `{job}-{name}` of {size}, which trainc would create beside it; to create that claim instead, remove `claim`",
            new_only.join(" and ")
        );
    }
    if pair("emptyDir", "size") {
        return format!(
            "for a scratch directory of at most {size}, write `emptyDir = \"{size}\"` and remove `size`; `size` alone asks for a new claim, kept after the job"
        );
    }
    format!(
        "keep one of `{first}` and `{other}`; to mount both, make two volumes, each with its own `mountPath`"
    )
}

fn sources(r: &mut Rules<'_>, name: &str, volume: &Volume, pointer: &str) {
    let mut set: Vec<&str> = [
        ("size", volume.size.is_some()),
        ("claim", volume.claim.is_some()),
        (
            "emptyDir",
            matches!(
                volume.empty_dir,
                Some(EmptyDir::Enabled(true) | EmptyDir::SizeLimit(_))
            ),
        ),
        ("configMap", volume.config_map.is_some()),
        ("secret", volume.secret.is_some()),
    ]
    .into_iter()
    .filter_map(|(key, set)| set.then_some(key))
    .collect();
    set.sort_by_key(|key| r.key(&at(pointer, key)).start); // as written
    match set.as_slice() {
        // A key the schema refused (Kubernetes' `persistentVolumeClaim`) was
        // meant as the source: its error says what to write, and this one
        // would only be its knock-on.
        [] if r.has_unknown_keys(pointer) => {}
        [] => {
            let help = if matches!(volume.empty_dir, Some(EmptyDir::Enabled(false))) {
                "`emptyDir = false` is not a source; set `emptyDir = true` or another source"
            } else {
                "add one of `size = \"100Gi\"` (new claim), `claim = \"existing-pvc\"`, `emptyDir = true`, `configMap = \"name\"`, `secret = \"name\"`"
            };
            r.push(
                Diagnostic::error(
                    codes::VOLUME_NO_SOURCE,
                    r.key(pointer),
                    format!("volume `{name}` has no source"),
                )
                .with_help(help),
            );
        }
        [_] => {}
        [first, rest @ ..] => {
            for other in rest {
                let help = two_sources(r, name, volume, first, other);
                r.push(
                    Diagnostic::error(codes::VOLUME_MANY_SOURCES, r.key(&at(pointer, other)), format!("volume `{name}` has both `{first}` and `{other}`; a volume has exactly one source"))
                        .with_secondary(r.key(&at(pointer, first)), format!("`{first}` is set here"))
                        .with_help(help),
                );
            }
        }
    }
    if let Some(size) = &volume.size {
        checked(r, &at(pointer, "size"), size, Measure::Bytes);
    }
    if let Some(EmptyDir::SizeLimit(size)) = &volume.empty_dir {
        let text = size.text();
        if text.starts_with(|c: char| c.is_ascii_alphabetic()) {
            // A word (`"yes"`, `"true"`), not a size: the source is a flag.
            r.push(
                Diagnostic::error(
                    codes::QUANTITY_INVALID,
                    r.value(&at(pointer, "emptyDir")),
                    format!(
                        "`{}` is `true` or a size limit, found `{text}`",
                        crate::tree::field_path(&at(pointer, "emptyDir"))
                    ),
                )
                .with_help("write `emptyDir = true` for a scratch directory, or a size limit such as `emptyDir = \"50Gi\"`"),
            );
        } else {
            checked(r, &at(pointer, "emptyDir"), size, Measure::Bytes);
        }
    }
    for (key, set) in [
        ("accessModes", volume.access_modes.is_some()),
        ("storageClass", volume.storage_class.is_some()),
    ] {
        if set && volume.size.is_none() {
            r.push(
                Diagnostic::error(
                    codes::VOLUME_OPTION_WITHOUT_SIZE,
                    r.key(&at(pointer, key)),
                    format!("`{key}` applies only to a new claim (`size`)"),
                )
                .with_help(format!(
                    "remove `{key}`; an existing claim, emptyDir, configMap or secret has its own"
                )),
            );
        }
    }
}

fn mount_path(
    r: &mut Rules<'_>,
    volume: &Volume,
    pointer: &str,
    mounts: &mut HashMap<String, String>,
) {
    let path = &volume.mount_path;
    let path_pointer = at(pointer, "mountPath");
    if !path.starts_with('/') {
        r.push(
            Diagnostic::error(
                codes::VOLUME_RELATIVE_MOUNT,
                r.value(&path_pointer),
                format!("`mountPath` must be an absolute path, found `{path}`"),
            )
            .with_help(format!("write `/{}`", path.trim_start_matches("./"))),
        );
        return;
    }
    let normal = if path.len() > 1 {
        path.trim_end_matches('/')
    } else {
        path.as_str()
    }
    .to_owned();
    let shm = r
        .spec
        .resources
        .as_ref()
        .and_then(|res| res.shm.as_ref())
        .is_some();
    if shm && normal == "/dev/shm" {
        r.push(
            Diagnostic::error(
                codes::VOLUME_SHM_CONFLICT,
                r.value(&path_pointer),
                "`/dev/shm` is already mounted for `resources.shm`",
            )
            .with_secondary(r.key("/resources/shm"), "`shm` mounts /dev/shm")
            .with_help("remove this volume, or remove `resources.shm`"),
        );
    }
    if let Some(first) = mounts.get(&normal) {
        r.push(
            Diagnostic::error(
                codes::VOLUME_DUPLICATE_MOUNT,
                r.value(&path_pointer),
                format!("two volumes mount at `{normal}`"),
            )
            .with_secondary(r.value(first), "first mounted here")
            .with_help("give each volume its own `mountPath`"),
        );
    } else {
        mounts.insert(normal, path_pointer);
    }
}

/// A volume mounted at the script's directory, or above it, replaces what
/// the image has there: the script then must be on the volume. A new claim
/// or an emptyDir starts empty, so torchrun finds no script; a ConfigMap or
/// Secret holds only its keys. An existing claim may well hold the code.
fn hides_script(r: &mut Rules<'_>, volume: &Volume, pointer: &str) {
    let Some(script) = r.spec.script.as_deref().filter(|s| s.starts_with('/')) else {
        return;
    };
    if r.spec.code.is_some() {
        return; // the script is trainc's own file under its code mount
    }
    let mount = volume.mount_path.trim_end_matches('/');
    if !script.starts_with(&format!("{mount}/")) {
        return;
    }
    // Empty at the start: an error; a ConfigMap or Secret may hold the
    // script as a key: a warning.
    let (empty, holds) = if volume.size.is_some() || volume.empty_dir.is_some() {
        (true, "starts empty".to_owned())
    } else if let Some(name) = &volume.config_map {
        (false, format!("holds only the keys of ConfigMap `{name}`"))
    } else if let Some(name) = &volume.secret {
        (false, format!("holds only the keys of Secret `{name}`"))
    } else {
        return;
    };
    let shown = if mount.is_empty() { "/" } else { mount };
    let span = r.value(&at(pointer, "mountPath"));
    let message = format!(
        "this volume is mounted over `{shown}`, which holds `script` `{script}`: the image's files there are hidden, and the volume {holds}"
    );
    let d = if empty {
        Diagnostic::error(codes::VOLUME_HIDES_SCRIPT, span, message)
    } else {
        Diagnostic::warning(codes::VOLUME_HIDES_SCRIPT, span, message)
    };
    r.push(
        d.with_secondary(r.value("/script"), "the script")
        .with_help("mount the volume at a path of its own (such as `/data` or `/etc/train`), or use `[code]` to ship the script with the job"),
    );
}

fn references(r: &mut Rules<'_>, volume: &Volume, pointer: &str) {
    for (key, value) in [
        ("claim", &volume.claim),
        ("configMap", &volume.config_map),
        ("secret", &volume.secret),
        ("storageClass", &volume.storage_class),
    ] {
        if let Some(value) = value
            && let Err(bad) = names::Syntax::Dns1123Subdomain.check(value)
        {
            r.push(super::name_error(
                codes::VOLUME_INVALID_REFERENCE,
                r.value(&at(pointer, key)),
                format!("`{value}` is not a valid {key} name: {}", bad.why),
                &bad,
            ));
        }
    }
    if let Some(sub) = &volume.sub_path
        && let Err(why) = crate::syntax::pod::descending_path(sub)
    {
        r.push(
            Diagnostic::error(
                codes::VOLUME_INVALID_REFERENCE,
                r.value(&at(pointer, "subPath")),
                format!("`subPath` `{sub}` must be a relative path inside the volume: {why}"),
            )
            .with_help("write a path inside the volume, such as `team/run-1`"),
        );
    }
}

fn access_modes(r: &mut Rules<'_>, name: &str, volume: &Volume, pointer: &str) {
    let replicas = r.max_replicas();
    let Some(modes) = &volume.access_modes else {
        return;
    };
    if replicas < 2 || volume.read_only == Some(true) && modes.contains(&AccessMode::ReadOnlyMany) {
        return;
    }
    let shared_mode = modes
        .iter()
        .any(|m| matches!(m, AccessMode::ReadWriteMany | AccessMode::ReadOnlyMany));
    if shared_mode {
        return;
    }
    if let Some(mode) = modes
        .iter()
        .find(|m| matches!(m, AccessMode::ReadWriteOnce | AccessMode::ReadWriteOncePod))
    {
        let why = if *mode == AccessMode::ReadWriteOncePod {
            "only one pod can ever use it: the others stay Pending"
        } else {
            "pods on other nodes cannot mount it and stay Pending"
        };
        r.push(
            Diagnostic::warning(
                codes::VOLUME_RWO_SHARED,
                r.value(&at(pointer, "accessModes")),
                format!("volume `{name}` is `{mode:?}` but up to {replicas} pods mount it: {why}"),
            )
            .with_help(
                "use `accessModes = [\"ReadWriteMany\"]` with a storage class that supports it",
            ),
        );
    }
}
