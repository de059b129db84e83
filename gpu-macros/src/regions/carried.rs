//! The variables a split body carries from region to region, and what the code generator knows
//! of their values: fixed (never changed after their `let`) or recomputable from the thread's
//! position alone (never stored: each region that reads one evaluates its `let` again).

use super::names::{idents_of, is_assignment, path_names, pattern_names};
use super::uniform_expr::is_constant_name;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::quote;
use std::collections::{BTreeMap, BTreeSet};
use syn::{Expr, Ident, Stmt};

/// A variable carried from region to region: the name the kernel gave it and the hygienic name
/// of its per-thread slots (`ferrocuda_std::cpu::Slots`, one array per variable). A rebinding
/// (`let x = …` again) is another variable with slots of its own.
#[derive(Clone)]
pub(super) struct Carried {
    pub(super) name: Ident,
    pub(super) slots: Ident,
    /// Bound without `mut` to a value of a primitive type (`fixed_lets`): it never changes, so
    /// a region copies it out of its slot and never stores it back.
    pub(super) fixed: bool,
    /// Recomputable (`recomputable_lets`): the expression each region that reads it evaluates
    /// instead (it has no slots).
    pub(super) recompute: Option<TokenStream2>,
    /// Declared by a `let` without a value and not assigned yet (`unassigned`): it has no
    /// slots, and the next region that names it declares it again with this `let`.
    pub(super) unassigned: Option<TokenStream2>,
}

/// The names of `stmts`' top-level `let`s whose value can never change: bound without `mut`
/// to a cast, a literal, a thread's index (`thread::thread_idx()`, `thread::index_1d()`), a
/// field of one, or arithmetic of those and of the `fixed` names before them. Their types are
/// primitive (or `Dim3`), with no interior mutability, so the value in the slot stays the
/// value. A later `let` of the same name decides for that name.
pub(super) fn fixed_lets(stmts: &[Stmt], fixed: &mut BTreeSet<String>) {
    fn primitive(expr: &Expr, fixed: &BTreeSet<String>) -> bool {
        match expr {
            Expr::Lit(_) | Expr::Cast(_) => true,
            Expr::Paren(e) => primitive(&e.expr, fixed),
            Expr::Group(e) => primitive(&e.expr, fixed),
            Expr::Unary(e) => !matches!(e.op, syn::UnOp::Deref(_)) && primitive(&e.expr, fixed),
            Expr::Binary(e) => primitive(&e.left, fixed) && primitive(&e.right, fixed),
            Expr::Field(e) => primitive(&e.base, fixed),
            Expr::Path(p) => p
                .path
                .get_ident()
                .is_some_and(|i| fixed.contains(&i.to_string())),
            Expr::Call(_) => call_path(expr).is_some_and(|names| {
                matches!(
                    names
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                        .as_slice(),
                    ["thread" | "ferrocuda_std", .., "thread_idx" | "index_1d"]
                        | ["thread_idx" | "index_1d"]
                )
            }),
            _ => false,
        }
    }
    /// The names `pat` binds to `expr`, each with whether it is fixed.
    fn bind(
        pat: &syn::Pat,
        expr: Option<&Expr>,
        fixed: &BTreeSet<String>,
        out: &mut Vec<(String, bool)>,
    ) {
        match (pat, expr) {
            (syn::Pat::Ident(p), _) if p.subpat.is_none() => {
                let value = expr.is_some_and(|e| primitive(e, fixed));
                out.push((
                    p.ident.to_string(),
                    p.mutability.is_none() && p.by_ref.is_none() && value,
                ));
            }
            (syn::Pat::Type(t), _) => bind(&t.pat, expr, fixed, out),
            (syn::Pat::Tuple(t), Some(Expr::Tuple(e))) if t.elems.len() == e.elems.len() => {
                for (p, e) in t.elems.iter().zip(&e.elems) {
                    bind(p, Some(e), fixed, out);
                }
            }
            (pat, _) => {
                let mut names = Vec::new();
                pattern_names(pat, &mut names);
                out.extend(names.iter().map(|n| (n.to_string(), false)));
            }
        }
    }
    for stmt in stmts {
        let Stmt::Local(local) = stmt else { continue };
        let init = local.init.as_ref().filter(|init| init.diverge.is_none());
        let mut names = Vec::new();
        bind(&local.pat, init.map(|init| &*init.expr), fixed, &mut names);
        for (name, is_fixed) in names {
            if is_fixed {
                fixed.insert(name);
            } else {
                fixed.remove(&name);
            }
        }
    }
}

/// The carried variables among `carried` that `names` name, in the order of `names`.
pub(super) fn restrict(carried: &[Carried], names: &[Ident]) -> Vec<Carried> {
    names
        .iter()
        .filter_map(|name| carried.iter().find(|c| c.name == *name).cloned())
        .collect()
}

/// Updates `known` (a name → the expression that recomputes it) with `stmts`' top-level `let`s,
/// in order: a name bound without `mut` to a function of the thread's position alone (the
/// thread functions `#[kernel]` rewrites into the region loop's variables, literals, casts,
/// fields, arithmetic without division by a variable, constants, and the `known` names before
/// it) is recomputable, by `rewrite` of its value inside a block that binds the known names it
/// reads; any other binding of a name ends it. Recomputing costs a region a few register
/// operations where the slot costs a store per thread in the region that binds it and a load in
/// each that reads it, and the loops over the threads keep no per-thread memory for it.
pub(super) fn recomputable_lets(
    stmts: &[Stmt],
    known: &mut BTreeMap<String, TokenStream2>,
    bound: &BTreeSet<String>,
    rewrite: impl Fn(&Expr) -> Expr,
) {
    for stmt in stmts {
        let Stmt::Local(local) = stmt else { continue };
        let init = local.init.as_ref().filter(|init| init.diverge.is_none());
        let pat = match &local.pat {
            syn::Pat::Type(t) => &*t.pat,
            pat => pat,
        };
        let single = match pat {
            syn::Pat::Ident(p) if p.mutability.is_none() && p.by_ref.is_none() => {
                p.subpat.is_none().then_some(&p.ident)
            }
            _ => None,
        };
        let value = single
            .zip(init)
            .filter(|(_, init)| position_only(&init.expr, known, bound));
        match value {
            Some((name, init)) => {
                let mut reads = BTreeSet::new();
                let value = &init.expr;
                idents_of(quote!(#value), &mut reads);
                let deps =
                    known
                        .iter()
                        .filter(|(dep, _)| reads.contains(*dep))
                        .map(|(dep, expr)| {
                            let dep = Ident::new(dep, name.span());
                            quote!(#[allow(unused_variables)] let #dep = #expr;)
                        });
                let ty = match &local.pat {
                    syn::Pat::Type(t) => {
                        let ty = &t.ty;
                        quote!(: #ty)
                    }
                    _ => TokenStream2::new(),
                };
                let value = rewrite(&init.expr);
                let bound = Ident::new("__ferrocuda_value", Span::mixed_site());
                let expr = quote!({ #(#deps)* let #bound #ty = #value; #bound });
                known.insert(name.to_string(), expr);
            }
            None => {
                let mut names = Vec::new();
                pattern_names(&local.pat, &mut names);
                for name in names {
                    known.remove(&name.to_string());
                }
            }
        }
    }
}

/// The thread functions of a recomputable value.
const THREAD_FUNCTIONS: &[&str] = &[
    "thread_idx",
    "index_1d",
    "block_idx",
    "block_dim",
    "grid_dim",
];

/// Whether `expr` is a function of the thread's position alone (see [`recomputable_lets`]). A
/// name the body binds (`bound`) is a local, never a constant, whatever its case.
fn position_only(
    expr: &Expr,
    known: &BTreeMap<String, TokenStream2>,
    bound: &BTreeSet<String>,
) -> bool {
    let recurse = |e: &Expr| position_only(e, known, bound);
    match expr {
        Expr::Lit(_) => true,
        Expr::Paren(e) => recurse(&e.expr),
        Expr::Group(e) => recurse(&e.expr),
        Expr::Cast(e) => recurse(&e.expr),
        Expr::Field(e) => recurse(&e.base),
        Expr::Unary(e) => !matches!(e.op, syn::UnOp::Deref(_)) && recurse(&e.expr),
        Expr::Binary(e) => {
            let by_variable = matches!(e.op, syn::BinOp::Div(_) | syn::BinOp::Rem(_))
                && !matches!(&*e.right, Expr::Lit(_));
            !by_variable && !is_assignment(&e.op) && recurse(&e.left) && recurse(&e.right)
        }
        Expr::Path(p) => p.path.get_ident().is_some_and(|i| {
            let name = i.to_string();
            known.contains_key(&name) || (!bound.contains(&name) && is_constant_name(&name))
        }),
        // The forms `Rewrite` turns into the region loop's variables.
        Expr::Call(_) => call_path(expr).is_some_and(|names| {
            matches!(
                names.iter().map(String::as_str).collect::<Vec<_>>().as_slice(),
                ["thread", f] | ["ferrocuda_std", "thread", f] if THREAD_FUNCTIONS.contains(f)
            )
        }),
        _ => false,
    }
}

/// The path of `expr` if it is a call with no arguments (`thread::thread_idx()`), as names.
fn call_path(expr: &Expr) -> Option<Vec<String>> {
    match expr {
        Expr::Call(call) if call.args.is_empty() => match &*call.func {
            Expr::Path(p) => Some(path_names(p)),
            _ => None,
        },
        _ => None,
    }
}
