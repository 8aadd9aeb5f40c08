//! CEL's types as the checker reasons with them (cel-go v0.26.0
//! `common/types/types.go`, `checker/types.go`): the type a schema node
//! declares (k8s.io/apiserver v0.36.3 `pkg/cel/common/schemas.go`,
//! `SchemaDeclType`, its object types named by `types.go`,
//! `MaybeAssignTypeName`), how one type is assigned to another with type
//! parameters bound on the way, and each type's name as cel-go's errors
//! write it (`checker/format.go`, `FormatCELType`).

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use serde_json::Value as Json;

/// A map whose keys nobody but trainc chooses (a tree's addresses, type
/// parameters, the library's function names): they need no hashing
/// against floods, only their bits spread, and the checker looks them up
/// for every node of a hundred thousand rules.
pub(super) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// Fibonacci hashing, a word at a time, the high bits folded into the low
/// ones the table indexes by.
#[derive(Default)]
pub(super) struct FastHasher(u64);

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
}

// reason: `Type::Type` is CEL's own name for the type of types.
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Clone)]
pub(super) enum Type {
    Dyn,
    /// What trainc cannot tell (a function it has no declaration of): as
    /// `dyn`, but never the ground of an error.
    Unknown,
    Error,
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Duration,
    Timestamp,
    List(Box<Type>),
    Map(Box<Type>, Box<Type>),
    /// A schema's object: its name (`selfType.spec`) and fields, by
    /// their escaped names.
    Object(Arc<Object>),
    /// A type as a value: `type(int)`, or `type` alone.
    Type(Option<Box<Type>>),
    /// `optional_type(T)`, `kubernetes.Quantity` …
    Opaque(&'static str, Vec<Type>),
    /// A type parameter, bound as overloads are resolved.
    Param(u32),
}

#[derive(Debug)]
pub(super) struct Object {
    pub name: String,
    pub fields: BTreeMap<String, Type>,
}

/// A type without parameters, by its CEL name.
pub(super) fn scalar(name: &str) -> Option<Type> {
    Some(match name {
        "dyn" => Type::Dyn,
        "null_type" => Type::Null,
        "bool" => Type::Bool,
        "int" => Type::Int,
        "uint" => Type::Uint,
        "double" => Type::Double,
        "string" => Type::String,
        "bytes" => Type::Bytes,
        _ => return None,
    })
}

pub(super) fn optional(inner: Type) -> Type {
    Type::Opaque("optional_type", vec![inner])
}

impl Type {
    pub(super) fn list(item: Type) -> Type {
        Type::List(Box::new(item))
    }

    pub(super) fn map(key: Type, value: Type) -> Type {
        Type::Map(Box::new(key), Box::new(value))
    }

    /// The type an optional holds, and whether it is one.
    pub(super) fn unwrap_optional(&self) -> (&Type, bool) {
        match self {
            Type::Opaque("optional_type", params) if params.len() == 1 => (&params[0], true),
            _ => (self, false),
        }
    }

    pub(super) fn is_dyn_or_error(&self) -> bool {
        matches!(self, Type::Dyn | Type::Unknown | Type::Error)
    }

    /// `t.IsExactType`: the same kind, name and parameters.
    /// What trainc cannot type is exactly any type: it is never the
    /// ground of an error.
    pub(super) fn exact(&self, other: &Type) -> bool {
        match (self, other) {
            (Type::Unknown, _) | (_, Type::Unknown) => true,
            (Type::List(a), Type::List(b)) => a.exact(b),
            (Type::Map(a, b), Type::Map(c, d)) => a.exact(c) && b.exact(d),
            (Type::Object(a), Type::Object(b)) => a.name == b.name,
            (Type::Type(a), Type::Type(b)) => match (a, b) {
                (Some(a), Some(b)) => a.exact(b),
                (None, None) => true,
                _ => false,
            },
            (Type::Opaque(a, p), Type::Opaque(b, q)) => {
                a == b && p.len() == q.len() && p.iter().zip(q).all(|(x, y)| x.exact(y))
            }
            (Type::Param(a), Type::Param(b)) => a == b,
            _ => std::mem::discriminant(self) == std::mem::discriminant(other),
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Dyn | Type::Unknown => f.write_str("dyn"),
            Type::Error => f.write_str("!error!"),
            Type::Null => f.write_str("null"),
            Type::Bool => f.write_str("bool"),
            Type::Int => f.write_str("int"),
            Type::Uint => f.write_str("uint"),
            Type::Double => f.write_str("double"),
            Type::String => f.write_str("string"),
            Type::Bytes => f.write_str("bytes"),
            Type::Duration => f.write_str("duration"),
            Type::Timestamp => f.write_str("timestamp"),
            Type::List(item) => write!(f, "list({item})"),
            Type::Map(key, value) => write!(f, "map({key}, {value})"),
            Type::Object(object) => f.write_str(&object.name),
            Type::Type(None) => f.write_str("type"),
            Type::Type(Some(inner)) => write!(f, "type({inner})"),
            Type::Opaque(name, params) if params.is_empty() => f.write_str(name),
            Type::Opaque(name, params) => {
                write!(f, "{name}(")?;
                for (n, p) in params.iter().enumerate() {
                    if n > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{p}")?;
                }
                f.write_str(")")
            }
            Type::Param(n) => write!(f, "_var{n}"),
        }
    }
}

/// A property name as a CEL field's (`escaping.go`, `Escape`): `-`, `.`,
/// `/` and `__` spelled out, a reserved word wrapped; `None` where the
/// name cannot be one (a leading digit, another character).
pub(super) fn escape(name: &str) -> Option<String> {
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if matches!(name, "true" | "false" | "null" | "in") || super::ast::RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        let (text, len) = match c {
            '_' if rest.starts_with("__") => ("__underscores__", 2),
            '.' => ("__dot__", 1),
            '-' => ("__dash__", 1),
            '/' => ("__slash__", 1),
            c if c.is_ascii_alphanumeric() || c == '_' => (&rest[..1], 1),
            _ => return None,
        };
        out.push_str(text);
        rest = &rest[len..];
    }
    Some(out)
}

/// Whether a schema node is an embedded resource's root
/// (`x-kubernetes-embedded-resource`).
pub(super) fn embedded(schema: &Json) -> bool {
    schema["x-kubernetes-embedded-resource"].as_bool() == Some(true)
}

/// The type the API server declares for a schema node's values
/// (`SchemaDeclType`), its objects named below `name`; `None` where it
/// declares none (no `type`, an array without `items`).
pub(super) fn of_schema(schema: &Json, root: bool, name: &str) -> Option<Type> {
    of_node(schema, root, name, 0)
}

fn of_node(schema: &Json, root: bool, name: &str, depth: usize) -> Option<Type> {
    if depth > super::MAX_DEPTH {
        return Some(Type::Dyn);
    }
    if schema["x-kubernetes-int-or-string"].as_bool() == Some(true) {
        return Some(Type::Dyn);
    }
    let kind = schema["type"].as_str().or(root.then_some("object"));
    match kind? {
        "array" => {
            let items = &schema["items"];
            if !items.is_object() {
                return None;
            }
            let item = of_node(items, embedded(items), &format!("{name}.@idx"), depth + 1)?;
            Some(Type::list(item))
        }
        "object" => {
            let more = &schema["additionalProperties"];
            if more.is_object() {
                let value = of_node(more, embedded(more), &format!("{name}.@elem"), depth + 1)?;
                return Some(Type::map(Type::String, value));
            }
            let mut fields = BTreeMap::new();
            for (key, child) in schema["properties"].as_object().into_iter().flatten() {
                let Some(field) = escape(key) else { continue };
                let child_name = format!("{name}.{field}");
                if let Some(t) = of_node(child, embedded(child), &child_name, depth + 1) {
                    fields.insert(field, t);
                }
            }
            if root {
                add_object_meta(&mut fields, schema, name);
            }
            Some(Type::Object(Arc::new(Object {
                name: name.to_owned(),
                fields,
            })))
        }
        "string" => Some(match schema["format"].as_str() {
            Some("byte") => Type::Bytes,
            Some("duration") => Type::Duration,
            Some("date" | "date-time") => Type::Timestamp,
            _ => Type::String,
        }),
        "boolean" => Some(Type::Bool),
        "number" => Some(Type::Double),
        "integer" => Some(Type::Int),
        _ => None,
    }
}

/// A resource's root reads `apiVersion`, `kind`, `metadata.name` and
/// `metadata.generateName` whatever its schema says
/// (`WithTypeAndObjectMeta`), unless it declares them all as strings.
fn add_object_meta(fields: &mut BTreeMap<String, Type>, schema: &Json, name: &str) {
    if declares_object_meta(schema) {
        return;
    }
    fields.insert("kind".to_owned(), Type::String);
    fields.insert("apiVersion".to_owned(), Type::String);
    let meta_fields = [
        ("name".to_owned(), Type::String),
        ("generateName".to_owned(), Type::String),
    ];
    fields.insert(
        "metadata".to_owned(),
        Type::Object(Arc::new(Object {
            name: format!("{name}.metadata"),
            fields: meta_fields.into_iter().collect(),
        })),
    );
}

/// Whether a resource's schema declares `apiVersion`, `kind`,
/// `metadata.name` and `metadata.generateName` as strings, as
/// `WithTypeAndObjectMeta` asks before it adds them.
pub(super) fn declares_object_meta(schema: &Json) -> bool {
    let is = |s: &Json, t: &str| s["type"].as_str() == Some(t);
    let props = &schema["properties"];
    let meta = &props["metadata"];
    is(&props["kind"], "string")
        && is(&props["apiVersion"], "string")
        && is(meta, "object")
        && is(&meta["properties"]["name"], "string")
        && is(&meta["properties"]["generateName"], "string")
}

/// Type parameters bound so far, with a journal of the bindings made so
/// that a failed attempt is undone without copying the whole mapping.
#[derive(Debug, Default)]
pub(super) struct Mapping {
    bound: FastMap<u32, Type>,
    journal: Vec<(u32, Option<Type>)>,
}

impl Mapping {
    /// `t` with every bound parameter replaced (`substitute`); unbound
    /// ones `dyn` when `to_dyn`.
    pub(super) fn substitute(&self, t: &Type, to_dyn: bool) -> Type {
        match t {
            Type::Param(n) => match self.bound.get(n) {
                Some(bound) => self.substitute(bound, to_dyn),
                None if to_dyn => Type::Dyn,
                None => t.clone(),
            },
            Type::List(item) => Type::list(self.substitute(item, to_dyn)),
            Type::Map(k, v) => Type::map(self.substitute(k, to_dyn), self.substitute(v, to_dyn)),
            Type::Type(Some(inner)) => Type::Type(Some(Box::new(self.substitute(inner, to_dyn)))),
            Type::Opaque(name, params) => Type::Opaque(
                name,
                params.iter().map(|p| self.substitute(p, to_dyn)).collect(),
            ),
            other => other.clone(),
        }
    }

    fn bind(&mut self, n: u32, t: Type) {
        let old = self.bound.insert(n, t);
        self.journal.push((n, old));
    }

    /// Undoes the bindings made since the journal was `mark` long.
    fn undo(&mut self, mark: usize) {
        while self.journal.len() > mark {
            let Some((n, old)) = self.journal.pop() else {
                break;
            };
            match old {
                Some(t) => self.bound.insert(n, t),
                None => self.bound.remove(&n),
            };
        }
    }

    /// Whether `from` may be given where `to` is expected, binding
    /// parameters as it goes (`isAssignable`); the mapping is unchanged
    /// when not.
    pub(super) fn assign(&mut self, from: &Type, to: &Type) -> bool {
        self.attempt(|m| m.assignable(from, to))
    }

    pub(super) fn assign_all(&mut self, from: &[Type], to: &[Type]) -> bool {
        self.attempt(|m| {
            from.len() == to.len() && from.iter().zip(to).all(|(f, t)| m.assignable(f, t))
        })
    }

    /// `bind`'s bindings kept when `f` holds, undone when not.
    fn attempt(&mut self, f: impl FnOnce(&mut Mapping) -> bool) -> bool {
        let mark = self.journal.len();
        if f(self) {
            return true;
        }
        self.undo(mark);
        false
    }

    fn assignable(&mut self, t1: &Type, t2: &Type) -> bool {
        if let Type::Param(_) = t2 {
            let (valid, bound) = self.substitution(t1, t2);
            if valid {
                return true;
            }
            if bound {
                return false;
            }
        }
        if let Type::Param(_) = t1 {
            return self.substitution(t2, t1).0;
        }
        if t1.is_dyn_or_error() || t2.is_dyn_or_error() {
            return true;
        }
        if matches!(t1, Type::Null) {
            return nullable(t2);
        }
        if matches!(t2, Type::Null) {
            return nullable(t1);
        }
        match (t1, t2) {
            (Type::Type(_), other) => matches!(other, Type::Type(_)),
            (Type::List(a), Type::List(b)) => self.assignable(a, b),
            (Type::Map(a, b), Type::Map(c, d)) => self.assignable(a, c) && self.assignable(b, d),
            (Type::Opaque(a, p), Type::Opaque(b, q)) => {
                a == b && p.len() == q.len() && p.iter().zip(q).all(|(x, y)| self.assignable(x, y))
            }
            (Type::Object(a), Type::Object(b)) => a.name == b.name,
            (a, b) => {
                !matches!(a, Type::List(_) | Type::Map(..) | Type::Opaque(..))
                    && std::mem::discriminant(a) == std::mem::discriminant(b)
            }
        }
    }

    /// Whether `t2` (a parameter) may stand for `t1`, and whether it
    /// was bound already (`isValidTypeSubstitution`).
    fn substitution(&mut self, t1: &Type, t2: &Type) -> (bool, bool) {
        let Type::Param(n) = t2 else {
            return (false, false);
        };
        if t1.exact(t2) {
            return (true, true);
        }
        if let Some(bound) = self.bound.get(n).cloned() {
            if t1.exact(&bound) {
                return (true, true);
            }
            if self.assignable(t1, &bound) {
                let general = most_general(t1, &bound);
                if !self.occurs(*n, &general) {
                    self.bind(*n, general);
                }
                return (true, true);
            }
            return (false, true);
        }
        if !self.occurs(*n, t1) {
            self.bind(*n, t1.clone());
            return (true, false);
        }
        (false, false)
    }

    /// Whether parameter `n` occurs within `t`.
    fn occurs(&self, n: u32, t: &Type) -> bool {
        match t {
            Type::Param(m) if *m == n => true,
            Type::Param(m) => self.bound.get(m).is_some_and(|b| self.occurs(n, b)),
            Type::List(item) => self.occurs(n, item),
            Type::Map(k, v) => self.occurs(n, k) || self.occurs(n, v),
            Type::Type(Some(inner)) => self.occurs(n, inner),
            Type::Opaque(_, params) => params.iter().any(|p| self.occurs(n, p)),
            _ => false,
        }
    }
}

/// Whether null may be given for `t` (`internalIsAssignableNull`).
fn nullable(t: &Type) -> bool {
    matches!(
        t,
        Type::Opaque(..) | Type::Object(_) | Type::Duration | Type::Timestamp | Type::Null
    )
}

/// The more general of two types known to agree (`mostGeneral`).
pub(super) fn most_general(t1: &Type, t2: &Type) -> Type {
    if less_specific(t1, t2) {
        t1.clone()
    } else {
        t2.clone()
    }
}

fn less_specific(t1: &Type, t2: &Type) -> bool {
    if matches!(t1, Type::Dyn | Type::Unknown | Type::Param(_)) {
        return true;
    }
    if matches!(t2, Type::Dyn | Type::Unknown | Type::Param(_)) {
        return false;
    }
    match (t1, t2) {
        (Type::Opaque(a, p), Type::Opaque(b, q)) => {
            a == b && p.len() == q.len() && p.iter().zip(q).all(|(x, y)| less_specific(x, y))
        }
        (Type::List(a), Type::List(b)) => less_specific(a, b),
        (Type::Map(a, b), Type::Map(c, d)) => less_specific(a, c) && less_specific(b, d),
        (Type::Type(_), Type::Type(_)) => true,
        _ => t1.exact(t2),
    }
}
