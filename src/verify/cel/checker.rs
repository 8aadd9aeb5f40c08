//! A rule's types checked as the API server checks them when a CRD is
//! created (cel-go v0.26.0 `checker/checker.go`, with Kubernetes'
//! homogeneous aggregate literals, `cel/validator.go`): `self` typed by
//! its schema ([`super::types::of_schema`]), every field selected
//! declared, every call matching one of its overloads
//! ([`super::overloads`]), a comprehension's range a list or a map, the
//! items of a literal list or map of one type. The first error by
//! position is the one a message gives, worded as cel-go words it.

use std::sync::Arc;

use super::ast::{Comprehension, Expr, Kind, Literal, NAMESPACES, TYPE_NAMES, spelled_type};
use super::overloads::{self, Overload};
use super::types::{FastMap, Mapping, Type, optional};

/// A type error: where, and cel-go's words.
pub(super) type Issue = (u32, String);

/// A checked expression, as the cost estimate reads it: its type, each
/// node's type (cel-go's `TypeMap`) and each call's function with the
/// overloads it may take (`ReferenceMap`), nodes keyed by [`node`].
pub(super) struct Checked {
    pub result: Type,
    pub types: Nodes<Type>,
    pub calls: Nodes<Called>,
}

/// A call as checked: the function (a namespaced one by its full name)
/// and every overload its arguments' types may take; none where an
/// argument's type is one trainc cannot tell.
pub(super) struct Called {
    pub function: Arc<str>,
    pub overloads: Vec<&'static Overload>,
}

/// A node's key in [`Checked`]: its address in the tree checked.
pub(super) fn node(expr: &Expr) -> usize {
    std::ptr::from_ref(expr) as usize
}

/// A map keyed by [`node`].
pub(super) type Nodes<V> = FastMap<usize, V>;

struct Checker {
    scope: Vec<(Arc<str>, Type)>,
    mapping: Mapping,
    next_param: u32,
    issues: Vec<Issue>,
    /// The item types of each literal list, and the key and value types
    /// of each literal map, for the homogeneity check once all is typed.
    literals: Vec<Vec<(u32, Type)>>,
    /// Within a call of `format`, whose literals the validator lets be
    /// of unlike types (strings' `stringFormatValidator`).
    in_format: u32,
    types: Nodes<Type>,
    calls: Nodes<Called>,
}

/// `expr` checked with `vars` declared, or its first type error; a
/// literal of unlike item types refused (as Kubernetes' environments
/// refuse it) when `homogeneous`, else typed `dyn`.
pub(super) fn check(
    expr: &Expr,
    vars: Vec<(Arc<str>, Type)>,
    homogeneous: bool,
) -> Result<Checked, Issue> {
    let mut checker = Checker {
        scope: vars,
        mapping: Mapping::default(),
        next_param: 0,
        issues: Vec::new(),
        literals: Vec::new(),
        in_format: 0,
        types: Nodes::default(),
        calls: Nodes::default(),
    };
    let t = checker.check(expr);
    if homogeneous && checker.issues.is_empty() {
        checker.homogeneous();
    }
    if let Some(first) = checker.issues.iter().min_by_key(|(at, _)| *at) {
        return Err(first.clone());
    }
    let mapping = &checker.mapping;
    let types = (checker.types.into_iter())
        .map(|(at, t)| (at, mapping.substitute(&t, true)))
        .collect();
    Ok(Checked {
        result: mapping.substitute(&t, true),
        types,
        calls: checker.calls,
    })
}

impl Checker {
    fn issue(&mut self, at: u32, message: String) {
        self.issues.push((at, message));
    }

    fn fresh(&mut self) -> Type {
        self.next_param += 1;
        Type::Param(self.next_param)
    }

    fn resolved(&self, t: &Type) -> Type {
        self.mapping.substitute(t, false)
    }

    fn check(&mut self, expr: &Expr) -> Type {
        let t = self.check_kind(expr);
        self.types.insert(node(expr), t.clone());
        t
    }

    fn check_kind(&mut self, expr: &Expr) -> Type {
        match &expr.kind {
            Kind::Literal(literal) => match literal {
                Literal::Null => Type::Null,
                Literal::Bool(_) => Type::Bool,
                Literal::Int(_) => Type::Int,
                Literal::Uint(_) => Type::Uint,
                Literal::Double(_) => Type::Double,
                Literal::String(_) => Type::String,
                Literal::Bytes(_) => Type::Bytes,
            },
            Kind::Ident(name) => self.ident(expr.at, name),
            Kind::Select {
                operand,
                field,
                test,
            } => {
                if let Some(name) = spelled_type(expr) {
                    return type_value(name);
                }
                let t = self.select(expr.at, operand, field, false);
                if *test { Type::Bool } else { t }
            }
            Kind::Call {
                function,
                target,
                args,
            } => self.call(expr, function, target.as_deref(), args),
            Kind::List { items, optional } => {
                let mut joined: Option<Type> = None;
                let mut seen = Vec::with_capacity(items.len());
                for (n, item) in items.iter().enumerate() {
                    let mut t = self.check(item);
                    if optional.get(n) == Some(&true) {
                        t = self.optional_item(item.at, &t);
                    }
                    seen.push((item.at, t.clone()));
                    joined = Some(self.join(joined, t));
                }
                self.literal(seen);
                let item = joined.unwrap_or_else(|| self.fresh());
                Type::list(item)
            }
            Kind::Map { entries } => {
                let (mut keys, mut values) = (None, None);
                let (mut seen_keys, mut seen_values) = (Vec::new(), Vec::new());
                for entry in entries {
                    let k = self.check(&entry.key);
                    seen_keys.push((entry.key.at, k.clone()));
                    keys = Some(self.join(keys, k));
                    let mut v = self.check(&entry.value);
                    if entry.optional {
                        v = self.optional_item(entry.value.at, &v);
                    }
                    seen_values.push((entry.value.at, v.clone()));
                    values = Some(self.join(values, v));
                }
                self.literal(seen_keys);
                self.literal(seen_values);
                match (keys, values) {
                    (Some(k), Some(v)) => Type::map(k, v),
                    _ => Type::map(self.fresh(), self.fresh()),
                }
            }
            Kind::Struct { fields, .. } => {
                for (_, value, _) in fields {
                    self.check(value);
                }
                Type::Unknown
            }
            Kind::Comprehension(c) => self.comprehension(c),
        }
    }

    fn ident(&mut self, at: u32, name: &str) -> Type {
        if let Some((_, t)) = self.scope.iter().rev().find(|(n, _)| &**n == name) {
            return t.clone();
        }
        if TYPE_NAMES.contains(&name) {
            return type_value(name);
        }
        self.undeclared(at, name);
        Type::Error
    }

    /// A name the environment does not declare: it has the rule's
    /// variables, the comprehensions', the types' names and the
    /// libraries' functions, no more.
    fn undeclared(&mut self, at: u32, name: &str) {
        self.issue(
            at,
            format!("undeclared reference to '{name}' (in container '')"),
        );
    }

    /// `operand.field`, or `operand.?field` when `optional`
    /// (`checkSelectField`).
    fn select(&mut self, at: u32, operand: &Expr, field: &str, opt: bool) -> Type {
        let operand_type = self.check(operand);
        let operand_type = self.resolved(&operand_type);
        let (target, was_optional) = operand_type.unwrap_optional();
        let result = match target {
            Type::Map(_, value) => (**value).clone(),
            // A reserved word's field is found by its escaped name too
            // (`DeclTypeProvider.FindStructFieldType`).
            Type::Object(object) => {
                if let Some(t) = (object.fields.get(field))
                    .or_else(|| object.fields.get(&format!("__{field}__")))
                {
                    t.clone()
                } else {
                    self.issue(at, format!("undefined field '{field}'"));
                    Type::Error
                }
            }
            Type::Param(_) => {
                self.mapping.assign(&Type::Dyn, target);
                Type::Dyn
            }
            Type::Unknown => Type::Unknown,
            other => {
                if !other.is_dyn_or_error() {
                    self.issue(
                        at,
                        format!("type '{other}' does not support field selection"),
                    );
                }
                Type::Dyn
            }
        };
        if was_optional || opt {
            optional(result)
        } else {
            result
        }
    }

    fn optional_item(&mut self, at: u32, t: &Type) -> Type {
        let (inner, is_optional) = t.unwrap_optional();
        if !is_optional && !inner.is_dyn_or_error() {
            self.issue(
                at,
                format!("expected type '{}' but found '{t}'", optional(t.clone())),
            );
        }
        inner.clone()
    }

    /// The type of a literal's items so far joined with the next
    /// (`joinTypes`).
    fn join(&mut self, previous: Option<Type>, current: Type) -> Type {
        let Some(previous) = previous else {
            return current;
        };
        if self.mapping.assign(&previous, &current) {
            return super::types::most_general(&previous, &current);
        }
        // Kubernetes' environment leaves the checker's items of unlike
        // types `dyn`; its validator refuses them (`homogeneous`).
        Type::Dyn
    }

    /// Keeps a literal's item (or key, or value) types for `homogeneous`,
    /// but within `format`'s arguments.
    fn literal(&mut self, seen: Vec<(u32, Type)>) {
        if self.in_format == 0 {
            self.literals.push(seen);
        }
    }

    /// Kubernetes' homogeneous literals (`ValidateHomogeneousAggregateLiterals`):
    /// each item, key or value of a literal of the first's type, once
    /// every parameter is bound.
    fn homogeneous(&mut self) {
        let literals = std::mem::take(&mut self.literals);
        for seen in literals {
            let mut seen = seen
                .iter()
                .map(|(at, t)| (*at, self.mapping.substitute(t, true)));
            let Some((_, first)) = seen.next() else {
                continue;
            };
            // `IsEquivalentType`; what trainc cannot type is like any.
            if let Some((at, t)) = seen.find(|(_, t)| !first.exact(t)) {
                self.issue(at, format!("expected type '{first}' but found '{t}'"));
            }
        }
    }

    fn call(
        &mut self,
        expr: &Expr,
        function: &Arc<str>,
        target: Option<&Expr>,
        args: &[Expr],
    ) -> Type {
        if &**function == "_?._"
            && let [
                operand,
                Expr {
                    kind: Kind::Literal(Literal::String(field)),
                    ..
                },
            ] = args
        {
            self.types.insert(node(&args[1]), Type::String);
            self.calls.insert(
                node(expr),
                Called {
                    function: Arc::clone(function),
                    overloads: Vec::new(),
                },
            );
            return self.select(expr.at, operand, field, true);
        }
        let namespaced = match target {
            Some(Expr {
                kind: Kind::Ident(ns),
                ..
            }) if NAMESPACES.contains(&&**ns) && !self.scope.iter().any(|(n, _)| n == ns) => {
                Some(Arc::<str>::from(format!("{ns}.{function}")))
            }
            _ => None,
        };
        let target = if namespaced.is_some() { None } else { target };
        let function = namespaced.unwrap_or_else(|| Arc::clone(function));
        let name = &*function;
        let mut types = Vec::with_capacity(args.len() + 1);
        let format = u32::from(name == "format");
        self.in_format += format;
        if let Some(target) = target {
            types.push(self.check(target));
        }
        for arg in args {
            types.push(self.check(arg));
        }
        self.in_format -= format;
        let mut called = Called {
            function: Arc::clone(&function),
            overloads: Vec::new(),
        };
        if matches!(name, "_&&_" | "_||_") {
            self.calls.insert(node(expr), called);
            for (arg, t) in args.iter().zip(&types) {
                if !self.mapping.assign(t, &Type::Bool) {
                    let t = self.resolved(t);
                    self.issue(arg.at, format!("expected type 'bool' but found '{t}'"));
                }
            }
            return Type::Bool;
        }
        let Some(overloads) = overloads::of(name) else {
            self.undeclared(expr.at, name);
            return Type::Error;
        };
        if types.iter().any(|t| matches!(t, Type::Unknown)) {
            // An argument trainc cannot type: no error, and the result
            // only where every overload agrees on it.
            self.calls.insert(node(expr), called);
            return agreed(overloads, target.is_some());
        }
        let mut result: Option<Type> = None;
        for overload in overloads {
            if overload.member != target.is_some() {
                continue;
            }
            if plainly_unlike(&types, &overload.args) {
                // Its parameters numbered all the same, as though tried.
                self.next_param += 4;
                continue;
            }
            let (params, overload_result) = self.instantiate(overload);
            if self.mapping.assign_all(&types, &params) {
                called.overloads.push(overload);
                let t = self.resolved(&overload_result);
                result = Some(match result {
                    None => t,
                    Some(r) if matches!(r, Type::Dyn) || t.exact(&r) => r,
                    Some(_) => Type::Dyn,
                });
            }
        }
        if let Some(t) = result {
            self.calls.insert(node(expr), called);
            return t;
        }
        let shown: Vec<String> = types
            .iter()
            .map(|t| self.mapping.substitute(t, true).to_string())
            .collect();
        let signature = match target {
            Some(_) => format!("{}.({})", shown[0], shown[1..].join(", ")),
            None => format!("({})", shown.join(", ")),
        };
        self.issue(
            expr.at,
            format!("found no matching overload for '{name}' applied to '{signature}'"),
        );
        Type::Error
    }

    /// An overload's parameters and result with fresh type parameters.
    /// An overload's parameters, numbered afresh (4 numbers an overload).
    fn instantiate(&mut self, overload: &Overload) -> (Vec<Type>, Type) {
        let base = self.next_param + 1;
        self.next_param += 4;
        let fresh = |t: &Type| renumber(t, base);
        (
            overload.args.iter().map(fresh).collect(),
            fresh(&overload.result),
        )
    }

    fn comprehension(&mut self, c: &Comprehension) -> Type {
        let range = self.check(&c.range);
        let accu = self.check(&c.init);
        let range = self.resolved(&range);
        let (var, var2) = match &range {
            Type::List(item) => match c.iter_var2 {
                Some(_) => (Type::Int, (**item).clone()),
                None => ((**item).clone(), Type::Dyn),
            },
            Type::Map(key, value) => ((**key).clone(), (**value).clone()),
            Type::Dyn | Type::Error | Type::Param(_) => {
                self.mapping.assign(&Type::Dyn, &range);
                (Type::Dyn, Type::Dyn)
            }
            Type::Unknown => (Type::Unknown, Type::Unknown),
            other => {
                let message = format!(
                    "expression of type '{other}' cannot be range of a comprehension (must be list, map, or dynamic)"
                );
                self.issue(c.range.at, message);
                (Type::Error, Type::Error)
            }
        };
        let mark = self.scope.len();
        self.scope.push((c.accu_var.clone(), accu.clone()));
        self.scope.push((c.iter_var.clone(), var));
        if let Some(v2) = &c.iter_var2 {
            self.scope.push((v2.clone(), var2));
        }
        let cond = self.check(&c.cond);
        self.expect(c.cond.at, &Type::Bool, &cond);
        let step = self.check(&c.step);
        self.expect(c.step.at, &accu, &step);
        self.scope.truncate(mark + 1);
        let result = self.check(&c.result);
        self.scope.truncate(mark);
        self.resolved(&result)
    }

    /// `assertType`: `actual` must be given where `expected` is.
    fn expect(&mut self, at: u32, expected: &Type, actual: &Type) {
        if !self.mapping.assign(expected, actual) {
            let (e, a) = (self.resolved(expected), self.resolved(actual));
            self.issue(at, format!("expected type '{e}' but found '{a}'"));
        }
    }
}

/// A type parameter of an overload (0..4) moved to `base`.
fn renumber(t: &Type, base: u32) -> Type {
    match t {
        Type::Param(n) => Type::Param(base + n),
        Type::List(item) => Type::list(renumber(item, base)),
        Type::Map(k, v) => Type::map(renumber(k, base), renumber(v, base)),
        Type::Type(Some(inner)) => Type::Type(Some(Box::new(renumber(inner, base)))),
        Type::Opaque(name, params) => {
            Type::Opaque(name, params.iter().map(|p| renumber(p, base)).collect())
        }
        other => other.clone(),
    }
}

/// The result all overloads of a call style give, where they agree and
/// hold no parameter.
fn agreed(overloads: &[Overload], member: bool) -> Type {
    let mut results = overloads
        .iter()
        .filter(|o| o.member == member)
        .map(|o| &o.result);
    match results.next() {
        Some(first) if !has_param(first) && results.all(|r| r.exact(first)) => first.clone(),
        _ => Type::Unknown,
    }
}

fn has_param(t: &Type) -> bool {
    match t {
        Type::Param(_) => true,
        Type::List(item) => has_param(item),
        Type::Map(k, v) => has_param(k) || has_param(v),
        Type::Type(Some(inner)) => has_param(inner),
        Type::Opaque(_, params) => params.iter().any(has_param),
        _ => false,
    }
}

/// A type's name read as a value: `int` is `type(int)`.
fn type_value(name: &str) -> Type {
    let inner = match name {
        "list" => Type::list(Type::Dyn),
        "map" => Type::map(Type::Dyn, Type::Dyn),
        "google.protobuf.Duration" => Type::Duration,
        "google.protobuf.Timestamp" => Type::Timestamp,
        name => match super::types::scalar(name) {
            Some(t) => t,
            None => return Type::Type(None),
        },
    };
    Type::Type(Some(Box::new(inner)))
}

/// Whether arguments cannot be given to parameters without trying: as
/// many, and one a scalar (`int`, `string` …) where the parameter is
/// another scalar. (Two scalars are assignable only when they are one.)
fn plainly_unlike(args: &[Type], params: &[Type]) -> bool {
    let scalar = |t: &Type| {
        matches!(
            t,
            Type::Null
                | Type::Bool
                | Type::Int
                | Type::Uint
                | Type::Double
                | Type::String
                | Type::Bytes
                | Type::Duration
                | Type::Timestamp
        )
    };
    args.len() != params.len()
        || args.iter().zip(params).any(|(a, p)| {
            scalar(a) && scalar(p) && std::mem::discriminant(a) != std::mem::discriminant(p)
        })
}
