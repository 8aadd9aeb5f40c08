//! What a scalar of a manifest means to Kubernetes: kubectl, kustomize's
//! output applied by kubectl, and the API server's own YAML decoding all
//! read YAML through `sigs.k8s.io/yaml`, which converts it to JSON with its
//! fork of go-yaml v2 (YAML 1.1). Its `resolve` (go-yaml v2.4.0
//! `resolve.go`, vendored by kubernetes v1.30 as
//! `sigs.k8s.io/yaml/goyaml.v2`) reads an untagged plain scalar as:
//!
//! - null: empty, `~`, `null`, `Null`, `NULL`;
//! - a boolean: `y`, `Y`, `yes`, `Yes`, `YES`, `on`, `On`, `ON`, `true`,
//!   `True`, `TRUE`, and `n`, `no`, `off`, `false` spelt the same ways;
//! - a number, when it starts with a digit, a sign or `.`: the text without
//!   `_` as Go's `strconv.ParseInt(s, 0, 64)` reads it (`0x1F`, `0o17`,
//!   `0b101`, and `0644` octal), then as a float matching
//!   `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$` (so `08` is 8.0);
//! - text otherwise (a timestamp too: decoded into an `interface{}` it
//!   stays a string).
//!
//! [`resolve`] reads as that, and says where a YAML 1.2 reader (the core
//! schema, as [`super::scalar`] reads specs) reads the same text otherwise.

use granit_parser::ScalarStyle;

use super::scalar::{self, Problem, Value};
use super::{Body, Raw};

/// A scalar as Kubernetes reads it, and the YAML 1.2 reading when that
/// differs from it.
pub struct Reading<'s> {
    pub value: Result<Value<'s>, Problem>,
    pub differs: Option<Result<Value<'s>, Problem>>,
}

pub fn resolve<'s>(raw: &'s Raw<'_>) -> Reading<'s> {
    let core = scalar::resolve(raw);
    let plain = raw.tag.is_none() && matches!(raw.body, Body::Scalar(_, ScalarStyle::Plain));
    let Some(text) = raw.scalar().filter(|_| plain) else {
        return Reading {
            value: core,
            differs: None,
        };
    };
    let value = yaml_1_1(text);
    let differs = (!same(&value, &core)).then_some(core);
    Reading { value, differs }
}

fn same(a: &Result<Value<'_>, Problem>, b: &Result<Value<'_>, Problem>) -> bool {
    match (a, b) {
        (Ok(Value::Float(x)), Ok(Value::Float(y))) => x.to_bits() == y.to_bits(),
        (Ok(x), Ok(y)) => x == y,
        (Err(Problem::NotFinite), Err(Problem::NotFinite)) => true,
        _ => false,
    }
}

/// An untagged plain scalar as go-yaml v2 resolves it.
fn yaml_1_1(text: &str) -> Result<Value<'_>, Problem> {
    // YAML 1.1's booleans besides the core schema's words.
    match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => return Ok(Value::Bool(true)),
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => return Ok(Value::Bool(false)),
        _ => {}
    }
    if let Some(word) = scalar::word(text) {
        return word;
    }
    match text.as_bytes()[0] {
        b'.' => match text.parse::<f64>() {
            Ok(f) if f.is_finite() && yaml_style_float(text) => Ok(Value::Float(f)),
            _ => Ok(Value::Str(text)),
        },
        b'0'..=b'9' | b'+' | b'-' => {
            let plain = text.replace('_', "");
            if let Some(i) = go_parse_int(&plain) {
                return Ok(
                    i64::try_from(i).map_or_else(|_| Value::Float(as_float(i)), Value::Integer)
                );
            }
            // Out of a float's range, Go's ParseFloat fails and the text stays text.
            match plain.parse::<f64>() {
                Ok(f) if f.is_finite() && yaml_style_float(&plain) => Ok(Value::Float(f)),
                _ => Ok(Value::Str(text)),
            }
        }
        _ => Ok(Value::Str(text)),
    }
}

#[allow(clippy::cast_precision_loss)] // reason: a uint64 past i64 is read as the float nearest it, as JSON numbers are
fn as_float(i: i128) -> f64 {
    i as f64
}

/// Go's `strconv.ParseInt(s, 0, 64)`, then `ParseUint(s, 0, 64)`: a sign,
/// then `0x`/`0o`/`0b` or a leading `0` for octal. `None` where both fail.
fn go_parse_int(s: &str) -> Option<i128> {
    let (negative, unsigned) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = unsigned.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    let value = i128::from(magnitude);
    if negative {
        // ParseUint takes no sign: a negative number must fit an int64.
        (value <= i128::from(i64::MAX) + 1).then_some(-value)
    } else {
        Some(value)
    }
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn yaml_style_float(text: &str) -> bool {
    scalar::float_shape(text.strip_prefix(['-', '+']).unwrap_or(text)).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_go_yaml_v2_reads_plain_scalars() {
        let cases: &[(&str, Result<Value<'_>, Problem>)] = &[
            ("1_0", Ok(Value::Integer(10))),
            ("0x10", Ok(Value::Integer(16))),
            ("0X1f", Ok(Value::Integer(31))),
            ("0644", Ok(Value::Integer(420))),
            ("-0644", Ok(Value::Integer(-420))),
            ("0o17", Ok(Value::Integer(15))),
            ("0b101", Ok(Value::Integer(5))),
            ("-0b101", Ok(Value::Integer(-5))),
            ("08", Ok(Value::Float(8.0))),
            ("+12", Ok(Value::Integer(12))),
            ("1_000.5", Ok(Value::Float(1000.5))),
            (".5", Ok(Value::Float(0.5))),
            ("1e3", Ok(Value::Float(1000.0))),
            ("yes", Ok(Value::Bool(true))),
            ("Off", Ok(Value::Bool(false))),
            ("y", Ok(Value::Bool(true))),
            ("yES", Ok(Value::Str("yES"))),
            ("1Gi", Ok(Value::Str("1Gi"))),
            ("2024-01-02", Ok(Value::Str("2024-01-02"))),
            (
                "18446744073709551615",
                Ok(Value::Float(18_446_744_073_709_551_615.0)),
            ),
            ("-", Ok(Value::Str("-"))),
            (".", Ok(Value::Str("."))),
            (".inf", Err(Problem::NotFinite)),
            ("1e999", Ok(Value::Str("1e999"))),
        ];
        for (text, expected) in cases {
            assert_eq!(&yaml_1_1(text), expected, "{text}");
        }
    }
}
