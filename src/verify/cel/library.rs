//! Kubernetes' own CEL libraries (k8s.io/apiserver v0.36.3,
//! `pkg/cel/library/`) that trainc evaluates: `regex.go`'s `find` and
//! `findAll`, CEL's `matches` with RE2's meaning (`\d`, `\w`, `\s` and
//! `\b` are ASCII, as in Go's `regexp`; the `regex` crate has no
//! backtracking either), `urls.go`'s `url`, `isURL` and its accessors; and
//! what Kubernetes' estimator (`cost.go`, `CallCost`) says each of its
//! functions costs. The values these libraries make are [`Extension`]s.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use indexmap::IndexMap;

use super::url::Url;
use super::value::{Extension, Key, Map, REGEX, Result, TRAVERSAL, Value, ceil, fail, no_overload};

/// Functions of Kubernetes' libraries (v0.36.3) that trainc does not
/// evaluate yet: a rule calling one is reported, never passed.
pub(super) const NOT_EVALUATED: &[&str] = &[
    "quantity",
    "isQuantity",
    "ip",
    "isIP",
    "ip.isCanonical",
    "cidr",
    "isCIDR",
    "semver",
    "isSemver",
    "authorizer",
    "validate",
    "format.named",
    "format.dns1123Label",
    "format.dns1123Subdomain",
    "format.dns1035Label",
    "format.qualifiedName",
    "format.dns1123LabelPrefix",
    "format.dns1123SubdomainPrefix",
    "format.dns1035LabelPrefix",
    "format.labelValue",
    "format.uri",
    "format.uuid",
    "format.byte",
    "format.date",
    "format.datetime",
];

pub(super) fn call(
    function: &str,
    target: Option<&Value>,
    args: &[Value],
) -> Option<Result<Value>> {
    Some(match (function, target, args) {
        ("matches", Some(Value::String(s)), [Value::String(p)])
        | ("matches", None, [Value::String(s), Value::String(p)]) => {
            regex(p).map(|re| Value::Bool(re.is_match(s)))
        }
        ("find", Some(Value::String(s)), [Value::String(p)]) => {
            regex(p).map(|re| Value::string(re.find(s).map_or("", |m| m.as_str())))
        }
        ("findAll", Some(Value::String(s)), [Value::String(p), rest @ ..]) => {
            let limit = match rest {
                [] => usize::MAX,
                [Value::Int(n)] => usize::try_from(*n).unwrap_or(usize::MAX),
                _ => return Some(no_overload()),
            };
            if limit == 0 {
                return Some(Ok(Value::list(vec![])));
            }
            regex(p).map(|re| {
                Value::list(
                    re.find_iter(s)
                        .take(limit)
                        .map(|m| Value::string(m.as_str()))
                        .collect(),
                )
            })
        }
        ("isURL", None, [Value::String(s)]) => Ok(Value::Bool(Url::parse(s).is_ok())),
        ("url", None, [Value::String(s)]) => match Url::parse(s) {
            Ok(url) => Ok(Value::Extension(Arc::new(Extension::Url(url)))),
            Err(e) => fail(format!(
                "URL parse error during conversion from string: {e}"
            )),
        },
        (accessor, Some(Value::Extension(e)), []) => {
            let Extension::Url(url) = &**e;
            match accessor {
                "getScheme" => Ok(Value::string(url.scheme.clone())),
                "getHost" => Ok(Value::string(url.host.clone())),
                "getHostname" => Ok(Value::string(url.hostname())),
                "getPort" => Ok(Value::string(url.port())),
                "getEscapedPath" => Ok(Value::string(url.escaped_path())),
                "getQuery" => Ok(query(url)),
                _ => no_overload(),
            }
        }
        _ => return None,
    })
}

fn query(url: &Url) -> Value {
    let mut map: IndexMap<Key, Value> = IndexMap::new();
    for (key, value) in url.query_pairs() {
        let entry = map
            .entry(Key::String(key.into()))
            .or_insert_with(|| Value::list(vec![]));
        if let Value::List(list) = entry {
            Arc::make_mut(&mut list.items).push(Value::string(value));
        }
    }
    Value::Map(Map::plain(map))
}

/// The pattern in the `regex` crate's syntax with RE2's meaning: the Perl
/// classes ASCII, as Go's `regexp` has them.
fn translated(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(next) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let ascii = match (next, in_class) {
                    ('d', true) => Some("0-9"),
                    ('w', true) => Some("0-9A-Za-z_"),
                    ('s', true) => Some("\\t\\n\\x0C\\r "),
                    ('d', false) => Some("[0-9]"),
                    ('D', false) => Some("[^0-9]"),
                    ('w', false) => Some("[0-9A-Za-z_]"),
                    ('W', false) => Some("[^0-9A-Za-z_]"),
                    ('s', false) => Some("[\\t\\n\\x0C\\r ]"),
                    ('S', false) => Some("[^\\t\\n\\x0C\\r ]"),
                    ('b', false) => Some("(?-u:\\b)"),
                    ('B', false) => Some("(?-u:\\B)"),
                    _ => None,
                };
                if let Some(text) = ascii {
                    out.push_str(text);
                } else {
                    out.push('\\');
                    out.push(next);
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                // A `]` or `^]` first in a class is literal.
                let rest = chars.as_str();
                for prefix in ["^]", "]", "^"] {
                    if rest.starts_with(prefix) {
                        out.push_str(&prefix.replace(']', "\\]"));
                        for _ in 0..prefix.len() {
                            chars.next();
                        }
                        break;
                    }
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '[' if in_class => out.push_str("\\["),
            c => out.push(c),
        }
    }
    out
}

/// Go's `regexp` refuses a repetition of more than 1,000, or repetitions
/// nested to more than 1,000 together (`regexp/syntax`, `repeatIsValid`),
/// which the `regex` crate would build.
fn repeats_within_go_limit(pattern: &str) -> bool {
    fn within(ast: &regex_syntax::ast::Ast, mut n: u32) -> bool {
        use regex_syntax::ast::{Ast, RepetitionKind, RepetitionRange};
        match ast {
            Ast::Repetition(rep) => {
                let most = match &rep.op.kind {
                    RepetitionKind::Range(
                        RepetitionRange::Exactly(m)
                        | RepetitionRange::AtLeast(m)
                        | RepetitionRange::Bounded(_, m),
                    ) => *m,
                    _ => 0,
                };
                if most > n {
                    return false;
                }
                if let Some(left) = n.checked_div(most) {
                    n = left;
                }
                within(&rep.ast, n)
            }
            Ast::Group(group) => within(&group.ast, n),
            Ast::Alternation(alt) => alt.asts.iter().all(|a| within(a, n)),
            Ast::Concat(concat) => concat.asts.iter().all(|a| within(a, n)),
            _ => true,
        }
    }
    regex_syntax::ast::parse::Parser::new()
        .parse(pattern)
        .map_or(true, |ast| within(&ast, 1000))
}

/// Patterns compiled, per thread; a rule's patterns are few.
const CACHED: usize = 256;

/// The compiled pattern, or the error cel-go words for a bad one.
fn regex(pattern: &str) -> Result<regex::Regex> {
    thread_local! {
        static COMPILED: RefCell<HashMap<String, regex::Regex>> = RefCell::new(HashMap::new());
    }
    COMPILED.with_borrow_mut(|compiled| {
        if let Some(re) = compiled.get(pattern) {
            return Ok(re.clone());
        }
        if !repeats_within_go_limit(pattern) {
            return fail(format!(
                "error parsing regexp: invalid repeat count: `{pattern}`"
            ));
        }
        let re = regex::RegexBuilder::new(&translated(pattern))
            .size_limit(1 << 20)
            .build()
            .or_else(|e| {
                fail(format!(
                    "error parsing regexp: {}",
                    e.to_string()
                        .lines()
                        .last()
                        .unwrap_or("invalid pattern")
                        .trim()
                ))
            })?;
        if compiled.len() >= CACHED {
            compiled.clear();
        }
        compiled.insert(pattern.to_owned(), re.clone());
        Ok(re)
    })
}

/// Whether the pattern is one RE2 reads (a rule's literal pattern is
/// checked when the CRD is created).
pub(super) fn valid_pattern(pattern: &str) -> std::result::Result<(), String> {
    regex(pattern).map(|_| ()).map_err(|e| match e {
        super::value::Error::Eval(message) => message,
        super::value::Error::Cancelled => String::new(),
    })
}

/// Kubernetes' traversal cost of a value (`traversalCost`): a tenth of a
/// string's bytes, rounded down, summed over lists and maps; 1 otherwise.
fn traversal(value: &Value) -> u64 {
    match value {
        Value::String(s) => (s.len() as f64 * TRAVERSAL) as u64,
        Value::Bytes(b) => (b.len() as f64 * TRAVERSAL) as u64,
        Value::List(list) => list.items.iter().map(traversal).sum(),
        Value::Map(map) => map
            .entries
            .iter()
            .map(|(k, v)| traversal(&k.value()) + traversal(v))
            .sum(),
        _ => 1,
    }
}

/// What Kubernetes' estimator says a call costs, where it says.
pub(super) fn cost(function: &str, args: &[&Value], result: &Value) -> Option<u64> {
    let size = |i: usize| args.get(i).map_or(1, |v| v.size());
    Some(match function {
        "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
            args.first().map_or(0, |v| traversal(v))
        }
        "url" | "lowerAscii" | "upperAscii" | "substring" | "trim" => ceil(size(0), TRAVERSAL),
        "replace" | "split" => ceil(size(0), 2.0 * TRAVERSAL),
        "join" => ceil(result.size(), 2.0 * TRAVERSAL),
        "find" | "findAll" if args.len() >= 2 => {
            ceil(1 + size(0), TRAVERSAL) * ceil(size(1), REGEX)
        }
        "getScheme" | "getHostname" | "getHost" | "getPort" | "getEscapedPath" | "getQuery" => 1,
        "_==_" if matches!(args.first(), Some(Value::Extension(_))) => 1,
        _ => return None,
    })
}
