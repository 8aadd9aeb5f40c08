//! How a scalar reads, in words: an error where a spec's value has no
//! single meaning (`010`, `0o10`, `1:30`: YAML 1.2 and YAML 1.1 read them
//! apart), a warning where a manifest's does (Kubernetes reads it as YAML
//! 1.1), and why a scalar has no value a spec can use.

use crate::diagnostic::{Diagnostic, codes};
use crate::yaml::scalar::{self, Problem};
use crate::yaml::{Body, Raw};

/// A scalar of a manifest that Kubernetes (YAML 1.1) and a YAML 1.2 reader
/// read differently: accepted as Kubernetes reads it, with a warning.
pub(super) fn two_readings(
    raw: &Raw<'_>,
    value: &scalar::Value<'_>,
    other: &Result<scalar::Value<'_>, Problem>,
) -> Diagnostic {
    let text = crate::diagnostic::quoted_value(raw.scalar().unwrap_or_default(), 40);
    let shown = |value: &scalar::Value<'_>| match value {
        scalar::Value::Null => "null".to_owned(),
        scalar::Value::Bool(b) => format!("the boolean `{b}`"),
        scalar::Value::Integer(i) => format!("the number {i}"),
        scalar::Value::Float(f) => format!("the number {f}"),
        scalar::Value::Str(s) => format!("the text \"{}\"", crate::diagnostic::quoted_value(s, 40)),
    };
    let theirs = match other {
        Ok(value) => shown(value),
        Err(Problem::LeadingZero) => format!(
            "the number {}",
            decimal_reading(raw.scalar().unwrap_or_default())
        ),
        Err(_) => "no value".to_owned(),
    };
    let fix = match value {
        scalar::Value::Integer(i) => format!("write `{i}`"),
        scalar::Value::Float(f) => format!("write `{f}`"),
        scalar::Value::Bool(b) => format!("write `{b}`"),
        _ => "write it plainly".to_owned(),
    };
    Diagnostic::warning(
        codes::PARSE_YAML,
        raw.span,
        format!(
            "`{text}` is {} to Kubernetes (YAML 1.1, as kubectl reads it) but {theirs} to a YAML 1.2 reader",
            shown(value)
        ),
    )
    .with_label("read two ways")
    .with_help(format!("{fix}, which every reader reads alike; quote it (`\"{text}\"`) if you mean the text"))
}

/// A plain scalar of a spec that YAML 1.2 (trainc) and YAML 1.1 as PyYAML
/// reads it (the reader of most Python tools that write or check specs)
/// read as different values where one of them is a number: `0o10`, the
/// number 8 to YAML 1.2 and the text "0o10" to YAML 1.1; `1:30`, text to
/// YAML 1.2 and the base-60 number 90 to YAML 1.1. An error, as `010` is:
/// a spec means one thing.
pub(super) fn pyyaml_number(raw: &Raw<'_>) -> Option<Diagnostic> {
    if raw.tag.is_some() || !matches!(raw.body, Body::Scalar(_, granit_parser::ScalarStyle::Plain))
    {
        return None;
    }
    let text = raw.scalar()?;
    let shown = crate::diagnostic::quoted_value(text, 40);
    let (ours, theirs, help) = if let Some(digits) = text.strip_prefix("0o") {
        let n = i64::from_str_radix(digits, 8).ok()?;
        (
            format!("the number {n}"),
            format!("the text \"{shown}\""),
            format!(
                "write `{n}`, which every reader reads alike; quote it (`\"{shown}\"`) if you mean the text"
            ),
        )
    } else {
        let n = sexagesimal(text)?;
        (
            format!("the text \"{shown}\""),
            format!("the number {n} (base 60)"),
            format!(
                "quote it (`\"{shown}\"`), which every reader reads as text; write `{n}` if you mean the number"
            ),
        )
    };
    Some(
        Diagnostic::error(
            codes::PARSE_YAML,
            raw.span,
            format!("`{shown}` is {ours} to YAML 1.2 (trainc) but {theirs} to YAML 1.1 (PyYAML)"),
        )
        .with_label("read two ways")
        .with_help(help),
    )
}

/// A YAML 1.1 base-60 integer (`[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+`): its
/// value, when it fits.
fn sexagesimal(text: &str) -> Option<i64> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let mut parts = unsigned.split(':');
    let first = parts.next()?;
    if !first.starts_with(|c: char| matches!(c, '1'..='9'))
        || !first.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    {
        return None;
    }
    let mut value: i64 = first.replace('_', "").parse().ok()?;
    let mut any = false;
    for part in parts {
        let digit: i64 = match part.as_bytes() {
            [d @ b'0'..=b'9'] => i64::from(d - b'0'),
            [t @ b'0'..=b'5', d @ b'0'..=b'9'] => i64::from((t - b'0') * 10 + (d - b'0')),
            _ => return None,
        };
        value = value.checked_mul(60)?.checked_add(digit)?;
        any = true;
    }
    any.then_some(if negative { -value } else { value })
}

/// A number written with leading zeros (`0644`, `-010`) as YAML 1.2 reads
/// it: the decimal number without them (`644`, `-10`).
fn decimal_reading(text: &str) -> String {
    let digits = text.trim_start_matches(['-', '+']).trim_start_matches('0');
    format!(
        "{}{}",
        if text.starts_with('-') { "-" } else { "" },
        if digits.is_empty() { "0" } else { digits }
    )
}

pub(super) fn scalar_problem(raw: &Raw<'_>, problem: &Problem) -> Diagnostic {
    let text = raw.scalar().unwrap_or_default();
    let shown = crate::diagnostic::quoted_value(text, 40);
    match problem {
        Problem::LeadingZero => {
            let unsigned = text.trim_start_matches(['-', '+']);
            let sign = if text.starts_with('-') { "-" } else { "" };
            let decimal = decimal_reading(text);
            let octal = i64::from_str_radix(unsigned, 8)
                .ok()
                .map(|n| format!("{sign}{n}"));
            let help = match octal {
                // A number too long to read back: the rule, not the rewrite.
                _ if text.len() > 40 => {
                    "write it without the leading zeros; quote it if you mean the text".to_owned()
                }
                // Both readings are one number: only the zeros are in the way.
                Some(octal) if octal == decimal => {
                    format!("write `{decimal}`; quote it (`\"{text}\"`) if you mean the text")
                }
                Some(octal) => format!(
                    "write `{decimal}` for {decimal}, or `{octal}` if you mean octal; quote it (`\"{text}\"`) if you mean the text"
                ),
                None => format!("write `{decimal}`; quote it (`\"{text}\"`) if you mean the text"),
            };
            Diagnostic::error(
                codes::PARSE_YAML,
                raw.span,
                format!("`{shown}` has a leading zero: YAML 1.2 reads it as a decimal number and YAML 1.1 (kubectl) as an octal one"),
            )
            .with_label("ambiguous number")
            .with_help(help)
        }
        Problem::NotFinite => Diagnostic::error(
            codes::PARSE_YAML,
            raw.span,
            format!("`{shown}` is not a number a spec can use"),
        )
        .with_help("write a finite number; quote it if you mean the text"),
        Problem::Tag(tag) => Diagnostic::error(
            codes::PARSE_YAML,
            raw.span,
            format!(
                "the tag `{}` has no meaning in a spec",
                crate::diagnostic::quoted_value(tag, 40)
            ),
        )
        .with_help(
            "remove the tag; a spec's values are text, numbers, booleans, lists and mappings",
        ),
        Problem::NotOfTag(kind) => Diagnostic::error(
            codes::PARSE_YAML,
            raw.span,
            format!("`{shown}` is tagged `!!{kind}` but does not read as one"),
        )
        .with_help("remove the tag, or write a value of that type"),
    }
}
