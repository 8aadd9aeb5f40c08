//! A CRD's CEL rules (`x-kubernetes-validations`), evaluated as the API
//! server evaluates them when an object is created: each rule with `self`
//! bound to the value of the field its schema node describes, for every
//! such value the object holds (every item of a list, every value of a
//! map), after defaulting. A rule that reads `oldSelf` compares an update
//! with the object it replaces: there is none offline, so it is skipped.
//!
//! The interpreter is the `cel` crate (cel-rust), with the standard
//! library and macros (`has`, `all`, `exists`, `exists_one`, `map`,
//! `filter`), cel-go's strings, lists and math extensions, optional values,
//! and the parts of Kubernetes' own libraries in [`library`]. Rule
//! semantics were checked against kubernetes/kubernetes v1.30.0,
//! `staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go`
//! (where `message`, `messageExpression`, `fieldPath` and `reason` are
//! read, and how a failed rule is worded).

mod library;
mod values;

use std::sync::{Arc, OnceLock};

use cel::{Context, Env, Program};
use serde_json::Value as Json;

use super::Problem;
use values::{Step, each_value, field_pointer, fields_read, to_cel};

/// One rule of a schema node.
pub(crate) struct Rule {
    /// The rule as written.
    source: String,
    program: Program,
    message: Option<String>,
    message_expression: Option<Program>,
    /// The messageExpression as written.
    message_source: Option<String>,
    /// `fieldPath`, as a JSON pointer below the node.
    field_path: String,
    reason: Reason,
}

/// A rule's `reason`: how the API server words its failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reason {
    Invalid,
    Forbidden,
    Required,
    Duplicate,
}

impl Reason {
    fn parse(reason: Option<&str>) -> Result<Reason, String> {
        Ok(match reason {
            None | Some("FieldValueInvalid") => Reason::Invalid,
            Some("FieldValueForbidden") => Reason::Forbidden,
            Some("FieldValueRequired") => Reason::Required,
            Some("FieldValueDuplicate") => Reason::Duplicate,
            Some(other) => {
                return Err(format!(
                    "`reason` `{other}` is none of FieldValueInvalid, FieldValueForbidden, FieldValueRequired, FieldValueDuplicate"
                ));
            }
        })
    }

    /// The API server's words for it (`field.ErrorType`'s), before the message.
    fn words(self, value: &Json) -> String {
        match self {
            Reason::Invalid => format!("Invalid value: \"{}\"", type_name(value)),
            Reason::Forbidden => "Forbidden".to_owned(),
            Reason::Required => "Required value".to_owned(),
            Reason::Duplicate => format!("Duplicate value: \"{}\"", type_name(value)),
        }
    }
}

/// The OpenAPI type of a value, as the API server names it in a rule's error.
fn type_name(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(n) if n.is_f64() => "number",
        Json::Number(_) => "integer",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

/// A schema node with rules, and where its values are.
struct Site {
    path: Vec<Step>,
    rules: Vec<Rule>,
    /// The only fields of `self` its rules read, where they read no other
    /// way than `self.field`: a TrainJob's name rules need its metadata,
    /// not the whole job made a CEL value.
    fields: Option<Vec<String>>,
}

/// Every rule of a schema that can be checked offline.
#[derive(Default)]
pub(crate) struct Rules {
    sites: Vec<Site>,
}

/// A rule that is not checked, and why: at `pointer` in the schema.
pub(crate) struct Unusable {
    pub pointer: String,
    pub message: String,
    pub why: Why,
}

/// Why a rule is not checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// It reads `oldSelf`: it compares an update with the object it
    /// replaces, and offline there is none.
    Transition,
    /// It calls a function of Kubernetes' libraries that trainc does not
    /// evaluate.
    Unsupported,
    /// The API server would reject the CRD for it.
    Invalid,
}

/// Functions of Kubernetes' CEL libraries (v1.30.0,
/// `staging/src/k8s.io/apiserver/pkg/cel/library/`) that [`library`] does
/// not provide.
const NOT_EVALUATED: &[&str] = &[
    "quantity",
    "isQuantity",
    "url",
    "getScheme",
    "getHost",
    "getHostname",
    "getPort",
    "getEscapedPath",
    "getQuery",
    "ip",
    "isIP",
    "cidr",
    "isCIDR",
    "semver",
    "isSemver",
    "isSorted",
    "sum",
    "min",
    "max",
    "authorizer",
    "validate",
];

/// Schema nodes deeper than this (far deeper than any CRD's) are not read.
const MAX_DEPTH: usize = 128;

/// The interpreter's environment: built once.
fn env() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib().with_optional_support(true);
        // Each only fails on a name declared twice, which these are not.
        let _ = env.add_extension(cel::extensions::strings);
        let _ = env.add_extension(cel::extensions::lists);
        let _ = env.add_extension(cel::extensions::math);
        let _ = env.add_extension(library::extension);
        Arc::new(env)
    })
}

impl Rules {
    /// The rules of `schema` (a structural schema's root, the object's),
    /// and those it cannot check, each at its place in the schema.
    pub(crate) fn of(schema: &Json) -> (Rules, Vec<Unusable>) {
        let mut rules = Rules::default();
        let mut unusable = Vec::new();
        let mut path = Vec::new();
        rules.walk(schema, &mut path, "", &mut unusable, 0);
        (rules, unusable)
    }

    fn walk(
        &mut self,
        node: &Json,
        path: &mut Vec<Step>,
        pointer: &str,
        unusable: &mut Vec<Unusable>,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        if let Some(written) = node["x-kubernetes-validations"].as_array() {
            let mut rules = Vec::new();
            for (n, written) in written.iter().enumerate() {
                let at = format!("{pointer}/x-kubernetes-validations/{n}");
                match compile(written) {
                    Ok(rule) => rules.push(rule),
                    Err((why, message)) => unusable.push(Unusable {
                        pointer: at,
                        message,
                        why,
                    }),
                }
            }
            if !rules.is_empty() {
                let fields = (rules.iter())
                    .flat_map(|rule| {
                        std::iter::once(rule.source.as_str()).chain(rule.message_source.as_deref())
                    })
                    .map(fields_read)
                    .try_fold(Vec::new(), |mut all, fields| {
                        all.extend(fields?);
                        Some(all)
                    });
                self.sites.push(Site {
                    path: path.clone(),
                    rules,
                    fields,
                });
            }
        }
        if let Some(properties) = node["properties"].as_object() {
            for (key, child) in properties {
                path.push(Step::Key(key.clone()));
                let at = format!("{pointer}/properties/{}", crate::tree::pointer_segment(key));
                self.walk(child, path, &at, unusable, depth + 1);
                path.pop();
            }
        }
        for (keyword, child) in [
            ("items", &node["items"]),
            ("additionalProperties", &node["additionalProperties"]),
        ] {
            if child.is_object() {
                path.push(Step::Each);
                let at = format!("{pointer}/{keyword}");
                self.walk(child, path, &at, unusable, depth + 1);
                path.pop();
            }
        }
    }

    /// Every rule's failure in `object` (whose `Kind/name` is `id`), as
    /// problems at the fields the rules are attached to.
    pub(crate) fn check(&self, id: &str, object: &Json, problems: &mut Vec<Problem>) {
        for site in &self.sites {
            let mut at = String::new();
            each_value(object, &site.path, &mut at, &mut |pointer, value| {
                let bound = match (&site.fields, value) {
                    (Some(fields), Json::Object(all)) => cel::Value::Map(cel::objects::Map {
                        map: Arc::new(
                            (fields.iter())
                                .filter_map(|f| {
                                    Some((cel::objects::Key::from(f.clone()), to_cel(all.get(f)?)))
                                })
                                .collect(),
                        ),
                    }),
                    _ => to_cel(value),
                };
                let mut context = Context::with_env(Arc::clone(env()));
                context.add_variable_from_value("self", bound);
                for rule in &site.rules {
                    if let Some(problem) = rule.check(id, pointer, value, &context) {
                        problems.push(problem);
                    }
                }
            });
        }
    }
}

/// Whether a rule's text names `oldSelf` (a transition rule), told
/// without compiling it: a CRD's embedded copy keeps no such rule.
pub(crate) fn reads_old_self(rule: &str) -> bool {
    rule.match_indices("oldSelf").any(|(at, _)| {
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        !rule[..at].ends_with(word) && !rule[at + "oldSelf".len()..].starts_with(word)
    })
}

/// One written rule compiled, or why it is not checked.
fn compile(written: &Json) -> Result<Rule, (Why, String)> {
    let invalid = |message: String| (Why::Invalid, message);
    let source = written["rule"]
        .as_str()
        .ok_or_else(|| invalid("a rule without `rule`, the CEL expression".to_owned()))?;
    let program = env().compile(source).map_err(|e| {
        invalid(format!(
            "the rule `{source}` does not compile: {}",
            first_line(&e.to_string())
        ))
    })?;
    if program.references().has_variable("oldSelf") {
        return Err((
            Why::Transition,
            format!("the transition rule `{source}` reads `oldSelf`"),
        ));
    }
    let message_expression = match written["messageExpression"].as_str() {
        Some(expression) => Some(env().compile(expression).map_err(|e| {
            invalid(format!(
                "the messageExpression `{expression}` does not compile: {}",
                first_line(&e.to_string())
            ))
        })?),
        None => None,
    };
    for expression in std::iter::once(&program).chain(&message_expression) {
        let references = expression.references();
        let mut functions = references.functions();
        functions.sort_unstable();
        if let Some(function) = functions
            .iter()
            .find(|f| NOT_EVALUATED.contains(f) || f.starts_with("format."))
        {
            return Err((
                Why::Unsupported,
                format!(
                    "the rule `{source}` calls `{function}`, a function of Kubernetes' CEL libraries that trainc does not evaluate"
                ),
            ));
        }
    }
    let field_path = match written["fieldPath"].as_str() {
        Some(path) => field_pointer(path).map_err(invalid)?,
        None => String::new(),
    };
    Ok(Rule {
        source: source.to_owned(),
        program,
        message: written["message"].as_str().map(str::to_owned),
        message_expression,
        message_source: written["messageExpression"].as_str().map(str::to_owned),
        field_path,
        reason: Reason::parse(written["reason"].as_str()).map_err(invalid)?,
    })
}

fn first_line(text: &str) -> &str {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(text)
        .trim()
}

impl Rule {
    /// The problem with `value` (at `pointer` in the object, bound as
    /// `self` in `context`), if the rule does not hold for it.
    fn check(
        &self,
        id: &str,
        pointer: &str,
        value: &Json,
        context: &Context<'_, '_>,
    ) -> Option<Problem> {
        let failed = match self.program.execute(context) {
            Ok(cel::Value::Bool(true)) => return None,
            Ok(cel::Value::Bool(false)) => None,
            Ok(other) => Some(format!(
                "the rule `{}` gives {}, not a bool",
                self.source,
                other.type_of()
            )),
            Err(error) => Some(format!(
                "the rule `{}` cannot be evaluated: {error}",
                self.source
            )),
        };
        let message = match failed {
            // An error in evaluation is the API server's message itself.
            Some(error) => error,
            None => self.message(context),
        };
        let path = format!("{pointer}{}", self.field_path);
        Some(Problem::new(
            super::Contract::Rule,
            id,
            &path,
            format!("{}: {message}", self.reason.words(value)),
        ))
    }

    /// The failure's message: `messageExpression`'s string where it gives
    /// a non-empty one, else `message`, else the rule itself.
    fn message(&self, context: &Context<'_, '_>) -> String {
        if let Some(expression) = &self.message_expression
            && let Ok(cel::Value::String(text)) = expression.execute(context)
            && !text.trim().is_empty()
        {
            return text.replace('\n', " ");
        }
        match &self.message {
            Some(message) if !message.is_empty() => message.clone(),
            _ => format!("failed rule: {}", self.source),
        }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod upstream;
