//! The PTX expansion's refresh of integer parameters at the body's top-level barriers.
//!
//! Upstream LLVM merges equal index arithmetic anywhere in a kernel (GVN, EarlyCSE): the
//! sixteen indices of a fully unrolled load loop at the top of Rodinia's nw or lud and those of
//! the store loop at the bottom are the same values, so it computes them once and keeps all
//! sixteen live through the whole kernel (64-bit addresses in lud, 32-bit indices for the
//! bounds checks in nw). Its NVPTX backend hands ptxas virtual registers, and neither
//! rematerialises them: lud_diagonal took 56 registers where NVRTC's 32 recompute them (NVVM
//! rematerialises). After each barrier at the top level of the body, `#[kernel]` passes the
//! integer parameters through [`opaque`](../../ferrocuda_std/__private/fn.opaque.html), an
//! identity LLVM cannot see through: arithmetic on them after the barrier is new values,
//! computed where used, and what came before dies there. Measured in docs/ports.md
//! ("Registers"). Only the top level: a barrier inside a loop would put the moves and every
//! expression on the parameters (hoisted out of the loop now) into each trip of a hot loop.

use std::collections::BTreeMap;

use proc_macro2::TokenStream as TokenStream2;
use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::{Block, Expr, FnArg, ItemFn, Pat, Stmt, Type};

/// The integer types of parameters refreshed (`opaque` has a move for each).
const INTEGERS: [&str; 10] = [
    "i8", "i16", "i32", "i64", "isize", "u8", "u16", "u32", "u64", "usize",
];

/// `block` (the PTX body) with `let p = opaque(p);` for each refreshed parameter after each
/// top-level `sync_threads();`. Parameters are refreshed if they are integers, not `mut`, and never bound again in the body (a `let p = p as f32;` shadow would change
/// what `p` names after it).
pub(crate) fn refresh_at_barriers(function: &ItemFn, block: &Block) -> Block {
    let mut bound = BTreeMap::new();
    crate::shared::count_bindings(block, &mut bound);
    let names: Vec<&syn::Ident> = function
        .sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            FnArg::Typed(typed) => Some(typed),
            FnArg::Receiver(_) => None,
        })
        .filter_map(|typed| match (&*typed.pat, &*typed.ty) {
            (Pat::Ident(p), Type::Path(ty))
                if p.mutability.is_none()
                    && ty.qself.is_none()
                    && INTEGERS.iter().any(|i| ty.path.is_ident(i))
                    && !bound.contains_key(&p.ident.to_string()) =>
            {
                Some(&p.ident)
            }
            _ => None,
        })
        .collect();
    if names.is_empty() {
        return block.clone();
    }
    let mut stmts = Vec::with_capacity(block.stmts.len());
    for (k, stmt) in block.stmts.iter().enumerate() {
        stmts.push(stmt.clone());
        if crate::regions::barrier_stmt(stmt).is_some() && block.stmts[k + 1..].iter().any(is_loop)
        {
            for name in &names {
                let refresh: TokenStream2 = quote_spanned! {stmt.span()=>
                    #[allow(unused_variables)]
                    let #name = ::ferrocuda_std::__private::opaque(#name);
                };
                stmts.push(syn::parse2::<Stmt>(refresh).expect("a `let` statement"));
            }
        }
    }
    Block {
        brace_token: block.brace_token,
        stmts,
    }
}

/// Whether `stmt` is a loop (`for`, `while`, `loop`): what LLVM unrolls into the many equal
/// values a refresh keeps from living on.
fn is_loop(stmt: &Stmt) -> bool {
    matches!(
        stmt,
        Stmt::Expr(Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_), _)
    )
}
