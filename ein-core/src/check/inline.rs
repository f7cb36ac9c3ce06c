//! Calls between the functions of one `ein!` block, and calls of its `extern fn`s. A call of a
//! block function is inlined here, while checking (note [calls are inlined by the checker]);
//! an `extern fn` call becomes an [`ExprKind::Extern`] node.
//!
//! Note [calls are inlined by the checker]: `f(x, a)` is checked as the callee's body written at
//! the call, its parameters naming the arguments. An argument that is a variable is
//! substituted (the parameter is another name for it, so `for i { row_sum(m, i) }` gives `i`
//! its size from `m` as if `m[i, k]` were written in place); any other argument is bound by a
//! `let` of a fresh variable named after the parameter, evaluated once, before the body (as a
//! call evaluates its arguments). The callee's sizes are thus inferred from the caller's
//! arrays, its size checks over the caller's parameters join the caller's one check before
//! any loop, and the passes see one program: a called comprehension fuses, hoists and
//! contracts as if written in place. There is no call node in the IR, so the interpreter
//! runs exactly what is compiled. Each function is also checked on its own, once, which is
//! where errors in its body are reported; a call of a function that failed is not checked
//! again. Recursion (which inlining could not end) is found on the call graph first.

use super::{Checked, Checker, Errors, Reported};
use crate::ir::node;
use crate::ir::{Expr, ExprKind, Type, VarKind};
use crate::syntax::ast;
use proc_macro2::{Ident, Span};
use std::cell::RefCell;

/// How deeply calls may nest (each level re-checks a body inside the caller's check).
const MAX_CALL_DEPTH: usize = 16;
/// How many calls one function may inline in all, so a chain of functions each calling the
/// next twice cannot blow the program up exponentially.
const MAX_INLINED_CALLS: usize = 1000;

/// The most arguments a Rust function called by the expression form may take (the runtime has
/// a `typed_closureN` for each count up to this).
const MAX_RUST_CALL_ARGUMENTS: usize = 8;

/// The functions and `extern fn`s of one item-form block, shared by the checks of its units.
pub(super) struct Library {
    pub(super) functions: Vec<ast::Function>,
    externs: Vec<ast::ExternFunction>,
    /// For each function, the calls of block functions in its body, in the order written:
    /// the callee's position and the call's name token.
    calls: Vec<Vec<(usize, Ident)>>,
    /// Whether each function checked without errors (`None` until it has been checked).
    checked: RefCell<Vec<Option<bool>>>,
}

impl Library {
    pub(super) fn new(functions: Vec<ast::Function>, externs: Vec<ast::ExternFunction>) -> Library {
        let position = |name: &Ident| functions.iter().position(|function| function.name == *name);
        let calls = functions
            .iter()
            .map(|function| {
                let mut found = Vec::new();
                let mut pending = vec![&function.body];
                while let Some(expr) = pending.pop() {
                    if let ast::ExprKind::Apply { name, .. } = &expr.kind {
                        if let Some(callee) = position(name) {
                            found.push((callee, name.clone()));
                        }
                    }
                    // Reversed, so the stack pops children in the order written.
                    pending.extend(expr.kind.children().into_iter().rev());
                }
                found
            })
            .collect();
        let checked = RefCell::new(vec![None; functions.len()]);
        Library { functions, externs, calls, checked }
    }

    /// An error at every call that closes a cycle of calls (direct or mutual recursion).
    pub(super) fn recursion_errors(&self, errors: &mut Errors) {
        for (caller, calls) in self.calls.iter().enumerate() {
            for (callee, token) in calls {
                let Some(path) = self.path(*callee, caller) else { continue };
                let names: Vec<String> =
                    path.iter().map(|&position| format!("`{}`", self.functions[position].name)).collect();
                let caller_name = &self.functions[caller].name;
                let message = if *callee == caller {
                    format!("`{caller_name}` calls itself")
                } else {
                    format!(
                        "`{caller_name}` calls {}, which calls back into `{caller_name}` (`{caller_name}` → {})",
                        names[0],
                        names.join(" → ")
                    )
                };
                errors.push(
                    token.span(),
                    format!(
                        "{message}: ein inlines every call of a function of the block, so functions cannot be \
                         recursive; write the repetition as a `fold`"
                    ),
                );
            }
        }
    }

    /// The shortest chain of calls from `from` to `to` (both included), if any.
    fn path(&self, from: usize, to: usize) -> Option<Vec<usize>> {
        let mut previous: Vec<Option<usize>> = vec![None; self.functions.len()];
        let mut queue = std::collections::VecDeque::from([from]);
        let mut seen = vec![false; self.functions.len()];
        seen[from] = true;
        while let Some(current) = queue.pop_front() {
            if current == to {
                let mut path = vec![to];
                while let Some(before) = previous[*path.last()?] {
                    path.push(before);
                }
                path.reverse();
                return Some(path);
            }
            for &(next, _) in &self.calls[current] {
                if !seen[next] {
                    seen[next] = true;
                    previous[next] = Some(current);
                    queue.push_back(next);
                }
            }
        }
        None
    }

    /// Every function once, callees before their callers (cycles, already errors, broken
    /// anywhere), otherwise in the order written.
    pub(super) fn check_order(&self) -> Vec<usize> {
        fn visit(library: &Library, position: usize, state: &mut [u8], order: &mut Vec<usize>) {
            if state[position] != 0 {
                return;
            }
            state[position] = 1;
            for &(callee, _) in &library.calls[position] {
                visit(library, callee, state, order);
            }
            state[position] = 2;
            order.push(position);
        }
        let mut state = vec![0u8; self.functions.len()];
        let mut order = Vec::new();
        for position in 0..self.functions.len() {
            visit(self, position, &mut state, &mut order);
        }
        order
    }

    pub(super) fn mark_checked(&self, position: usize, ok: bool) {
        self.checked.borrow_mut()[position] = Some(ok);
    }

    /// Whether function `position` becomes a Rust function: when it is `pub` (any
    /// visibility), or when no other function of the block calls it (it is then the user's
    /// private Rust function, as it always was). A private function that the block calls is a
    /// helper: only inlined, so it never warns as dead code.
    pub(super) fn is_emitted(&self, position: usize) -> bool {
        let public = !matches!(self.functions[position].vis, syn::Visibility::Inherited);
        let called = self
            .calls
            .iter()
            .enumerate()
            .any(|(caller, calls)| caller != position && calls.iter().any(|(callee, _)| *callee == position));
        public || !called
    }

    fn names(&self) -> Vec<String> {
        let functions = self.functions.iter().map(|function| function.name.to_string());
        functions.chain(self.externs.iter().map(|function| function.name.to_string())).collect()
    }
}

impl Checker {
    /// `name(args)` where `name` is no scalar function: a function of the block (inlined) or an
    /// `extern fn`.
    pub(super) fn apply(&mut self, name: &Ident, args: &[ast::Expr], span: Span) -> Checked<Expr> {
        let args = self.all(args);
        let Some(library) = self.library.clone() else {
            // The expression form has no block: the name is a Rust function, which rustc types.
            return self.rust_call(name, args?, span);
        };
        if let Some(declaration) = library.externs.iter().find(|function| function.name == *name) {
            return self.extern_call(declaration, name, args?, span);
        }
        let Some(position) = library.functions.iter().position(|function| function.name == *name) else {
            let count = match &args {
                Ok(args) => Some(args.len()),
                Err(_) => None,
            };
            self.errors.push_error(crate::syntax::unknown_function(name, count, &library.names()));
            return Err(Reported);
        };
        let args = args?;
        let function = &library.functions[position];
        self.check_arity(name, function.params.len(), args.len())?;
        if self.call_stack.contains(&position) || library.checked.borrow()[position] != Some(true) {
            // Recursion (reported on the call graph) or a callee with errors of its own.
            self.failed_callee = true;
            return Err(Reported);
        }
        if self.call_stack.len() >= MAX_CALL_DEPTH || self.inlined_calls >= MAX_INLINED_CALLS {
            let message = format!(
                "too many calls to inline: ein inlines every call of a function of the block, and allows \
                 {MAX_CALL_DEPTH} levels of nested calls and {MAX_INLINED_CALLS} calls in one function"
            );
            self.errors.push(name.span(), message);
            return Err(Reported);
        }
        self.inlined_calls += 1;
        // Each argument against its declared parameter type, at the argument.
        let mut declared = Vec::with_capacity(args.len());
        for (param, arg) in function.params.iter().zip(&args) {
            let ty = self.declared_type(&param.ty)?;
            if self.unifier.unify_types(&ty, &arg.ty).is_err() {
                let found = self.unifier.describe_type(&arg.ty);
                let wanted = self.unifier.describe_type(&ty);
                let hint = match (ty.rank(), arg.ty.rank()) {
                    (wanted_rank, found_rank) if wanted_rank != found_rank => {
                        format!(" (rank {wanted_rank}, found rank {found_rank})")
                    }
                    _ => String::new(),
                };
                let message = format!(
                    "mismatched argument: parameter `{}` of `{name}` is {wanted}{hint}, but this is {found}{}",
                    param.name,
                    super::types::field_order_note(&ty, &arg.ty)
                );
                self.errors.push(arg.span, message);
                return Err(Reported);
            }
            declared.push(ty);
        }
        // The callee sees its parameters and none of the caller's names.
        let (caller_depth, caller_floor) = (self.scope.len(), self.scope_floor);
        self.scope_floor = caller_depth;
        let mut bindings = Vec::new();
        for ((param, arg), ty) in function.params.iter().zip(args).zip(declared) {
            let parameter = param.name.to_string();
            match arg.kind {
                ExprKind::Var(var) => self.scope.push((parameter, var)),
                _ => {
                    let var = self.declare(&parameter, ty, VarKind::Let, param.name.span());
                    self.lets.insert(var, arg.clone());
                    self.scope.push((parameter, var));
                    bindings.push((var, arg));
                }
            }
        }
        let errors_before = self.errors.len();
        self.call_stack.push(position);
        let body = self.expr(&function.body);
        self.call_stack.pop();
        self.scope.truncate(caller_depth);
        self.scope_floor = caller_floor;
        if self.errors.len() > errors_before {
            // Errors only this call can cause (the body checked on its own): say which call.
            self.errors.push(name.span(), format!("in this call of `{name}`, which ein inlines here"));
        }
        let mut body = body?;
        if let Ok(ret) = self.declared_type(&function.ret) {
            // A mismatch is reported where the callee is checked on its own.
            let _ = self.unifier.unify_types(&ret, &body.ty);
        }
        for (var, value) in bindings.into_iter().rev() {
            let ty = body.ty.clone();
            body = Expr::new(ExprKind::Let(node::Let { var, value: Box::new(value), body: Box::new(body) }), ty, span);
        }
        Ok(body)
    }

    /// The count of arguments, at the function's name (the call's smallest token).
    fn check_arity(&mut self, name: &Ident, wanted: usize, found: usize) -> Checked<()> {
        if wanted == found {
            return Ok(());
        }
        let plural = if wanted == 1 { "" } else { "s" };
        self.errors.push(name.span(), format!("`{name}` takes {wanted} argument{plural}, found {found}"));
        Err(Reported)
    }

    /// A call of an `extern fn`: scalar arguments of the declared types.
    fn extern_call(
        &mut self,
        declaration: &ast::ExternFunction,
        name: &Ident,
        args: Vec<Expr>,
        span: Span,
    ) -> Checked<Expr> {
        self.check_arity(name, declaration.params.len(), args.len())?;
        // Generated code calls the function by its name, which a Rust variable of that name
        // (a parameter or `let` of this function or of one inlined around the call) would hide.
        let text = name.to_string();
        if self.scope.iter().any(|(_, var)| self.var(*var).name == text) {
            let message = format!(
                "`{name}` is also the name of a variable here, which would hide the Rust function `{name}` in the \
                 generated code; rename the variable"
            );
            self.errors.push(name.span(), message);
            return Err(Reported);
        }
        for (param, arg) in declaration.params.iter().zip(&args) {
            let ty = self.declared_type(&param.ty)?;
            if self.unifier.unify_types(&ty, &arg.ty).is_err() {
                let found = self.unifier.describe_type(&arg.ty);
                let wanted = self.unifier.describe_type(&ty);
                let hint = if arg.ty.rank() > 0 {
                    format!("; ein calls `{name}` once per element: map it, e.g. `for i {{ {name}(a[i]) }}`")
                } else {
                    String::new()
                };
                let message = format!(
                    "mismatched argument: parameter `{}` of `extern fn {name}` is {wanted}, but this is {found}{hint}",
                    param.name
                );
                self.errors.push(arg.span, message);
                return Err(Reported);
            }
        }
        let ty: Type = self.declared_type(&declaration.ret)?;
        let derivative = declaration.derivative.clone();
        Ok(Expr::new(ExprKind::Extern(node::Extern { name: name.clone(), args, site: None, derivative }), ty, span))
    }

    /// A call of a Rust function in the expression form (note [Rust calls of the expression
    /// form]): scalar arguments; the result's type is rustc's, narrowed by its uses like a
    /// captured element type.
    ///
    /// Note [Rust calls of the expression form]: `ein!(for i { sigmoid(a[i]) })` calls the Rust
    /// function `sigmoid` once per element. The macro cannot see its signature, so generated
    /// code receives a closure made where the macro was called, `|x| sigmoid(x)`, as a parameter
    /// `F: Fn(A) -> R + Sync` of the expression's generic function: rustc types the closure
    /// from `sigmoid`'s signature there, so the argument and result types are the Rust
    /// function's (a literal argument takes its parameter's type, as in Rust), any callable
    /// name in scope works (a function, a local closure, a generic function), and a mismatch
    /// is rustc's error at the call's tokens. `Sync` lets the parallel loops share it.
    fn rust_call(&mut self, name: &Ident, args: Vec<Expr>, span: Span) -> Checked<Expr> {
        if args.len() > MAX_RUST_CALL_ARGUMENTS {
            let message = format!(
                "`{name}` is given {} arguments: ein calls Rust functions of at most {MAX_RUST_CALL_ARGUMENTS}",
                args.len()
            );
            self.errors.push(name.span(), message);
            return Err(Reported);
        }
        for arg in &args {
            if !matches!(arg.ty, Type::Scalar(_)) {
                let found = self.unifier.describe_type(&arg.ty);
                let message = format!(
                    "this argument of `{name}` is {found}: ein calls a Rust function once per element, on single values \
                     (numbers, `bool`); map it, e.g. `for i {{ {name}(a[i]) }}`"
                );
                self.errors.push(arg.span, message);
                return Err(Reported);
            }
        }
        let site = self.rust_calls.len();
        let ret = self.unifier.fresh(crate::ir::NumberClass::Any, super::types::Origin::CallResult(site));
        let params = args
            .iter()
            .map(|arg| match arg.ty {
                Type::Scalar(scalar) => scalar,
                _ => unreachable!("checked above"),
            })
            .collect();
        self.rust_calls.push(crate::ir::RustCall { name: name.clone(), params, ret });
        let kind = ExprKind::Extern(node::Extern { name: name.clone(), args, site: Some(site), derivative: None });
        Ok(Expr::new(kind, Type::Scalar(ret), span))
    }
}
