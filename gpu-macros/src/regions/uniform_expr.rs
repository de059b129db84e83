//! The block-uniform judgement of `uniform`: which expressions every thread of a block computes
//! alike, given the uniform names so far, and which statements may leave the body first.

use super::names::{is_assignment, path_names};
use super::segments::Seg;
use std::collections::{BTreeMap, BTreeSet};
use syn::visit::Visit;
use syn::{BinOp, Expr, Stmt, UnOp};

/// Which expressions are block-uniform, given the uniform names so far.
pub(super) struct Uniform<'a> {
    pub(super) names: BTreeSet<String>,
    /// The parameters the body does not rebind.
    pub(super) params: &'a BTreeSet<String>,
    /// Every name the body binds, and how often: never a parameter or a constant.
    pub(super) bound: &'a BTreeMap<String, usize>,
}

/// Whether `stmt` may leave the body (or the thread) before the statements after it: a
/// `return`, a `?`, a `break` or `continue`, or a macro (`assert!`, `panic!`, ...) anywhere in it
/// outside closures.
pub(super) fn may_leave(stmt: &Stmt) -> bool {
    let mut find = Leaves(false);
    find.visit_stmt(stmt);
    find.0
}

/// [`may_leave`] for a split loop: its condition or iterator and its body.
pub(super) fn seg_may_leave(seg: &Seg) -> bool {
    match seg {
        Seg::Code(stmts) | Seg::Uniform(stmts) => stmts.iter().any(may_leave),
        Seg::While { cond, body, .. } => {
            let mut find = Leaves(false);
            find.visit_expr(cond);
            find.0 || body.iter().any(seg_may_leave)
        }
        Seg::For { iter, body, .. } => {
            let mut find = Leaves(false);
            find.visit_expr(iter);
            find.0 || body.iter().any(seg_may_leave)
        }
        Seg::Items(_) | Seg::Barrier(_) | Seg::Collective(_) => false,
        Seg::Leave(_) => true,
    }
}

struct Leaves(bool);

impl<'ast> Visit<'ast> for Leaves {
    fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
        self.0 = true;
    }
    fn visit_expr_try(&mut self, _: &'ast syn::ExprTry) {
        self.0 = true;
    }
    fn visit_expr_break(&mut self, _: &'ast syn::ExprBreak) {
        self.0 = true;
    }
    fn visit_expr_continue(&mut self, _: &'ast syn::ExprContinue) {
        self.0 = true;
    }
    fn visit_macro(&mut self, _: &'ast syn::Macro) {
        self.0 = true;
    }
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// Whether evaluating `expr` can panic: arithmetic that overflows in a debug build (`+`, `-`,
/// `*`, shifts, negation). The rest of what [`Uniform::expr`] accepts cannot.
pub(super) fn can_fail(expr: &Expr) -> bool {
    struct Find(bool);
    impl<'ast> Visit<'ast> for Find {
        fn visit_expr_binary(&mut self, e: &'ast syn::ExprBinary) {
            if matches!(
                e.op,
                BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Shl(_) | BinOp::Shr(_)
            ) {
                self.0 = true;
            }
            syn::visit::visit_expr_binary(self, e);
        }
        fn visit_expr_unary(&mut self, e: &'ast syn::ExprUnary) {
            if matches!(e.op, UnOp::Neg(_)) {
                self.0 = true;
            }
            syn::visit::visit_expr_unary(self, e);
        }
    }
    let mut find = Find(false);
    find.visit_expr(expr);
    find.0
}

impl Uniform<'_> {
    /// A split `for`'s iterator: a block-uniform range (`0..n`, `a..=b`) or value. (A range is
    /// not `Copy`: as a `let`'s value it stays per thread.)
    pub(super) fn iter(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Range(e) => {
                e.start.as_deref().is_none_or(|e| self.expr(e))
                    && e.end.as_deref().is_none_or(|e| self.expr(e))
            }
            Expr::Paren(e) => self.iter(&e.expr),
            expr => self.expr(expr),
        }
    }

    /// A path naming a constant or static item: `TABLE`, `module::TABLE` (a name the body binds
    /// is a local, whatever its case).
    pub(super) fn constant_path(&self, expr: &Expr) -> bool {
        let Expr::Path(path) = expr else { return false };
        let names = path_names(path);
        match names.as_slice() {
            [name] if self.bound.contains_key(name) => false,
            [.., last] => is_constant_name(last),
            [] => false,
        }
    }

    pub(super) fn expr(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Lit(_) => true,
            Expr::Path(path) => {
                let names = path_names(path);
                match names.as_slice() {
                    // A local (bound in the body) is uniform only as one of the hoisted names.
                    [name] if self.bound.contains_key(name) => self.names.contains(name),
                    [name] => self.params.contains(name) || is_constant_name(name),
                    // `Self::N`, `module::N`, `u32::MAX`.
                    [.., last] => is_constant_name(last),
                    [] => false,
                }
            }
            Expr::Cast(e) => self.expr(&e.expr),
            Expr::Paren(e) => self.expr(&e.expr),
            Expr::Group(e) => self.expr(&e.expr),
            Expr::Field(e) => self.expr(&e.base),
            Expr::Tuple(e) => e.elems.iter().all(|e| self.expr(e)),
            Expr::Unary(e) => matches!(e.op, UnOp::Neg(_) | UnOp::Not(_)) && self.expr(&e.expr),
            // A shared borrow of a uniform value (`&TABLE.view()`): the closures of the regions
            // capture the reference, a copy, where the value itself may not be `Copy`.
            Expr::Reference(e) => e.mutability.is_none() && self.expr(&e.expr),
            Expr::Binary(e) => {
                !matches!(
                    e.op,
                    BinOp::Div(_) | BinOp::Rem(_) | BinOp::DivAssign(_) | BinOp::RemAssign(_)
                ) && !is_assignment(&e.op)
                    && self.expr(&e.left)
                    && self.expr(&e.right)
            }
            Expr::MethodCall(call) => {
                call.args.is_empty()
                    && (call.method == "len" && self.expr(&call.receiver)
                        // A constant table's view (`TABLE.view()`), the launch's table, the
                        // same in every thread.
                        || call.method == "view" && self.constant_path(&call.receiver))
            }
            Expr::Call(call) => {
                let Expr::Path(path) = &*call.func else {
                    return false;
                };
                let names = path_names(path);
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                let geometry = matches!(
                    names.as_slice(),
                    ["thread", "block_dim" | "block_idx" | "grid_dim"]
                        | [
                            "ferrocuda_std",
                            "thread",
                            "block_dim" | "block_idx" | "grid_dim"
                        ]
                );
                geometry && call.args.is_empty()
            }
            // `shared!` as `#[kernel]` rewrote it: the block's one allocation, the same handle
            // in every thread.
            Expr::Verbatim(tokens) => {
                let tokens = tokens.to_string();
                tokens.contains("rewritten_by_kernel") && tokens.contains("shared_array")
            }
            _ => false,
        }
    }
}

/// A path to a constant or a static: `TABLE`, `module::TABLE`.
/// A constant's or a static's name: `SCREAMING_CASE`.
pub(super) fn is_constant_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}
