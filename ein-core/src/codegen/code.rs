//! The generator's building blocks: [`Code`] (a Rust expression with what is needed to place
//! it without extra or missing parentheses), [`Block`] (the statements of one Rust block) and
//! [`Value`] (how an IR value of any type is represented in generated code).

use proc_macro2::{Ident, TokenStream};
use quote::{quote, ToTokens};
use std::cell::Cell;
use std::rc::Rc;

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
    BitXor,
    BitAnd,
    Shift,
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
            Prec::BitOr => Prec::BitXor,
            Prec::BitXor => Prec::BitAnd,
            Prec::BitAnd => Prec::Shift,
            Prec::Shift => Prec::Add,
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
    /// The local it is exactly, if it is one.
    pub local: Option<Ident>,
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
            local: Some(ident.clone()),
        }
    }

    /// A literal (or a constant path); `prec` is `Unary` for a negative literal.
    pub(super) fn literal(tokens: TokenStream, prec: Prec) -> Code {
        Code { tokens, prec, simple: true, may_panic: false, has_unsafe: false, block_start: false, local: None }
    }

    /// Any other expression that cannot panic.
    pub(super) fn expr(tokens: TokenStream, prec: Prec) -> Code {
        Code { tokens, prec, simple: false, may_panic: false, has_unsafe: false, block_start: false, local: None }
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
            local: None,
        }
    }

    /// Whether the code is exactly the local `name`.
    pub(super) fn is(&self, name: &Ident) -> bool {
        self.local.as_ref() == Some(name)
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

/// Whether the generated code reads a view `let` ([`Block::push_view`]): set when code that
/// reads the views is generated (through [`ArrayValue::views`]), so a view nothing reads is
/// left out without looking at the generated tokens.
#[derive(Clone, Debug, Default)]
pub(super) struct ViewRead(Rc<Cell<bool>>);

impl ViewRead {
    pub(super) fn mark(&self) {
        self.0.set(true);
    }

    fn is_read(&self) -> bool {
        self.0.get()
    }
}

/// One statement of a block under construction.
pub(super) enum Stmt {
    Let {
        name: Ident,
        init: Code,
    },
    /// `let name = init;` for views (a pure, cheap expression), left out if nothing reads
    /// `name`; `base` is the view `init` reads, read only if this one is.
    View {
        name: Ident,
        init: TokenStream,
        read: ViewRead,
        base: Option<ViewRead>,
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
        self.stmts.push(Stmt::Let { name, init });
    }

    /// `let name = init;` for views, left out if nothing reads `name`: the views' array value
    /// carries the returned flag (see [`ArrayValue::bound`]). `base` is the flag of the views
    /// `init` reads, if it reads any.
    pub(super) fn push_view(&mut self, name: Ident, init: TokenStream, base: Option<ViewRead>) -> ViewRead {
        let read = ViewRead::default();
        self.stmts.push(Stmt::View { name, init, read: read.clone(), base });
        read
    }

    pub(super) fn insert_let(&mut self, at: usize, name: Ident, init: Code) {
        self.stmts.insert(at, Stmt::Let { name, init });
    }

    /// The statements followed by `tail` (`let x = e; x` becomes `e`; views nobody reads are
    /// left out).
    pub(super) fn finish(self, tail: Option<&Code>) -> TokenStream {
        // Walking backwards, so that a kept view marks the view it reads before that one is
        // reached (a view read only by another unread view goes too). A view's base is in this
        // block or an enclosing one, which is finished later.
        let mut stmts = Vec::new();
        for stmt in self.stmts.into_iter().rev() {
            if let Stmt::View { read, base, .. } = &stmt {
                if !read.is_read() {
                    continue;
                }
                base.iter().for_each(ViewRead::mark);
            }
            stmts.push(stmt);
        }
        stmts.reverse();
        // `let x = e; x` is `e`.
        let mut tail_tokens = tail.map(Code::tail);
        if let (Some(tail), Some(Stmt::Let { name, init })) = (tail, stmts.last()) {
            if tail.is(name) {
                tail_tokens = Some(init.tail());
                stmts.pop();
            }
        }
        let stmts = stmts.into_iter().map(|stmt| match stmt {
            Stmt::Let { name, init } => {
                let init = &init.tokens;
                quote!(let #name = #init;)
            }
            Stmt::View { name, init, .. } => quote!(let #name = #init;),
            Stmt::Other(tokens) => tokens,
        });
        quote!(#(#stmts)* #tail_tokens)
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
    /// A view per column, each a cheap expression (a local or a field of one); read through
    /// [`ArrayValue::views`].
    views: Tree,
    /// The owned storage behind exactly these views, if the generator created it and it may
    /// be moved out (into a function's result or a fold's accumulator) instead of copied.
    pub store: Option<Store>,
    /// The view `let` the views read, if it may be left out ([`Block::push_view`]).
    read: Option<ViewRead>,
    /// The local the (single) view is, if it is exactly one.
    local: Option<Ident>,
    /// Every view's last stride is 1: the views are of arrays the generated code built (a
    /// store), or sub-arrays of such views at leading indices. Reads then add the last index
    /// unscaled (`View::get_unit_unchecked`), which LLVM vectorises with plain loads.
    unit_last: bool,
}

impl ArrayValue {
    /// Views in locals: `read` is the flag of their `let` if it may be left out (see
    /// [`Block::push_view`]); `local` the local they are, when they are exactly one (a single
    /// column).
    pub(super) fn bound(
        views: Tree,
        store: Option<Store>,
        read: Option<ViewRead>,
        local: Option<&Ident>,
    ) -> ArrayValue {
        let local = local.filter(|_| matches!(views, Tree::Leaf(_))).cloned();
        // A store's views are `Array::view()`s: row-major, last stride 1.
        let unit_last = store.is_some();
        ArrayValue { views, store, read, local, unit_last }
    }

    /// The same value, with `unit_last` (whether every view's last stride is 1) as given.
    pub(super) fn with_unit_last(mut self, unit_last: bool) -> ArrayValue {
        self.unit_last = unit_last;
        self
    }

    /// Whether every view's last stride is 1 (see the field).
    pub(super) fn unit_last(&self) -> bool {
        self.unit_last
    }

    /// The views, for code that reads them (so their `let` stays).
    pub(super) fn views(&self) -> &Tree {
        self.mark_read();
        &self.views
    }

    /// The views, for a view `let` that reads them (marked through that `let`, see
    /// [`ArrayValue::read_flag`]) or for code that marks them itself.
    pub(super) fn views_unread(&self) -> &Tree {
        &self.views
    }

    /// Marks the views read without reading them here.
    pub(super) fn mark_read(&self) {
        self.read.iter().for_each(ViewRead::mark);
    }

    /// The flag of the view `let` these views come from, for a view derived from them.
    pub(super) fn read_flag(&self) -> Option<ViewRead> {
        self.read.clone()
    }

    /// The same array seen through other views computed from these (a projection or a
    /// column): it reads the same `let`, and is no longer a lone local.
    pub(super) fn derived(&self, views: Tree) -> ArrayValue {
        ArrayValue { views, store: None, read: self.read.clone(), local: None, unit_last: self.unit_last }
    }

    /// The local it is exactly, if it is one.
    pub(super) fn as_local(&self) -> Option<&Ident> {
        self.local.as_ref()
    }
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

    /// The store's place as code (the local itself, or a field of it).
    pub fn place(&self) -> Code {
        let local = self.fields.is_empty().then(|| self.root.clone());
        Code { simple: true, local, ..Code::expr(self.path(), Prec::Atom) }
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
