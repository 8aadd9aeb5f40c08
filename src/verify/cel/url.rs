//! A URL as Kubernetes' `url()` reads it: Go's `url.ParseRequestURI`
//! (Go 1.26 `net/url/url.go`: `parse` with `viaRequest`, `getScheme`,
//! `parseAuthority`, `parseHost`, `setPath`), and the parts its accessors
//! give (`Hostname`, `Port`, `EscapedPath`, `Query`).

use std::fmt::Write as _;

#[derive(Debug)]
pub(super) struct Url {
    pub text: String,
    pub scheme: String,
    pub host: String,
    path: String,
    raw_query: String,
}

fn hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

/// Go's `unescape`: `%XX` decoded; a bad escape is an error.
fn unescape(text: &str, plus_is_space: bool) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                if i + 2 >= bytes.len() || !hex(bytes[i + 1]) || !hex(bytes[i + 2]) {
                    let bad: String = text[i..].chars().take(3).collect();
                    return Err(format!("invalid URL escape {bad:?}"));
                }
                let value = u8::from_str_radix(&text[i + 1..i + 3], 16).unwrap_or(0);
                out.push(value);
                i += 3;
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Whether Go's `url.ParseRequestURI` takes `raw` (strfmt's `uri`).
pub(super) fn is_request_uri(raw: &str) -> bool {
    Url::request(raw).is_ok()
}

impl Url {
    /// `url()`: checked by `ParseRequestURI`, its parts as `Parse` gives
    /// them, the fragment cut (`library/urls.go`).
    pub(super) fn parse(raw: &str) -> Result<Url, String> {
        let checked = Url::request(raw)?;
        let Some((before, _)) = raw.split_once('#') else {
            return Ok(checked);
        };
        let mut parts = Url::request(before).unwrap_or(checked);
        raw.clone_into(&mut parts.text);
        Ok(parts)
    }

    fn request(raw: &str) -> Result<Url, String> {
        let wrap = |e: String| format!("parse {raw:?}: {e}");
        if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
            return Err(wrap("net/url: invalid control character in URL".to_owned()));
        }
        if raw.is_empty() {
            return Err(wrap("empty url".to_owned()));
        }
        let mut url = Url {
            text: raw.to_owned(),
            scheme: String::new(),
            host: String::new(),
            path: String::new(),
            raw_query: String::new(),
        };
        if raw == "*" {
            "*".clone_into(&mut url.path);
            return Ok(url);
        }
        let (scheme, rest) = scheme(raw).map_err(wrap)?;
        url.scheme = scheme.to_ascii_lowercase();
        let mut rest = rest;
        if rest.ends_with('?') && rest.matches('?').count() == 1 {
            rest = &rest[..rest.len() - 1];
        } else if let Some((before, query)) = rest.split_once('?') {
            query.clone_into(&mut url.raw_query);
            rest = before;
        }
        if !rest.starts_with('/') {
            if !url.scheme.is_empty() {
                // An opaque URL (`mailto:x`).
                return Ok(url);
            }
            return Err(wrap("invalid URI for request".to_owned()));
        }
        if !url.scheme.is_empty() && rest.starts_with("//") {
            let authority = &rest[2..];
            let (authority, path) = match authority.find('/') {
                Some(i) => (&authority[..i], &authority[i..]),
                None => (authority, ""),
            };
            url.host = parse_authority(authority).map_err(wrap)?;
            rest = path;
        }
        unescape(rest, false).map_err(wrap)?;
        rest.clone_into(&mut url.path);
        Ok(url)
    }

    /// The host without its port (and an IPv6 address without brackets).
    pub(super) fn hostname(&self) -> String {
        let (host, _) = split_host_port(&self.host);
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned()
    }

    pub(super) fn port(&self) -> String {
        split_host_port(&self.host).1.to_owned()
    }

    /// Go's `EscapedPath`: the path as written where that is a valid
    /// encoding of it, else escaped.
    pub(super) fn escaped_path(&self) -> String {
        if self.path.bytes().all(|b| !escaped_in_path(b) || b == b'%') {
            return self.path.clone();
        }
        let decoded = unescape(&self.path, false).unwrap_or_else(|_| self.path.clone());
        let mut out = String::new();
        for b in decoded.bytes() {
            if escaped_in_path(b) {
                let _ = write!(out, "%{b:02X}");
            } else {
                out.push(char::from(b));
            }
        }
        out
    }

    /// Go's `ParseQuery`, its errors dropped as `Query` drops them.
    pub(super) fn query_pairs(&self) -> Vec<(String, String)> {
        let mut pairs = Vec::new();
        for part in self.raw_query.split('&') {
            if part.is_empty() || part.contains(';') {
                continue;
            }
            let (key, value) = part.split_once('=').unwrap_or((part, ""));
            if let (Ok(key), Ok(value)) = (unescape(key, true), unescape(value, true)) {
                pairs.push((key, value));
            }
        }
        pairs
    }
}

fn split_host_port(host: &str) -> (&str, &str) {
    let colon = host.rfind(':');
    match colon {
        Some(i)
            if !host[i..].contains(']') && host[i + 1..].bytes().all(|b| b.is_ascii_digit()) =>
        {
            (&host[..i], &host[i + 1..])
        }
        _ => (host, ""),
    }
}

/// Go's `getScheme`: letters, then letters, digits, `+-.`, up to `:`.
fn scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' => {
                if i == 0 {
                    return Ok(("", raw));
                }
            }
            ':' => {
                if i == 0 {
                    return Err("missing protocol scheme".to_owned());
                }
                return Ok((&raw[..i], &raw[i + 1..]));
            }
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// `userinfo@host:port`: the host and port, checked as Go checks them.
fn parse_authority(authority: &str) -> Result<String, String> {
    let host = match authority.rfind('@') {
        Some(i) => &authority[i + 1..],
        None => authority,
    };
    if let Some(inner) = host.strip_prefix('[') {
        let Some(end) = inner.find(']') else {
            return Err("missing ']' in host".to_owned());
        };
        let port = &inner[end + 1..];
        if !port.is_empty() && !valid_port(port) {
            return Err(format!("invalid port {port:?} after host"));
        }
        return Ok(host.to_owned());
    }
    if let Some(i) = host.rfind(':')
        && !valid_port(&host[i..])
    {
        return Err(format!("invalid port {:?} after host", &host[i..]));
    }
    for c in host.chars() {
        let allowed = c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:%".contains(c) || !c.is_ascii();
        if !allowed {
            return Err(format!(
                "invalid character {:?} in host name",
                c.to_string()
            ));
        }
    }
    unescape(host, false)?;
    Ok(host.to_owned())
}

/// `:` and digits, or nothing.
fn valid_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether Go's `shouldEscape` escapes the byte in a path.
fn escaped_in_path(b: u8) -> bool {
    !(b.is_ascii_alphanumeric() || b"-_.~$&+,/:;=@!'()*[]".contains(&b))
}
