//! A schema as the quick check reads it: JSON whose strings borrow from the
//! embedded text and whose objects are lists, so that parsing a schema
//! allocates little and hashes nothing (a `serde_json::Value` of the
//! PyTorchJob schema costs about 6 M instructions to build; this, about 1 M).

use std::borrow::Cow;

use serde_json::{Number, Value as Json};

/// One JSON value of a schema.
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaJson<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<SchemaJson<'a>>),
    /// Members in document order; schemas have few enough that a scan beats hashing.
    Object(Vec<(Cow<'a, str>, SchemaJson<'a>)>),
}

impl<'a> SchemaJson<'a> {
    /// Parses `text`, borrowing every string that has no escapes.
    pub fn parse(text: &'a str) -> Result<SchemaJson<'a>, String> {
        let mut reader = Reader {
            text,
            at: 0,
            members: Vec::new(),
            items: Vec::new(),
        };
        let value = reader.value(0)?;
        match reader.peek() {
            None => Ok(value),
            Some(_) => reader.fail("trailing characters"),
        }
    }

    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&SchemaJson<'a>> {
        self.members()?
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    pub fn members(&self) -> Option<&[(Cow<'a, str>, SchemaJson<'a>)]> {
        match self {
            SchemaJson::Object(members) => Some(members),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[SchemaJson<'a>]> {
        match self {
            SchemaJson::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            SchemaJson::String(text) => Some(text),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            SchemaJson::Number(number) => number.as_u64(),
            _ => None,
        }
    }

    /// The value a JSON pointer (`/$defs/Name`) names.
    pub fn pointer(&self, pointer: &str) -> Option<&SchemaJson<'a>> {
        if pointer.is_empty() {
            return Some(self);
        }
        let mut node = self;
        for segment in pointer.strip_prefix('/')?.split('/') {
            let segment = if segment.contains('~') {
                Cow::Owned(segment.replace("~1", "/").replace("~0", "~"))
            } else {
                Cow::Borrowed(segment)
            };
            node = match node {
                SchemaJson::Object(_) => node.get(&segment)?,
                SchemaJson::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// Whether this equals `value` as serde_json compares (numbers by representation).
    pub fn equals(&self, value: &Json) -> bool {
        match (self, value) {
            (SchemaJson::Null, Json::Null) => true,
            (SchemaJson::Bool(a), Json::Bool(b)) => a == b,
            (SchemaJson::Number(a), Json::Number(b)) => a == b,
            (SchemaJson::String(a), Json::String(b)) => a == b,
            (SchemaJson::Array(a), Json::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.equals(b))
            }
            (SchemaJson::Object(a), Json::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, v)| b.get(k.as_ref()).is_some_and(|w| v.equals(w)))
            }
            _ => false,
        }
    }

    pub fn has_number(&self) -> bool {
        match self {
            SchemaJson::Number(_) => true,
            SchemaJson::Array(items) => items.iter().any(SchemaJson::has_number),
            SchemaJson::Object(members) => members.iter().any(|(_, v)| v.has_number()),
            _ => false,
        }
    }
}

/// A recursive-descent reader of strict JSON (RFC 8259), about four times
/// cheaper than building the same tree through serde's visitor: strings
/// without escapes are borrowed, numbers are read by serde_json.
struct Reader<'a> {
    text: &'a str,
    at: usize,
    /// The members of the objects and the items of the arrays being read,
    /// innermost last: each collection takes its own at its end, in one
    /// allocation of the right size rather than a vector grown push by push.
    members: Vec<(Cow<'a, str>, SchemaJson<'a>)>,
    items: Vec<SchemaJson<'a>>,
}

/// How deep a schema may nest; the embedded ones reach about 30.
const MAX_NESTING: usize = 256;

impl<'a> Reader<'a> {
    fn fail<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{what} at byte {}", self.at))
    }

    fn skip_space(&mut self) {
        let bytes = self.text.as_bytes();
        while self.at < bytes.len() && matches!(bytes[self.at], b' ' | b'\t' | b'\n' | b'\r') {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.as_bytes().get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            self.fail(&format!("expected `{}`", char::from(byte)))
        }
    }

    fn value(&mut self, depth: usize) -> Result<SchemaJson<'a>, String> {
        if depth > MAX_NESTING {
            return self.fail("too deep");
        }
        match self.peek() {
            Some(b'{') => {
                self.at += 1;
                let first = self.members.len();
                if self.peek() == Some(b'}') {
                    self.at += 1;
                    return Ok(SchemaJson::Object(Vec::new()));
                }
                loop {
                    let key = self.string()?;
                    self.expect(b':')?;
                    let value = self.value(depth + 1)?;
                    self.members.push((key, value));
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b'}') => {
                            self.at += 1;
                            return Ok(SchemaJson::Object(self.members.drain(first..).collect()));
                        }
                        _ => return self.fail("expected `,` or `}`"),
                    }
                }
            }
            Some(b'[') => {
                self.at += 1;
                let first = self.items.len();
                if self.peek() == Some(b']') {
                    self.at += 1;
                    return Ok(SchemaJson::Array(Vec::new()));
                }
                loop {
                    let item = self.value(depth + 1)?;
                    self.items.push(item);
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b']') => {
                            self.at += 1;
                            return Ok(SchemaJson::Array(self.items.drain(first..).collect()));
                        }
                        _ => return self.fail("expected `,` or `]`"),
                    }
                }
            }
            Some(b'"') => self.string().map(SchemaJson::String),
            Some(b't') => self.word("true", SchemaJson::Bool(true)),
            Some(b'f') => self.word("false", SchemaJson::Bool(false)),
            Some(b'n') => self.word("null", SchemaJson::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => self.fail("expected a value"),
        }
    }

    fn word(&mut self, word: &str, value: SchemaJson<'a>) -> Result<SchemaJson<'a>, String> {
        if self.text[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(value)
        } else {
            self.fail("expected a value")
        }
    }

    fn number(&mut self) -> Result<SchemaJson<'a>, String> {
        let start = self.at;
        let bytes = self.text.as_bytes();
        while self.at < bytes.len()
            && matches!(
                bytes[self.at],
                b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
            )
        {
            self.at += 1;
        }
        serde_json::from_str::<Number>(&self.text[start..self.at])
            .map(SchemaJson::Number)
            .or_else(|_| self.fail("invalid number"))
    }

    /// A string; one with escapes is decoded by serde_json.
    fn string(&mut self) -> Result<Cow<'a, str>, String> {
        if self.peek() != Some(b'"') {
            return self.fail("expected a string");
        }
        let start = self.at;
        let bytes = self.text.as_bytes();
        let mut escaped = false;
        let mut i = start + 1;
        loop {
            // The next quote, backslash or control character.
            let Some(found) = bytes.get(i..).and_then(|rest| {
                rest.iter()
                    .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            }) else {
                return self.fail("unterminated string");
            };
            i += found;
            match bytes[i] {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    i += 2;
                }
                _ => return self.fail("control character in a string"),
            }
        }
        self.at = i + 1;
        if escaped {
            serde_json::from_str::<String>(&self.text[start..self.at])
                .map(Cow::Owned)
                .or_else(|_| self.fail("invalid escape"))
        } else {
            Ok(Cow::Borrowed(&self.text[start + 1..i]))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::SchemaJson;

    #[test]
    fn rejects_what_is_not_json() {
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\" 1}",
            "\"x",
            "tru",
            "01x",
            "{} x",
            "\"\\q\"",
            "[\"\u{1}\"]",
        ] {
            assert!(SchemaJson::parse(bad).is_err(), "{bad:?}");
        }
        let deep = "[".repeat(300) + &"]".repeat(300);
        assert!(SchemaJson::parse(&deep).is_err());
    }

    /// Every embedded schema reads as serde_json reads it.
    #[test]
    fn reads_the_embedded_schemas_as_serde_json_does() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/compact");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "json") {
                continue; // the `.lz4` the binary holds, locked to these by tests/schema_lock.rs
            }
            let text = std::fs::read_to_string(path).unwrap();
            let ours = SchemaJson::parse(&text).unwrap();
            let theirs: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert!(ours.equals(&theirs));
        }
    }

    #[test]
    fn borrows_plain_strings_and_reads_escapes() {
        let node =
            SchemaJson::parse(r#"{"a": "plain", "b\u0020c": ["x\"y", 1, -2, 0.5, true, null]}"#)
                .unwrap();
        assert!(matches!(
            node.get("a"),
            Some(SchemaJson::String(Cow::Borrowed("plain")))
        ));
        let list = node.get("b c").unwrap().as_array().unwrap();
        assert_eq!(list[0].as_str(), Some("x\"y"));
        assert!(list[1].equals(&serde_json::json!(1)));
        assert!(list[2].equals(&serde_json::json!(-2)));
        assert!(!list[3].equals(&serde_json::json!(1)));
        assert_eq!(node.pointer("/b c/4"), Some(&SchemaJson::Bool(true)));
        assert_eq!(node.pointer("/b c/9"), None);
    }
}
