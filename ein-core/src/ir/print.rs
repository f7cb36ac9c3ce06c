//! IR pretty-printer: a deterministic, readable text form of a [`Program`] (used by `EIN_DUMP`
//! and by structure/snapshot tests, so the format is kept stable).
//!
//! The format, by example:
//! ```text
//! fn<T0: Float>(x: [[f32]], eps: T0) -> [[f32]]
//! assert len(x, 0) == len(y, 0) (i)
//! for i in 0..len(x, 0) {
//!   let m: f32 = max k in 0..len(x, 1) { x[i][k] }
//!   for j in 0..len(x, 1) {
//!     exp(x[i][j]~ - m) / sum k in 0..len(x, 1) { exp(x[i][k] - m) }
//!   }
//! }
//! ```
//! - The first line is the signature: type parameters with their number class (only when there
//!   are any), parameters with their types, and the result type. The body follows at indent 0.
//! - Statement-like constructs get their own lines: `let`, `assert`, and `for`/`fold`/`scan` (whose
//!   body always opens an indented block, two spaces per level). A reduction, or an `if`,
//!   opens a block only when its body contains a `let`, `assert`, `for` or `fold`; otherwise it
//!   stays on one line. Inside an operand everything is printed on one line, with `let` and
//!   `assert` as `{ let x: T = v; body }` and `{ assert l == r (k); body }`.
//! - Variables print as the user's name, with a `#id` suffix (the `VarId`) only when two
//!   variables of the program share that name, so the text is unambiguous.
//! - `a[i]` is a read proven in bounds ([`Bounds::Proven`]); `a[i]~` is a clamped read
//!   ([`Bounds::Clamped`]).
//! - `assert l == r (k)` is one size check; `k` is the index whose size both sides define.
//! - `fold t in 0..n, acc: T = init { body }` (and `scan` alike); `sum k in 0..n { body }` (likewise for every
//!   reduction); `if c { a } else { b }` for a select (both sides are evaluated).
//! - Types print as ein spells them: `f32`, `[[f32]]`, `(f32, i64)`, `{re: f64, im: f64}`, and
//!   `T0` for the type parameter `ScalarType::Param(0)`.
//! - A contraction (made by the `contract` pass) prints as the loop nest it stands for, marked
//!   `contract`, with each operand's axes in one bracket:
//!   `contract i in 0..m, j in 0..n { s * sum k in 0..p { a[i, k] * b[k, j] } }`.
//! - Literals: integers in decimal, floats as Rust's `{:?}` of the stored `f64` (`1.0`, `inf`,
//!   `NaN`), without a type suffix.
//! - There is no trailing newline.
//!
//! The printer never panics, even on a malformed program (an undeclared variable prints as
//! `?#id`).

use super::node;
use super::{
    Bounds, Contraction, Expr, ExprKind, Literal, NumberClass, Program, ScalarType, Scale, Side, Type, UnaryOp, VarId,
};
use crate::ops::BinaryOp;
use std::collections::BTreeSet;
use std::fmt::{self, Write};

/// The multi-line text of `expr` as it would appear in the body of `program` (variable names
/// are disambiguated against every variable of `program`). No trailing newline.
pub fn expr_to_string(program: &Program, expr: &Expr) -> String {
    let printer = Printer::new(program);
    let mut text = String::new();
    printer.statement(expr, 0, &mut text);
    trim_final_newline(&mut text);
    text
}

impl fmt::Display for Program {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let printer = Printer::new(self);
        let mut text = String::from("fn");
        if !self.type_params.is_empty() {
            let params: Vec<String> = self
                .type_params
                .iter()
                .enumerate()
                .map(|(position, param)| format!("T{position}: {}", class_name(param.class)))
                .collect();
            let _ = write!(text, "<{}>", params.join(", "));
        }
        let params: Vec<String> = self
            .params
            .iter()
            .map(|&param| {
                let ty = self.vars.get(param.0 as usize).map(|info| info.ty.to_string());
                format!("{}: {}", printer.var_name(param), ty.unwrap_or_else(|| "?".to_string()))
            })
            .collect();
        let _ = writeln!(text, "({}) -> {}", params.join(", "), self.body.ty);
        printer.statement(&self.body, 0, &mut text);
        trim_final_newline(&mut text);
        formatter.write_str(&text)
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScalarType::Known(scalar) => formatter.write_str(scalar.name()),
            ScalarType::Param(position) => write!(formatter, "T{position}"),
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Scalar(scalar) => write!(formatter, "{scalar}"),
            Type::Array { elem, rank } => {
                write!(formatter, "{}{elem}{}", "[".repeat(*rank), "]".repeat(*rank))
            }
            Type::Tuple { fields, names } if !names.is_empty() => {
                formatter.write_str("{")?;
                for (position, field) in fields.iter().enumerate() {
                    if position > 0 {
                        formatter.write_str(", ")?;
                    }
                    let name = names.get(position).map(String::as_str).unwrap_or("?");
                    write!(formatter, "{name}: {field}")?;
                }
                formatter.write_str("}")
            }
            Type::Tuple { fields, .. } => {
                formatter.write_str("(")?;
                for (position, field) in fields.iter().enumerate() {
                    if position > 0 {
                        formatter.write_str(", ")?;
                    }
                    write!(formatter, "{field}")?;
                }
                if fields.len() == 1 {
                    formatter.write_str(",")?;
                }
                formatter.write_str(")")
            }
        }
    }
}

fn class_name(class: NumberClass) -> &'static str {
    match class {
        NumberClass::Any => "Any",
        NumberClass::Number => "Number",
        NumberClass::Float => "Float",
        NumberClass::Int => "Int",
        NumberClass::Bool => "Bool",
    }
}

fn trim_final_newline(text: &mut String) {
    if text.ends_with('\n') {
        text.pop();
    }
}

/// Binding strength of a printed construct; an operand weaker than its position requires is
/// parenthesised. Mirrors Rust's precedence so the text reads as Rust would parse it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Precedence {
    /// `if`: only unparenthesised at the top of an expression.
    Construct,
    Or,
    And,
    Compare,
    BitOr,
    BitXor,
    BitAnd,
    Shift,
    Add,
    Multiply,
    Cast,
    Prefix,
    Postfix,
}

fn binary_precedence(op: BinaryOp) -> Precedence {
    match op {
        BinaryOp::Or => Precedence::Or,
        BinaryOp::And => Precedence::And,
        BinaryOp::Add | BinaryOp::Sub => Precedence::Add,
        BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => Precedence::Multiply,
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => Precedence::Compare,
        BinaryOp::BitOr => Precedence::BitOr,
        BinaryOp::BitXor => Precedence::BitXor,
        BinaryOp::BitAnd => Precedence::BitAnd,
        BinaryOp::Shl | BinaryOp::Shr => Precedence::Shift,
    }
}

/// The next-stronger precedence (for right operands of left-associative operators and both
/// operands of non-associative comparisons).
fn stronger(precedence: Precedence) -> Precedence {
    match precedence {
        Precedence::Construct => Precedence::Or,
        Precedence::Or => Precedence::And,
        Precedence::And => Precedence::Compare,
        Precedence::Compare => Precedence::BitOr,
        Precedence::BitOr => Precedence::BitXor,
        Precedence::BitXor => Precedence::BitAnd,
        Precedence::BitAnd => Precedence::Shift,
        Precedence::Shift => Precedence::Add,
        Precedence::Add => Precedence::Multiply,
        Precedence::Multiply => Precedence::Cast,
        Precedence::Cast => Precedence::Prefix,
        Precedence::Prefix | Precedence::Postfix => Precedence::Postfix,
    }
}

/// Whether a construct in statement position spreads over several lines: its body holds a
/// `let`, `assert`, `for` or `fold` somewhere.
fn needs_block(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Let(_)
        | ExprKind::Assert(_)
        | ExprKind::For(_)
        | ExprKind::Filter(_)
        | ExprKind::Fold(_)
        | ExprKind::Scan(_)
        | ExprKind::Accum(_) => true,
        _ => {
            let mut found = false;
            expr.for_each_child(|child| found = found || needs_block(child));
            found
        }
    }
}

const INDENT: &str = "  ";

struct Printer<'p> {
    program: &'p Program,
    /// Names carried by more than one variable: those print with their `#id`.
    shared_names: BTreeSet<&'p str>,
}

impl<'p> Printer<'p> {
    fn new(program: &'p Program) -> Printer<'p> {
        let mut seen = BTreeSet::new();
        let mut shared_names = BTreeSet::new();
        for info in &program.vars {
            if !seen.insert(info.name.as_str()) {
                shared_names.insert(info.name.as_str());
            }
        }
        Printer { program, shared_names }
    }

    fn var_name(&self, var: VarId) -> String {
        match self.program.vars.get(var.0 as usize) {
            Some(info) if info.name.is_empty() => format!("_#{}", var.0),
            Some(info) if self.shared_names.contains(info.name.as_str()) => format!("{}#{}", info.name, var.0),
            Some(info) => info.name.clone(),
            None => format!("?#{}", var.0),
        }
    }

    fn var_type(&self, var: VarId) -> String {
        match self.program.vars.get(var.0 as usize) {
            Some(info) => info.ty.to_string(),
            None => "?".to_string(),
        }
    }

    fn line(&self, indent: usize, text: &str, out: &mut String) {
        for _ in 0..indent {
            out.push_str(INDENT);
        }
        out.push_str(text);
        out.push('\n');
    }

    /// Writes `expr` in statement position: `let` and `assert` become lines of their own, and
    /// the expression's value is the last line.
    fn statement(&self, expr: &Expr, indent: usize, out: &mut String) {
        match &expr.kind {
            ExprKind::Let(node::Let { var, value, body }) => {
                let prefix = format!("let {}: {} = ", self.var_name(*var), self.var_type(*var));
                self.opened(&prefix, value, indent, out);
                self.statement(body, indent, out);
            }
            ExprKind::Assert(node::Assert { checks, body }) => {
                for check in checks {
                    let text = format!(
                        "assert {} == {} ({})",
                        self.inline_string(&check.left, Precedence::Compare),
                        self.inline_string(&check.right, Precedence::Compare),
                        if check.index_name.is_empty() { "shape" } else { &check.index_name }
                    );
                    self.line(indent, &text, out);
                }
                self.statement(body, indent, out);
            }
            _ => self.opened("", expr, indent, out),
        }
    }

    /// Writes `prefix` followed by `expr`, opening an indented block when `expr` is a
    /// construct whose body deserves its own lines.
    fn opened(&self, prefix: &str, expr: &Expr, indent: usize, out: &mut String) {
        match &expr.kind {
            ExprKind::For(node::For { index, size, body }) => {
                let header = format!(
                    "{prefix}for {} in 0..{} {{",
                    self.var_name(*index),
                    self.inline_string(size, Precedence::Add)
                );
                self.nested(&header, body, indent, out);
            }
            ExprKind::Filter(node::For { index, size, body }) => {
                let header = format!(
                    "{prefix}filter {} in 0..{} {{",
                    self.var_name(*index),
                    self.inline_string(size, Precedence::Add)
                );
                self.nested(&header, body, indent, out);
            }
            ExprKind::Fold(node::Fold { index, count, acc, init, body }) => {
                let header = format!("{prefix}{} {{", self.fold_header("fold", *index, count, *acc, init));
                self.nested(&header, body, indent, out);
            }
            ExprKind::Scan(node::Scan { index, count, acc, init, body }) => {
                let header = format!("{prefix}{} {{", self.fold_header("scan", *index, count, *acc, init));
                self.nested(&header, body, indent, out);
            }
            ExprKind::Accum(accum) => {
                let header = format!("{prefix}{} {{", self.accum_header(accum));
                self.nested(&header, &accum.updates, indent, out);
            }
            ExprKind::Reduce(node::Reduce { op, index, size, body }) if needs_block(body) => {
                let header = format!(
                    "{prefix}{} {} in 0..{} {{",
                    op.name(),
                    self.var_name(*index),
                    self.inline_string(size, Precedence::Add)
                );
                self.nested(&header, body, indent, out);
            }
            ExprKind::Select(node::Select { cond, then, otherwise }) if needs_block(then) || needs_block(otherwise) => {
                let header = format!("{prefix}if {} {{", self.inline_string(cond, Precedence::Or));
                self.line(indent, &header, out);
                self.statement(then, indent + 1, out);
                self.line(indent, "} else {", out);
                self.statement(otherwise, indent + 1, out);
                self.line(indent, "}", out);
            }
            ExprKind::Let(_) | ExprKind::Assert(_) if !prefix.is_empty() => {
                self.nested(&format!("{prefix}{{"), expr, indent, out);
            }
            ExprKind::Let(_) | ExprKind::Assert(_) => self.statement(expr, indent, out),
            _ => {
                let text = format!("{prefix}{}", self.inline_string(expr, Precedence::Construct));
                self.line(indent, &text, out);
            }
        }
    }

    /// `header` line, `body` one level deeper, closing brace.
    fn nested(&self, header: &str, body: &Expr, indent: usize, out: &mut String) {
        self.line(indent, header, out);
        self.statement(body, indent + 1, out);
        self.line(indent, "}", out);
    }

    /// `accum h = init, updates [+=, |=]`: the updates' tuple holds each one's condition,
    /// indices and value, in this order.
    fn accum_header(&self, accum: &node::Accum) -> String {
        let ops: Vec<&str> = accum.ops.iter().map(|op| op.symbol()).collect();
        let keyword = match accum.value {
            node::AccumValue::Final => "accum",
            node::AccumValue::Before => "accum_history",
            node::AccumValue::BeforeReversed => "accum_history_reversed",
        };
        format!(
            "{keyword} {} = {}, updates [{}]",
            accum.target,
            self.inline_string(&accum.init, Precedence::Construct),
            ops.join(", ")
        )
    }

    /// `fold t in 0..n, acc: T = init` (or `scan …`).
    fn fold_header(&self, keyword: &str, index: VarId, count: &Expr, acc: VarId, init: &Expr) -> String {
        format!(
            "{keyword} {} in 0..{}, {}: {} = {}",
            self.var_name(index),
            self.inline_string(count, Precedence::Add),
            self.var_name(acc),
            self.var_type(acc),
            self.inline_string(init, Precedence::Or)
        )
    }

    fn inline_string(&self, expr: &Expr, required: Precedence) -> String {
        let mut text = String::new();
        self.inline(expr, required, &mut text);
        text
    }

    /// Writes `expr` on one line, parenthesised if it binds less tightly than `required`.
    fn inline(&self, expr: &Expr, required: Precedence, out: &mut String) {
        let own = self.precedence(expr);
        if own < required {
            out.push('(');
            self.inline_unparenthesised(expr, out);
            out.push(')');
        } else {
            self.inline_unparenthesised(expr, out);
        }
    }

    fn precedence(&self, expr: &Expr) -> Precedence {
        match &expr.kind {
            ExprKind::Literal(Literal::Int(value)) if *value < 0 => Precedence::Prefix,
            ExprKind::Literal(Literal::Float(value, _)) if value.is_sign_negative() && !value.is_nan() => {
                Precedence::Prefix
            }
            // An `if` as an operand is parenthesised (`if c { a } else { b } + 1` would read as
            // if `+ 1` belonged to the else branch); the brace-closed loops are atoms.
            ExprKind::Select(_) => Precedence::Construct,
            ExprKind::Unary(_) => Precedence::Prefix,
            ExprKind::Binary(node::Binary { op, .. }) => binary_precedence(*op),
            ExprKind::Cast(_) => Precedence::Cast,
            // Literals, variables, braces, calls, indexing, projections, tuples, and `for`,
            // reductions and `fold`, which end with their closing brace.
            _ => Precedence::Postfix,
        }
    }

    fn inline_unparenthesised(&self, expr: &Expr, out: &mut String) {
        match &expr.kind {
            ExprKind::Literal(literal) => match literal {
                Literal::Int(value) => {
                    let _ = write!(out, "{value}");
                }
                Literal::Float(value, as_f32) => {
                    let _ = write!(out, "{value:?}");
                    // Two literals are the same term only if they agree as `f32`s too.
                    if as_f32.to_bits() != (*value as f32).to_bits() {
                        let _ = write!(out, " /* {as_f32:?}f32 */");
                    }
                }
                Literal::Bool(value) => {
                    let _ = write!(out, "{value}");
                }
            },
            ExprKind::Var(var) => out.push_str(&self.var_name(*var)),
            ExprKind::For(node::For { index, size, body }) => {
                let _ = write!(out, "for {} in 0..", self.var_name(*index));
                self.inline(size, Precedence::Add, out);
                out.push_str(" { ");
                self.inline(body, Precedence::Construct, out);
                out.push_str(" }");
            }
            ExprKind::Filter(node::For { index, size, body }) => {
                let _ = write!(out, "filter {} in 0..", self.var_name(*index));
                self.inline(size, Precedence::Add, out);
                out.push_str(" { ");
                self.inline(body, Precedence::Construct, out);
                out.push_str(" }");
            }
            ExprKind::Reduce(node::Reduce { op, index, size, body }) => {
                let _ = write!(out, "{} {} in 0..", op.name(), self.var_name(*index));
                self.inline(size, Precedence::Add, out);
                out.push_str(" { ");
                self.inline(body, Precedence::Construct, out);
                out.push_str(" }");
            }
            ExprKind::Fold(node::Fold { index, count, acc, init, body }) => {
                out.push_str(&self.fold_header("fold", *index, count, *acc, init));
                out.push_str(" { ");
                self.inline(body, Precedence::Construct, out);
                out.push_str(" }");
            }
            ExprKind::Scan(node::Scan { index, count, acc, init, body }) => {
                out.push_str(&self.fold_header("scan", *index, count, *acc, init));
                out.push_str(" { ");
                self.inline(body, Precedence::Construct, out);
                out.push_str(" }");
            }
            ExprKind::Accum(accum) => {
                out.push_str(&self.accum_header(accum));
                out.push_str(" { ");
                self.inline(&accum.updates, Precedence::Construct, out);
                out.push_str(" }");
            }
            ExprKind::Let(_) | ExprKind::Assert(_) => {
                out.push_str("{ ");
                self.inline_statements(expr, out);
                out.push_str(" }");
            }
            ExprKind::Index(node::Index { array, index, bounds }) => {
                self.inline(array, Precedence::Postfix, out);
                out.push('[');
                self.inline(index, Precedence::Construct, out);
                out.push(']');
                if *bounds == Bounds::Clamped {
                    out.push('~');
                }
            }
            ExprKind::Select(node::Select { cond, then, otherwise }) => {
                out.push_str("if ");
                self.inline(cond, Precedence::Or, out);
                out.push_str(" { ");
                self.inline(then, Precedence::Construct, out);
                out.push_str(" } else { ");
                self.inline(otherwise, Precedence::Construct, out);
                out.push_str(" }");
            }
            ExprKind::Tuple(items) => match &expr.ty {
                Type::Tuple { names, .. } if !names.is_empty() => {
                    out.push('{');
                    for (position, item) in items.iter().enumerate() {
                        if position > 0 {
                            out.push_str(", ");
                        }
                        let name = names.get(position).map(String::as_str).unwrap_or("?");
                        let _ = write!(out, "{name}: ");
                        self.inline(item, Precedence::Construct, out);
                    }
                    out.push('}');
                }
                _ => {
                    out.push('(');
                    self.comma_separated(items, out);
                    if items.len() == 1 {
                        out.push(',');
                    }
                    out.push(')');
                }
            },
            ExprKind::Project(node::Project { tuple, field }) => {
                self.inline(tuple, Precedence::Postfix, out);
                out.push('.');
                // A projection on an array of records projects each element.
                let record = match &tuple.ty {
                    Type::Array { elem, .. } => elem.as_ref(),
                    other => other,
                };
                match record {
                    Type::Tuple { names, .. } if !names.is_empty() => match names.get(*field) {
                        Some(name) => out.push_str(name),
                        None => {
                            let _ = write!(out, "{field}");
                        }
                    },
                    _ => {
                        let _ = write!(out, "{field}");
                    }
                }
            }
            ExprKind::Unary(node::Unary { op, operand }) => {
                out.push_str(match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Not => "!",
                });
                // `--x` would read as a decrement; keep nested prefixes apart.
                if self.precedence(operand) == Precedence::Prefix {
                    out.push('(');
                    self.inline_unparenthesised(operand, out);
                    out.push(')');
                } else {
                    self.inline(operand, Precedence::Prefix, out);
                }
            }
            ExprKind::Binary(node::Binary { op, lhs, rhs }) => {
                let own = binary_precedence(*op);
                let left_required = if op.is_comparison() { stronger(own) } else { own };
                self.inline(lhs, left_required, out);
                let _ = write!(out, " {} ", op.symbol());
                self.inline(rhs, stronger(own), out);
            }
            ExprKind::Call(node::Call { func, args }) => {
                out.push_str(func.name());
                out.push('(');
                self.comma_separated(args, out);
                out.push(')');
            }
            ExprKind::Extern(node::Extern { name, args, .. }) => {
                let _ = write!(out, "{name}");
                out.push('(');
                self.comma_separated(args, out);
                out.push(')');
            }
            ExprKind::Cast(node::Cast { operand, to, saturating }) => {
                self.inline(operand, Precedence::Cast, out);
                let _ = write!(out, " as {to}");
                if *saturating {
                    out.push_str(" /* saturating */");
                }
            }
            ExprKind::Len(node::Len { array, axis }) => {
                out.push_str("len(");
                self.inline(array, Precedence::Construct, out);
                let _ = write!(out, ", {axis})");
            }
            ExprKind::Contract(contraction) => self.contraction(contraction, out),
        }
    }

    /// `contract i in 0..m, j in 0..n { s * sum k in 0..p { a[i, k] * b[k, j] } }`: the loop
    /// nest it stands for, marked `contract`, each operand's axes listed in one bracket.
    fn contraction(&self, contraction: &Contraction, out: &mut String) {
        let ranges = |labels: &[super::Label]| {
            let ranges: Vec<String> = labels
                .iter()
                .map(|label| format!("{} in 0..{}", label.name, self.inline_string(&label.size, Precedence::Add)))
                .collect();
            ranges.join(", ")
        };
        out.push_str("contract ");
        let outputs = ranges(contraction.output_labels());
        if !outputs.is_empty() {
            out.push_str(&outputs);
            out.push(' ');
        }
        out.push_str("{ ");
        if let Some(Scale { factor, side: Side::Left }) = &contraction.scale {
            self.inline(factor, Precedence::Multiply, out);
            out.push_str(" * ");
        }
        let _ = write!(out, "sum {} {{ ", ranges(contraction.summed_labels()));
        for (position, operand) in contraction.operands.iter().enumerate() {
            if position > 0 {
                out.push_str(" * ");
            }
            self.inline(&operand.array, Precedence::Postfix, out);
            let names: Vec<&str> = operand
                .axes
                .iter()
                .map(|&label| contraction.labels.get(label).map_or("?", |label| label.name.as_str()))
                .collect();
            let _ = write!(out, "[{}]", names.join(", "));
        }
        out.push_str(" }");
        if let Some(Scale { factor, side: Side::Right }) = &contraction.scale {
            out.push_str(" * ");
            self.inline(factor, Precedence::Cast, out);
        }
        out.push_str(" }");
    }

    /// The inside of an inline `{ .. }` block: `let`s and `assert`s separated by `; `.
    fn inline_statements(&self, expr: &Expr, out: &mut String) {
        match &expr.kind {
            ExprKind::Let(node::Let { var, value, body }) => {
                let _ = write!(out, "let {}: {} = ", self.var_name(*var), self.var_type(*var));
                self.inline(value, Precedence::Construct, out);
                out.push_str("; ");
                self.inline_statements(body, out);
            }
            ExprKind::Assert(node::Assert { checks, body }) => {
                for check in checks {
                    out.push_str("assert ");
                    self.inline(&check.left, Precedence::Compare, out);
                    out.push_str(" == ");
                    self.inline(&check.right, Precedence::Compare, out);
                    let index = if check.index_name.is_empty() { "shape" } else { &check.index_name };
                    let _ = write!(out, " ({index}); ");
                }
                self.inline_statements(body, out);
            }
            _ => self.inline(expr, Precedence::Construct, out),
        }
    }

    fn comma_separated(&self, items: &[Expr], out: &mut String) {
        for (position, item) in items.iter().enumerate() {
            if position > 0 {
                out.push_str(", ");
            }
            self.inline(item, Precedence::Construct, out);
        }
    }
}
