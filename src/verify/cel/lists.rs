//! Functions of lists: Kubernetes' lists library (k8s.io/apiserver v0.36.3
//! `pkg/cel/library/lists.go`: `isSorted`, `sum`, `min`, `max`,
//! `indexOf`, `lastIndexOf`), cel-go's lists extension at version 3
//! (v0.26.0 `ext/lists.go`: `lists.range`, `slice`, `flatten`,
//! `distinct`, `reverse`, `sort`, `sortBy`, `first`, `last`) and its sets
//! extension (`ext/sets.go`), with their errors.

use std::cmp::Ordering;
use std::sync::Arc;

use super::value::{Error, List, Operands, Result, TRAVERSAL, Value, fail, no_overload, order};

/// The most items `lists.range` makes: its cost, one per item, passes any
/// call's limit before this, so it stops here before it allocates.
const MAX_RANGE: i64 = super::PER_CALL_LIMIT as i64;

fn comparable(v: &Value) -> bool {
    matches!(
        v,
        Value::Int(_)
            | Value::Uint(_)
            | Value::Double(_)
            | Value::String(_)
            | Value::Bytes(_)
            | Value::Bool(_)
            | Value::Duration(_)
            | Value::Timestamp(_)
    )
}

fn compare(a: &Value, b: &Value) -> Result<Ordering> {
    order(a, b).map_or_else(no_overload, Ok)
}

pub(super) fn call(
    function: &str,
    target: Option<&Value>,
    args: &[Value],
) -> Option<Result<Value>> {
    if let (None, [Value::List(a), Value::List(b)]) = (target, args)
        && let Some(result) = sets(function, a, b)
    {
        return Some(Ok(Value::Bool(result)));
    }
    if let ("lists.range", None, [Value::Int(n)]) = (function, target, args) {
        if *n > MAX_RANGE {
            return Some(Err(Error::Cancelled));
        }
        return Some(Ok(Value::list((0..(*n).max(0)).map(Value::Int).collect())));
    }
    let Some(Value::List(list)) = target else {
        return None;
    };
    let items = &list.items;
    Some(match (function, args) {
        ("isSorted", []) => is_sorted(items),
        ("sum", []) if items.is_empty() => {
            Ok(list.zero.as_deref().cloned().unwrap_or(Value::Int(0)))
        }
        ("sum", []) => sum(items),
        ("min" | "max", []) => {
            let Some(first) = items.first() else {
                return Some(fail(format!("{function} called on empty list")));
            };
            let mut best = first.clone();
            for item in items.iter().skip(1) {
                let ordering = match compare(item, &best) {
                    Ok(o) => o,
                    Err(e) => return Some(Err(e)),
                };
                if (function == "min" && ordering == Ordering::Less)
                    || (function == "max" && ordering == Ordering::Greater)
                {
                    best = item.clone();
                }
            }
            if !comparable(&best) {
                return Some(no_overload());
            }
            Ok(best)
        }
        ("indexOf", [x]) => Ok(Value::Int(
            items
                .iter()
                .position(|y| y.equals(x))
                .map_or(-1, |i| i as i64),
        )),
        ("lastIndexOf", [x]) => Ok(Value::Int(
            items
                .iter()
                .rposition(|y| y.equals(x))
                .map_or(-1, |i| i as i64),
        )),
        ("slice", [Value::Int(start), Value::Int(end)]) => {
            let len = items.len() as i64;
            if *start < 0 || *end < 0 {
                fail(format!(
                    "cannot slice({start}, {end}), negative indexes not supported"
                ))
            } else if start > end {
                fail(format!(
                    "cannot slice({start}, {end}), start index must be less than or equal to end index"
                ))
            } else if len < *end {
                fail(format!(
                    "cannot slice({start}, {end}), list is length {len}"
                ))
            } else {
                Ok(Value::list(items[*start as usize..*end as usize].to_vec()))
            }
        }
        ("flatten", []) => Ok(Value::list(flatten(items, 1))),
        ("flatten", [Value::Int(depth)]) => {
            if *depth < 0 {
                fail("level must be non-negative")
            } else {
                Ok(Value::list(flatten(items, *depth)))
            }
        }
        ("distinct", []) => {
            let mut unique: Vec<Value> = Vec::new();
            for item in items.iter() {
                if !unique.iter().any(|u| u.equals(item)) {
                    unique.push(item.clone());
                }
            }
            Ok(Value::list(unique))
        }
        ("reverse", []) => Ok(Value::list(items.iter().rev().cloned().collect())),
        ("sort", []) => sort_by_keys(items, items),
        ("@sortByAssociatedKeys", [Value::List(keys)]) => sort_by_keys(items, &keys.items),
        ("first", []) => Ok(Value::Optional(items.first().cloned().map(Arc::new))),
        ("last", []) => Ok(Value::Optional(items.last().cloned().map(Arc::new))),
        _ => return None,
    })
}

/// The sets extension: `sets.contains`, `sets.equivalent`, `sets.intersects`.
fn sets(function: &str, a: &List, b: &List) -> Option<bool> {
    let any = |x: &Value, list: &List| list.items.iter().any(|y| x.equals(y));
    Some(match function {
        "sets.contains" => b.items.iter().all(|x| any(x, a)),
        "sets.equivalent" => b.items.iter().all(|x| any(x, a)) && a.items.iter().all(|x| any(x, b)),
        "sets.intersects" => a.items.iter().any(|x| any(x, b)),
        _ => return None,
    })
}

fn is_sorted(items: &[Value]) -> Result<Value> {
    for pair in items.windows(2) {
        if compare(&pair[0], &pair[1])? == Ordering::Greater {
            return Ok(Value::Bool(false));
        }
    }
    if let Some(first) = items.first()
        && !comparable(first)
    {
        return no_overload();
    }
    Ok(Value::Bool(true))
}

fn sum(items: &[Value]) -> Result<Value> {
    let Some(first) = items.first() else {
        return Ok(Value::Int(0));
    };
    let mut total = match first {
        Value::Int(_) => Value::Int(0),
        Value::Uint(_) => Value::Uint(0),
        Value::Double(_) => Value::Double(0.0),
        Value::Duration(_) => Value::Duration(super::time::Duration(0)),
        _ => return no_overload(),
    };
    for item in items {
        total = match (&total, item) {
            (Value::Int(a), Value::Int(b)) => Value::Int(
                a.checked_add(*b)
                    .map_or_else(|| fail("integer overflow"), Ok)?,
            ),
            (Value::Uint(a), Value::Uint(b)) => Value::Uint(
                a.checked_add(*b)
                    .map_or_else(|| fail("integer overflow"), Ok)?,
            ),
            (Value::Double(a), Value::Double(b)) => Value::Double(a + b),
            (Value::Double(a), Value::Int(b)) => Value::Double(a + *b as f64),
            (Value::Duration(a), Value::Duration(b)) => Value::Duration(super::time::Duration(
                a.0.checked_add(b.0)
                    .map_or_else(|| fail("integer overflow"), Ok)?,
            )),
            _ => return no_overload(),
        };
    }
    Ok(total)
}

fn flatten(items: &[Value], depth: i64) -> Vec<Value> {
    let mut out = Vec::new();
    for item in items {
        match item {
            Value::List(inner) if depth > 0 => out.extend(flatten(&inner.items, depth - 1)),
            other => out.push(other.clone()),
        }
    }
    out
}

fn sort_by_keys(items: &[Value], keys: &[Value]) -> Result<Value> {
    if items.len() != keys.len() {
        return fail(format!(
            "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got {} and {} elements respectively",
            items.len(),
            keys.len()
        ));
    }
    let Some(first) = keys.first() else {
        return Ok(Value::list(vec![]));
    };
    if !comparable(first) {
        return fail("list elements must be comparable");
    }
    let kind = std::mem::discriminant(first);
    if keys.iter().any(|k| std::mem::discriminant(k) != kind) {
        return fail("list elements must have the same type");
    }
    let mut order: Vec<usize> = (0..items.len()).collect();
    let mut error = None;
    order.sort_by(|&i, &j| match compare(&keys[i], &keys[j]) {
        Ok(o) => o,
        Err(e) => {
            error = Some(e);
            Ordering::Equal
        }
    });
    if let Some(e) = error {
        return Err(e);
    }
    Ok(Value::list(
        order.into_iter().map(|i| items[i].clone()).collect(),
    ))
}

/// What cel-go's trackers for the sets and lists extensions
/// (`ext/sets.go` `trackSetsCost`, `ext/lists.go`) say a call costs:
/// they come before Kubernetes' estimator.
pub(super) fn cost(function: &str, args: Operands<'_>, result: &Value) -> Option<u64> {
    let size = |i: usize| args.size(i);
    // The call, and the list it allocates (`trackAllocatingListCall`).
    // `uint64(float64(n) * factor) + callCost + ListCreateBaseCost`
    // (`trackAllocatingListCall`, ext/lists.go, cel-go v0.26.0), as Go
    // computes it on amd64: a negative product (`flatten(-1)`) converts
    // through int64 and the sum wraps.
    let allocating = |factor: f64, n: u64| {
        let product = n as f64 * factor;
        let product = if product < 0.0 {
            (product as i64) as u64
        } else {
            product as u64
        };
        product.wrapping_add(1 + 10)
    };
    let self_compare = |list: Option<&Value>| {
        let n = list.map_or(0, Value::size);
        let mut factor = 2.0;
        if let Some(Value::List(l)) = list
            && matches!(l.items.first(), Some(Value::String(_) | Value::Bytes(_)))
        {
            factor += TRAVERSAL;
        }
        allocating(factor, n * n)
    };
    let lists = matches!(args.first(), Some(Value::List(_)));
    Some(match function {
        "sets.contains" | "sets.intersects" => 1 + size(0) * size(1),
        "sets.equivalent" => 1 + 2 * size(0) * size(1),
        "slice" | "reverse" if lists => allocating(1.0, result.size()),
        "lists.range" => allocating(1.0, result.size()),
        "flatten" if lists => {
            let depth = match args.get(1) {
                Some(Value::Int(d)) => *d as f64,
                _ => 1.0,
            };
            allocating(depth, size(0))
        }
        "distinct" | "sort" if lists => self_compare(args.first()),
        "@sortByAssociatedKeys" => self_compare(args.get(1)),
        _ => return None,
    })
}
