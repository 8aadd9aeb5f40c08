//! kube-openapi's `numberValidator` (`validator.go`, `values.go`): a
//! number within its type's range, and its `multipleOf`, `minimum` and
//! `maximum`, compared as integers where the value is one.

use serde_json::{Number, Value as Json};

use super::{Code, Error, Found, is_json_integer};

/// A number as Go decodes it: an `int64` or a `float64`.
#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    fn of(n: &Number) -> Num {
        match n.as_i64() {
            Some(i) => Num::Int(i),
            None => Num::Float(n.as_f64().unwrap_or(0.0)),
        }
    }

    fn json(self) -> Json {
        match self {
            Num::Int(i) => Json::from(i),
            Num::Float(f) => Json::from(f),
        }
    }

    /// Go's `float64(v)`.
    #[allow(clippy::cast_precision_loss)]
    fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

fn float_text(f: f64) -> String {
    crate::verify::gofmt::go_float(f)
}

/// `numberValidator.Validate`.
pub(super) fn number_check(schema: &Json, types: &[&str], path: &str, data: &Number) -> Found {
    let format = schema["format"].as_str().unwrap_or("");
    let (type_name, format) = match types {
        ["integer"] => (
            "integer",
            if matches!(format, "int32" | "int64") {
                format
            } else {
                ""
            },
        ),
        ["number"] => (
            "number",
            if matches!(format, "float" | "double") {
                format
            } else {
                ""
            },
        ),
        _ => ("", ""),
    };
    let data = Num::of(data);
    let mut result = Found::default();
    if let Some(why) = out_of_range(data, type_name, format, "Checked", path) {
        result.add(Error::other(why));
    }
    let mut multiple = Found::default();
    if let Some(factor) = schema["multipleOf"].as_f64() {
        match out_of_range(Num::Float(factor), type_name, format, "MultipleOf", path) {
            Some(why) => {
                multiple.add(Error::other(why));
                multiple
                    .errors
                    .extend(multiple_of(path, Num::Float(data.as_f64()), factor));
            }
            None => multiple.errors.extend(multiple_of(path, data, factor)),
        }
    }
    // The bound checked within the type's range, then the value against
    // it (as a float where the bound is out of the range).
    let bounded = |max: bool| {
        let mut found = Found::default();
        let (key, exclusive, prefix) = if max {
            ("maximum", "exclusiveMaximum", "Maximum boundary")
        } else {
            ("minimum", "exclusiveMinimum", "Minimum boundary")
        };
        if let Some(bound) = schema[key].as_f64() {
            let value = match out_of_range(Num::Float(bound), type_name, format, prefix, path) {
                Some(why) => {
                    found.add(Error::other(why));
                    Num::Float(data.as_f64())
                }
                None => data,
            };
            let exclusive = schema[exclusive] == true;
            found
                .errors
                .extend(beyond(path, value, bound, exclusive, max));
        }
        found
    };
    let (minimum, maximum) = (bounded(false), bounded(true));
    result.merge(multiple);
    result.merge(minimum);
    result.merge(maximum);
    result.count += 1;
    result
}

/// `MultipleOfNativeType`, or `MultipleOf` for a value made a float (the
/// factor cut to an `int64` as Go's conversion cuts it).
#[allow(clippy::cast_possible_truncation)]
fn multiple_of(path: &str, data: Num, factor: f64) -> Option<Error> {
    match data {
        Num::Int(value) => {
            let factor = factor as i64;
            if factor <= 0 {
                return Some(not_positive(path, &factor.to_string(), Json::from(factor)));
            }
            (value / factor * factor != value)
                .then(|| not_multiple(path, &factor.to_string(), data))
        }
        Num::Float(value) => {
            if factor <= 0.0 {
                return Some(not_positive(path, &float_text(factor), Json::from(factor)));
            }
            let times = if factor < 1.0 {
                1.0 / factor * value
            } else {
                value / factor
            };
            (!is_json_integer(times)).then(|| not_multiple(path, &float_text(factor), data))
        }
    }
}

fn not_positive(path: &str, factor: &str, value: Json) -> Error {
    let message = format!("factor MultipleOf declared for {path} must be positive: {factor}");
    Error::of(Code::Other, path, Some(value), message)
}

fn not_multiple(path: &str, factor: &str, data: Num) -> Error {
    let message = format!("{path} in body should be a multiple of {factor}");
    Error::of(Code::Other, path, Some(data.json()), message)
}

/// `MinimumNativeType` / `MaximumNativeType` (or, where the bound is out
/// of the type's range, `Minimum` / `Maximum` of the value made a float):
/// `value` beyond `bound`.
#[allow(clippy::cast_possible_truncation)]
fn beyond(path: &str, value: Num, bound: f64, exclusive: bool, max: bool) -> Option<Error> {
    let (outside, shown) = match value {
        Num::Int(v) => {
            let bound = bound as i64;
            let outside = match (max, exclusive) {
                (true, false) => v > bound,
                (true, true) => v >= bound,
                (false, false) => v < bound,
                (false, true) => v <= bound,
            };
            (outside, bound.to_string())
        }
        Num::Float(v) => {
            let outside = match (max, exclusive) {
                (true, false) => v > bound,
                (true, true) => v >= bound,
                (false, false) => v < bound,
                (false, true) => v <= bound,
            };
            (outside, float_text(bound))
        }
    };
    if !outside {
        return None;
    }
    let words = match (max, exclusive) {
        (true, false) => "less than or equal to",
        (true, true) => "less than",
        (false, false) => "greater than or equal to",
        (false, true) => "greater than",
    };
    let message = format!("{path} in body should be {words} {shown}");
    Some(Error::of(Code::Other, path, Some(value.json()), message))
}

/// `IsValueValidAgainstRange`: whether `value`, written as Go writes it,
/// parses as the schema's type and format; if not, the error's words.
fn out_of_range(
    value: Num,
    type_name: &str,
    format: &str,
    prefix: &str,
    path: &str,
) -> Option<String> {
    let text = match value {
        Num::Int(i) => i.to_string(),
        Num::Float(f) => format!("{f}"),
    };
    let fits = match (type_name, format) {
        ("integer", "int32") => text.parse::<i32>().is_ok(),
        ("integer", "uint32") => text.parse::<u32>().is_ok(),
        ("integer", "uint64") => text.parse::<u64>().is_ok(),
        ("integer", _) => text.parse::<i64>().is_ok(),
        (_, "float" | "float32") => text
            .parse::<f64>()
            .is_ok_and(|f| f.abs() <= f64::from(f32::MAX)),
        _ => true,
    };
    if fits {
        return None;
    }
    Some(if format.is_empty() {
        format!("{prefix} value must be of type {type_name} (default format) in {path}")
    } else {
        format!("{prefix} value must be of type {type_name} with format {format} in {path}")
    })
}
