//! What the API server refuses in a rule when the CRD is created
//! (k8s.io/apiextensions-apiserver v0.36.3
//! `pkg/apiserver/schema/cel/compilation.go`, `compileRule`): a name
//! nothing declares, a type error ([`super::checker`]), a literal cel-go's
//! validators refuse (a duration, a timestamp, a pattern), a result that
//! is not a bool (a message's, not a string); each worded as the server
//! words it.

use super::Why;
use super::ast::{Expr, Kind, Literal};
use super::checker::{self, Checked};
use super::library::valid_pattern;
use super::syntax;
use super::time::{Duration, Timestamp};
use super::types::Type;

/// An expression compiled: its tree, boxed so that the checker's keys
/// (its nodes' addresses) stay its own, and what checking it found.
pub(super) struct Compiled {
    pub expr: Box<Expr>,
    pub checked: Checked,
}

/// `source` compiled as `what` (`the rule`, `the messageExpression`) in
/// an environment declaring `vars`, its result `wanted`, in the server's
/// order: syntax, types, literals, the result's type.
pub(super) fn expression(
    source: &str,
    vars: Vec<(std::sync::Arc<str>, Type)>,
    what: &str,
    wanted: &Type,
) -> Result<Compiled, (Why, String)> {
    let expr = syntax::parse(source).map(Box::new).map_err(|e| {
        (
            Why::Invalid,
            format!(
                "{what} {} does not compile: {}",
                quoted(source),
                first_line(&compile_error(source, e.at, &e.message))
            ),
        )
    })?;
    let checked = typed(source, &expr, vars, true, what)?;
    check(source, &expr, what)?;
    result_is(source, &checked.result, what, wanted)?;
    Ok(Compiled { expr, checked })
}

/// cel-go's report of a compile error: where, and the line with a caret.
fn compile_error(source: &str, at: Option<u32>, message: &str) -> String {
    let Some(at) = at else {
        return format!("compilation failed: ERROR: <input>:-1:0: {message}");
    };
    let at = (at as usize).min(source.len());
    let before = &source[..at];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = source[line_start..at].chars().count();
    let text = source[line_start..].lines().next().unwrap_or("");
    format!(
        "compilation failed: ERROR: <input>:{line}:{}: {message}\n | {text}\n | {}^",
        column + 1,
        ".".repeat(column)
    )
}

/// The server's report without `compilation failed: ` (a rule's or a
/// `messageExpression`'s) and the caret.
pub(super) fn first_line(report: &str) -> &str {
    let line = report.lines().next().unwrap_or(report);
    [
        "messageExpression compilation failed: ",
        "compilation failed: ",
    ]
    .iter()
    .find_map(|prefix| line.strip_prefix(prefix))
    .unwrap_or(line)
}

/// A compile error of `source`, as the server gives it, found in its tree
/// by cel-go's literal validators.
fn check(source: &str, expr: &Expr, what: &str) -> Result<(), (Why, String)> {
    let mut result = Ok(());
    visit(expr, &mut |e| {
        if result.is_err() {
            return;
        }
        let Kind::Call {
            function,
            target,
            args,
        } = &e.kind
        else {
            return;
        };
        let literal = match (target.is_some(), &args[..]) {
            (
                false,
                [
                    Expr {
                        kind: Kind::Literal(l),
                        at,
                    },
                ],
            ) => Some((l, *at)),
            _ => None,
        };
        let pattern = match (&**function, &args[..]) {
            (
                "matches" | "find" | "findAll",
                [
                    Expr {
                        kind: Kind::Literal(Literal::String(p)),
                        at,
                    },
                    ..,
                ],
            ) => Some((p, *at)),
            _ => None,
        };
        // cel-go's literal validators (`ValidateDurationLiterals`,
        // `ValidateTimestampLiterals`, `ValidateRegexLiterals`) report at
        // the argument; a pattern of `find` is compiled when the program
        // is made, and its error has no place.
        let bad = match (&**function, literal, pattern) {
            ("timestamp", Some((Literal::String(s), at)), _) if Timestamp::parse(s).is_none() => {
                Some((Some(at), "invalid timestamp argument".to_owned()))
            }
            ("timestamp", Some((Literal::Int(n), at)), _)
                if !(-62_135_596_800..=253_402_300_799).contains(n) =>
            {
                Some((Some(at), "invalid timestamp argument".to_owned()))
            }
            ("duration", Some((Literal::String(s), at)), _) if Duration::parse(s).is_none() => {
                Some((Some(at), "invalid duration argument".to_owned()))
            }
            ("matches", _, Some((p, at))) => valid_pattern(p)
                .err()
                .map(|e| (Some(at), format!("invalid matches argument ({e})"))),
            (_, _, Some((p, _))) => valid_pattern(p).err().map(|e| (None, e)),
            _ => None,
        };
        if let Some((at, message)) = bad {
            let error = match at {
                Some(at) => first_line(&compile_error(source, Some(at), &message)).to_owned(),
                None => format!("program instantiation failed: {message}"),
            };
            result = Err((
                Why::Invalid,
                format!("{what} {} does not compile: {error}", quoted(source)),
            ));
        }
    });
    result
}

/// `source` checked ([`checker`]), literals of unlike items refused when
/// `homogeneous`, or its first type error (an undeclared name among them)
/// as the server words it.
fn typed(
    source: &str,
    expr: &Expr,
    vars: Vec<(std::sync::Arc<str>, Type)>,
    homogeneous: bool,
    what: &str,
) -> Result<Checked, (Why, String)> {
    checker::check(expr, vars, homogeneous).map_err(|(at, message)| {
        let error = first_line(&compile_error(source, Some(at), &message)).to_owned();
        (
            Why::Invalid,
            format!("{what} {} does not compile: {error}", quoted(source)),
        )
    })
}

/// A rule's result must be a bool, a message's a string, as typed; one
/// trainc cannot type passes.
fn result_is(source: &str, t: &Type, what: &str, wanted: &Type) -> Result<(), (Why, String)> {
    let error = match t {
        Type::Unknown => return Ok(()),
        t if t.exact(wanted) && !matches!(t, Type::Dyn) => return Ok(()),
        _ if matches!(wanted, Type::Bool) => "cel expression must evaluate to a bool",
        _ => "messageExpression must evaluate to a string",
    };
    Err((
        Why::Invalid,
        format!("{what} {} does not compile: {error}", quoted(source)),
    ))
}

/// Calls `f` with every node of the tree, parents first.
pub(super) fn visit(expr: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(expr);
    match &expr.kind {
        Kind::Literal(_) | Kind::Ident(_) => {}
        Kind::Select { operand, .. } => visit(operand, f),
        Kind::Call { target, args, .. } => {
            if let Some(target) = target {
                visit(target, f);
            }
            for a in args {
                visit(a, f);
            }
        }
        Kind::List { items, .. } => items.iter().for_each(|a| visit(a, f)),
        Kind::Map { entries } => entries.iter().for_each(|e| {
            visit(&e.key, f);
            visit(&e.value, f);
        }),
        Kind::Struct { fields, .. } => fields.iter().for_each(|(_, v, _)| visit(v, f)),
        Kind::Comprehension(c) => {
            for e in [&c.range, &c.init, &c.cond, &c.step, &c.result] {
                visit(e, f);
            }
        }
    }
}

/// A rule as a message quotes it: a long one cut in the middle (as
/// every message cuts a value), with its length.
pub(super) fn quoted(source: &str) -> String {
    const SHOWN: usize = 120;
    let count = source.chars().count();
    let shown = super::super::shortened(source.to_owned(), SHOWN);
    if count <= SHOWN {
        return format!("`{shown}`");
    }
    format!("`{shown}` ({count} characters)")
}

/// `source` compiled in the rules' environment with no variables, its
/// result of any type: an expression of Kubernetes' library tests, whose
/// environment lets a literal's items be of unlike types (it does not ask
/// for `cel.HomogeneousAggregateLiterals`, as a CRD's does).
#[cfg(test)]
pub(super) fn any(source: &str) -> Result<Compiled, String> {
    let expr = syntax::parse(source)
        .map(Box::new)
        .map_err(|e| compile_error(source, e.at, &e.message))?;
    let what = "the expression";
    let checked = typed(source, &expr, Vec::new(), false, what).map_err(|(_, m)| m)?;
    check(source, &expr, what).map_err(|(_, m)| m)?;
    Ok(Compiled { expr, checked })
}
