//! IP addresses and CIDRs as Kubernetes' CEL libraries read them
//! (k8s.io/apiserver v0.36.3 `pkg/cel/library/ip.go`, `cidr.go`, over Go's
//! `net/netip`): no zone, no IPv4-mapped IPv6 address, Go's
//! classifications (`IsLoopback`, `IsGlobalUnicast` …) and its text.

use std::net::IpAddr;

/// An address, as `ip()` makes it (`parseIPAddr`): Go's `ParseAddr`,
/// then no zone, no IPv4-mapped IPv6 address.
pub(super) fn ip(text: &str) -> Result<IpAddr, String> {
    let (addr, zone) = parse_addr(text).map_err(|error| {
        format!("IP Address {text:?} parse error during conversion from string: {error}")
    })?;
    if zone {
        return Err(format!(
            "IP address {text:?} with zone value is not allowed"
        ));
    }
    if let IpAddr::V6(v6) = addr
        && v6.to_ipv4_mapped().is_some()
    {
        return Err(format!("IPv4-mapped IPv6 address {text:?} is not allowed"));
    }
    Ok(addr)
}

/// A network, as `cidr()` makes it: its address as written, and its
/// prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cidr {
    pub addr: IpAddr,
    pub bits: u8,
}

/// A network, as `cidr()` makes it (`stringToCIDR` over `parseCIDR`,
/// each adding its words to Go's `ParsePrefix` error).
pub(super) fn cidr(text: &str) -> Result<Cidr, String> {
    const CONVERSION: &str = "network address parse error during conversion from string";
    let prefix = parse_prefix(text)
        .map_err(|why| format!("{CONVERSION}: {CONVERSION}: netip.ParsePrefix({text:?}): {why}"))?;
    if let IpAddr::V6(v6) = prefix.addr
        && v6.to_ipv4_mapped().is_some()
    {
        return Err(format!(
            "{CONVERSION}: IPv4-mapped IPv6 address {text:?} is not allowed"
        ));
    }
    Ok(prefix)
}

/// Go's `netip.ParsePrefix`, its error's words after `netip.ParsePrefix(…): `.
fn parse_prefix(text: &str) -> Result<Cidr, String> {
    let Some(slash) = text.rfind('/') else {
        return Err("no '/'".to_owned());
    };
    let (addr, zone) = parse_addr(&text[..slash])?;
    if zone {
        return Err("IPv6 zones cannot be present in a prefix".to_owned());
    }
    let bits = &text[slash + 1..];
    let bad = || format!("bad bits after slash: {bits:?}");
    if bits.len() > 1 && !matches!(bits.as_bytes()[0], b'1'..=b'9') {
        return Err(bad());
    }
    // `strconv.Atoi`: a sign, or digits past 64 bits, is no number.
    let n: i64 = (!bits.is_empty() && bits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| bits.parse().ok())
        .flatten()
        .ok_or_else(bad)?;
    if n > i64::from(width(addr)) {
        return Err("prefix length out of range".to_owned());
    }
    Ok(Cidr {
        addr,
        bits: n as u8,
    })
}

/// Go's `netip.ParseAddr`: the address and whether it had a zone, or the
/// error as Go words it (`ParseAddr("1.2.3"): IPv4 address too short`).
fn parse_addr(text: &str) -> Result<(IpAddr, bool), String> {
    let error = |msg: &str, at: Option<&str>| match at {
        Some(at) if !at.is_empty() => format!("ParseAddr({text:?}): {msg} (at {at:?})"),
        _ => format!("ParseAddr({text:?}): {msg}"),
    };
    for b in text.bytes() {
        match b {
            b'.' => {
                let fields = ipv4_fields(text).map_err(|(m, at)| error(m, at))?;
                return Ok((IpAddr::V4(fields.into()), false));
            }
            b':' => return ipv6(text).map_err(|(m, at)| error(m, at)),
            b'%' => return Err(error("missing IPv6 address", None)),
            _ => {}
        }
    }
    Err(error("unable to parse IP", None))
}

type Why<'a> = (&'static str, Option<&'a str>);

/// `parseIPv4Fields`: the four fields of `s`, a part of `text`.
fn ipv4_fields(s: &str) -> Result<[u8; 4], Why<'_>> {
    let bytes = s.as_bytes();
    let (mut fields, mut pos, mut val, mut digits) = ([0u8; 4], 0, 0u32, 0);
    for (i, &c) in bytes.iter().enumerate() {
        if c.is_ascii_digit() {
            if digits == 1 && val == 0 {
                return Err(("IPv4 field has octet with leading zero", None));
            }
            val = val * 10 + u32::from(c - b'0');
            digits += 1;
            if val > 255 {
                return Err(("IPv4 field has value >255", None));
            }
        } else if c == b'.' {
            if i == 0 || i == bytes.len() - 1 || bytes[i - 1] == b'.' {
                return Err(("IPv4 field must have at least one digit", Some(&s[i..])));
            }
            if pos == 3 {
                return Err(("IPv4 address too long", None));
            }
            fields[pos] = val as u8;
            pos += 1;
            val = 0;
            digits = 0;
        } else {
            return Err(("unexpected character", Some(&s[i..])));
        }
    }
    if pos < 3 {
        return Err(("IPv4 address too short", None));
    }
    fields[3] = val as u8;
    Ok(fields)
}

/// `parseIPv6`: the address, whether it had a zone.
fn ipv6(text: &str) -> Result<(IpAddr, bool), Why<'_>> {
    let (mut s, zone) = match text.split_once('%') {
        Some((_, "")) => return Err(("zone must be a non-empty string", None)),
        Some((addr, _)) => (addr, true),
        None => (text, false),
    };
    let address_end = s.len();
    let mut ip = [0u8; 16];
    let mut ellipsis: Option<usize> = None;
    if s.starts_with("::") {
        ellipsis = Some(0);
        s = &s[2..];
        if s.is_empty() {
            return Ok((IpAddr::V6([0u16; 8].into()), zone));
        }
    }
    let mut i = 0;
    while i < 16 {
        let bytes = s.as_bytes();
        let (mut off, mut acc) = (0, 0u32);
        while off < bytes.len() {
            let Some(digit) = (bytes[off] as char).to_digit(16) else {
                break;
            };
            acc = (acc << 4) + digit;
            if off > 3 {
                return Err(("each group must have 4 or less digits", Some(s)));
            }
            if acc > 0xffff {
                return Err(("IPv6 field has value >=2^16", Some(s)));
            }
            off += 1;
        }
        if off == 0 {
            return Err((
                "each colon-separated field must have at least one digit",
                Some(s),
            ));
        }
        if bytes.get(off) == Some(&b'.') {
            if ellipsis.is_none() && i != 12 {
                return Err((
                    "embedded IPv4 address must replace the final 2 fields of the address",
                    Some(s),
                ));
            }
            if i + 4 > 16 {
                return Err((
                    "too many hex fields to fit an embedded IPv4 at the end of the address",
                    Some(s),
                ));
            }
            let start = address_end - s.len();
            let fields = ipv4_fields(&text[start..address_end])?;
            ip[i..i + 4].copy_from_slice(&fields);
            s = "";
            i += 4;
            break;
        }
        ip[i] = (acc >> 8) as u8;
        ip[i + 1] = acc as u8;
        i += 2;
        s = &s[off..];
        if s.is_empty() {
            break;
        }
        if !s.starts_with(':') {
            return Err(("unexpected character, want colon", Some(s)));
        } else if s.len() == 1 {
            return Err(("colon must be followed by more characters", Some(s)));
        }
        s = &s[1..];
        if s.starts_with(':') {
            if ellipsis.is_some() {
                return Err(("multiple :: in address", Some(s)));
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return Err(("trailing garbage after address", Some(s)));
    }
    if i < 16 {
        let Some(at) = ellipsis else {
            return Err(("address string too short", None));
        };
        let n = 16 - i;
        ip.copy_within(at..i, at + n);
        ip[at..at + n].fill(0);
    } else if ellipsis.is_some() {
        return Err(("the :: must expand to at least one field of zeros", Some(s)));
    }
    Ok((IpAddr::V6(ip.into()), zone))
}

fn bits_of(addr: IpAddr) -> u128 {
    match addr {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

fn width(addr: IpAddr) -> u8 {
    if addr.is_ipv4() { 32 } else { 128 }
}

fn mask(bits: u8, width: u8) -> u128 {
    if bits == 0 {
        return 0;
    }
    let all = if width == 32 {
        u128::from(u32::MAX)
    } else {
        u128::MAX
    };
    all & !((1u128 << (width - bits)) - 1) & all
}

impl Cidr {
    pub(super) fn contains(self, addr: IpAddr) -> bool {
        if addr.is_ipv4() != self.addr.is_ipv4() {
            return false;
        }
        let m = mask(self.bits, width(addr));
        bits_of(addr) & m == bits_of(self.addr) & m
    }

    pub(super) fn contains_cidr(self, other: Cidr) -> bool {
        other.bits >= self.bits && self.contains(other.addr)
    }

    pub(super) fn masked(self) -> Cidr {
        let m = mask(self.bits, width(self.addr));
        let value = bits_of(self.addr) & m;
        let addr = match self.addr {
            IpAddr::V4(_) => IpAddr::V4((value as u32).into()),
            IpAddr::V6(_) => IpAddr::V6(value.into()),
        };
        Cidr {
            addr,
            bits: self.bits,
        }
    }

    pub(super) fn text(self) -> String {
        format!("{}/{}", self.addr, self.bits)
    }
}

/// Go's `netip.Addr` classifications.
pub(super) fn is(addr: IpAddr, what: &str) -> Option<bool> {
    Some(match (what, addr) {
        ("isUnspecified", a) => a.is_unspecified(),
        ("isLoopback", a) => a.is_loopback(),
        ("isLinkLocalMulticast", IpAddr::V4(v4)) => {
            let o = v4.octets();
            o[0] == 224 && o[1] == 0 && o[2] == 0
        }
        ("isLinkLocalMulticast", IpAddr::V6(v6)) => {
            let s = v6.segments();
            s[0] & 0xff0f == 0xff02
        }
        ("isLinkLocalUnicast", IpAddr::V4(v4)) => {
            let o = v4.octets();
            o[0] == 169 && o[1] == 254
        }
        ("isLinkLocalUnicast", IpAddr::V6(v6)) => v6.segments()[0] & 0xffc0 == 0xfe80,
        ("isGlobalUnicast", a) => {
            let broadcast = matches!(a, IpAddr::V4(v4) if v4.is_broadcast());
            !(a.is_unspecified()
                || a.is_loopback()
                || a.is_multicast()
                || broadcast
                || is(a, "isLinkLocalUnicast") == Some(true))
        }
        _ => return None,
    })
}
