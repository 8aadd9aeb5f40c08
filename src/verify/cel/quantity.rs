//! Kubernetes' quantities as its CEL library reads them
//! (k8s.io/apiserver v0.36.3 `pkg/cel/library/quantity.go` over
//! k8s.io/apimachinery `pkg/api/resource/quantity.go`, `ParseQuantity`):
//! a decimal with a suffix (`m`, `k`, `Mi`, `e3` …), its value exact, as a
//! number of units over a power of ten.

use std::cmp::Ordering;

/// `resource.ParseQuantity`'s errors.
const FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const SUFFIX: &str = "unable to parse quantity's suffix";

/// `units / 10^scale`; a negative scale multiplies (`1e40` is 1 at -40).
#[derive(Debug, Clone, Copy)]
pub(super) struct Quantity {
    units: i128,
    scale: i32,
}

/// The multiplier a suffix stands for: a power of ten, or of two.
enum Multiplier {
    Ten(i32),
    Two(u32),
}

/// A quantity's text split as `parseQuantityString` splits it
/// (k8s.io/apimachinery `pkg/api/resource/quantity.go`): its sign, the
/// digits before the point (leading zeros dropped, "0" for none) and after
/// it, and its suffix; `None` where a character follows the suffix's
/// letters, sign and digits (`ErrFormatWrong`). A sign alone, or a point
/// alone, is 0, as there.
fn split(text: &str) -> Option<(bool, &str, &str, &str)> {
    let bytes = text.as_bytes();
    let digits_from = |from: usize| {
        bytes[from..]
            .iter()
            .position(|b| !b.is_ascii_digit())
            .map_or(bytes.len(), |n| from + n)
    };
    let mut pos = 0;
    let negative = bytes.first() == Some(&b'-');
    if matches!(bytes.first(), Some(b'-' | b'+')) {
        pos = 1;
    }
    while pos < bytes.len() && bytes[pos] == b'0' {
        pos += 1;
    }
    if pos == bytes.len() {
        return Some((negative, "0", "", ""));
    }
    let end = digits_from(pos);
    let num = if end == pos { "0" } else { &text[pos..end] };
    pos = end;
    let mut denom = "";
    if bytes.get(pos) == Some(&b'.') {
        let end = digits_from(pos + 1);
        denom = &text[pos + 1..end];
        pos = end;
    }
    let suffix_start = pos;
    while pos < bytes.len() && b"eEinumkKMGTP".contains(&bytes[pos]) {
        pos += 1;
    }
    if matches!(bytes.get(pos), Some(b'-' | b'+')) {
        pos += 1;
    }
    if digits_from(pos) != bytes.len() {
        return None;
    }
    Some((negative, num, denom, &text[suffix_start..]))
}

fn suffix(text: &str) -> Option<Multiplier> {
    Some(match text {
        "" => Multiplier::Ten(0),
        "n" => Multiplier::Ten(-9),
        "u" => Multiplier::Ten(-6),
        "m" => Multiplier::Ten(-3),
        "k" => Multiplier::Ten(3),
        "M" => Multiplier::Ten(6),
        "G" => Multiplier::Ten(9),
        "T" => Multiplier::Ten(12),
        "P" => Multiplier::Ten(15),
        "E" => Multiplier::Ten(18),
        "Ki" => Multiplier::Two(10),
        "Mi" => Multiplier::Two(20),
        "Gi" => Multiplier::Two(30),
        "Ti" => Multiplier::Two(40),
        "Pi" => Multiplier::Two(50),
        "Ei" => Multiplier::Two(60),
        _ => {
            let exponent = text.strip_prefix(['e', 'E'])?;
            let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Multiplier::Ten(exponent.parse().ok()?)
        }
    })
}

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

impl Quantity {
    pub(super) fn from_int(n: i64) -> Quantity {
        Quantity {
            units: i128::from(n),
            scale: 0,
        }
    }

    /// `ParseQuantity`, with its errors; a value past what 128 bits hold
    /// is an error of its own (the server's arbitrary precision goes on).
    pub(super) fn parse(text: &str) -> Result<Quantity, String> {
        if text.is_empty() {
            return Err(FORMAT_WRONG.to_owned());
        }
        let (negative, num, denom, rest) = split(text).ok_or_else(|| FORMAT_WRONG.to_owned())?;
        let (whole, fraction) = (num, denom);
        let Some(multiplier) = suffix(rest) else {
            return Err(SUFFIX.to_owned());
        };
        let too_large = || format!("quantity {text:?} is too large for trainc to compare exactly");
        let digits = format!("{whole}{fraction}");
        let digits = digits.trim_start_matches('0');
        let mut units: i128 = if digits.is_empty() {
            0
        } else {
            digits.parse().map_err(|_| too_large())?
        };
        let mut scale = i32::try_from(fraction.len()).map_err(|_| too_large())?;
        match multiplier {
            // A power of ten that 128 bits cannot multiply out stays a
            // scale: `9999999999999999999999999999999999999G` is a number,
            // not an int64 (`isInteger()` is false).
            Multiplier::Ten(e) => {
                scale = scale.checked_sub(e).ok_or_else(too_large)?;
                while scale < 0 {
                    let Some(more) = units.checked_mul(10) else {
                        break;
                    };
                    units = more;
                    scale += 1;
                }
            }
            Multiplier::Two(bits) => {
                units = units.checked_mul(1i128 << bits).ok_or_else(too_large)?;
            }
        }
        if !(-64..=36).contains(&scale) {
            return Err(too_large());
        }
        if negative {
            units = -units;
        }
        Ok(Quantity { units, scale })
    }

    /// Both at one scale, where 128 bits hold them.
    fn aligned(self, other: Quantity) -> Option<(i128, i128, i32)> {
        let scale = self.scale.max(other.scale);
        let up = |q: Quantity| {
            q.units
                .checked_mul(pow10((scale - q.scale).unsigned_abs())?)
        };
        Some((up(self)?, up(other)?, scale))
    }

    pub(super) fn compare(self, other: Quantity) -> Ordering {
        match self.aligned(other) {
            Some((a, b, _)) => a.cmp(&b),
            None => self
                .approximate()
                .partial_cmp(&other.approximate())
                .unwrap_or(Ordering::Equal),
        }
    }

    pub(super) fn add(self, other: Quantity) -> Option<Quantity> {
        let (a, b, scale) = self.aligned(other)?;
        Some(Quantity {
            units: a.checked_add(b)?,
            scale,
        })
    }

    pub(super) fn negated(self) -> Quantity {
        Quantity {
            units: -self.units,
            scale: self.scale,
        }
    }

    pub(super) fn sign(self) -> i64 {
        i64::from(self.units.signum() as i8)
    }

    /// `AsInt64`: the value where it is a whole number an int64 holds.
    pub(super) fn as_int(self) -> Option<i64> {
        let whole = if self.scale <= 0 {
            self.units.checked_mul(pow10(self.scale.unsigned_abs())?)?
        } else {
            let divisor = pow10(self.scale.unsigned_abs())?;
            if self.units % divisor != 0 {
                return None;
            }
            self.units / divisor
        };
        i64::try_from(whole).ok()
    }

    pub(super) fn approximate(self) -> f64 {
        self.units as f64 / 10f64.powi(self.scale)
    }
}
