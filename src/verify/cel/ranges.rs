//! The ranges cel-go estimates sizes and costs in (`checker/cost.go`,
//! `SizeEstimate`, `CostEstimate`): from a least to a most, their sums and
//! products stopping at `u64::MAX`, a factor rounded up.

/// A range of sizes or of costs, as cel-go keeps both (`SizeEstimate`,
/// `CostEstimate`): sums and products stop at `u64::MAX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Range {
    pub min: u64,
    pub max: u64,
}

/// A size nothing bounds.
pub(super) const UNKNOWN: Range = Range {
    min: 0,
    max: u64::MAX,
};

impl Range {
    pub(super) const fn fixed(n: u64) -> Range {
        Range { min: n, max: n }
    }

    pub(super) fn add(self, other: Range) -> Range {
        Range {
            min: self.min.saturating_add(other.min),
            max: self.max.saturating_add(other.max),
        }
    }

    pub(super) fn times(self, other: Range) -> Range {
        Range {
            min: self.min.saturating_mul(other.min),
            max: self.max.saturating_mul(other.max),
        }
    }

    /// Each end multiplied by `factor`, rounded up (`MultiplyByCostFactor`).
    pub(super) fn factor(self, factor: f64) -> Range {
        Range {
            min: by_factor(self.min, factor),
            max: by_factor(self.max, factor),
        }
    }

    pub(super) fn union(self, other: Range) -> Range {
        Range {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }
}

/// `multiplyByCostFactor`: `x * y` rounded up, `u64::MAX` past it.
fn by_factor(x: u64, y: f64) -> u64 {
    const TWO_TO_64: f64 = 18_446_744_073_709_551_616.0;
    let xf = x as f64;
    if xf > 0.0 && y > 0.0 && xf > TWO_TO_64 / y {
        return u64::MAX;
    }
    let ceil = (xf * y).ceil();
    if ceil >= TWO_TO_64 {
        return u64::MAX;
    }
    ceil as u64
}
