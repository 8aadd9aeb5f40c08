//! Stage 3, compose: what the command line sets on top of the parsed spec.
//!
//! A value set on the command line (`--target trainjob`) becomes a source of
//! its own, named `<command line>`, so a diagnostic about it points at the
//! flag that set it rather than at a file that never mentioned it.

use crate::source::{SourceId, Sources, Span};
use crate::tree::{Entry, Node, Value};

/// Sets top-level `key` to the string `value`, as written in `flag`
/// (`--target`), replacing what the spec said.
pub fn set_from_command_line(
    tree: &mut Node,
    sources: &mut Sources,
    flag: &str,
    key: &str,
    value: &str,
) {
    let text = format!("{flag} {value}");
    let id: SourceId = sources.add("<command line>", text.clone());
    let key_span = Span::new(id, 0, flag.len());
    let value_span = Span::new(id, flag.len() + 1, text.len());
    let entry = Entry {
        key: key.to_owned(),
        key_span,
        value: Node::new(Value::String(value.to_owned()), value_span),
    };
    if let Value::Table(entries) = &mut tree.value {
        match entries.iter_mut().find(|e| e.key == key) {
            Some(existing) => *existing = entry,
            None => entries.push(entry),
        }
    }
}
