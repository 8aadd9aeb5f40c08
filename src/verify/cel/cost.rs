//! The cost the API server estimates for a rule when a CRD is created,
//! before any object is seen (cel-go v0.26.0 `checker/cost.go`, with
//! Kubernetes' estimator, k8s.io/apiserver v0.36.3 `pkg/cel/library/cost.go`,
//! and `has()` free as `environment/base.go` makes it): each node's cost
//! from 0 to its most, a name or a selection 1, a list literal 10 and a
//! map literal 30 more than their items, a call what [`super::cost_calls`]
//! says, a comprehension its range and start, plus its step and condition
//! once per item of the largest range the schema allows
//! ([`super::sizes`]). The largest sizes follow the values through the
//! expression: a field's from its schema, a literal's from itself, a
//! call's from what it makes.

use std::collections::HashMap;
use std::rc::Rc;

use super::ast::{ACCUMULATOR, Comprehension, Expr, Kind, Literal, NAMESPACES, spelled_type};
use super::checker::{Checked, Nodes, node};
use super::cost_calls::{self, CallSite, Node, Path, Schema};
use super::ranges::{Range, UNKNOWN};
use super::types::Type;

/// The sizes of a list's items or a map's keys and values, where known
/// (`entrySizeEstimate`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Entries {
    pub list: bool,
    pub key: Range,
    pub value: Range,
}

impl Entries {
    fn union(a: Option<Entries>, b: Option<Entries>) -> Option<Entries> {
        let (a, b) = (a?, b?);
        Some(Entries {
            list: a.list,
            key: a.key.union(b.key),
            value: a.value.union(b.value),
        })
    }
}

/// `path` with `step` after it (a path from nowhere is the step alone).
fn append(path: &Path, step: &str) -> Rc<Vec<String>> {
    let mut out = path.as_deref().cloned().unwrap_or_default();
    out.push(step.to_owned());
    Rc::new(out)
}

/// A comprehension's or a binding's variable.
struct Local {
    path: Path,
    size: Option<Range>,
    entries: Option<Entries>,
}

pub(super) struct Coster<'e, 's> {
    checked: &'e Checked,
    /// The size estimator (`EstimateSize`).
    schema: Schema<'s>,
    paths: Nodes<Path>,
    locals: HashMap<String, Vec<Local>>,
    sizes: Nodes<Range>,
    entries: Nodes<Entries>,
    /// A node whose type trainc cannot tell: the estimate is not known.
    unknown: bool,
}

/// The most `expr` (checked as `checked`) may cost, as the server
/// estimates it, with `schema` giving the largest value at a path from a
/// variable; `None` where trainc cannot tell (a type it cannot tell).
pub(super) fn estimate(expr: &Expr, checked: &Checked, schema: Schema<'_>) -> Option<u64> {
    estimate_range(expr, checked, schema).map(|cost| cost.max)
}

/// The least and the most `expr` may cost, as [`estimate`] has them.
pub(super) fn estimate_range(expr: &Expr, checked: &Checked, schema: Schema<'_>) -> Option<Range> {
    let mut coster = Coster {
        checked,
        schema,
        paths: Nodes::default(),
        locals: HashMap::new(),
        sizes: Nodes::default(),
        entries: Nodes::default(),
        unknown: false,
    };
    let cost = coster.cost(expr);
    (!coster.unknown).then_some(cost)
}

impl<'e> Coster<'e, '_> {
    fn type_of(&mut self, e: &Expr) -> Type {
        match self.checked.types.get(&node(e)) {
            Some(Type::Unknown) | None => {
                self.unknown = true;
                Type::Dyn
            }
            Some(t) => t.clone(),
        }
    }

    fn cost(&mut self, e: &'e Expr) -> Range {
        match &e.kind {
            Kind::Literal(_) => Range::fixed(0),
            Kind::Ident(name) => {
                let path = match self.local(name) {
                    Some(local) => local.path.clone(),
                    None => Some(Rc::new(vec![name.to_string()])),
                };
                self.paths.insert(node(e), path);
                Range::fixed(1)
            }
            Kind::Select { .. } if let Some(name) = spelled_type(e) => {
                // A type's dotted name is one name to the checker.
                self.paths
                    .insert(node(e), Some(Rc::new(vec![name.to_owned()])));
                Range::fixed(1)
            }
            Kind::Select {
                operand,
                field,
                test,
            } => {
                // `has()` is free in Kubernetes' environment.
                let sum = self.cost(operand);
                if *test {
                    return sum;
                }
                let select = match self.type_of(operand) {
                    Type::Map(..) | Type::Object(_) | Type::Param(_) => 1,
                    _ => 0,
                };
                let path = append(&self.path(operand), field);
                self.paths.insert(node(e), Some(path));
                sum.add(Range::fixed(select))
            }
            Kind::Call {
                function,
                target,
                args,
            } => self.call(e, function, target.as_deref(), args),
            Kind::List { items, .. } => {
                let mut sum = Range::fixed(0);
                let mut item_size = Range {
                    min: if items.is_empty() { 0 } else { u64::MAX },
                    max: 0,
                };
                for item in items {
                    sum = sum.add(self.cost(item));
                    item_size = item_size.union(self.size_or_unknown(item));
                }
                let entries = Entries {
                    list: true,
                    key: Range::fixed(1),
                    value: item_size,
                };
                self.entries.insert(node(e), entries);
                sum.add(Range::fixed(10))
            }
            Kind::Map { entries } => {
                let mut sum = Range::fixed(0);
                let start = if entries.is_empty() { 0 } else { u64::MAX };
                let mut key = Range { min: start, max: 0 };
                let mut value = key;
                for entry in entries {
                    sum = sum.add(self.cost(&entry.key)).add(self.cost(&entry.value));
                    key = key.union(self.size_or_unknown(&entry.key));
                    value = value.union(self.size_or_unknown(&entry.value));
                }
                let sizes = Entries {
                    list: false,
                    key,
                    value,
                };
                self.entries.insert(node(e), sizes);
                sum.add(Range::fixed(30))
            }
            Kind::Struct { fields, .. } => {
                self.unknown = true;
                let mut sum = Range::fixed(40);
                for (_, value, _) in fields {
                    sum = sum.add(self.cost(value));
                }
                sum
            }
            Kind::Comprehension(c) if is_bind(c) => {
                let sum = self.cost(&c.range).add(self.cost(&c.init));
                self.push_local(&c.accu_var, &c.init);
                let sum = sum.add(self.cost(&c.result));
                self.pop(&c.accu_var);
                self.copy_sizes(e, &c.result);
                sum
            }
            Kind::Comprehension(c) => self.comprehension(e, c),
        }
    }

    fn comprehension(&mut self, e: &'e Expr, c: &'e Comprehension) -> Range {
        let mut sum = self.cost(&c.range).add(self.cost(&c.init));
        self.push_local(&c.accu_var, &c.init);
        let entries = self.entry_sizes(&c.range);
        let container_list = match entries {
            Some(entries) => entries.list,
            None => matches!(self.type_of(&c.range), Type::List(_)),
        };
        let path = self.path(&c.range);
        if let Some(var2) = &c.iter_var2 {
            let (key, value) = if container_list {
                ("@indices", "@items")
            } else {
                ("@keys", "@values")
            };
            self.push(
                &c.iter_var,
                Some(append(&path, key)),
                entries.map(|e| e.key),
            );
            self.push(var2, Some(append(&path, value)), entries.map(|e| e.value));
        } else {
            let (step, size) = if container_list {
                ("@items", entries.map(|e| e.value))
            } else {
                ("@keys", entries.map(|e| e.key))
            };
            self.push(&c.iter_var, Some(append(&path, step)), size);
        }
        let loop_cost = self.cost(&c.cond);
        let step_cost = self.cost(&c.step);
        self.pop(&c.iter_var);
        if let Some(var2) = &c.iter_var2 {
            self.pop(var2);
        }
        sum = sum.add(self.cost(&c.result));
        self.pop(&c.accu_var);
        let count = self.size_or_unknown(&c.range);
        sum = sum.add(count.times(step_cost.add(loop_cost)));
        match &c.init.kind {
            Kind::Literal(_) => {
                if let Some(size) = self.size(&c.init) {
                    self.sizes.insert(node(e), size);
                }
            }
            Kind::List { .. } | Kind::Map { .. } => {
                self.sizes.insert(node(e), count);
                if let Some(entries) = self.entry_sizes(&c.step) {
                    self.entries.insert(node(e), entries);
                }
            }
            _ => {}
        }
        sum
    }

    fn call(
        &mut self,
        e: &'e Expr,
        function: &str,
        target: Option<&'e Expr>,
        args: &'e [Expr],
    ) -> Range {
        let Some(called) = self.checked.calls.get(&node(e)) else {
            self.unknown = true;
            return Range::fixed(0);
        };
        // A namespaced function (`sets.contains`) is called as one name.
        let target = target.filter(|t| {
            !matches!(&t.kind, Kind::Ident(ns) if NAMESPACES.contains(&&**ns)
                && &*called.function != function)
        });
        let name = &*called.function;
        if name == "dyn" && args.len() == 1 {
            let cost = self.cost(&args[0]);
            self.copy_sizes(e, &args[0]);
            return Range::fixed(1).add(cost);
        }
        let mut costs = Vec::with_capacity(args.len());
        let mut nodes = Vec::with_capacity(args.len());
        for arg in args {
            costs.push(self.cost(arg));
            nodes.push(self.node(arg));
        }
        let ids = cost_calls::overload_ids(name, &called.overloads);
        if ids.is_empty() {
            // Only a call of arguments trainc cannot type has none.
            self.unknown = true;
            return Range::fixed(0);
        }
        let mut sum = Range::fixed(0);
        let target_node = target.map(|t| {
            sum = self.cost(t);
            self.node(t)
        });
        let mut cost = Range {
            min: u64::MAX,
            max: 0,
        };
        let mut result_size: Option<Range> = None;
        for id in ids {
            let call = CallSite {
                function: name,
                id,
                target: target_node.as_ref(),
                args: &nodes,
                costs: &costs,
            };
            let estimate = cost_calls::estimate(self.schema, &call);
            if let Some((a, b)) = estimate.entries_of {
                let joined = Entries::union(self.entry_sizes(a), self.entry_sizes(b));
                if let Some(entries) = joined {
                    self.entries.insert(node(e), entries);
                }
            }
            cost = cost.union(estimate.cost);
            if let Some(size) = estimate.result_size {
                result_size = Some(result_size.map_or(size, |r| r.union(size)));
            }
            if matches!(id, "index_list" | "index_map") {
                let step = if id == "index_list" {
                    "@items"
                } else {
                    "@values"
                };
                result_size = self.entry_sizes(&args[0]).map(|e| e.value);
                let path = append(&self.path(&args[0]), step);
                self.paths.insert(node(e), Some(path));
            }
            if result_size.is_none() {
                result_size = self.size(e);
            }
        }
        if let Some(size) = result_size {
            self.sizes.insert(node(e), size);
        }
        sum.add(cost)
    }

    fn local(&self, name: &str) -> Option<&Local> {
        self.locals.get(name).and_then(|stack| stack.last())
    }

    fn push(&mut self, name: &str, path: Path, size: Option<Range>) {
        let local = Local {
            path,
            size,
            entries: None,
        };
        self.locals.entry(name.to_owned()).or_default().push(local);
    }

    /// A binding's (or an accumulator's) variable: sized as its value.
    fn push_local(&mut self, name: &str, value: &Expr) {
        let local = Local {
            path: self.path(value),
            size: self.size(value),
            entries: self.entry_sizes(value),
        };
        self.locals.entry(name.to_owned()).or_default().push(local);
    }

    fn pop(&mut self, name: &str) {
        if let Some(stack) = self.locals.get_mut(name) {
            stack.pop();
        }
    }

    fn path(&self, e: &Expr) -> Path {
        if let Kind::Ident(name) = &e.kind
            && let Some(local) = self.local(name)
        {
            return local.path.clone();
        }
        self.paths.get(&node(e)).cloned().flatten()
    }

    /// `e` as a function's estimate sees it (`newAstNode`): its path (but
    /// an accumulator's), type and size.
    fn node(&mut self, e: &'e Expr) -> Node<'e> {
        let path = self.path(e).filter(|p| {
            p.first()
                .is_none_or(|v| v != ACCUMULATOR && v != "__result__")
        });
        Node {
            path,
            t: self.type_of(e),
            expr: Some(e),
            computed: self.size(e),
        }
    }

    fn copy_sizes(&mut self, to: &Expr, from: &Expr) {
        if let Some(size) = self.size(from) {
            self.sizes.insert(node(to), size);
        }
        if let Some(entries) = self.entry_sizes(from) {
            self.entries.insert(node(to), entries);
        }
    }

    fn size_or_unknown(&mut self, e: &Expr) -> Range {
        self.size(e).unwrap_or(UNKNOWN)
    }

    /// `computeSize`: what the expression shows, else what the size
    /// estimator says of it (a CRD's: the schema at its path), else 1 for
    /// a scalar, else a variable's.
    fn size(&mut self, e: &Expr) -> Option<Range> {
        if let Some(size) = self.sizes.get(&node(e)) {
            return Some(*size);
        }
        if let Some(size) = literal_size(e) {
            return Some(size);
        }
        let path = self.path(e);
        let t = self.checked.types.get(&node(e)).unwrap_or(&Type::Dyn);
        if let Some(size) = (self.schema)(path.as_deref().map_or(&[], Vec::as_slice), t) {
            self.sizes.insert(node(e), size);
            return Some(size);
        }
        if is_scalar(&self.type_of(e)) {
            return Some(Range::fixed(1));
        }
        match &e.kind {
            Kind::Ident(name) => self.local(name).and_then(|l| l.size),
            _ => None,
        }
    }

    fn entry_sizes(&self, e: &Expr) -> Option<Entries> {
        if let Some(entries) = self.entries.get(&node(e)) {
            return Some(*entries);
        }
        match &e.kind {
            Kind::Ident(name) => self.local(name).and_then(|l| l.entries),
            _ => None,
        }
    }
}

/// `cel.bind`'s comprehension: over an empty list, never looping, its
/// accumulator not a macro's.
fn is_bind(c: &Comprehension) -> bool {
    matches!(&c.range.kind, Kind::List { items, .. } if items.is_empty())
        && matches!(c.cond.kind, Kind::Literal(Literal::Bool(false)))
        && &*c.accu_var != ACCUMULATOR
}

/// A literal's size (`computeExprSize`): a string's characters, bytes'
/// count, a list's or map's items, 1 for any other constant.
fn literal_size(e: &Expr) -> Option<Range> {
    let n = match &e.kind {
        Kind::Literal(Literal::String(s)) => s.chars().count() as u64,
        Kind::Literal(Literal::Bytes(b)) => b.len() as u64,
        Kind::Literal(_) => 1,
        Kind::List { items, .. } => items.len() as u64,
        Kind::Map { entries } => entries.len() as u64,
        _ => return None,
    };
    Some(Range::fixed(n))
}

/// A type of one fixed size (`isScalar`).
fn is_scalar(t: &Type) -> bool {
    match t {
        Type::Bool | Type::Double | Type::Duration | Type::Int | Type::Timestamp | Type::Uint => {
            true
        }
        Type::Opaque("optional_type", params) => params.first().is_some_and(is_scalar),
        _ => false,
    }
}
