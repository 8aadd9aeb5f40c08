//! Stage 7, emit: objects into text, deterministically.
//!
//! YAML is written as serde-saphyr writes it ([`crate::yaml::values`]), which
//! quotes every string a YAML 1.1 reader (such as the Kubernetes API
//! machinery) would read as something else: `on`, `yes`, `0755`, `1e3`,
//! `12:30`, `2024-01-01`, `~`. Documents are separated by
//! `---`, in apply order. JSON is a `v1 List`, which `kubectl apply` accepts.

use crate::render::Object;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Yaml,
    Json,
}

impl Format {
    pub fn extension(self) -> &'static str {
        match self {
            Format::Yaml => "yaml",
            Format::Json => "json",
        }
    }
}

/// A `v1 List` of objects it borrows (`json!` would copy every one).
#[derive(serde::Serialize)]
struct List<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    kind: &'static str,
    items: Vec<&'a serde_json::Value>,
}

/// All objects as one stream.
pub fn stream(objects: &[Object], format: Format) -> String {
    match format {
        Format::Yaml => {
            let mut out = String::new();
            for (i, object) in objects.iter().enumerate() {
                if i > 0 {
                    out.push_str("---\n");
                }
                out.push_str(&yaml(object));
            }
            out
        }
        Format::Json => {
            let list = List {
                api_version: "v1",
                kind: "List",
                items: objects.iter().map(|o| &o.value).collect(),
            };
            let mut text =
                serde_json::to_string_pretty(&list).expect("a JSON value always serialises");
            text.push('\n');
            text
        }
    }
}

/// One file per object, named so that a directory applies in order:
/// `01-persistentvolumeclaim-bert-data.yaml`, ..., `03-pytorchjob-bert.yaml`.
pub fn files(objects: &[Object], format: Format) -> Vec<(String, String)> {
    objects
        .iter()
        .enumerate()
        .map(|(i, object)| {
            let name = format!(
                "{:02}-{}-{}.{}",
                i + 1,
                object.kind.to_ascii_lowercase(),
                object.name,
                format.extension()
            );
            let text = match format {
                Format::Yaml => yaml(object),
                Format::Json => json(&object.value),
            };
            (name, text)
        })
        .collect()
}

fn yaml(object: &Object) -> String {
    crate::yaml::values::to_string(&object.value)
}

fn json(value: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("a JSON value always serialises");
    text.push('\n');
    text
}
