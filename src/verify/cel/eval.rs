//! An expression evaluated as cel-go v0.26.0 evaluates it, counting its
//! cost as cel-go's cost tracker does (`interpreter/runtimecost.go`, with
//! Kubernetes' `library/cost.go` for the functions it prices): a name or
//! a selection costs 1, a list literal 10 and a map literal 30 unless all
//! they hold is constant, a function what [`super::functions::cost`]
//! says, `&&`, `||`, `?:` and comprehensions nothing of their own. The
//! evaluation stops, with the API server's words, the moment the cost
//! passes the limit: no expression runs longer than its limit allows.
//! Errors are values until something needs them: `&&` and `||` absorb an
//! error that the other side decides.

use std::sync::Arc;

use indexmap::IndexMap;

use super::ast::{
    Comprehension, Entry, Expr, Kind, Literal, NAMESPACES, TYPE_NAMES, dotted_name,
    ends_a_type_name, reads,
};
use super::functions;
use super::value::{Error, Key, List, Map, Result, Value};

/// One evaluation: its variables, its cost so far, its limit.
pub(super) struct Eval {
    vars: Vec<(Arc<str>, Value)>,
    /// The variable (its place in `vars`) a comprehension's step may take
    /// rather than copy: its accumulator, where the step reads it once.
    movable: Option<usize>,
    pub cost: u64,
    pub limit: u64,
    /// Constants are made once, when the program is planned, as the
    /// server plans it (`cel.OptOptimize`, k8s.io/apiserver v0.36.3
    /// `pkg/cel/environment/base.go`): a literal list, a map, a conversion
    /// of a constant cost nothing when run. Off as Kubernetes' library
    /// tests run their programs.
    pub folds: bool,
}

impl Eval {
    pub(super) fn new(limit: u64) -> Eval {
        Eval {
            vars: Vec::new(),
            movable: None,
            cost: 0,
            limit,
            folds: true,
        }
    }

    /// `expr` is made once, when the program is planned.
    fn constant(&self, expr: &Expr) -> bool {
        self.folds && is_constant(expr)
    }

    pub(super) fn bind(&mut self, name: &str, value: Value) {
        self.vars.push((name.into(), value));
    }

    /// Adds to the cost, and stops past the limit.
    pub(super) fn charge(&mut self, cost: u64) -> Result<()> {
        self.cost = self.cost.saturating_add(cost);
        if self.cost > self.limit {
            return Err(Error::Cancelled);
        }
        Ok(())
    }

    fn lookup(&self, name: &str) -> Option<&Value> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| &**n == name)
            .map(|(_, v)| v)
    }

    /// The expression's value: an error of the expression is a value
    /// ([`Value::Error`]), as in cel-go, carried on and charged for until
    /// something decides without it; only the cost limit stops.
    pub(super) fn eval(&mut self, expr: &Expr) -> Result<Value> {
        match &expr.kind {
            Kind::Literal(literal) => Ok(constant(literal)),
            Kind::Ident(name) => {
                // A type's name is a constant to cel-go's checker.
                if let (None, Some(t)) = (self.lookup(name), type_name(name)) {
                    return Ok(Value::Type(t.into()));
                }
                self.charge(1)?;
                if let Some(at) = self.movable
                    && self.vars.iter().rposition(|(n, _)| n == name) == Some(at)
                {
                    // Taken, not copied: the step's `_+_` then extends the
                    // list in place (`map` over 10,000 items copies no
                    // list 10,000 times).
                    return Ok(std::mem::replace(&mut self.vars[at].1, Value::Null));
                }
                Ok(self.ident(name))
            }
            Kind::Select {
                operand,
                field,
                test,
            } => {
                if let Some(t) = self.qualified_type(expr) {
                    return Ok(Value::Type(t.into()));
                }
                let relative = starts_relative(operand);
                let attribute = *test && is_attribute(operand);
                let operand = self.eval(operand)?;
                if !*test {
                    self.charge(1 + u64::from(relative))?;
                }
                if let Value::Error(_) = operand {
                    if attribute {
                        // `has()` over a name's fields is one attribute to
                        // cel-go: its name free as a presence test, each
                        // field reached 1, the one not found too
                        // (`evalTestOnly`, interpreter/attributes.go,
                        // cel-go v0.26.0). The name was charged.
                        self.cost = self.cost.saturating_sub(1);
                    }
                    return Ok(operand);
                }
                let result = if *test {
                    functions::has_field(&operand, field)
                } else {
                    functions::select(&operand, field)
                };
                Ok(value_of(result)?)
            }
            Kind::Call {
                function,
                target,
                args,
            } => self.call(function, target.as_deref(), args),
            Kind::List { items, optional } => {
                let constant = self.constant(expr);
                let mut values = Vec::with_capacity(items.len());
                let mut error = None;
                for (item, optional) in items.iter().zip(optional) {
                    let value = self.eval(item)?;
                    match (optional, value) {
                        (_, Value::Error(e)) => {
                            error = Some(Value::Error(e));
                            break;
                        }
                        (false, value) => values.push(value),
                        (true, Value::Optional(Some(inner))) => values.push((*inner).clone()),
                        (true, Value::Optional(None)) => {}
                        (true, _) => {
                            error = Some(Value::Error("no such overload".into()));
                            break;
                        }
                    }
                }
                if !constant {
                    self.charge(10)?;
                }
                Ok(error.unwrap_or_else(|| Value::list(values)))
            }
            Kind::Map { entries } => self.map(expr, entries),
            Kind::Struct { name, .. } => Ok(Value::Error(format!("unknown type: {name}").into())),
            Kind::Comprehension(c) => self.comprehension(c),
        }
    }

    /// A branch of `?:`: cel-go resolves a name or a selection there as an
    /// attribute, which charges its selections but not its name.
    fn branch(&mut self, expr: &Expr) -> Result<Value> {
        match &expr.kind {
            Kind::Ident(name) => Ok(self.ident(name)),
            Kind::Select {
                operand,
                field,
                test: false,
            } if is_attribute(operand) => {
                let operand = self.branch(operand)?;
                self.charge(1)?;
                if let Value::Error(_) = operand {
                    return Ok(operand);
                }
                value_of(functions::select(&operand, field))
            }
            _ => self.eval(expr),
        }
    }

    fn ident(&self, name: &str) -> Value {
        if let Some(value) = self.lookup(name) {
            return value.clone();
        }
        match type_name(name) {
            Some(name) => Value::Type(name.into()),
            None => Value::Error(format!("no such attribute(s): {name}").into()),
        }
    }

    /// `google.protobuf.Duration`: a dotted type's name, where its first
    /// part is no variable.
    fn qualified_type(&self, expr: &Expr) -> Option<&'static str> {
        // Told by the last name and the first, without making the name,
        // for every selection that is not one (`self.spec`).
        match &expr.kind {
            Kind::Select { field, .. } if ends_a_type_name(field) => {}
            _ => return None,
        }
        let mut root = expr;
        while let Kind::Select { operand, .. } = &root.kind {
            root = operand;
        }
        let Kind::Ident(root) = &root.kind else {
            return None;
        };
        let starts_a_type = TYPE_NAMES
            .iter()
            .any(|t| t.split_once('.').is_some_and(|(first, _)| first == &**root));
        if !starts_a_type || self.lookup(root).is_some() {
            return None;
        }
        type_name(&dotted_name(expr)?)
    }

    fn map(&mut self, expr: &Expr, entries: &[Entry]) -> Result<Value> {
        let constant = self.constant(expr);
        let mut map = IndexMap::with_capacity(entries.len());
        let mut error = None;
        for entry in entries {
            let key = self.eval(&entry.key)?;
            let value = self.eval(&entry.value)?;
            let value = match (entry.optional, key, value) {
                (_, Value::Error(e), _) | (_, _, Value::Error(e)) => {
                    error = Some(e);
                    break;
                }
                (false, key, value) => (key, value),
                (true, key, Value::Optional(Some(inner))) => (key, (*inner).clone()),
                (true, _, Value::Optional(None)) => continue,
                (true, _, _) => {
                    error = Some("no such overload".into());
                    break;
                }
            };
            let (key, value) = value;
            let Some(key) = Key::from_value(&key) else {
                error = Some(format!("unsupported key type: {}", key.type_name()).into());
                break;
            };
            if map.contains_key(&key) {
                error = Some(
                    format!(
                        "Failed with repeated key: {}",
                        super::value::shown(&key.value())
                    )
                    .into(),
                );
                break;
            }
            map.insert(key, value);
        }
        if !constant {
            self.charge(30)?;
        }
        Ok(match error {
            Some(e) => Value::Error(e),
            None => Value::Map(Map::plain(map)),
        })
    }

    fn call(&mut self, function: &str, target: Option<&Expr>, args: &[Expr]) -> Result<Value> {
        if matches!(function, "_[_]" | "_[?_]" | "_?._")
            && target.is_none()
            && args.first().is_some_and(starts_relative)
        {
            self.charge(1)?;
        }
        match (function, target, args) {
            ("_&&_" | "_||_", None, [a, b]) => return self.logical(function == "_&&_", a, b),
            ("_?_:_", None, [c, t, f]) => {
                return match self.eval(c)? {
                    Value::Bool(true) => self.branch(t),
                    Value::Bool(false) => self.branch(f),
                    error @ Value::Error(_) => Ok(error),
                    _ => Ok(Value::Error("no such overload".into())),
                };
            }
            ("@not_strictly_false", None, [a]) => {
                let value = self.eval(a)?;
                self.charge(1)?;
                return Ok(Value::Bool(!matches!(value, Value::Bool(false))));
            }
            ("or" | "orValue", Some(target), [other]) => {
                return match self.eval(target)? {
                    Value::Optional(Some(inner)) if function == "orValue" => Ok((*inner).clone()),
                    value @ Value::Optional(Some(_)) => Ok(value),
                    Value::Optional(None) => self.eval(other),
                    error @ Value::Error(_) => Ok(error),
                    _ => Ok(Value::Error("no such overload".into())),
                };
            }
            ("@in", None, [item, list]) if self.constant(list) && primitive_items(list) => {
                // cel-go's optimiser makes it a set lookup, which costs
                // nothing of its own.
                let item = self.eval(item)?;
                let list = self.eval(list)?;
                return Ok(match item {
                    Value::Error(_) => item,
                    item => value_of(functions::call("@in", None, &[item, list]))?,
                });
            }
            (
                "_[_]",
                None,
                [
                    operand,
                    Expr {
                        kind: Kind::Ident(name),
                        ..
                    },
                ],
            ) if is_attribute(operand) => {
                // `x[k]`: cel-go qualifies the attribute `x` by `k`, which
                // costs the qualification, not another name's.
                let operand = self.eval(operand)?;
                let index = self.ident(name);
                self.charge(1)?;
                return Ok(match (&operand, &index) {
                    (Value::Error(_), _) => operand,
                    (_, Value::Error(_)) => index,
                    _ => value_of(functions::call("_[_]", None, &[operand, index]))?,
                });
            }
            (_, None, [arg]) if CONVERSIONS.contains(&function) && self.constant(arg) => {
                // A conversion of a constant is made once, when the
                // program is planned: it costs nothing.
                let arg = self.eval(arg)?;
                return value_of(functions::call(function, None, &[arg]));
            }
            _ => {}
        }
        // `optional.of(x)`: a namespace is a function's name, unless a
        // variable has it.
        if let Some(Expr {
            kind: Kind::Ident(namespace),
            ..
        }) = target
            && NAMESPACES.contains(&&**namespace)
            && self.lookup(namespace).is_none()
        {
            let qualified = format!("{namespace}.{function}");
            return self.apply(&qualified, None, args);
        }
        self.apply(function, target, args)
    }

    /// A strict call: every argument evaluated (an error among them is the
    /// result), then the function, then its cost.
    fn apply(&mut self, function: &str, target: Option<&Expr>, args: &[Expr]) -> Result<Value> {
        let target = match target {
            Some(target) => Some(self.eval(target)?),
            None => None,
        };
        let mut values = Vec::with_capacity(args.len());
        for arg in args {
            values.push(self.eval(arg)?);
        }
        let error = target
            .iter()
            .chain(&values)
            .find(|v| matches!(v, Value::Error(_)))
            .cloned();
        let cost;
        let result = match error {
            Some(error) => error,
            None if function == "_+_"
                && target.is_none()
                && matches!(&values[..], [Value::List(_), Value::List(_)]) =>
            {
                // Lists joined with the left one's items extended in place
                // where nothing else holds them; `_+_`'s cost reads its
                // arguments alone.
                cost = functions::cost(function, None, &values, &Value::Null);
                self.charge(cost)?;
                return Ok(match (values.swap_remove(0), &values[0]) {
                    (Value::List(a), Value::List(b)) => Value::List(functions::join(a, b)),
                    _ => unreachable!("two lists"),
                });
            }
            None => value_of(functions::call(function, target.as_ref(), &values))?,
        };
        cost = functions::cost(function, target.as_ref(), &values, &result);
        self.charge(cost)?;
        Ok(result)
    }

    /// `&&` and `||`: both sides unless the left decides; an error is
    /// absorbed when the other side decides.
    fn logical(&mut self, and: bool, a: &Expr, b: &Expr) -> Result<Value> {
        let decided = !and;
        let mut error = None;
        for term in [a, b] {
            match self.eval(term)? {
                Value::Bool(v) if v == decided => return Ok(Value::Bool(decided)),
                Value::Bool(_) => {}
                e @ Value::Error(_) => {
                    error.get_or_insert(e);
                }
                _ => {
                    error.get_or_insert(Value::Error("no such overload".into()));
                }
            }
        }
        Ok(error.unwrap_or(Value::Bool(!decided)))
    }

    fn comprehension(&mut self, c: &Comprehension) -> Result<Value> {
        let range = self.eval(&c.range)?;
        if let Value::Error(_) = range {
            return Ok(range);
        }
        let accu = self.eval(&c.init)?;
        let mark = self.vars.len();
        self.vars.push((c.accu_var.clone(), accu));
        let result = self.fold(c, &range);
        self.vars.truncate(mark);
        result
    }

    fn fold(&mut self, c: &Comprehension, range: &Value) -> Result<Value> {
        let accu_at = self.vars.len() - 1;
        let pairs: Box<dyn Iterator<Item = (Value, Value)>> = match range {
            Value::List(List { items, .. }) => {
                let items = Arc::clone(items);
                Box::new((0..items.len()).map(move |i| (Value::Int(i as i64), items[i].clone())))
            }
            Value::Map(Map { entries, .. }) => {
                let entries = Arc::clone(entries);
                Box::new(
                    (0..entries.len()).filter_map(move |i| {
                        entries.get_index(i).map(|(k, v)| (k.value(), v.clone()))
                    }),
                )
            }
            other => {
                return Ok(Value::Error(
                    format!("got '{}', expected iterable type", other.type_name()).into(),
                ));
            }
        };
        let is_list = matches!(range, Value::List(_));
        let movable = (reads(&c.step, &c.accu_var) <= 1).then_some(accu_at);
        for (first, second) in pairs {
            let mark = self.vars.len();
            match &c.iter_var2 {
                Some(second_var) => {
                    self.vars.push((c.iter_var.clone(), first));
                    self.vars.push((second_var.clone(), second));
                }
                None if is_list => self.vars.push((c.iter_var.clone(), second)),
                None => self.vars.push((c.iter_var.clone(), first)),
            }
            let go_on = self.eval(&c.cond);
            let go_on = match go_on {
                Ok(value) => !matches!(value, Value::Bool(false)),
                Err(e) => {
                    self.vars.truncate(mark);
                    return Err(e);
                }
            };
            if !go_on {
                self.vars.truncate(mark);
                break;
            }
            let outer = std::mem::replace(&mut self.movable, movable);
            let step = self.eval(&c.step);
            self.movable = outer;
            self.vars.truncate(mark);
            self.vars[accu_at].1 = step?;
        }
        self.eval(&c.result)
    }
}

/// The type a name stands for, if it names one.
fn type_name(name: &str) -> Option<&'static str> {
    let name = name.strip_prefix('.').unwrap_or(name);
    TYPE_NAMES.iter().find(|t| **t == name).copied()
}

/// A function's result as a value: its error is one.
fn value_of(result: Result<Value>) -> Result<Value> {
    match result {
        Err(Error::Eval(message)) => Ok(Value::Error(message.into())),
        other => other,
    }
}

/// The type conversions, which cel-go's optimiser makes once for a
/// constant argument (`IsTypeConversionFunction`).
const CONVERSIONS: &[&str] = &[
    "bool",
    "bytes",
    "double",
    "duration",
    "dyn",
    "int",
    "string",
    "timestamp",
    "type",
    "uint",
];

/// Whether qualifying `operand` (by a field or an index) makes a new
/// attribute of its value, cel-go's `relativeAttr`, which costs 1 of its
/// own: a name, or a qualification of something, is an attribute already.
fn starts_relative(operand: &Expr) -> bool {
    match &operand.kind {
        Kind::Ident(_) | Kind::Select { test: false, .. } => false,
        Kind::Call {
            function,
            target: None,
            ..
        } => !matches!(&**function, "_[_]" | "_[?_]" | "_?._"),
        _ => true,
    }
}

/// A name, or selections of one: what cel-go plans as an attribute.
fn is_attribute(expr: &Expr) -> bool {
    match &expr.kind {
        Kind::Ident(_) => true,
        Kind::Select {
            operand,
            test: false,
            ..
        } => is_attribute(operand),
        _ => false,
    }
}

/// Whether a constant list holds only values cel-go can look up in a set
/// (no bytes, lists, maps).
fn primitive_items(list: &Expr) -> bool {
    match &list.kind {
        Kind::List { items, .. } => items.iter().all(|item| {
            matches!(
                item.kind,
                Kind::Literal(
                    Literal::Bool(_)
                        | Literal::Int(_)
                        | Literal::Uint(_)
                        | Literal::Double(_)
                        | Literal::String(_)
                )
            )
        }),
        _ => false,
    }
}

/// A literal's value.
fn constant(literal: &Literal) -> Value {
    match literal {
        Literal::Null => Value::Null,
        Literal::Bool(b) => Value::Bool(*b),
        Literal::Int(n) => Value::Int(*n),
        Literal::Uint(n) => Value::Uint(*n),
        Literal::Double(d) => Value::Double(*d),
        Literal::String(s) => Value::String(s.clone()),
        Literal::Bytes(b) => Value::Bytes(b.clone()),
    }
}

/// Whether cel-go's optimiser makes the expression a constant (a literal,
/// a conversion of one, or a list or map of constants), which then costs
/// nothing.
fn is_constant(expr: &Expr) -> bool {
    match &expr.kind {
        Kind::Literal(_) => true,
        Kind::Call {
            function,
            target: None,
            args,
        } => args.len() == 1 && CONVERSIONS.contains(&&**function) && is_constant(&args[0]),
        Kind::List { items, optional } => {
            optional.iter().all(|o| !o) && items.iter().all(is_constant)
        }
        Kind::Map { entries } => entries
            .iter()
            .all(|e| !e.optional && is_constant(&e.key) && is_constant(&e.value)),
        _ => false,
    }
}
