//! OCI image references: `[registry[:port]/]path[:tag][@algorithm:hex]`, the
//! grammar of distribution/reference.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef<'a> {
    pub name: &'a str,
    pub tag: Option<&'a str>,
    pub digest: Option<&'a str>,
}

pub fn parse(reference: &str) -> Result<ImageRef<'_>, String> {
    if reference.is_empty() {
        return Err("it is empty".to_owned());
    }
    if let Some(c) = reference.chars().find(|c| c.is_whitespace()) {
        return Err(format!("it contains whitespace ({c:?})"));
    }
    let (rest, digest) = match reference.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (reference, None),
    };
    if let Some(digest) = digest {
        check_digest(digest)?;
    }
    // A `:` after the last `/` starts the tag; one before it is a registry port.
    let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[last_slash..].find(':') {
        Some(i) => (&rest[..last_slash + i], Some(&rest[last_slash + i + 1..])),
        None => (rest, None),
    };
    if let Some(tag) = tag {
        check_tag(tag)?;
    }
    if name.len() > 255 {
        return Err(format!(
            "the repository name is {} characters long; the limit is 255",
            name.len()
        ));
    }
    let mut components: Vec<&str> = name.split('/').collect();
    let first = components[0];
    let has_domain = components.len() > 1
        && (first.contains(['.', ':'])
            || first == "localhost"
            || first.chars().any(|c| c.is_ascii_uppercase()));
    if has_domain {
        check_domain(first)?;
        components.remove(0);
    }
    for component in components {
        check_path_component(component)?;
    }
    Ok(ImageRef { name, tag, digest })
}

fn check_domain(domain: &str) -> Result<(), String> {
    let (host, port) = match domain.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || domain.starts_with('[') => (host, Some(port)),
        _ => (domain, None),
    };
    if let Some(port) = port
        && (port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(format!("the registry port `{port}` is not a number"));
    }
    if host.starts_with('[') && host.ends_with(']') {
        return Ok(()); // an IPv6 address
    }
    for part in host.split('.') {
        let ok = !part.is_empty()
            && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !part.starts_with('-')
            && !part.ends_with('-');
        if !ok {
            return Err(format!("the registry `{domain}` is not a valid host name"));
        }
    }
    Ok(())
}

fn check_path_component(component: &str) -> Result<(), String> {
    if component.is_empty() {
        return Err("it has an empty path component (`//` or a trailing `/`)".to_owned());
    }
    if component.chars().any(|c| c.is_ascii_uppercase()) {
        return Err(format!(
            "the repository path `{component}` has uppercase letters; image repositories are lowercase"
        ));
    }
    // alphanumerics separated by `.`, `_`, `__` or one or more `-`
    let bytes = component.as_bytes();
    let valid_char = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    if !valid_char(bytes[0]) || !valid_char(bytes[bytes.len() - 1]) {
        return Err(format!(
            "the repository path `{component}` must start and end with a letter or digit"
        ));
    }
    let mut i = 0;
    while i < bytes.len() {
        if valid_char(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !valid_char(bytes[i]) {
            i += 1;
        }
        let separator = &component[start..i];
        let ok = matches!(separator, "." | "_" | "__") || separator.bytes().all(|b| b == b'-');
        if !ok {
            return Err(format!(
                "the repository path `{component}` has `{separator}`; use lowercase letters, digits, `.`, `_`, `-`"
            ));
        }
    }
    Ok(())
}

fn check_tag(tag: &str) -> Result<(), String> {
    let ok = !tag.is_empty()
        && tag.len() <= 128
        && tag.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        && tag
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the tag `{tag}` is invalid: up to 128 letters, digits, `_`, `.`, `-`, not starting with `.` or `-`"
        ))
    }
}

fn check_digest(digest: &str) -> Result<(), String> {
    let Some((algorithm, hex)) = digest.split_once(':') else {
        return Err(format!(
            "the digest `{digest}` needs the form `sha256:<64 hex digits>`"
        ));
    };
    let algorithm_ok = !algorithm.is_empty()
        && algorithm.chars().all(|c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '+' | '.' | '_' | '-')
        });
    let hex_ok = hex.len() >= 32 && hex.chars().all(|c| c.is_ascii_hexdigit());
    let length_ok = algorithm != "sha256" || hex.len() == 64;
    if algorithm_ok && hex_ok && length_ok {
        Ok(())
    } else {
        Err(format!(
            "the digest `{digest}` needs the form `sha256:<64 hex digits>`"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_references() {
        for ok in [
            "pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime",
            "ghcr.io/acme/train:1.4",
            "localhost:5000/x",
            "registry.example.com:443/team/a_b__c-d/e.f:latest",
            "busybox",
            "nvcr.io/nvidia/pytorch:24.05-py3",
            "x@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ] {
            assert!(parse(ok).is_ok(), "{ok}: {:?}", parse(ok));
        }
        let r = parse("localhost:5000/x:1").unwrap();
        assert_eq!((r.name, r.tag), ("localhost:5000/x", Some("1")));
    }

    #[test]
    fn invalid_references() {
        for bad in [
            "",
            "ghcr.io/Acme/train",
            "a b",
            "x:",
            "x:.tag",
            "x@sha256:abc",
            "a//b",
            "a/b/",
            "-a",
            "x:1:2",
            "reg:abc/x",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
