//! A JSON value written as block YAML, byte for byte as serde-saphyr writes
//! it, without its cost on every start: serde-saphyr decides each scalar's
//! quoting with a full YAML 1.1 resolver, which took a third of the
//! instructions of `trainc build`. Here a scalar whose text is plainly plain
//! (a name, a path, an image) is written as it is; every other single-line
//! scalar is written by serde-saphyr alone, which quotes it as it would in
//! place; and a document with anything else (a multi-line string, a key that
//! is not plainly plain) is left to serde-saphyr whole. Tests compare the two
//! on every golden and on generated values.

use serde_json::Value as Json;

/// `value` as serde-saphyr's `to_string` writes it.
pub fn to_string(value: &Json) -> String {
    let mut out = String::with_capacity(2048);
    let written = match value {
        Json::Object(map) if !map.is_empty() => entries(map, 0, false, &mut out),
        _ => None,
    };
    match written {
        Some(()) => out,
        None => whole(value),
    }
}

fn whole(value: &Json) -> String {
    serde_saphyr::to_string(value).expect("a JSON value always serialises to YAML")
}

fn pad(out: &mut String, column: usize) {
    out.extend(std::iter::repeat_n(' ', column));
}

/// A mapping's entries, keys at `column`; the first continues the line
/// (after `- `) when `inline_first`.
fn entries(
    map: &serde_json::Map<String, Json>,
    column: usize,
    inline_first: bool,
    out: &mut String,
) -> Option<()> {
    for (i, (key, value)) in map.iter().enumerate() {
        // A key's `:` is quoted where a value's is not.
        if !plain(key) || key.contains(':') {
            return None;
        }
        if i > 0 || !inline_first {
            pad(out, column);
        }
        out.push_str(key);
        out.push(':');
        match value {
            Json::Object(inner) if !inner.is_empty() => {
                out.push('\n');
                entries(inner, column + 2, false, out)?;
            }
            Json::Array(items) if !items.is_empty() => {
                out.push('\n');
                sequence(items, column, out)?;
            }
            _ => {
                out.push(' ');
                scalar(value, out)?;
            }
        }
    }
    Some(())
}

/// A sequence's items, each `- ` at `column`.
fn sequence(items: &[Json], column: usize, out: &mut String) -> Option<()> {
    for item in items {
        pad(out, column);
        out.push_str("- ");
        match item {
            Json::Object(inner) if !inner.is_empty() => entries(inner, column + 2, true, out)?,
            // A sequence in a sequence, rare in an object: serde-saphyr's own layout.
            Json::Array(inner) if !inner.is_empty() => return None,
            _ => scalar(item, out)?,
        }
    }
    Some(())
}

/// A scalar or an empty collection and its newline.
fn scalar(value: &Json, out: &mut String) -> Option<()> {
    match value {
        Json::Object(_) => out.push_str("{}"),
        Json::Array(_) => out.push_str("[]"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) if n.is_i64() || n.is_u64() => out.push_str(&n.to_string()),
        Json::String(s) if plain(s) => out.push_str(s),
        Json::String(s) if s.contains(['\n', '\r']) => return None,
        _ => {
            // serde-saphyr's text for this scalar alone, as it writes it in place.
            let text = whole(value);
            let line = text.strip_suffix('\n')?;
            if line.contains('\n') {
                return None;
            }
            out.push_str(line);
        }
    }
    out.push('\n');
    Some(())
}

/// Whether `s` is written plain (see [`plain`]): what a writer of YAML by
/// hand may write as it is.
pub fn plainly_plain(s: &str) -> bool {
    plain(s)
}

/// Words YAML 1.1 reads as a boolean, a null or a float, in any case.
const WORDS: [&str; 11] = [
    "y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf",
];

/// Text a YAML reader (1.1 or 1.2) reads as this string when written plain,
/// and that serde-saphyr writes plain: letters, digits and `._/-=:`, no `: `
/// and no `:` last, and either
///
/// - a letter or `/` first, and not a word YAML 1.1 reads as a boolean, a
///   null or a float (`yes`, `Off`, `nan`);
/// - `-` first, then a letter or `-` and a letter: a command-line flag
///   (`-m`, `--model`), which no reader takes for a number;
/// - a digit first, with no `:` and a letter that is no digit of any base
///   and no exponent (`200Gi`, `24.05-py3`, `12h`): not a number, a time or
///   a date (`1e3`, `0x1F`, `0b1`, `12:30` and `2024-01-01` stay quoted).
fn plain(s: &str) -> bool {
    let bytes = s.as_bytes();
    let Some(&first) = bytes.first() else {
        return false;
    };
    if !bytes
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'/' | b'-' | b'=' | b':'))
        || s.ends_with(':')
    {
        return false;
    }
    match first {
        b'/' => true,
        b'-' if s.eq_ignore_ascii_case("-inf") => false,
        b'-' => match bytes.get(1..3) {
            // `--x` or `-xy`: the letter after the dashes.
            Some([b'-', letter] | [letter, _]) => letter.is_ascii_alphabetic(),
            None => bytes.get(1).is_some_and(u8::is_ascii_alphabetic),
            _ => false,
        },
        b'0'..=b'9' => {
            !s.contains(':')
                && bytes.iter().any(|b| {
                    b.is_ascii_alphabetic()
                        && !b.is_ascii_hexdigit()
                        && !matches!(b, b'x' | b'X' | b'o' | b'O')
                })
        }
        _ if first.is_ascii_alphabetic() => !WORDS.iter().any(|w| w.eq_ignore_ascii_case(s)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The same bytes as serde-saphyr, on the shapes of an object and on
    /// the scalars its quoting is about.
    #[test]
    fn writes_what_serde_saphyr_writes() {
        let nasty = [
            "",
            "y",
            "Yes",
            "NO",
            "on",
            "null",
            "~",
            "NaN",
            ".inf",
            "-inf",
            "1e3",
            "0x1F",
            "0o17",
            "0755",
            "12:30",
            "1:2:3",
            "2024-01-01",
            "2024-01-01 10:00:00",
            "true",
            "False",
            "8",
            "-1",
            "+1",
            "1_000",
            "3.14",
            ".5",
            "- a",
            "-a",
            "--flag=1",
            "a: b",
            "a:b",
            "a:",
            ":a",
            "#x",
            "a #b",
            "a#b",
            "@x",
            "`x",
            "!x",
            "&x",
            "*x",
            "%x",
            "|x",
            ">x",
            "'x",
            "\"x",
            "[x]",
            "{x}",
            "x,y",
            "a b",
            " a",
            "a ",
            "\t",
            "é",
            "a\u{7f}",
            "---",
            "...",
            "--- x",
            "<<",
            "=",
            "?",
            "? x",
            "?x",
            "/dev/shm",
            "nvcr.io/nvidia/pytorch:24.05-py3",
            "Gi",
            "200Gi",
            "app.kubernetes.io/name",
            "a=b",
            "N",
            "Off",
        ];
        let mut values = vec![
            json!({"a": {}, "b": [], "c": [{}], "d": [[]], "e": null, "f": 1.5, "g": -3}),
            json!({"a": [{"b": 1, "c": [1, 2], "d": {"e": "f"}}, {"g": [{"h": "i"}]}]}),
            json!({"a": [[1, 2], [3]], "b": "multi\nline", "c": "x"}),
            json!({"": 1, "a b": 2, "nvidia.com/gpu": "8", "k:v": 1, "yes": 2, "1": 3}),
        ];
        for s in nasty {
            values.push(json!({"key": s, "list": [s, {"in": s}], s: 1}));
        }
        for value in values {
            assert_eq!(to_string(&value), whole(&value), "{value}");
        }
    }

    fn strings() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            // Near numbers, times and flags, where plain text ends.
            proptest::string::string_regex("[-+.0-9][-+.0-9a-zA-Z_:]{0,6}").unwrap(),
            any_text(),
        ]
    }

    fn any_text() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::string::string_regex("[a-zA-Z0-9 ._/:=#@!?,'\"~&*|>%`{}\\[\\]\t-]{0,10}").unwrap()
    }

    fn values() -> impl proptest::strategy::Strategy<Value = Json> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            strings().prop_map(Json::String),
            any::<i64>().prop_map(Json::from),
            any::<bool>().prop_map(Json::Bool),
            Just(Json::Null),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
                proptest::collection::btree_map(strings(), inner, 0..4)
                    .prop_map(|m| Json::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        #[test]
        fn generated_values_are_written_as_serde_saphyr_writes_them(value in values()) {
            let object = json!({"apiVersion": "v1", "kind": "X", "data": value});
            proptest::prop_assert_eq!(to_string(&object), whole(&object));
        }
    }
}
