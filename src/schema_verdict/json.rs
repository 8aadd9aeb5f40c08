//! A schema as the quick check reads it: JSON whose strings borrow from the
//! embedded text and whose objects are lists, so that parsing a schema
//! allocates little and hashes nothing (a `serde_json::Value` of the
//! PyTorchJob schema costs about 6 M instructions to build; this, under 1 M).

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
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
    pub fn parse(text: &'a str) -> serde_json::Result<SchemaJson<'a>> {
        serde_json::from_str(text)
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
            let segment = segment.replace("~1", "/").replace("~0", "~");
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

/// A string that borrows from the input when it can.
struct Text<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

impl<'de> Deserialize<'de> for SchemaJson<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SchemaJsonVisitor)
    }
}

struct SchemaJsonVisitor;

impl<'de> Visitor<'de> for SchemaJsonVisitor {
    type Value = SchemaJson<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_unit<E>(self) -> Result<SchemaJson<'de>, E> {
        Ok(SchemaJson::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<SchemaJson<'de>, E> {
        Ok(SchemaJson::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<SchemaJson<'de>, E> {
        Ok(SchemaJson::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<SchemaJson<'de>, E> {
        Ok(SchemaJson::Number(v.into()))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<SchemaJson<'de>, E> {
        Number::from_f64(v)
            .map(SchemaJson::Number)
            .ok_or_else(|| E::custom("a finite number"))
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<SchemaJson<'de>, E> {
        Ok(SchemaJson::String(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<SchemaJson<'de>, E> {
        Ok(SchemaJson::String(Cow::Owned(v.to_owned())))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SchemaJson<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(SchemaJson::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SchemaJson<'de>, A::Error> {
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some((Text(key), value)) = map.next_entry::<Text<'de>, SchemaJson<'de>>()? {
            members.push((key, value));
        }
        Ok(SchemaJson::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::SchemaJson;

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
