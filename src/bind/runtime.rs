//! For the bind stage, a TrainJob's runtime: read the cluster's
//! runtimes file (`--runtimes FILE`, else `[trainjob] runtimesFile`) and
//! find the runtime the TrainJob names there or in the catalogue of the
//! Trainer release ([`crate::trainer::bind`]).
//!
//! A file the spec names is read by the rule of [`Root`]: only
//! inside the spec's directory (or `--code-root`), so a package trainc did
//! not write cannot make it read elsewhere.

use super::Root;
use crate::diagnostic::{Diagnostic, codes};
use crate::source::{SourceId, Sources};
use crate::spec::defaults;
use crate::spec::{RuntimeKind, Spec, Target};
use crate::trainer::bind::{Bound, bind};
use crate::trainer::file::RuntimesFile;
use crate::trainer::runtime::Kind;
use crate::tree::Node;

/// Most bytes of a runtimes file: the size of any other input trainc reads.
#[allow(clippy::cast_possible_truncation)] // 4 MiB fits in any usize
const MAX_BYTES: usize = crate::source::MAX_SOURCE_BYTES as usize;

const FIELD: &str = "/trainjob/runtimesFile";

/// The runtime `spec` runs on, when it builds a TrainJob; `flag` is the
/// runtimes file of the command line, already read. Problems of the file are
/// errors (a file given must be right); a runtime that neither the file nor
/// the catalogue knows is left to the rules, which warn.
pub(crate) fn load(
    spec: &Spec,
    tree: &Node,
    sources: &mut Sources,
    root: &Root,
    flag: Option<&RuntimesFile>,
) -> (Option<Bound>, Vec<Diagnostic>) {
    if spec.target != Some(Target::Trainjob) {
        return (None, Vec::new());
    }
    let options = spec.trainjob.as_ref();
    let named = match (flag, options.and_then(|t| t.runtimes_file.as_deref())) {
        (None, Some(path)) => match named_file(path, tree, sources, root) {
            Ok(id) => Some(RuntimesFile::new(id)),
            Err(d) => return (None, vec![*d]),
        },
        _ => None,
    };
    // The command line's file is read once for every spec built against it.
    let file = flag.or(named.as_ref());
    let (runtimes, problems) = match file {
        Some(file) => {
            let (runtimes, problems) = file.runtimes(sources);
            (Some(runtimes.as_slice()), problems.clone())
        }
        None => (None, Vec::new()),
    };
    let kind = match options
        .and_then(|t| t.runtime_kind)
        .unwrap_or(defaults::TRAINJOB_RUNTIME_KIND)
    {
        RuntimeKind::TrainingRuntime => Kind::Namespaced,
        RuntimeKind::ClusterTrainingRuntime => Kind::Cluster,
    };
    let name = options
        .and_then(|t| t.runtime.as_deref())
        .unwrap_or(defaults::TRAINJOB_RUNTIME);
    let release = options
        .and_then(|t| t.api_level)
        .unwrap_or(defaults::TRAINJOB_API_LEVEL)
        .release();
    let bound = bind(kind, name, spec.namespace.as_deref(), release, runtimes);
    (Some(bound), problems)
}

/// `[trainjob] runtimesFile`, read relative to the file that set it.
fn named_file(
    path: &str,
    tree: &Node,
    sources: &mut Sources,
    root: &Root,
) -> Result<SourceId, Box<Diagnostic>> {
    let at = tree.span_at(FIELD);
    let base = sources.get(at.source).dir.clone();
    match super::read::read_named("the runtimes file", path, base.as_deref(), root, MAX_BYTES) {
        Ok((text, full)) => {
            let id = sources.add(full.display().to_string(), text);
            sources.set_dir(id, full.parent().map(std::path::Path::to_path_buf));
            Ok(id)
        }
        Err((why, help)) => {
            let mut d = Diagnostic::error(
                codes::TRAINJOB_RUNTIME,
                at,
                format!("cannot read the runtimes file `{path}`: {why}"),
            );
            if !help.is_empty() {
                d = d.with_help(help);
            }
            Err(Box::new(d))
        }
    }
}
