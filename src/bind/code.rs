//! Reading the files `[code]` names, by [`Root`]'s rule, into the data of
//! the ConfigMap that ships them (what that means: [`crate::code`]).

use std::path::PathBuf;

use super::Root;
use super::read::{Loaded, Refusal, read};
use crate::code::{Files, LAUNCHER, MAX_BYTES, MAX_FILES, launcher_for, mounted_name};
use crate::diagnostic::{Diagnostic, codes, escape_for_terminal};
use crate::source::Sources;
use crate::spec::Spec;
use crate::tree::Node;

/// Reads every file of `spec.code` that [`Root`] allows; each problem is
/// located at the path as written. Returns the files only when all of them
/// could be read.
pub(crate) fn load(
    spec: &Spec,
    tree: &Node,
    sources: &Sources,
    root: &Root,
) -> (Files, Vec<Diagnostic>) {
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
        // A file without a directory (kustomize's or kpt's copy, stdin):
        // the working directory, where they run trainc.
        let relative_to = if base.is_some() {
            "the file that lists them"
        } else {
            "the working directory (as a kustomize plugin or KRM function, the kustomization's or package's directory)"
        };
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
                        "paths are relative to {relative_to}; this one is read from `{}`",
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
