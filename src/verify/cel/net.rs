//! IP addresses and CIDRs as Kubernetes' CEL libraries read them
//! (k8s.io/apiserver v0.36.3 `pkg/cel/library/ip.go`, `cidr.go`, over Go's
//! `net/netip`): no zone, no IPv4-mapped IPv6 address, Go's
//! classifications (`IsLoopback`, `IsGlobalUnicast` …) and its text.

use std::net::IpAddr;

/// An address, as `ip()` makes it.
pub(super) fn ip(text: &str) -> Result<IpAddr, String> {
    if text.contains('%') {
        return Err(format!(
            "IP address {text:?} with zone value is not allowed"
        ));
    }
    let addr: IpAddr = text.parse().map_err(|_| {
        format!("IP Address {text:?} parse error during conversion from string: ParseAddr({text:?}): unable to parse IP")
    })?;
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

pub(super) fn cidr(text: &str) -> Result<Cidr, String> {
    let wrong = |why: &str| {
        format!(
            "network address parse error during conversion from string: netip.ParsePrefix({text:?}): {why}"
        )
    };
    let Some((addr, bits)) = text.split_once('/') else {
        return Err(wrong("no '/'"));
    };
    if addr.contains('%') {
        return Err(wrong("IPv6 zones cannot be present in a prefix"));
    }
    let parsed: IpAddr = addr
        .parse()
        .map_err(|_| wrong(&format!("ParseAddr({addr:?}): unable to parse IP")))?;
    if let IpAddr::V6(v6) = parsed
        && v6.to_ipv4_mapped().is_some()
    {
        return Err(format!("IPv4-mapped IPv6 address {text:?} is not allowed"));
    }
    let max = if parsed.is_ipv4() { 32 } else { 128 };
    let bits: u8 = (!bits.is_empty()
        && bits.bytes().all(|b| b.is_ascii_digit())
        && (bits == "0" || !bits.starts_with('0')))
    .then(|| bits.parse().ok())
    .flatten()
    .filter(|b| *b <= max)
    .ok_or_else(|| wrong(&format!("bad bits after slash: {bits:?}")))?;
    Ok(Cidr { addr: parsed, bits })
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
