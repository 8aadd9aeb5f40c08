//! Local code (`[code]`): the one stage besides reading the spec that touches
//! the file system. After validation, the files `[code] files` names are read
//! (size-limited, UTF-8) into the ConfigMap that ships them; resolve then
//! runs them under torchrun from where that ConfigMap is mounted.
//!
//! This is the Kubeflow SDK's `train_func` + `packages_to_install`, written
//! down: the SDK serialises a function into the container's command; trainc
//! ships whole files in a ConfigMap (so a module can import its neighbours)
//! whose name carries a hash of their content, as kustomize's ConfigMap
//! generator does, so that changing the code makes a new name and so a new job.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Diagnostic, codes, escape_for_terminal};
use crate::source::Sources;
use crate::spec::{self, Spec};
use crate::syntax::{sha256, shell};
use crate::tree::Node;

mod read;

use read::{Loaded, Refusal, read};
pub use read::{read_named, read_within};

/// Local code in a ConfigMap whose name carries a hash of its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Code {
    pub config_map: String,
    /// File name to content, in the order the ConfigMap lists them (sorted).
    pub files: BTreeMap<String, String>,
    /// Whether packages are installed, into an emptyDir at [`Code::PACKAGES`].
    pub packages: bool,
}

impl Code {
    /// Where the files appear in the training container.
    pub const MOUNT: &'static str = "/trainc/code";
    /// pip's user base (`PYTHONUSERBASE`) for `packages`: writable whatever
    /// the user and a read-only root filesystem.
    pub const PACKAGES: &'static str = "/trainc/packages";
    /// Volume names of the two; `trainc-` is reserved for trainc's volumes.
    pub const VOLUME: &'static str = "trainc-code";
    pub const PACKAGES_VOLUME: &'static str = "trainc-packages";
}

/// Most bytes a ConfigMap's data may hold: Kubernetes rejects a larger one
/// (`MaxSecretSize`, shared by ConfigMaps; k8s.io/kubernetes
/// `pkg/apis/core/validation/validation.go`, `ValidateConfigMap`).
pub const MAX_BYTES: usize = 1024 * 1024;
/// The generated script that calls `function`; user files may not take its name.
pub const LAUNCHER: &str = "trainc_main.py";

/// The files of `[code]` by the name they are mounted under, with the
/// launcher trainc generates for `function`: the ConfigMap's data.
pub type Files = BTreeMap<String, String>;

/// Most files `[code]` may list: each is a key of one ConfigMap, mounted by
/// name; more than this is a project to build into an image.
pub const MAX_FILES: usize = 1000;

/// The directory `[code]` files must lie in, and how to name it to a user.
///
/// The rule, the same in every mode: a file is read only when its real path
/// (every link resolved) is inside the root, it is a regular file (not a
/// directory, FIFO, socket or device, nothing under `/proc`, `/sys` or
/// `/dev`), and it is UTF-8 text without NUL. The root is `--code-root` when
/// given, else the directory of the spec being built; for `trainc fn` and the
/// kustomize plugin, which have no spec file, it is the working directory,
/// where kustomize and kpt run functions (the kustomization's or package's
/// directory). A package a user did not write can so never ship
/// `../../etc/shadow`, `/proc/self/environ` or a link to either.
#[derive(Debug, Clone)]
pub struct Root {
    pub dir: PathBuf,
    pub origin: RootOrigin,
}

/// Where the [`Root`] came from, for the help of a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootOrigin {
    /// `--code-root DIR`.
    Flag,
    /// The spec file's directory.
    Spec,
    /// The working directory: a spec on stdin, `trainc fn`, the kustomize plugin.
    WorkingDirectory,
}

impl Root {
    /// The root for a spec read from `source`, unless `flag` names one.
    pub fn of(flag: Option<&Path>, sources: &Sources, spec: crate::SourceId) -> Root {
        match (flag, &sources.get(spec).dir) {
            (Some(dir), _) => Root {
                dir: dir.to_path_buf(),
                origin: RootOrigin::Flag,
            },
            (None, Some(dir)) => Root {
                dir: if dir.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    dir.clone()
                },
                origin: RootOrigin::Spec,
            },
            (None, None) => Root {
                dir: PathBuf::from("."),
                origin: RootOrigin::WorkingDirectory,
            },
        }
    }

    /// How to fix a refusal of `what` (`[code]` files, the runtimes file).
    fn help(&self, what: &str) -> String {
        let shown = escape_for_terminal(&self.dir.display().to_string());
        match self.origin {
            RootOrigin::Flag => format!(
                "{what} must be inside `{shown}` (`--code-root`); move the file there or pass a `--code-root` that holds it"
            ),
            RootOrigin::Spec => format!(
                "{what} must be inside the spec's directory `{shown}`; keep it beside the spec, or pass `--code-root DIR` with a directory that holds both"
            ),
            RootOrigin::WorkingDirectory => format!(
                "as a KRM function or kustomize plugin (or with the spec on stdin), {what} must be inside the working directory, where kustomize and kpt run trainc: the kustomization's or package's directory"
            ),
        }
    }
}

/// Reads every file of `spec.code` that [`Root`] allows; each problem is
/// located at the path as written. Returns the files only when all of them
/// could be read.
pub fn load(spec: &Spec, tree: &Node, sources: &Sources, root: &Root) -> (Files, Vec<Diagnostic>) {
    let mut files = Files::new();
    let mut problems = Vec::new();
    let Some(code) = &spec.code else {
        return (files, problems);
    };
    if code.files.len() > MAX_FILES {
        return (files, problems); // reported by the rules
    }
    let real_root = std::fs::canonicalize(&root.dir).and_then(|real| {
        if real.is_dir() {
            Ok(real)
        } else {
            Err(std::io::Error::other("it is not a directory"))
        }
    });
    let real_root = match real_root {
        Ok(real) => real,
        Err(error) => {
            problems.push(Diagnostic::error(
                codes::CODE_FILE,
                tree.key_span_at("/code/files"),
                format!(
                    "cannot read the code root `{}`: {}",
                    escape_for_terminal(&root.dir.display().to_string()),
                    crate::source::io_reason(&error)
                ),
            ));
            return (files, problems);
        }
    };
    let mut total = 0usize;
    for (i, path) in code.files.iter().enumerate() {
        let span = tree.span_at(&format!("/code/files/{i}"));
        let base = sources.get(span.source).dir.clone();
        let full = base.map_or_else(|| PathBuf::from(path), |dir| dir.join(path));
        let Some(name) = mounted_name(path) else {
            continue; // reported by the rules
        };
        let remaining = MAX_BYTES.saturating_sub(total);
        match read(&full, &real_root, remaining, MAX_BYTES) {
            Ok(Loaded::Text(text)) => {
                total += text.len();
                files.insert(name.to_owned(), text);
            }
            Ok(Loaded::Over(size)) => total = total.saturating_add(size),
            Err(why) => {
                let help = match why {
                    Refusal::Outside(_) => root.help("`[code]` files"),
                    Refusal::TooLarge(_) => {
                        "`[code]` ships source code in a ConfigMap; data, weights and large files belong in the image or a volume the job mounts (`[volumes]`)".to_owned()
                    }
                    Refusal::NotText(_) | Refusal::Nul(_) => {
                        "save source code as UTF-8 (`iconv -t utf-8`); binary data belongs in the image or a volume the job mounts (`[volumes]`)".to_owned()
                    }
                    _ => format!(
                        "paths are relative to the file that lists them; this one is read from `{}`",
                        escape_for_terminal(&full.display().to_string())
                    ),
                };
                problems.push(
                    Diagnostic::error(
                        codes::CODE_FILE,
                        span,
                        format!("cannot ship `{path}`: {why}"),
                    )
                    .with_help(help),
                );
            }
        }
    }
    if let Some(launcher) = launcher_for(code) {
        total += launcher.len();
        files.insert(LAUNCHER.to_owned(), launcher);
    }
    if problems.is_empty() && total > MAX_BYTES {
        problems.push(
            Diagnostic::error(
                codes::CODE_TOO_LARGE,
                tree.key_span_at("/code/files"),
                format!(
                    "`[code]` files hold {total} bytes; a ConfigMap holds at most {MAX_BYTES} (1 MiB)"
                ),
            )
            .with_help("build an image with the code (`COPY` it in a Dockerfile) and run it with `script` or `module`"),
        );
    }
    (files, problems)
}

/// The name a file is mounted under: its file name, when that is a valid
/// ConfigMap key.
pub fn mounted_name(path: &str) -> Option<&str> {
    let name = path.rsplit(['/', '\\']).next()?;
    let valid = !name.is_empty()
        && name.len() <= 253
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    valid.then_some(name)
}

/// The ConfigMap's name: the job's, `-code-`, and the first 10 hex digits of
/// a SHA-256 over every key and value (lengths included, so no two different
/// file sets hash the same bytes).
pub fn config_map_name(job: &str, data: &Files) -> String {
    let mut bytes = Vec::new();
    for (key, value) in data {
        for part in [key, value] {
            bytes.extend_from_slice(&(part.len() as u64).to_be_bytes());
            bytes.extend_from_slice(part.as_bytes());
        }
    }
    format!("{job}-code-{}", sha256::hex(&bytes, 10))
}

/// The ConfigMap's data and how it runs: the files, plus the launcher when a
/// function is called.
pub fn resolve(spec: &Spec, files: &Files) -> Option<Code> {
    let code = spec.code.as_ref()?;
    Some(Code {
        config_map: config_map_name(&spec.name, files),
        files: files.clone(),
        packages: code.packages.as_ref().is_some_and(|p| !p.is_empty()),
    })
}

/// Calls `function` from `file` with no arguments. `runpy.run_path` runs the
/// file as a module named `<run_path>`, so its `if __name__ == "__main__":`
/// block stays out of the way, and the code directory is first on `sys.path`
/// (it holds this script), so the file's `import utils` finds its neighbours.
fn launcher(file: &str, function: &str) -> String {
    format!(
        "# Generated by trainc: calls {comment}() from {file} in every process torchrun starts.\n\
         import runpy\n\
         \n\
         runpy.run_path({path})[{name}]()\n",
        comment = python_str(function).trim_matches('"'),
        path = python_str(&format!("{}/{file}", Code::MOUNT)),
        name = python_str(function),
    )
}

/// `text` as a Python string literal, in ASCII: every character outside
/// printable ASCII as `\xNN`, `\uNNNN` or `\UNNNNNNNN`, which Python reads
/// back as the same code point (Rust's `{:?}` writes `\u{941}`, which
/// Python does not).
fn python_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            c => crate::syntax::push_hex_escape(&mut out, c),
        }
    }
    out.push('"');
    out
}

/// `FILE:FUNCTION` as its two parts (the rules check each).
pub fn split_function(function: &str) -> Option<(&str, &str)> {
    function.rsplit_once(':')
}

/// The launcher for `code.function`, when it reads as `FILE:FUNCTION`.
fn launcher_for(code: &spec::Code) -> Option<String> {
    let (file, name) = split_function(code.function.as_ref()?)?;
    Some(launcher(mounted_name(file)?, name))
}

/// The container command: `torchrun` (the words the target's launch takes,
/// from [`crate::resolve`]) on the script (the launcher, or the first file),
/// through `sh -c` only when packages are installed first.
pub fn entrypoint(spec: &Spec, mut torchrun: Vec<String>) -> Vec<String> {
    let Some(code) = &spec.code else {
        return Vec::new();
    };
    let script = if code.function.is_some() {
        LAUNCHER
    } else {
        code.files
            .first()
            .and_then(|f| mounted_name(f))
            .unwrap_or_default()
    };
    torchrun.push(format!("{}/{script}", Code::MOUNT));
    let packages = code.packages.clone().unwrap_or_default();
    if packages.is_empty() {
        return torchrun;
    }
    // pip's `--user` install into an emptyDir: writable for any user and with
    // a read-only root filesystem, and pip still sees what the image has
    // installed (torch), so it is not downloaded again. `$@` passes `args`.
    let mut pip = vec![
        "python",
        "-m",
        "pip",
        "install",
        "--user",
        "--quiet",
        "--no-warn-script-location",
        "--disable-pip-version-check",
    ];
    if let Some(url) = &code.pip_index_url {
        pip.extend(["--index-url", url]);
    }
    pip.extend(packages.iter().map(String::as_str));
    let script = format!(
        "set -e\nexport PYTHONUSERBASE={}\n{}\nexec {} \"$@\"\n",
        shell::quote(Code::PACKAGES),
        shell::join(pip),
        shell::join(torchrun.iter().map(String::as_str)),
    );
    vec!["sh".to_owned(), "-c".to_owned(), script, "sh".to_owned()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_follows_the_content() {
        let a = Files::from([("train.py".to_owned(), "print(1)\n".to_owned())]);
        let b = Files::from([("train.py".to_owned(), "print(2)\n".to_owned())]);
        assert_ne!(config_map_name("job", &a), config_map_name("job", &b));
        assert_eq!(
            config_map_name("job", &a),
            config_map_name("job", &a.clone())
        );
        // Moving bytes between a key and its value changes the hash.
        let c = Files::from([("train.p".to_owned(), "yprint(1)\n".to_owned())]);
        assert_ne!(config_map_name("job", &a), config_map_name("job", &c));
        assert!(config_map_name("job", &a).starts_with("job-code-"));
        assert_eq!(config_map_name("job", &a).len(), "job-code-".len() + 10);
    }

    #[test]
    fn launchers_are_python_string_literals() {
        assert_eq!(python_str("train"), "\"train\"");
        assert_eq!(python_str("f\u{941}"), "\"f\\u0941\"");
        assert_eq!(
            python_str("a\"b\\c\u{e9}\u{1f600}"),
            "\"a\\\"b\\\\c\\xe9\\U0001f600\""
        );
        let script = launcher("uni.py", "f\u{941}");
        assert!(script.is_ascii(), "{script}");
        assert!(
            script.contains("runpy.run_path(\"/trainc/code/uni.py\")[\"f\\u0941\"]()"),
            "{script}"
        );
    }

    #[test]
    fn mounted_names_are_configmap_keys() {
        assert_eq!(mounted_name("src/train.py"), Some("train.py"));
        assert_eq!(mounted_name("train.py"), Some("train.py"));
        assert_eq!(mounted_name("../x/y_z-1.py"), Some("y_z-1.py"));
        assert_eq!(mounted_name("my file.py"), None);
        assert_eq!(mounted_name("dir/"), None);
        assert_eq!(mounted_name(".."), None);
    }
}
