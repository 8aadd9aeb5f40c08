//! CEL's standard functions and operators (cel-go v0.26.0,
//! `common/types/`, `checker/decls`), each as cel-go computes it, with the
//! errors it gives; the libraries Kubernetes adds are called from here
//! ([`super::strings`], [`super::lists`], [`super::library`]); and what
//! each call costs ([`cost`]).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::Arc;

use super::ast::RESERVED;
use super::time::{Duration, Timestamp};
use super::value::{
    Key, List, ListKind, Operands, REGEX, Result, TRAVERSAL, Value, ceil, fail, no_overload, order,
    same_keys, shown,
};
use super::{library, lists, strings};
use crate::verify::gofmt::go_float;

/// What a call costs once made, as cel-go's tracker and Kubernetes'
/// estimator (`library/cost.go`, `CallCost`) price it.
pub(super) fn cost(function: &str, target: Option<&Value>, args: &[Value], result: &Value) -> u64 {
    let all = Operands { target, args };
    let size = |i: usize| all.size(i);
    if let Some(cost) = lists::cost(function, all, result) {
        return cost;
    }
    if let Some(cost) = library::cost(function, all, result) {
        return cost;
    }
    match function {
        // `format` of a string: its format string's traversal
        // (`ExtFormatString`, interpreter/runtimecost.go, cel-go v0.26.0).
        "startsWith" | "endsWith" | "strings.quote" | "format" => ceil(size(0), TRAVERSAL),
        "string" | "bytes" => match (all.first(), result) {
            (Some(Value::Bytes(_)), Value::String(_))
            | (Some(Value::String(_)), Value::Bytes(_)) => ceil(size(0), TRAVERSAL),
            _ => 1,
        },
        "@in" => match all.get(1) {
            Some(Value::List(_)) => size(1),
            _ => 1,
        },
        "_<_" | "_>_" | "_<=_" | "_>=_" => match all.first() {
            Some(Value::String(_) | Value::Bytes(_)) => ceil(size(0).min(size(1)), TRAVERSAL),
            _ => 1,
        },
        "_==_" | "_!=_" => ceil(size(0).min(size(1)), TRAVERSAL),
        "_+_" => match all.first() {
            Some(Value::String(_) | Value::Bytes(_)) => ceil(size(0) + size(1), TRAVERSAL),
            _ => 1,
        },
        "matches" => ceil(1 + size(0), TRAVERSAL) * ceil(size(1), REGEX),
        "contains" => ceil(size(0), TRAVERSAL) * ceil(size(1), TRAVERSAL),
        // cel-go qualifies an attribute optionally: a qualification that
        // finds nothing is not charged, nor one after it (measured against
        // k8s.io/apiextensions-apiserver v0.36.3's validator).
        "_?._" | "_[?_]" => u64::from(matches!(result, Value::Optional(Some(_)))),
        _ => 1,
    }
}

/// Kubernetes' escaping of property names that are not CEL names
/// (`apiserver/pkg/cel/escaping.go`), undone: `__dash__` is `-`.
fn unescape(field: &str) -> Cow<'_, str> {
    if let Some(inner) = field.strip_prefix("__").and_then(|f| f.strip_suffix("__"))
        && (matches!(inner, "true" | "false" | "null" | "in") || RESERVED.contains(&inner))
    {
        return Cow::Borrowed(inner);
    }
    if !field.contains("__") {
        return Cow::Borrowed(field);
    }
    let mut out = String::new();
    let mut rest = field;
    while let Some(at) = rest.find("__") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let (text, len) = if after.starts_with("__underscores__") {
            ("__", 15)
        } else if after.starts_with("__dot__") {
            (".", 7)
        } else if after.starts_with("__dash__") {
            ("-", 8)
        } else if after.starts_with("__slash__") {
            ("/", 9)
        } else {
            ("__", 2)
        };
        out.push_str(text);
        rest = &after[len..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// `operand.field`.
pub(super) fn select(operand: &Value, field: &str) -> Result<Value> {
    match operand {
        Value::Map(map) => {
            let found = if map.object.is_some() {
                map.field(&unescape(field))
            } else {
                map.field(field)
            };
            match found {
                Some(Value::Error(message)) => fail(&**message),
                Some(value) => Ok(value.clone()),
                None => fail(format!("no such key: {field}")),
            }
        }
        Value::Optional(Some(inner)) => select(inner, field)
            .map(|v| Value::Optional(Some(Arc::new(v))))
            .or_else(|_| Ok(Value::Optional(None))),
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Extension(_) | Value::Null => fail(format!("no such key: {field}")),
        _ => fail(format!(
            "type '{}' does not support field selection",
            operand.type_name()
        )),
    }
}

/// `has(operand.field)`.
pub(super) fn has_field(operand: &Value, field: &str) -> Result<Value> {
    match operand {
        Value::Map(map) => {
            let found = if map.object.is_some() {
                map.field(&unescape(field))
            } else {
                map.field(field)
            };
            match found {
                // A field set to null is not set (the server prunes nulls).
                None | Some(Value::Null) => Ok(Value::Bool(false)),
                Some(Value::Error(message)) if message.starts_with("invalid data, got null") => {
                    Ok(Value::Bool(false))
                }
                Some(Value::Error(message)) => fail(&**message),
                Some(_) => Ok(Value::Bool(true)),
            }
        }
        Value::Optional(Some(inner)) => has_field(inner, field),
        Value::Optional(None) => Ok(Value::Bool(false)),
        _ => no_overload(),
    }
}

fn index(operand: &Value, at: &Value) -> Result<Value> {
    match operand {
        Value::List(list) => {
            let i = match at {
                Value::Int(n) => *n,
                Value::Uint(n) => i64::try_from(*n).unwrap_or(i64::MAX),
                Value::Double(d) if d.fract() == 0.0 => *d as i64,
                _ => {
                    return fail(format!(
                        "unsupported index type '{}' in list",
                        at.type_name()
                    ));
                }
            };
            match usize::try_from(i).ok().and_then(|i| list.items.get(i)) {
                Some(Value::Error(message)) => fail(&**message),
                Some(value) => Ok(value.clone()),
                None => fail(format!("index out of bounds: {i}")),
            }
        }
        Value::Map(map) => match map.get(at) {
            Some(Value::Error(message)) => fail(&**message),
            Some(value) => Ok(value.clone()),
            None if Key::lookup(at).is_none() => {
                fail(format!("unsupported key type: {}", at.type_name()))
            }
            None => fail(format!("no such key: {}", key_text(at))),
        },
        Value::Optional(Some(inner)) => index(inner, at)
            .map(|v| Value::Optional(Some(Arc::new(v))))
            .or_else(|_| Ok(Value::Optional(None))),
        Value::Optional(None) => Ok(Value::Optional(None)),
        _ => no_overload(),
    }
}

fn key_text(key: &Value) -> String {
    match key {
        Value::String(s) => s.to_string(),
        other => shown(other),
    }
}

fn optional(value: Result<Value>) -> Value {
    match value {
        Ok(v) => Value::Optional(Some(Arc::new(v))),
        Err(_) => Value::Optional(None),
    }
}

/// Calls `function` (a method of `target` when there is one).
pub(super) fn call(function: &str, target: Option<&Value>, args: &[Value]) -> Result<Value> {
    if let Some(result) = library::call(function, target, args) {
        return result;
    }
    if let Some(result) = strings::call(function, target, args) {
        return result;
    }
    if let Some(result) = lists::call(function, target, args) {
        return result;
    }
    match (function, target, args) {
        ("_==_", None, [a, b]) => Ok(Value::Bool(a.equals(b))),
        ("_!=_", None, [a, b]) => Ok(Value::Bool(!a.equals(b))),
        ("_<_" | "_<=_" | "_>_" | "_>=_", None, [a, b]) => compare(function, a, b),
        ("!_", None, [Value::Bool(b)]) => Ok(Value::Bool(!b)),
        ("-_", None, [Value::Int(n)]) => n
            .checked_neg()
            .map(Value::Int)
            .map_or_else(|| fail("integer overflow"), Ok),
        ("-_", None, [Value::Double(d)]) => Ok(Value::Double(-d)),
        ("-_", None, [Value::Duration(d)]) => {
            d.0.checked_neg()
                .map(|n| Value::Duration(Duration(n)))
                .map_or_else(|| fail("integer overflow"), Ok)
        }
        ("_+_" | "_-_" | "_*_" | "_/_" | "_%_", None, [a, b]) => arithmetic(function, a, b),
        ("@in", None, [item, Value::List(list)]) => {
            Ok(Value::Bool(list.items.iter().any(|x| x.equals(item))))
        }
        ("@in", None, [key, Value::Map(map)]) => Ok(Value::Bool(map.get(key).is_some())),
        ("_[_]", None, [operand, at]) => index(operand, at),
        ("_[?_]", None, [operand, at]) => Ok(match operand {
            Value::Optional(None) => Value::Optional(None),
            Value::Optional(Some(inner)) => optional(index(inner, at)),
            _ => optional(index(operand, at)),
        }),
        ("_?._", None, [operand, Value::String(field)]) => Ok(match operand {
            Value::Optional(None) => Value::Optional(None),
            Value::Optional(Some(inner)) => optional(select(inner, field)),
            _ => optional(select(operand, field)),
        }),
        ("size", None, [v]) | ("size", Some(v), []) => match v {
            Value::String(_) | Value::Bytes(_) | Value::List(_) | Value::Map(_) => {
                Ok(Value::Int(v.size() as i64))
            }
            _ => no_overload(),
        },
        ("type", None, [v]) => Ok(Value::Type(v.type_name())),
        ("cel.@mapInsert", None, [Value::Map(map), rest @ ..]) => map_insert(map, rest),
        ("dyn", None, [v]) => Ok(v.clone()),
        (
            "int" | "uint" | "double" | "string" | "bytes" | "bool" | "duration" | "timestamp",
            None,
            [v],
        ) => convert(function, v),
        ("optional.of", None, [v]) => Ok(Value::Optional(Some(Arc::new(v.clone())))),
        ("optional.none", None, []) => Ok(Value::Optional(None)),
        ("optional.ofNonZeroValue", None, [v]) => Ok(if zero(v) {
            Value::Optional(None)
        } else {
            Value::Optional(Some(Arc::new(v.clone())))
        }),
        ("hasValue", Some(Value::Optional(v)), []) => Ok(Value::Bool(v.is_some())),
        ("value", Some(Value::Optional(v)), []) => match v {
            Some(v) => Ok((**v).clone()),
            None => fail("optional.none() dereference"),
        },
        ("contains", Some(Value::String(s)), [Value::String(sub)]) => {
            Ok(Value::Bool(s.contains(&**sub)))
        }
        ("startsWith", Some(Value::String(s)), [Value::String(p)]) => {
            Ok(Value::Bool(s.starts_with(&**p)))
        }
        ("endsWith", Some(Value::String(s)), [Value::String(p)]) => {
            Ok(Value::Bool(s.ends_with(&**p)))
        }
        (
            "getFullYear" | "getMonth" | "getDate" | "getDayOfMonth" | "getDayOfWeek"
            | "getDayOfYear" | "getHours" | "getMinutes" | "getSeconds" | "getMilliseconds",
            Some(Value::Timestamp(t)),
            zone,
        ) => timestamp_field(function, *t, zone),
        (
            "getHours" | "getMinutes" | "getSeconds" | "getMilliseconds",
            Some(Value::Duration(d)),
            [],
        ) => Ok(Value::Int(match function {
            "getHours" => d.0 / 3_600_000_000_000,
            "getMinutes" => d.0 / 60_000_000_000,
            "getSeconds" => d.0 / 1_000_000_000,
            _ => d.0 / 1_000_000,
        })),
        _ => no_overload(),
    }
}

/// `cel.@mapInsert` (ext.TwoVarComprehensions' `transformMap`,
/// `transformMapEntry`): a key and value, or a map's entries, added.
fn map_insert(map: &super::value::Map, rest: &[Value]) -> Result<Value> {
    let mut entries = map.entries.as_ref().clone();
    let pairs: Vec<(Value, Value)> = match rest {
        [key, value] => vec![(key.clone(), value.clone())],
        [Value::Map(other)] => other
            .entries
            .iter()
            .map(|(k, v)| (k.value(), v.clone()))
            .collect(),
        _ => return no_overload(),
    };
    for (key, value) in pairs {
        let Some(key) = Key::from_value(&key) else {
            return fail(format!("unsupported key type: {}", key.type_name()));
        };
        if entries.contains_key(&key) {
            return fail(format!(
                "insert failed: key {} already exists",
                shown(&key.value())
            ));
        }
        entries.insert(key, value);
    }
    Ok(Value::Map(super::value::Map::plain(entries)))
}

/// Whether a value is its type's zero (`optional.ofNonZeroValue`).
fn zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Int(n) => *n == 0,
        Value::Uint(n) => *n == 0,
        Value::Double(d) => *d == 0.0,
        Value::String(s) => s.is_empty(),
        Value::Bytes(b) => b.is_empty(),
        Value::List(l) => l.items.is_empty(),
        Value::Map(m) => m.entries.is_empty(),
        Value::Duration(d) => d.0 == 0,
        // Go's zero time, 0001-01-01T00:00:00Z.
        Value::Timestamp(t) => t.seconds == -62_135_596_800 && t.nanos == 0,
        _ => false,
    }
}

fn compare(function: &str, a: &Value, b: &Value) -> Result<Value> {
    let nan = |v: &Value| matches!(v, Value::Double(d) if d.is_nan());
    let numeric = |v: &Value| matches!(v, Value::Int(_) | Value::Uint(_) | Value::Double(_));
    if numeric(a) && numeric(b) && (nan(a) || nan(b)) {
        return Ok(Value::Bool(false));
    }
    let Some(ordering) = order(a, b) else {
        return no_overload();
    };
    Ok(Value::Bool(match function {
        "_<_" => ordering == Ordering::Less,
        "_<=_" => ordering != Ordering::Greater,
        "_>_" => ordering == Ordering::Greater,
        _ => ordering != Ordering::Less,
    }))
}

fn overflow<T>(value: Option<T>) -> Result<T> {
    value.map_or_else(|| fail("integer overflow"), Ok)
}

fn arithmetic(function: &str, a: &Value, b: &Value) -> Result<Value> {
    Ok(match (function, a, b) {
        ("_+_", Value::Int(x), Value::Int(y)) => Value::Int(overflow(x.checked_add(*y))?),
        ("_-_", Value::Int(x), Value::Int(y)) => Value::Int(overflow(x.checked_sub(*y))?),
        ("_*_", Value::Int(x), Value::Int(y)) => Value::Int(overflow(x.checked_mul(*y))?),
        ("_/_", Value::Int(_), Value::Int(0)) | ("_/_", Value::Uint(_), Value::Uint(0)) => {
            return fail("division by zero");
        }
        ("_%_", Value::Int(_), Value::Int(0)) | ("_%_", Value::Uint(_), Value::Uint(0)) => {
            return fail("modulus by zero");
        }
        ("_/_", Value::Int(x), Value::Int(y)) => Value::Int(overflow(x.checked_div(*y))?),
        ("_%_", Value::Int(x), Value::Int(y)) => Value::Int(overflow(x.checked_rem(*y))?),
        ("_+_", Value::Uint(x), Value::Uint(y)) => Value::Uint(overflow(x.checked_add(*y))?),
        ("_-_", Value::Uint(x), Value::Uint(y)) => Value::Uint(overflow(x.checked_sub(*y))?),
        ("_*_", Value::Uint(x), Value::Uint(y)) => Value::Uint(overflow(x.checked_mul(*y))?),
        ("_/_", Value::Uint(x), Value::Uint(y)) => Value::Uint(x / y),
        ("_%_", Value::Uint(x), Value::Uint(y)) => Value::Uint(x % y),
        ("_+_", Value::Double(x), Value::Double(y)) => Value::Double(x + y),
        ("_-_", Value::Double(x), Value::Double(y)) => Value::Double(x - y),
        ("_*_", Value::Double(x), Value::Double(y)) => Value::Double(x * y),
        ("_/_", Value::Double(x), Value::Double(y)) => Value::Double(x / y),
        ("_+_", Value::String(x), Value::String(y)) => Value::string(format!("{x}{y}")),
        ("_+_", Value::Bytes(x), Value::Bytes(y)) => Value::Bytes([&x[..], &y[..]].concat().into()),
        ("_+_", Value::List(x), Value::List(y)) => Value::List(join(x.clone(), y)),
        ("_+_", Value::Duration(x), Value::Duration(y)) => {
            Value::Duration(Duration(overflow(x.0.checked_add(y.0))?))
        }
        ("_-_", Value::Duration(x), Value::Duration(y)) => {
            Value::Duration(Duration(overflow(x.0.checked_sub(y.0))?))
        }
        ("_+_", Value::Timestamp(t), Value::Duration(d))
        | ("_+_", Value::Duration(d), Value::Timestamp(t)) => {
            Value::Timestamp(t.add(*d).map_or_else(|| fail("timestamp overflow"), Ok)?)
        }
        ("_-_", Value::Timestamp(t), Value::Duration(d)) => {
            let negated = overflow(d.0.checked_neg())?;
            Value::Timestamp(
                t.add(Duration(negated))
                    .map_or_else(|| fail("timestamp overflow"), Ok)?,
            )
        }
        ("_-_", Value::Timestamp(x), Value::Timestamp(y)) => {
            Value::Duration(overflow(x.since(*y))?)
        }
        _ => return no_overload(),
    })
}

/// `a + b` of lists: a set adds what it lacks, a map list replaces the
/// item of the same keys (`values.go`'s `Add`). `a`'s items are extended
/// in place where nothing else holds them (a comprehension's accumulator,
/// [`super::eval`]), else copied.
pub(super) fn join(mut a: List, b: &List) -> List {
    let items = Arc::make_mut(&mut a.items);
    match &a.kind {
        ListKind::Set => {
            for item in b.items.iter() {
                if !items.iter().any(|x| x.equals(item)) {
                    items.push(item.clone());
                }
            }
        }
        ListKind::Map(keys) => {
            for item in b.items.iter() {
                match items.iter().position(|x| same_keys(keys, x, item)) {
                    Some(at) => items[at] = item.clone(),
                    None => items.push(item.clone()),
                }
            }
        }
        ListKind::Plain => items.extend(b.items.iter().cloned()),
    }
    a
}

fn timestamp_field(function: &str, t: Timestamp, zone: &[Value]) -> Result<Value> {
    let offset = match zone {
        [] => 0,
        [Value::String(name)] => match super::time::zone(name) {
            Some(offset) => offset,
            None => {
                return fail(format!(
                    "unknown time zone {name}: the IANA database is not read offline"
                ));
            }
        },
        _ => return no_overload(),
    };
    let f = t.fields(offset);
    Ok(Value::Int(match function {
        "getFullYear" => f.year,
        "getMonth" => f.month - 1,
        "getDate" => f.day,
        "getDayOfMonth" => f.day - 1,
        "getDayOfWeek" => f.weekday,
        "getDayOfYear" => f.day_of_year,
        "getHours" => f.hour,
        "getMinutes" => f.minute,
        "getSeconds" => f.second,
        _ => f.millis,
    }))
}

fn convert(function: &str, v: &Value) -> Result<Value> {
    Ok(match (function, v) {
        ("int", Value::Int(_))
        | ("uint", Value::Uint(_))
        | ("double", Value::Double(_))
        | ("string", Value::String(_))
        | ("bytes", Value::Bytes(_))
        | ("bool", Value::Bool(_))
        | ("duration", Value::Duration(_))
        | ("timestamp", Value::Timestamp(_)) => v.clone(),
        ("int", Value::Uint(n)) => {
            Value::Int(i64::try_from(*n).or_else(|_| fail("integer overflow"))?)
        }
        ("int", Value::Double(d)) => {
            if !(d.is_finite() && *d > -9.223_372_036_854_776e18 && *d < 9.223_372_036_854_776e18) {
                return fail("integer overflow");
            }
            Value::Int(*d as i64)
        }
        ("int", Value::String(s)) => Value::Int(
            s.parse()
                .or_else(|_| fail(format!("cannot convert string {s:?} to int")))?,
        ),
        ("int", Value::Timestamp(t)) => Value::Int(t.seconds),
        ("int", Value::Duration(d)) => Value::Int(d.0),
        ("uint", Value::Int(n)) => {
            Value::Uint(u64::try_from(*n).or_else(|_| fail("unsigned integer overflow"))?)
        }
        ("uint", Value::Double(d)) => {
            if !(d.is_finite() && *d > -1.0 && *d < 1.844_674_407_370_955_2e19) {
                return fail("unsigned integer overflow");
            }
            Value::Uint(*d as u64)
        }
        ("uint", Value::String(s)) => Value::Uint(
            s.parse()
                .or_else(|_| fail(format!("cannot convert string {s:?} to uint")))?,
        ),
        ("double", Value::Int(n)) => Value::Double(*n as f64),
        ("double", Value::Uint(n)) => Value::Double(*n as f64),
        ("double", Value::String(s)) => Value::Double(parse_double(s).map_or_else(
            || fail(format!("cannot convert string {s:?} to double")),
            Ok,
        )?),
        ("string", Value::Int(n)) => Value::string(n.to_string()),
        ("string", Value::Uint(n)) => Value::string(n.to_string()),
        ("string", Value::Double(d)) => Value::string(go_float(*d)),
        ("string", Value::Bool(b)) => Value::string(b.to_string()),
        ("string", Value::Bytes(b)) => Value::string(
            String::from_utf8(b.to_vec())
                .or_else(|_| fail("invalid UTF-8 in bytes, cannot convert to string"))?,
        ),
        ("string", Value::Timestamp(t)) => Value::string(t.text()),
        ("string", Value::Duration(d)) => Value::string(d.text()),
        ("string", Value::Extension(e)) => match e.text() {
            Some(text) => Value::string(text),
            None => return no_overload(),
        },
        ("bytes", Value::String(s)) => Value::Bytes(s.as_bytes().into()),
        ("bool", Value::String(s)) => Value::Bool(match &**s {
            "1" | "t" | "T" | "TRUE" | "true" | "True" => true,
            "0" | "f" | "F" | "FALSE" | "false" | "False" => false,
            _ => return fail("type conversion error from 'string' to 'bool'"),
        }),
        ("duration", Value::String(s)) => Value::Duration(Duration::parse(s).map_or_else(
            || fail("type conversion error from 'string' to 'google.protobuf.Duration'"),
            Ok,
        )?),
        ("timestamp", Value::String(s)) => Value::Timestamp(Timestamp::parse(s).map_or_else(
            || fail("type conversion error from 'string' to 'google.protobuf.Timestamp'"),
            Ok,
        )?),
        ("timestamp", Value::Int(n)) => Value::Timestamp(
            Timestamp::new(*n, 0).map_or_else(|| fail("timestamp out of range"), Ok)?,
        ),
        _ => return no_overload(),
    })
}

/// Go's `strconv.ParseFloat` for what CEL hands it.
fn parse_double(text: &str) -> Option<f64> {
    match text {
        "Inf" | "+Inf" | "inf" | "+inf" | "Infinity" | "infinity" => Some(f64::INFINITY),
        "-Inf" | "-inf" | "-Infinity" | "-infinity" => Some(f64::NEG_INFINITY),
        "NaN" | "nan" => Some(f64::NAN),
        _ => text.parse().ok(),
    }
}
