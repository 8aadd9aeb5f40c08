//! A CEL expression's tree as cel-go v0.26.0 builds it (`common/ast`):
//! operators are calls (`_+_`, `_[_]`, `@in` …), macros are comprehensions.

use std::sync::Arc;

/// Names a qualified function is called by (`optional.of`, `sets.contains`,
/// `cel.@mapInsert`): parsed as a method of a name, called as one function
/// where no variable has the name.
pub(super) const NAMESPACES: &[&str] = &[
    "optional", "sets", "format", "lists", "strings", "math", "base64", "ip", "cel",
];

/// The accumulator of an expanded macro.
pub(super) const ACCUMULATOR: &str = "@result";

#[derive(Debug, Clone)]
pub(super) struct Expr {
    /// Byte offset in the source.
    pub at: u32,
    pub kind: Kind,
}

#[derive(Debug, Clone)]
pub(super) enum Kind {
    Literal(Literal),
    Ident(Arc<str>),
    /// `operand.field`, or `has(operand.field)` when `test`.
    Select {
        operand: Box<Expr>,
        field: Arc<str>,
        test: bool,
    },
    /// A call; `target` is the receiver of a method call.
    Call {
        function: Arc<str>,
        target: Option<Box<Expr>>,
        args: Vec<Expr>,
    },
    /// A list literal; the items marked optional (`[?x]`) are left out
    /// when empty.
    List {
        items: Vec<Expr>,
        optional: Vec<bool>,
    },
    Map {
        entries: Vec<Entry>,
    },
    /// `Name{field: value}`: a message, of which Kubernetes declares none.
    Struct {
        name: String,
        fields: Vec<(String, Expr, bool)>,
    },
    Comprehension(Box<Comprehension>),
}

#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub key: Expr,
    pub value: Expr,
    pub optional: bool,
}

#[derive(Debug, Clone)]
pub(super) enum Literal {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(Arc<str>),
    Bytes(Arc<[u8]>),
}

#[derive(Debug, Clone)]
pub(super) struct Comprehension {
    pub iter_var: Arc<str>,
    /// The second variable of a two-variable comprehension: the first is
    /// then the index (or key), this the value.
    pub iter_var2: Option<Arc<str>>,
    pub range: Expr,
    pub accu_var: Arc<str>,
    pub init: Expr,
    pub cond: Expr,
    pub step: Expr,
    pub result: Expr,
}

/// The dotted name an expression is, when it is one: `a.b.C`.
pub(super) fn dotted_name(expr: &Expr) -> Option<String> {
    match &expr.kind {
        Kind::Ident(name) => Some(name.to_string()),
        Kind::Select {
            operand,
            field,
            test: false,
        } => Some(format!("{}.{field}", dotted_name(operand)?)),
        _ => None,
    }
}

/// The dotted type's name (of [`TYPE_NAMES`]) a selection spells, when
/// it spells one: `google.protobuf.Duration`. Every selection asks, so
/// the last name is looked at before the dotted name is made.
pub(super) fn spelled_type(expr: &Expr) -> Option<&'static str> {
    let Kind::Select {
        field, test: false, ..
    } = &expr.kind
    else {
        return None;
    };
    if !ends_a_type_name(field) {
        return None;
    }
    let name = dotted_name(expr)?;
    TYPE_NAMES.iter().copied().find(|t| *t == name)
}

/// Whether `field` is the last name of a dotted type's name (of
/// [`TYPE_NAMES`]): a selection that ends otherwise names no type.
pub(super) fn ends_a_type_name(field: &str) -> bool {
    matches!(
        field,
        "Duration" | "Timestamp" | "URL" | "Quantity" | "Semver" | "IP" | "CIDR"
    )
}

/// How many times evaluating `expr` may read the variable `name`, the
/// more of a conditional's two ways; a read within a loop counts as many.
pub(super) fn reads(expr: &Expr, name: &str) -> u32 {
    let sum = |items: &mut dyn Iterator<Item = &Expr>| items.map(|e| reads(e, name)).sum();
    match &expr.kind {
        Kind::Literal(_) => 0,
        Kind::Ident(n) => u32::from(&**n == name),
        Kind::Select { operand, .. } => reads(operand, name),
        Kind::Call {
            function,
            target: None,
            args,
        } if &**function == "_?_:_" && args.len() == 3 => {
            reads(&args[0], name) + reads(&args[1], name).max(reads(&args[2], name))
        }
        Kind::Call { target, args, .. } => sum(&mut target.as_deref().into_iter().chain(args)),
        Kind::List { items, .. } => sum(&mut items.iter()),
        Kind::Map { entries } => sum(&mut entries.iter().flat_map(|e| [&e.key, &e.value])),
        Kind::Struct { fields, .. } => sum(&mut fields.iter().map(|(_, value, _)| value)),
        Kind::Comprehension(c) => {
            // Its own accumulator (every macro's is `@result`) and
            // iteration variables hide `name` where they are bound.
            let accumulator = &*c.accu_var == name;
            let iterated = &*c.iter_var == name || c.iter_var2.as_deref() == Some(name);
            let looped: u32 = if accumulator || iterated {
                0
            } else {
                sum(&mut [&c.cond, &c.step].into_iter())
            };
            let result = if accumulator {
                0
            } else {
                reads(&c.result, name)
            };
            reads(&c.range, name) + reads(&c.init, name) + looped.saturating_mul(2) + result
        }
    }
}

pub(super) fn call(at: u32, function: &str, target: Option<Expr>, args: Vec<Expr>) -> Expr {
    Expr {
        at,
        kind: Kind::Call {
            function: function.into(),
            target: target.map(Box::new),
            args,
        },
    }
}

pub(super) fn ident(at: u32, name: &str) -> Expr {
    Expr {
        at,
        kind: Kind::Ident(name.into()),
    }
}

pub(super) fn literal(at: u32, literal: Literal) -> Expr {
    Expr {
        at,
        kind: Kind::Literal(literal),
    }
}

pub(super) fn empty_list(at: u32) -> Expr {
    Expr {
        at,
        kind: Kind::List {
            items: vec![],
            optional: vec![],
        },
    }
}

/// Names CEL keeps for itself.
pub(super) const RESERVED: &[&str] = &[
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The names of types a rule may write (`int`, `google.protobuf.Duration`).
pub(super) const TYPE_NAMES: &[&str] = &[
    "bool",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "google.protobuf.Duration",
    "google.protobuf.Timestamp",
    "optional_type",
    "kubernetes.URL",
    "kubernetes.Quantity",
    "kubernetes.Semver",
    "net.IP",
    "net.CIDR",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dotted_type_name_is_spelled_by_its_selection() {
        for name in TYPE_NAMES.iter().filter(|n| n.contains('.')) {
            let mut parts = name.split('.');
            let first = parts.next().unwrap_or_default();
            let mut expr = ident(0, first);
            for part in parts {
                expr = Expr {
                    at: 0,
                    kind: Kind::Select {
                        operand: Box::new(expr),
                        field: part.into(),
                        test: false,
                    },
                };
            }
            assert_eq!(spelled_type(&expr), Some(*name));
            assert!(ends_a_type_name(
                name.rsplit('.').next().unwrap_or_default()
            ));
        }
    }
}
