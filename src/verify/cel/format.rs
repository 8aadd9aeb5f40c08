//! Kubernetes' format library (k8s.io/apiserver v0.36.3
//! `pkg/cel/library/format.go`): named formats whose `validate` gives the
//! API machinery's own error messages (k8s.io/apimachinery v0.36.3
//! `pkg/util/validation/validation.go` and `pkg/api/validate/content/`,
//! which word a length in characters and in bytes respectively).

use std::fmt::Write as _;

use crate::syntax::names::{is_key_shaped, is_label_shaped};

use super::time::Timestamp;
use super::url::Url;

/// The formats `format.named` knows, by name.
pub(super) const NAMES: &[&str] = &[
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

/// The format of that name, as `format.named` finds it.
pub(super) fn named(name: &str) -> Option<&'static str> {
    NAMES.iter().find(|n| **n == name).copied()
}

const LABEL: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const SUBDOMAIN: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const KEY: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const KEY_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const VALUE: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// `RegexError`.
fn regex_error(message: &str, pattern: &str, examples: &[&str]) -> String {
    let mut out = message.to_owned();
    if !examples.is_empty() {
        out.push_str(" (e.g. ");
        for (i, e) in examples.iter().enumerate() {
            if i > 0 {
                out.push_str(" or ");
            }
            let _ = write!(out, "'{e}', ");
        }
        let _ = write!(out, "regex used for validation is '{pattern}')");
        return out;
    }
    format!("{out} (regex used for validation is '{pattern}')")
}

fn is_label(s: &str) -> bool {
    is_label_shaped(s, false)
}

fn is_subdomain(s: &str) -> bool {
    s.split('.').all(is_label)
}

fn dns1123_label(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > 63 {
        errors.push("must be no more than 63 characters".to_owned());
    }
    if !is_label(s) {
        errors.push(if is_subdomain(s) {
            "must not contain dots".to_owned()
        } else {
            regex_error(LABEL_MSG, LABEL, &["my-name", "123-abc"])
        });
    }
    errors
}

/// `IsDNS1123Subdomain`, its length in `unit` (`characters` or `bytes`).
fn dns1123_subdomain(s: &str, unit: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > 253 {
        errors.push(format!("must be no more than 253 {unit}"));
    }
    if !is_subdomain(s) {
        errors.push(regex_error(SUBDOMAIN_MSG, SUBDOMAIN, &["example.com"]));
    }
    errors
}

fn dns1035_label(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > 63 {
        errors.push("must be no more than 63 characters".to_owned());
    }
    if !is_label_shaped(s, true) {
        errors.push(regex_error(DNS1035_MSG, DNS1035, &["my-name", "abc-123"]));
    }
    errors
}

/// `content.IsLabelKey` (a qualified name).
fn qualified_name(s: &str) -> Vec<String> {
    let parts: Vec<&str> = s.split('/').collect();
    let mut errors = Vec::new();
    let name = match parts[..] {
        [name] => name,
        [prefix, name] => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_owned());
            } else {
                errors.extend(
                    dns1123_subdomain(prefix, "bytes")
                        .into_iter()
                        .map(|e| format!("prefix part {e}")),
                );
            }
            name
        }
        _ => {
            return vec![format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(KEY_MSG, KEY, &["MyName", "my.name", "123-abc"])
            )];
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errors.push("name part must be no more than 63 bytes".to_owned());
    }
    if !is_key_shaped(name) {
        errors.push(format!(
            "name part {}",
            regex_error(KEY_MSG, KEY, &["MyName", "my.name", "123-abc"])
        ));
    }
    errors
}

fn label_value(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > 63 {
        errors.push("must be no more than 63 bytes".to_owned());
    }
    if !s.is_empty() && !is_key_shaped(s) {
        errors.push(regex_error(
            VALUE_MSG,
            VALUE,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errors
}

/// `maskTrailingDash`: a generated name's prefix may end in `-`.
fn masked(s: &str) -> String {
    if s.len() > 1 && s.ends_with('-') {
        return format!("{}a", &s[..s.len() - 2]);
    }
    s.to_owned()
}

/// strfmt's `UUIDPattern`, whose length the cost estimate takes.
pub(super) const UUID_PATTERN: &str =
    "(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$";
/// strfmt's `DateTimePattern`, likewise.
pub(super) const DATE_TIME_PATTERN: &str =
    "^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$";

fn uuid(s: &str) -> bool {
    let mut rest = s;
    for (n, group) in [8, 4, 4, 4, 12].into_iter().enumerate() {
        if n > 0 {
            rest = rest.strip_prefix('-').unwrap_or(rest);
        }
        if rest.len() < group || !rest[..group].bytes().all(|b| b.is_ascii_hexdigit()) {
            return false;
        }
        rest = &rest[group..];
    }
    rest.is_empty()
}

/// The longest pattern the format's check stands for (`MaxRegexSize`),
/// which its cost estimate takes.
pub(super) fn regex_size(name: &str) -> u64 {
    match name {
        "dns1123Label" | "dns1035Label" | "dns1123LabelPrefix" | "dns1035LabelPrefix" => 30,
        "labelValue" => 40,
        "uri" => 1103,
        "uuid" => UUID_PATTERN.len() as u64,
        "byte" => 84,
        "date" | "datetime" => DATE_TIME_PATTERN.len() as u64,
        _ => 60,
    }
}

/// The errors of `s` in the named format; none where it is valid.
pub(super) fn validate(name: &str, s: &str) -> Vec<String> {
    let one = |ok: bool, message: &str| if ok { vec![] } else { vec![message.to_owned()] };
    match name {
        "dns1123Label" => dns1123_label(s),
        "dns1123Subdomain" => dns1123_subdomain(s, "characters"),
        "dns1035Label" => dns1035_label(s),
        "qualifiedName" => qualified_name(s),
        "dns1123LabelPrefix" => dns1123_label(&masked(s)),
        "dns1123SubdomainPrefix" => dns1123_subdomain(&masked(s), "characters"),
        "dns1035LabelPrefix" => dns1035_label(&masked(s)),
        "labelValue" => label_value(s),
        "uri" => Url::parse(s).err().into_iter().collect(),
        "uuid" => one(uuid(s), "does not match the UUID format"),
        "byte" => one(crate::syntax::base64::is_standard(s), "invalid base64"),
        "date" => one(Timestamp::parse_date(s).is_some(), "invalid date"),
        _ => one(Timestamp::parse(s).is_some(), "invalid datetime"),
    }
}
