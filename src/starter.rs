//! The starter spec `trainc init` writes: every commonly used field with a
//! one-line comment, valid as written (the tests check it with `trainc check`
//! for each target and format, with and without GPUs, and that the three
//! formats build the same objects).
//!
//! The starter is a list of items (fields, tables, comments), each rendered
//! as TOML, as bare YAML or as a KRM `TrainSpec`; a commented-out item is a
//! suggestion the user uncomments.

use crate::spec::Target;

/// What the starter is for.
#[derive(Debug, Clone)]
pub struct Starter {
    /// The file it is written to, named in its header.
    pub file: String,
    pub name: String,
    pub target: Target,
    pub gpu: bool,
    pub format: StarterFormat,
    /// Whether the spec's schema is written beside it (`trainc init FILE`
    /// does; `init -` cannot), so that its first line may point to it.
    pub schema_beside: bool,
}

/// The schema file a starter in `format` points editors to, beside it.
pub fn schema_file(format: StarterFormat) -> &'static str {
    match format {
        StarterFormat::Krm => "trainspec-krm.schema.json",
        _ => "trainspec.schema.json",
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StarterFormat {
    Toml,
    /// The bare spec as YAML.
    Yaml,
    /// The KRM form (`apiVersion`, `kind: TrainSpec`, `metadata`, `spec`).
    Krm,
}

/// Trailing comments start in this column.
const COMMENT_COLUMN: usize = 40;

/// A value, written inline in either syntax.
enum Val {
    Str(&'static str),
    Owned(String),
    Int(i64),
    Bool(bool),
    List(Vec<Val>),
    Map(Vec<(&'static str, Val)>),
}

impl Val {
    fn inline(&self, yaml: bool) -> String {
        let quote = |s: &str| serde_json::Value::String(s.to_owned()).to_string();
        match self {
            Val::Str(s) => quote(s),
            Val::Owned(s) => quote(s),
            Val::Int(i) => i.to_string(),
            Val::Bool(b) => b.to_string(),
            Val::List(items) => {
                let items: Vec<String> = items.iter().map(|v| v.inline(yaml)).collect();
                format!("[{}]", items.join(", "))
            }
            Val::Map(entries) => {
                let sep = if yaml { ": " } else { " = " };
                let entries: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{k}{sep}{}", v.inline(yaml)))
                    .collect();
                format!("{{ {} }}", entries.join(", "))
            }
        }
    }
}

enum Item {
    Blank,
    /// A field of the current table.
    Field(Field),
    /// A table: the fields that follow, up to the next table, are its.
    Table {
        path: &'static [&'static str],
        comment: Option<&'static str>,
        /// Commented out in every format (an entry that needs its fields).
        off: bool,
    },
}

/// A field; `off` writes it commented out.
struct Field {
    key: &'static str,
    value: Val,
    comment: Option<&'static str>,
    off: bool,
}

/// A field; `""` for no comment.
fn field(key: &'static str, value: Val, comment: &'static str) -> Item {
    Item::Field(Field {
        key,
        value,
        comment: (!comment.is_empty()).then_some(comment),
        off: false,
    })
}

/// A field written commented out: a suggestion.
fn off(key: &'static str, value: Val, comment: &'static str) -> Item {
    let mut item = field(key, value, comment);
    if let Item::Field(field) = &mut item {
        field.off = true;
    }
    item
}

/// What comments a line out, when `off`.
fn hash(off: bool) -> &'static str {
    if off { "# " } else { "" }
}

fn table(path: &'static [&'static str], comment: &'static str) -> Item {
    Item::Table {
        path,
        comment: (!comment.is_empty()).then_some(comment),
        off: false,
    }
}

/// A table written commented out in every format.
fn off_table(path: &'static [&'static str], comment: &'static str) -> Item {
    let mut item = table(path, comment);
    if let Item::Table { off, .. } = &mut item {
        *off = true;
    }
    item
}

/// The starter spec in its format.
pub fn render(starter: &Starter) -> String {
    let items = items(starter);
    let mut out = Lines(String::new());
    // Quoted for the shell, as a command to copy; `init` refuses a name
    // with a control character, which a comment line could not hold.
    let file = crate::syntax::shell::quote(&starter.file);
    let schema = schema_file(starter.format);
    let refresh = if starter.format == StarterFormat::Krm {
        format!("trainc schema --krm > {schema}")
    } else {
        format!("trainc schema > {schema}")
    };
    let (reference, editors) = match starter.format {
        StarterFormat::Toml => (format!("#:schema ./{schema}"), "taplo, Even Better TOML"),
        _ => (
            format!("# yaml-language-server: $schema=./{schema}"),
            "VS Code's YAML extension",
        ),
    };
    // Two lines either way: the rest of the starter keeps its line numbers.
    if starter.schema_beside {
        out.line(&reference);
        out.line(&format!(
            "# Completion and docs in editors ({editors}); `trainc init` wrote it"
        ));
    } else {
        out.line(&format!("# Completion and docs in editors: `{refresh}`,"));
        out.line(&format!("# then `{reference}` as this file's first line."));
    }
    out.line(&format!("# Check it: trainc check {file}"));
    out.line(&format!(
        "# Run it:   trainc build {file} | kubectl apply -f -"
    ));
    out.line("");
    match starter.format {
        StarterFormat::Toml => toml(&mut out, &items),
        StarterFormat::Yaml => yaml(&mut out, &items, 0),
        StarterFormat::Krm => {
            out.line("apiVersion: trainc.dev/v1alpha1");
            out.line("kind: TrainSpec");
            out.line("metadata:");
            out.entry(
                &format!("  name: {}", starter.name),
                "the job; object and pod names derive from it",
            );
            out.entry(
                "  # namespace: ml",
                "default: the namespace kubectl or kustomize applies to",
            );
            out.line("spec:");
            let spec: Vec<Item> = items
                .into_iter()
                .filter(|i| {
                    !matches!(
                        i,
                        Item::Field(Field {
                            key: "name" | "namespace",
                            ..
                        })
                    )
                })
                .collect();
            yaml(&mut out, &spec, 2);
        }
    }
    out.0
}

fn toml(out: &mut Lines, items: &[Item]) {
    for item in items {
        match item {
            Item::Blank => out.line(""),
            Item::Field(f) => {
                let line = format!("{}{} = {}", hash(f.off), f.key, f.value.inline(false));
                out.entry_opt(&line, f.comment);
            }
            Item::Table { path, comment, off } => {
                // Active even with all its fields commented out: an
                // uncommented field must land in this table, not the one before.
                out.entry_opt(&format!("{}[{}]", hash(*off), path.join(".")), *comment);
            }
        }
    }
}

/// A table all of whose fields are commented out: in YAML an empty mapping
/// would be `null`, so its header is commented out too.
fn table_is_off(items: &[Item], table: &Item) -> bool {
    let start = items
        .iter()
        .position(|i| std::ptr::eq(i, table))
        .map_or(items.len(), |i| i + 1);
    items[start..]
        .iter()
        .take_while(|i| !matches!(i, Item::Table { .. }))
        .all(|i| !matches!(i, Item::Field(Field { off: false, .. })))
}

fn yaml(out: &mut Lines, items: &[Item], indent: usize) {
    let mut depth = 0;
    for item in items {
        match item {
            Item::Blank => out.line(""),
            Item::Field(f) => {
                let pad = " ".repeat(indent + 2 * depth);
                let line = format!("{pad}{}{}: {}", hash(f.off), f.key, f.value.inline(true));
                out.entry_opt(&line, f.comment);
            }
            Item::Table { path, comment, off } => {
                let hash = hash(*off || table_is_off(items, item));
                for (level, key) in path.iter().enumerate() {
                    let pad = " ".repeat(indent + 2 * level);
                    let text = format!("{pad}{hash}{key}:");
                    if level + 1 == path.len() {
                        out.entry_opt(&text, *comment);
                    } else {
                        out.line(&text);
                    }
                }
                depth = path.len();
            }
        }
    }
}

/// Every item of the starter, top-level fields first.
fn items(starter: &Starter) -> Vec<Item> {
    let Starter {
        name, target, gpu, ..
    } = starter;
    let pytorchjob = *target == Target::Pytorchjob;
    let mut items = vec![
        field(
            "name",
            Val::Owned(name.clone()),
            "the job; object and pod names derive from it",
        ),
        off(
            "namespace",
            Val::Str("ml"),
            "default: the namespace kubectl or kustomize applies to",
        ),
    ];
    items.push(match target {
        Target::Pytorchjob => field(
            "target",
            Val::Str("pytorchjob"),
            "Kubeflow Training Operator; or \"trainjob\" for Trainer v2",
        ),
        Target::Trainjob => field(
            "target",
            Val::Str("trainjob"),
            "Kubeflow Trainer v2; or \"pytorchjob\" for the Training Operator",
        ),
        Target::Job => field(
            "target",
            Val::Str("job"),
            "an Indexed Job: any cluster, no operator",
        ),
        Target::Jobset => field(
            "target",
            Val::Str("jobset"),
            "a JobSet: any cluster with the JobSet controller",
        ),
    });
    items.extend([
        field(
            "image",
            Val::Str("ghcr.io/acme/train:1.0"),
            "your training image; pin a tag or digest",
        ),
        field(
            "script",
            Val::Str("/app/train.py"),
            "runs torchrun /app/train.py ARGS; or module = \"acme.train\"",
        ),
        field(
            "args",
            Val::List(vec![Val::Str("--epochs"), Val::Str("10")]),
            "",
        ),
        field(
            "replicas",
            Val::Int(2),
            if pytorchjob {
                "pods (nodes); \"2:4\" makes an elastic job"
            } else {
                "pods (nodes)"
            },
        ),
        if *gpu {
            field("nProcPerNode", Val::Str("gpu"), "one process per GPU")
        } else {
            field(
                "nProcPerNode",
                Val::Int(1),
                "one process per pod, using all its cores (OMP_NUM_THREADS)",
            )
        },
    ]);
    pod(&mut items, *gpu);
    placement(&mut items, starter);
    items
}

/// Resources, env and volumes of each pod.
fn pod(items: &mut Vec<Item>, gpu: bool) {
    items.extend([
        Item::Blank,
        table(&["resources"], "per pod; requests = limits"),
        field("cpu", Val::Str("4"), ""),
        field("memory", Val::Str("16Gi"), ""),
    ]);
    if gpu {
        items.extend([
            field(
                "gpus",
                Val::Int(1),
                "nvidia.com/gpu; set gpuResource for others",
            ),
            field(
                "shm",
                Val::Str("4Gi"),
                "/dev/shm for NCCL and DataLoader workers",
            ),
        ]);
    }
    items.extend([Item::Blank, table(&["env"], "")]);
    items.push(if gpu {
        field("NCCL_DEBUG", Val::Str("WARN"), "")
    } else {
        field("OMP_NUM_THREADS", Val::Str("4"), "match resources.cpu")
    });
    items.extend([
        off(
            "HF_TOKEN",
            Val::Map(vec![("secret", Val::Str("hf")), ("key", Val::Str("token"))]),
            "secrets from a Secret, never literal",
        ),
        Item::Blank,
        off_table(&["volumes", "data"], "mounted in every pod"),
        off("mountPath", Val::Str("/data"), ""),
        off(
            "size",
            Val::Str("100Gi"),
            "a new PVC; or claim = \"existing-pvc\", emptyDir = true",
        ),
    ]);
}

/// Where the pods run and what happens to the job.
fn placement(items: &mut Vec<Item>, starter: &Starter) {
    let (gpu, pytorchjob) = (starter.gpu, starter.target == Target::Pytorchjob);
    let toleration = |key, operator, value: Option<&'static str>| {
        let mut entries = vec![("key", Val::Str(key)), ("operator", Val::Str(operator))];
        if let Some(value) = value {
            entries.push(("value", Val::Str(value)));
        }
        entries.push(("effect", Val::Str("NoSchedule")));
        Val::List(vec![Val::Map(entries)])
    };
    items.extend([
        Item::Blank,
        table(&["scheduling"], ""),
        off("queue", Val::Str("team-a"), "Kueue LocalQueue"),
        if gpu {
            field(
                "tolerations",
                toleration("nvidia.com/gpu", "Exists", None),
                "",
            )
        } else {
            off(
                "tolerations",
                toleration("dedicated", "Equal", Some("training")),
                "",
            )
        },
        Item::Blank,
        table(&["policy"], ""),
    ]);
    if pytorchjob {
        items.push(field(
            "backoffLimit",
            Val::Int(3),
            "retries before the job fails",
        ));
    }
    if pytorchjob || matches!(starter.target, Target::Job | Target::Jobset) {
        items.push(field(
            "ttlAfterFinished",
            Val::Str("1d"),
            "delete the finished job after a day",
        ));
    }
    items.push(off(
        "activeDeadline",
        Val::Str("24h"),
        "fail the job if it runs longer",
    ));
    items.push(off(
        "suspend",
        Val::Bool(true),
        "create it suspended (Kueue admits it)",
    ));
    if starter.target == Target::Trainjob {
        items.extend([
            Item::Blank,
            table(&["trainjob"], ""),
            field(
                "runtime",
                Val::Str("torch-distributed"),
                "the ClusterTrainingRuntime",
            ),
            off(
                "apiLevel",
                Val::Str("v2.1"),
                "for clusters on Trainer v2.1 (or \"v2.0\")",
            ),
        ]);
    }
}

struct Lines(String);

impl Lines {
    fn line(&mut self, text: &str) {
        self.0.push_str(text);
        self.0.push('\n');
    }

    /// `code`, then `# comment` aligned at [`COMMENT_COLUMN`].
    fn entry(&mut self, code: &str, comment: &str) {
        let pad = COMMENT_COLUMN
            .saturating_sub(code.chars().count() + 1)
            .max(1);
        self.line(&format!("{code}{}# {comment}", " ".repeat(pad)));
    }

    fn entry_opt(&mut self, code: &str, comment: Option<&str>) {
        match comment {
            Some(comment) => self.entry(code, comment),
            None => self.line(code),
        }
    }
}
