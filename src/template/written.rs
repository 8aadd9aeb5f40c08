//! A var is what was written: a number in `[vars]` that would not read back
//! as written (`tag = 1.10`, a version, is the float 1.1) is given to
//! templates as its text, as a `--set` value is (`compose::set_from_command_line`).
//! `image = "train:{{ vars.tag }}"` then builds `train:1.10`, not a
//! different image.

use crate::source::Sources;
use crate::tree::{Node, Value};

/// Turns each number under `vars` whose written text is not what it reads
/// back as into that text.
pub fn keep_written(tree: &mut Node, sources: &Sources) {
    let Some(vars) = tree
        .as_table_mut()
        .and_then(|t| t.iter_mut().find(|e| e.key == "vars"))
    else {
        return;
    };
    as_written(&mut vars.value, sources);
}

/// Each number in `node` that does not read back as written made its
/// text: `[vars]` here, a `--set` value as it is read
/// (`compose::set_from_command_line`).
pub fn as_written(node: &mut Node, sources: &Sources) {
    match &mut node.value {
        Value::Table(entries) => {
            for entry in entries {
                as_written(&mut entry.value, sources);
            }
        }
        Value::Array(items) => {
            for item in items {
                as_written(item, sources);
            }
        }
        Value::Integer(_) | Value::Float(_) => {
            let source = sources.get(node.span.source);
            let written = source
                .text
                .get(node.span.start..node.span.end)
                .unwrap_or("")
                .trim();
            // `--set` values were decided as they were read; a span that
            // holds more than the number is not its written form.
            let alone = !written.contains(|c: char| c.is_whitespace() || ",[]{}".contains(c));
            if source.name != crate::compose::COMMAND_LINE
                && alone
                && !reads_back(&node.value, written)
            {
                node.value = Value::String(written.to_owned());
            }
        }
        _ => {}
    }
}

/// Whether `value` prints as `written` (digit separators and a `+` aside).
fn reads_back(value: &Value, written: &str) -> bool {
    let plain = written.trim_start_matches('+').replace('_', "");
    match value {
        Value::Integer(i) => plain == i.to_string(),
        Value::Float(x) => plain == toml::Value::Float(*x).to_string(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_numbers_that_print_as_written_stay_numbers() {
        assert!(reads_back(&Value::Float(1.5), "1.5"));
        assert!(reads_back(&Value::Integer(1000), "1_000"));
        assert!(reads_back(&Value::Integer(8), "+8"));
        assert!(!reads_back(&Value::Float(1.1), "1.10"));
        assert!(!reads_back(&Value::Float(1e-4), "1e-4"));
        assert!(!reads_back(
            &Value::Float(12_345_678_901_234_567_000.0),
            "12345678901234567890.0"
        ));
        assert!(!reads_back(&Value::Integer(8), "0o10"));
    }
}
