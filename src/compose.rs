//! Stage 3, compose: what the command line sets on top of the parsed spec.
//!
//! A value set on the command line (`--target trainjob`) becomes a source of
//! its own, named `<command line>`, so a diagnostic about it points at the
//! flag that set it rather than at a file that never mentioned it.

use crate::source::{SourceId, Sources, Span};
use crate::tree::{Entry, Node, Value};

/// Sets the value at `path` (`["trainjob", "apiLevel"]`) to the string
/// `value`, as written after `flag` (`--api-level`), replacing what the spec
/// said and creating tables on the way as needed.
pub fn set_from_command_line(
    tree: &mut Node,
    sources: &mut Sources,
    flag: &str,
    path: &[&str],
    value: &str,
) {
    let text = format!("{flag} {value}");
    let id: SourceId = sources.add("<command line>", text.clone());
    let key_span = Span::new(id, 0, flag.len());
    let value_span = Span::new(id, flag.len() + 1, text.len());
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = tree;
    for key in parents {
        let Value::Table(entries) = &mut node.value else {
            return;
        };
        let index = entries
            .iter()
            .position(|e| e.key == *key)
            .unwrap_or_else(|| {
                entries.push(Entry {
                    key: (*key).to_owned(),
                    key_span,
                    value: Node::new(Value::Table(Vec::new()), key_span),
                });
                entries.len() - 1
            });
        node = &mut entries[index].value;
    }
    let Value::Table(entries) = &mut node.value else {
        return;
    };
    let entry = Entry {
        key: (*last).to_owned(),
        key_span,
        value: Node::new(Value::String(value.to_owned()), value_span),
    };
    match entries.iter_mut().find(|e| e.key == *last) {
        Some(existing) => *existing = entry,
        None => entries.push(entry),
    }
}
