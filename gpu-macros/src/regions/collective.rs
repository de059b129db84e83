//! Block collectives as sync points of the split path: a `let` of the body whose value is
//! `block::reduce(..)` or `block::reduce_add(..)` (ferrocuda-std's `block` module) ends the
//! region before it like a barrier. That region hands each thread's arguments to a per-block
//! state (`ferrocuda_std::split_steps::collective::Collective`, declared above the regions), one
//! block-level step folds them as the GPU's warps would (`Collective::fold`, which also checks
//! that every thread got there), and the region after binds each thread's result. Anywhere else
//! (in an `if`, a closure, an expression) a collective counts as a barrier there, which keeps the
//! kernel on the coroutine path, where the call runs its GPU code.
//!
//! A tensor-core `mma` (`mma(..)`, `mma::mma(..)`, `ferrocuda_std::mma::mma(..)`) is the same
//! kind of sync point, in `let d = mma(..);` or `d = mma(..);`: the region before hands each
//! thread's operands to a per-block state (`ferrocuda_std::split_steps::collective::MmaCollective`),
//! one step does every warp's `mma`, and the region after takes each thread's part of D, so
//! no thread suspends (at run time, an `mma` the macro does not see is a warp rendezvous on
//! coroutines, a switch per thread). A warp's product of two shared tiles, `mma_tiles(..)`
//! (`MmaTilesCollective`), is one the same way: one step does every warp's whole product.

use super::names::{path_names, regions_ident};
use proc_macro2::Span;
use quote::{format_ident, quote, quote_spanned};
use std::cell::Cell;
use syn::spanned::Spanned;
use syn::{Expr, ExprPath, Ident, Stmt};

/// The collectives `#[kernel]` knows, by the last segment of their path.
const COLLECTIVES: &[&str] = &["reduce", "reduce_add"];

thread_local! {
    /// Collectives named so far in this body (for unique hygienic names).
    static NAMED: Cell<usize> = const { Cell::new(0) };
}

/// Starts naming a body's collectives from 0.
pub(super) fn reset_names() {
    NAMED.with(|n| n.set(0));
}

/// Whether a call path names a block collective: `block::reduce`, `ferrocuda_std::block::reduce`
/// (and `reduce_add`), or a tensor-core `mma`.
pub(super) fn is_collective(segments: &[String]) -> bool {
    let names: Vec<&str> = segments.iter().map(String::as_str).collect();
    match names.as_slice() {
        ["block", name] | ["ferrocuda_std", "block", name] => COLLECTIVES.contains(name),
        _ => is_mma(&names),
    }
}

/// Whether a call path names `ferrocuda_std::mma::mma` or `ferrocuda_std::mma::mma_tiles` (as
/// `mma`, `mma::mma` or in full).
fn is_mma(names: &[&str]) -> bool {
    match names {
        [name] | ["mma", name] | ["ferrocuda_std", "mma", name] => {
            matches!(*name, "mma" | "mma_tiles")
        }
        _ => false,
    }
}

/// Where a collective's result goes: a `let`, or an assignment to a place.
pub(super) enum Target {
    Local(syn::Local),
    Assign(Expr),
}

/// Which collective a call is: its block-level step, and whether it is a warp's `mma`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// `block::reduce` or `block::reduce_add` (`Collective`).
    Block,
    /// A tensor-core `mma` (`MmaCollective`).
    Mma,
    /// A warp's product of two shared tiles, `mma_tiles` (`MmaTilesCollective`).
    MmaTiles,
}

impl Kind {
    /// Whether it is an `mma` or `mma_tiles` (its arguments may borrow locals: they are used
    /// at once; consecutive ones may share a step).
    pub(super) fn is_mma(self) -> bool {
        self != Kind::Block
    }
}

/// A collective at statement level: `let pat = path(args);` (or `place = mma(args);`).
pub(super) struct Call {
    pub(super) target: Target,
    path: ExprPath,
    pub(super) args: Vec<Expr>,
    span: Span,
    pub(super) kind: Kind,
}

/// Where the split path runs a collective's block-level step.
#[derive(Clone)]
pub(crate) struct Site {
    /// The per-block state the threads hand their arguments to.
    pub(super) state: Ident,
    /// What each thread gets.
    results: Ident,
    /// The call's span (its site in reports).
    pub(crate) span: Span,
    pub(super) kind: Kind,
}

/// The collective `stmt` is, if it is `let pat = block::reduce(..);` (no `else`), or
/// `let pat = mma(..);` or `place = mma(..);`.
pub(super) fn call_stmt(stmt: &Stmt) -> Option<Call> {
    let (target, value) = match stmt {
        Stmt::Local(local) => {
            let init = local.init.as_ref()?;
            if init.diverge.is_some() {
                return None;
            }
            (Target::Local(local.clone()), &*init.expr)
        }
        Stmt::Expr(Expr::Assign(assign), Some(_)) if assign.attrs.is_empty() => {
            (Target::Assign((*assign.left).clone()), &*assign.right)
        }
        _ => return None,
    };
    let Expr::Call(call) = value else {
        return None;
    };
    let Expr::Path(path) = &*call.func else {
        return None;
    };
    let names = path_names(path);
    if path.qself.is_some() || !is_collective(&names) {
        return None;
    }
    let kind = if !is_mma(&names.iter().map(String::as_str).collect::<Vec<_>>()) {
        Kind::Block
    } else if names.last().is_some_and(|n| n == "mma_tiles") {
        Kind::MmaTiles
    } else {
        Kind::Mma
    };
    if kind == Kind::Block && matches!(target, Target::Assign(_)) {
        return None;
    }
    Some(Call {
        target,
        path: path.clone(),
        args: call.args.iter().cloned().collect(),
        span: call.span(),
        kind,
    })
}

impl Call {
    /// The statement the region before ends with (this thread's arguments to the state), the
    /// site of the block-level step, and the statement the region after starts with (the
    /// `let`, bound to this thread's result).
    pub(super) fn split(self) -> (Stmt, Site, Stmt) {
        let k = NAMED.with(|n| n.replace(n.get() + 1));
        let site = Site {
            state: Ident::new(&format!("__ferrocuda_collective_{k}"), Span::mixed_site()),
            results: Ident::new(
                &format!("__ferrocuda_collective_{k}_results"),
                Span::mixed_site(),
            ),
            span: self.span,
            kind: self.kind,
        };
        let mut split_path = self.path;
        if self.kind == Kind::MmaTiles {
            split_path =
                syn::parse_quote_spanned!(self.span=> ::ferrocuda_std::mma::__split_mma_tiles);
        } else if self.kind == Kind::Mma {
            split_path = syn::parse_quote_spanned!(self.span=> ::ferrocuda_std::mma::__split_mma);
        } else {
            let last = split_path
                .path
                .segments
                .last_mut()
                .expect("a collective's path has segments");
            last.ident = format_ident!("__split_{}", last.ident, span = last.ident.span());
        }
        let (state, results, args) = (&site.state, &site.results, &self.args);
        let regions = regions_ident();
        let put: Stmt = syn::parse_quote_spanned! {self.span=>
            #state.put(&*#regions, ::ferrocuda_std::thread::thread_idx(), #split_path(#(#args),*));
        };
        let result: Expr = syn::parse_quote_spanned! {self.span=>
            #results.get(::ferrocuda_std::thread::thread_idx())
        };
        let take = match self.target {
            Target::Local(mut local) => {
                if let Some(init) = local.init.as_mut() {
                    *init.expr = result;
                }
                Stmt::Local(local)
            }
            Target::Assign(place) => syn::parse_quote_spanned! {self.span=> #place = #result; },
        };
        (put, site, take)
    }
}

/// The block-level step of the collective at `site`, between its two regions: a block whose
/// threads all returned before it is done.
pub(super) fn fold_code(site: &Site, regions: &Ident) -> proc_macro2::TokenStream {
    let (state, results) = (&site.state, &site.results);
    let caller = quote_spanned!(site.span=> ::core::panic::Location::caller());
    quote! {
        let #results = &match #state.fold(&*#regions, #caller) {
            ::core::option::Option::Some(results) => results,
            ::core::option::Option::None => return,
        };
    }
}
