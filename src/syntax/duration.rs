//! Durations: integer seconds, or `<n>d<n>h<n>m<n>s` with each unit at most once,
//! largest first (`90s`, `15m`, `1h30m`, `2d`).

pub fn parse_seconds(text: &str) -> Result<u64, String> {
    if text.is_empty() {
        return Err("a duration cannot be empty".to_owned());
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse().map_err(|_| format!("`{text}` is too large"));
    }
    let mut total: u64 = 0;
    let mut rest = text;
    let mut allowed = &["d", "h", "m", "s"][..];
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(format!("`{text}` is not a duration"));
        }
        let (number, after) = rest.split_at(digits);
        let unit_len = after.bytes().take_while(u8::is_ascii_alphabetic).count();
        let unit = &after[..unit_len];
        let Some(position) = allowed.iter().position(|u| *u == unit) else {
            return Err(if after.starts_with('.') {
                format!("`{text}` has a fraction; durations use whole units (`1h30m`, not `1.5h`)")
            } else if unit.is_empty() {
                format!(
                    "`{text}` has `{}` where a unit (`d`, `h`, `m`, `s`) belongs",
                    after.chars().next().unwrap_or(' ')
                )
            } else if ["d", "h", "m", "s"].contains(&unit) {
                format!("`{text}` repeats or misorders its units")
            } else {
                format!("`{unit}` is not a duration unit")
            });
        };
        allowed = &allowed[position + 1..];
        let factor = match unit {
            "d" => 86_400,
            "h" => 3_600,
            "m" => 60,
            _ => 1,
        };
        let value: u64 = number
            .parse()
            .map_err(|_| format!("`{text}` is too large"))?;
        total = value
            .checked_mul(factor)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(|| format!("`{text}` is too large"))?;
        rest = &after[unit_len..];
    }
    Ok(total)
}

/// Seconds as a person reads them at a glance: `68 years`, `3 days`, `90 seconds`.
pub fn approximate(seconds: u64) -> String {
    const UNITS: [(u64, &str); 5] = [
        (365 * 86_400, "year"),
        (86_400, "day"),
        (3_600, "hour"),
        (60, "minute"),
        (1, "second"),
    ];
    let (size, unit) = UNITS
        .into_iter()
        .find(|(size, _)| seconds >= *size)
        .unwrap_or((1, "second"));
    let count = seconds / size;
    format!("about {count} {unit}{}", if count == 1 { "" } else { "s" })
}

/// Seconds written exactly, as a spec writes a duration: `1h30m`, `2d`, `45s`.
pub fn written(seconds: u64) -> String {
    let parts = [
        (seconds / 86_400, 'd'),
        (seconds / 3_600 % 24, 'h'),
        (seconds / 60 % 60, 'm'),
        (seconds % 60, 's'),
    ];
    let mut out = String::new();
    for (n, unit) in parts.into_iter().filter(|(n, _)| *n > 0) {
        out.push_str(&n.to_string());
        out.push(unit);
    }
    if out.is_empty() { "0s".to_owned() } else { out }
}

/// The help line for a bad duration.
pub const HELP: &str = "write whole units largest first, such as `90s`, `15m`, `1h30m` or `2d`, or a number of seconds";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_written_back_exactly() {
        for (seconds, text) in [
            (3600, "1h"),
            (5400, "1h30m"),
            (45, "45s"),
            (0, "0s"),
            (90_061, "1d1h1m1s"),
        ] {
            assert_eq!(written(seconds), text);
            assert_eq!(parse_seconds(text), Ok(seconds));
        }
    }

    #[test]
    fn parses_units() {
        assert_eq!(parse_seconds("90s"), Ok(90));
        assert_eq!(parse_seconds("1h30m"), Ok(5400));
        assert_eq!(parse_seconds("2d"), Ok(172_800));
        assert_eq!(parse_seconds("3600"), Ok(3600));
        for bad in [
            "",
            "1.5h",
            "30min",
            "1m1h",
            "1h1h",
            "h",
            "10 m",
            "-1s",
            "99999999999999999999d",
        ] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn approximations_name_the_largest_unit() {
        assert_eq!(approximate(2_147_483_647), "about 68 years");
        assert_eq!(approximate(90), "about 1 minute");
        assert_eq!(approximate(1), "about 1 second");
    }
}
