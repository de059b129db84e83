//! The PTX expansion's refresh of integer parameters at the body's top-level barriers.
//!
//! Upstream LLVM merges equal index arithmetic anywhere in a kernel (GVN, EarlyCSE): the
//! sixteen indices of a fully unrolled load loop at the top of Rodinia's nw or lud and those of
//! the store loop at the bottom are the same values, so it computes them once and keeps all
//! sixteen live through the whole kernel (addresses in lud, the bounds checks' 64-bit indices in
//! nw). Its NVPTX backend hands ptxas virtual registers, and ptxas does not recompute them:
//! lud_diagonal took 56 registers and nw 52 and 54, where NVRTC's PTX of the CUDA originals
//! computes the store loop's addresses again and takes 32. After a barrier at the top level of
//! the body that a top-level loop follows, `#[kernel]` passes the integer parameters through
//! `ferrocuda_std::__private::opaque`, an identity LLVM cannot see through: arithmetic on them
//! after the barrier makes new values, computed where they are used, and the values from before
//! die at the barrier (lud_diagonal 32, nw 23 and 24; docs/ports.md, "Registers").
//!
//! Where: a barrier inside a loop would put the moves, and every expression on the parameters
//! that LLVM now hoists out of the loop, into each trip of what may be a hot loop; and a barrier
//! that no loop follows has no unrolled loop after it to keep values for, while a refresh there
//! costs what LLVM knew across it: in gpu-kernels' `convolve_2d` (a `(radius, channels)`
//! dispatch before and after its barrier) the tile load loop's SASS went from 108 to 123
//! instructions.

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

#[cfg(test)]
mod tests {
    use super::refresh_at_barriers;
    use quote::ToTokens;

    /// The refreshed PTX body of `item`, as token text.
    fn refreshed(item: &str) -> String {
        let function: syn::ItemFn = syn::parse_str(item).unwrap();
        refresh_at_barriers(&function, &function.block)
            .to_token_stream()
            .to_string()
    }

    const REFRESH_N: &str = "let n = :: ferrocuda_std :: __private :: opaque (n) ;";

    #[test]
    fn integer_parameters_are_refreshed_after_a_top_level_barrier_a_loop_follows() {
        let code = refreshed(
            "fn k(x: &[f32], out: Out<f32>, n: i32, m: u64, a: f32, mut c: u32, s: i32) {
                 let s = s as f32;
                 for i in 0..16 { out.set(n * i, x.at(n * i)); }
                 thread::sync_threads();
                 for i in 0..16 { out.set(n * i + m as i32, a + s + c as f32); }
                 c += 1;
             }",
        );
        let after_barrier = code.split("sync_threads () ;").nth(1).unwrap();
        assert!(
            after_barrier
                .trim_start()
                .starts_with("# [allow (unused_variables)] let n ="),
            "{code}"
        );
        assert!(after_barrier.contains(REFRESH_N), "{code}");
        assert!(
            after_barrier.contains("let m = :: ferrocuda_std :: __private :: opaque (m) ;"),
            "{code}"
        );
        // Not slices, outputs, floats, `mut` parameters, nor one the body binds again.
        for kept in ["x", "out", "a", "c", "s"] {
            assert!(
                !code.contains(&format!("opaque ({kept})")),
                "{kept}: {code}"
            );
        }
        // Nothing before the barrier.
        assert!(
            !code
                .split("sync_threads")
                .next()
                .unwrap()
                .contains("opaque"),
            "{code}"
        );
    }

    #[test]
    fn barriers_in_loops_or_with_no_loop_after_them_are_left_alone() {
        for item in [
            // Inside a loop: a hot loop's trips would pay for the moves.
            "fn k(out: Out<f32>, n: i32) { for i in 0..n { thread::sync_threads(); out.set(i, 1.0); } }",
            // No loop after it (convolve_2d's shape: a dispatch on parameters on either side).
            "fn k(out: Out<f32>, n: i32) { for i in 0..16 { out.set(i, 1.0); } sync_threads(); out.set(n, 2.0); }",
            // Not a barrier.
            "fn k(out: Out<f32>, n: i32) { thread::sync_warp(); for i in 0..n { out.set(i, 1.0); } }",
        ] {
            assert!(!refreshed(item).contains("opaque"), "{item}");
        }
        // The barrier's other spellings.
        let code = refreshed(
            "fn k(out: Out<f32>, n: i32) { ferrocuda_std::thread::sync_threads(); loop { out.set(n, 1.0); } }",
        );
        assert!(code.contains(REFRESH_N), "{code}");
    }
}
