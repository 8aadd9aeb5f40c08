//! Unknown keys: the keys a table may have, the nearest to a typo, where a
//! key written one table too high belongs, and the spec's own form where
//! Kubernetes' was written.

use serde_json::Value as Json;

use super::{Context, join_pointer};
use crate::diagnostic::suggest;
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::schema_lookup::schema_at;
use crate::tree::Value;
use crate::tree::field_path;
use crate::validate::{kubernetes_forms, kubernetes_names};

/// The keys a table may have, where each of its sub-tables' keys belong,
/// and where each key the user wrote is.
pub(super) struct Table {
    pub(super) known: Vec<String>,
    /// A key of a sub-table -> that sub-table's pointer (the first one).
    belongs: std::collections::HashMap<String, String>,
    written: std::collections::HashMap<String, crate::source::Span>,
}

impl Context<'_> {
    pub(super) fn table(&self, pointer: &str) -> std::rc::Rc<Table> {
        if let Some(table) = self.tables.borrow().get(pointer) {
            return table.clone();
        }
        let known: Vec<String> = schema_at(self.root, pointer)
            .and_then(|s| s.get("properties"))
            .and_then(Json::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let mut belongs = std::collections::HashMap::new();
        for table in &known {
            let inner = join_pointer(pointer, table);
            for key in schema_at(self.root, &inner)
                .and_then(|s| s.get("properties"))
                .and_then(Json::as_object)
                .into_iter()
                .flat_map(|p| p.keys())
            {
                belongs.entry(key.clone()).or_insert_with(|| inner.clone());
            }
        }
        let written = self
            .tree
            .pointer(pointer)
            .and_then(|(node, _)| node.as_table())
            .into_iter()
            .flatten()
            .map(|e| (e.key.clone(), e.key_span))
            .collect();
        let table = std::rc::Rc::new(Table {
            known,
            belongs,
            written,
        });
        self.tables
            .borrow_mut()
            .insert(pointer.to_owned(), table.clone());
        table
    }

    /// The error for `key` in the table at `pointer`, and the field it was
    /// most likely meant to be, where the help names one.
    pub(super) fn unknown_key(&self, pointer: &str, key: &str) -> (Diagnostic, Option<String>) {
        let full = join_pointer(pointer, key);
        let place = if pointer.is_empty() {
            "the spec".to_owned()
        } else {
            format!("`{}`", field_path(pointer))
        };
        let table = self.table(pointer);
        let span = table
            .written
            .get(key)
            .copied()
            .unwrap_or_else(|| self.tree.key_span_at(&full));
        let d = Diagnostic::error(
            codes::SCHEMA_UNKNOWN_KEY,
            span,
            format!("unknown key `{key}` in {place}"),
        );
        // Kubernetes' spelling of a spec field: the spec's, written out.
        // (For `[elastic]`'s bounds, the table: both are read.)
        let at = if pointer == "/elastic" {
            pointer
        } else {
            &full
        };
        let value = self.tree.pointer(at).map(|(node, _)| node.to_json());
        if let Some(help) = value
            .and_then(|v| kubernetes_forms::kubernetes_key(pointer, key, &v, self.format(span)))
        {
            // Kubernetes' form of the table's fields (`[elastic]`'s bounds: `replicas`).
            let meant = if pointer == "/elastic" {
                "/replicas"
            } else {
                pointer
            };
            return (d.with_help(help), Some(meant.to_owned()));
        }
        // The roles' keys, which the spec says its own way (before where
        // else the key is known: `[master] replicas` is no misplaced top-level key).
        if let Some(help) = role_hint(pointer, key) {
            return (d.with_help(help), None);
        }
        // A Kubernetes field's name, where the spec names it its own way.
        if let Some((help, meant)) = self.tree.pointer(&full).and_then(|(node, _)| {
            let target = self
                .tree
                .pointer("/target")
                .and_then(|(t, _)| t.as_str())
                .unwrap_or("pytorchjob");
            kubernetes_names::answer(pointer, key, &node.to_json(), target, self.format(span))
        }) {
            return (d.with_help(help), Some(meant).filter(|m| !m.is_empty()));
        }
        if let Some((help, meant)) = self.after_header(pointer, key) {
            return (d.with_help(help), Some(meant));
        }
        if let Some(best) = suggest(key, table.known.iter().map(String::as_str)) {
            let d = d
                .with_label(format!("did you mean `{best}`?"))
                .with_help(format!("rename `{key}` to `{best}`"));
            return (d, Some(join_pointer(pointer, best)));
        }
        if let (Some(name), "valueFrom") = (pointer.strip_prefix("/env/"), key) {
            let value = self.tree.pointer(&full).map(|(node, _)| node.to_json());
            if let Some(help) =
                value.and_then(|v| kubernetes_forms::value_from(name, &v, self.format(span)))
            {
                return (d.with_help(help), Some(pointer.to_owned()));
            }
        }
        // A field written one table too high, like `gpus` at the top level.
        if let Some(inner) = table.belongs.get(key) {
            let d = d.with_help(format!(
                "`{key}` belongs in `{}`: move it there",
                field_path(inner)
            ));
            return (d, Some(join_pointer(inner, key)));
        }
        let list = table
            .known
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        (d.with_help(format!("known keys here: {list}")), None)
    }

    /// The spec's own form, where Kubernetes' was written at `pointer`.
    pub(super) fn kubernetes_form(&self, pointer: &str, expected: &str) -> Option<String> {
        let (node, _) = self.tree.pointer(pointer)?;
        let path = field_path(pointer);
        let format = self.format(node.span);
        match (&node.value, expected) {
            (Value::Array(_), "a table") => {
                kubernetes_forms::table_for_list(&path, &node.to_json(), format)
            }
            (Value::String(text), "a table") => {
                kubernetes_forms::table_for_pairs(&path, text, format)
            }
            (Value::Table(_), "an array") if format == crate::parse::Format::Toml => {
                let span = self.tree.key_span_at(pointer);
                let text = &self.sources.get(span.source).text;
                let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
                kubernetes_forms::array_of_tables(&path, &text[line_start..span.end])
            }
            _ => None,
        }
    }
}

/// Keys of flytekit's and the operator's roles, which the spec says another
/// way: its top level is every pod, the Workers' included, and `[master]`
/// one pod.
fn role_hint(pointer: &str, key: &str) -> Option<&'static str> {
    match (pointer, key.to_ascii_lowercase().as_str()) {
        ("", "worker" | "workers") => Some(
            "the spec's top level describes the Workers (every pod): write their `image`, `[resources]` and `[policy]` there, and what the Master has of its own in `[master]`",
        ),
        ("/master", "replicas") => {
            Some("a PyTorchJob has one Master: the top-level `replicas` counts it with the Workers")
        }
        ("/master", "env" | "args" | "command" | "script" | "module" | "volumes") => Some(
            "`[master]` sets the Master's `image`, `nProcPerNode`, `restartPolicy` and `[master.resources]` apart; the rest of the spec is every pod's",
        ),
        _ => None,
    }
}
