//! CEL's durations and timestamps as cel-go v0.26.0 has them
//! (`common/types/duration.go`, `timestamp.go`): a duration is Go's
//! `time.Duration` (nanoseconds in an int64), written as Go's
//! `time.ParseDuration` reads it; a timestamp is a UTC instant from year 1
//! to 9999, written as RFC 3339. Time zones are UTC and fixed offsets
//! (`+05:30`): the IANA database is a file on the machine, which trainc
//! does not read, so a rule naming a zone is reported, not guessed.

use std::fmt::Write as _;

/// Nanoseconds, as Go's `time.Duration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct Duration(pub i64);

/// Seconds since the Unix epoch and nanoseconds within the second; and
/// the offset it was written with, which only `string()` shows (Go's
/// `time.Time` keeps its zone), never a comparison.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timestamp {
    pub seconds: i64,
    pub nanos: u32,
    pub offset: i32,
}

impl PartialEq for Timestamp {
    fn eq(&self, other: &Timestamp) -> bool {
        (self.seconds, self.nanos) == (other.seconds, other.nanos)
    }
}

impl Eq for Timestamp {}

impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Timestamp) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Timestamp {
    fn cmp(&self, other: &Timestamp) -> std::cmp::Ordering {
        (self.seconds, self.nanos).cmp(&(other.seconds, other.nanos))
    }
}

/// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, in Unix seconds.
const MIN_SECONDS: i64 = -62_135_596_800;
const MAX_SECONDS: i64 = 253_402_300_799;

const NANOS: i64 = 1_000_000_000;

impl Duration {
    /// A `format: duration` string as kube-openapi reads it (`strfmt.
    /// ParseDuration`, the format's check and the value rules see): Go's
    /// `time.ParseDuration`, else every number followed by a unit anywhere
    /// in the text, summed (`3 days`, `1hr 30min`), a unit matched whole
    /// or by its longest name's start (`seconds`); the error as it words
    /// it where no unit matched.
    pub(super) fn parse_openapi(text: &str) -> Result<Duration, String> {
        const UNITS: [(&[&str], i64); 8] = [
            (&["ns", "nano"], 1),
            (&["us", "µs", "micro"], 1_000),
            (&["ms", "milli"], 1_000_000),
            (&["s", "sec"], 1_000_000_000),
            (&["m", "min"], 60_000_000_000),
            (&["h", "hr", "hour"], 3_600_000_000_000),
            (&["d", "day"], 86_400_000_000_000),
            (&["w", "wk", "week"], 604_800_000_000_000),
        ];
        if let Some(d) = Duration::parse(text) {
            return Ok(d);
        }
        let chars: Vec<char> = text.chars().collect();
        let (mut total, mut found, mut i) = (0i64, false, 0);
        while i < chars.len() {
            if !chars[i].is_ascii_digit() {
                i += 1;
                continue;
            }
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let mut j = i;
            while j < chars.len() && matches!(chars[j], ' ' | '\t' | '\n' | '\r' | '\x0c') {
                j += 1;
            }
            let unit_start = j;
            while j < chars.len() && (chars[j].is_ascii_alphabetic() || chars[j] == 'µ') {
                j += 1;
            }
            if j == unit_start {
                continue;
            }
            let digits: String = chars[start..i].iter().collect();
            let factor: i64 = digits
                .parse()
                .map_err(|_| format!("strconv.Atoi: parsing {digits:?}: value out of range"))?;
            let unit = chars[unit_start..j]
                .iter()
                .collect::<String>()
                .to_lowercase();
            for (names, nanos) in UNITS {
                for (n, name) in names.iter().enumerate() {
                    if (n == names.len() - 1 && unit.starts_with(name)) || unit == *name {
                        found = true;
                        total = total.wrapping_add(factor.wrapping_mul(nanos));
                    }
                }
            }
            i = j;
        }
        if found {
            Ok(Duration(total))
        } else {
            Err(format!("unable to parse {text} as duration"))
        }
    }

    /// Go's `time.ParseDuration`: `[-+]` then numbers with units (`ns`,
    /// `us`, `µs`, `ms`, `s`, `m`, `h`), or `0`.
    pub(super) fn parse(text: &str) -> Option<Duration> {
        let (negative, mut rest) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        if rest == "0" {
            return Some(Duration(0));
        }
        if rest.is_empty() {
            return None;
        }
        let mut total: u128 = 0;
        while !rest.is_empty() {
            let digits = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            let whole = &rest[..digits];
            rest = &rest[digits..];
            let mut fraction = "";
            if let Some(after) = rest.strip_prefix('.') {
                let n = after
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(after.len());
                fraction = &after[..n];
                rest = &after[n..];
            }
            if whole.is_empty() && fraction.is_empty() {
                return None;
            }
            let unit_len = rest
                .find(|c: char| c == '.' || c.is_ascii_digit())
                .unwrap_or(rest.len());
            let scale: u128 = match &rest[..unit_len] {
                "ns" => 1,
                "us" | "µs" | "μs" => 1_000,
                "ms" => 1_000_000,
                "s" => 1_000_000_000,
                "m" => 60_000_000_000,
                "h" => 3_600_000_000_000,
                _ => return None,
            };
            rest = &rest[unit_len..];
            let whole: u128 = if whole.is_empty() {
                0
            } else {
                whole.parse().ok()?
            };
            let mut value = whole.checked_mul(scale)?;
            let mut place = scale;
            for digit in fraction.bytes() {
                place /= 10;
                value += u128::from(digit - b'0') * place;
                if place == 0 {
                    break;
                }
            }
            total = total.checked_add(value)?;
            if total > 1 << 63 {
                return None;
            }
        }
        let total = i128::try_from(total).ok()?;
        let signed = if negative { -total } else { total };
        i64::try_from(signed).ok().map(Duration)
    }

    /// As `string(duration)` writes it: seconds, with a fraction where
    /// there is one, and `s`.
    pub(super) fn text(self) -> String {
        let seconds = self.0 / NANOS;
        let nanos = (self.0 % NANOS).unsigned_abs();
        let mut out = String::new();
        if self.0 < 0 && seconds == 0 {
            out.push('-');
        }
        let _ = write!(out, "{seconds}");
        if nanos != 0 {
            let fraction = format!("{nanos:09}");
            let _ = write!(out, ".{}", fraction.trim_end_matches('0'));
        }
        out.push('s');
        out
    }
}

impl Timestamp {
    pub(super) fn new(seconds: i64, nanos: u32) -> Option<Timestamp> {
        (MIN_SECONDS..=MAX_SECONDS)
            .contains(&seconds)
            .then_some(Timestamp {
                seconds,
                nanos,
                offset: 0,
            })
    }

    /// RFC 3339 as cel-go's `timestamp()` reads it: date, `T`, time,
    /// optional fraction, and `Z` or an offset.
    pub(super) fn parse(text: &str) -> Option<Timestamp> {
        let bytes = text.as_bytes();
        if bytes.len() < 20
            || bytes[4] != b'-'
            || bytes[7] != b'-'
            || !matches!(bytes[10], b'T' | b't')
        {
            return None;
        }
        let (date, time) = (&text[..10], &text[11..]);
        let (days, _) = date_days(date)?;
        let number = |s: &str| -> Option<i64> {
            (s.len() == 2 && s.bytes().all(|c| c.is_ascii_digit()))
                .then(|| s.parse().ok())
                .flatten()
        };
        if time.len() < 8 || &time[2..3] != ":" || &time[5..6] != ":" {
            return None;
        }
        let (h, m, s) = (
            number(&time[..2])?,
            number(&time[3..5])?,
            number(&time[6..8])?,
        );
        if h > 23 || m > 59 || s > 59 {
            return None;
        }
        let mut rest = &time[8..];
        let mut nanos: u32 = 0;
        if let Some(after) = rest.strip_prefix('.') {
            let n = after
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(after.len());
            if n == 0 || n > 9 {
                return None;
            }
            nanos = format!("{:0<9}", &after[..n]).parse().ok()?;
            rest = &after[n..];
        }
        let offset = zone_offset(rest)?;
        let seconds = days * 86_400 + h * 3_600 + m * 60 + s - offset;
        Timestamp::new(seconds, nanos).map(|t| Timestamp {
            offset: i32::try_from(offset).unwrap_or(0),
            ..t
        })
    }

    /// `format: date`: midnight UTC of the day.
    pub(super) fn parse_date(text: &str) -> Option<Timestamp> {
        let (days, rest) = date_days(text)?;
        rest.is_empty()
            .then(|| Timestamp::new(days * 86_400, 0))
            .flatten()
    }

    /// RFC 3339 at its offset with as many fraction digits as needed
    /// (Go's `time.RFC3339Nano`).
    pub(super) fn text(self) -> String {
        let fields = self.fields(i64::from(self.offset));
        let mut out = format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            fields.year, fields.month, fields.day, fields.hour, fields.minute, fields.second
        );
        if self.nanos != 0 {
            let fraction = format!("{:09}", self.nanos);
            let _ = write!(out, ".{}", fraction.trim_end_matches('0'));
        }
        if self.offset == 0 {
            out.push('Z');
        } else {
            let minutes = self.offset.abs() / 60;
            let sign = if self.offset < 0 { '-' } else { '+' };
            let _ = write!(out, "{sign}{:02}:{:02}", minutes / 60, minutes % 60);
        }
        out
    }

    pub(super) fn add(self, d: Duration) -> Option<Timestamp> {
        let total =
            i128::from(self.seconds) * i128::from(NANOS) + i128::from(self.nanos) + i128::from(d.0);
        let seconds = i64::try_from(total.div_euclid(i128::from(NANOS))).ok()?;
        let nanos = u32::try_from(total.rem_euclid(i128::from(NANOS))).ok()?;
        Timestamp::new(seconds, nanos).map(|t| Timestamp {
            offset: self.offset,
            ..t
        })
    }

    pub(super) fn since(self, other: Timestamp) -> Option<Duration> {
        let a = i128::from(self.seconds) * i128::from(NANOS) + i128::from(self.nanos);
        let b = i128::from(other.seconds) * i128::from(NANOS) + i128::from(other.nanos);
        i64::try_from(a - b).ok().map(Duration)
    }

    /// The civil fields of the instant at `offset` seconds east of UTC.
    pub(super) fn fields(self, offset: i64) -> Fields {
        let local = self.seconds + offset;
        let days = local.div_euclid(86_400);
        let second_of_day = local.rem_euclid(86_400);
        let (year, month, day) = civil(days);
        let year_start = days_from_civil(year, 1, 1);
        Fields {
            year,
            month,
            day,
            hour: second_of_day / 3_600,
            minute: second_of_day % 3_600 / 60,
            second: second_of_day % 60,
            millis: i64::from(self.nanos / 1_000_000),
            day_of_year: days - year_start,
            // 1970-01-01 was a Thursday (4).
            weekday: (days + 4).rem_euclid(7),
        }
    }
}

pub(super) struct Fields {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
    pub millis: i64,
    pub day_of_year: i64,
    pub weekday: i64,
}

/// `Z` or `±hh:mm` as seconds east of UTC.
fn zone_offset(text: &str) -> Option<i64> {
    if text == "Z" || text == "z" {
        return Some(0);
    }
    let b = text.as_bytes();
    if b.len() != 6 || !matches!(b[0], b'+' | b'-') || b[3] != b':' {
        return None;
    }
    let h: i64 = text[1..3].parse().ok()?;
    let m: i64 = text[4..6].parse().ok()?;
    if h > 23 || m > 59 {
        return None;
    }
    let offset = h * 3_600 + m * 60;
    Some(if b[0] == b'-' { -offset } else { offset })
}

/// A time zone argument (`getHours('+05:30')`): seconds east of UTC, or
/// `None` for a zone name that is not UTC.
pub(super) fn zone(text: &str) -> Option<i64> {
    if text == "UTC" {
        return Some(0);
    }
    let (sign, rest) = match text.as_bytes().first() {
        Some(b'-') => (-1, &text[1..]),
        Some(b'+') => (1, &text[1..]),
        Some(b'0'..=b'9') => (1, text),
        _ => return None,
    };
    let (h, m) = rest.split_once(':')?;
    let h: i64 = h.parse().ok()?;
    let m: i64 = m.parse().ok()?;
    Some(sign * (h * 3_600 + m * 60))
}

/// `YYYY-MM-DD` at the start of `text`: days since the epoch, and the rest.
fn date_days(text: &str) -> Option<(i64, &str)> {
    let b = text.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let digits = |s: &str| s.bytes().all(|c| c.is_ascii_digit());
    let (y, m, d) = (&text[..4], &text[5..7], &text[8..10]);
    if !digits(y) || !digits(m) || !digits(d) {
        return None;
    }
    let (y, m, d): (i64, i64, i64) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    if !(1..=12).contains(&m) || d < 1 || d > month_days(y, m) {
        return None;
    }
    Some((days_from_civil(y, m, d), &text[10..]))
}

fn month_days(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
