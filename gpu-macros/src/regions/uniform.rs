//! Block-uniform `let`s of a split body: a top-level `let` whose value every thread of a block
//! computes alike (a `shared!` array, `thread::block_dim()`, a parameter's length, casts and
//! arithmetic of those) is hoisted above the regions, evaluated once per block and read by every
//! region, instead of being carried per thread from region to region (a store slot per thread
//! per region boundary: the split path's main cost in kernels with many barriers).
//!
//! Only what cannot panic differently per block and cannot observe time is hoisted: no calls
//! but the block's geometry, `len()` and a constant table's `view()`, no division or
//! remainder, no indexing, no reads of shared memory. The name must be bound once in the body
//! and not be a parameter's, so that hoisting changes no name's meaning.

use super::{path_names, Seg};
use std::collections::{BTreeMap, BTreeSet};
use syn::visit::Visit;
use syn::{BinOp, Block, Expr, FnArg, Pat, Stmt, UnOp};

/// Takes the block-uniform `let`s out of the top-level code segments of `segs`, in order.
pub(super) fn hoist(
    segs: &mut Vec<Seg>,
    block: &Block,
    inputs: impl IntoIterator<Item = FnArg>,
) -> Vec<Stmt> {
    let mut bindings = BTreeMap::<String, usize>::new();
    count_bindings(block, &mut bindings);
    let params: BTreeSet<String> = inputs
        .into_iter()
        .filter_map(|input| match input {
            FnArg::Typed(typed) => match *typed.pat {
                Pat::Ident(p) => Some(p.ident.to_string()),
                _ => None,
            },
            FnArg::Receiver(_) => None,
        })
        .collect();
    let mut uniform = Uniform {
        names: BTreeSet::new(),
        params: &params,
    };
    let mut hoisted = Vec::new();
    for seg in segs.iter_mut() {
        let Seg::Code(stmts) = seg else { continue };
        stmts.retain(|stmt| {
            let Stmt::Local(local) = stmt else {
                return true;
            };
            let Some(init) = &local.init else {
                return true;
            };
            let mut names = Vec::new();
            let hoistable = init.diverge.is_none()
                && simple_names(&local.pat, &mut names)
                && names
                    .iter()
                    .all(|name| bindings.get(name) == Some(&1) && !params.contains(name))
                && uniform.expr(&init.expr);
            if hoistable {
                uniform.names.extend(names);
                hoisted.push(stmt.clone());
            }
            !hoistable
        });
    }
    segs.retain(|seg| !matches!(seg, Seg::Code(stmts) if stmts.is_empty()));
    hoisted
}

/// The names of `pat` if it is made of plain immutable bindings only (`x`, `(a, b)`, `x: T`).
fn simple_names(pat: &Pat, names: &mut Vec<String>) -> bool {
    match pat {
        Pat::Ident(p) => {
            names.push(p.ident.to_string());
            p.mutability.is_none() && p.by_ref.is_none() && p.subpat.is_none()
        }
        Pat::Tuple(t) => t.elems.iter().all(|p| simple_names(p, names)),
        Pat::Type(t) => simple_names(&t.pat, names),
        _ => false,
    }
}

/// How many times each name is bound anywhere in `block`.
fn count_bindings(block: &Block, counts: &mut BTreeMap<String, usize>) {
    struct Count<'a>(&'a mut BTreeMap<String, usize>);
    impl<'ast> Visit<'ast> for Count<'_> {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            *self.0.entry(p.ident.to_string()).or_default() += 1;
            syn::visit::visit_pat_ident(self, p);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    Count(counts).visit_block(block);
}

/// Which expressions are block-uniform, given the uniform names so far.
struct Uniform<'a> {
    names: BTreeSet<String>,
    params: &'a BTreeSet<String>,
}

impl Uniform<'_> {
    fn expr(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Lit(_) => true,
            Expr::Path(path) => {
                let names = path_names(path);
                match names.as_slice() {
                    [name] => {
                        self.params.contains(name)
                            || self.names.contains(name)
                            || is_constant_name(name)
                    }
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
                        || call.method == "view" && is_constant_path(&call.receiver))
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
fn is_constant_path(expr: &Expr) -> bool {
    let Expr::Path(path) = expr else { return false };
    path_names(path)
        .last()
        .is_some_and(|name| is_constant_name(name))
}

/// A constant's or a static's name: `SCREAMING_CASE`.
fn is_constant_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

fn is_assignment(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::AddAssign(_)
            | BinOp::SubAssign(_)
            | BinOp::MulAssign(_)
            | BinOp::BitXorAssign(_)
            | BinOp::BitAndAssign(_)
            | BinOp::BitOrAssign(_)
            | BinOp::ShlAssign(_)
            | BinOp::ShrAssign(_)
    )
}
