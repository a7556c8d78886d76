//! The script's abstract syntax tree.
//!
//! Input: built only by [`crate::syntax::parser`]. Output: read by the printer (`-d ast`), the
//! visitor and the later passes (checking, lowering).
//! Invariants:
//! - every node carries the [`Span`] of the text it came from (byte offsets into one
//!   [`crate::diag::SourceFile`]);
//! - every [`Expr`] has an [`ExprId`] unique within its [`Program`] and below
//!   `Program::expr_count` (a few ids may go unused), so later passes keep facts about expressions (types, resolved
//!   builtins, constant values) in side tables indexed by id instead of mutating the tree;
//! - the tree's depth is bounded (about 2 × [`MAX_TREE_DEPTH`](super::parser::MAX_TREE_DEPTH)
//!   at worst), so recursive passes cannot be driven into a stack overflow by input;
//! - the tree is what was written: no desugaring (a predicate stays a predicate, `@m[a, b]`
//!   keeps two keys, `x += 1` keeps its operator), so diagnostics can point at the user's text.

use crate::diag::Span;

pub use super::attach::{AttachPoint, AttachSpec, ProbeKind, TimeUnit};

/// Index of an expression in per-program side tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(pub u32);

impl ExprId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A name as written, with its place. Map names keep their `@` (`@` alone is the unnamed map),
/// variable names keep their `$`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A whole script.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub span: Span,
    /// `#!…` first line, if any.
    pub shebang: Option<Span>,
    /// `#include`/`#define` lines and C type definitions, in source order.
    pub c_items: Vec<CItem>,
    /// What the C head defines (macros, header enumerators), for resolving identifiers.
    pub c_defs: crate::syntax::cpp::CDefs,
    /// Struct and union definitions of the included headers (spans: the `#include`), which
    /// the kernel's BTF types of the same name take precedence over.
    pub header_types: Vec<CTypeDef>,
    pub config: Option<Config>,
    pub imports: Vec<Import>,
    /// Probes, macros, functions and map declarations, in source order.
    pub items: Vec<Item>,
    /// Number of [`Expr`] nodes: the size of an expression side table.
    pub expr_count: u32,
    /// The macros of strobe's bundled stdlib, when the script calls one (the stdlib's text is
    /// then appended to the script's and parsed with it: `builtins::stdlib`).
    pub stdlib: Vec<MacroDef>,
    /// Where the stdlib's text starts (`u32::MAX`: not appended); spans from there on are in
    /// the stdlib.
    pub stdlib_start: u32,
    /// Each macro call's own copy of the macro's body, with fresh expression ids (below
    /// `expr_count`), so each expansion has its own types: filled by the checker's expansion
    /// pass (`sema::macros`); a call without one expands the macro's body itself.
    pub expansions: std::collections::HashMap<ExprId, Block>,
}

impl Program {
    pub fn probes(&self) -> impl Iterator<Item = &Probe> {
        self.items.iter().filter_map(|i| match i {
            Item::Probe(p) => Some(p),
            _ => None,
        })
    }

    pub fn macros(&self) -> impl Iterator<Item = &MacroDef> {
        self.items.iter().filter_map(|i| match i {
            Item::Macro(m) => Some(m),
            _ => None,
        })
    }

    /// Moves the macros written at or after byte `start` (the stdlib's text appended to the
    /// script's) from [`Program::items`] to [`Program::stdlib`].
    pub fn split_stdlib(&mut self, start: u32) {
        self.stdlib_start = start;
        let items = std::mem::take(&mut self.items);
        for item in items {
            match item {
                Item::Macro(m) if m.span.start >= start => self.stdlib.push(m),
                item => self.items.push(item),
            }
        }
    }

    /// Whether `span` is in the stdlib's text.
    pub fn in_stdlib(&self, span: Span) -> bool {
        span.start >= self.stdlib_start && span != Span::NOWHERE
    }

    /// The macro that a call `name(…nargs…)` written at `at` expands in place of a builtin of
    /// that name: from the script, a script macro of that arity (bpftrace's stdlib is macros
    /// a script may override); from the stdlib, a stdlib macro of that arity.
    pub fn overriding_macro(&self, name: &str, nargs: usize, at: Span) -> Option<&MacroDef> {
        if self.in_stdlib(at) {
            self.stdlib
                .iter()
                .find(|m| m.name.name == name && m.params.len() == nargs)
        } else {
            self.macros()
                .find(|m| m.name.name == name && m.params.len() == nargs)
        }
    }

    /// The macro a call `name(…nargs…)` written at `at` expands when no builtin has that
    /// name: the visible one of that arity (the script's before the stdlib's), else one of
    /// another arity (the caller reports the count).
    pub fn macro_for_call(&self, name: &str, nargs: usize, at: Span) -> Option<&MacroDef> {
        let script = !self.in_stdlib(at);
        let own = || self.macros().filter(move |_| script);
        let lib = || self.stdlib.iter();
        let named = |m: &&MacroDef| m.name.name == name;
        let arity = |m: &&MacroDef| m.name.name == name && m.params.len() == nargs;
        own()
            .find(arity)
            .or_else(|| lib().find(arity))
            .or_else(|| own().find(named))
            .or_else(|| lib().find(named))
    }

    /// The body call `call` of macro `m` expands: its own copy when the expansion pass made
    /// one, else the macro's.
    pub fn macro_body<'a>(&'a self, call: ExprId, m: &'a MacroDef) -> &'a Block {
        self.expansions.get(&call).unwrap_or(&m.body)
    }

    /// Whether a script or stdlib macro is called `name`.
    pub fn has_macro(&self, name: &str) -> bool {
        self.macros()
            .chain(&self.stdlib)
            .any(|m| m.name.name == name)
    }

    pub fn fns(&self) -> impl Iterator<Item = &FnDef> {
        self.items.iter().filter_map(|i| match i {
            Item::Fn(f) => Some(f),
            _ => None,
        })
    }

    pub fn map_decls(&self) -> impl Iterator<Item = &MapDecl> {
        self.items.iter().filter_map(|i| match i {
            Item::MapDecl(d) => Some(d),
            _ => None,
        })
    }

    pub fn type_defs(&self) -> impl Iterator<Item = &CTypeDef> {
        self.c_items.iter().filter_map(|c| match c {
            CItem::TypeDef(d) => Some(d),
            _ => None,
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum CItem {
    Preprocessor(Preprocessor),
    TypeDef(CTypeDef),
}

/// A C preprocessor line, kept for the checker (`#define` constants, `#include`d headers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preprocessor {
    pub span: Span,
    pub kind: PreprocessorKind,
    /// The whole line as written, without the trailing newline.
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreprocessorKind {
    /// `#include <path>` (`system: true`) or `#include "path"`.
    Include { path: String, system: bool },
    /// `#define NAME value…` (function-like macros keep their parameter list in `value`).
    Define { name: String, value: String },
    /// Any other directive (`#if`, `#pragma`, …): recorded, not interpreted.
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CTypeKind {
    Struct,
    Union,
    Enum,
}

impl CTypeKind {
    pub fn keyword(self) -> &'static str {
        match self {
            CTypeKind::Struct => "struct",
            CTypeKind::Union => "union",
            CTypeKind::Enum => "enum",
        }
    }
}

/// `struct Name { … };`, `union …`, `enum …` in a script (or nested anonymously in one).
#[derive(Clone, Debug, PartialEq)]
pub struct CTypeDef {
    pub span: Span,
    pub kind: CTypeKind,
    pub name: Option<Ident>,
    pub body: CTypeBody,
    /// `__attribute__((…))` texts, e.g. `packed`.
    pub attributes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CTypeBody {
    Fields(Vec<CField>),
    Enumerators(Vec<CEnumerator>),
}

/// One declarator of a struct/union member: `int *a[4];` or `unsigned x : 3;`.
#[derive(Clone, Debug, PartialEq)]
pub struct CField {
    pub span: Span,
    pub ty: CType,
    /// None for an anonymous nested struct/union member.
    pub name: Option<Ident>,
    pub bitfield: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CEnumerator {
    pub span: Span,
    pub name: Ident,
    /// The value expression as written (`1 << 3`), if any.
    pub value: Option<Expr>,
}

/// A C type as used in a member declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct CType {
    pub span: Span,
    pub kind: CTypeExpr,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CTypeExpr {
    /// Base type words as written, normalised to single spaces: `unsigned long`, `u64`, `char`.
    Named(String),
    /// `struct foo` / `union foo` / `enum foo` reference.
    Tagged(CTypeKind, String),
    /// A nested definition (`struct { int a; } x;`).
    Inline(Box<CTypeDef>),
    Pointer(Box<CType>),
    /// `[N]`; `None` for a flexible array member `[]`.
    Array(Box<CType>, Option<u64>),
    /// A function pointer member `ret (*name)(params…)`; parameters are not interpreted.
    FuncPtr(Box<CType>),
}

/// `config = { key = value; … }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub span: Span,
    pub entries: Vec<ConfigEntry>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConfigEntry {
    pub span: Span,
    pub key: Ident,
    pub value: ConfigValue,
    pub value_span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigValue {
    Int(u64),
    Str(String),
    Bool(bool),
    Ident(String),
}

/// `import "path";` at the top level or inside a block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Import {
    pub span: Span,
    pub path: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Probe(Probe),
    Macro(MacroDef),
    Fn(FnDef),
    MapDecl(MapDecl),
}

impl Item {
    pub fn span(&self) -> Span {
        match self {
            Item::Probe(p) => p.span,
            Item::Macro(m) => m.span,
            Item::Fn(f) => f.span,
            Item::MapDecl(d) => d.span,
        }
    }
}

/// `attach, attach… /predicate/ { body }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    pub span: Span,
    pub attach_points: Vec<AttachPoint>,
    pub predicate: Option<Expr>,
    pub body: Block,
}

/// `macro name(params) { body }`.
#[derive(Clone, Debug, PartialEq)]
pub struct MacroDef {
    pub span: Span,
    pub name: Ident,
    pub params: Vec<MacroParam>,
    pub body: Block,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacroParamKind {
    /// `$x`: the caller passes a scratch variable.
    Var,
    /// `@m`: the caller passes a map.
    Map,
    /// `x`: the caller passes any expression.
    Expr,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MacroParam {
    pub kind: MacroParamKind,
    pub name: Ident,
}

/// `fn name($a: type, …): type { body }`.
#[derive(Clone, Debug, PartialEq)]
pub struct FnDef {
    pub span: Span,
    pub name: Ident,
    pub params: Vec<(Ident, TypeRef)>,
    pub ret: TypeRef,
    pub body: Block,
}

/// `let @name = kind(max_entries);` at the top level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapDecl {
    pub span: Span,
    pub map: Ident,
    pub kind: Ident,
    pub max_entries: u64,
}

/// `{ stmt; stmt; tail }`: the optional tail expression (no `;`) is the block's value.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub span: Span,
    pub stmts: Vec<Stmt>,
    pub tail: Option<Box<Expr>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub span: Span,
    pub kind: StmtKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `let $x[: type] [= init];`: a variable scoped to the enclosing block.
    Let {
        var: Ident,
        ty: Option<TypeRef>,
        init: Option<Expr>,
    },
    /// `target = value;` or, with `op`, the compound form `target op= value;`.
    Assign {
        target: LValue,
        op: Option<BinaryOp>,
        value: Expr,
    },
    /// An expression evaluated for its effect (calls, `if`, `$x++`, nested blocks).
    Expr(Expr),
    /// `_ = expr;`: evaluate and discard without a warning.
    Discard(Expr),
    While {
        cond: Expr,
        body: Block,
    },
    Unroll {
        count: Expr,
        body: Block,
    },
    For {
        var: Ident,
        iter: ForIter,
        body: Block,
    },
    Return(Option<Expr>),
    Break,
    Continue,
    Import(Import),
}

/// What a `for` loop walks.
#[derive(Clone, Debug, PartialEq)]
pub enum ForIter {
    /// `for ($kv : @map)`.
    Map(Ident),
    /// `for ($i : start..end)`, end exclusive.
    Range { start: Expr, end: Expr },
}

/// The left side of an assignment.
#[derive(Clone, Debug, PartialEq)]
pub enum LValue {
    Var(Ident),
    /// `@m`, `@m[k]`, `@m[a, b]`, `@`: `keys` is empty for a scalar map.
    Map {
        map: Ident,
        keys: Vec<Expr>,
        span: Span,
    },
}

impl LValue {
    pub fn span(&self) -> Span {
        match self {
            LValue::Var(v) => v.span,
            LValue::Map { span, .. } => *span,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub id: ExprId,
    pub span: Span,
    pub kind: ExprKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Int(IntLit),
    /// A string literal with its escapes decoded (bytes, since `\xff` need not be UTF-8).
    Str(Vec<u8>),
    Bool(bool),
    /// `$name`.
    Var(String),
    /// `@name[keys…]`; `keys` empty for a scalar map or a bare map reference.
    Map {
        name: Ident,
        keys: Vec<Expr>,
    },
    /// `$1`…`$N`.
    Positional(u32),
    /// `$#`.
    PositionalCount,
    /// A bare name: a builtin (`pid`, `args`, `arg0`), an argument-less macro, an enum value.
    Ident(String),
    /// `name(args…)`: builtin functions, macros, user functions alike.
    Call {
        name: Ident,
        args: Vec<Expr>,
    },
    Unary {
        op: UnaryOp,
        expr: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `cond ? then : else`; `then` is None for the short form `cond ?: else`.
    Ternary {
        cond: Box<Expr>,
        then: Option<Box<Expr>>,
        otherwise: Box<Expr>,
    },
    /// `(type)expr`.
    Cast {
        ty: TypeRef,
        expr: Box<Expr>,
    },
    /// `expr.field` or `expr->field` (`arrow` records which was written).
    Field {
        expr: Box<Expr>,
        field: Ident,
        arrow: bool,
    },
    /// `expr.N` on a tuple.
    TupleIndex {
        expr: Box<Expr>,
        index: u32,
    },
    /// `expr[index]`.
    Index {
        expr: Box<Expr>,
        index: Box<Expr>,
    },
    /// `(a, b)`, `(a,)`, `()`.
    Tuple(Vec<Expr>),
    /// `(name = a, other = b)`.
    Record(Vec<(Ident, Expr)>),
    Sizeof(Box<TypeOrExpr>),
    /// `offsetof(type, a.b.c)`.
    Offsetof {
        of: Box<TypeOrExpr>,
        fields: Vec<Ident>,
    },
    /// `typeof(x)` as a call argument (type parameter of a macro or builtin).
    Typeof(Box<TypeOrExpr>),
    Typeinfo(Box<TypeOrExpr>),
    Comptime(Box<Expr>),
    /// `if cond { … } [else …]` (as a statement or an expression); `otherwise` is a
    /// [`ExprKind::Block`] or another `If`.
    If {
        cond: Box<Expr>,
        then: Block,
        otherwise: Option<Box<Expr>>,
    },
    Block(Block),
    /// Stands in for an expression that failed to parse (an error was already reported).
    Error,
}

/// An integer literal, its value already scaled by any duration suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntLit {
    pub value: u64,
    pub suffix: IntSuffix,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntSuffix {
    None,
    /// C suffixes (`u`, `ul`, `ull`, `l`, `ll`): accepted, no effect on the type.
    C,
    /// `ns us ms s m h d`: the value is in nanoseconds.
    Duration,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `!x`
    Not,
    /// `~x`
    BitNot,
    /// `*p`
    Deref,
    /// `&$x`, `&@m`
    AddrOf,
    PreInc,
    PreDec,
    PostInc,
    PostDec,
}

impl UnaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            UnaryOp::Neg => "-",
            UnaryOp::Not => "!",
            UnaryOp::BitNot => "~",
            UnaryOp::Deref => "*",
            UnaryOp::AddrOf => "&",
            UnaryOp::PreInc | UnaryOp::PostInc => "++",
            UnaryOp::PreDec | UnaryOp::PostDec => "--",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinaryOp {
    pub fn symbol(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Mod => "%",
            Shl => "<<",
            Shr => ">>",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            And => "&&",
            Or => "||",
        }
    }

    /// C's binding strength (higher binds tighter); every level is left-associative.
    pub fn precedence(self) -> u8 {
        use BinaryOp::*;
        match self {
            Or => 1,
            And => 2,
            BitOr => 3,
            BitXor => 4,
            BitAnd => 5,
            Eq | Ne => 6,
            Lt | Le | Gt | Ge => 7,
            Shl | Shr => 8,
            Add | Sub => 9,
            Mul | Div | Mod => 10,
        }
    }
}

/// A type written in the script: `uint32`, `struct task_struct *`, `int8[4]`, `string[64]`.
/// Suffixes read left to right: `int32*[4]` is an array of 4 pointers.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeRef {
    pub span: Span,
    pub kind: TypeRefKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeRefKind {
    /// A builtin (`uint32`, `string`, `bool`) or typedef name (`u64`, `pid_t`).
    Named(String),
    /// `struct x`, `union x`, `enum x`.
    Tagged(CTypeKind, String),
    Pointer(Box<TypeRef>),
    /// `T[N]`; `None` for `T[]` (size taken from the cast operand). For `string`, `buffer` and
    /// `inet` the suffix is the size parameter rather than an array.
    Array(Box<TypeRef>, Option<u64>),
    /// `typeof(expr-or-type)`.
    Typeof(Box<TypeOrExpr>),
}

/// The argument of `sizeof`, `offsetof`, `typeof`, `typeinfo`.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeOrExpr {
    Type(TypeRef),
    Expr(Expr),
}
