//! CEL's macros, expanded where they are written as cel-go v0.26.0
//! expands them (`parser/macro.go`; `ext/comprehensions.go` for the
//! two-variable forms Kubernetes enables, `ext/lists.go` for `sortBy`,
//! `cel/library.go` for `optMap` and `optFlatMap`), and `&&`/`||` chains
//! balanced as its parser balances them.

use std::sync::Arc;

use super::ast::{
    ACCUMULATOR, Comprehension, Expr, Kind, Literal, call, empty_list, ident, literal,
};
use super::lexer::SyntaxError;

fn error<T>(at: u32, message: String) -> Result<T, SyntaxError> {
    Err(SyntaxError {
        at: Some(at),
        message,
    })
}

/// `target.name(args)`: a macro expanded, or a method call.
pub(super) fn method(
    at: u32,
    name: &str,
    target: Expr,
    args: Vec<Expr>,
) -> Result<Expr, SyntaxError> {
    let one_var = matches!(
        (name, args.len()),
        ("all" | "exists" | "exists_one" | "filter", 2) | ("map", 2 | 3)
    );
    let two_var = matches!(
        (name, args.len()),
        ("all" | "exists" | "existsOne" | "exists_one", 3)
            | (
                "transformList" | "transformMap" | "transformMapEntry",
                3 | 4
            )
    );
    match (name, args.len()) {
        ("sortBy", 2) => sort_by(at, target, args),
        ("optMap" | "optFlatMap", 2) => opt_map(at, name, target, args),
        _ if one_var || two_var => comprehension(at, name, target, args, two_var),
        _ => Ok(call(at, name, Some(target), args)),
    }
}

/// A comprehension's variable: a simple name, not the accumulator's.
fn variable(arg: &Expr, message: &str) -> Result<Arc<str>, SyntaxError> {
    match &arg.kind {
        Kind::Ident(name) if &**name == ACCUMULATOR || &**name == "__result__" => error(
            arg.at,
            "iteration variable overwrites accumulator variable".to_owned(),
        ),
        Kind::Ident(name) => Ok(name.clone()),
        _ => error(arg.at, message.to_owned()),
    }
}

/// `init` bound to `var` while `result` is evaluated: cel-go's way of
/// binding a name, a comprehension over nothing.
fn bind(at: u32, var: Arc<str>, init: Expr, result: Expr) -> Expr {
    Expr {
        at,
        kind: Kind::Comprehension(Box::new(Comprehension {
            iter_var: "#unused".into(),
            iter_var2: None,
            range: empty_list(at),
            step: ident(at, &var),
            accu_var: var,
            init,
            cond: literal(at, Literal::Bool(false)),
            result,
        })),
    }
}

/// ext.Lists' `sortBy`: the list bound once, sorted by its items' keys.
fn sort_by(at: u32, target: Expr, args: Vec<Expr>) -> Result<Expr, SyntaxError> {
    const INPUT: &str = "@__sortBy_input__";
    let keys = method(at, "map", ident(at, INPUT), args)?;
    let sorted = call(
        at,
        "@sortByAssociatedKeys",
        Some(ident(at, INPUT)),
        vec![keys],
    );
    Ok(bind(at, INPUT.into(), target, sorted))
}

/// `optMap` and `optFlatMap`: `target.hasValue() ? f(target.value()) : optional.none()`.
fn opt_map(at: u32, name: &str, target: Expr, mut args: Vec<Expr>) -> Result<Expr, SyntaxError> {
    let var = variable(
        &args[0],
        "optMap() variable name must be a simple identifier",
    )?;
    let body = args.pop().unwrap_or_else(|| ident(at, ""));
    let value = call(at, "value", Some(target.clone()), vec![]);
    let bound = bind(at, var, value, body);
    let present = if name == "optMap" {
        call(at, "optional.of", None, vec![bound])
    } else {
        bound
    };
    Ok(call(
        at,
        "_?_:_",
        None,
        vec![
            call(at, "hasValue", Some(target), vec![]),
            present,
            call(at, "optional.none", None, vec![]),
        ],
    ))
}

/// The comprehension macros, one variable or two.
fn comprehension(
    at: u32,
    name: &str,
    target: Expr,
    mut args: Vec<Expr>,
    two_var: bool,
) -> Result<Expr, SyntaxError> {
    let (iter_var, iter_var2) = if two_var {
        let first = variable(&args[0], "argument must be a simple name")?;
        let second = variable(&args[1], "argument must be a simple name")?;
        if first == second {
            return error(args[1].at, "duplicate variable name: ".to_owned() + &first);
        }
        args.drain(..2);
        (first, Some(second))
    } else {
        let message = if matches!(name, "map" | "filter") {
            "argument is not an identifier"
        } else {
            "argument must be a simple name"
        };
        let first = variable(&args[0], message)?;
        args.remove(0);
        (first, None)
    };
    let (init, cond, step, result) = parts(at, name, &iter_var, args);
    Ok(Expr {
        at,
        kind: Kind::Comprehension(Box::new(Comprehension {
            iter_var,
            iter_var2,
            range: target,
            accu_var: ACCUMULATOR.into(),
            init,
            cond,
            step,
            result,
        })),
    })
}

/// A comprehension macro's accumulator's start, its condition to go on,
/// its step and its result.
fn parts(
    at: u32,
    name: &str,
    iter_var: &Arc<str>,
    mut args: Vec<Expr>,
) -> (Expr, Expr, Expr, Expr) {
    let accu = || ident(at, ACCUMULATOR);
    match (name, args.len()) {
        ("all", _) => (
            literal(at, Literal::Bool(true)),
            call(at, "@not_strictly_false", None, vec![accu()]),
            call(at, "_&&_", None, vec![accu(), args.remove(0)]),
            accu(),
        ),
        ("exists", _) => (
            literal(at, Literal::Bool(false)),
            call(
                at,
                "@not_strictly_false",
                None,
                vec![call(at, "!_", None, vec![accu()])],
            ),
            call(at, "_||_", None, vec![accu(), args.remove(0)]),
            accu(),
        ),
        ("exists_one" | "existsOne", _) => (
            literal(at, Literal::Int(0)),
            literal(at, Literal::Bool(true)),
            call(
                at,
                "_?_:_",
                None,
                vec![
                    args.remove(0),
                    call(at, "_+_", None, vec![accu(), literal(at, Literal::Int(1))]),
                    accu(),
                ],
            ),
            call(at, "_==_", None, vec![accu(), literal(at, Literal::Int(1))]),
        ),
        ("map" | "transformList" | "filter", n) => {
            let (filter, item) = match (name, n) {
                ("filter", _) => (Some(args.remove(0)), ident(at, iter_var)),
                (_, 2) => (Some(args.remove(0)), args.remove(0)),
                _ => (None, args.remove(0)),
            };
            let append = call(
                at,
                "_+_",
                None,
                vec![
                    accu(),
                    Expr {
                        at,
                        kind: Kind::List {
                            items: vec![item],
                            optional: vec![false],
                        },
                    },
                ],
            );
            let step = match filter {
                Some(filter) => call(at, "_?_:_", None, vec![filter, append, accu()]),
                None => append,
            };
            (
                empty_list(at),
                literal(at, Literal::Bool(true)),
                step,
                accu(),
            )
        }
        (_, n) => {
            // transformMap (k, v, [filter,] value) and
            // transformMapEntry (k, v, [filter,] {key: value}).
            let filter = (n == 2).then(|| args.remove(0));
            let produced = args.remove(0);
            let insert = if name == "transformMap" {
                call(
                    at,
                    "cel.@mapInsert",
                    None,
                    vec![accu(), ident(at, iter_var), produced],
                )
            } else {
                call(at, "cel.@mapInsert", None, vec![accu(), produced])
            };
            let step = match filter {
                Some(filter) => call(at, "_?_:_", None, vec![filter, insert, accu()]),
                None => insert,
            };
            (
                Expr {
                    at,
                    kind: Kind::Map { entries: vec![] },
                },
                literal(at, Literal::Bool(true)),
                step,
                accu(),
            )
        }
    }
}

/// Terms joined by a logical operator as cel-go joins them: a balanced
/// tree (`terms` alternates operands and the operators' places).
pub(super) fn balance(function: &str, mut terms: Vec<Expr>) -> Expr {
    if terms.len() == 1 {
        return terms.pop().unwrap_or_else(|| ident(0, ""));
    }
    let operands: Vec<Expr> = terms.iter().step_by(2).cloned().collect();
    let places: Vec<u32> = terms.iter().skip(1).step_by(2).map(|t| t.at).collect();
    balanced(function, &operands, &places)
}

fn balanced(function: &str, operands: &[Expr], places: &[u32]) -> Expr {
    if operands.len() == 1 {
        return operands[0].clone();
    }
    let mid = (operands.len() - 1) / 2;
    let left = balanced(function, &operands[..=mid], &places[..mid]);
    let right = balanced(function, &operands[mid + 1..], &places[mid + 1..]);
    call(places[mid], function, None, vec![left, right])
}
