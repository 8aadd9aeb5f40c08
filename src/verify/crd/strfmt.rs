//! The string formats a CRD's schema may name, as the API server checks
//! them: which it keeps (apiextensions-apiserver v0.36.3
//! `pkg/apiserver/validation/formats.go`, Kubernetes 1.36: a format it does
//! not support is ignored) and what each takes (kube-openapi
//! `pkg/validation/strfmt`, `default.go`, `date.go`, `time.go`, `bson.go`,
//! `kubernetes-extensions.go`, and its copy of govalidator).

use std::sync::OnceLock;

use regex::Regex;

/// The formats of a string (or untyped) schema the server keeps, as
/// strfmt names them (dashes dropped: `date-time` is `datetime`).
const SUPPORTED: &[&str] = &[
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
    "k8sshortname",
    "k8slongname",
];

fn normalized(format: &str) -> String {
    format.replace('-', "")
}

/// Whether the server keeps `format` on a string schema.
pub(super) fn supported(format: &str) -> bool {
    SUPPORTED.contains(&normalized(format).as_str())
}

/// Whether `text` is of `format` (one [`supported`]).
pub(super) fn valid(format: &str, text: &str) -> bool {
    match normalized(format).as_str() {
        "bsonobjectid" => text.len() == 24 && text.bytes().all(|b| b.is_ascii_hexdigit()),
        "uri" => crate::verify::cel::is_request_uri(text),
        "email" => is_email(text),
        "hostname" => is_hostname(text),
        "ipv4" => parse_ip_sloppy(text).is_some() && text.contains('.'),
        "ipv6" => parse_ip(text).is_some() && text.contains(':'),
        "cidr" => is_cidr(text),
        "mac" => is_mac(text),
        "uuid" => matches(&UUID[0], text),
        "uuid3" => matches(&UUID[1], text),
        "uuid4" => matches(&UUID[2], text),
        "uuid5" => matches(&UUID[3], text),
        "isbn" => is_isbn(text, 10) || is_isbn(text, 13),
        "isbn10" => is_isbn(text, 10),
        "isbn13" => is_isbn(text, 13),
        "creditcard" => is_credit_card(text),
        "ssn" => text.len() == 11 && matches(&SSN, text),
        "hexcolor" => matches(&HEXCOLOR, text),
        "rgbcolor" => matches(&RGBCOLOR, text),
        "byte" => matches(&BASE64, text),
        "date" => is_date(text),
        "duration" => crate::verify::cel::is_openapi_duration(text),
        "datetime" => is_date_time(text),
        "k8sshortname" => text.len() <= 63 && matches(&SHORT_NAME, text),
        "k8slongname" => text.len() <= 253 && matches(&LONG_NAME, text),
        // `password`, any text.
        _ => true,
    }
}

/// A pattern compiled once.
struct Pattern(&'static str, OnceLock<Regex>);

impl Pattern {
    const fn new(pattern: &'static str) -> Pattern {
        Pattern(pattern, OnceLock::new())
    }
}

fn matches(pattern: &Pattern, text: &str) -> bool {
    pattern
        .1
        .get_or_init(|| Regex::new(pattern.0).expect("a format's pattern compiles"))
        .is_match(text)
}

static UUID: [Pattern; 4] = [
    Pattern::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"),
    Pattern::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$"),
    Pattern::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"),
    Pattern::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"),
];
static SSN: Pattern = Pattern::new(r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$");
static HEXCOLOR: Pattern = Pattern::new(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$");
static RGBCOLOR: Pattern = Pattern::new(
    r"^rgb\(\s*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])\s*,\s*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])\s*,\s*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])\s*\)$",
);
static BASE64: Pattern = Pattern::new(
    r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$",
);
static SHORT_NAME: Pattern = Pattern::new(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
static LONG_NAME: Pattern =
    Pattern::new(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$");
static HOSTNAME: Pattern = Pattern::new(
    r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
);
static CREDIT_CARD: Pattern = Pattern::new(
    r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$",
);
static DATE_TIME: Pattern =
    Pattern::new(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$");

fn is_hostname(text: &str) -> bool {
    matches(&HOSTNAME, text) && text.len() <= 255 && text.split('.').all(|p| p.len() <= 63)
}

/// `time.Parse("2006-01-02", text)`.
fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let number = |s: &[u8]| -> Option<u32> {
        s.iter()
            .all(u8::is_ascii_digit)
            .then(|| s.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
    };
    let (Some(year), Some(month), Some(day)) = (number(&b[..4]), number(&b[5..7]), number(&b[8..]))
    else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// strfmt's `IsDateTime`: a date, a `t` (either case), and a time of day
/// with a zone, its hours, minutes and seconds compared as text.
fn is_date_time(text: &str) -> bool {
    if text.len() < 4 {
        return false;
    }
    let lower = text.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    let Some(found) = DATE_TIME
        .1
        .get_or_init(|| Regex::new(DATE_TIME.0).expect("compiles"))
        .captures(parts[1])
    else {
        return false;
    };
    &found[1] <= "23" && &found[2] <= "59" && &found[3] <= "59"
}

/// Go's `net.ParseIP`: a dotted IPv4 address or an IPv6 address.
fn parse_ip(text: &str) -> Option<std::net::IpAddr> {
    text.parse().ok()
}

/// k8s.io/utils `ParseIPSloppy`: as [`parse_ip`], an IPv4 part's leading
/// zeros allowed (and read as decimal).
fn parse_ip_sloppy(text: &str) -> Option<std::net::IpAddr> {
    if !text.contains(':') {
        let parts: Vec<&str> = text.split('.').collect();
        let ok = parts.len() == 4
            && parts.iter().all(|p| {
                !p.is_empty()
                    && p.bytes().all(|b| b.is_ascii_digit())
                    && p.parse::<u32>().is_ok_and(|n| n <= 255)
            });
        if !ok {
            return None;
        }
        let octets: Vec<u8> = parts.iter().filter_map(|p| p.parse().ok()).collect();
        return Some(std::net::IpAddr::from([
            octets[0], octets[1], octets[2], octets[3],
        ]));
    }
    parse_ip(text)
}

/// k8s.io/utils `ParseCIDRSloppy`: an address, `/`, a prefix length within
/// its bits.
fn is_cidr(text: &str) -> bool {
    let Some((addr, bits)) = text.split_once('/') else {
        return false;
    };
    let Some(addr) = parse_ip_sloppy(addr) else {
        return false;
    };
    let most = if addr.is_ipv4() { 32 } else { 128 };
    !bits.is_empty()
        && bits.len() <= 3
        && bits.bytes().all(|b| b.is_ascii_digit())
        && bits.parse::<u32>().is_ok_and(|n| n <= most)
}

/// Go's `net.ParseMAC`: 6, 8 or 20 octets, as `xx:xx…`, `xx-xx…`,
/// `xxxx.xxxx…` or bare hex.
fn is_mac(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() < 12 {
        return false;
    }
    let hex2 = |s: &[u8]| s.len() == 2 && s.iter().all(u8::is_ascii_hexdigit);
    let count_ok = |n: usize| matches!(n, 6 | 8 | 20);
    if b[2] == b':' || b[2] == b'-' {
        let sep = b[2];
        if !(b.len() + 1).is_multiple_of(3) || !count_ok(b.len().div_ceil(3)) {
            return false;
        }
        b.chunks(3)
            .all(|group| hex2(&group[..2]) && group.get(2).is_none_or(|s| *s == sep))
    } else if b[4] == b'.' {
        if !(b.len() + 1).is_multiple_of(5) || !count_ok(2 * (b.len() + 1) / 5) {
            return false;
        }
        b.chunks(5).all(|group| {
            group.len() >= 4
                && hex2(&group[..2])
                && hex2(&group[2..4])
                && group.get(4).is_none_or(|s| *s == b'.')
        })
    } else {
        b.len().is_multiple_of(2) && count_ok(b.len() / 2) && b.chunks(2).all(hex2)
    }
}

/// govalidator's `IsISBN`: spaces and dashes dropped, the digits' checksum.
fn is_isbn(text: &str, version: usize) -> bool {
    let digits: Vec<u8> = text
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'-')
        .collect();
    let value = |d: u8| i32::from(d) - i32::from(b'0');
    if version == 10 {
        let shaped = digits.len() == 10
            && digits[..9].iter().all(u8::is_ascii_digit)
            && (digits[9].is_ascii_digit() || digits[9] == b'X');
        if !shaped {
            return false;
        }
        let mut sum: i32 = (1..).zip(&digits[..9]).map(|(w, d)| w * value(*d)).sum();
        sum += 10
            * if digits[9] == b'X' {
                10
            } else {
                value(digits[9])
            };
        sum % 11 == 0
    } else {
        if digits.len() != 13 || !digits.iter().all(u8::is_ascii_digit) {
            return false;
        }
        let sum: i32 = (0..12)
            .map(|i| if i % 2 == 0 { 1 } else { 3 } * value(digits[i]))
            .sum();
        value(digits[12]) - (10 - sum % 10) % 10 == 0
    }
}

/// govalidator's `IsCreditCard`: the digits (all else dropped) of a known
/// issuer's shape, and Luhn's checksum.
fn is_credit_card(text: &str) -> bool {
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    if !matches(&CREDIT_CARD, &digits) {
        return false;
    }
    let mut sum = 0;
    for (n, d) in digits.bytes().rev().enumerate() {
        let d = u32::from(d - b'0');
        sum += if n % 2 == 1 {
            if d * 2 >= 10 { d * 2 % 10 + 1 } else { d * 2 }
        } else {
            d
        };
    }
    sum % 10 == 0
}

/// Go's `net/mail.ParseAddress`, for the forms addresses take: `local@domain`
/// or `Name <local@domain>`, the local part a dot-atom or a quoted
/// string, the domain a dot-atom or a `[literal]`.
fn is_email(text: &str) -> bool {
    let text = text.trim();
    let address = match text.strip_suffix('>').and_then(|t| t.rsplit_once('<')) {
        Some((_name, inner)) => inner,
        None => text,
    };
    let Some((local, domain)) = address.rsplit_once('@') else {
        return false;
    };
    let atext = |c: char| c.is_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c) || !c.is_ascii();
    let dot_atom =
        |s: &str| !s.is_empty() && s.split('.').all(|a| !a.is_empty() && a.chars().all(atext));
    let quoted = |s: &str| s.len() >= 2 && s.starts_with('"') && s.ends_with('"');
    let literal = |s: &str| s.starts_with('[') && s.ends_with(']');
    (dot_atom(local) || quoted(local)) && (dot_atom(domain) || literal(domain))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_take_what_strfmt_takes() {
        assert!(supported("date-time") && supported("k8s-short-name") && !supported("int32"));
        for (format, good, bad) in [
            ("date", "2024-02-29", "2023-02-29"),
            (
                "datetime",
                "2014-12-15T19:30:20.000Z",
                "2014-12-15T24:30:20Z",
            ),
            ("ipv4", "010.0.0.1", "1.2.3"),
            ("ipv6", "::1", "1.2.3.4"),
            ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
            ("mac", "01:23:45:67:89:ab", "01:23:45:67:89"),
            ("mac", "0123.4567.89ab", "0123.4567.89a"),
            ("uuid", "123e4567-E89B-12d3-a456-426614174000", "123e4567"),
            ("isbn10", "0-321-75104-3", "0321751044"),
            ("isbn13", "978-0321751041", "9780321751042"),
            ("creditcard", "4111 1111 1111 1111", "4111 1111 1111 1112"),
            ("ssn", "123-45-6789", "123456789"),
            ("hexcolor", "#ffF", "#ff"),
            ("rgbcolor", "rgb(255, 0,1)", "rgb(256,0,0)"),
            ("byte", "aGk=", ""),
            (
                "bsonobjectid",
                "507f1f77bcf86cd799439011",
                "507f1f77bcf86cd79943901",
            ),
            ("hostname", "a.example.com", "-a"),
            ("email", "Ann <ann@example.com>", "ann.example.com"),
            ("uri", "https://example.com/x", "example.com/x"),
            ("k8s-short-name", "a-b", "a-"),
            ("k8s-long-name", "a.b-c", "a.-"),
        ] {
            assert!(valid(format, good), "{format} {good}");
            assert!(!valid(format, bad), "{format} {bad}");
        }
    }
}
