//! Rules on `[code]` that need no file system: paths, the function, the
//! packages. Reading the files is [`crate::bind::code::load`]'s, after these pass.

use super::Rules;
use std::collections::HashMap;

use crate::code::Code as Mounted;
use crate::code::{LAUNCHER, MAX_FILES, mounted_name, split_function};
use crate::diagnostic::{Diagnostic, codes};

pub(super) fn check(r: &mut Rules<'_>) {
    let Some(code) = &r.spec.code else { return };
    if code.files.is_empty() {
        r.push(
            Diagnostic::error(codes::CODE_INVALID, r.value("/code/files"), "`[code] files` is empty")
                .with_help("list the script to run first, then the modules it imports: `files = [\"train.py\", \"utils.py\"]`"),
        );
    }
    if code.files.len() > MAX_FILES {
        r.push(
            Diagnostic::error(
                codes::CODE_INVALID,
                r.key("/code/files"),
                format!("`[code] files` lists {} files; at most {MAX_FILES} are shipped in one ConfigMap", code.files.len()),
            )
            .with_help("build an image with the code (`COPY` it in a Dockerfile) and run it with `script` or `module`"),
        );
        return;
    }
    // Each mounted name, with the pointer of the first file that has it.
    let mut seen: Vec<(&str, String)> = Vec::new();
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (i, path) in code.files.iter().enumerate() {
        let pointer = format!("/code/files/{i}");
        if path.starts_with(['/', '\\']) || std::path::Path::new(path).is_absolute() {
            r.push(
                Diagnostic::error(
                    codes::CODE_INVALID,
                    r.value(&pointer),
                    format!("`{path}` is an absolute path; `[code] files` are relative to the file that lists them"),
                )
                .with_help("write the path from the spec's directory, e.g. `src/train.py`; trainc reads the file when it builds"),
            );
            continue;
        }
        let Some(name) = mounted_name(path) else {
            r.push(
                Diagnostic::error(
                    codes::CODE_INVALID,
                    r.value(&pointer),
                    format!("`{path}` does not end in a file name a ConfigMap can hold"),
                )
                .with_help("file names may use letters, digits, `-`, `_` and `.`; rename the file"),
            );
            continue;
        };
        if name == LAUNCHER {
            r.push(
                Diagnostic::error(
                    codes::CODE_INVALID,
                    r.value(&pointer),
                    format!(
                        "`{LAUNCHER}` is the name of the script trainc generates to call `function`"
                    ),
                )
                .with_help("rename the file"),
            );
        }
        if let Some(&at) = first.get(name) {
            r.push(
                Diagnostic::error(
                    codes::CODE_INVALID,
                    r.value(&pointer),
                    format!(
                        "two files are named `{name}`; every file is mounted by its name in `{}`",
                        Mounted::MOUNT
                    ),
                )
                .with_secondary(r.value(&seen[at].1), "the other one")
                .with_help("rename one of them"),
            );
        } else {
            first.insert(name, seen.len());
            seen.push((name, pointer));
        }
    }
    function(r, &seen);
    packages(r);
    mounts(r);
}

fn function(r: &mut Rules<'_>, files: &[(&str, String)]) {
    let Some(function) = r.spec.code.as_ref().and_then(|c| c.function.as_ref()) else {
        return;
    };
    let span = r.value("/code/function");
    let Some((file, name)) = split_function(function) else {
        r.push(
            Diagnostic::error(
                codes::CODE_INVALID,
                span,
                format!("`function = \"{function}\"` does not say which file it is in"),
            )
            .with_help(format!(
                "write `FILE:FUNCTION`, e.g. `\"{}:{function}\"`",
                files.first().map_or("train.py", |(n, _)| n)
            )),
        );
        return;
    };
    let identifier = name
        .chars()
        .next()
        .is_some_and(|c| c == '_' || c.is_alphabetic())
        && name.chars().all(|c| c == '_' || c.is_alphanumeric());
    if !identifier {
        let mut better: String = name
            .chars()
            .map(|c| if c.is_alphanumeric() { c } else { '_' })
            .collect();
        if better.starts_with(|c: char| c.is_ascii_digit()) {
            better.insert(0, '_');
        }
        let help = if better.is_empty() {
            format!("write `{file}:FUNCTION`, naming the function to call")
        } else {
            format!(
                "a function name has letters, digits and `_`: `{file}:{better}`, as `def {better}` in `{file}`"
            )
        };
        r.push(
            Diagnostic::error(
                codes::CODE_INVALID,
                span,
                format!("`{name}` is not a Python function name"),
            )
            .with_help(help),
        );
    }
    let listed = mounted_name(file).is_some_and(|m| files.iter().any(|(n, _)| *n == m));
    if !listed {
        let names: Vec<String> = files.iter().map(|(n, _)| format!("`{n}`")).collect();
        r.push(
            Diagnostic::error(
                codes::CODE_INVALID,
                span,
                format!("`{file}` is not one of `[code] files`"),
            )
            .with_secondary(r.key("/code/files"), "the files shipped")
            .with_help(if names.is_empty() {
                format!("add `{file}` to `files`")
            } else {
                format!(
                    "name one of {}, or add `{file}` to `files`",
                    names.join(", ")
                )
            }),
        );
    }
}

fn packages(r: &mut Rules<'_>) {
    let Some(code) = &r.spec.code else { return };
    for (i, package) in code.packages.iter().flatten().enumerate() {
        let pointer = format!("/code/packages/{i}");
        if package.trim().is_empty() {
            r.push(
                Diagnostic::error(codes::CODE_INVALID, r.value(&pointer), "an empty package name")
                    .with_help("remove the empty string, or name a requirement, e.g. `\"torchvision==0.19.1\"`"),
            );
        } else if package.starts_with('-') {
            r.push(
                Diagnostic::error(
                    codes::CODE_INVALID,
                    r.value(&pointer),
                    format!("`{package}` is a pip option, not a requirement"),
                )
                .with_help("`packages` are requirements such as `torchvision==0.19.1`; the index goes in `pipIndexUrl`"),
            );
        }
    }
    if let Some(url) = &code.pip_index_url
        && !(url.starts_with("https://") || url.starts_with("http://"))
    {
        r.push(
            Diagnostic::error(
                codes::CODE_INVALID,
                r.value("/code/pipIndexUrl"),
                format!("`{url}` is not an http(s) URL"),
            )
            .with_help("write the index's URL, e.g. `https://download.pytorch.org/whl/cu121`"),
        );
    }
    if code.pip_index_url.is_some() && code.packages.as_ref().is_none_or(Vec::is_empty) {
        r.push(
            Diagnostic::warning(
                codes::CODE_INVALID,
                r.key("/code/pipIndexUrl"),
                "`pipIndexUrl` has no effect without `packages`",
            )
            .with_help("add the packages to install, or remove it"),
        );
    }
}

/// Volumes may not be mounted where trainc mounts the code.
fn mounts(r: &mut Rules<'_>) {
    let Some(volumes) = &r.spec.volumes else {
        return;
    };
    for (name, volume) in volumes {
        let path = volume.mount_path.trim_end_matches('/');
        if path == "/trainc" || path.starts_with("/trainc/") {
            let pointer = format!("{}/mountPath", super::at("/volumes", name));
            r.push(
                Diagnostic::error(
                    codes::CODE_INVALID,
                    r.value(&pointer),
                    format!("`volumes.{name}` is mounted under `/trainc`, which trainc keeps for `[code]` (`{}`)", Mounted::MOUNT),
                )
                .with_secondary(r.key("/code"), "code mounted because of this")
                .with_help("mount the volume somewhere else; `/trainc` is trainc's"),
            );
        }
    }
}
