//! A var is what was written: a number in `[vars]` that would not read back
//! as written (`tag = 1.10`, a version, is the float 1.1) is given to
//! templates as its text, as a `--set` value is (`compose::set_from_command_line`).
//! `image = "train:{{ vars.tag }}"` then builds `train:1.10`, not a
//! different image.

use crate::source::Sources;
use crate::tree::{self, Node};

/// Turns each number under `vars` whose written text is not what it reads
/// back as into that text.
pub(crate) fn keep_written(tree: &mut Node, sources: &Sources) {
    let Some(vars) = tree
        .as_table_mut()
        .and_then(|t| t.iter_mut().find(|e| e.key == "vars"))
    else {
        return;
    };
    tree::numbers_as_written(&mut vars.value, sources);
}
