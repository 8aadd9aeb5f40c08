//! cel-go's strings extension at the version Kubernetes enables
//! (`ext.Strings(ext.StringsVersion(2))`, k8s.io/apiserver v0.36.3
//! `pkg/cel/environment/base.go`; cel-go v0.26.0 `ext/strings.go`):
//! indexes in code points, with its errors; `format` as `ext/formatting.go`
//! writes `%s %d %f %e %x %X %o %b`.

use std::fmt::Write as _;

use super::value::{Error, Result, Value, fail, no_overload, shown};
use crate::verify::gofmt::go_float;

/// The longest string one call makes: ten times the largest object the API
/// server takes (3 MiB), more than any rule within its cost limit makes.
const MAX_MADE: usize = 32 << 20;

fn chars(s: &str) -> Vec<char> {
    s.chars().collect()
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(n) => Some(*n),
        _ => None,
    }
}

fn out_of_range<T>(i: i64) -> Result<T> {
    fail(format!("index out of range: {i}"))
}

/// The strings extension's functions, or `None` when `function` is not
/// one of them for these arguments.
pub(super) fn call(
    function: &str,
    target: Option<&Value>,
    args: &[Value],
) -> Option<Result<Value>> {
    let Some(Value::String(s)) = target else {
        return match (function, target, args) {
            ("join", Some(Value::List(list)), sep) => Some(join(&list.items, sep)),
            ("strings.quote", None, [Value::String(s)]) => Some(Ok(Value::string(quote(s)))),
            _ => None,
        };
    };
    Some(match (function, args) {
        ("charAt", [i]) => {
            let i = int(i)?;
            let c = chars(s);
            match usize::try_from(i) {
                Ok(at) if at < c.len() => Ok(Value::string(c[at].to_string())),
                Ok(at) if at == c.len() => Ok(Value::string("")),
                _ => out_of_range(i),
            }
        }
        ("indexOf", [Value::String(sub)]) => index_of(s, sub, 0),
        ("indexOf", [Value::String(sub), offset]) => index_of(s, sub, int(offset)?),
        ("lastIndexOf", [Value::String(sub)]) => {
            let n = s.chars().count() as i64;
            if sub.is_empty() {
                Ok(Value::Int(n))
            } else if s.len() < sub.len() {
                Ok(Value::Int(-1))
            } else {
                last_index_of(s, sub, n - 1)
            }
        }
        ("lastIndexOf", [Value::String(sub), offset]) => last_index_of(s, sub, int(offset)?),
        ("lowerAscii", []) => Ok(Value::string(s.to_ascii_lowercase())),
        ("upperAscii", []) => Ok(Value::string(s.to_ascii_uppercase())),
        ("replace", [Value::String(old), Value::String(new), rest @ ..]) => {
            let n = match rest {
                [] => usize::MAX,
                [n] => usize::try_from(int(n)?).unwrap_or(usize::MAX),
                _ => return None,
            };
            // A replacement can grow a string by its length times the
            // matches' count, which its cost (a tenth of the input's length,
            // twice) does not follow: past what a call may make, it stops
            // as a call past its cost limit stops.
            let matches = if old.is_empty() {
                s.chars().count() + 1
            } else {
                s.matches(&**old).count()
            };
            let grown = s.len() + matches.min(n).saturating_mul(new.len());
            if grown > MAX_MADE {
                return Some(Err(Error::Cancelled));
            }
            Ok(Value::string(replace_n(s, old, new, n)))
        }
        ("split", [Value::String(sep)]) => split(s, sep, -1),
        ("split", [Value::String(sep), n]) => split(s, sep, int(n)?),
        ("substring", [start]) => {
            let start = int(start)?;
            let c = chars(s);
            match usize::try_from(start) {
                Ok(at) if at <= c.len() => Ok(Value::string(c[at..].iter().collect::<String>())),
                _ => out_of_range(start),
            }
        }
        ("substring", [start, end]) => {
            let (start, end) = (int(start)?, int(end)?);
            let c = chars(s);
            let len = c.len() as i64;
            if start > end {
                fail(format!(
                    "invalid substring range. start: {start}, end: {end}"
                ))
            } else if start < 0 || start > len {
                out_of_range(start)
            } else if end < 0 || end > len {
                out_of_range(end)
            } else {
                Ok(Value::string(
                    c[start as usize..end as usize].iter().collect::<String>(),
                ))
            }
        }
        ("trim", []) => Ok(Value::string(s.trim_matches(go_space))),
        ("format", [Value::List(list)]) => format(s, &list.items),
        _ => return None,
    })
}

/// Go's `unicode.IsSpace`, which `strings.TrimSpace` trims.
fn go_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\x0b' | '\x0c' | '\r' | ' ' | '\u{85}' | '\u{a0}'
    ) || (c > '\u{ff}' && c.is_whitespace())
}

fn index_of(s: &str, sub: &str, offset: i64) -> Result<Value> {
    if sub.is_empty() {
        return Ok(Value::Int(offset));
    }
    if offset < 0 {
        return out_of_range(offset);
    }
    let (c, sub) = (chars(s), chars(sub));
    let start = offset as usize;
    if start >= c.len() {
        return Ok(Value::Int(-1));
    }
    let found = (start..=c.len().saturating_sub(sub.len()))
        .find(|&i| i + sub.len() <= c.len() && c[i..i + sub.len()] == sub[..]);
    Ok(Value::Int(found.map_or(-1, |i| i as i64)))
}

fn last_index_of(s: &str, sub: &str, offset: i64) -> Result<Value> {
    if sub.is_empty() {
        return Ok(Value::Int(offset));
    }
    if offset < 0 {
        return out_of_range(offset);
    }
    let (c, sub) = (chars(s), chars(sub));
    if offset as usize >= c.len() {
        return Ok(Value::Int(-1));
    }
    if sub.len() > c.len() {
        return Ok(Value::Int(-1));
    }
    let start = (offset as usize).min(c.len() - sub.len());
    let found = (0..=start).rev().find(|&i| c[i..i + sub.len()] == sub[..]);
    Ok(Value::Int(found.map_or(-1, |i| i as i64)))
}

/// Go's `strings.Replace` with a count.
fn replace_n(s: &str, old: &str, new: &str, n: usize) -> String {
    if n == usize::MAX && !old.is_empty() {
        return s.replace(old, new);
    }
    if old.is_empty() {
        // Go inserts `new` before each code point and at the end, n times.
        let mut out = String::new();
        let mut left = n;
        for c in s.chars() {
            if left > 0 {
                out.push_str(new);
                left -= 1;
            }
            out.push(c);
        }
        if left > 0 {
            out.push_str(new);
        }
        return out;
    }
    s.replacen(old, new, n)
}

/// The most items one call makes: more would hold hundreds of MiB of
/// strings of a character each (`split('')` of a 3 MiB string).
const MAX_ITEMS: usize = 1 << 20;

/// Go's `strings.SplitN` (all parts when `n` is negative); past
/// [`MAX_ITEMS`] parts it stops as a call past its cost limit stops.
fn split(s: &str, sep: &str, n: i64) -> Result<Value> {
    let parts = if sep.is_empty() {
        s.chars().count()
    } else {
        s.matches(sep).count() + 1
    };
    let parts = if n < 0 { parts } else { parts.min(n as usize) };
    if parts > MAX_ITEMS {
        return Err(Error::Cancelled);
    }
    Ok(split_n(s, sep, n))
}

fn split_n(s: &str, sep: &str, n: i64) -> Value {
    if n == 0 {
        return Value::list(vec![]);
    }
    let parts: Vec<String> = if sep.is_empty() {
        let c = chars(s);
        let limit = if n < 0 {
            c.len()
        } else {
            (n as usize).min(c.len())
        };
        let mut parts: Vec<String> = c
            .iter()
            .take(limit.saturating_sub(1))
            .map(char::to_string)
            .collect();
        if limit > 0 {
            parts.push(c[limit - 1..].iter().collect());
        }
        parts
    } else if n < 0 {
        s.split(sep).map(str::to_owned).collect()
    } else {
        s.splitn(n as usize, sep).map(str::to_owned).collect()
    };
    Value::list(parts.into_iter().map(Value::string).collect())
}

fn join(items: &[Value], sep: &[Value]) -> Result<Value> {
    let sep = match sep {
        [] => "",
        [Value::String(sep)] => sep,
        _ => return no_overload(),
    };
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        match item {
            Value::String(s) => out.push_str(s),
            other => return fail(format!("join: invalid input: {}", shown(other))),
        }
    }
    Ok(Value::string(out))
}

/// `strings.quote`: CEL's escapes written out, in double quotes.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `"…".format([args])`.
fn format(template: &str, args: &[Value]) -> Result<Value> {
    let mut out = String::new();
    let mut chars = template.chars().peekable();
    let mut next = 0;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        let mut precision: Option<usize> = None;
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut digits = String::new();
            while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(*d);
                chars.next();
            }
            precision = digits.parse().ok();
        }
        let Some(verb) = chars.next() else {
            return fail("unexpected end of format string");
        };
        let Some(arg) = args.get(next) else {
            return fail(format!("index {next} out of range"));
        };
        next += 1;
        let text = match (verb, arg) {
            ('s', v) => display(v),
            ('d', Value::Int(n)) => n.to_string(),
            ('d', Value::Uint(n)) => n.to_string(),
            ('f', Value::Double(d)) => format!("{d:.*}", precision.unwrap_or(6)),
            ('f', Value::Int(n)) => format!("{:.*}", precision.unwrap_or(6), *n as f64),
            // cel-go prints through golang.org/x/text's printer: the
            // exponent as `×10` and superscript digits, six decimals (its
            // precision is taken as a width).
            ('e', Value::Double(d)) => scientific(*d),
            ('x' | 'X', Value::String(s)) => {
                let mut hex = String::new();
                for b in s.bytes() {
                    let _ = if verb == 'x' {
                        write!(hex, "{b:02x}")
                    } else {
                        write!(hex, "{b:02X}")
                    };
                }
                hex
            }
            ('o', Value::Int(n)) => format!("{n:o}"),
            ('b', Value::Int(n)) => format!("{n:b}"),
            ('b', Value::Bool(b)) => b.to_string(),
            (verb, v) => {
                return fail(format!(
                    "error during formatting: unrecognized formatting clause \"{verb}\" for {}",
                    v.type_name()
                ));
            }
        };
        out.push_str(&text);
    }
    Ok(Value::string(out))
}

fn scientific(d: f64) -> String {
    let text = format!("{d:.6e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits = format!("{:02}", exponent.unsigned_abs());
    let superscript: String = digits
        .chars()
        .map(|c| {
            ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'][c.to_digit(10).unwrap_or(0) as usize]
        })
        .collect();
    let sign = if exponent < 0 { "⁻" } else { "" };
    format!("{mantissa}×10{sign}{superscript}")
}

/// A value as `%s` writes it.
fn display(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        Value::Double(d) => go_float(*d),
        Value::List(l) => format!(
            "[{}]",
            l.items.iter().map(display).collect::<Vec<_>>().join(", ")
        ),
        Value::Null => "null".to_owned(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Timestamp(t) => t.text(),
        Value::Duration(d) => d.text(),
        Value::Type(t) => t.to_string(),
        other => shown(other),
    }
}
