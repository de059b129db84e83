//! What one kernel parameter becomes in the expansion: its `abi` marker in the handle's type and,
//! for a slice or output, its PTX parameters and their rebuilding on nvptx and on the host.

use crate::signature::{Class, KernelParam};
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

/// `Kernel<(Slice<T>, Scalar<f32>, ...)>` for `params`: the type a launch checks arguments by.
pub(crate) fn kernel_type(params: &[KernelParam]) -> TokenStream2 {
    let markers = params.iter().filter_map(marker);
    quote!(::ferrocuda_std::abi::Kernel<(#(#markers,)*)>)
}

/// The `abi` marker of one parameter in the kernel handle's type; none for the grid, which the
/// caller does not pass.
pub(crate) fn marker(param: &KernelParam) -> Option<TokenStream2> {
    let (ty, dims) = (&param.ty, param.dims);
    Some(match (param.class, dims) {
        (Class::Slice, 1) => quote!(::ferrocuda_std::abi::Slice<#ty>),
        (Class::Output, 1) => quote!(::ferrocuda_std::abi::Output<#ty>),
        (Class::Slice, _) => quote!(::ferrocuda_std::abi::ArrayInput<#ty, #dims>),
        (Class::Output, _) => quote!(::ferrocuda_std::abi::ArrayOutput<#ty, #dims>),
        (Class::Scalar, _) if crate::signature::is_bool(ty) => quote!(::ferrocuda_std::abi::Bool),
        (Class::Scalar, _) => quote!(::ferrocuda_std::abi::Scalar<#ty>),
        (Class::Grid, _) => return None,
    })
}

/// What `#[kernel]` generates for one slice or output parameter (1D, 2D or 3D).
pub(crate) struct ViewTokens {
    /// The PTX entry's parameters for it.
    pub(crate) ptx_params: TokenStream2,
    /// The PTX entry's rebuilding of the kernel's own type from them.
    pub(crate) ptx_rebuild: TokenStream2,
    /// The CPU entry's rebuilding, from `params[first..first + ptx_param_count]`.
    pub(crate) host_rebuild: TokenStream2,
    /// The `abi::Param` describing it.
    pub(crate) info: TokenStream2,
    pub(crate) ptx_param_count: usize,
}

/// A view crosses as its (pointer, length) pair, then (arrays only) its extents and the strides
/// of all but its last axis. Inputs and outputs differ in mutability and wrapper: on the GPU an
/// input's pointer is a `KernelInput<T>`, which LLVM sees as read-only and not aliased, so its
/// loads become `ld.global.nc`.
pub(crate) fn view_tokens(
    param: &KernelParam,
    scope: &Ident,
    params_arg: &Ident,
    first: usize,
) -> ViewTokens {
    let (pname, ty, dims) = (&param.name, &param.ty, param.dims);
    let pname_str = pname.to_string();
    let ty_str = quote!(#ty).to_string().replace(' ', "");
    let ptr = format_ident!("__ferrocuda_{}_ptr", pname);
    let len = format_ident!("__ferrocuda_{}_len", pname);
    let input = matches!(param.class, Class::Slice);
    let (ptr_ty, ptx_ptr_ty) = match input {
        true => (
            quote!(*const #ty),
            quote!(::ferrocuda_std::__private::KernelInput<#ty>),
        ),
        false => (quote!(*mut #ty), quote!(*mut #ty)),
    };
    let (ptx_fn, host_fn, info) = match (input, dims) {
        (true, 1) => (
            quote!(slice_from_input),
            quote!(slice_from_raw),
            quote!(slice::<#ty>(#pname_str, #ty_str)),
        ),
        (false, 1) => (
            quote!(out_from_raw),
            quote!(out_from_raw),
            quote!(output::<#ty>(#pname_str, #ty_str)),
        ),
        (true, _) => (
            quote!(array_from_input),
            quote!(array_from_raw),
            quote!(array::<#ty>(#pname_str, #ty_str, #dims)),
        ),
        (false, _) => (
            quote!(out_array_from_raw),
            quote!(out_array_from_raw),
            quote!(out_array::<#ty>(#pname_str, #ty_str, #dims)),
        ),
    };
    let extents: Vec<Ident> = (0..dims)
        .filter(|_| dims > 1)
        .map(|k| format_ident!("__ferrocuda_{}_extent{}", pname, k))
        .collect();
    let strides: Vec<Ident> = (0..dims.saturating_sub(1))
        .map(|k| format_ident!("__ferrocuda_{}_stride{}", pname, k))
        .collect();
    let shape_names: Vec<&Ident> = extents.iter().chain(&strides).collect();
    // The shape as the rebuilding functions take it: `[extents], [strides..., 1]`.
    let shape_args = match dims {
        1 => quote!(),
        _ => quote!(, [#(#extents),*], [#(#strides,)* 1]),
    };
    let generics = match dims {
        1 => quote!(#ty),
        _ => quote!(#ty, #dims),
    };
    let read =
        |i: usize| quote!(::ferrocuda_std::__private::read_param::<u64>(#params_arg, #i) as usize);
    let (read_ptr, read_len) = (read(first), read(first + 1));
    let read_shape = shape_names.iter().enumerate().map(|(k, name)| {
        let value = read(first + 2 + k);
        quote!(let #name = #value;)
    });
    // SAFETY (of the generated blocks): the launch checked each view against this parameter
    // (kind, axes, element size, bytes, alignment, and that the shape fits the memory).
    ViewTokens {
        ptx_params: quote!(#ptr: #ptx_ptr_ty, #len: usize #(, #shape_names: usize)*),
        ptx_rebuild: quote! {
            let #pname = unsafe { ::ferrocuda_std::__private::#ptx_fn::<#generics>(#scope, #ptr, #len #shape_args) };
        },
        host_rebuild: quote! {
            let #pname = {
                #(#read_shape)*
                unsafe {
                    ::ferrocuda_std::__private::#host_fn::<#generics>(
                        #scope,
                        #read_ptr as #ptr_ty,
                        #read_len
                        #shape_args
                    )
                }
            };
        },
        info: quote_spanned!(ty.span()=> ::ferrocuda_std::abi::Param::#info),
        ptx_param_count: 2 + shape_names.len(),
    }
}
