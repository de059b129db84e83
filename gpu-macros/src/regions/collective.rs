//! Block collectives as sync points of the split path: a `let` of the body whose value is
//! `block::reduce(..)` or `block::reduce_add(..)` (ferrocuda-std's `block` module) ends the
//! region before it like a barrier. That region hands each thread's arguments to a per-block
//! state (`ferrocuda_std::cpu::collective::Collective`, declared above the regions), one
//! block-level step folds them as the GPU's warps would (`Collective::fold`, which also checks
//! that every thread got there), and the region after binds each thread's result. Anywhere else
//! (in an `if`, a closure, an expression) a collective counts as a barrier there, which keeps the
//! kernel on the coroutine path, where the call runs its GPU code.
//!
//! A tensor-core `mma` (`mma(..)`, `mma::mma(..)`, `ferrocuda_std::mma::mma(..)`) is the same
//! kind of sync point, in `let d = mma(..);` or `d = mma(..);`: the region before hands each
//! thread's operands to a per-block state (`ferrocuda_std::cpu::collective::MmaCollective`),
//! one step does every warp's `mma`, and the region after takes each thread's part of D, so
//! no thread suspends (at run time, an `mma` the macro does not see is a warp rendezvous on
//! coroutines, a switch per thread). A warp's product of two shared tiles, `mma_tiles(..)`
//! (`MmaTilesCollective`), is one the same way: one step does every warp's whole product.

use super::names::{idents_of, path_names, regions_ident};
use super::segments::Seg;
use proc_macro2::Span;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use std::cell::Cell;
use std::collections::BTreeSet;
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
enum Target {
    Local(syn::Local),
    Assign(Expr),
}

/// A collective at statement level: `let pat = path(args);` (or `place = mma(args);`).
pub(super) struct Call {
    target: Target,
    path: ExprPath,
    pub(super) args: Vec<Expr>,
    span: Span,
    /// Whether it is an `mma` or `mma_tiles` (its arguments may borrow locals: they are used
    /// at once).
    pub(super) mma: bool,
    /// Whether it is an `mma_tiles`.
    tiles: bool,
}

/// Where the split path runs a collective's block-level step.
#[derive(Clone)]
pub(crate) struct Site {
    /// The per-block state the threads hand their arguments to.
    state: Ident,
    /// What each thread gets.
    results: Ident,
    /// The call's span (its site in reports).
    pub(crate) span: Span,
    /// Whether it is an `mma` (else a block collective).
    mma: bool,
    /// Whether it is an `mma_tiles`.
    tiles: bool,
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
    let mma = is_mma(&names.iter().map(String::as_str).collect::<Vec<_>>());
    let tiles = mma && names.last().is_some_and(|n| n == "mma_tiles");
    if !mma && matches!(target, Target::Assign(_)) {
        return None;
    }
    Some(Call {
        target,
        path: path.clone(),
        args: call.args.iter().cloned().collect(),
        span: call.span(),
        mma,
        tiles,
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
            mma: self.mma,
            tiles: self.tiles,
        };
        let mut split_path = self.path;
        if self.tiles {
            split_path =
                syn::parse_quote_spanned!(self.span=> ::ferrocuda_std::mma::__split_mma_tiles);
        } else if self.mma {
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

/// Collective calls in a row that share one block step: the region before hands over every
/// call's arguments, the block does each call's step in turn, and the region after binds every
/// result. Only `mma` statements group, and only while none reads what an earlier one of the
/// group assigns (its arguments are evaluated before the earlier results are bound): the eight
/// `acc_ij = mma(&fa_i, &fb_j, &acc_ij);` of a k-step are one step instead of eight, one
/// region loop over the block's threads instead of eight (each of which would carry every
/// fragment and accumulator through per-thread slots).
#[derive(Default)]
pub(super) struct Group {
    calls: Vec<(Stmt, Site, Stmt)>,
    /// The names the group's statements bind or assign (and any name in a place assigned).
    written: BTreeSet<String>,
}

impl Group {
    /// Whether `call` can join the group (an empty one takes any call).
    pub(super) fn admits(&self, call: &Call) -> bool {
        if self.calls.is_empty() {
            return true;
        }
        let mut read = BTreeSet::new();
        for arg in &call.args {
            idents_of(arg.to_token_stream(), &mut read);
        }
        call.mma && self.written.is_disjoint(&read)
    }

    /// Adds `call` (which [`Group::admits`]).
    pub(super) fn push(&mut self, call: Call) {
        let target = match &call.target {
            Target::Local(local) => local.pat.to_token_stream(),
            Target::Assign(place) => place.to_token_stream(),
        };
        idents_of(target, &mut self.written);
        self.calls.push(call.split());
    }

    /// Ends the group (if any): its hand-overs end the region in `code` (into `segs`), its
    /// steps follow, and its bindings start the next region in `code`.
    pub(super) fn end(&mut self, code: &mut Vec<Stmt>, segs: &mut Vec<Seg>) {
        if self.calls.is_empty() {
            return;
        }
        self.written.clear();
        let calls = std::mem::take(&mut self.calls);
        let mut takes = Vec::with_capacity(calls.len());
        for (put, site, take) in calls {
            code.push(put);
            takes.push((site, take));
        }
        if !code.is_empty() {
            segs.push(Seg::Code(std::mem::take(code)));
        }
        for (site, take) in takes {
            segs.push(Seg::Collective(site));
            code.push(take);
        }
    }
}

/// The declarations of the per-block states of the collectives in `segs`, for above the regions.
pub(super) fn declarations(segs: &[Seg]) -> Vec<Stmt> {
    let mut out = Vec::new();
    for seg in segs {
        match seg {
            Seg::Collective(site) => {
                let state = &site.state;
                // A reference: the region closures capture copies (move), and a reference is
                // what every thread's region must share.
                out.push(if site.tiles {
                    syn::parse_quote! {
                        let #state = &::ferrocuda_std::cpu::collective::MmaTilesCollective::new();
                    }
                } else if site.mma {
                    syn::parse_quote! {
                        let #state = &::ferrocuda_std::cpu::collective::MmaCollective::new();
                    }
                } else {
                    syn::parse_quote! {
                        let #state = &::ferrocuda_std::cpu::collective::Collective::new();
                    }
                });
            }
            Seg::While { body, .. } | Seg::For { body, .. } => out.extend(declarations(body)),
            Seg::Items(_) | Seg::Code(_) | Seg::Barrier(_) | Seg::Uniform(_) | Seg::Leave(_) => {}
        }
    }
    out
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
