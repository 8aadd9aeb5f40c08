//! Standard base64 (RFC 4648, section 4): whether a text is what Go's
//! `encoding/base64` `StdEncoding` takes (and so `encoding/json` for a
//! `[]byte`, and strfmt's `byte` format), and its bytes.

/// Whether `text` is standard base64 with its padding, line breaks
/// ignored, as Go decodes it.
pub fn is_standard(text: &str) -> bool {
    let bytes: Vec<u8> = text
        .bytes()
        .filter(|b| !matches!(b, b'\r' | b'\n'))
        .collect();
    if !bytes.len().is_multiple_of(4) {
        return false;
    }
    let padding = bytes.iter().rev().take_while(|b| **b == b'=').count();
    padding <= 2
        && bytes[..bytes.len() - padding]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/'))
}

/// The bytes of standard base64, white space and padding passed over;
/// `None` at any other character outside the alphabet.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
    {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((acc >> bits) & 0xff).expect("masked"));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_as_go_reads_it() {
        for good in ["", "aGk=", "aGVsbG8=", "aGVs\nbG8=", "YWJj"] {
            assert!(is_standard(good), "{good}");
        }
        for bad in ["hunter2", "aGk", "a===", "aG!k", "aGk=aGk="] {
            assert!(!is_standard(bad), "{bad}");
        }
    }

    #[test]
    fn base64_decodes() {
        assert_eq!(decode("aGVsbG8=").as_deref(), Some(&b"hello"[..]));
        assert_eq!(decode("aGk=\n").as_deref(), Some(&b"hi"[..]));
        assert_eq!(decode("a*"), None);
    }
}
