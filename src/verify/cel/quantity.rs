//! Kubernetes' quantities as its CEL library reads them
//! (k8s.io/apiserver v0.36.3 `pkg/cel/library/quantity.go` over
//! k8s.io/apimachinery `pkg/api/resource/quantity.go`, `ParseQuantity`):
//! a decimal with a suffix (`m`, `k`, `Mi`, `e3` …), its value exact, as a
//! number of units over a power of ten.

use std::cmp::Ordering;

/// `resource.ParseQuantity`'s errors.
const FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const NUMERIC: &str = "unable to parse numeric part of quantity";
const SUFFIX: &str = "unable to parse quantity's suffix";

/// `units / 10^scale`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Quantity {
    units: i128,
    scale: u32,
}

/// The multiplier a suffix stands for: a power of ten, or of two.
enum Multiplier {
    Ten(i32),
    Two(u32),
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
        let body = text.strip_prefix(['+', '-']).unwrap_or(text);
        let negative = text.starts_with('-');
        let number_len = body
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(body.len());
        let (number, rest) = body.split_at(number_len);
        let suffix_ok = rest
            .trim_start_matches(|c: char| "eEinumkKMGTP".contains(c))
            .trim_start_matches(['+', '-'])
            .bytes()
            .all(|b| b.is_ascii_digit());
        if number.is_empty() || !suffix_ok || rest.matches(['+', '-']).count() > 1 {
            return Err(FORMAT_WRONG.to_owned());
        }
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if fraction.contains('.') || (whole.is_empty() && fraction.is_empty()) {
            return Err(NUMERIC.to_owned());
        }
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
        let mut scale = u32::try_from(fraction.len()).map_err(|_| too_large())?;
        match multiplier {
            Multiplier::Ten(e) if e >= 0 => {
                let e = e.unsigned_abs();
                let cancel = e.min(scale);
                scale -= cancel;
                units = pow10(e - cancel)
                    .and_then(|p| units.checked_mul(p))
                    .ok_or_else(too_large)?;
            }
            Multiplier::Ten(e) => scale += e.unsigned_abs(),
            Multiplier::Two(bits) => {
                units = units.checked_mul(1i128 << bits).ok_or_else(too_large)?;
            }
        }
        if scale > 36 {
            return Err(too_large());
        }
        if negative {
            units = -units;
        }
        Ok(Quantity { units, scale })
    }

    /// Both at one scale, where 128 bits hold them.
    fn aligned(self, other: Quantity) -> Option<(i128, i128, u32)> {
        let scale = self.scale.max(other.scale);
        let a = self.units.checked_mul(pow10(scale - self.scale)?)?;
        let b = other.units.checked_mul(pow10(scale - other.scale)?)?;
        Some((a, b, scale))
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
        let divisor = pow10(self.scale)?;
        if self.units % divisor != 0 {
            return None;
        }
        i64::try_from(self.units / divisor).ok()
    }

    pub(super) fn approximate(self) -> f64 {
        self.units as f64 / 10f64.powi(i32::try_from(self.scale).unwrap_or(i32::MAX))
    }
}
