//! Rust identifiers for generated code: one per IR variable, derived from the user's name, plus
//! fresh `__ein_`-prefixed names for everything the generator introduces.
//!
//! Rules (see the module docs of `codegen` for why they are enough):
//! - a parameter keeps its exact name; in the expression form a captured local is read once,
//!   into a fresh `__ein_` local named after it (see `Names::rename_captures`);
//! - any other variable keeps its name unless it would be confused with another variable of
//!   the same name, in which case it becomes `name_<id>`. Two index variables may share a
//!   name when neither is bound inside the other's scope (each lives in its own loop body or
//!   closure); a `let` or accumulator never shares a name, because its Rust `let` lives in the
//!   enclosing block, whose scope is wider than the IR's;
//! - a variable that is never read is prefixed with `_` (no `unused_variables` warning);
//! - generated names start with `__ein_` and never equal a variable's name.

use super::internal;
use crate::analysis::Analysis;
use crate::ir::{Program, VarId, VarKind};
use proc_macro2::{Ident, Span};
use std::collections::{BTreeMap, BTreeSet};

pub(super) struct Names {
    /// The Rust identifier of every variable, indexed by `VarId`.
    vars: Vec<Ident>,
    /// Whether the variable is read anywhere (a `Var` node refers to it).
    referenced: Vec<bool>,
    /// Every identifier handed out so far.
    taken: BTreeSet<String>,
}

impl Names {
    pub(super) fn new(program: &Program, analysis: &Analysis<'_>) -> syn::Result<Names> {
        let count = program.vars.len();
        let declared = |id: VarId| (id.0 as usize) < count;
        let witnesses = program.type_params.iter().filter_map(|param| param.witness());
        if let Some(id) = program.params.iter().copied().chain(witnesses).find(|id| !declared(*id)) {
            return Err(internal(program.body.span, format!("parameter #{} is not declared", id.0)));
        }
        if let Some((id, span)) = analysis.undeclared() {
            return Err(internal(span, format!("variable #{} is not declared", id.0)));
        }
        let referenced: Vec<bool> = (0..count as u32).map(|id| analysis.is_read(VarId(id))).collect();
        let enclosing = |id: VarId| analysis.enclosing(id);

        // Parameters first (they must keep their names), then every other variable by id.
        let mut order: Vec<VarId> = program.params.clone();
        let params: BTreeSet<VarId> = program.params.iter().copied().collect();
        order.extend((0..count as u32).map(VarId).filter(|id| !params.contains(id)));

        let mut taken = BTreeSet::new();
        let mut assigned: BTreeMap<String, Vec<VarId>> = BTreeMap::new();
        let mut vars: Vec<Option<Ident>> = vec![None; count];
        for id in order {
            let info = program.var(id);
            let is_param = params.contains(&id);
            let used = referenced[id.0 as usize] || info.kind == VarKind::Accumulator;
            let mut base = bare_name(&info.name).unwrap_or_else(|| format!("var_{}", id.0));
            if !used && !base.starts_with('_') {
                base = format!("_{base}");
            }
            let conflicts = |other: &VarId| {
                let other_info = program.var(*other);
                let both_indices = info.kind == VarKind::Index && other_info.kind == VarKind::Index;
                !both_indices || enclosing(id).contains(other) || enclosing(*other).contains(&id)
            };
            let clashes = |name: &String| assigned.get(name).is_some_and(|others| others.iter().any(conflicts));
            let mut name = base.clone();
            if !is_param && clashes(&name) {
                name = format!("{base}_{}", id.0);
                while clashes(&name) {
                    name.push('_');
                }
            }
            taken.insert(name.clone());
            // The user's span: a captured local must resolve in the user's hygiene context
            // (which differs from the macro's call site when `ein!` is called by a
            // `macro_rules!` macro), and every use of a variable is this same identifier.
            vars[id.0 as usize] = Some(
                make_ident(&name, info.span)
                    .ok_or_else(|| internal(info.span, format!("cannot name variable `{}` in Rust", info.name)))?,
            );
            assigned.entry(name).or_default().push(id);
        }
        let vars = vars
            .into_iter()
            .map(|name| name.ok_or_else(|| internal(program.body.span, "a variable was left unnamed")))
            .collect::<syn::Result<_>>()?;
        Ok(Names { vars, referenced, taken })
    }

    /// Gives each parameter (in the expression form, a captured local) a fresh generated name
    /// instead of the user's, and returns the user's identifiers by parameter.
    pub(super) fn rename_captures(&mut self, params: &[VarId]) -> BTreeMap<VarId, Ident> {
        let mut captured = BTreeMap::new();
        for &param in params {
            let local = self.fresh(&self.vars[param.0 as usize].to_string());
            captured.insert(param, std::mem::replace(&mut self.vars[param.0 as usize], local));
        }
        captured
    }

    /// The Rust identifier of a variable.
    pub(super) fn var(&self, id: VarId) -> &Ident {
        &self.vars[id.0 as usize]
    }

    /// Whether the program reads the variable anywhere.
    pub(super) fn is_referenced(&self, id: VarId) -> bool {
        self.referenced[id.0 as usize]
    }

    /// The variable's name as a binding pattern, `_` where nothing reads it.
    pub(super) fn pattern(&self, id: VarId) -> proc_macro2::TokenStream {
        match self.is_referenced(id) {
            true => quote::ToTokens::to_token_stream(self.var(id)),
            false => quote::quote!(_),
        }
    }

    /// A fresh generated identifier `__ein_<base>` (with a numeric suffix when taken).
    pub(super) fn fresh(&mut self, base: &str) -> Ident {
        let base: String = base
            .trim_start_matches("r#")
            .trim_start_matches("__ein_")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let mut name = format!("__ein_{base}");
        let mut suffix = 2;
        while self.taken.contains(&name) {
            name = format!("__ein_{base}_{suffix}");
            suffix += 1;
        }
        self.taken.insert(name.clone());
        Ident::new(&name, Span::call_site())
    }
}

/// The user's name without a raw-identifier prefix, if it can name a Rust local at all.
fn bare_name(name: &str) -> Option<String> {
    let bare = name.strip_prefix("r#").unwrap_or(name);
    let valid = !bare.is_empty()
        && bare != "_"
        && bare.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && bare.chars().all(|c| c.is_alphanumeric() || c == '_');
    valid.then(|| bare.to_string())
}

/// An identifier for `name`, raw when `name` is a keyword that allows it.
fn make_ident(name: &str, span: Span) -> Option<Ident> {
    let mut ident = match syn::parse_str::<Ident>(name) {
        Ok(ident) => ident,
        Err(_) => syn::parse_str::<Ident>(&format!("r#{name}")).ok()?,
    };
    ident.set_span(span);
    Some(ident)
}
