//! Where a rule's values are in an object, what of them it reads, and
//! those values as CEL's.

use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::Value as Json;

/// Where in an object a schema node's values are: keys, and `Each` for
/// every item of a list or value of a map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Step {
    Key(String),
    Each,
}

/// The fields of `self` that `source` reads, if it reads `self` only as
/// `self.field` (or `self?.field`), never whole nor by a method of its own
/// (`self.all(…)`); a `self` inside a string counts as read whole.
pub(super) fn fields_read(source: &str) -> Option<Vec<String>> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut fields = Vec::new();
    for (at, _) in source.match_indices("self") {
        let before = &source[..at];
        if before.ends_with(word) || before.ends_with('.') {
            continue;
        }
        let after = &source[at + 4..];
        if after.starts_with(word) {
            continue;
        }
        let after = after.trim_start();
        let after = after
            .strip_prefix("?.")
            .or_else(|| after.strip_prefix('.'))?;
        let after = after.trim_start();
        let end = after.find(|c: char| !word(c)).unwrap_or(after.len());
        if end == 0 || after[end..].trim_start().starts_with('(') {
            return None;
        }
        fields.push(after[..end].to_owned());
    }
    Some(fields)
}

/// Calls `found` with every value at `path` below `value` and its pointer.
pub(super) fn each_value(
    value: &Json,
    path: &[Step],
    at: &mut String,
    found: &mut dyn FnMut(&str, &Json),
) {
    let Some((step, rest)) = path.split_first() else {
        found(at, value);
        return;
    };
    let len = at.len();
    match (step, value) {
        (Step::Key(key), Json::Object(fields)) => {
            if let Some(child) = fields.get(key) {
                at.push('/');
                at.push_str(&crate::tree::pointer_segment(key));
                each_value(child, rest, at, found);
            }
        }
        (Step::Each, Json::Array(items)) => {
            for (n, item) in items.iter().enumerate() {
                let _ = write!(at, "/{n}");
                each_value(item, rest, at, found);
                at.truncate(len);
            }
        }
        (Step::Each, Json::Object(fields)) => {
            for (key, child) in fields {
                at.push('/');
                at.push_str(&crate::tree::pointer_segment(key));
                each_value(child, rest, at, found);
                at.truncate(len);
            }
        }
        _ => {}
    }
    at.truncate(len);
}

/// A rule's `fieldPath` (`.spec.replicas`, `.labels['app/name']`,
/// `.items[0]`) as a JSON pointer.
pub(super) fn field_pointer(path: &str) -> Result<String, String> {
    let wrong =
        || format!("`fieldPath` `{path}` is not a path of fields (`.name`, `['key']`, `[0]`)");
    let mut pointer = String::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            if end == 0 {
                return Err(wrong());
            }
            pointer.push('/');
            pointer.push_str(&crate::tree::pointer_segment(&after[..end]));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix("['") {
            let end = after.find("']").ok_or_else(wrong)?;
            pointer.push('/');
            pointer.push_str(&crate::tree::pointer_segment(&after[..end]));
            rest = &after[end + 2..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']').ok_or_else(wrong)?;
            let index: usize = after[..end].parse().map_err(|_| wrong())?;
            let _ = write!(pointer, "/{index}");
            rest = &after[end + 1..];
        } else {
            return Err(wrong());
        }
    }
    Ok(pointer)
}

/// A JSON value as CEL reads it: an integer is an `int`, any other number
/// a `double`, an object a map.
pub(super) fn to_cel(value: &Json) -> cel::Value {
    match value {
        Json::Null => cel::Value::Null,
        Json::Bool(b) => cel::Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(int) => cel::Value::Int(int),
            None => match n.as_u64() {
                Some(uint) => cel::Value::UInt(uint),
                None => cel::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
        },
        Json::String(s) => cel::Value::String(Arc::new(s.clone())),
        Json::Array(items) => cel::Value::List(Arc::new(items.iter().map(to_cel).collect())),
        Json::Object(fields) => {
            let map: std::collections::HashMap<cel::objects::Key, cel::Value> = fields
                .iter()
                .map(|(k, v)| (cel::objects::Key::from(k.clone()), to_cel(v)))
                .collect();
            cel::Value::Map(cel::objects::Map { map: Arc::new(map) })
        }
    }
}
