//! Values as Go prints them, where trainc repeats the API server's words:
//! `%q` of a string, `%v` of a number or a decoded JSON value, `encoding/json`
//! of a value, and a field error's body (k8s.io/apimachinery v0.36.3
//! `pkg/util/validation/field/errors.go`, `ErrorBody`).

use std::fmt::Write as _;

use serde_json::Value as Json;

/// `ErrorBody`: the error type's words, the bad value where the type shows
/// one, the detail (`Invalid value: "x": must be …`).
pub(crate) fn error_body(words: &str, shown: Option<&str>, detail: &str) -> String {
    let mut out = words.to_owned();
    if let Some(shown) = shown {
        out.push_str(": ");
        out.push_str(shown);
    }
    if !detail.is_empty() {
        out.push_str(": ");
        out.push_str(detail);
    }
    out
}

/// Go's `%q`.
pub(crate) fn go_quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A `float64` as Go's `%v` (and CEL's `string()`) writes it: `%g` with
/// the shortest digits. (A finite double's decimal exponent fits an `i32`.)
#[allow(clippy::cast_possible_truncation)]
pub(crate) fn go_float(d: f64) -> String {
    if d.is_nan() {
        return "NaN".to_owned();
    }
    if d.is_infinite() {
        return if d > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    let exponent = if d == 0.0 {
        0
    } else {
        d.abs().log10().floor() as i32
    };
    if (-4..6).contains(&exponent) {
        return format!("{d}");
    }
    let text = format!("{d:e}");
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    format!(
        "{mantissa}e{}{:02}",
        if exp < 0 { '-' } else { '+' },
        exp.abs()
    )
}

/// A bad value as `ErrorBody` prints it: a string quoted (`%q`), a
/// number or bool bare (`%v`), anything else as JSON.
pub(crate) fn bad_value(value: &Json) -> String {
    match value {
        Json::String(s) => go_quoted(s),
        Json::Number(n) => go_number(n),
        Json::Bool(b) => b.to_string(),
        other => go_json(other),
    }
}

/// A number as Go's `%v` prints an `int64` or a `float64`.
pub(crate) fn go_number(n: &serde_json::Number) -> String {
    match n.as_i64() {
        Some(i) => i.to_string(),
        None => match n.as_u64() {
            Some(u) => u.to_string(),
            None => go_float(n.as_f64().unwrap_or(0.0)),
        },
    }
}

/// A value as Go's `encoding/json` writes it: keys sorted, no spaces, a
/// float that is whole without a fraction.
pub(crate) fn go_json(value: &Json) -> String {
    let mut out = String::new();
    write_json(value, &mut out);
    out
}

fn write_json(value: &Json, out: &mut String) {
    match value {
        Json::Object(fields) => {
            let mut keys: Vec<&String> = fields.keys().collect();
            keys.sort();
            out.push('{');
            for (n, key) in keys.into_iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                out.push_str(&Json::String(key.clone()).to_string());
                out.push(':');
                write_json(&fields[key], out);
            }
            out.push('}');
        }
        Json::Array(items) => {
            out.push('[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Json::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(0.0);
            let abs = f.abs();
            if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
                // Go's `'e'` form, its exponent without a leading zero.
                let text = format!("{f:e}");
                let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
                let exp: i32 = exp.parse().unwrap_or(0);
                let sign = if exp < 0 { '-' } else { '+' };
                let _ = write!(out, "{mantissa}e{sign}{:02}", exp.abs());
            } else {
                let _ = write!(out, "{f}");
            }
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Go's `%v` of a decoded JSON value (`[a 1 map[k:v]]`), as an enum's
/// allowed values are listed.
pub(crate) fn go_v(value: &Json) -> String {
    match value {
        Json::Null => "<nil>".to_owned(),
        Json::String(s) => s.clone(),
        Json::Number(n) => go_number(n),
        Json::Bool(b) => b.to_string(),
        Json::Array(items) => {
            let items: Vec<String> = items.iter().map(go_v).collect();
            format!("[{}]", items.join(" "))
        }
        Json::Object(fields) => {
            let mut keys: Vec<&String> = fields.keys().collect();
            keys.sort();
            let items: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", go_v(&fields[k])))
                .collect();
            format!("map[{}]", items.join(" "))
        }
    }
}

/// The Go type a JSON value decodes to, as the server's errors name it.
pub(crate) fn go_type(value: &Json) -> &'static str {
    match value {
        Json::Null => "<nil>",
        Json::Bool(_) => "bool",
        Json::Number(n) if n.is_i64() => "int64",
        Json::Number(_) => "float64",
        Json::String(_) => "string",
        Json::Array(_) => "[]interface {}",
        Json::Object(_) => "map[string]interface {}",
    }
}
