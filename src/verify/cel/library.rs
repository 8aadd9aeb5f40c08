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

use super::format;
use super::net;
use super::quantity::Quantity;
use super::semver::Semver;
use super::url::Url;
use super::value::{
    Extension, Key, Map, Operands, REGEX, Result, TRAVERSAL, Value, ceil, fail, no_overload,
};

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
        ("quantity", None, [Value::String(s)]) => Quantity::parse(s)
            .map(|q| Value::Extension(Arc::new(Extension::Quantity(q))))
            .or_else(fail),
        ("isQuantity", None, [Value::String(s)]) => Ok(Value::Bool(Quantity::parse(s).is_ok())),
        ("semver", None, [Value::String(s), rest @ ..]) => match semver(s, rest) {
            Some(Ok(v)) => Ok(Value::Extension(Arc::new(Extension::Semver(v)))),
            Some(Err(e)) => fail(e),
            None => no_overload(),
        },
        ("ip", None, [Value::String(s)]) => net::ip(s).map(ext(Extension::Ip)).or_else(fail),
        ("isIP", None, [Value::String(s)]) => Ok(Value::Bool(net::ip(s).is_ok())),
        ("ip.isCanonical", None, [Value::String(s)]) => match net::ip(s) {
            Ok(ip) => Ok(Value::Bool(ip.to_string() == **s)),
            Err(e) => fail(e),
        },
        ("cidr", None, [Value::String(s)]) => net::cidr(s).map(ext(Extension::Cidr)).or_else(fail),
        ("isCIDR", None, [Value::String(s)]) => Ok(Value::Bool(net::cidr(s).is_ok())),
        ("format.named", None, [Value::String(name)]) => Ok(Value::Optional(
            format::named(name).map(|n| Arc::new(ext(Extension::Format)(n))),
        )),
        (function, None, []) if function.starts_with("format.") => {
            match format::named(&function["format.".len()..]) {
                Some(name) => Ok(ext(Extension::Format)(name)),
                None => return None,
            }
        }
        ("isSemver", None, [Value::String(s), rest @ ..]) => match semver(s, rest) {
            Some(parsed) => Ok(Value::Bool(parsed.is_ok())),
            None => no_overload(),
        },
        (method, Some(Value::Extension(e)), args) => match &**e {
            Extension::Url(url) if args.is_empty() => url_part(url, method),
            Extension::Quantity(q) => quantity_method(*q, method, args),
            Extension::Semver(v) => semver_method(v, method, args),
            Extension::Ip(ip) if args.is_empty() => match (method, net::is(*ip, method)) {
                (_, Some(answer)) => Ok(Value::Bool(answer)),
                ("family", None) => Ok(Value::Int(if ip.is_ipv4() { 4 } else { 6 })),
                _ => no_overload(),
            },
            Extension::Cidr(cidr) => cidr_method(*cidr, method, args),
            Extension::Format(name) => match (method, args) {
                ("validate", [Value::String(s)]) => {
                    let errors = format::validate(name, s);
                    Ok(Value::Optional((!errors.is_empty()).then(|| {
                        Arc::new(Value::list(errors.into_iter().map(Value::string).collect()))
                    })))
                }
                _ => no_overload(),
            },
            Extension::Ip(_) | Extension::Url(_) => no_overload(),
        },
        _ => return None,
    })
}

/// A function making an extension value of what it is given.
fn ext<T>(make: fn(T) -> Extension) -> impl Fn(T) -> Value {
    move |t| Value::Extension(Arc::new(make(t)))
}

fn cidr_method(cidr: net::Cidr, method: &str, args: &[Value]) -> Result<Value> {
    let extension = |v: &Value| match v {
        Value::Extension(e) => Some(Arc::clone(e)),
        _ => None,
    };
    match (method, args) {
        ("ip", []) => Ok(ext(Extension::Ip)(cidr.addr)),
        ("masked", []) => Ok(ext(Extension::Cidr)(cidr.masked())),
        ("prefixLength", []) => Ok(Value::Int(i64::from(cidr.bits))),
        ("containsIP", [Value::String(s)]) => net::ip(s)
            .map(|ip| Value::Bool(cidr.contains(ip)))
            .or_else(fail),
        ("containsCIDR", [Value::String(s)]) => net::cidr(s)
            .map(|other| Value::Bool(cidr.contains_cidr(other)))
            .or_else(fail),
        ("containsIP" | "containsCIDR", [v]) => match (method, extension(v).as_deref()) {
            ("containsIP", Some(Extension::Ip(ip))) => Ok(Value::Bool(cidr.contains(*ip))),
            ("containsCIDR", Some(Extension::Cidr(other))) => {
                Ok(Value::Bool(cidr.contains_cidr(*other)))
            }
            _ => no_overload(),
        },
        _ => no_overload(),
    }
}

fn semver(text: &str, normalize: &[Value]) -> Option<std::result::Result<Semver, String>> {
    match normalize {
        [] | [Value::Bool(false)] => Some(Semver::parse(text)),
        [Value::Bool(true)] => Some(Semver::parse_normalized(text)),
        _ => None,
    }
}

fn ordering(o: std::cmp::Ordering) -> Value {
    Value::Int(match o {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
    })
}

fn quantity_method(q: Quantity, method: &str, args: &[Value]) -> Result<Value> {
    let other = |v: &Value| match v {
        Value::Extension(e) => match &**e {
            Extension::Quantity(o) => Some(*o),
            _ => None,
        },
        Value::Int(n) => Some(Quantity::from_int(*n)),
        _ => None,
    };
    let quantity = |q: Option<Quantity>| match q {
        Some(q) => Ok(Value::Extension(Arc::new(Extension::Quantity(q)))),
        None => fail("quantity arithmetic past what trainc holds exactly"),
    };
    match (method, args) {
        ("sign", []) => Ok(Value::Int(q.sign())),
        ("isInteger", []) => Ok(Value::Bool(q.as_int().is_some())),
        ("asInteger", []) => q.as_int().map_or_else(
            || fail("cannot convert value to integer"),
            |n| Ok(Value::Int(n)),
        ),
        ("asApproximateFloat", []) => Ok(Value::Double(q.approximate())),
        ("add", [v]) => match other(v) {
            Some(o) => quantity(q.add(o)),
            None => no_overload(),
        },
        ("sub", [v]) => match other(v) {
            Some(o) => quantity(q.add(o.negated())),
            None => no_overload(),
        },
        ("isGreaterThan" | "isLessThan" | "compareTo", [Value::Extension(e)]) => {
            let Extension::Quantity(o) = &**e else {
                return no_overload();
            };
            let o = q.compare(*o);
            Ok(match method {
                "isGreaterThan" => Value::Bool(o == std::cmp::Ordering::Greater),
                "isLessThan" => Value::Bool(o == std::cmp::Ordering::Less),
                _ => ordering(o),
            })
        }
        _ => no_overload(),
    }
}

fn semver_method(v: &Semver, method: &str, args: &[Value]) -> Result<Value> {
    match (method, args) {
        ("major", []) => Ok(Value::Int(v.major as i64)),
        ("minor", []) => Ok(Value::Int(v.minor as i64)),
        ("patch", []) => Ok(Value::Int(v.patch as i64)),
        ("isGreaterThan" | "isLessThan" | "compareTo", [Value::Extension(e)]) => {
            let Extension::Semver(o) = &**e else {
                return no_overload();
            };
            let o = v.compare(o);
            Ok(match method {
                "isGreaterThan" => Value::Bool(o == std::cmp::Ordering::Greater),
                "isLessThan" => Value::Bool(o == std::cmp::Ordering::Less),
                _ => ordering(o),
            })
        }
        _ => no_overload(),
    }
}

fn url_part(url: &Url, accessor: &str) -> Result<Value> {
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
fn repeats_within_go_limit(ast: &regex_syntax::ast::Ast) -> bool {
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
    within(ast, 1000)
}

/// What Go's `regexp/syntax` refuses in `pattern`, in its words, where
/// trainc can tell: the pattern read once for each of its checks.
fn go_refusal(pattern: &str) -> Option<String> {
    let ast = match regex_syntax::ast::parse::Parser::new().parse(pattern) {
        Ok(ast) => ast,
        Err(error) => return go_parse_error(pattern, &error),
    };
    if let Some(ops) = nested_repetition(pattern, &ast) {
        return Some(format!("invalid nested repetition operator: `{ops}`"));
    }
    if !repeats_within_go_limit(&ast) {
        return Some(format!("invalid repeat count: `{pattern}`"));
    }
    None
}

/// A pattern that does not parse, in the words of Go's `regexp/syntax`
/// (`ErrorCode: `expr``) where trainc can tell them.
fn go_parse_error(pattern: &str, error: &regex_syntax::ast::Error) -> Option<String> {
    use regex_syntax::ast::ErrorKind as K;
    let span = error.span();
    let text = pattern
        .get(span.start.offset..span.end.offset)
        .unwrap_or(pattern);
    let from = pattern.get(span.start.offset..).unwrap_or(pattern);
    Some(match error.kind() {
        K::GroupUnopened => format!("unexpected ): `{pattern}`"),
        K::GroupUnclosed => format!("missing closing ): `{pattern}`"),
        K::ClassUnclosed => format!("missing closing ]: `{from}`"),
        K::ClassRangeInvalid => format!("invalid character class range: `{text}`"),
        K::EscapeUnexpectedEof => "trailing backslash at end of expression: ``".to_owned(),
        K::EscapeUnrecognized | K::ClassEscapeInvalid => {
            format!("invalid escape sequence: `{text}`")
        }
        K::RepetitionMissing => {
            // Go names the operator (`+`, `{2}`).
            let operator = match from.chars().next() {
                Some('{') => from.find('}').map_or(from, |end| &from[..=end]),
                Some(c) => &from[..c.len_utf8()],
                None => text,
            };
            format!("missing argument to repetition operator: `{operator}`")
        }
        K::RepetitionCountInvalid => format!("invalid repeat count: `{text}`"),
        K::UnsupportedLookAround | K::UnsupportedBackreference => {
            format!("invalid or unsupported Perl syntax: `{text}`")
        }
        _ => return None,
    })
}

/// A repetition of a repetition (`x++`, `a*{2}`), which RE2 refuses
/// (Go's `regexp/syntax`, `ErrInvalidRepeatOp`): the two operators.
fn nested_repetition<'a>(pattern: &'a str, ast: &regex_syntax::ast::Ast) -> Option<&'a str> {
    use regex_syntax::ast::Ast;
    fn find(ast: &Ast) -> Option<(usize, usize)> {
        match ast {
            Ast::Repetition(rep) => match &*rep.ast {
                Ast::Repetition(inner) => {
                    Some((inner.op.span.start.offset, rep.op.span.end.offset))
                }
                other => find(other),
            },
            Ast::Group(group) => find(&group.ast),
            Ast::Alternation(alt) => alt.asts.iter().find_map(find),
            Ast::Concat(concat) => concat.asts.iter().find_map(find),
            _ => None,
        }
    }
    let (start, end) = find(ast)?;
    pattern.get(start..end)
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
        if let Some(message) = go_refusal(pattern) {
            return fail(format!("error parsing regexp: {message}"));
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
    go_match(pattern, "").map(|_| ())
}

/// Whether `text` matches `pattern` as Go's `regexp` reads it, or Go's
/// error for the pattern (`error parsing regexp: …`).
pub(crate) fn go_match(pattern: &str, text: &str) -> std::result::Result<bool, String> {
    regex(pattern)
        .map(|re| re.is_match(text))
        .map_err(|e| match e {
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
pub(super) fn cost(function: &str, args: Operands<'_>, result: &Value) -> Option<u64> {
    let size = |i: usize| args.size(i);
    Some(match function {
        "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
            args.first().map_or(0, traversal)
        }
        // `ip()` of a CIDR is reading a field; of a string, parsing it;
        // a library value's equality is nominal.
        "ip" | "_==_" if matches!(args.first(), Some(Value::Extension(_))) => 1,
        "url" | "lowerAscii" | "upperAscii" | "substring" | "trim" | "quantity" | "isQuantity"
        | "semver" | "isSemver" | "cidr" | "isIP" | "isCIDR" | "ip" => ceil(size(0), TRAVERSAL),
        "containsIP" | "containsCIDR" => {
            let string = matches!(args.get(1), Some(Value::String(_)));
            let mut cost = ceil(2 * size(0), TRAVERSAL);
            if function == "containsCIDR" {
                cost += ceil(size(0), TRAVERSAL) + 1;
            }
            if string {
                cost += ceil(size(1), TRAVERSAL);
            }
            cost
        }
        "validate" => match args.first() {
            Some(Value::Extension(e)) => match &**e {
                Extension::Format(name) => {
                    ceil(1 + size(1), TRAVERSAL) * ceil(format::regex_size(name), REGEX)
                }
                _ => 1,
            },
            _ => 1,
        },
        // A traversal and the result's making (`ip.isCanonical`: a parse
        // and a comparison).
        "replace" | "split" | "ip.isCanonical" => ceil(size(0), 2.0 * TRAVERSAL),
        "join" => ceil(result.size(), 2.0 * TRAVERSAL),
        "find" | "findAll" if args.len() >= 2 => {
            ceil(1 + size(0), TRAVERSAL) * ceil(size(1), REGEX)
        }
        "getScheme" | "getHostname" | "getHost" | "getPort" | "getEscapedPath" | "getQuery" => 1,
        _ => return None,
    })
}
