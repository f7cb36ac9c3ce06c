//! The generator's building blocks: [`Code`] (a Rust expression with what is needed to place
//! it without extra or missing parentheses), [`Block`] (the statements of one Rust block) and
//! [`Value`] (how an IR value of any type is represented in generated code).

use proc_macro2::{Ident, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use std::collections::BTreeSet;

/// Rust expression precedence, loosest first (the Rust reference's table, restricted to what
/// generated code uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Prec {
    /// `if c { a } else { b }`: must be parenthesised to be an operand.
    Block,
    Or,
    And,
    Compare,
    BitOr,
    BitAnd,
    Add,
    Mul,
    Cast,
    Unary,
    /// Paths, literals, calls, method calls, field accesses, tuples, blocks.
    Atom,
}

impl Prec {
    /// The next tighter level (the minimum for a right operand of a left-associative operator).
    pub(super) fn tighter(self) -> Prec {
        match self {
            Prec::Block => Prec::Or,
            Prec::Or => Prec::And,
            Prec::And => Prec::Compare,
            Prec::Compare => Prec::BitOr,
            Prec::BitOr => Prec::BitAnd,
            Prec::BitAnd => Prec::Add,
            Prec::Add => Prec::Mul,
            Prec::Mul => Prec::Cast,
            Prec::Cast => Prec::Unary,
            Prec::Unary | Prec::Atom => Prec::Atom,
        }
    }
}

/// A Rust expression of a scalar or tuple type.
#[derive(Clone, Debug)]
pub(super) struct Code {
    pub tokens: TokenStream,
    pub prec: Prec,
    /// A local or a literal: free to evaluate late, twice, or not at all.
    pub simple: bool,
    /// Evaluating it may panic with an ein error, so it must be evaluated exactly where the
    /// semantics evaluates it, relative to other such code (see `Gen::settle`).
    pub may_panic: bool,
    /// Contains an `unsafe` block (so it must not be placed inside another one).
    pub has_unsafe: bool,
    /// Starts with a block-like expression (`unsafe { .. }`, `if ..`): as a block's tail it
    /// would be parsed as a statement if an operator followed it.
    pub block_start: bool,
}

impl Code {
    /// A local variable.
    pub(super) fn name(ident: &Ident) -> Code {
        Code {
            tokens: ident.to_token_stream(),
            prec: Prec::Atom,
            simple: true,
            may_panic: false,
            has_unsafe: false,
            block_start: false,
        }
    }

    /// A literal (or a constant path); `prec` is `Unary` for a negative literal.
    pub(super) fn literal(tokens: TokenStream, prec: Prec) -> Code {
        Code { tokens, prec, simple: true, may_panic: false, has_unsafe: false, block_start: false }
    }

    /// Any other expression that cannot panic.
    pub(super) fn expr(tokens: TokenStream, prec: Prec) -> Code {
        Code { tokens, prec, simple: false, may_panic: false, has_unsafe: false, block_start: false }
    }

    /// An expression of the given precedence built from `parts` (whose flags it inherits);
    /// `leftmost` is the part its tokens start with, if they start with one.
    pub(super) fn from_parts(tokens: TokenStream, prec: Prec, parts: &[&Code], leftmost: Option<&Code>) -> Code {
        Code {
            tokens,
            prec,
            simple: false,
            may_panic: parts.iter().any(|part| part.may_panic),
            has_unsafe: parts.iter().any(|part| part.has_unsafe),
            block_start: leftmost.is_some_and(|part| part.block_start && part.prec >= prec),
        }
    }

    /// Whether the code is exactly the local `name`.
    pub(super) fn is(&self, name: &Ident) -> bool {
        let mut trees = self.tokens.clone().into_iter();
        matches!((trees.next(), trees.next()), (Some(TokenTree::Ident(ident)), None) if ident == *name)
    }

    pub(super) fn panics(mut self, may_panic: bool) -> Code {
        self.may_panic |= may_panic;
        self
    }

    /// The tokens, parenthesised unless the expression binds at least as tightly as `min`.
    pub(super) fn operand(&self, min: Prec) -> TokenStream {
        if self.prec >= min {
            self.tokens.clone()
        } else {
            let tokens = &self.tokens;
            quote!((#tokens))
        }
    }

    /// Whether `operand(min)` keeps the code's own leading block (no parentheses added).
    pub(super) fn leads(&self, min: Prec) -> Option<&Code> {
        (self.prec >= min).then_some(self)
    }

    /// The tokens as the tail expression of a block.
    pub(super) fn tail(&self) -> TokenStream {
        if self.block_start && self.prec != Prec::Block && self.prec != Prec::Atom {
            let tokens = &self.tokens;
            quote!((#tokens))
        } else {
            self.tokens.clone()
        }
    }
}

/// One statement of a block under construction.
pub(super) enum Stmt {
    /// `let name = init;`; `droppable` when `init` is a pure, cheap expression (a view) that
    /// may be left out if nothing reads `name`.
    Let {
        name: Ident,
        init: Code,
        droppable: bool,
    },
    Other(TokenStream),
}

/// The statements of one Rust block (a function body, closure body or loop body).
#[derive(Default)]
pub(super) struct Block {
    stmts: Vec<Stmt>,
}

impl Block {
    pub(super) fn new() -> Block {
        Block::default()
    }

    pub(super) fn len(&self) -> usize {
        self.stmts.len()
    }

    pub(super) fn push(&mut self, stmt: TokenStream) {
        self.stmts.push(Stmt::Other(stmt));
    }

    pub(super) fn push_let(&mut self, name: Ident, init: Code) {
        self.stmts.push(Stmt::Let { name, init, droppable: false });
    }

    /// `let name = init;` for views: left out if nothing reads `name`.
    pub(super) fn push_view(&mut self, name: Ident, init: TokenStream) {
        self.stmts.push(Stmt::Let { name, init: Code::expr(init, Prec::Atom), droppable: true });
    }

    pub(super) fn insert_let(&mut self, at: usize, name: Ident, init: Code) {
        self.stmts.insert(at, Stmt::Let { name, init, droppable: false });
    }

    /// The statements followed by `tail` (`let x = e; x` becomes `e`; views nobody reads are
    /// left out).
    pub(super) fn finish(self, tail: Option<&Code>) -> TokenStream {
        // Views that nothing reads are left out (walking backwards, so that a view read only
        // by another unread view goes too).
        let mut read = BTreeSet::new();
        if let Some(tail) = tail {
            collect_idents(&tail.tokens, &mut read);
        }
        let mut stmts = Vec::new();
        for stmt in self.stmts.into_iter().rev() {
            match &stmt {
                Stmt::Let { name, droppable: true, .. } if !read.contains(&name.to_string()) => continue,
                Stmt::Let { init, .. } => collect_idents(&init.tokens, &mut read),
                Stmt::Other(tokens) => collect_idents(tokens, &mut read),
            }
            stmts.push(stmt);
        }
        stmts.reverse();
        // `let x = e; x` is `e`.
        let mut tail_tokens = tail.map(Code::tail);
        if let (Some(tail), Some(Stmt::Let { name, init, .. })) = (tail, stmts.last()) {
            if tail.is(name) {
                tail_tokens = Some(init.tail());
                stmts.pop();
            }
        }
        let stmts = stmts.into_iter().map(|stmt| match stmt {
            Stmt::Let { name, init, .. } => {
                let init = &init.tokens;
                quote!(let #name = #init;)
            }
            Stmt::Other(tokens) => tokens,
        });
        quote!(#(#stmts)* #tail_tokens)
    }
}

/// Every identifier in `tokens`.
fn collect_idents(tokens: &TokenStream, idents: &mut BTreeSet<String>) {
    for tree in tokens.clone() {
        match tree {
            TokenTree::Ident(ident) => {
                idents.insert(ident.to_string());
            }
            TokenTree::Group(group) => collect_idents(&group.stream(), idents),
            _ => {}
        }
    }
}

/// A tree mirroring the tuple structure of an array's element type: one leaf per scalar
/// column (arrays of tuples are stored as tuples of arrays).
#[derive(Clone, Debug)]
pub(super) enum Tree {
    Leaf(TokenStream),
    Node(Vec<Tree>),
}

impl Tree {
    pub(super) fn leaves(&self) -> Vec<&TokenStream> {
        let mut leaves = Vec::new();
        self.collect(&mut leaves);
        leaves
    }

    fn collect<'a>(&'a self, leaves: &mut Vec<&'a TokenStream>) {
        match self {
            Tree::Leaf(tokens) => leaves.push(tokens),
            Tree::Node(children) => children.iter().for_each(|child| child.collect(leaves)),
        }
    }

    /// The first leaf: every column of an array has the array's shape. `None` only for an
    /// element type with an empty tuple, which the checker never produces.
    pub(super) fn first(&self) -> Option<&TokenStream> {
        match self {
            Tree::Leaf(tokens) => Some(tokens),
            Tree::Node(children) => children.first().and_then(Tree::first),
        }
    }

    /// The same tree with every leaf transformed.
    pub(super) fn map(&self, f: &mut impl FnMut(&TokenStream) -> TokenStream) -> Tree {
        match self {
            Tree::Leaf(tokens) => Tree::Leaf(f(tokens)),
            Tree::Node(children) => Tree::Node(children.iter().map(|child| child.map(f)).collect()),
        }
    }

    /// The leaves assembled into (nested) tuple syntax.
    pub(super) fn tuple(&self) -> TokenStream {
        match self {
            Tree::Leaf(tokens) => tokens.clone(),
            Tree::Node(children) => tuple_tokens(children.iter().map(Tree::tuple).collect()),
        }
    }
}

/// `(a, b)`, or `(a,)` for one element.
pub(super) fn tuple_tokens(items: Vec<TokenStream>) -> TokenStream {
    if items.len() == 1 {
        let item = &items[0];
        quote!((#item,))
    } else {
        quote!((#(#items),*))
    }
}

/// An array value in generated code.
#[derive(Clone, Debug)]
pub(super) struct ArrayValue {
    /// A view per column, each a cheap expression (a local or a field of one).
    pub views: Tree,
    /// The owned storage behind exactly these views, if the generator created it and it may
    /// be moved out (into a function's result or a fold's accumulator) instead of copied.
    pub store: Option<Store>,
}

#[derive(Clone, Debug)]
pub(super) struct Store {
    /// The local that owns the `Array` (or tuple of them), e.g. `__ein_store` or `__ein_acc`.
    pub root: Ident,
    /// The tuple fields, outermost first, from the local to the array (`__ein_acc.0.1`).
    pub fields: Vec<usize>,
    /// The block depth it was declared at: moving it from a deeper block (a loop body) would
    /// move it once per iteration.
    pub level: usize,
}

impl Store {
    /// The store as a Rust place expression.
    pub fn path(&self) -> TokenStream {
        let root = &self.root;
        let fields = self.fields.iter().map(|&field| syn::Index::from(field));
        quote!(#root #(.#fields)*)
    }
}

/// How an IR value is represented in generated code.
#[derive(Clone, Debug)]
pub(super) enum Value {
    /// A scalar, or a tuple with no array inside: one Rust expression.
    Plain(Code),
    Array(ArrayValue),
    /// A tuple with at least one array inside: one value per field, each cheap.
    Tuple(Vec<Value>),
}
