//! One written rule: compiled as the API server compiles it when the CRD
//! is created, run as it runs it on an object, its failure worded as it
//! words it (k8s.io/apiextensions-apiserver v0.36.3
//! `pkg/apiserver/schema/cel/validation.go`: `validateExpressions`,
//! `evalMessageExpression`, `fieldErrorForReason`; `compilation.go`).

use serde_json::Value as Json;

use super::Why;
use super::ast::{Expr, Kind};
use super::compile::{Compiled, expression, visit};
use super::cost;
use super::eval::Eval;
use super::ranges::Range;
use super::sizes::Sizes;
use super::types::Type;
use super::value::{Error, Value};
use super::values::field_pointer;
use crate::verify::gofmt::{bad_value, error_body, go_quoted};

/// The server's error when an object's rules have spent its budget.
const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

/// The longest message a messageExpression may give
/// (`MaxEvaluatedMessageExpressionSizeBytes`).
const MAX_MESSAGE: usize = 5 * 1024;

pub(super) struct Rule {
    source: String,
    program: Box<Expr>,
    /// The most the rule and its messageExpression may cost as the
    /// server estimates it at CRD creation; `None` where trainc cannot
    /// tell.
    pub(super) max_cost: Option<u64>,
    pub(super) message_max_cost: Option<u64>,
    message: Option<String>,
    message_expression: Option<(String, Box<Expr>)>,
    /// `fieldPath`, as a JSON pointer below the node.
    field_path: String,
    reason: Reason,
    uses_old_self: bool,
    optional_old_self: bool,
}

/// A rule's `reason`: the kind of error its failure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reason {
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

    /// The error type as the server names it (`field.ErrorType`).
    #[cfg(test)]
    pub(super) fn kind(self) -> &'static str {
        match self {
            Reason::Invalid => "FieldValueInvalid",
            Reason::Forbidden => "FieldValueForbidden",
            Reason::Required => "FieldValueRequired",
            Reason::Duplicate => "FieldValueDuplicate",
        }
    }
}

/// A rule's failure at a value: the error the server gives.
#[derive(Debug)]
pub(super) struct Failure {
    /// Where, as a JSON pointer into the object.
    pub pointer: String,
    pub reason: Reason,
    /// The bad value as the error shows it, where it shows one.
    pub shown: Option<String>,
    pub detail: String,
}

impl Failure {
    /// The error as the server writes it after the field's path
    /// (`field.Error.ErrorBody`).
    pub(super) fn words(&self) -> String {
        let words = match self.reason {
            Reason::Invalid => "Invalid value",
            Reason::Forbidden => "Forbidden",
            Reason::Required => "Required value",
            Reason::Duplicate => "Duplicate value",
        };
        error_body(words, self.shown.as_deref(), &self.detail)
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

fn names_old_self(expr: &Expr) -> bool {
    let mut found = false;
    visit(expr, &mut |e| {
        if let Kind::Ident(name) = &e.kind {
            found |= &**name == "oldSelf";
        }
    });
    found
}

/// One value a site's rules run at.
pub(super) struct Bound<'a> {
    pub pointer: &'a str,
    /// The JSON value, where it is a scalar the error shows.
    pub value: Option<&'a Json>,
    /// The schema's `type`, which runtime errors show.
    pub kind: &'a str,
    pub this: &'a Value,
    pub old: Option<&'a Value>,
    /// The cost one call may spend (the server's `PerCallLimit`).
    pub per_call: u64,
}

/// Runs each rule at `bound`; `true` when no further rule may run (the
/// budget or a call's limit ran out).
pub(super) fn run_all(
    rules: &[Rule],
    bound: &Bound<'_>,
    remaining: &mut i64,
    failures: &mut Vec<Failure>,
) -> bool {
    let invalid = |detail: String| Failure {
        pointer: bound.pointer.to_owned(),
        reason: Reason::Invalid,
        shown: Some(go_quoted(bound.kind)),
        detail,
    };
    if *remaining <= 0 {
        failures.push(invalid(OUT_OF_BUDGET.to_owned()));
        *remaining = -1;
        return true;
    }
    for rule in rules {
        if rule.uses_old_self && bound.old.is_none() && !rule.optional_old_self {
            continue;
        }
        let (result, cost) = rule.evaluate(bound);
        if cost as i64 > *remaining {
            failures.push(invalid(OUT_OF_BUDGET.to_owned()));
            *remaining = -1;
            return true;
        }
        let value = match result {
            Err(Error::Cancelled) => {
                failures.push(invalid(format!("'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {}", rule.error_text())));
                *remaining = -1;
                return true;
            }
            Err(Error::Eval(message)) => Value::Error(message.into()),
            Ok(value) => value,
        };
        *remaining -= cost as i64;
        match value {
            Value::Bool(true) => continue,
            Value::Bool(false) => {}
            Value::Error(message) if !message.starts_with("no such overload") => {
                failures.push(invalid(format!(
                    "{message} evaluating rule: {}",
                    rule.error_text()
                )));
                continue;
            }
            _ => {
                failures.push(invalid(format!("'no such overload': call arguments did not match a supported operator, function or macro signature for rule: {}", rule.error_text())));
                continue;
            }
        }
        let pointer = format!("{}{}", bound.pointer, rule.field_path);
        let detail = match &rule.message_expression {
            Some((source, expr)) => match message(source, expr, bound, remaining) {
                Ok(detail) => detail,
                Err(detail) => {
                    failures.push(Failure {
                        pointer,
                        ..invalid(detail)
                    });
                    *remaining = -1;
                    return true;
                }
            },
            None => None,
        };
        let detail = detail.unwrap_or_else(|| match &rule.message {
            Some(message) if !message.is_empty() => message.trim().to_owned(),
            _ => format!("failed rule: {}", rule.error_text()),
        });
        let shown = match rule.reason {
            Reason::Invalid | Reason::Duplicate => bound.value.map(bad_value),
            Reason::Forbidden | Reason::Required => None,
        };
        let detail = if rule.reason == Reason::Duplicate {
            String::new()
        } else {
            detail
        };
        failures.push(Failure {
            pointer,
            reason: rule.reason,
            shown,
            detail,
        });
    }
    false
}

/// A messageExpression's message, or `None` where it gives none (the
/// rule's message stands instead); `Err` with the server's error when the
/// budget or the call's limit runs out, which stops all further rules.
fn message(
    source: &str,
    expr: &Expr,
    bound: &Bound<'_>,
    remaining: &mut i64,
) -> Result<Option<String>, String> {
    let mut ev = Eval::new(bound.per_call);
    ev.bind("self", bound.this.clone());
    let result = ev.eval(expr);
    let cost = ev.cost.min(bound.per_call.saturating_add(1));
    if matches!(result, Err(Error::Cancelled)) {
        return Err(format!(
            "no further validation rules will be run due to call cost exceeds limit for messageExpression: {}",
            go_quoted(source)
        ));
    }
    if cost as i64 > *remaining {
        return Err("messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run".to_owned());
    }
    *remaining -= cost as i64;
    Ok(match result {
        Ok(Value::String(text)) => {
            let trimmed = text.trim();
            (trimmed.len() <= MAX_MESSAGE && !trimmed.contains('\n') && !trimmed.is_empty())
                .then(|| trimmed.to_owned())
        }
        _ => None,
    })
}

impl Rule {
    /// The rule's value at `bound`, and its cost.
    fn evaluate(&self, bound: &Bound<'_>) -> (super::value::Result<Value>, u64) {
        let mut ev = Eval::new(bound.per_call);
        ev.bind("self", bound.this.clone());
        if self.uses_old_self {
            let old = match (bound.old, self.optional_old_self) {
                (Some(old), true) => Value::Optional(Some(std::sync::Arc::new(old.clone()))),
                (None, true) => Value::Optional(None),
                (Some(old), false) => old.clone(),
                (None, false) => Value::Null,
            };
            ev.bind("oldSelf", old);
        }
        let result = ev.eval(&self.program);
        (result, ev.cost.min(bound.per_call.saturating_add(1)))
    }

    /// One written rule compiled, `self` of type `self_type` where the
    /// schema declares one, or why it is not checked; its cost estimated
    /// with `sizes`, the schema node's.
    pub(super) fn compile(
        written: &Json,
        self_type: Option<&Type>,
        sizes: &Sizes<'_>,
    ) -> Result<Rule, (Why, &'static str, String)> {
        let invalid = |field: &'static str| move |message: String| (Why::Invalid, field, message);
        let at = |field: &'static str| move |(why, message): (Why, String)| (why, field, message);
        let source = written["rule"].as_str().ok_or_else(|| {
            invalid("rule")("a rule without `rule`, the CEL expression".to_owned())
        })?;
        if source.trim().is_empty() {
            // The CRD's own validation (apiextensions `validation.go`).
            return Err(invalid("rule")(
                "`rule` is empty: rule is not specified".to_owned(),
            ));
        }
        let optional_old_self = written["optionalOldSelf"].as_bool() == Some(true);
        let self_type = self_type.cloned().unwrap_or(Type::Unknown);
        let old_type = if optional_old_self {
            super::types::optional(self_type.clone())
        } else {
            self_type.clone()
        };
        let vars = vec![("self".into(), self_type), ("oldSelf".into(), old_type)];
        let message_source = written["messageExpression"].as_str();
        // A messageExpression is compiled in the rule's environment.
        let (rule_vars, message_vars) = match message_source {
            Some(_) => (vars.clone(), vars),
            None => (vars, Vec::new()),
        };
        let program = expression(source, rule_vars, "the rule", &Type::Bool).map_err(at("rule"))?;
        let max_cost = estimated(&program, sizes);
        let (mut message_expression, mut message_max_cost) = (None, None);
        if let Some(text) = message_source {
            let compiled = expression(text, message_vars, "the messageExpression", &Type::String)
                .map_err(at("messageExpression"))?;
            message_max_cost = estimated(&compiled, sizes);
            message_expression = Some((text.to_owned(), compiled.expr));
        }
        let field_path = match written["fieldPath"].as_str() {
            Some(path) => field_pointer(path).map_err(invalid("fieldPath"))?,
            None => String::new(),
        };
        Ok(Rule {
            source: source.to_owned(),
            uses_old_self: names_old_self(&program.expr),
            program: program.expr,
            max_cost,
            message_max_cost,
            message: written["message"].as_str().map(str::to_owned),
            message_expression,
            field_path,
            reason: Reason::parse(written["reason"].as_str()).map_err(invalid("reason"))?,
            optional_old_self,
        })
    }

    pub(super) fn source(&self) -> &str {
        &self.source
    }

    pub(super) fn uses_old_self(&self) -> bool {
        self.uses_old_self
    }

    /// How the server names the rule in an error (`ruleErrorString`).
    fn error_text(&self) -> &str {
        match &self.message {
            Some(message) if !message.trim().is_empty() => message.trim(),
            _ => self.source.trim(),
        }
    }
}

/// The most `compiled` may cost as the server estimates it.
fn estimated(compiled: &Compiled, sizes: &Sizes<'_>) -> Option<u64> {
    // Kubernetes' `sizeEstimator`: the schema at the node's path; nothing
    // of a node without one.
    let schema = |path: &[String], _: &_| {
        (!path.is_empty())
            .then(|| sizes.estimate(path))
            .flatten()
            .map(|max| Range { min: 0, max })
    };
    cost::estimate(&compiled.expr, &compiled.checked, &schema)
}
