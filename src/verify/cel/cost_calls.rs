//! What one call is estimated to cost, in the order the server asks:
//! cel-go's list and set extensions (`ext/lists.go`, `ext/sets.go`), then
//! Kubernetes' estimator by function name (k8s.io/apiserver v0.36.3
//! `pkg/cel/library/cost.go`, `EstimateCallCost`), then cel-go's own
//! (`checker/cost.go`, `functionCost`), else 1; each plus its arguments'
//! costs. Strings cost a tenth per character traversed, a pattern a
//! quarter per character of its text.

use super::ast::{Expr, Kind, Literal};
use super::overloads::Overload;
use super::ranges::{Range, UNKNOWN};
use super::types::Type;

const TRAVERSAL: f64 = 0.1;
const REGEX: f64 = 0.25;
const LIST_CREATE: u64 = 10;
/// Kubernetes' named formats' longest name and longest pattern
/// (`limits.go`).
const MAX_FORMAT: u64 = 64;
const MAX_FORMAT_PATTERN: f64 = 128.0;

/// A path from a variable through fields, `@items`, `@values`, `@keys`
/// and `@indices` to a value; `None` where none is tracked (Go's nil
/// slice, which appending to makes a path of one step).
/// Shared: a path is read far more often than a longer one is made.
pub(super) type Path = Option<std::rc::Rc<Vec<String>>>;

/// A node as a function's estimate reads it (`checker.AstNode`).
pub(super) struct Node<'e> {
    pub path: Path,
    pub t: Type,
    pub expr: Option<&'e Expr>,
    /// Its size as the expression shows it, computed when it was costed.
    pub computed: Option<Range>,
}

/// The size estimator (`EstimateSize`): a node's size by its path from a
/// variable (empty where none is tracked) and its type, `None` where it
/// says nothing. A CRD's reads the schema at the path alone.
pub(super) type Schema<'s> = &'s dyn Fn(&[String], &Type) -> Option<Range>;

/// One overload of a call, as its estimate reads it.
pub(super) struct CallSite<'a, 'e> {
    pub function: &'a str,
    /// cel-go's overload id where the estimate tells it apart, else "".
    pub id: &'static str,
    pub target: Option<&'a Node<'e>>,
    pub args: &'a [Node<'e>],
    pub costs: &'a [Range],
}

pub(super) struct Estimate<'e> {
    pub cost: Range,
    pub result_size: Option<Range>,
    /// The call's items (or keys and values) are sized as these two
    /// arguments' together (`?:`, `+`).
    pub entries_of: Option<(&'e Expr, &'e Expr)>,
}

#[allow(clippy::unnecessary_wraps)] // reason: every estimate is an `Option`; each arm then says only its cost
fn cost<'e>(cost: Range) -> Option<Estimate<'e>> {
    Some(Estimate {
        cost,
        result_size: None,
        entries_of: None,
    })
}

#[allow(clippy::unnecessary_wraps)] // reason: as `cost`
fn sized<'e>(cost: Range, size: Range) -> Option<Estimate<'e>> {
    Some(Estimate {
        cost,
        result_size: Some(size),
        entries_of: None,
    })
}

fn one() -> Range {
    Range::fixed(1)
}

/// The overload ids of a call's possible overloads, as far as the
/// estimates tell them apart ("" for the rest); none where the overloads
/// are not known.
pub(super) fn overload_ids(function: &str, overloads: &[&Overload]) -> Vec<&'static str> {
    match function {
        "_&&_" | "_||_" => return vec!["logical"],
        "_?._" => return vec![""],
        _ => {}
    }
    overloads.iter().map(|o| id(function, o)).collect()
}

fn id(function: &str, o: &Overload) -> &'static str {
    let arg = |n: usize| o.args.get(n).unwrap_or(&Type::Dyn);
    let text = |t: &Type| matches!(t, Type::String | Type::Bytes);
    match (function, o.member) {
        ("_+_", _) => match arg(0) {
            Type::String => "add_string",
            Type::Bytes => "add_bytes",
            Type::List(_) => "add_list",
            _ => "",
        },
        ("_<_" | "_<=_" | "_>_" | "_>=_", _) if text(arg(0)) && arg(0).exact(arg(1)) => {
            "compare_text"
        }
        ("_==_" | "_!=_", _) => "equals",
        ("@in", _) if matches!(arg(1), Type::List(_)) => "in_list",
        ("_[_]", _) => match arg(0) {
            Type::List(_) => "index_list",
            Type::Map(..) => "index_map",
            _ => "",
        },
        ("_?_:_", _) => "conditional",
        ("matches", true) => "matches_string",
        ("contains", true) if matches!(arg(0), Type::String) => "contains_string",
        ("startsWith" | "endsWith", true) => "starts_or_ends_with",
        ("bytes", false) if matches!(arg(0), Type::String) => "string_to_bytes",
        ("string", false) if matches!(arg(0), Type::Bytes) => "bytes_to_string",
        ("strings.quote", _) => "strings_quote",
        ("format", true) if matches!(arg(0), Type::String) => "string_format",
        ("slice", true) => "list_slice",
        ("flatten", true) => "list_flatten",
        ("lists.range", _) => "lists_range",
        ("reverse", true) if matches!(arg(0), Type::List(_)) => "list_reverse",
        ("distinct", true) => "list_distinct",
        // The items' type is the overload's: a `dyn` list may take each.
        ("sort", true) if matches!(arg(0), Type::List(t) if text(t)) => "list_sort_text",
        ("sort", true) => "list_sort",
        ("@sortByAssociatedKeys", true) if matches!(arg(1), Type::List(t) if text(t)) => {
            "list_sort_by_text"
        }
        ("@sortByAssociatedKeys", true) => "list_sort_by",
        ("sets.contains" | "sets.intersects", _) => "sets_1",
        ("sets.equivalent", _) => "sets_2",
        ("ip", true) => "cidr_ip",
        ("containsIP" | "containsCIDR", true) if matches!(arg(1), Type::String) => "of_string",
        _ => "",
    }
}

/// The estimate of one overload of a call.
pub(super) fn estimate<'e>(c: Schema<'_>, call: &CallSite<'_, 'e>) -> Estimate<'e> {
    let arg_sum = call.costs.iter().fold(Range::fixed(0), |s, c| s.add(*c));
    let found = extension(c, call)
        .or_else(|| kubernetes(c, call))
        .or_else(|| standard(call));
    match found {
        // `&&`, `||` and `?:` count their arguments their own way.
        Some(e) if matches!(call.id, "logical" | "conditional") => e,
        Some(e) => Estimate {
            cost: e.cost.add(arg_sum),
            ..e
        },
        None => Estimate {
            cost: one().add(arg_sum),
            result_size: None,
            entries_of: None,
        },
    }
}

/// `sizeEstimate`: what the node shows, else what the size estimator
/// says of it, else anything.
fn size(c: Schema<'_>, n: &Node<'_>) -> Range {
    n.computed
        .or_else(|| schema_size(c, &n.path, &n.t))
        .unwrap_or(UNKNOWN)
}

/// What the size estimator says of a node at `path` of type `t`.
fn schema_size(c: Schema<'_>, path: &Path, t: &Type) -> Option<Range> {
    c(path.as_ref().map_or(&[], |p| p.as_slice()), t)
}

/// An int literal's value (0 if negative), else `default`.
fn int_literal(n: &Node<'_>, default: u64) -> u64 {
    match n.expr.map(|e| &e.kind) {
        Some(Kind::Literal(Literal::Int(i))) => (*i).max(0) as u64,
        _ => default,
    }
}

/// A list made of `size` items at `factor` each.
fn allocating<'e>(factor: f64, size: Range) -> Option<Estimate<'e>> {
    let cost = size
        .factor(factor)
        .add(one())
        .add(Range::fixed(LIST_CREATE));
    sized(cost, size)
}

/// Sorting a list of `n`'s size, of strings or bytes when `text`.
fn sorting<'e>(c: Schema<'_>, n: &Node<'_>, text: bool) -> Option<Estimate<'e>> {
    let sz = size(c, n);
    let factor = if text { 2.0 + TRAVERSAL } else { 2.0 };
    allocating(factor, sz.times(sz))
}

/// cel-go's list and set extensions' estimators.
fn extension<'e>(c: Schema<'_>, call: &CallSite<'_, 'e>) -> Option<Estimate<'e>> {
    let (target, args) = (call.target, call.args);
    match call.id {
        "list_slice" if args.len() == 2 => {
            let sz = size(c, target?);
            let start = int_literal(&args[0], 0);
            let end = int_literal(&args[1], sz.max);
            allocating(1.0, Range::fixed(end.wrapping_sub(start)))
        }
        "lists_range" if target.is_none() && args.len() == 1 => {
            allocating(1.0, Range::fixed(int_literal(&args[0], u64::MAX)))
        }
        "list_reverse" if args.is_empty() => allocating(1.0, size(c, target?)),
        "list_flatten" if args.len() <= 1 => {
            let depth = args.first().map_or(1, |a| int_literal(a, u64::MAX));
            allocating(depth as f64, size(c, target?))
        }
        "list_distinct" if args.is_empty() => {
            let sz = size(c, target?);
            allocating(2.0, sz.times(sz))
        }
        "list_sort" | "list_sort_text" if args.is_empty() => {
            sorting(c, target?, call.id == "list_sort_text")
        }
        "list_sort_by" | "list_sort_by_text" if args.len() == 1 => {
            target?;
            sorting(c, &args[0], call.id == "list_sort_by_text")
        }
        "sets_1" | "sets_2" if args.len() == 2 => {
            let factor = if call.id == "sets_1" { 1.0 } else { 2.0 };
            let both = size(c, &args[0]).times(size(c, &args[1]));
            cost(both.factor(factor).add(one()))
        }
        _ => None,
    }
}

/// A list's item as a node (`listElementNode`): its path below the
/// list's, its type; `None` where the node is not a list.
fn item_size(c: Schema<'_>, list: &Node<'_>) -> Option<(Type, Range)> {
    let Type::List(item) = &list.t else {
        return None;
    };
    let path = list.path.as_ref().map(|p| {
        let mut p = (**p).clone();
        p.push("@items".to_owned());
        std::rc::Rc::new(p)
    });
    let sz = schema_size(c, &path, item).unwrap_or(UNKNOWN);
    Some(((**item).clone(), sz))
}

/// Kubernetes' estimates, by function name.
fn kubernetes<'e>(c: Schema<'_>, call: &CallSite<'_, 'e>) -> Option<Estimate<'e>> {
    let (target, args) = (call.target, call.args);
    let first = || args.first().map(|a| size(c, a));
    match call.function {
        "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
            let target = target?;
            match item_size(c, target) {
                Some((item, item_size)) => {
                    let mut each = one();
                    if matches!(item, Type::String | Type::Bytes) {
                        each = each.add(item_size.factor(TRAVERSAL));
                    }
                    cost(size(c, target).times(each))
                }
                None => cost(size(c, target).factor(TRAVERSAL)),
            }
        }
        "url" if args.len() == 1 => {
            let sz = size(c, &args[0]);
            sized(sz.factor(TRAVERSAL), sz)
        }
        "lowerAscii" | "upperAscii" | "substring" | "trim" => {
            let sz = size(c, target?);
            sized(sz.factor(TRAVERSAL), sz)
        }
        "replace" if args.len() >= 2 => {
            let sz = size(c, target?);
            let result = replaced(sz, size(c, &args[0]), size(c, &args[1]));
            sized(sz.factor(2.0 * TRAVERSAL), result)
        }
        "split" => {
            let sz = size(c, target?);
            let max = match args.get(1).and_then(|a| a.expr).map(|e| &e.kind) {
                // A negative limit read as Go's uint64 of it.
                Some(Kind::Literal(Literal::Int(i))) => *i as u64,
                _ => sz.max,
            };
            sized(sz.factor(2.0 * TRAVERSAL), Range { min: 0, max })
        }
        "join" => {
            let target = target?;
            let list = size(c, target);
            let mut sz = item_size(c, target).map_or(Range::fixed(0), |(_, item)| list.times(item));
            if let Some(separator) = first() {
                let separators = Range {
                    min: list.min.saturating_sub(1),
                    max: list.max.saturating_sub(1),
                };
                sz = sz.add(separator.times(separators));
            }
            sized(sz.factor(TRAVERSAL), sz)
        }
        "find" | "findAll" if !args.is_empty() => {
            let sz = size(c, target?);
            let text = sz.add(one()).factor(TRAVERSAL);
            let pattern = size(c, &args[0]).factor(REGEX);
            sized(
                text.times(pattern),
                Range {
                    min: 0,
                    max: sz.max,
                },
            )
        }
        "quantity" | "isQuantity" | "semver" | "isSemver" => cost(first()?.factor(TRAVERSAL)),
        "format.named" | "sign" | "asInteger" | "isInteger" | "asApproximateFloat"
        | "isGreaterThan" | "isLessThan" | "compareTo" | "add" | "sub" | "major" | "minor"
        | "patch" | "getScheme" | "getHostname" | "getHost" | "getPort" | "getEscapedPath"
        | "getQuery" => cost(one()),
        "validate" => {
            let sz = first()?;
            cost(sz.factor(TRAVERSAL).factor(MAX_FORMAT_PATTERN * REGEX))
        }
        "_==_" if args.len() == 2 => equality(&args[0], &args[1]),
        _ => network(c, call),
    }
}

/// Kubernetes' estimates of its IP and CIDR functions: parsing a string
/// a tenth per character, an address's bytes compared.
fn network<'e>(c: Schema<'_>, call: &CallSite<'_, 'e>) -> Option<Estimate<'e>> {
    let first = || call.args.first().map(|a| size(c, a));
    match call.function {
        // A CIDR's address is read, not parsed.
        "ip" if call.id == "cidr_ip" => cost(one()),
        "cidr" | "isIP" | "isCIDR" | "ip" => cost(first()?.factor(TRAVERSAL)),
        "ip.isCanonical" => cost(first()?.factor(2.0 * TRAVERSAL)),
        "masked"
        | "prefixLength"
        | "family"
        | "isUnspecified"
        | "isLoopback"
        | "isLinkLocalMulticast"
        | "isLinkLocalUnicast"
        | "isGlobalUnicast" => cost(one()),
        "containsIP" | "containsCIDR" => {
            let parsed = first()?;
            let bytes = Range { min: 4, max: 16 };
            let mut compare = bytes.add(bytes).factor(TRAVERSAL);
            if call.function == "containsCIDR" {
                compare = compare.add(bytes.factor(TRAVERSAL)).add(one());
            }
            if call.id == "of_string" {
                compare = compare.add(parsed.factor(TRAVERSAL));
            }
            cost(compare)
        }
        _ => None,
    }
}

/// The size of `replace`'s result: as many replacements as fit, each as
/// long as the replacement may be; at its most, the shortest text
/// replaced by the longest, at its least the reverse.
fn replaced(sz: Range, from: Range, with: Range) -> Range {
    // At one end: the replacements and the characters kept, of a string
    // of `len`, a replaced text of `from`; `kept` where the replacement
    // does not move the length that way.
    let end = |len: u64, from: u64, kept: bool| {
        if from == 0 {
            // An empty text is replaced around every character.
            (len.saturating_add(1), len)
        } else if kept {
            (0, len)
        } else {
            ((len as f64 / from as f64).ceil() as u64, 0)
        }
    };
    let (most, most_kept) = end(sz.max, from.min, with.max <= from.min);
    let (least, least_kept) = end(sz.min, from.max, from.max <= with.min);
    let count = Range {
        min: least,
        max: most,
    };
    let kept = Range {
        min: least_kept,
        max: most_kept,
    };
    count.times(with).add(kept)
}

/// Kubernetes' equality of its own types: an IP's, a CIDR's, a
/// quantity's or a version's is 1, a format's its name, a URL's its text.
fn equality<'e>(lhs: &Node<'_>, rhs: &Node<'_>) -> Option<Estimate<'e>> {
    let Type::Opaque(name, _) = &lhs.t else {
        return None;
    };
    if !lhs.t.exact(&rhs.t) {
        return None;
    }
    match *name {
        "net.IP" | "net.CIDR" | "kubernetes.Quantity" | "kubernetes.Semver" => cost(one()),
        "kubernetes.NamedFormat" => cost(
            Range {
                min: 1,
                max: MAX_FORMAT,
            }
            .factor(TRAVERSAL),
        ),
        "kubernetes.URL" => {
            // Both sides read as the right-hand one, as the server reads them.
            let max = rhs.computed.map_or(1, |r| r.max);
            cost(Range { min: 1, max }.factor(TRAVERSAL))
        }
        _ => None,
    }
}

/// cel-go's own estimates, by overload.
fn standard<'e>(call: &CallSite<'_, 'e>) -> Option<Estimate<'e>> {
    let (target, args, costs) = (call.target, call.args, call.costs);
    let known = |n: &Node<'_>| n.computed.unwrap_or(UNKNOWN);
    match call.id {
        "string_format" => cost(known(target?).factor(TRAVERSAL)),
        "string_to_bytes" if args.len() == 1 => {
            let sz = known(&args[0]);
            let result = Range {
                min: sz.min,
                max: sz.max.wrapping_mul(4),
            };
            sized(sz.factor(TRAVERSAL), result)
        }
        "bytes_to_string" if args.len() == 1 => {
            let sz = known(&args[0]);
            sized(
                sz.factor(TRAVERSAL),
                Range {
                    min: sz.min / 4,
                    max: sz.max,
                },
            )
        }
        "strings_quote" if args.len() == 1 => {
            let sz = known(&args[0]);
            let result = Range {
                min: sz.min.wrapping_add(2),
                max: sz.max.wrapping_mul(2).wrapping_add(2),
            };
            sized(sz.factor(TRAVERSAL), result)
        }
        "starts_or_ends_with" if args.len() == 1 => cost(known(&args[0]).factor(TRAVERSAL)),
        "in_list" if args.len() == 2 => cost(known(&args[1]).factor(1.0)),
        "matches_string" if args.len() == 1 => {
            let text = known(target?).add(one()).factor(TRAVERSAL);
            cost(text.times(known(&args[0]).factor(REGEX)))
        }
        "contains_string" if args.len() == 1 => {
            let text = known(target?).factor(TRAVERSAL);
            cost(text.times(known(&args[0]).factor(TRAVERSAL)))
        }
        "logical" => {
            let (lhs, rhs) = (costs[0], costs[1]);
            cost(Range {
                min: lhs.min,
                max: lhs.add(rhs).max,
            })
        }
        "conditional" => {
            let sz = known(&args[1]).union(known(&args[2]));
            Some(Estimate {
                entries_of: Some((args[1].expr?, args[2].expr?)),
                ..sized(costs[0].add(costs[1].union(costs[2])), sz)?
            })
        }
        "add_string" | "add_bytes" | "add_list" if args.len() == 2 => {
            let sz = known(&args[0]).add(known(&args[1]));
            let cost = if call.id == "add_list" {
                one()
            } else {
                sz.factor(TRAVERSAL)
            };
            Some(Estimate {
                entries_of: Some((args[0].expr?, args[1].expr?)),
                ..sized(cost, sz)?
            })
        }
        "compare_text" | "equals" if args.len() == 2 => {
            let smallest = known(&args[0]).max.min(known(&args[1]).max);
            let min = u64::from(smallest > 0);
            cost(Range { min, max: smallest }.factor(TRAVERSAL))
        }
        _ => None,
    }
}
