//! Code generation for a body with no barrier: the elementwise loop nest over the block's
//! threads (the block's first thread alone first, for the run time's fallback).

use super::names::Names;
use super::rewrite::region_code;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::quote;
use syn::{Ident, Stmt};

/// The body of the elementwise function: the block's first thread alone, so that a barrier it
/// reaches in a function the macro could not see into moves the block onto coroutines
/// (`Regions::elementwise`), then one loop nest over the other threads. `owned`: the outputs the
/// body touches only at the thread's own index (`crate::owned_outputs`); in a 1D launch without
/// checked mode, a second copy of that loop nest writes them through plain-store handles
/// (`OwnedOut`), which LLVM can vectorise.
pub(crate) fn elementwise(stmts: &[Stmt], owned: &[Ident], slices: &[Ident]) -> TokenStream2 {
    let names = Names::new();
    // Items once, above every copy of the code.
    let (items, stmts): (Vec<Stmt>, Vec<Stmt>) = stmts
        .iter()
        .cloned()
        .partition(|stmt| matches!(stmt, Stmt::Item(_)));
    let label = names.label();
    let (first_code, _) = region_code(&stmts, &names, quote!(break #label;), &[]);
    let plain = loop_nest(&stmts, &names, None);
    let Names {
        regions,
        tid,
        base_1d,
        ..
    } = &names;
    let dim = Ident::new("__ferrocuda_dim", Span::mixed_site());
    let thread = Ident::new("__ferrocuda_thread", Span::mixed_site());
    let setup = quote! {
        #(#items)*
        let #regions: &::ferrocuda_std::cpu::Regions = #regions;
        let #dim = #regions.block_dim();
        let #base_1d = #regions.base_1d();
        let #thread = || {
            let #tid = ::ferrocuda_std::thread::thread_idx();
            #[allow(unused_labels)]
            #label: {
                #first_code
            }
        };
    };
    if owned.is_empty() {
        return quote! {
            #setup
            // `move`: the loop gets copies of what it captures (parameters, all `Copy`), whose
            // addresses never escape, so LLVM keeps them in registers (the first thread's closure
            // is lent behind a pointer, and through it every store could change the originals).
            #regions.elementwise(&#thread, move || { #plain });
        };
    }
    let own = quote!((#base_1d + #tid.x as usize));
    let threads = quote!((#regions.grid_dim().x as usize * #dim.x as usize));
    let lengths = crate::owned_outputs_rewrite::own_index_lengths(&stmts, owned, slices);
    let fast = loop_nest(
        &crate::owned_outputs_rewrite::rewrite(&stmts, owned, slices, &own, &threads),
        &names,
        Some(&lengths),
    );
    let handles: Vec<Ident> = owned
        .iter()
        .map(crate::owned_outputs_rewrite::handle_name)
        .collect();
    let all = Ident::new("__ferrocuda_handles", Span::mixed_site());
    quote! {
        #setup
        // `move`: as above, copies kept in registers across the loop's stores.
        #regions.elementwise(&#thread, move || {
            // SAFETY: the grid and block are this launch's. Every use of each output in the
            // body was rewritten onto its handle, and the kernel's own name for it is shadowed
            // below, so no other access exists; the handles live in this block's loop on this
            // OS thread (neither `Send` nor `Sync`), and each access passes the running
            // thread's blockIdx.x·blockDim.x + threadIdx.x as its own index. The block's first
            // thread, run before this loop, wrote through the atomic `Out` to its own element
            // only, on this OS thread.
            let #all = unsafe {
                (#(::ferrocuda_std::__private::OwnedOut::new(#owned, #regions.grid_dim(), #dim),)*)
            };
            if let (#(::core::option::Option::Some(#handles),)*) = #all {
                #(
                    #[allow(unused_variables)]
                    let #owned = ::ferrocuda_std::__private::OutHeldByTheLoop;
                )*
                #fast
            } else {
                #plain
            }
        });
    }
}

/// One loop nest over the block's threads but the first (which `Regions::elementwise` ran
/// already), running `stmts` for each. `lengths` (the plain-store copy): each row as one loop
/// with a deadline check point before it, so that the loop has no call LLVM cannot vectorise
/// past (runs of 64 threads cost a 4×8-wide vector loop a quarter of its speed: two trips per
/// run and the set-up around them); and twice, the first copy taken when the row's last
/// `index_1d()` is below each of the `lengths`, which it tells LLVM at each thread, so that the
/// body's own bounds checks (`if i < out.len()`, `a[i]`) fold away and the loop vectorises
/// without masks.
fn loop_nest(stmts: &[Stmt], names: &Names, lengths: Option<&[TokenStream2]>) -> TokenStream2 {
    let label = names.label();
    let (code, _) = region_code(stmts, names, quote!(break #label;), &[]);
    let Names {
        regions,
        tid,
        base_1d,
        ..
    } = names;
    let dim = Ident::new("__ferrocuda_dim", Span::mixed_site());
    let (x, y, z) = (
        Ident::new("__ferrocuda_x", Span::mixed_site()),
        Ident::new("__ferrocuda_y", Span::mixed_site()),
        Ident::new("__ferrocuda_z", Span::mixed_site()),
    );
    let thread = quote! {
        let #tid = ::ferrocuda_std::Dim3::new(#x, #y, #z);
        #[allow(unused_labels)]
        #label: {
            #code
        }
    };
    // The first thread ran already.
    let first_x = quote!(u32::from(#y == 0 && #z == 0));
    let row = if let Some(lengths) = lengths {
        let fits = Ident::new("__ferrocuda_fits", Span::mixed_site());
        let row_loop = |facts: TokenStream2| {
            quote! {
                for #x in #first_x..#dim.x {
                    #facts
                    ::ferrocuda_std::cpu::elementwise::step_x(#base_1d, #x);
                    #thread
                }
            }
        };
        let in_bounds = row_loop(quote! {
            // SAFETY: `fits`: `base_1d + x < base_1d + dim.x <= len`, without overflow.
            #(unsafe { ::core::hint::assert_unchecked(#base_1d + (#x as usize) < #lengths) };)*
        });
        let as_written = row_loop(TokenStream2::new());
        quote! {
            ::ferrocuda_std::cpu::elementwise::check_point();
            // Every index of the row, `base_1d + x` for x < dim.x, below each length.
            let #fits = true #(&& #base_1d <= #lengths && (#dim.x as usize) <= #lengths - #base_1d)*;
            // The same loop twice, on purpose: only the first knows its indices in bounds.
            #[allow(clippy::if_same_then_else)]
            if #fits {
                #in_bounds
            } else {
                #as_written
            }
        }
    } else {
        quote! {
            for #x in #first_x..#dim.x {
                #regions.enter_x(#base_1d, #x);
                #thread
            }
        }
    };
    quote! {
        for #z in 0..#dim.z {
            for #y in 0..#dim.y {
                #regions.enter_row(#base_1d, #y, #z);
                #row
            }
        }
    }
}
