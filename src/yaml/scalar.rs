//! What a scalar means: YAML 1.2's core schema, made strict where YAML 1.1
//! (which kubectl and most Kubernetes tools speak) would read the same text
//! differently.
//!
//! `010` is 10 in YAML 1.2 and 8 in YAML 1.1; a spec that says `replicas: 010`
//! has no single meaning, so it is an error rather than a guess. `yes` and `on`
//! stay text (YAML 1.2), and tags other than the core ones are refused.

use granit_parser::ScalarStyle;

use super::{Body, Raw};

/// A scalar's value under the core schema.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'s> {
    Null,
    Bool(bool),
    Integer(i64),
    Float(f64),
    Str(&'s str),
}

/// Why a scalar has no value a spec can use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A decimal with a leading zero (`010`).
    LeadingZero,
    /// `.inf`, `.nan`, or a float too large to hold (`1e999`).
    NotFinite,
    /// A tag that is not `!!str`, `!!int`, `!!float`, `!!bool`, `!!null` (or
    /// `!!map` / `!!seq` on a container); the tag as written.
    Tag(String),
    /// A core tag whose text does not read as its type (`!!int abc`).
    NotOfTag(&'static str),
}

/// The value of a scalar node, or why it has none.
pub fn resolve<'s>(raw: &'s Raw<'_>) -> Result<Value<'s>, Problem> {
    let Body::Scalar(text, style) = &raw.body else {
        unreachable!("resolve is called on scalars")
    };
    let text: &str = text;
    match raw.tag.as_deref() {
        None if *style == ScalarStyle::Plain => Ok(plain(text)?),
        None => Ok(Value::Str(text)),
        Some(tag) => match core_suffix(tag) {
            Some("str") => Ok(Value::Str(text)),
            Some(suffix @ ("int" | "float" | "bool" | "null")) => {
                let kind = ["int", "float", "bool", "null"]
                    .into_iter()
                    .find(|k| *k == suffix)
                    .unwrap_or("str");
                let value = plain(text)?;
                match (kind, &value) {
                    ("int", Value::Integer(_))
                    | ("bool", Value::Bool(_))
                    | ("null", Value::Null)
                    | ("float", Value::Float(_)) => Ok(value),
                    ("float", Value::Integer(i)) => Ok(Value::Float(whole(*i))),
                    _ => Err(Problem::NotOfTag(kind)),
                }
            }
            _ => Err(Problem::Tag(tag.original())),
        },
    }
}

/// Whether a container's tag is one a spec accepts; the tag as written if
/// not. A scalar's tag is [`resolve`]'s to judge.
pub fn container_tag_problem(raw: &Raw<'_>) -> Option<Problem> {
    let tag = raw.tag.as_deref()?;
    let expected = match raw.body {
        Body::Seq(_) => "seq",
        Body::Map(_) => "map",
        Body::Scalar(..) => return None,
    };
    (core_suffix(tag) != Some(expected)).then(|| Problem::Tag(tag.original()))
}

/// `str` of `!!str` (or `!<tag:yaml.org,2002:str>`); `!` alone, YAML's
/// non-specific tag, reads as text.
fn core_suffix(tag: &granit_parser::Tag) -> Option<&str> {
    if tag.handle() == "tag:yaml.org,2002:" {
        Some(tag.suffix())
    } else if tag.handle() == "!" && tag.suffix().is_empty() {
        Some("str")
    } else {
        None
    }
}

#[allow(clippy::cast_precision_loss)] // reason: a float tag on an integer asks for exactly this
fn whole(i: i64) -> f64 {
    i as f64
}

/// The words of the core schema: its nulls, booleans and the infinities and
/// NaNs a spec cannot use. YAML 1.1 reads these the same (and more words).
pub(super) fn word(text: &str) -> Option<Result<Value<'_>, Problem>> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => Some(Ok(Value::Null)),
        "true" | "True" | "TRUE" => Some(Ok(Value::Bool(true))),
        "false" | "False" | "FALSE" => Some(Ok(Value::Bool(false))),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => Some(Err(Problem::NotFinite)),
        _ => None,
    }
}

/// An untagged plain scalar.
fn plain(text: &str) -> Result<Value<'_>, Problem> {
    if let Some(word) = word(text) {
        return word;
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    let negative = text.starts_with('-');
    // `0x1F` and `0o17` (unsigned, as the core schema writes them).
    for (prefix, radix) in [("0x", 16), ("0o", 8)] {
        if let Some(digits) = text.strip_prefix(prefix)
            && !digits.is_empty()
            && digits.chars().all(|c| c.is_digit(radix))
        {
            return i64::from_str_radix(digits, radix)
                .map(Value::Integer)
                .map_err(|_| Problem::NotFinite);
        }
    }
    if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
        if unsigned.len() > 1 && unsigned.starts_with('0') {
            return Err(Problem::LeadingZero);
        }
        let parsed = if negative {
            format!("-{unsigned}").parse::<i64>()
        } else {
            unsigned.parse::<i64>()
        };
        return parsed
            .map(Value::Integer)
            .or_else(|_| beyond_64_bits(unsigned).map(|v| negate(v, negative)));
    }
    if is_float(unsigned) {
        let value: f64 = text.parse().map_err(|_| Problem::NotFinite)?;
        return if value.is_finite() {
            Ok(Value::Float(value))
        } else {
            Err(Problem::NotFinite)
        };
    }
    Ok(Value::Str(text))
}

/// A decimal integer past 64 bits, as the float nearest to it: what it
/// means is clear, and a range check then names the bound it breaks.
/// Hexadecimal and octal ones that large are simply too big.
fn beyond_64_bits(text: &str) -> Result<Value<'_>, Problem> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(Value::Float(value)),
        _ => Err(Problem::NotFinite),
    }
}

fn negate(value: Value<'_>, negative: bool) -> Value<'_> {
    match value {
        Value::Float(f) if negative => Value::Float(-f),
        other => other,
    }
}

/// `(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, the core schema's float
/// without its sign.
fn is_float(text: &str) -> bool {
    // Long text that cannot be a number is not scanned for an exponent.
    if !text.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '.' | '-' | '+')) {
        return false;
    }
    float_shape(text) == Some(true)
}

/// Whether unsigned `text` matches `(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`,
/// and if so whether it has a point or an exponent (YAML 1.2 reads `12` as
/// an integer; go-yaml v2's float pattern takes it too).
pub(super) fn float_shape(text: &str) -> Option<bool> {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], Some(&text[at + 1..])),
        None => (text, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", fraction)) => digits(fraction),
        Some((whole, fraction)) => digits(whole) && (fraction.is_empty() || digits(fraction)),
        None => digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    (mantissa_ok && exponent_ok).then(|| mantissa.contains('.') || exponent.is_some())
}

/// What makes two mapping keys the same key: their type and value (`a` and
/// `"a"` are one key; `1` and `"1"` are two). `None` for keys that are
/// containers, which no spec or resource has.
pub fn key_identity(raw: &Raw<'_>) -> Option<String> {
    if !matches!(raw.body, Body::Scalar(..)) {
        return None;
    }
    Some(match resolve(raw) {
        Ok(Value::Null) => "null".to_owned(),
        Ok(Value::Bool(b)) => format!("bool:{b}"),
        Ok(Value::Integer(i)) => format!("int:{i}"),
        Ok(Value::Float(f)) => format!("float:{f}"),
        Ok(Value::Str(s)) => format!("str:{s}"),
        Err(_) => format!("raw:{}", raw.scalar().unwrap_or_default()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{SourceId, Span};
    use std::borrow::Cow;

    fn plain_raw(text: &str) -> Raw<'_> {
        Raw {
            span: Span::new(SourceId(0), 0, 0),
            tag: None,
            body: Body::Scalar(Cow::Borrowed(text), ScalarStyle::Plain),
        }
    }

    #[test]
    fn the_core_schema_strictly() {
        let cases: &[(&str, Result<Value<'_>, Problem>)] = &[
            ("10", Ok(Value::Integer(10))),
            ("-3", Ok(Value::Integer(-3))),
            ("0", Ok(Value::Integer(0))),
            ("0x1F", Ok(Value::Integer(31))),
            ("0o17", Ok(Value::Integer(15))),
            ("010", Err(Problem::LeadingZero)),
            ("0644", Err(Problem::LeadingZero)),
            ("99999999999999999999", Ok(Value::Float(1e20))),
            ("0x10000000000000000", Err(Problem::NotFinite)),
            ("1.5", Ok(Value::Float(1.5))),
            ("1e3", Ok(Value::Float(1000.0))),
            ("1e999", Err(Problem::NotFinite)),
            (".nan", Err(Problem::NotFinite)),
            ("yes", Ok(Value::Str("yes"))),
            ("1_000", Ok(Value::Str("1_000"))),
            ("1Gi", Ok(Value::Str("1Gi"))),
            ("~", Ok(Value::Null)),
            ("TRUE", Ok(Value::Bool(true))),
            ("1.2.3", Ok(Value::Str("1.2.3"))),
            (".", Ok(Value::Str("."))),
        ];
        for (text, expected) in cases {
            assert_eq!(&plain(text), expected, "{text}");
        }
    }

    #[test]
    fn quoted_text_is_text_and_keys_compare_by_value() {
        let quoted = Raw {
            body: Body::Scalar(Cow::Borrowed("010"), ScalarStyle::DoubleQuoted),
            ..plain_raw("")
        };
        assert_eq!(resolve(&quoted), Ok(Value::Str("010")));
        let quoted_a = Raw {
            body: Body::Scalar(Cow::Borrowed("a"), ScalarStyle::SingleQuoted),
            ..plain_raw("")
        };
        assert_eq!(key_identity(&quoted_a), key_identity(&plain_raw("a")));
        assert_ne!(
            key_identity(&plain_raw("1")),
            key_identity(&Raw {
                body: Body::Scalar(Cow::Borrowed("1"), ScalarStyle::DoubleQuoted),
                ..plain_raw("")
            })
        );
    }
}
