//! Scalar type inference: a union-find over scalar type slots. Literals without a suffix and
//! the element types of captured locals start open; uses narrow them (to a number, a float, an
//! integer) or bind them to a concrete type. While checking, the IR holds `ScalarType::Param(slot)`
//! for open slots; [`Unifier::finish`] maps them to their final types afterwards.

use std::collections::BTreeSet;

use crate::ir::{NumberClass, ScalarType, Type, VarId};
use crate::ops::Scalar;

#[derive(Clone, Debug)]
enum Slot {
    Link(usize),
    Known(Scalar),
    Open { class: NumberClass, origin: Origin },
}

/// Why a slot exists; decides what it becomes if nothing binds it.
#[derive(Clone, Copy, Debug)]
pub enum Origin {
    /// An unsuffixed literal: defaults to `i64` / `f64`, like rustc's fallback but 64-bit,
    /// unless the expression form leaves it to the use site.
    Literal,
    /// The element type of a captured local: left to rustc.
    Capture(VarId),
    /// The result of the expression form's Rust function call `k`: left to rustc.
    CallResult(usize),
}

#[derive(Default)]
pub struct Unifier {
    slots: Vec<Slot>,
}

/// Two types that cannot be the same; rendered by the caller with the user's span.
pub struct Mismatch {
    pub left: String,
    pub right: String,
}

/// What to add to a type mismatch between records with the same field names in another order
/// (anywhere inside the two types): a user who names fields may expect them matched by name,
/// but a record is a tuple whose fields have names (docs/semantics.md §2.3). Empty otherwise.
pub fn field_order_note(left: &Type, right: &Type) -> &'static str {
    fn reordered(left: &Type, right: &Type) -> bool {
        match (left, right) {
            (Type::Array { elem: left, .. }, Type::Array { elem: right, .. }) => reordered(left, right),
            (Type::Tuple { fields: left_fields, names: left_names }, Type::Tuple { fields, names }) => {
                let sorted = |names: &[String]| {
                    let mut names = names.to_vec();
                    names.sort();
                    names
                };
                let same_names = !names.is_empty() && left_names != names && sorted(left_names) == sorted(names);
                same_names || left_fields.iter().zip(fields).any(|(left, right)| reordered(left, right))
            }
            _ => false,
        }
    }
    if reordered(left, right) {
        "; the records have the same fields in another order: a record's fields are ordered, as a \
         tuple's, so write them in the order of its type"
    } else {
        ""
    }
}

impl Unifier {
    pub fn fresh(&mut self, class: NumberClass, origin: Origin) -> ScalarType {
        self.slots.push(Slot::Open { class, origin });
        ScalarType::Param(self.slots.len() - 1)
    }

    fn root(&self, mut slot: usize) -> usize {
        while let Some(Slot::Link(next)) = self.slots.get(slot) {
            slot = *next;
        }
        slot
    }

    /// The most precise current knowledge of a scalar type.
    pub fn shallow(&self, ty: ScalarType) -> ScalarType {
        match ty {
            ScalarType::Known(_) => ty,
            ScalarType::Param(slot) => {
                let root = self.root(slot);
                match self.slots.get(root) {
                    Some(Slot::Known(scalar)) => ScalarType::Known(*scalar),
                    _ => ScalarType::Param(root),
                }
            }
        }
    }

    pub fn class_of(&self, ty: ScalarType) -> NumberClass {
        match self.shallow(ty) {
            ScalarType::Known(s) if s.is_float() => NumberClass::Float,
            ScalarType::Known(s) if s.is_int() => NumberClass::Int,
            ScalarType::Known(_) => NumberClass::Bool,
            ScalarType::Param(slot) => match self.slots.get(slot) {
                Some(Slot::Open { class, .. }) => *class,
                _ => NumberClass::Any,
            },
        }
    }

    /// A human name for a type in errors: a concrete type in backticks (`` `f32` ``), or plain
    /// words for what is only partly known ("a float", "an integer literal").
    pub fn describe(&self, ty: ScalarType) -> String {
        match self.shallow(ty) {
            ScalarType::Known(s) => format!("`{}`", s.name()),
            ScalarType::Param(slot) => {
                let literal = matches!(self.slots.get(slot), Some(Slot::Open { origin: Origin::Literal, .. }));
                match (self.class_of(ty), literal) {
                    (NumberClass::Float, true) => "a float literal".to_string(),
                    (NumberClass::Int, true) => "an integer literal".to_string(),
                    (class, _) => class_name(class).to_string(),
                }
            }
        }
    }

    pub fn describe_type(&self, ty: &Type) -> String {
        match ty {
            Type::Scalar(s) => self.describe(*s),
            _ => format!("`{}`", self.type_text(ty)),
        }
    }

    /// Type syntax, with partly known element types written as `float`, `integer`, `number`, `_`.
    fn type_text(&self, ty: &Type) -> String {
        match ty {
            Type::Scalar(s) => match self.shallow(*s) {
                ScalarType::Known(known) => known.name().to_string(),
                ScalarType::Param(_) => match self.class_of(*s) {
                    NumberClass::Float => "float".to_string(),
                    NumberClass::Int => "integer".to_string(),
                    NumberClass::Number => "number".to_string(),
                    NumberClass::Bool => "bool".to_string(),
                    NumberClass::Any => "_".to_string(),
                },
            },
            Type::Array { elem, rank } => {
                format!("{}{}{}", "[".repeat(*rank), self.type_text(elem), "]".repeat(*rank))
            }
            Type::Tuple { fields, names } if names.is_empty() => {
                let fields: Vec<String> = fields.iter().map(|f| self.type_text(f)).collect();
                format!("({})", fields.join(", "))
            }
            Type::Tuple { fields, names } => {
                let fields: Vec<String> =
                    names.iter().zip(fields).map(|(n, f)| format!("{n}: {}", self.type_text(f))).collect();
                format!("{{ {} }}", fields.join(", "))
            }
        }
    }

    /// Whether a slot is still an unsuffixed literal of the given class.
    pub fn is_open_literal(&self, ty: ScalarType, class: NumberClass) -> bool {
        match self.shallow(ty) {
            ScalarType::Param(slot) => {
                matches!(self.slots.get(slot), Some(Slot::Open { origin: Origin::Literal, class: c }) if *c == class)
            }
            ScalarType::Known(_) => false,
        }
    }

    /// Narrows a type to a class (number, float, integer, bool); fails if it cannot be one.
    pub fn require(&mut self, ty: ScalarType, class: NumberClass) -> Result<(), Mismatch> {
        let have = self.class_of(ty);
        let merged = merge_classes(have, class)
            .ok_or_else(|| Mismatch { left: self.describe(ty), right: class_name(class).to_string() })?;
        if let ScalarType::Param(slot) = self.shallow(ty) {
            if let Some(Slot::Open { class, .. }) = self.slots.get_mut(slot) {
                *class = merged;
            }
        }
        Ok(())
    }

    pub fn unify(&mut self, left: ScalarType, right: ScalarType) -> Result<(), Mismatch> {
        let (left, right) = (self.shallow(left), self.shallow(right));
        let mismatch = |unifier: &Unifier| Mismatch { left: unifier.describe(left), right: unifier.describe(right) };
        match (left, right) {
            (ScalarType::Known(l), ScalarType::Known(r)) => {
                if l == r {
                    Ok(())
                } else {
                    Err(mismatch(self))
                }
            }
            (ScalarType::Param(slot), ScalarType::Known(known))
            | (ScalarType::Known(known), ScalarType::Param(slot)) => {
                let class = self.class_of(ScalarType::Param(slot));
                if merge_classes(class, class_of_scalar(known)).is_none() {
                    return Err(mismatch(self));
                }
                self.slots[slot] = Slot::Known(known);
                Ok(())
            }
            (ScalarType::Param(l), ScalarType::Param(r)) => {
                if l == r {
                    return Ok(());
                }
                let merged = merge_classes(self.class_of(left), self.class_of(right)).ok_or_else(|| mismatch(self))?;
                // Keep a capture as the representative: it names the type for rustc; else a
                // call's result, which rustc types (a literal's slot is only a default).
                let rank = |slot: &Slot| match slot {
                    Slot::Open { origin: Origin::Capture(_), .. } => 2,
                    Slot::Open { origin: Origin::CallResult(_), .. } => 1,
                    _ => 0,
                };
                let (left_rank, right_rank) = (rank(&self.slots[l]), rank(&self.slots[r]));
                let (keep, drop) = if right_rank > 0 && right_rank >= left_rank { (r, l) } else { (l, r) };
                self.slots[drop] = Slot::Link(keep);
                if let Slot::Open { class, .. } = &mut self.slots[keep] {
                    *class = merged;
                }
                Ok(())
            }
        }
    }

    /// Structural unification of whole types (arrays, tuples, records).
    pub fn unify_types(&mut self, left: &Type, right: &Type) -> Result<(), Mismatch> {
        let mismatch =
            |unifier: &Unifier| Mismatch { left: unifier.describe_type(left), right: unifier.describe_type(right) };
        match (left, right) {
            (Type::Scalar(l), Type::Scalar(r)) => self.unify(*l, *r).map_err(|_| mismatch(self)),
            (Type::Array { elem: le, rank: lr }, Type::Array { elem: re, rank: rr }) if lr == rr => {
                self.unify_types(le, re).map_err(|_| mismatch(self))
            }
            (Type::Tuple { fields: lf, names: ln }, Type::Tuple { fields: rf, names: rn })
                if lf.len() == rf.len() && (ln.is_empty() || rn.is_empty() || ln == rn) =>
            {
                for (l, r) in lf.iter().zip(rf) {
                    self.unify_types(l, r).map_err(|_| mismatch(self))?;
                }
                Ok(())
            }
            _ => Err(mismatch(self)),
        }
    }

    /// The open literal slots in `ty` (by root): in the expression form, those in the result's
    /// type are left to rustc, which types them from the use site.
    pub fn open_literals(&self, ty: &Type, found: &mut BTreeSet<usize>) {
        match ty {
            Type::Scalar(scalar) => {
                if let ScalarType::Param(root) = self.shallow(*scalar) {
                    if matches!(self.slots.get(root), Some(Slot::Open { origin: Origin::Literal, .. })) {
                        found.insert(root);
                    }
                }
            }
            Type::Array { elem, .. } => self.open_literals(elem, found),
            Type::Tuple { fields, .. } => fields.iter().for_each(|field| self.open_literals(field, found)),
        }
    }

    /// The final type of a slot: concrete, a type parameter (by capture, or for a literal slot
    /// among `by_use_site`), or a literal default.
    pub fn finish(&self, ty: ScalarType, by_use_site: &BTreeSet<usize>) -> Resolved {
        match self.shallow(ty) {
            ScalarType::Known(s) => Resolved::Known(s),
            ScalarType::Param(slot) => match self.slots.get(slot) {
                // `bool` is the only boolean type: spelled, a wrong capture is reported at it.
                Some(Slot::Open { origin: Origin::Capture(_) | Origin::CallResult(_), class: NumberClass::Bool }) => {
                    Resolved::Known(Scalar::Bool)
                }
                Some(Slot::Open { origin: Origin::Capture(var), class }) => Resolved::Capture(*var, *class),
                Some(Slot::Open { origin: Origin::CallResult(site), class }) => Resolved::CallResult(*site, *class),
                Some(Slot::Open { class, .. }) if by_use_site.contains(&slot) => Resolved::UseSite(slot, *class),
                Some(Slot::Open { class: NumberClass::Float, .. }) => Resolved::Known(Scalar::F64),
                Some(Slot::Open { class: NumberClass::Bool, .. }) => Resolved::Known(Scalar::Bool),
                _ => Resolved::Known(Scalar::I64),
            },
        }
    }
}

pub enum Resolved {
    Known(Scalar),
    Capture(VarId, NumberClass),
    /// Literals typed by the Rust use site, identified by their slot.
    UseSite(usize, NumberClass),
    /// The result of the expression form's Rust function call `k`.
    CallResult(usize, NumberClass),
}

impl Resolved {
    /// Whether two resolutions are the same type parameter.
    pub fn same_param(&self, other: &Resolved) -> bool {
        match (self, other) {
            (Resolved::Capture(left, _), Resolved::Capture(right, _)) => left == right,
            (Resolved::UseSite(left, _), Resolved::UseSite(right, _)) => left == right,
            (Resolved::CallResult(left, _), Resolved::CallResult(right, _)) => left == right,
            _ => false,
        }
    }
}

fn class_of_scalar(scalar: Scalar) -> NumberClass {
    if scalar.is_float() {
        NumberClass::Float
    } else if scalar.is_int() {
        NumberClass::Int
    } else {
        NumberClass::Bool
    }
}

fn class_name(class: NumberClass) -> &'static str {
    match class {
        NumberClass::Any => "a value",
        NumberClass::Number => "a number",
        NumberClass::Float => "a float",
        NumberClass::Int => "an integer",
        NumberClass::Bool => "bool",
    }
}

/// The meet of two classes: `Number` ∧ `Float` = `Float`; `Float` ∧ `Int` has none.
fn merge_classes(left: NumberClass, right: NumberClass) -> Option<NumberClass> {
    use NumberClass::*;
    match (left, right) {
        (Any, other) | (other, Any) => Some(other),
        (Number, Float) | (Float, Number) => Some(Float),
        (Number, Int) | (Int, Number) => Some(Int),
        (l, r) if l == r => Some(l),
        _ => None,
    }
}
