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
                // Every pod's table before the Master's own (`restartPolicy`
                // is `[policy]`'s, and `[master]`'s only for the Master).
                let at = belongs.entry(key.clone()).or_insert_with(|| inner.clone());
                if at.as_str() == "/master" {
                    at.clone_from(&inner);
                }
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
            kubernetes_names::answer(
                pointer,
                key,
                &node.to_json(),
                self.target(),
                self.format(span),
            )
        }) {
            return (d.with_help(help), Some(meant).filter(|m| !m.is_empty()));
        }
        if let Some((help, meant)) = self.after_header(pointer, key, false) {
            return (d.with_help(help), Some(meant));
        }
        if let Some(best) = suggest(key, table.known.iter().map(String::as_str)) {
            let d = d
                .with_label(format!("did you mean `{best}`?"))
                .with_help(format!("rename `{key}` to `{best}`"));
            return (d, Some(join_pointer(pointer, best)));
        }
        if let Some((help, meant)) = self.after_header(pointer, key, true) {
            return (d.with_help(help), Some(meant));
        }
        if let Some((named, meant)) = ending(&table.known, key) {
            let d = d
                .with_label(format!("did you mean {named}?"))
                .with_help(format!("rename `{key}` to {named}"));
            return (d, Some(join_pointer(pointer, &meant)));
        }
        if let (Some(name), "valueFrom") = (pointer.strip_prefix("/env/"), key) {
            let value = self.tree.pointer(&full).map(|(node, _)| node.to_json());
            if let Some(help) =
                value.and_then(|v| kubernetes_forms::value_from(name, &v, self.format(span)))
            {
                return (d.with_help(help), Some(pointer.to_owned()));
            }
        }
        if let Some((help, meant)) = self.misplaced(&table, pointer, key, span) {
            return (d.with_help(help), Some(meant));
        }
        // A field of Kubernetes' pod or container with no spec key: `[podTemplate]`.
        if pointer.is_empty() {
            let value = self.tree.pointer(&full).map(|(node, _)| node.to_json());
            if let Some(help) = value.and_then(|v| {
                crate::validate::pod_template::pod_field(key, &v, self.target(), self.format(span))
            }) {
                return (d.with_help(help), None);
            }
        }
        let list = table
            .known
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        (d.with_help(format!("known keys here: {list}")), None)
    }

    /// A key written one table too high (`gpus` at the top level), as the
    /// spec spells it or another tool does (`max_restarts`): the help and
    /// the key meant.
    fn misplaced(
        &self,
        table: &Table,
        pointer: &str,
        key: &str,
        span: crate::source::Span,
    ) -> Option<(String, String)> {
        let full = join_pointer(pointer, key);
        // A field written one table too high, like `gpus` at the top level.
        if let Some(inner) = table.belongs.get(key) {
            let help = format!("`{key}` belongs in `{}`: move it there", field_path(inner));
            return Some((help, join_pointer(inner, key)));
        }
        // ... and spelt another tool's way (`max_restarts`).
        let spelt = kubernetes_names::norm(key);
        let mut near: Vec<(&String, &String)> = table
            .belongs
            .iter()
            .filter(|(k, _)| kubernetes_names::norm(k) == spelt)
            .collect();
        near.sort();
        if let Some((own, inner)) = near.first() {
            let format = self.format(span);
            let line = self.tree.pointer(&full).map_or_else(
                || format!("`{own}`"),
                |(node, _)| {
                    format!(
                        "`{}`",
                        kubernetes_forms::entry(own, &node.to_json(), format)
                    )
                },
            );
            let place = match format {
                crate::parse::Format::Toml => format!("in `[{}]`", field_path(inner)),
                crate::parse::Format::Yaml => format!("under `{}`", field_path(inner)),
            };
            let help = format!(
                "the spec's key for `{key}` is `{}.{own}`: write {line} {place}",
                field_path(inner)
            );
            return Some((help, join_pointer(inner, own)));
        }
        None
    }

    /// The spec's target as written (`pytorchjob` when none is).
    fn target(&self) -> &str {
        self.tree
            .pointer("/target")
            .and_then(|(t, _)| t.as_str())
            .unwrap_or("pytorchjob")
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
    match (pointer, kubernetes_names::norm(key).as_str()) {
        // The Kubeflow SDK's `num_workers`, the operator's Worker replicas.
        ("", "numworkers" | "nworkers" | "workerreplicas" | "workercount") => Some(
            "`replicas` counts every pod, the Master (where the target has one) with the Workers: three Workers and a Master are `replicas = 4`",
        ),
        // Docker's word: Kubernetes' `command` replaces the image's ENTRYPOINT.
        ("", "entrypoint") => Some(
            "`command = [...]` runs a command verbatim in place of the image's ENTRYPOINT; `imageEntrypoint = true` runs the image's own; `script` or `module` run Python under torchrun",
        ),
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

/// The keys of `known` that `key` is the last word of (`path` for
/// `mountPath` and `subPath`), named, and the first.
fn ending(known: &[String], key: &str) -> Option<(String, String)> {
    let lower = key.to_ascii_lowercase();
    let ending: Vec<&String> = known
        .iter()
        .filter(|k| {
            lower.len() >= 4 && k.len() > lower.len() && k.to_ascii_lowercase().ends_with(&lower)
        })
        .collect();
    let first = ending.first()?;
    let named: Vec<String> = ending.iter().map(|k| format!("`{k}`")).collect();
    Some((named.join(" or "), (*first).clone()))
}
