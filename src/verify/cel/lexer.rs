//! CEL's tokens (cel-go v0.26.0, `parser/gen/CEL.g4`): numbers, strings
//! and bytes in all their quotings with their escapes, names, operators.

use std::sync::Arc;

/// A syntax error: its message, and where (`None`: no place, as cel-go
/// reports its depth limits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SyntaxError {
    pub at: Option<u32>,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Token<'a> {
    /// A name, or an int's digits, as written in the source.
    Int(&'a str),
    Uint(u64),
    Double(f64),
    String(Arc<str>),
    Bytes(Arc<[u8]>),
    Ident(&'a str),
    Backtick(&'a str),
    True,
    False,
    Null,
    In,
    Dot,
    DotQuestion,
    Comma,
    Colon,
    Question,
    LParen,
    RParen,
    LBracket,
    LBracketQuestion,
    RBracket,
    LBrace,
    RBrace,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Bang,
    Less,
    LessEq,
    Greater,
    GreaterEq,
    EqEq,
    NotEq,
    AndAnd,
    OrOr,
    End,
}

impl Token<'_> {
    /// The token as a syntax error quotes it.
    pub(super) fn shown(&self) -> String {
        let text = match self {
            Token::End => "<EOF>".to_owned(),
            Token::Int(text) => (*text).to_owned(),
            Token::Uint(n) => format!("{n}u"),
            Token::Double(n) => n.to_string(),
            Token::String(_) | Token::Bytes(_) => "a literal".to_owned(),
            Token::Ident(name) => (*name).to_owned(),
            Token::Backtick(name) => format!("`{name}`"),
            other => match other {
                Token::True => "true",
                Token::False => "false",
                Token::Null => "null",
                Token::In => "in",
                Token::Dot => ".",
                Token::DotQuestion => ".?",
                Token::Comma => ",",
                Token::Colon => ":",
                Token::LParen => "(",
                Token::RParen => ")",
                Token::LBracket => "[",
                Token::LBracketQuestion => "[?",
                Token::RBracket => "]",
                Token::LBrace => "{",
                Token::RBrace => "}",
                Token::Plus => "+",
                Token::Minus => "-",
                Token::Star => "*",
                Token::Slash => "/",
                Token::Percent => "%",
                Token::Bang => "!",
                Token::Less => "<",
                Token::LessEq => "<=",
                Token::Greater => ">",
                Token::GreaterEq => ">=",
                Token::EqEq => "==",
                Token::NotEq => "!=",
                Token::AndAnd => "&&",
                Token::OrOr => "||",
                _ => "?",
            }
            .to_owned(),
        };
        format!("'{text}'")
    }
}

pub(super) struct Lexer<'a> {
    source: &'a str,
    at: usize,
    peeked: Option<(Token<'a>, u32)>,
}

fn error<T>(at: usize, message: impl Into<String>) -> Result<T, SyntaxError> {
    Err(SyntaxError {
        at: Some(u32::try_from(at).unwrap_or(u32::MAX)),
        message: message.into(),
    })
}

impl<'a> Lexer<'a> {
    pub(super) fn new(source: &'a str) -> Lexer<'a> {
        Lexer {
            source,
            at: 0,
            peeked: None,
        }
    }

    pub(super) fn peek(&mut self) -> Result<(Token<'a>, u32), SyntaxError> {
        if self.peeked.is_none() {
            self.peeked = Some(self.read()?);
        }
        Ok(self.peeked.clone().unwrap_or((Token::End, 0)))
    }

    pub(super) fn next(&mut self) -> Result<(Token<'a>, u32), SyntaxError> {
        match self.peeked.take() {
            Some(token) => Ok(token),
            None => self.read(),
        }
    }

    fn rest(&self) -> &'a str {
        &self.source[self.at..]
    }

    fn skip_space(&mut self) {
        let bytes = self.source.as_bytes();
        loop {
            while bytes
                .get(self.at)
                .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c'))
            {
                self.at += 1;
            }
            if bytes[self.at..].starts_with(b"//") {
                let rest = &bytes[self.at..];
                self.at += rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
                continue;
            }
            return;
        }
    }

    fn read(&mut self) -> Result<(Token<'a>, u32), SyntaxError> {
        self.skip_space();
        let start = self.at;
        let at = u32::try_from(start).unwrap_or(u32::MAX);
        let rest = self.rest();
        let Some(first) = rest.chars().next() else {
            return Ok((Token::End, at));
        };
        let second = rest.as_bytes().get(1).copied().unwrap_or(0);
        let token = match (first, second) {
            ('.', b'?') => Some(Token::DotQuestion),
            ('[', b'?') => Some(Token::LBracketQuestion),
            ('<', b'=') => Some(Token::LessEq),
            ('>', b'=') => Some(Token::GreaterEq),
            ('=', b'=') => Some(Token::EqEq),
            ('!', b'=') => Some(Token::NotEq),
            ('&', b'&') => Some(Token::AndAnd),
            ('|', b'|') => Some(Token::OrOr),
            _ => None,
        };
        if let Some(token) = token {
            self.at += 2;
            return Ok((token, at));
        }
        if first.is_ascii_digit()
            || (first == '.' && rest[1..].starts_with(|c: char| c.is_ascii_digit()))
        {
            return Ok((self.number()?, at));
        }
        if first == '_' || first.is_ascii_alphabetic() {
            let end = rest
                .find(|c: char| c != '_' && !c.is_ascii_alphanumeric())
                .unwrap_or(rest.len());
            let word = &rest[..end];
            let quote = rest[end..].chars().next();
            if matches!(quote, Some('"' | '\''))
                && word.len() <= 2
                && word.chars().all(|c| matches!(c, 'r' | 'R' | 'b' | 'B'))
            {
                let raw = word.contains(['r', 'R']);
                let bytes = word.contains(['b', 'B']);
                if word.len() == 1 || raw != bytes {
                    self.at += end;
                    return Ok((self.quoted(raw, bytes, start)?, at));
                }
            }
            self.at += end;
            let token = match word {
                "true" => Token::True,
                "false" => Token::False,
                "null" => Token::Null,
                "in" => Token::In,
                _ => Token::Ident(word),
            };
            return Ok((token, at));
        }
        if first == '"' || first == '\'' {
            return Ok((self.quoted(false, false, start)?, at));
        }
        if first == '`' {
            let end = rest[1..].find('`').map_or_else(
                || error(start, "Syntax error: token recognition error at: '`'"),
                Ok,
            )?;
            self.at += end + 2;
            return Ok((Token::Backtick(&rest[1..=end]), at));
        }
        let token = match first {
            '.' => Token::Dot,
            ',' => Token::Comma,
            ':' => Token::Colon,
            '?' => Token::Question,
            '(' => Token::LParen,
            ')' => Token::RParen,
            '[' => Token::LBracket,
            ']' => Token::RBracket,
            '{' => Token::LBrace,
            '}' => Token::RBrace,
            '+' => Token::Plus,
            '-' => Token::Minus,
            '*' => Token::Star,
            '/' => Token::Slash,
            '%' => Token::Percent,
            '!' => Token::Bang,
            '<' => Token::Less,
            '>' => Token::Greater,
            other => {
                return error(
                    start,
                    format!("Syntax error: token recognition error at: '{other}'"),
                );
            }
        };
        self.at += first.len_utf8();
        Ok((token, at))
    }

    fn number(&mut self) -> Result<Token<'a>, SyntaxError> {
        let start = self.at;
        let rest = self.rest();
        let bytes = rest.as_bytes();
        if (rest.starts_with("0x") || rest.starts_with("0X"))
            && bytes.get(2).is_some_and(u8::is_ascii_hexdigit)
        {
            let end = 2 + rest[2..]
                .find(|c: char| !c.is_ascii_hexdigit())
                .unwrap_or(rest.len() - 2);
            let digits = &rest[..end];
            self.at += end;
            if self.rest().starts_with(['u', 'U']) {
                self.at += 1;
                return u64::from_str_radix(&digits[2..], 16)
                    .map(Token::Uint)
                    .or_else(|_| error(start, format!("invalid uint literal: {digits}u")));
            }
            return Ok(Token::Int(digits));
        }
        let digits = |from: usize| {
            from + rest[from..]
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len() - from)
        };
        let mut end = digits(0);
        let mut float = false;
        if bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit) {
            end = digits(end + 1);
            float = true;
        }
        if matches!(bytes.get(end), Some(b'e' | b'E')) {
            let mut exp = end + 1;
            if matches!(bytes.get(exp), Some(b'+' | b'-')) {
                exp += 1;
            }
            if bytes.get(exp).is_some_and(u8::is_ascii_digit) {
                end = digits(exp);
                float = true;
            }
        }
        let text = &rest[..end];
        self.at += end;
        if float {
            return text
                .parse::<f64>()
                .map(Token::Double)
                .or_else(|_| error(start, format!("invalid double literal: {text}")));
        }
        if self.rest().starts_with(['u', 'U']) {
            self.at += 1;
            return text
                .parse::<u64>()
                .map(Token::Uint)
                .or_else(|_| error(start, format!("invalid uint literal: {text}u")));
        }
        Ok(Token::Int(text))
    }

    /// A quoted string or bytes from its opening quote on.
    fn quoted(&mut self, raw: bool, bytes: bool, start: usize) -> Result<Token<'a>, SyntaxError> {
        let rest = self.rest();
        let quote = rest.chars().next().unwrap_or('"');
        let triple: String = std::iter::repeat_n(quote, 3).collect();
        let (delimiter, body_start) = if rest.starts_with(&triple) {
            (triple.as_str(), 3)
        } else {
            (&rest[..1], 1)
        };
        let body = &rest[body_start..];
        let mut out: Vec<u8> = Vec::new();
        let mut chars = body.char_indices();
        // As ANTLR's lexer reports it: the text it read from the quote to
        // the end, or through the line break a quoted string cannot hold
        // (after `""`, an empty string it falls back to, where a third
        // quote opened no closed string), as `getErrorDisplay` shows it.
        let (source, quote_at) = (self.source, self.at);
        let unterminated = || {
            let from = quote_at + body_start.saturating_sub(1);
            let text = &source[from..];
            let end = text[1..].find(['\n', '\r']).map_or(text.len(), |i| i + 2);
            let shown = text[..end]
                .replace('\n', "\\n")
                .replace('\r', "\\r")
                .replace('\t', "\\t");
            error(
                from,
                format!("Syntax error: token recognition error at: '{shown}'"),
            )
        };
        loop {
            let Some((i, c)) = chars.next() else {
                return unterminated();
            };
            if body[i..].starts_with(delimiter) {
                self.at += body_start + i + delimiter.len();
                break;
            }
            if delimiter.len() == 1 && (c == '\n' || c == '\r') {
                return unterminated();
            }
            if c != '\\' || raw {
                if raw && c == '\\' {
                    // A raw string keeps the backslash, and the quote after
                    // it does not end the string.
                    out.push(b'\\');
                    if let Some((_, next)) = chars.clone().next()
                        && next == quote
                    {
                        chars.next();
                        out.push(quote as u8);
                    }
                    continue;
                }
                let mut buf = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                continue;
            }
            let Some((j, escaped)) = chars.next() else {
                return unterminated();
            };
            let at = start + body_start + j - 1;
            escape(escaped, &mut chars, &mut out, bytes, at)?;
        }
        if bytes {
            return Ok(Token::Bytes(out.into()));
        }
        String::from_utf8(out)
            .map(|text| Token::String(text.into()))
            .or_else(|_| error(start, "Syntax error: a string literal that is not UTF-8"))
    }
}

/// The escape after a backslash (`\n`, `\x41`, `\u00e9`, `\101` …)
/// appended to `out`.
fn escape(
    escaped: char,
    chars: &mut std::str::CharIndices<'_>,
    out: &mut Vec<u8>,
    bytes: bool,
    at: usize,
) -> Result<(), SyntaxError> {
    let simple = match escaped {
        'a' => Some(7),
        'b' => Some(8),
        'f' => Some(12),
        'n' => Some(b'\n'),
        'r' => Some(b'\r'),
        't' => Some(b'\t'),
        'v' => Some(11),
        '\\' => Some(b'\\'),
        '\'' => Some(b'\''),
        '"' => Some(b'"'),
        '`' => Some(b'`'),
        '?' => Some(b'?'),
        _ => None,
    };
    if let Some(byte) = simple {
        out.push(byte);
        return Ok(());
    }
    let hex = |n: usize, chars: &mut std::str::CharIndices<'_>| -> Option<u32> {
        let text: String = (0..n)
            .filter_map(|_| chars.next().map(|(_, c)| c))
            .collect();
        (text.len() == n && text.chars().all(|c| c.is_ascii_hexdigit()))
            .then(|| u32::from_str_radix(&text, 16).ok())
            .flatten()
    };
    let bad = || {
        error(
            at,
            "Syntax error: token recognition error at: invalid escape sequence",
        )
    };
    match escaped {
        'x' | 'X' => {
            let Some(value) = hex(2, chars) else {
                return bad();
            };
            push_code(out, value, bytes);
        }
        'u' | 'U' => {
            let n = if escaped == 'u' { 4 } else { 8 };
            let Some(value) = hex(n, chars) else {
                return bad();
            };
            if bytes {
                return error(at, "Syntax error: unicode escape in a bytes literal");
            }
            let Some(c) = char::from_u32(value) else {
                return error(
                    at,
                    format!("Syntax error: invalid unicode code point {value:#x}"),
                );
            };
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
        '0'..='3' => {
            let digits: String = std::iter::once(escaped)
                .chain((0..2).filter_map(|_| chars.next().map(|(_, c)| c)))
                .collect();
            let Some(value) = (digits.len() == 3 && digits.chars().all(|c| c.is_digit(8)))
                .then(|| u32::from_str_radix(&digits, 8).ok())
                .flatten()
            else {
                return bad();
            };
            push_code(out, value, bytes);
        }
        _ => return bad(),
    }
    Ok(())
}

/// A `\x` or octal escape: a byte in bytes, a code point in a string.
fn push_code(out: &mut Vec<u8>, value: u32, bytes: bool) {
    if bytes {
        out.push(u8::try_from(value).unwrap_or(u8::MAX));
    } else if let Some(c) = char::from_u32(value) {
        let mut buf = [0; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }
}
