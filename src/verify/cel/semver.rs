//! Semantic versions as Kubernetes' CEL library reads them
//! (k8s.io/apiserver v0.36.3 `pkg/cel/library/semverlib.go`, over
//! github.com/blang/semver/v4's `Parse`; `normalizeAndParse` when asked):
//! `MAJOR.MINOR.PATCH`, a pre-release and build metadata, ordered as
//! semver 2.0 orders them (the build ignored).

use std::cmp::Ordering;

#[derive(Debug, Clone)]
pub(super) struct Semver {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pre: Vec<String>,
}

fn numeric(part: &str, what: &str) -> Result<u64, String> {
    if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "Invalid character(s) found in {what} number {part:?}"
        ));
    }
    if part.len() > 1 && part.starts_with('0') {
        return Err(format!(
            "{} number must not contain leading zeroes {part:?}",
            capital(what)
        ));
    }
    part.parse().map_err(|e| format!("{e}"))
}

fn capital(what: &str) -> String {
    let mut chars = what.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn identifier_ok(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

impl Semver {
    /// blang's `Parse`.
    pub(super) fn parse(text: &str) -> Result<Semver, String> {
        let parts: Vec<&str> = text.splitn(3, '.').collect();
        if parts.len() != 3 {
            return Err("No Major.Minor.Patch elements found".to_owned());
        }
        let major = numeric(parts[0], "major")?;
        let minor = numeric(parts[1], "minor")?;
        let (patch_pre, build) = match parts[2].split_once('+') {
            Some((before, build)) => (before, Some(build)),
            None => (parts[2], None),
        };
        let (patch, pre) = match patch_pre.split_once('-') {
            Some((patch, pre)) => (patch, Some(pre)),
            None => (patch_pre, None),
        };
        let patch = numeric(patch, "patch")?;
        let mut version = Semver {
            major,
            minor,
            patch,
            pre: Vec::new(),
        };
        if let Some(pre) = pre {
            for id in pre.split('.') {
                if !identifier_ok(id) {
                    return Err(format!("Invalid character(s) found in prerelease {id:?}"));
                }
                if id.bytes().all(|b| b.is_ascii_digit()) && id.len() > 1 && id.starts_with('0') {
                    return Err(format!(
                        "Numeric PreRelease version must not contain leading zeroes {id:?}"
                    ));
                }
                version.pre.push(id.to_owned());
            }
        }
        if let Some(build) = build
            && !build.split('.').all(identifier_ok)
        {
            return Err(format!(
                "Invalid character(s) found in build meta data {build:?}"
            ));
        }
        Ok(version)
    }

    /// `normalizeAndParse`: a `v` dropped, leading zeros dropped, a missing
    /// minor or patch made 0.
    pub(super) fn parse_normalized(text: &str) -> Result<Semver, String> {
        let text = text.strip_prefix('v').unwrap_or(text);
        let mut parts: Vec<String> = text.splitn(3, '.').map(str::to_owned).collect();
        for part in &mut parts {
            if part.len() > 1 {
                let trimmed = part.trim_start_matches('0');
                *part = if trimmed.is_empty() || !trimmed.starts_with(|c: char| c.is_ascii_digit())
                {
                    format!("0{trimmed}")
                } else {
                    trimmed.to_owned()
                };
            }
        }
        if parts.len() < 3 {
            if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
                return Err("short version cannot contain PreRelease/Build meta data".to_owned());
            }
            parts.resize(3, "0".to_owned());
        }
        Semver::parse(&parts.join("."))
    }

    /// semver 2.0's precedence.
    pub(super) fn compare(&self, other: &Semver) -> Ordering {
        let core =
            (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch));
        if core != Ordering::Equal {
            return core;
        }
        match (self.pre.is_empty(), other.pre.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Greater,
            (false, true) => return Ordering::Less,
            (false, false) => {}
        }
        for (a, b) in self.pre.iter().zip(&other.pre) {
            let order = match (a.parse::<u64>(), b.parse::<u64>()) {
                (Ok(x), Ok(y)) => x.cmp(&y),
                (Ok(_), Err(_)) => Ordering::Less,
                (Err(_), Ok(_)) => Ordering::Greater,
                (Err(_), Err(_)) => a.cmp(b),
            };
            if order != Ordering::Equal {
                return order;
            }
        }
        self.pre.len().cmp(&other.pre.len())
    }
}
