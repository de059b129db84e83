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

#[cfg(test)]
mod tests {
    fn expand(item: &str) -> syn::Result<String> {
        let options: crate::options::KernelOptions = syn::parse_str("")?;
        crate::kernel::expand(options, syn::parse_str(item)?).map(|tokens| tokens.to_string())
    }

    #[test]
    fn a_grid_parameter_becomes_two_ptx_parameters_and_marks_the_kernel_cooperative() {
        let code =
            expand("pub fn k(x: &[f32], out: Out<f32>, grid: Grid) { grid.sync(); }").unwrap();
        assert!(
            code.contains("__ferrocuda_grid_ptr : * mut u32 , __ferrocuda_grid_len : usize)"),
            "{code}"
        );
        // The caller's markers leave it out; the handle says the kernel is cooperative; the
        // CPU entry reads it after x (0, 1) and out (2, 3).
        assert!(
            code.contains(
                "Kernel < (:: ferrocuda_std :: abi :: Slice < f32 > , :: ferrocuda_std :: abi :: Output < f32 > ,) >"
            ),
            "{code}"
        );
        assert!(code.contains(". cooperative ()"), "{code}");
        assert!(
            code.contains("read_param :: < u64 > (params , 4usize)"),
            "{code}"
        );
        let plain = expand("pub fn k(out: Out<f32>) {}").unwrap();
        assert!(!plain.contains(". cooperative ()"), "{plain}");
    }

    #[test]
    fn a_grid_parameter_must_come_last_and_has_no_length() {
        let error = expand("pub fn k(grid: Grid, out: Out<f32>) {}").unwrap_err();
        assert!(
            error.to_string().contains("must be the kernel's last"),
            "{error}"
        );
        let options: crate::options::KernelOptions = syn::parse_str("same_len(out, grid)").unwrap();
        let function = syn::parse_str("pub fn k(out: Out<f32>, grid: Grid) {}").unwrap();
        let error = crate::kernel::expand(options, function).unwrap_err();
        assert!(error.to_string().contains("has no length"), "{error}");
    }
}
