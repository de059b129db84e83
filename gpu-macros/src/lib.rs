//! `#[kernel]`: one Rust function, two compilations.
//!
//! On `nvptx64` the function becomes a PTX `.entry` whose parameters are explicit
//! (pointer, length) pairs for slices and values for scalars. On the host it becomes a constant
//! `ferrocuda_std::abi::Kernel` handle of the same name: the PTX entry name, the parameter list, and a
//! CPU entry that rebuilds the arguments from the same PTX parameters and runs the body once per
//! thread of a block. See `ferrocuda_std::abi` for the parameter mapping.

#![warn(missing_docs)]

mod math_methods;
mod pod;
mod shared;

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{format_ident, quote, quote_spanned};
use shared::{rewrite_shared, Target};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{
    Attribute, Block, FnArg, GenericArgument, GenericParam, Ident, ItemFn, Pat, PathArguments,
    ReturnType, Token, Type,
};

/// Marks a function as a GPU kernel.
///
/// Parameters: `&[T]` for inputs, `ferrocuda_std::Out<T>` for outputs, any `T: bytemuck::Pod` by value.
/// The function returns nothing and is not generic (a PTX entry has one concrete signature).
///
/// `#[kernel(same_len(a, b, out))]` makes every launch check that those slices and outputs have
/// equal lengths, and fail with an error naming them otherwise. The kernel is compiled knowing
/// they are equal, so `b[i]` needs no bounds check once `i < a.len()` held: launch it only through
/// ferrocuda's checked launch (`launch!`, `Module::launch`), which makes that check.
///
/// ```ignore
/// #[kernel(same_len(x, y))]
/// pub fn saxpy(a: f32, x: &[f32], y: Out<f32>) {
///     let i = thread::index_1d();
///     if i < y.len() {
///         y.set(i, a * x[i] + y.get(i));
///     }
/// }
/// ```
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let options = syn::parse_macro_input!(attr as KernelOptions);
    let function = syn::parse_macro_input!(item as ItemFn);
    match expand(options, function) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

/// Makes a `#[repr(C)]` struct a plain-data kernel parameter (or shared-memory element) without a
/// bytemuck dependency of the user's own: adds `#[derive(Clone, Copy, Pod, Zeroable)]` through
/// ferrocuda-std's bytemuck. Write it above `#[repr(C)]`:
///
/// ```ignore
/// #[ferrocuda_std::pod]
/// #[repr(C)]
/// pub struct Particle { pub position: [f32; 3], pub mass: f32 }
/// ```
///
/// `#[repr(C)]` is required (the field order and padding Rust picks otherwise may differ
/// between the host and the GPU compilation), and bytemuck's derive refuses structs with
/// padding bytes, which would reach the GPU uninitialized.
#[proc_macro_attribute]
pub fn pod(attr: TokenStream, item: TokenStream) -> TokenStream {
    if !attr.is_empty() {
        let error = syn::Error::new(
            TokenStream2::from(attr).span(),
            "`#[pod]` takes no arguments",
        );
        return error.to_compile_error().into();
    }
    let item = syn::parse_macro_input!(item as syn::DeriveInput);
    match pod::expand(item) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

/// `same_len(a, b, ...)` groups, comma separated.
struct KernelOptions {
    same_len: Vec<Vec<Ident>>,
}

impl Parse for KernelOptions {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut same_len = Vec::new();
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            if key != "same_len" {
                return Err(syn::Error::new(
                    key.span(),
                    "unknown #[kernel] option; expected `same_len(a, b, ...)`",
                ));
            }
            let content;
            syn::parenthesized!(content in input);
            let names = Punctuated::<Ident, Token![,]>::parse_terminated(&content)?;
            if names.len() < 2 {
                return Err(syn::Error::new(
                    key.span(),
                    "`same_len` needs at least two parameters",
                ));
            }
            same_len.push(names.into_iter().collect());
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(KernelOptions { same_len })
    }
}

enum Class {
    Slice,
    Output,
    Scalar,
}

struct KernelParam {
    name: Ident,
    class: Class,
    /// Element type for slices and outputs, the value type for scalars.
    ty: Type,
}

fn classify(ty: &Type) -> syn::Result<(Class, Type)> {
    match ty {
        Type::Reference(reference) => match (&*reference.elem, reference.mutability) {
            (Type::Slice(slice), None) => Ok((Class::Slice, (*slice.elem).clone())),
            (Type::Slice(_), Some(_)) => Err(syn::Error::new(
                ty.span(),
                "outputs are `ferrocuda_std::Out<T>`, not `&mut [T]`: all threads of a launch write the \
                 same buffer, which a `&mut` cannot be shared for",
            )),
            _ => Err(syn::Error::new(
                ty.span(),
                "a reference parameter must be a slice `&[T]`; pass single values by value",
            )),
        },
        Type::Ptr(_) => Err(syn::Error::new(
            ty.span(),
            "raw pointer parameters are not supported: take `&[T]` or `Out<T>` and use \
             `.as_ptr()` / `.as_mut_ptr()` inside an `unsafe` block",
        )),
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last().expect("a path has a segment");
            if last.ident != "Out" {
                return Ok((Class::Scalar, ty.clone()));
            }
            let element = match &last.arguments {
                PathArguments::AngleBracketed(args) => {
                    let mut types = args.args.iter().filter_map(|a| match a {
                        GenericArgument::Type(t) => Some(t.clone()),
                        _ => None,
                    });
                    match (types.next(), types.next()) {
                        (Some(t), None) => Some(t),
                        _ => None,
                    }
                }
                _ => None,
            };
            element.map(|t| (Class::Output, t)).ok_or_else(|| {
                syn::Error::new(ty.span(), "`Out` takes one element type, e.g. `Out<f32>`")
            })
        }
        _ => Ok((Class::Scalar, ty.clone())),
    }
}

fn check_signature(function: &ItemFn) -> syn::Result<()> {
    let sig = &function.sig;
    let fail = |span: Span, message: &str| Err(syn::Error::new(span, message));
    if let Some(token) = &sig.unsafety {
        return fail(
            token.span(),
            "a kernel cannot be `unsafe fn`: its launch is checked and safe; put raw-pointer code \
             in `unsafe` blocks inside it",
        );
    }
    if let Some(token) = &sig.asyncness {
        return fail(token.span(), "a kernel cannot be `async`");
    }
    if let Some(token) = &sig.constness {
        return fail(token.span(), "a kernel cannot be `const`");
    }
    if let Some(abi) = &sig.abi {
        return fail(
            abi.span(),
            "a kernel has no `extern` ABI of its own: `#[kernel]` gives it one",
        );
    }
    if let Some(variadic) = &sig.variadic {
        return fail(variadic.span(), "a kernel cannot be variadic");
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        return fail(
            ty.span(),
            "a kernel returns nothing: write results into an `Out<T>` parameter",
        );
    }
    if let Some(param) = sig.generics.params.first() {
        if let GenericParam::Lifetime(lifetime) = param {
            return fail(
                lifetime.span(),
                "a kernel cannot have lifetime parameters: its slices and outputs are borrowed \
                 for one launch only, so leave their lifetimes out (`x: &[f32]`, `out: Out<f32>`)",
            );
        }
        return fail(
            param.span(),
            "a kernel cannot be generic: a PTX entry has one concrete signature; write one \
             kernel per type (a `macro_rules!` can stamp them out)",
        );
    }
    if let Some(clause) = &sig.generics.where_clause {
        return fail(clause.span(), "a kernel cannot have a `where` clause");
    }
    Ok(())
}

fn parse_params(function: &ItemFn) -> syn::Result<Vec<KernelParam>> {
    let mut params = Vec::new();
    for input in &function.sig.inputs {
        let typed = match input {
            FnArg::Typed(typed) => typed,
            FnArg::Receiver(receiver) => {
                return Err(syn::Error::new(
                    receiver.span(),
                    "a kernel cannot take `self`",
                ))
            }
        };
        let name = match &*typed.pat {
            Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                ident.ident.clone()
            }
            other => {
                return Err(syn::Error::new(
                    other.span(),
                    "kernel parameters must be plain names (`x: &[f32]`)",
                ))
            }
        };
        reject_named_lifetimes(&typed.ty)?;
        let (class, ty) = classify(&typed.ty)?;
        params.push(KernelParam { name, class, ty });
    }
    Ok(params)
}

/// Refuses a parameter type that names a lifetime (`&'static [u32]`, `Out<'a, f32>`): the launch
/// borrows its buffers only until the kernel has finished, so a kernel that could keep them longer
/// (in a static, say) would read freed memory. Elided lifetimes (`&[u32]`, `'_`) are fresh for each
/// call of the kernel body and cannot escape it.
fn reject_named_lifetimes(ty: &Type) -> syn::Result<()> {
    reject_lifetimes_in(quote!(#ty))
}

fn reject_lifetimes_in(tokens: TokenStream2) -> syn::Result<()> {
    let mut tokens = tokens.into_iter().peekable();
    while let Some(token) = tokens.next() {
        use proc_macro2::TokenTree;
        match token {
            TokenTree::Punct(quote) if quote.as_char() == '\'' => {
                if let Some(TokenTree::Ident(name)) = tokens.peek() {
                    if name != "_" {
                        let span = quote.span().join(name.span()).unwrap_or(name.span());
                        return Err(syn::Error::new(
                            span,
                            format!(
                                "a kernel parameter cannot name a lifetime (`'{name}`): the launch \
                                 lends its slices and outputs only until the kernel finishes; \
                                 leave the lifetime out (`&[T]`, `Out<T>`)"
                            ),
                        ));
                    }
                }
            }
            TokenTree::Group(group) => {
                // Lifetimes inside brackets (`&[&'static u32]`, `Out<Wrapper<'a>>`).
                reject_lifetimes_in(group.stream())?;
            }
            _ => {}
        }
    }
    Ok(())
}

fn same_len_indices(
    options: &KernelOptions,
    params: &[KernelParam],
) -> syn::Result<Vec<Vec<usize>>> {
    options
        .same_len
        .iter()
        .map(|group| {
            group
                .iter()
                .map(|name| {
                    let index = params.iter().position(|p| p.name == *name).ok_or_else(|| {
                        syn::Error::new(name.span(), format!("no kernel parameter named `{name}`"))
                    })?;
                    match params[index].class {
                        Class::Slice | Class::Output => Ok(index),
                        Class::Scalar => Err(syn::Error::new(
                            name.span(),
                            format!("`{name}` is not a slice or an output: it has no length"),
                        )),
                    }
                })
                .collect()
        })
        .collect()
}

fn expand(options: KernelOptions, function: ItemFn) -> syn::Result<TokenStream2> {
    check_signature(&function)?;
    let params = parse_params(&function)?;
    let same_len = same_len_indices(&options, &params)?;

    let name = &function.sig.ident;
    let name_str = name.to_string();
    let vis = &function.vis;
    let (doc_attrs, other_attrs): (Vec<&Attribute>, Vec<&Attribute>) = function
        .attrs
        .iter()
        .partition(|a| a.path().is_ident("doc"));
    let body_generics = &function.sig.generics;
    let body_inputs = &function.sig.inputs;
    let block = math_methods::route_math_methods(&function.block);
    let ptx_block = rewrite_shared(&block, &name_str, Target::Ptx)?;
    let host_block = rewrite_shared(&block, &name_str, Target::Host)?;
    let arg_names: Vec<&Ident> = params.iter().map(|p| &p.name).collect();
    // The block's scope, lent by the entry to each run of the body: `shared!` arrays, dynamic
    // shared memory and the rebuilt slices and outputs borrow it, so none outlives the block.
    let scope = shared::scope_ident();
    let body_fn = |block: &Block| {
        quote! {
            #(#other_attrs)*
            #[inline(always)]
            #[allow(clippy::too_many_arguments)]
            fn __ferrocuda_body #body_generics (#scope: &::ferrocuda_std::shared::BlockScope, #body_inputs) #block
        }
    };
    let (ptx_body_fn, host_body_fn) = (body_fn(&ptx_block), body_fn(&host_block));

    // The CPU entry's own arguments: mixed-site hygiene keeps them apart from kernel parameters
    // of the same name (`params`, `block`).
    let params_arg = Ident::new("params", Span::mixed_site());
    let block_arg = Ident::new("block", Span::mixed_site());
    // nvptx: explicit PTX parameters, rebuilt into the kernel's own types.
    let mut ptx_params = Vec::new();
    let mut ptx_rebuild = Vec::new();
    // host: the same PTX parameters read from `params[i]`.
    let mut host_rebuild = Vec::new();
    let mut markers = Vec::new();
    let mut infos = Vec::new();
    let mut ptx_index = 0usize;
    for param in &params {
        let (pname, ty) = (&param.name, &param.ty);
        let pname_str = pname.to_string();
        let ty_str = quote!(#ty).to_string().replace(' ', "");
        let ptr = format_ident!("__ferrocuda_{}_ptr", pname);
        let len = format_ident!("__ferrocuda_{}_len", pname);
        let (i, j) = (ptx_index, ptx_index + 1);
        match param.class {
            Class::Slice | Class::Output => {
                // Both cross as a (pointer, length) pair; they differ in mutability and wrapper.
                // On the GPU an input's pointer is a `KernelInput<T>`, which LLVM sees as
                // read-only and not aliased, so its loads become `ld.global.nc`.
                let (ptr_ty, ptx_ptr_ty, ptx_rebuild_fn, host_rebuild_fn, marker, info) =
                    match param.class {
                        Class::Slice => (
                            quote!(*const #ty),
                            quote!(::ferrocuda_std::__private::KernelInput<#ty>),
                            quote!(slice_from_input),
                            quote!(slice_from_raw),
                            quote!(Slice),
                            quote!(slice),
                        ),
                        _ => (
                            quote!(*mut #ty),
                            quote!(*mut #ty),
                            quote!(out_from_raw),
                            quote!(out_from_raw),
                            quote!(Output),
                            quote!(output),
                        ),
                    };
                ptx_params.push(quote!(#ptr: #ptx_ptr_ty, #len: usize));
                // SAFETY (of the generated blocks): the launch checked each (pointer, length)
                // pair against this parameter (kind, element size, bytes, alignment).
                ptx_rebuild.push(quote! {
                    let #pname = unsafe { ::ferrocuda_std::__private::#ptx_rebuild_fn::<#ty>(#scope, #ptr, #len) };
                });
                host_rebuild.push(quote! {
                    let #pname = unsafe {
                        ::ferrocuda_std::__private::#host_rebuild_fn::<#ty>(
                            #scope,
                            ::ferrocuda_std::__private::read_param::<u64>(#params_arg, #i) as usize as #ptr_ty,
                            ::ferrocuda_std::__private::read_param::<u64>(#params_arg, #j) as usize,
                        )
                    };
                });
                markers.push(quote!(::ferrocuda_std::abi::#marker<#ty>));
                infos.push(quote_spanned!(ty.span()=> ::ferrocuda_std::abi::Param::#info::<#ty>(#pname_str, #ty_str)));
                ptx_index += 2;
            }
            Class::Scalar => {
                ptx_params.push(quote!(#pname: #ty));
                // SAFETY (of the generated block): the launch checked the slot's size against
                // `size_of::<T>()`, and `T: Pod` makes any bytes a valid `T`.
                host_rebuild.push(quote! {
                    let #pname = unsafe { ::ferrocuda_std::__private::read_param::<#ty>(#params_arg, #i) };
                });
                markers.push(quote!(::ferrocuda_std::abi::Scalar<#ty>));
                infos.push(quote_spanned!(ty.span()=> ::ferrocuda_std::abi::Param::scalar::<#ty>(#pname_str, #ty_str)));
                ptx_index += 1;
            }
        }
    }
    let same_len_groups = same_len.iter().map(|group| quote!(&[#(#group),*]));
    // The launch checked that each `same_len` group has equal lengths; telling the compiler lets
    // it drop the bounds checks of `b[i]` once `i < a.len()` holds (elementwise kernels then run
    // with one bounds check per element instead of one per slice).
    let same_len_facts: Vec<TokenStream2> = same_len
        .iter()
        .flat_map(|group| {
            let first = &params[group[0]].name;
            let params = &params;
            group[1..].iter().map(move |&other| {
                let other = &params[other].name;
                quote! {
                    // SAFETY: `ferrocuda-host` checks every `same_len` group before it launches.
                    unsafe { ::core::hint::assert_unchecked(#first.len() == #other.len()) };
                }
            })
        })
        .collect();

    Ok(quote! {
        #[cfg(target_arch = "nvptx64")]
        #(#doc_attrs)*
        #[unsafe(no_mangle)]
        #[allow(improper_ctypes_definitions, clippy::missing_safety_doc, clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn #name(#(#ptx_params),*) {
            #ptx_body_fn
            // SAFETY: this entry runs one block, and the scope lives in its frame.
            let #scope = &unsafe { ::ferrocuda_std::shared::BlockScope::new() };
            // SAFETY: the host passes, for each slice and output, a device pointer valid for
            // `len` elements (each argument checked against the PTX parameter before launch).
            #(#ptx_rebuild)*
            #(#same_len_facts)*
            __ferrocuda_body(#scope, #(#arg_names),*)
        }

        #[cfg(not(target_arch = "nvptx64"))]
        #(#doc_attrs)*
        #[allow(non_upper_case_globals)]
        #vis const #name: ::ferrocuda_std::abi::Kernel<(#(#markers,)*)> = {
            #host_body_fn

            /// Runs one block on the CPU from the packed PTX parameters.
            ///
            /// # Safety
            /// `params` must hold this kernel's PTX parameters, as `ferrocuda-host` packs them,
            /// with equal lengths in each `same_len` group.
            unsafe fn __ferrocuda_cpu_entry(
                #params_arg: &[*const u8],
                #block_arg: &::ferrocuda_std::cpu::BlockContext,
            ) {
                // SAFETY: the scope lives in this entry's frame, which `run_block` (running the
                // block) returns or unwinds to before the block is over.
                let #scope = &unsafe { ::ferrocuda_std::shared::BlockScope::new() };
                // SAFETY: the caller packs pointers valid for `len` elements and scalar bytes.
                #(#host_rebuild)*
                #(#same_len_facts)*
                // SAFETY: the caller is the executor, which runs one block at a time on this OS
                // thread and clears it with `take_current` when the block unwinds.
                unsafe {
                    ::ferrocuda_std::cpu::run_block(#block_arg, move || __ferrocuda_body(#scope, #(#arg_names),*));
                }
            }

            const __FERROCUDA_PARAMS: &[::ferrocuda_std::abi::Param] = &[#(#infos),*];
            const __FERROCUDA_SAME_LEN: &[&[usize]] = &[#(#same_len_groups),*];
            // SAFETY: `__ferrocuda_cpu_entry` unpacks exactly the PTX parameters of
            // `__FERROCUDA_PARAMS`, in order, and the marker tuple lists the same parameters.
            unsafe {
                ::ferrocuda_std::abi::Kernel::new(
                    #name_str,
                    __FERROCUDA_PARAMS,
                    __FERROCUDA_SAME_LEN,
                    __ferrocuda_cpu_entry,
                )
            }
        };
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand_str(attr: &str, item: &str) -> syn::Result<String> {
        let options: KernelOptions = syn::parse_str(attr)?;
        let function: ItemFn = syn::parse_str(item)?;
        expand(options, function).map(|tokens| tokens.to_string())
    }

    fn error_of(attr: &str, item: &str) -> String {
        match expand_str(attr, item) {
            Ok(_) => panic!("expected an error for {item}"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn slices_outputs_and_scalars_become_ptx_parameters_in_order() {
        let code = expand_str(
            "same_len(x, y)",
            "pub fn saxpy(alpha: f32, x: &[f32], y: Out<f32>) { let _ = (alpha, x, y); }",
        )
        .unwrap();
        // PTX entry: scalar, then (pointer, length) pairs.
        assert!(code.contains(
            "pub unsafe extern \"ptx-kernel\" fn saxpy (alpha : f32 , __ferrocuda_x_ptr : :: ferrocuda_std :: __private :: KernelInput < f32 > , \
             __ferrocuda_x_len : usize , __ferrocuda_y_ptr : * mut f32 , __ferrocuda_y_len : usize)"
        ), "{code}");
        // Host handle: markers in order, same_len as parameter indices, CPU entry reading the
        // same PTX parameter positions (0 = alpha, 1..2 = x, 3..4 = y).
        assert!(code.contains(
            "Kernel < (:: ferrocuda_std :: abi :: Scalar < f32 > , :: ferrocuda_std :: abi :: Slice < f32 > , \
             :: ferrocuda_std :: abi :: Output < f32 > ,) >"
        ), "{code}");
        assert!(code.contains("& [& [1usize , 2usize]]"), "{code}");
        assert!(
            code.contains("read_param :: < u64 > (params , 3usize)"),
            "{code}"
        );
        assert!(
            code.contains("read_param :: < f32 > (params , 0usize)"),
            "{code}"
        );
    }

    #[test]
    fn signatures_a_ptx_entry_cannot_have_are_refused_with_the_fix() {
        let cases = [
            (
                "pub fn k(x: &mut [f32]) {}",
                "outputs are `ferrocuda_std::Out<T>`",
            ),
            ("pub fn k(x: &f32) {}", "must be a slice"),
            (
                "pub fn k(x: *mut f32) {}",
                "raw pointer parameters are not supported",
            ),
            ("pub fn k<T: Copy>(x: &[T]) {}", "cannot be generic"),
            ("pub fn k(x: &[f32]) -> f32 { 0.0 }", "returns nothing"),
            ("pub unsafe fn k(x: &[f32]) {}", "cannot be `unsafe fn`"),
            ("pub fn k((a, b): (f32, f32)) {}", "plain names"),
            ("pub fn k(x: Out<f32, f64>) {}", "one element type"),
            // Lifetimes that would let a launch's buffers outlive it.
            (
                "pub fn k(x: &'static [u32]) {}",
                "cannot name a lifetime (`'static`)",
            ),
            (
                "pub fn k(x: Out<'static, u32>) {}",
                "cannot name a lifetime (`'static`)",
            ),
            (
                "pub fn k(x: ferrocuda_std::Out<'a, u32>) {}",
                "cannot name a lifetime (`'a`)",
            ),
            (
                "pub fn k(x: &[Wrapper<'a>]) {}",
                "cannot name a lifetime (`'a`)",
            ),
            (
                "pub fn k<'a>(x: &[u32]) {}",
                "cannot have lifetime parameters",
            ),
        ];
        for (item, expected) in cases {
            let message = error_of("", item);
            assert!(message.contains(expected), "{item}: {message}");
        }
    }

    #[test]
    fn elided_lifetimes_are_accepted() {
        assert!(expand_str(
            "",
            "pub fn k(x: &'_ [u32], y: Out<'_, u32>, z: Out<u32>) {}"
        )
        .is_ok());
    }

    #[test]
    fn dynamic_shared_calls_in_the_body_borrow_the_block_scope() {
        let code = expand_str(
            "",
            "pub fn k(out: Out<f32>) { let a = dynamic_shared::<u32>(); let b: Shared<f32> = ferrocuda_std::dynamic_shared(); }",
        )
        .unwrap();
        // Once for the PTX body, once for the host's.
        assert_eq!(
            code.matches("dynamic_shared :: < u32 > (__ferrocuda_scope)")
                .count(),
            2,
            "{code}"
        );
        assert_eq!(
            code.matches("ferrocuda_std :: dynamic_shared (__ferrocuda_scope)")
                .count(),
            2,
            "{code}"
        );
    }

    #[test]
    fn each_shared_array_gets_its_own_ptx_symbol_and_host_site() {
        let code = expand_str(
            "",
            "pub fn k(out: Out<f32>) { let a = shared!([f32; 64]); let b = ferrocuda_std::shared!([u32; N]); }",
        )
        .unwrap();
        // nvptx: one `.shared` declaration per array, named after the kernel, and its address.
        assert!(
            code.contains(r#"".shared .align 16 .b8 __ferrocuda_shared_k_0[{size}];""#),
            "{code}"
        );
        assert!(
            code.contains(r#""cvta.shared.u64 {0}, __ferrocuda_shared_k_1;""#),
            "{code}"
        );
        assert!(code.contains("size_of :: < [u32 ; N] >"), "{code}");
        // host: the executor's arena, with the variable's name for reports.
        assert!(code.contains("index : 0usize , name : \"a\""), "{code}");
        assert!(
            code.contains("shared_array :: < u32 > (__ferrocuda_scope , & __FERROCUDA_SITE , N)"),
            "{code}"
        );
        // The user's own `shared` path is invoked once per array, so its import counts as used.
        assert_eq!(
            code.matches("shared ! (@ rewritten_by_kernel)").count(),
            4,
            "{code}"
        );
    }

    #[test]
    fn a_shared_size_sees_the_kernel_body_s_consts_innermost_first() {
        let code = expand_str(
            "",
            "pub fn k(out: Out<f32>) { const N: usize = 8; const M: usize = N * 2; \
             { const N: usize = 4; let a = shared!([f32; N]); } let b = shared!([f32; M]); }",
        )
        .unwrap();
        // Array 0 sees the inner N (and M); array 1 the outer N and M.
        let module = |i: usize| {
            let start = code
                .find(&format!("mod __ferrocuda_shared_{i}"))
                .unwrap_or_else(|| panic!("no size module {i}: {code}"));
            let rest = &code[start..];
            rest[..rest.find("global_asm").unwrap()].to_string()
        };
        assert!(module(0).contains("const N : usize = 4 ;"), "{}", module(0));
        assert!(
            !module(0).contains("const N : usize = 8 ;"),
            "{}",
            module(0)
        );
        assert!(
            module(0).contains("const M : usize = N * 2 ;"),
            "{}",
            module(0)
        );
        assert!(module(1).contains("const N : usize = 8 ;"), "{}", module(1));
        assert!(
            !module(1).contains("const N : usize = 4 ;"),
            "{}",
            module(1)
        );
    }

    #[test]
    fn shared_takes_an_array_type() {
        let message = error_of("", "pub fn k(out: Out<f32>) { let a = shared!(f32, 64); }");
        assert!(
            message.contains("`shared!` takes an array type"),
            "{message}"
        );
    }

    #[test]
    fn same_len_must_name_slices_or_outputs() {
        let item = "pub fn k(n: u32, x: &[f32], y: Out<f32>) {}";
        assert!(error_of("same_len(x, z)", item).contains("no kernel parameter named `z`"));
        assert!(error_of("same_len(n, x)", item).contains("`n` is not a slice or an output"));
        assert!(error_of("same_len(x)", item).contains("at least two"));
        assert!(error_of("same_size(x, y)", item).contains("unknown #[kernel] option"));
        assert!(expand_str("same_len(x, y)", item).is_ok());
    }
}
