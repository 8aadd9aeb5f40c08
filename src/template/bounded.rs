//! The built-ins whose result can be far larger than their arguments,
//! replaced by versions that refuse to make a value longer than
//! [`MAX_VALUE`], and a writer that stops output past [`MAX_OUTPUT`].
//!
//! minijinja's own `join`, `replace`, `indent`, `format`, `slice`, `batch`
//! and `range` allocate in proportion to an argument: `range(100000) |
//! join("x" * 100000)` asks for 10 GB in one step, which fuel cannot stop.

use std::fmt::Write as _;

use minijinja::value::{Rest, Value, ValueOrKwargs};
use minijinja::{Environment, Error, ErrorKind, State};

/// The longest text (or list) a filter may make: far past any field value.
pub(super) const MAX_VALUE: usize = 256 * 1024;
/// The most a template string may render to.
pub(super) const MAX_OUTPUT: usize = 256 * 1024;
/// Items `range`, `slice` and `batch` may make.
pub(super) const MAX_ITEMS: usize = 10_000;

/// The message every limit error starts with, which the diagnostic
/// recognises.
pub(super) const LIMIT: &str = "trainc limit:";

fn too_long(what: &str) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!(
            "{LIMIT} {what} would be longer than {} KiB",
            MAX_VALUE / 1024
        ),
    )
}

fn too_many(what: &str) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("{LIMIT} {what} would make more than {MAX_ITEMS} items"),
    )
}

/// Installs the bounded built-ins in `env`.
pub(super) fn install(env: &mut Environment<'_>) {
    env.add_filter("join", join);
    env.add_filter("replace", replace);
    env.add_filter("indent", indent);
    env.add_filter("format", format);
    let split: [(&'static str, Split); 2] = [
        ("slice", minijinja::filters::slice),
        ("batch", minijinja::filters::batch),
    ];
    for (name, filter) in split {
        env.add_filter(name, move |state: &State<'_, '_>, value, count, fill| {
            counted(name, filter, state, value, count, fill)
        });
    }
    env.add_function(
        "range",
        |lower: i64, upper: Option<i64>, step: Option<i64>| {
            let (start, end) = upper.map_or((0, lower), |upper| (lower, upper));
            let step = step.unwrap_or(1);
            let span = end.saturating_sub(start).unsigned_abs();
            let count = span.checked_div(step.unsigned_abs()).unwrap_or(0);
            if count > MAX_ITEMS as u64 {
                return Err(too_many("`range`"));
            }
            let as_isize = |v: i64| isize::try_from(v).map_err(|_| too_many("`range`"));
            minijinja::functions::range(
                as_isize(lower)?,
                upper.map(as_isize).transpose()?,
                Some(as_isize(step)?),
            )
        },
    );
}

/// `slice` or `batch`, refusing to make more than [`MAX_ITEMS`] groups.
/// A filter that splits a sequence into `count` parts (`slice`) or parts of
/// `count` items (`batch`).
type Split = fn(&State<'_, '_>, Value, usize, Option<Value>) -> Result<Value, Error>;

fn counted(
    name: &str,
    filter: Split,
    state: &State<'_, '_>,
    value: Value,
    count: usize,
    fill: Option<Value>,
) -> Result<Value, Error> {
    if count > MAX_ITEMS {
        return Err(too_many(&format!("`{name}`")));
    }
    filter(state, value, count, fill)
}

/// The items of a list (or the characters of a string) as text, joined.
fn join(value: &Value, separator: Option<String>) -> Result<String, Error> {
    let separator = separator.unwrap_or_default();
    if value.is_undefined() || value.is_none() {
        return Ok(String::new());
    }
    if let Some(text) = value.as_str() {
        let count = text.chars().count();
        if text.len() + separator.len().saturating_mul(count.saturating_sub(1)) > MAX_VALUE {
            return Err(too_long("`join`"));
        }
        let parts: Vec<String> = text.chars().map(String::from).collect();
        return Ok(parts.join(&separator));
    }
    let mut out = String::new();
    for (i, item) in value.try_iter()?.enumerate() {
        if i > 0 {
            out.push_str(&separator);
        }
        let _ = write!(out, "{item}");
        if out.len() > MAX_VALUE {
            return Err(too_long("`join`"));
        }
    }
    Ok(out)
}

fn replace(text: &str, from: &str, to: &str) -> Result<String, Error> {
    let count = if from.is_empty() {
        text.chars().count() + 1
    } else {
        text.matches(from).count()
    };
    let grown = text.len() + count.saturating_mul(to.len().saturating_sub(from.len()));
    if grown > MAX_VALUE {
        return Err(too_long("`replace`"));
    }
    Ok(text.replace(from, to))
}

fn indent(
    text: &str,
    width: Option<&Value>,
    first: Option<bool>,
    blank: Option<bool>,
) -> Result<String, Error> {
    let prefix = match width {
        None => "    ".to_owned(),
        Some(width) => {
            if let Some(text) = width.as_str() {
                text.to_owned()
            } else {
                let n = usize::try_from(width.clone()).map_err(|_| too_long("`indent`"))?;
                if n > MAX_VALUE {
                    return Err(too_long("`indent`"));
                }
                " ".repeat(n)
            }
        }
    };
    let lines = text.lines().count() + 1;
    if text.len() + prefix.len().saturating_mul(lines) > MAX_VALUE {
        return Err(too_long("`indent`"));
    }
    let mut out = String::new();
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let indented = (i > 0 || first.unwrap_or(false))
            && (!line.trim().is_empty() || blank.unwrap_or(false));
        if indented {
            out.push_str(&prefix);
        }
        out.push_str(line);
    }
    Ok(out)
}

/// printf-style formatting, with widths and precisions of at most 4 digits
/// and none taken from the arguments (`%*d`).
fn format(
    state: &mut State<'_, '_>,
    format_value: &Value,
    args: Rest<ValueOrKwargs>,
) -> Result<Value, Error> {
    let format_text = format_value.as_str().unwrap_or_default();
    let bytes = format_text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let mut j = i + 1;
            let mut digits = 0;
            while j < bytes.len() && !bytes[j].is_ascii_alphabetic() && bytes[j] != b'%' {
                if bytes[j] == b'*' {
                    return Err(too_long("`format`"));
                }
                digits = if bytes[j].is_ascii_digit() {
                    digits + 1
                } else {
                    0
                };
                if digits > 4 {
                    return Err(too_long("`format`"));
                }
                j += 1;
            }
            i = j + 1;
        } else {
            i += 1;
        }
    }
    minijinja::filters::format(state, format_value, args)
}

/// A writer that fails past [`MAX_OUTPUT`] bytes.
#[derive(Default)]
pub(super) struct Capped {
    pub(super) text: Vec<u8>,
    pub(super) overflowed: bool,
}

impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.text.len() + buf.len() > MAX_OUTPUT {
            self.overflowed = true;
            return Err(std::io::Error::other("template output limit"));
        }
        self.text.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
