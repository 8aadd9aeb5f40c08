//! Every function a CRD's rule may call, with its overloads, as the API
//! server's environment declares them for Kubernetes 1.36: cel-go
//! v0.26.0's standard library (`common/stdlib/standard.go`, the
//! cross-type numeric comparisons Kubernetes enables), its optional types
//! (`cel/library.go`), strings v2, lists v3, sets and two-variable
//! comprehensions (`ext/`); Kubernetes' lists, regex, URLs, quantity, IP,
//! CIDR, format and semver v1 libraries (k8s.io/apiserver v0.36.3
//! `pkg/cel/library/`, `pkg/cel/environment/base.go`).
//!
//! A signature is written `receiver.(args) -> result` for a method, or
//! `(args) -> result`; `A`, `B`, `K`, `V` are type parameters.

use std::sync::OnceLock;

use super::types::{FastMap, Type, optional};

const COMPARABLE: &[&str] = &[
    "bool",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "timestamp",
    "duration",
];

const TABLE: &[(&str, &[&str])] = &[
    ("_?_:_", &["(bool, A, A) -> A"]),
    ("_&&_", &["(bool, bool) -> bool"]),
    ("_||_", &["(bool, bool) -> bool"]),
    ("!_", &["(bool) -> bool"]),
    ("@not_strictly_false", &["(bool) -> bool"]),
    ("_==_", &["(A, A) -> bool"]),
    ("_!=_", &["(A, A) -> bool"]),
    (
        "_+_",
        &[
            "(bytes, bytes) -> bytes",
            "(double, double) -> double",
            "(duration, duration) -> duration",
            "(duration, timestamp) -> timestamp",
            "(timestamp, duration) -> timestamp",
            "(int, int) -> int",
            "(list(A), list(A)) -> list(A)",
            "(string, string) -> string",
            "(uint, uint) -> uint",
        ],
    ),
    (
        "_/_",
        &[
            "(double, double) -> double",
            "(int, int) -> int",
            "(uint, uint) -> uint",
        ],
    ),
    ("_%_", &["(int, int) -> int", "(uint, uint) -> uint"]),
    (
        "_*_",
        &[
            "(double, double) -> double",
            "(int, int) -> int",
            "(uint, uint) -> uint",
        ],
    ),
    ("-_", &["(double) -> double", "(int) -> int"]),
    (
        "_-_",
        &[
            "(double, double) -> double",
            "(duration, duration) -> duration",
            "(int, int) -> int",
            "(timestamp, duration) -> timestamp",
            "(timestamp, timestamp) -> duration",
            "(uint, uint) -> uint",
        ],
    ),
    (
        "_[_]",
        &[
            "(list(A), int) -> A",
            "(map(A, B), A) -> B",
            "(optional(list(V)), int) -> optional(V)",
            "(optional(map(K, V)), K) -> optional(V)",
        ],
    ),
    (
        "_[?_]",
        &[
            "(list(V), int) -> optional(V)",
            "(optional(list(V)), int) -> optional(V)",
            "(map(K, V), K) -> optional(V)",
            "(optional(map(K, V)), K) -> optional(V)",
        ],
    ),
    ("@in", &["(A, list(A)) -> bool", "(A, map(A, B)) -> bool"]),
    (
        "size",
        &[
            "(bytes) -> int",
            "bytes.() -> int",
            "(list(A)) -> int",
            "list(A).() -> int",
            "(map(A, B)) -> int",
            "map(A, B).() -> int",
            "(string) -> int",
            "string.() -> int",
        ],
    ),
    ("type", &["(A) -> type(A)"]),
    ("bool", &["(bool) -> bool", "(string) -> bool"]),
    ("bytes", &["(bytes) -> bytes", "(string) -> bytes"]),
    (
        "double",
        &[
            "(double) -> double",
            "(int) -> double",
            "(string) -> double",
            "(uint) -> double",
        ],
    ),
    (
        "duration",
        &[
            "(duration) -> duration",
            "(int) -> duration",
            "(string) -> duration",
        ],
    ),
    ("dyn", &["(A) -> dyn"]),
    (
        "int",
        &[
            "(int) -> int",
            "(double) -> int",
            "(duration) -> int",
            "(string) -> int",
            "(timestamp) -> int",
            "(uint) -> int",
        ],
    ),
    (
        "string",
        &[
            "(string) -> string",
            "(bool) -> string",
            "(bytes) -> string",
            "(double) -> string",
            "(duration) -> string",
            "(int) -> string",
            "(timestamp) -> string",
            "(uint) -> string",
            "(net.IP) -> string",
            "(net.CIDR) -> string",
        ],
    ),
    (
        "timestamp",
        &[
            "(timestamp) -> timestamp",
            "(int) -> timestamp",
            "(string) -> timestamp",
        ],
    ),
    (
        "uint",
        &[
            "(uint) -> uint",
            "(double) -> uint",
            "(int) -> uint",
            "(string) -> uint",
        ],
    ),
    ("contains", &["string.(string) -> bool"]),
    ("endsWith", &["string.(string) -> bool"]),
    ("startsWith", &["string.(string) -> bool"]),
    (
        "matches",
        &["(string, string) -> bool", "string.(string) -> bool"],
    ),
    // Strings v2.
    ("charAt", &["string.(int) -> string"]),
    (
        "indexOf",
        &[
            "string.(string) -> int",
            "string.(string, int) -> int",
            "list(A).(A) -> int",
        ],
    ),
    (
        "lastIndexOf",
        &[
            "string.(string) -> int",
            "string.(string, int) -> int",
            "list(A).(A) -> int",
        ],
    ),
    ("lowerAscii", &["string.() -> string"]),
    ("upperAscii", &["string.() -> string"]),
    (
        "replace",
        &[
            "string.(string, string) -> string",
            "string.(string, string, int) -> string",
        ],
    ),
    (
        "split",
        &[
            "string.(string) -> list(string)",
            "string.(string, int) -> list(string)",
        ],
    ),
    (
        "substring",
        &["string.(int) -> string", "string.(int, int) -> string"],
    ),
    ("trim", &["string.() -> string"]),
    ("format", &["string.(list(dyn)) -> string"]),
    ("strings.quote", &["(string) -> string"]),
    (
        "join",
        &[
            "list(string).() -> string",
            "list(string).(string) -> string",
        ],
    ),
    ("reverse", &["string.() -> string", "list(A).() -> list(A)"]),
    // Lists v3.
    ("slice", &["list(A).(int, int) -> list(A)"]),
    (
        "flatten",
        &[
            "list(list(A)).() -> list(A)",
            "list(dyn).(int) -> list(dyn)",
        ],
    ),
    ("lists.range", &["(int) -> list(int)"]),
    ("distinct", &["list(A).() -> list(A)"]),
    // Sets.
    ("sets.contains", &["(list(A), list(A)) -> bool"]),
    ("sets.equivalent", &["(list(A), list(A)) -> bool"]),
    ("sets.intersects", &["(list(A), list(A)) -> bool"]),
    // Optional types.
    ("optional.of", &["(V) -> optional(V)"]),
    ("optional.ofNonZeroValue", &["(V) -> optional(V)"]),
    ("optional.none", &["() -> optional(V)"]),
    ("value", &["optional(V).() -> V"]),
    ("hasValue", &["optional(V).() -> bool"]),
    ("or", &["optional(V).(optional(V)) -> optional(V)"]),
    ("orValue", &["optional(V).(V) -> V"]),
    ("first", &["list(V).() -> optional(V)"]),
    ("last", &["list(V).() -> optional(V)"]),
    ("optional.unwrap", &["(list(optional(V))) -> list(V)"]),
    ("unwrapOpt", &["list(optional(V)).() -> list(V)"]),
    // Two-variable comprehensions.
    (
        "cel.@mapInsert",
        &[
            "(map(K, V), K, V) -> map(K, V)",
            "(map(K, V), map(K, V)) -> map(K, V)",
        ],
    ),
    // Kubernetes: regex.
    ("find", &["string.(string) -> string"]),
    (
        "findAll",
        &[
            "string.(string) -> list(string)",
            "string.(string, int) -> list(string)",
        ],
    ),
    // URLs.
    ("url", &["(string) -> kubernetes.URL"]),
    ("isURL", &["(string) -> bool"]),
    ("getScheme", &["kubernetes.URL.() -> string"]),
    ("getHost", &["kubernetes.URL.() -> string"]),
    ("getHostname", &["kubernetes.URL.() -> string"]),
    ("getPort", &["kubernetes.URL.() -> string"]),
    ("getEscapedPath", &["kubernetes.URL.() -> string"]),
    (
        "getQuery",
        &["kubernetes.URL.() -> map(string, list(string))"],
    ),
    // Quantity: `sign` is declared a function, not a method.
    ("quantity", &["(string) -> kubernetes.Quantity"]),
    ("isQuantity", &["(string) -> bool"]),
    ("sign", &["(kubernetes.Quantity) -> int"]),
    (
        "isGreaterThan",
        &[
            "kubernetes.Quantity.(kubernetes.Quantity) -> bool",
            "kubernetes.Semver.(kubernetes.Semver) -> bool",
        ],
    ),
    (
        "isLessThan",
        &[
            "kubernetes.Quantity.(kubernetes.Quantity) -> bool",
            "kubernetes.Semver.(kubernetes.Semver) -> bool",
        ],
    ),
    (
        "compareTo",
        &[
            "kubernetes.Quantity.(kubernetes.Quantity) -> int",
            "kubernetes.Semver.(kubernetes.Semver) -> int",
        ],
    ),
    ("asApproximateFloat", &["kubernetes.Quantity.() -> double"]),
    ("asInteger", &["kubernetes.Quantity.() -> int"]),
    ("isInteger", &["kubernetes.Quantity.() -> bool"]),
    (
        "add",
        &[
            "kubernetes.Quantity.(kubernetes.Quantity) -> kubernetes.Quantity",
            "kubernetes.Quantity.(int) -> kubernetes.Quantity",
        ],
    ),
    (
        "sub",
        &[
            "kubernetes.Quantity.(kubernetes.Quantity) -> kubernetes.Quantity",
            "kubernetes.Quantity.(int) -> kubernetes.Quantity",
        ],
    ),
    // IP and CIDR.
    ("ip", &["(string) -> net.IP", "net.CIDR.() -> net.IP"]),
    ("isIP", &["(string) -> bool"]),
    ("ip.isCanonical", &["(string) -> bool"]),
    ("family", &["net.IP.() -> int"]),
    ("isUnspecified", &["net.IP.() -> bool"]),
    ("isLoopback", &["net.IP.() -> bool"]),
    ("isLinkLocalMulticast", &["net.IP.() -> bool"]),
    ("isLinkLocalUnicast", &["net.IP.() -> bool"]),
    ("isGlobalUnicast", &["net.IP.() -> bool"]),
    ("cidr", &["(string) -> net.CIDR"]),
    ("isCIDR", &["(string) -> bool"]),
    (
        "containsIP",
        &["net.CIDR.(string) -> bool", "net.CIDR.(net.IP) -> bool"],
    ),
    (
        "containsCIDR",
        &["net.CIDR.(string) -> bool", "net.CIDR.(net.CIDR) -> bool"],
    ),
    ("prefixLength", &["net.CIDR.() -> int"]),
    ("masked", &["net.CIDR.() -> net.CIDR"]),
    // Format.
    (
        "validate",
        &["kubernetes.NamedFormat.(string) -> optional(list(string))"],
    ),
    (
        "format.named",
        &["(string) -> optional(kubernetes.NamedFormat)"],
    ),
    // Semver v1.
    (
        "semver",
        &[
            "(string) -> kubernetes.Semver",
            "(string, bool) -> kubernetes.Semver",
        ],
    ),
    ("isSemver", &["(string) -> bool", "(string, bool) -> bool"]),
    ("major", &["kubernetes.Semver.() -> int"]),
    ("minor", &["kubernetes.Semver.() -> int"]),
    ("patch", &["kubernetes.Semver.() -> int"]),
];

/// One overload: whether it is a method, its parameters' and result's
/// types; type parameters are `Param(0..4)` (`A`, `B`, `K`, `V`).
#[derive(Debug)]
pub(super) struct Overload {
    pub member: bool,
    pub args: Vec<Type>,
    pub result: Type,
}

/// The overloads of function `name`, or `None` where it is not declared.
pub(super) fn of(name: &str) -> Option<&'static [Overload]> {
    static ALL: OnceLock<FastMap<String, Vec<Overload>>> = OnceLock::new();
    let all = ALL.get_or_init(build);
    all.get(name).map(Vec::as_slice)
}

fn build() -> FastMap<String, Vec<Overload>> {
    let mut all: FastMap<String, Vec<Overload>> = FastMap::default();
    for (name, signatures) in TABLE {
        let list = all.entry((*name).to_owned()).or_default();
        list.extend(signatures.iter().map(|s| parse(s)));
    }
    for op in ["_<_", "_<=_", "_>_", "_>=_"] {
        let list = all.entry(op.to_owned()).or_default();
        for t in COMPARABLE {
            list.push(parse(&format!("({t}, {t}) -> bool")));
        }
        for (a, b) in [
            ("int", "double"),
            ("int", "uint"),
            ("uint", "double"),
            ("uint", "int"),
            ("double", "int"),
            ("double", "uint"),
        ] {
            list.push(parse(&format!("({a}, {b}) -> bool")));
        }
    }
    for t in COMPARABLE {
        all.entry("isSorted".to_owned())
            .or_default()
            .push(parse(&format!("list({t}).() -> bool")));
        all.entry("@sortByAssociatedKeys".to_owned())
            .or_default()
            .push(parse(&format!("list(A).(list({t})) -> list(A)")));
        all.entry("sort".to_owned())
            .or_default()
            .push(parse(&format!("list({t}).() -> list({t})")));
        for f in ["min", "max"] {
            all.entry(f.to_owned())
                .or_default()
                .push(parse(&format!("list({t}).() -> {t}")));
        }
    }
    for t in ["int", "uint", "double", "duration"] {
        all.entry("sum".to_owned())
            .or_default()
            .push(parse(&format!("list({t}).() -> {t}")));
    }
    for f in [
        "getFullYear",
        "getMonth",
        "getDayOfYear",
        "getDayOfMonth",
        "getDate",
        "getDayOfWeek",
    ] {
        let list = all.entry(f.to_owned()).or_default();
        list.push(parse("timestamp.() -> int"));
        list.push(parse("timestamp.(string) -> int"));
    }
    for f in ["getHours", "getMinutes", "getSeconds", "getMilliseconds"] {
        let list = all.entry(f.to_owned()).or_default();
        list.push(parse("timestamp.() -> int"));
        list.push(parse("timestamp.(string) -> int"));
        list.push(parse("duration.() -> int"));
    }
    for f in super::format::NAMES {
        all.entry(format!("format.{f}"))
            .or_default()
            .push(parse("() -> kubernetes.NamedFormat"));
    }
    all
}

/// A signature as the table writes it.
fn parse(text: &str) -> Overload {
    let (call, result) = text.split_once(" -> ").expect("a signature has a result");
    let (receiver, args) = if let Some(args) = call.strip_prefix('(') {
        (None, args)
    } else {
        let (receiver, args) = call.rsplit_once(".(").expect("a method's receiver");
        (Some(receiver), args)
    };
    let args = args.strip_suffix(')').expect("a signature's arguments");
    let mut types = Vec::new();
    let member = receiver.is_some();
    types.extend(receiver.map(type_named));
    types.extend(split_top(args).into_iter().map(type_named));
    Overload {
        member,
        args: types,
        result: type_named(result),
    }
}

/// `a, list(b, c), d` split at its top-level commas.
fn split_top(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !text[start..].trim().is_empty() {
        out.push(text[start..].trim());
    }
    out
}

fn type_named(text: &str) -> Type {
    let text = text.trim();
    if let Some(inner) = text.strip_suffix(')') {
        let (name, params) = inner.split_once('(').expect("a parameterised type");
        let mut params: Vec<Type> = split_top(params).into_iter().map(type_named).collect();
        return match name {
            "list" => Type::list(params.remove(0)),
            "map" => {
                let value = params.remove(1);
                Type::map(params.remove(0), value)
            }
            "optional" => optional(params.remove(0)),
            "type" => Type::Type(Some(Box::new(params.remove(0)))),
            other => unreachable!("no type {other}"),
        };
    }
    match text {
        "A" => Type::Param(0),
        "B" => Type::Param(1),
        "K" => Type::Param(2),
        "V" => Type::Param(3),
        "duration" => Type::Duration,
        "timestamp" => Type::Timestamp,
        "kubernetes.URL" => Type::Opaque("kubernetes.URL", vec![]),
        "kubernetes.Quantity" => Type::Opaque("kubernetes.Quantity", vec![]),
        "kubernetes.Semver" => Type::Opaque("kubernetes.Semver", vec![]),
        "kubernetes.NamedFormat" => Type::Opaque("kubernetes.NamedFormat", vec![]),
        "net.IP" => Type::Opaque("net.IP", vec![]),
        "net.CIDR" => Type::Opaque("net.CIDR", vec![]),
        other => super::types::scalar(other).unwrap_or_else(|| unreachable!("no type {other}")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_signature_reads() {
        let all = super::build();
        assert!(all["_+_"].len() == 9 && all["min"].len() == 8);
        assert!(all["size"].iter().filter(|o| o.member).count() == 4);
    }
}
