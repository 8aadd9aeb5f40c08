//! A CEL expression read into its syntax tree, as cel-go v0.26.0's parser
//! reads it (`parser/parser.go`, `parser/macro.go`, the grammar
//! `parser/gen/CEL.g4`): operators as calls (`_+_`, `_[_]`, `@in` …), the
//! macros expanded where they are written (`has`, `all`, `exists`,
//! `exists_one`, `map`, `filter`, the two-variable forms of
//! `ext.TwoVarComprehensions`, `optMap`, `optFlatMap`), optional syntax
//! (`a.?b`, `a[?i]`, `[?x]`, `{?k: v}`), and both of its depth limits: 250
//! nested expressions, and 250 nested operators, selections, indexes and
//! method calls on any path (`max recursion depth exceeded`), so that no
//! input nests deeper than that here either.

use super::ast::{Entry, Expr, Kind, Literal, RESERVED, call, dotted_name, ident, literal};
use super::lexer::{Lexer, SyntaxError, Token};
use super::macros::{balance, method};

/// cel-go's default for both of its depth limits.
pub(super) const MAX_DEPTH: u32 = 250;

/// cel-go's default limit on an expression's length, in code points.
pub(super) const MAX_CODE_POINTS: usize = 100_000;

/// Reads `source`, or says why it cannot.
pub(super) fn parse(source: &str) -> Result<Expr, SyntaxError> {
    let code_points = source.chars().count();
    if code_points > MAX_CODE_POINTS {
        return Err(SyntaxError {
            at: None,
            message: format!(
                "expression code point size exceeds limit: size: {code_points}, limit {MAX_CODE_POINTS}"
            ),
        });
    }
    let mut parser = Parser {
        lexer: Lexer::new(source),
        nesting: 0,
    };
    let (expr, depth) = parser.expr()?;
    match parser.lexer.peek()? {
        (Token::End, _) => {}
        (token, at) => {
            // ANTLR deletes one token where that ends the input, else
            // reports the token as mismatched.
            parser.lexer.next()?;
            let how = match parser.lexer.peek() {
                Ok((Token::End, _)) => "extraneous",
                _ => "mismatched",
            };
            return Err(SyntaxError {
                at: Some(at),
                message: format!(
                    "Syntax error: {how} input {} expecting <EOF>",
                    token.shown()
                ),
            });
        }
    }
    if depth > MAX_DEPTH {
        return Err(SyntaxError {
            at: None,
            message: "max recursion depth exceeded".to_owned(),
        });
    }
    Ok(expr)
}

/// A parsed piece and the depth cel-go's visitor reaches in it (it counts
/// conditionals, relations and arithmetic with an operator, selections,
/// method calls and indexes, each over the deepest of its parts).
type Parsed = (Expr, u32);

/// A field of a message literal: name, value, optional.
type Field = (String, Expr, bool);

struct Parser<'a> {
    lexer: Lexer<'a>,
    /// Expressions open within each other (the grammar's `expr` rule).
    nesting: u32,
}

impl<'a> Parser<'a> {
    fn error<T>(at: u32, message: String) -> Result<T, SyntaxError> {
        Err(SyntaxError {
            at: Some(at),
            message,
        })
    }

    fn expect(&mut self, wanted: &Token<'_>, what: &str) -> Result<u32, SyntaxError> {
        let (token, at) = self.lexer.next()?;
        if &token == wanted {
            return Ok(at);
        }
        Self::error(
            at,
            format!(
                "Syntax error: mismatched input {} expecting {what}",
                token.shown()
            ),
        )
    }

    fn eat(&mut self, wanted: &Token<'_>) -> Result<bool, SyntaxError> {
        if &self.lexer.peek()?.0 == wanted {
            self.lexer.next()?;
            return Ok(true);
        }
        Ok(false)
    }

    /// `expr`: a conditional or what it holds.
    fn expr(&mut self) -> Result<Parsed, SyntaxError> {
        self.nesting += 1;
        if self.nesting > MAX_DEPTH {
            return Err(SyntaxError {
                at: None,
                message: format!("expression recursion limit exceeded: {MAX_DEPTH}"),
            });
        }
        let result = self.conditional();
        self.nesting -= 1;
        result
    }

    fn conditional(&mut self) -> Result<Parsed, SyntaxError> {
        let (condition, d0) = self.logical(&Token::OrOr, "_||_")?;
        let (token, at) = self.lexer.peek()?;
        if token != Token::Question {
            return Ok((condition, d0));
        }
        self.lexer.next()?;
        let (truthy, d1) = self.logical(&Token::OrOr, "_||_")?;
        self.expect(&Token::Colon, "':'")?;
        let (falsy, d2) = self.expr()?;
        let depth = 1 + d0.max(d1).max(d2);
        Ok((
            call(at, "_?_:_", None, vec![condition, truthy, falsy]),
            depth,
        ))
    }

    /// `a || b || c` (or `&&`): cel-go balances the operands into a tree
    /// and counts none of it toward its depth.
    fn logical(&mut self, operator: &Token<'_>, function: &str) -> Result<Parsed, SyntaxError> {
        let mut terms = Vec::new();
        let mut depth = 0;
        loop {
            let (term, d) = if operator == &Token::OrOr {
                self.logical(&Token::AndAnd, "_&&_")?
            } else {
                self.relation()?
            };
            let (token, at) = self.lexer.peek()?;
            if terms.is_empty() && &token != operator {
                // One term, the most common case: no list made.
                return Ok((term, d));
            }
            depth = depth.max(d);
            terms.push(term);
            if &token != operator {
                break;
            }
            self.lexer.next()?;
            terms.push(ident(at, "")); // the operator's place
        }
        Ok((balance(function, terms), depth))
    }

    fn relation(&mut self) -> Result<Parsed, SyntaxError> {
        let (mut left, mut depth) = self.addition()?;
        loop {
            let (token, at) = self.lexer.peek()?;
            let function = match token {
                Token::Less => "_<_",
                Token::LessEq => "_<=_",
                Token::Greater => "_>_",
                Token::GreaterEq => "_>=_",
                Token::EqEq => "_==_",
                Token::NotEq => "_!=_",
                Token::In => "@in",
                _ => return Ok((left, depth)),
            };
            self.lexer.next()?;
            let (right, d) = self.addition()?;
            depth = 1 + depth.max(d);
            left = call(at, function, None, vec![left, right]);
        }
    }

    fn addition(&mut self) -> Result<Parsed, SyntaxError> {
        let (mut left, mut depth) = self.multiplication()?;
        loop {
            let (token, at) = self.lexer.peek()?;
            let function = match token {
                Token::Plus => "_+_",
                Token::Minus => "_-_",
                _ => return Ok((left, depth)),
            };
            self.lexer.next()?;
            let (right, d) = self.multiplication()?;
            depth = 1 + depth.max(d);
            left = call(at, function, None, vec![left, right]);
        }
    }

    fn multiplication(&mut self) -> Result<Parsed, SyntaxError> {
        let (mut left, mut depth) = self.unary()?;
        loop {
            let (token, at) = self.lexer.peek()?;
            let function = match token {
                Token::Star => "_*_",
                Token::Slash => "_/_",
                Token::Percent => "_%_",
                _ => return Ok((left, depth)),
            };
            self.lexer.next()?;
            let (right, d) = self.unary()?;
            depth = 1 + depth.max(d);
            left = call(at, function, None, vec![left, right]);
        }
    }

    /// `!`s and `-`s: an even number of them is none (cel-go drops them);
    /// a `-` right before a number is the number's sign.
    fn unary(&mut self) -> Result<Parsed, SyntaxError> {
        let (token, at) = self.lexer.peek()?;
        let (operator, function) = match token {
            Token::Bang => (Token::Bang, "!_"),
            Token::Minus => (Token::Minus, "-_"),
            _ => return self.member(),
        };
        let mut count = 0;
        while self.lexer.peek()?.0 == operator {
            self.lexer.next()?;
            count += 1;
        }
        if operator == Token::Minus
            && count == 1
            && let (Token::Int(_) | Token::Double(_), _) = self.lexer.peek()?
        {
            let (number, number_at) = self.lexer.next()?;
            let value = match number {
                Token::Int(text) => Literal::Int(Self::int(text, true, number_at)?),
                Token::Double(value) => Literal::Double(-value),
                _ => unreachable!("peeked a number"),
            };
            return self.member_rest((literal(at, value), 0));
        }
        let (operand, depth) = self.member()?;
        if count % 2 == 0 {
            return Ok((operand, depth));
        }
        Ok((call(at, function, None, vec![operand]), depth))
    }

    fn int(text: &str, negative: bool, at: u32) -> Result<i64, SyntaxError> {
        let (digits, radix) = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            Some(hex) => (hex, 16),
            None => (text, 10),
        };
        // The lexer gave digits only: their magnitude, then its sign
        // (-2^63 is an int, 2^63 is not).
        let magnitude = u64::from_str_radix(digits, radix).ok();
        let value = match magnitude {
            Some(m) if negative => 0i64.checked_sub_unsigned(m),
            Some(m) => i64::try_from(m).ok(),
            None => None,
        };
        value.map_or_else(
            || {
                Self::error(
                    at,
                    format!(
                        "invalid int literal: {}{text}",
                        if negative { "-" } else { "" }
                    ),
                )
            },
            Ok,
        )
    }

    fn member(&mut self) -> Result<Parsed, SyntaxError> {
        let primary = self.primary()?;
        self.member_rest(primary)
    }

    /// Selections, method calls and indexes after a primary.
    fn member_rest(&mut self, (mut expr, mut depth): Parsed) -> Result<Parsed, SyntaxError> {
        loop {
            let (token, at) = self.lexer.peek()?;
            match token {
                Token::Dot | Token::DotQuestion => {
                    self.lexer.next()?;
                    let optional = token == Token::DotQuestion;
                    let (name, name_at) = self.name()?;
                    if !optional && self.lexer.peek()?.0 == Token::LParen {
                        // cel-go places a call at its parenthesis.
                        let (_, paren) = self.lexer.next()?;
                        let (args, d) = self.list_of(&Token::RParen)?;
                        depth = 1 + depth.max(d);
                        expr = method(paren, name, expr, args)?;
                        continue;
                    }
                    depth += 1;
                    expr = if optional {
                        call(
                            at,
                            "_?._",
                            None,
                            vec![expr, literal(name_at, Literal::String(name.into()))],
                        )
                    } else {
                        Expr {
                            at,
                            kind: Kind::Select {
                                operand: Box::new(expr),
                                field: name.into(),
                                test: false,
                            },
                        }
                    };
                }
                Token::LBracket | Token::LBracketQuestion => {
                    self.lexer.next()?;
                    let (index, d) = self.expr()?;
                    self.expect(&Token::RBracket, "']'")?;
                    depth = 1 + depth.max(d);
                    let function = if token == Token::LBracket {
                        "_[_]"
                    } else {
                        "_[?_]"
                    };
                    expr = call(at, function, None, vec![expr, index]);
                }
                Token::LBrace if dotted_name(&expr).is_some() => {
                    let name = dotted_name(&expr).unwrap_or_default();
                    self.lexer.next()?;
                    let (fields, d) = self.fields()?;
                    depth = depth.max(d);
                    expr = Expr {
                        at,
                        kind: Kind::Struct { name, fields },
                    };
                }
                _ => return Ok((expr, depth)),
            }
        }
    }

    fn name(&mut self) -> Result<(&'a str, u32), SyntaxError> {
        match self.lexer.next()? {
            (Token::Ident(name), at) => Ok((name, at)),
            (Token::Backtick(_), at) => Self::error(at, "unsupported syntax: '`'".to_owned()),
            (token, at) => Self::error(
                at,
                format!(
                    "Syntax error: mismatched input {} expecting IDENTIFIER",
                    token.shown()
                ),
            ),
        }
    }

    /// Expressions separated by commas up to `close` (a trailing comma
    /// allowed), and the deepest of them.
    fn list_of(&mut self, close: &Token<'_>) -> Result<(Vec<Expr>, u32), SyntaxError> {
        let mut items = Vec::new();
        let mut depth = 0;
        if self.eat(close)? {
            return Ok((items, depth));
        }
        loop {
            let (item, d) = self.expr()?;
            depth = depth.max(d);
            items.push(item);
            if self.eat(&Token::Comma)? {
                if self.eat(close)? {
                    return Ok((items, depth));
                }
                continue;
            }
            self.expect(close, &close.shown())?;
            return Ok((items, depth));
        }
    }

    fn fields(&mut self) -> Result<(Vec<Field>, u32), SyntaxError> {
        let mut fields = Vec::new();
        let mut depth = 0;
        if self.eat(&Token::RBrace)? {
            return Ok((fields, depth));
        }
        loop {
            let optional = self.eat(&Token::Question)?;
            let (name, _) = self.name()?;
            self.expect(&Token::Colon, "':'")?;
            let (value, d) = self.expr()?;
            depth = depth.max(d);
            fields.push((name.to_owned(), value, optional));
            if self.eat(&Token::Comma)? {
                if self.eat(&Token::RBrace)? {
                    return Ok((fields, depth));
                }
                continue;
            }
            self.expect(&Token::RBrace, "'}'")?;
            return Ok((fields, depth));
        }
    }

    fn primary(&mut self) -> Result<Parsed, SyntaxError> {
        let (token, at) = self.lexer.next()?;
        Ok(match token {
            Token::Int(text) => (literal(at, Literal::Int(Self::int(text, false, at)?)), 0),
            Token::Uint(value) => (literal(at, Literal::Uint(value)), 0),
            Token::Double(value) => (literal(at, Literal::Double(value)), 0),
            Token::String(text) => (literal(at, Literal::String(text)), 0),
            Token::Bytes(bytes) => (literal(at, Literal::Bytes(bytes)), 0),
            Token::True => (literal(at, Literal::Bool(true)), 0),
            Token::False => (literal(at, Literal::Bool(false)), 0),
            Token::Null => (literal(at, Literal::Null), 0),
            Token::LParen => {
                let inner = self.expr()?;
                self.expect(&Token::RParen, "')'")?;
                inner
            }
            Token::LBracket => {
                let mut items = Vec::new();
                let mut optional = Vec::new();
                let mut depth = 0;
                if !self.eat(&Token::RBracket)? {
                    loop {
                        optional.push(self.eat(&Token::Question)?);
                        let (item, d) = self.expr()?;
                        depth = depth.max(d);
                        items.push(item);
                        if self.eat(&Token::Comma)? {
                            if self.eat(&Token::RBracket)? {
                                break;
                            }
                            continue;
                        }
                        self.expect(&Token::RBracket, "']'")?;
                        break;
                    }
                }
                (
                    Expr {
                        at,
                        kind: Kind::List { items, optional },
                    },
                    depth,
                )
            }
            Token::LBrace => {
                let mut entries = Vec::new();
                let mut depth = 0;
                if !self.eat(&Token::RBrace)? {
                    loop {
                        let optional = self.eat(&Token::Question)?;
                        let (key, d0) = self.expr()?;
                        self.expect(&Token::Colon, "':'")?;
                        let (value, d1) = self.expr()?;
                        depth = depth.max(d0).max(d1);
                        entries.push(Entry {
                            key,
                            value,
                            optional,
                        });
                        if self.eat(&Token::Comma)? {
                            if self.eat(&Token::RBrace)? {
                                break;
                            }
                            continue;
                        }
                        self.expect(&Token::RBrace, "'}'")?;
                        break;
                    }
                }
                (
                    Expr {
                        at,
                        kind: Kind::Map { entries },
                    },
                    depth,
                )
            }
            Token::Dot => {
                // `.name`: a name from the root of the container.
                let (name, name_at) = self.name()?;
                self.ident_or_call(&format!(".{name}"), name_at)?
            }
            Token::Ident(name) => self.ident_or_call(name, at)?,
            Token::Backtick(_) => return Self::error(at, "unsupported syntax: '`'".to_owned()),
            other => {
                return Self::error(
                    at,
                    format!(
                        "Syntax error: mismatched input {} expecting {{'[', '{{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}}",
                        other.shown()
                    ),
                );
            }
        })
    }

    fn ident_or_call(&mut self, name: &str, at: u32) -> Result<Parsed, SyntaxError> {
        if RESERVED.contains(&name) {
            return Self::error(at, format!("reserved identifier: {name}"));
        }
        if self.lexer.peek()?.0 != Token::LParen {
            return Ok((ident(at, name), 0));
        }
        // cel-go places a call (and a macro's expansion) at its parenthesis.
        let (_, at) = self.lexer.next()?;
        let (args, depth) = self.list_of(&Token::RParen)?;
        let name = name.strip_prefix('.').unwrap_or(name);
        if name == "has" && args.len() == 1 {
            let mut args = args;
            let arg = args.pop().unwrap_or_else(|| ident(at, ""));
            return match arg.kind {
                Kind::Select { operand, field, .. } => Ok((
                    Expr {
                        at,
                        kind: Kind::Select {
                            operand,
                            field,
                            test: true,
                        },
                    },
                    depth,
                )),
                _ => Self::error(arg.at, "invalid argument to has() macro".to_owned()),
            };
        }
        Ok((call(at, name, None, args), depth))
    }
}
