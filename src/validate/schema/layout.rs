//! Keys the file's layout put in the wrong table: in TOML, every key after a
//! `[table]` header belongs to that table, so a top-level key written below
//! `[resources]` is read as `resources.nProcPerNode`; in YAML, a key left
//! unindented under `resources:` is read as a top-level key and
//! `resources` as empty. The fix is to move or indent, not to rename.

use super::{Context, join_pointer};
use crate::parse::Format;
use crate::tree::{Value, field_path};

impl Context<'_> {
    /// Whether the schema gives the table at `pointer` the key `key` (its
    /// keys worked out once per table).
    fn knows(&self, pointer: &str, key: &str) -> bool {
        self.table(pointer).known.iter().any(|k| k == key)
    }

    /// Help for `key`, unknown in the TOML table at `pointer` (a `[header]`
    /// or an inline `{ … }`), when it is a key of the top level or of another
    /// top-level table; and the field it was meant to be.
    /// With `near`, a misspelling of a top-level key counts too (asked
    /// only once the table's own keys gave no near spelling).
    pub(super) fn after_header(
        &self,
        pointer: &str,
        key: &str,
        near: bool,
    ) -> Option<(String, String)> {
        if pointer.is_empty() {
            return None;
        }
        let header = self.tree.key_span_at(pointer);
        if self.format(header) != Format::Toml {
            return None;
        }
        let text = &self.sources.get(header.source).text;
        let line_start = text[..header.start].rfind('\n').map_or(0, |i| i + 1);
        let table = field_path(pointer);
        let (tail, top_fix) = if text[line_start..].trim_start().starts_with('[') {
            (
                format!(
                    "but it comes after the `[{table}]` header, and TOML puts every key after a header in that table"
                ),
                "move it above the first `[table]` header",
            )
        } else {
            (
                format!("but it is written inside `{table} = {{ … }}`, whose keys are `{table}`'s"),
                "write it outside the braces, on a line of its own above the first `[table]` header",
            )
        };
        if self.knows("", key) {
            return Some((
                format!("`{key}` is a top-level key, {tail}: {top_fix}"),
                join_pointer("", key),
            ));
        }
        if near {
            let top = self.table("");
            let best = crate::diagnostic::suggest(key, top.known.iter().map(String::as_str))?;
            return Some((
                format!(
                    "`{key}` may be the top-level key `{best}`, {tail}: rename it `{best}` and {top_fix}"
                ),
                join_pointer("", best),
            ));
        }
        let home = self
            .table("")
            .known
            .iter()
            .map(|t| join_pointer("", t))
            .filter(|t| t != pointer)
            .find(|t| self.knows(t, key))?;
        let home_path = field_path(&home);
        Some((
            format!(
                "`{key}` is a key of `[{home_path}]`, {tail}: put it under a `[{home_path}]` header"
            ),
            join_pointer(&home, key),
        ))
    }

    /// Help for a YAML table written empty (`resources:`) whose keys follow
    /// it unindented, read as keys of the table above.
    pub(super) fn unindented(&self, pointer: &str) -> Option<String> {
        let (node, _) = self.tree.pointer(pointer)?;
        if node.value != Value::Null || self.format(node.span) != Format::Yaml {
            return None;
        }
        let (parent, name) = pointer.rsplit_once('/')?;
        let name = crate::tree::segment_key(name);
        let siblings = self.tree.pointer(parent)?.0.as_table()?;
        let at = siblings.iter().position(|e| e.key == name)?;
        let stray: Vec<String> = siblings[at + 1..]
            .iter()
            .take_while(|e| self.knows(pointer, &e.key) && !self.knows(parent, &e.key))
            .map(|e| format!("`{}`", e.key))
            .collect();
        let (verb, them) = match stray.len() {
            0 => return None,
            1 => ("is", "it"),
            _ => ("are", "them"),
        };
        Some(format!(
            "nothing is indented under `{name}:`, so {} {verb} read one level up: indent {them} under `{name}:` by two spaces",
            stray.join(", ")
        ))
    }

    /// A TOML bare dotted key (`app.team = "a"` in `[labels]`) where the
    /// table wanted a value: TOML read a table `app` with the key `team`.
    pub(super) fn dotted_key(&self, pointer: &str) -> Option<String> {
        let (node, _) = self.tree.pointer(pointer)?;
        let key = self.tree.key_span_at(pointer);
        if !matches!(node.value, Value::Table(_)) || self.format(key) != Format::Toml {
            return None;
        }
        let text = &self.sources.get(key.source).text;
        let after = text.get(key.end..)?;
        if !after.starts_with('.') {
            return None;
        }
        let line_end = after.find('\n').unwrap_or(after.len());
        let (dotted, value) = after[..line_end].split_once('=')?;
        let whole = format!("{}{}", &text[key.start..key.end], dotted.trim_end());
        // In an inline table, the value ends at the next `,` or `}`.
        let line = text[..key.start].rsplit('\n').next().unwrap_or("");
        let value = if line.contains('{') {
            value.split([',', '}']).next().unwrap_or(value)
        } else {
            value
        }
        .trim();
        Some(format!(
            "TOML reads the bare key `{whole}` as a table `{}` with the key `{}`: quote the whole key, `\"{whole}\" = {value}`",
            &text[key.start..key.end],
            dotted.trim().trim_start_matches('.')
        ))
    }
}
