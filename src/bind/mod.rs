//! Stage 4b, bind: what a valid spec names outside itself, read once the
//! spec is valid: the `[code]` files ([`code::load`]) and, for a TrainJob,
//! the runtime it runs on ([`runtime::load`]), against which the rules that
//! need a runtime then run ([`crate::validate::rules::check_runtime`]). The
//! only stage after reading that opens files, and only inside the code root
//! ([`Root`]), by the one rule of [`read`].

pub(crate) mod code;
pub(crate) mod read;
mod root;
pub(crate) mod runtime;

pub(crate) use root::Root;

use crate::diagnostic::Diagnostic;
use crate::source::Sources;
use crate::spec::Spec;
use crate::trainer::bind::Bound;
use crate::tree::Node;

/// What a spec was bound to.
#[derive(Debug, Default)]
pub struct Bindings {
    /// The `[code]` files; none when the spec is not valid as a whole.
    pub code: crate::code::Files,
    /// For a TrainJob, the runtime it names and what trainc knows of it.
    pub runtime: Option<Bound>,
}

/// Binds `spec` (its `tree` for spans). `read_code`: the spec is valid as a
/// whole, so its `[code]` files are read; `look_up_runtime`: its runtime
/// name is not already wrong, so there is one to look up. `runtimes` is the
/// runtimes file of the command line, already read. Returns what was bound
/// and the problems found on the way.
pub(crate) fn bind(
    spec: &Spec,
    tree: &Node,
    sources: &mut Sources,
    root: &Root,
    runtimes: Option<&crate::trainer::file::RuntimesFile>,
    read_code: bool,
    look_up_runtime: bool,
) -> (Bindings, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let code = if read_code {
        let (files, mut unreadable) = code::load(spec, tree, sources, root);
        diagnostics.append(&mut unreadable);
        files
    } else {
        crate::code::Files::new()
    };
    let (runtime, mut found) = if look_up_runtime {
        runtime::load(spec, tree, sources, root, runtimes)
    } else {
        (None, Vec::new())
    };
    diagnostics.append(&mut found);
    if let Some(bound) = &runtime {
        diagnostics.extend(crate::validate::rules::check_runtime(
            spec, tree, sources, bound,
        ));
    }
    (Bindings { code, runtime }, diagnostics)
}
