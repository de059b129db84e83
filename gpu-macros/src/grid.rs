//! A kernel's `grid: Grid` parameter (a cooperative kernel): not passed by the caller, but by a
//! cooperative launch, as the launch's grid barrier (two PTX parameters, `.u64` pointer and
//! `.u64` length, after every other parameter).

use proc_macro2::{Ident, TokenStream as TokenStream2};
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::Type;

/// Whether `ty` is `Grid` (any path ending in `Grid`, with or without `<'_>`).
pub(crate) fn is_grid(ty: &Type) -> bool {
    match ty {
        Type::Path(path) if path.qself.is_none() => path
            .path
            .segments
            .last()
            .is_some_and(|last| last.ident == "Grid"),
        _ => false,
    }
}

/// Refuses a `Grid` that is not the last parameter: the host appends the barrier after the
/// caller's arguments.
pub(crate) fn check_last(position: usize, count: usize, ty: &Type) -> syn::Result<()> {
    if position + 1 == count {
        return Ok(());
    }
    Err(syn::Error::new(
        ty.span(),
        "a `Grid` parameter must be the kernel's last: a cooperative launch passes it after the \
         caller's arguments",
    ))
}

/// The PTX entry's parameters for the grid, how the entry rebuilds it, and how the CPU entry
/// does (from PTX parameter `index`).
pub(crate) fn param(
    name: &Ident,
    scope: &Ident,
    params_arg: &Ident,
    index: usize,
) -> (TokenStream2, TokenStream2, TokenStream2) {
    let ptr = format_ident!("__ferrocuda_{}_ptr", name);
    let len = format_ident!("__ferrocuda_{}_len", name);
    let ptx_params = quote!(#ptr: *mut u32, #len: usize);
    // SAFETY (of the generated blocks): only a cooperative launch runs this kernel (the host
    // refuses any other), with every block resident and this launch's own zeroed barrier.
    let ptx_rebuild = quote! {
        let _ = #len;
        let #name = unsafe { ::ferrocuda_std::grid::Grid::from_raw(#scope, #ptr) };
    };
    let host_rebuild = quote! {
        let #name = unsafe {
            ::ferrocuda_std::grid::Grid::from_raw(
                #scope,
                ::ferrocuda_std::__private::read_param::<u64>(#params_arg, #index) as usize as *mut u32,
            )
        };
    };
    (ptx_params, ptx_rebuild, host_rebuild)
}
