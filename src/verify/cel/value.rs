//! CEL's values as cel-go v0.26.0 holds them (`common/types/`): their
//! equality (heterogeneous: `1 == 1.0 == 1u`), their order, their sizes
//! (what cost is counted in), their type names; and the lists a schema
//! makes sets (`x-kubernetes-list-type: set`, compared and joined as
//! sets) or maps (`map`, keyed by `x-kubernetes-list-map-keys`), as
//! Kubernetes' `pkg/apiserver/schema/cel/values.go` makes them.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use indexmap::IndexMap;

use super::net::Cidr;
use super::quantity::Quantity;
use super::semver::Semver;
use super::time::{Duration, Timestamp};
use super::url::Url;

/// Why an evaluation gave no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Error {
    /// An error of the expression (`no such key: x`, `division by zero`).
    Eval(String),
    /// The cost limit was passed.
    Cancelled,
}

pub(super) type Result<T> = std::result::Result<T, Error>;

pub(super) fn fail<T>(message: impl Into<String>) -> Result<T> {
    Err(Error::Eval(message.into()))
}

pub(super) fn no_overload<T>() -> Result<T> {
    fail("no such overload")
}

#[derive(Debug, Clone)]
pub(super) enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(Arc<str>),
    Bytes(Arc<[u8]>),
    Duration(Duration),
    Timestamp(Timestamp),
    List(List),
    Map(Map),
    Type(Arc<str>),
    Optional(Option<Arc<Value>>),
    /// A value of one of Kubernetes' libraries (a quantity, a URL …).
    Extension(Arc<Extension>),
    /// A value that does not fit its schema: the server's error, raised
    /// where a rule reads it.
    Error(Arc<str>),
}

/// A list, and how its schema has it compared and joined.
#[derive(Debug, Clone)]
pub(super) struct List {
    pub items: Arc<Vec<Value>>,
    pub kind: ListKind,
    /// What `sum()` of the list is when it is empty: the zero of the
    /// items' type, which cel-go's checker takes from the schema.
    pub zero: Option<Arc<Value>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ListKind {
    Plain,
    /// `x-kubernetes-list-type: set`: order does not matter, `+` adds
    /// what is not there yet.
    Set,
    /// `x-kubernetes-list-type: map` keyed by these fields: order does
    /// not matter, `+` replaces an item of the same keys.
    Map(Arc<[String]>),
}

/// A map, or an object (whose fields its schema declares, named by its
/// type).
#[derive(Debug, Clone)]
pub(super) struct Map {
    pub entries: Arc<IndexMap<Key, Value>>,
    pub object: Option<Arc<str>>,
}

/// A call's operands as cel-go's cost functions see them, the receiver
/// first, without collecting them.
#[derive(Clone, Copy)]
pub(super) struct Operands<'a> {
    pub target: Option<&'a Value>,
    pub args: &'a [Value],
}

impl<'a> Operands<'a> {
    pub(super) fn get(self, i: usize) -> Option<&'a Value> {
        match self.target {
            Some(target) if i == 0 => Some(target),
            Some(_) => self.args.get(i - 1),
            None => self.args.get(i),
        }
    }

    pub(super) fn first(self) -> Option<&'a Value> {
        self.get(0)
    }

    pub(super) fn len(self) -> usize {
        self.args.len() + usize::from(self.target.is_some())
    }

    /// The size of operand `i` as the tracker counts it; 1 where there is
    /// none.
    pub(super) fn size(self, i: usize) -> u64 {
        self.get(i).map_or(1, Value::size)
    }
}

/// A map's key: CEL's keys are bools, ints, uints and strings; an int and
/// a uint of the same number are the same key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Key {
    Bool(bool),
    Int(i64),
    Uint(u64),
    String(Arc<str>),
}

/// A string key hashes as a `&str` with its variant's tag, so that a
/// field is looked up by its name without making a key of it.
impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            Key::Bool(b) => (0u8, b).hash(state),
            Key::Int(n) => (1u8, n).hash(state),
            Key::Uint(n) => (2u8, n).hash(state),
            Key::String(s) => FieldName(s).hash(state),
        }
    }
}

/// A field's name, looked up in a map as the string key it equals.
struct FieldName<'a>(&'a str);

impl Hash for FieldName<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (3u8, self.0).hash(state);
    }
}

impl indexmap::Equivalent<Key> for FieldName<'_> {
    fn equivalent(&self, key: &Key) -> bool {
        matches!(key, Key::String(s) if &**s == self.0)
    }
}

impl Key {
    pub(super) fn from_value(value: &Value) -> Option<Key> {
        Some(match value {
            Value::Bool(b) => Key::Bool(*b),
            Value::Int(n) => Key::Int(*n),
            Value::Uint(n) => match i64::try_from(*n) {
                Ok(n) => Key::Int(n),
                Err(_) => Key::Uint(*n),
            },
            Value::String(s) => Key::String(s.clone()),
            _ => return None,
        })
    }

    /// The key for a lookup with `value`, which may be a double holding a
    /// whole number (cel-go looks those up as ints).
    pub(super) fn lookup(value: &Value) -> Option<Key> {
        match value {
            Value::Double(d) if d.fract() == 0.0 && d.abs() < 9.2e18 => Some(Key::Int(*d as i64)),
            other => Key::from_value(other),
        }
    }

    pub(super) fn value(&self) -> Value {
        match self {
            Key::Bool(b) => Value::Bool(*b),
            Key::Int(n) => Value::Int(*n),
            Key::Uint(n) => Value::Uint(*n),
            Key::String(s) => Value::String(s.clone()),
        }
    }
}

impl List {
    pub(super) fn plain(items: Vec<Value>) -> List {
        List {
            items: Arc::new(items),
            kind: ListKind::Plain,
            zero: None,
        }
    }
}

impl Map {
    pub(super) fn plain(entries: IndexMap<Key, Value>) -> Map {
        Map {
            entries: Arc::new(entries),
            object: None,
        }
    }

    pub(super) fn get(&self, key: &Value) -> Option<&Value> {
        self.entries.get(&Key::lookup(key)?)
    }

    pub(super) fn field(&self, name: &str) -> Option<&Value> {
        self.entries.get(&FieldName(name))
    }
}

impl Value {
    pub(super) fn string(text: impl Into<Arc<str>>) -> Value {
        Value::String(text.into())
    }

    pub(super) fn list(items: Vec<Value>) -> Value {
        Value::List(List::plain(items))
    }

    /// The name of the value's type, as `type()` gives it and errors say it.
    pub(super) fn type_name(&self) -> Arc<str> {
        Arc::from(match self {
            Value::Null => "null_type",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Uint(_) => "uint",
            Value::Double(_) => "double",
            Value::String(_) => "string",
            Value::Bytes(_) => "bytes",
            Value::Duration(_) => "google.protobuf.Duration",
            Value::Timestamp(_) => "google.protobuf.Timestamp",
            Value::List(_) => "list",
            Value::Map(m) => return m.object.clone().unwrap_or_else(|| Arc::from("map")),
            Value::Type(_) => "type",
            Value::Optional(_) => "optional_type",
            Value::Extension(e) => e.type_name(),
            Value::Error(_) => "error",
        })
    }

    /// Its size as cel-go's cost tracker counts it: code points of a
    /// string, bytes, items, entries; an optional's value's; else 1.
    pub(super) fn size(&self) -> u64 {
        match self {
            Value::String(s) => s.chars().count() as u64,
            Value::Bytes(b) => b.len() as u64,
            Value::List(l) => l.items.len() as u64,
            Value::Map(m) => m.entries.len() as u64,
            Value::Optional(Some(v)) => v.size(),
            Value::Extension(e) => e.size(),
            _ => 1,
        }
    }

    /// CEL's `==`: numbers equal across types, lists item by item (sets
    /// and map lists whatever their order), maps entry by entry.
    pub(super) fn equals(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::String(a), Value::String(b)) | (Value::Type(a), Value::Type(b)) => a == b,
            (Value::Bytes(a), Value::Bytes(b)) => a == b,
            (Value::Duration(a), Value::Duration(b)) => a == b,
            (Value::Timestamp(a), Value::Timestamp(b)) => a == b,
            (Value::Optional(a), Value::Optional(b)) => match (a, b) {
                (None, None) => true,
                (Some(a), Some(b)) => a.equals(b),
                _ => false,
            },
            (Value::List(a), Value::List(b)) => lists_equal(a, b),
            (Value::Map(a), Value::Map(b)) => {
                a.entries.len() == b.entries.len()
                    && a.entries
                        .iter()
                        .all(|(k, v)| b.entries.get(k).is_some_and(|w| v.equals(w)))
            }
            (Value::Extension(a), Value::Extension(b)) => a.equals(b),
            (a, b) => match numeric_order(a, b) {
                Some(order) => order == Ordering::Equal,
                None => false,
            },
        }
    }
}

fn lists_equal(a: &List, b: &List) -> bool {
    if a.items.len() != b.items.len() {
        return false;
    }
    match (&a.kind, &b.kind) {
        (ListKind::Set, _) | (_, ListKind::Set) => {
            a.items.iter().all(|x| b.items.iter().any(|y| x.equals(y)))
                && b.items.iter().all(|y| a.items.iter().any(|x| x.equals(y)))
        }
        (ListKind::Map(keys), _) | (_, ListKind::Map(keys)) => a.items.iter().all(|x| {
            let found = b.items.iter().find(|y| same_keys(keys, x, y));
            found.is_some_and(|y| x.equals(y))
        }),
        _ => a.items.iter().zip(b.items.iter()).all(|(x, y)| x.equals(y)),
    }
}

/// Whether two items of a map list have the same values at its keys.
pub(super) fn same_keys(keys: &[String], a: &Value, b: &Value) -> bool {
    let (Value::Map(a), Value::Map(b)) = (a, b) else {
        return false;
    };
    keys.iter().all(|k| match (a.field(k), b.field(k)) {
        (Some(x), Some(y)) => x.equals(y),
        (None, None) => true,
        _ => false,
    })
}

/// The order of two numbers of any of CEL's three numeric types.
pub(super) fn numeric_order(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Uint(x), Value::Uint(y)) => Some(x.cmp(y)),
        (Value::Double(x), Value::Double(y)) => x.partial_cmp(y),
        (Value::Int(x), Value::Uint(y)) => Some(if *x < 0 {
            Ordering::Less
        } else {
            (*x as u64).cmp(y)
        }),
        (Value::Int(x), Value::Double(y)) => int_double(*x, *y),
        (Value::Uint(x), Value::Double(y)) => uint_double(*x, *y),
        (Value::Uint(_) | Value::Double(_), Value::Int(_)) | (Value::Double(_), Value::Uint(_)) => {
            numeric_order(b, a).map(Ordering::reverse)
        }
        _ => None,
    }
}

fn int_double(x: i64, y: f64) -> Option<Ordering> {
    if y.is_nan() {
        return None;
    }
    if y >= 9_223_372_036_854_775_808.0 {
        return Some(Ordering::Less);
    }
    if y < -9_223_372_036_854_775_808.0 {
        return Some(Ordering::Greater);
    }
    let whole = y.trunc();
    Some((x).cmp(&(whole as i64)).then_with(|| {
        if y > whole {
            Ordering::Less
        } else if y < whole {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    }))
}

fn uint_double(x: u64, y: f64) -> Option<Ordering> {
    if y.is_nan() {
        return None;
    }
    if y < 0.0 {
        return Some(Ordering::Greater);
    }
    if y >= 18_446_744_073_709_551_616.0 {
        return Some(Ordering::Less);
    }
    let whole = y.trunc();
    Some(x.cmp(&(whole as u64)).then_with(|| {
        if y > whole {
            Ordering::Less
        } else {
            Ordering::Equal
        }
    }))
}

/// `<` and its kin: numbers across types, strings, bytes, bools,
/// durations, timestamps; `None` where CEL has no such overload.
pub(super) fn order(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Bytes(x), Value::Bytes(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        (Value::Duration(x), Value::Duration(y)) => Some(x.cmp(y)),
        (Value::Timestamp(x), Value::Timestamp(y)) => Some(x.cmp(y)),
        _ => numeric_order(a, b),
    }
}

/// `base * factor` rounded up, as cel-go prices traversals.
pub(super) fn ceil(base: u64, factor: f64) -> u64 {
    (base as f64 * factor).ceil() as u64
}

/// cel-go's `StringTraversalCostFactor` and `RegexStringLengthCostFactor`.
pub(super) const TRAVERSAL: f64 = 0.1;
pub(super) const REGEX: f64 = 0.25;

/// A value as an error message quotes it.
pub(super) fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        Value::Int(n) => n.to_string(),
        Value::Uint(n) => format!("{n}u"),
        Value::Double(d) => d.to_string(),
        Value::Bool(b) => b.to_string(),
        other => other.type_name().to_string(),
    }
}

/// A value of one of Kubernetes' libraries.
#[derive(Debug)]
pub(super) enum Extension {
    Url(Url),
    Quantity(Quantity),
    Semver(Semver),
    Ip(std::net::IpAddr),
    Cidr(Cidr),
    /// A named format (`format.dns1123Label()`), by its name.
    Format(&'static str),
}

impl Extension {
    pub(super) fn type_name(&self) -> &'static str {
        match self {
            Extension::Url(_) => "kubernetes.URL",
            Extension::Quantity(_) => "kubernetes.Quantity",
            Extension::Semver(_) => "kubernetes.Semver",
            Extension::Ip(_) => "net.IP",
            Extension::Cidr(_) => "net.CIDR",
            Extension::Format(_) => "kubernetes.NamedFormat",
        }
    }

    pub(super) fn equals(&self, other: &Extension) -> bool {
        match (self, other) {
            (Extension::Url(a), Extension::Url(b)) => a.text == b.text,
            (Extension::Quantity(a), Extension::Quantity(b)) => a.compare(*b) == Ordering::Equal,
            (Extension::Semver(a), Extension::Semver(b)) => a.compare(b) == Ordering::Equal,
            (Extension::Ip(a), Extension::Ip(b)) => a == b,
            (Extension::Cidr(a), Extension::Cidr(b)) => a == b,
            (Extension::Format(a), Extension::Format(b)) => a == b,
            _ => false,
        }
    }

    /// `string(value)`, where the library has one.
    pub(super) fn text(&self) -> Option<String> {
        match self {
            Extension::Ip(ip) => Some(ip.to_string()),
            Extension::Cidr(cidr) => Some(cidr.text()),
            _ => None,
        }
    }

    /// Its size as the cost tracker counts it (`Size()`): an address's
    /// bytes, a prefix's bits in bytes.
    pub(super) fn size(&self) -> u64 {
        match self {
            Extension::Ip(ip) => {
                if ip.is_ipv4() {
                    4
                } else {
                    16
                }
            }
            Extension::Cidr(cidr) => u64::from(cidr.bits).div_ceil(8),
            _ => 1,
        }
    }
}
