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
use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Diagnostic, codes};
use crate::model::Code;
use crate::source::Sources;
use crate::spec::{self, Spec};
use crate::syntax::{sha256, shell};
use crate::tree::Node;

/// Most bytes a ConfigMap's data may hold: Kubernetes rejects a larger one
/// (`MaxSecretSize`, shared by ConfigMaps; k8s.io/kubernetes
/// `pkg/apis/core/validation/validation.go`, `ValidateConfigMap`).
pub const MAX_BYTES: usize = 1024 * 1024;
/// The generated script that calls `function`; user files may not take its name.
pub const LAUNCHER: &str = "trainc_main.py";

/// The files of `[code]` by the name they are mounted under, with the
/// launcher trainc generates for `function`: the ConfigMap's data.
pub type Files = BTreeMap<String, String>;

/// Reads every file of `spec.code`; each problem is located at the path as
/// written. Returns the files only when all of them could be read.
pub fn load(spec: &Spec, tree: &Node, sources: &Sources) -> (Files, Vec<Diagnostic>) {
    let mut files = Files::new();
    let mut problems = Vec::new();
    let Some(code) = &spec.code else {
        return (files, problems);
    };
    let mut total = 0usize;
    for (i, path) in code.files.iter().enumerate() {
        let span = tree.span_at(&format!("/code/files/{i}"));
        let base = sources.get(span.source).dir.clone();
        let full = base.map_or_else(|| PathBuf::from(path), |dir| dir.join(path));
        let Some(name) = mounted_name(path) else {
            continue; // reported by the rules
        };
        match read(&full) {
            Ok(text) => {
                total += text.len();
                files.insert(name.to_owned(), text);
            }
            Err(why) => problems.push(
                Diagnostic::error(
                    codes::CODE_FILE,
                    span,
                    format!("cannot ship `{path}`: {why}"),
                )
                .with_help(format!(
                    "paths are relative to the file that lists them; this one is read from `{}`",
                    full.display()
                )),
            ),
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

/// A file's content when it is a readable UTF-8 file of at most [`MAX_BYTES`].
fn read(path: &Path) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    if file.metadata().map_err(|e| e.to_string())?.is_dir() {
        return Err("it is a directory; list the files in it".to_owned());
    }
    let mut bytes = Vec::new();
    file.take(MAX_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() > MAX_BYTES {
        return Err("it is larger than 1 MiB, all a ConfigMap holds".to_owned());
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "it is not UTF-8 text (byte {} is invalid); ship source code, not data",
            e.utf8_error().valid_up_to()
        )
    })
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
        "# Generated by trainc: calls {function}() from {file} in every process torchrun starts.\n\
         import runpy\n\
         \n\
         runpy.run_path({path:?})[{function:?}]()\n",
        path = format!("{}/{file}", Code::MOUNT),
    )
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
    fn mounted_names_are_configmap_keys() {
        assert_eq!(mounted_name("src/train.py"), Some("train.py"));
        assert_eq!(mounted_name("train.py"), Some("train.py"));
        assert_eq!(mounted_name("../x/y_z-1.py"), Some("y_z-1.py"));
        assert_eq!(mounted_name("my file.py"), None);
        assert_eq!(mounted_name("dir/"), None);
        assert_eq!(mounted_name(".."), None);
    }
}
