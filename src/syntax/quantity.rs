//! Kubernetes quantities: `<signedNumber><suffix>`, where the suffix is a
//! binary SI suffix (`Ki Mi Gi Ti Pi Ei`), a decimal SI suffix
//! (`n u m "" k M G T P E`) or a decimal exponent (`e3`, `E-2`).

/// A quantity's value (approximate, for comparisons) and its suffix as written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quantity<'a> {
    pub value: f64,
    pub suffix: &'a str,
}

/// Why a string is not a quantity, and what the user probably meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantityError {
    pub reason: String,
    pub help: String,
}

const BINARY: [(&str, i32); 6] = [
    ("Ki", 10),
    ("Mi", 20),
    ("Gi", 30),
    ("Ti", 40),
    ("Pi", 50),
    ("Ei", 60),
];
const DECIMAL: [(&str, i32); 9] = [
    ("n", -9),
    ("u", -6),
    ("m", -3),
    ("", 0),
    ("k", 3),
    ("M", 6),
    ("G", 9),
    ("T", 12),
    ("P", 15),
];

pub fn parse(text: &str) -> Result<Quantity<'_>, QuantityError> {
    let generic_help =
        "write a number with an optional suffix: `500m`, `8`, `2Gi`, `100G`, `1e3`".to_owned();
    if text.contains(char::is_whitespace) {
        return Err(QuantityError {
            reason: format!("`{text}` contains a space"),
            help: spaced_help(text).unwrap_or(generic_help),
        });
    }
    let number_end = number_prefix_len(text);
    let (number, suffix) = text.split_at(number_end);
    let digits = number.trim_start_matches(['+', '-']);
    if digits.is_empty() || digits == "." || !digits.bytes().any(|b| b.is_ascii_digit()) {
        return Err(QuantityError {
            reason: format!("`{text}` does not start with a number"),
            help: generic_help,
        });
    }
    let base: f64 = number.parse().map_err(|_| QuantityError {
        reason: format!("`{number}` is not a number"),
        help: generic_help.clone(),
    })?;
    let scale = if let Some((_, power)) = BINARY.iter().find(|(s, _)| *s == suffix) {
        2f64.powi(*power)
    } else if let Some((_, power)) = DECIMAL.iter().find(|(s, _)| *s == suffix) {
        10f64.powi(*power)
    } else if suffix == "E" {
        1e18
    } else if let Some(exponent) = suffix
        .strip_prefix(['e', 'E'])
        .filter(|e| is_signed_integer(e))
    {
        // An exponent too long for an i32 is far past any bound below.
        10f64.powi(exponent.parse::<i32>().unwrap_or(i32::MAX).clamp(-400, 400))
    } else {
        return Err(QuantityError {
            reason: format!("`{suffix}` is not a Kubernetes quantity suffix"),
            help: suffix_help(number, suffix),
        });
    };
    let value = base * scale;
    // No resource comes near this (8Ei, the largest binary suffix, is about
    // 9.2 × 10^18); it also catches exponents too long to read, which would
    // otherwise pass as infinity.
    if !value.is_finite() || value.abs() > MAX_QUANTITY {
        return Err(QuantityError {
            reason: format!(
                "`{}` is far larger than any resource (more than 10^21)",
                crate::diagnostic::escape_for_terminal(text)
            ),
            help: generic_help,
        });
    }
    Ok(Quantity { value, suffix })
}

const MAX_QUANTITY: f64 = 1e21;

fn number_prefix_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut i = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
    while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
        i += 1;
    }
    i
}

fn is_signed_integer(text: &str) -> bool {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `2 cores` → `2`; `4 GB` → `4G` or `4Gi`; `4 Gi` → `4Gi`: a number and a
/// unit written apart.
fn spaced_help(text: &str) -> Option<String> {
    let text = text.trim();
    let number = &text[..number_prefix_len(text)];
    let unit = text[number.len()..].trim();
    if number.is_empty() || unit.contains(char::is_whitespace) {
        return None;
    }
    let cpu_words = ["core", "cores", "cpu", "cpus", "vcpu", "vcpus"];
    if cpu_words.contains(&unit.to_ascii_lowercase().as_str()) {
        return Some(format!("write `{number}`: CPUs are a plain number"));
    }
    let known = BINARY.iter().chain(&DECIMAL).any(|(s, _)| *s == unit);
    Some(if known {
        format!("write `{number}{unit}`, without the space")
    } else {
        suffix_help(number, unit)
    })
}

/// Suggests the spellings Kubernetes accepts for a familiar but wrong suffix:
/// `64GB` → `64G` or `64Gi`; `1gi` → `1Gi`; `2KiB` → `2Ki`.
fn suffix_help(number: &str, suffix: &str) -> String {
    let stem = suffix
        .trim_end_matches(['B', 'b'])
        .trim_end_matches(['i', 'I']);
    let letter = match stem.to_ascii_lowercase().as_str() {
        "k" | "kilo" => Some("k"),
        "m" | "mega" => Some("M"),
        "g" | "giga" => Some("G"),
        "t" | "tera" => Some("T"),
        "p" | "peta" => Some("P"),
        "e" | "exa" => Some("E"),
        _ => None,
    };
    match letter {
        Some(letter) => {
            let binary = if letter == "k" { "Ki".to_owned() } else { format!("{letter}i") };
            format!("write `{number}{letter}` (powers of 1000) or `{number}{binary}` (powers of 1024)")
        }
        None => "suffixes are `Ki Mi Gi Ti Pi Ei` (powers of 1024), `m k M G T P E` (powers of 1000) or an exponent such as `e3`".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_and_unit_written_apart_get_them_together() {
        let help = |text: &str| parse(text).unwrap_err().help;
        assert_eq!(help("2 cores"), "write `2`: CPUs are a plain number");
        assert_eq!(help("4 Gi"), "write `4Gi`, without the space");
        assert!(help("4 GB").starts_with("write `4G` (powers of 1000) or `4Gi`"));
        assert!(help("a b").starts_with("write a number"));
    }

    #[test]
    fn accepts_the_kubernetes_grammar() {
        for ok in [
            "1", "500m", "0.5", ".5", "1.", "2Gi", "100G", "1e3", "1E-2", "+3k", "8Ei", "3E",
            "250u", "10n",
        ] {
            assert!(parse(ok).is_ok(), "{ok}");
        }
        let close =
            |text: &str, expected: f64| (parse(text).unwrap().value - expected).abs() < 1e-9;
        assert!(close("2Gi", 2.0 * 1024.0 * 1024.0 * 1024.0));
        assert!(close("500m", 0.5));
        assert!(close("1e3", 1000.0));
    }

    #[test]
    fn rejects_and_explains() {
        for huge in [
            "1e99999999999999999999",
            "1e400",
            "1e22",
            "9999999999999999999999999",
        ] {
            assert!(parse(huge).is_err(), "{huge}");
        }
        let error = parse("64GB").unwrap_err();
        assert!(
            error.help.contains("`64G`") && error.help.contains("`64Gi`"),
            "{}",
            error.help
        );
        assert!(parse("1gi").unwrap_err().help.contains("`1Gi`"));
        assert!(parse("2KiB").unwrap_err().help.contains("`2Ki`"));
        for bad in ["", "Gi", "1 Gi", "1.2.3", "abc", "1e", "1x", "--1"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
