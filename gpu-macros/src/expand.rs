//! The expansion of one PTX entry: the `extern "ptx-kernel"` function on nvptx, and on the host
//! the `Kernel` handle's value (its parameters and a CPU entry that runs the same body). What each
//! parameter becomes is in `param_tokens`, how the CPU entry runs blocks in `cpu_path`.

use crate::cpu_path::{cpu_path, ferrocuda_cpu_path_prefix, CpuPathTokens};
use crate::instance::Substitution;
use crate::param_tokens::{kernel_type, view_tokens};
use crate::shared::{self, rewrite_shared, Target};
use crate::signature::{Class, KernelParam, LengthRules};
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, Block, Ident, ItemFn};

/// One PTX entry to emit: a non-generic kernel, or one instance of a generic one.
pub(crate) struct Entry {
    /// The PTX `.entry` name: on nvptx, the name of the `extern "ptx-kernel"` function.
    pub(crate) name: Ident,
    /// The parameters, with this entry's concrete types.
    pub(crate) params: Vec<KernelParam>,
    /// `::<f32, u32>` for an instance (the body's generic arguments); empty otherwise.
    pub(crate) turbofish: TokenStream2,
    /// Each generic parameter's type in this instance, for what must be concrete in the body
    /// (the sizes of `shared!` arrays).
    pub(crate) substitution: Substitution,
}

/// What [`expand_entry`] makes.
pub(crate) struct Expanded {
    /// The `#[cfg(target_arch = "nvptx64")]` entry function.
    pub(crate) ptx_entry: TokenStream2,
    /// A const expression of type `kernel_type`: the host's handle.
    pub(crate) host_kernel: TokenStream2,
    /// `::ferrocuda_std::abi::Kernel<(markers,)>`.
    pub(crate) kernel_type: TokenStream2,
}

/// The doc comments of the kernel, which go on its PTX entry and its host handle.
pub(crate) fn doc_attrs(function: &ItemFn) -> Vec<&Attribute> {
    function
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .collect()
}

pub(crate) fn expand_entry(
    function: &ItemFn,
    rules: &LengthRules,
    entry: &Entry,
) -> syn::Result<Expanded> {
    let same_len = &rules.same_len;
    let params = &entry.params;
    let name = &entry.name;
    let name_str = name.to_string();
    let other_attrs: Vec<&Attribute> = function
        .attrs
        .iter()
        .filter(|a| !a.path().is_ident("doc"))
        .collect();
    let doc_attrs = doc_attrs(function);
    let body_generics = &function.sig.generics;
    let where_clause = &function.sig.generics.where_clause;
    let body_inputs = &function.sig.inputs;
    let turbofish = &entry.turbofish;
    let substitution = &entry.substitution;
    let block = crate::math_methods::route_math_methods(&function.block);
    let ptx_block = rewrite_shared(&block, &name_str, Target::Ptx, substitution)?;
    let ptx_block = crate::rematerialize::refresh_at_barriers(function, &ptx_block);
    let host_block = rewrite_shared(&block, &name_str, Target::Host, substitution)?;
    let arg_names: Vec<&Ident> = params.iter().map(|p| &p.name).collect();
    // The block's scope, lent by the entry to each run of the body: `shared!` arrays, dynamic
    // shared memory and the rebuilt slices and outputs borrow it, so none outlives the block.
    let scope = shared::scope_ident();
    let body_fn = |block: &Block, name: &str, inline: TokenStream2| {
        let name = Ident::new(name, Span::call_site());
        quote! {
            #(#other_attrs)*
            #inline
            #[allow(clippy::too_many_arguments)]
            fn #name #body_generics (#scope: &::ferrocuda_std::shared::BlockScope, #body_inputs) #where_clause {
                // Each `shared!` keeps checked mode's access checks (the launch's flag decides).
                #[allow(dead_code)]
                const __FERROCUDA_SHARED_CHECKS: bool = true;
                #block
            }
        }
    };
    let always = quote!(#[inline(always)]);
    let ptx_body_fn = body_fn(&ptx_block, "__ferrocuda_body", always.clone());
    let host_body_fn = body_fn(&host_block, "__ferrocuda_body", always.clone());
    let wide_body_fn = body_fn(
        &host_block,
        "__ferrocuda_body_wide",
        crate::cpu_features::wide_attrs(),
    );

    // The CPU entry's own arguments: mixed-site hygiene keeps them apart from kernel parameters
    // of the same name (`params`, `block`).
    let params_arg = Ident::new("params", Span::mixed_site());
    let block_arg = Ident::new("block", Span::mixed_site());
    // nvptx: explicit PTX parameters, rebuilt into the kernel's own types.
    let mut ptx_params = Vec::new();
    let mut ptx_rebuild = Vec::new();
    // host: the same PTX parameters read from `params[i]`.
    let mut host_rebuild = Vec::new();
    let mut infos = Vec::new();
    let mut ptx_index = 0usize;
    let mut cooperative = false;
    for param in params {
        let (pname, ty) = (&param.name, &param.ty);
        let pname_str = pname.to_string();
        let ty_str = quote!(#ty).to_string().replace(' ', "");
        let i = ptx_index;
        match param.class {
            Class::Slice | Class::Output => {
                let view = view_tokens(param, &scope, &params_arg, ptx_index);
                ptx_params.push(view.ptx_params);
                ptx_rebuild.push(view.ptx_rebuild);
                host_rebuild.push(view.host_rebuild);
                infos.push(view.info);
                ptx_index += view.ptx_param_count;
            }
            Class::Grid => {
                let (ptx, rebuild, host) = crate::grid::param(pname, &scope, &params_arg, i);
                ptx_params.push(ptx);
                ptx_rebuild.push(rebuild);
                host_rebuild.push(host);
                cooperative = true;
            }
            Class::Scalar if crate::signature::is_bool(ty) => {
                // One byte, made a `bool` by `!= 0`: no byte sent can be an invalid `bool`.
                ptx_params.push(quote!(#pname: u8));
                ptx_rebuild.push(quote!(let #pname: bool = #pname != 0;));
                // SAFETY (of the generated block): the launch checked the slot's size (1 byte).
                host_rebuild.push(quote! {
                    let #pname: bool = unsafe { ::ferrocuda_std::__private::read_param::<u8>(#params_arg, #i) } != 0;
                });
                infos.push(quote_spanned!(ty.span()=> ::ferrocuda_std::abi::Param::scalar::<u8>(#pname_str, "bool")));
                ptx_index += 1;
            }
            Class::Scalar => {
                ptx_params.push(quote!(#pname: #ty));
                // SAFETY (of the generated block): the launch checked the slot's size against
                // `size_of::<T>()`, and `T: Pod` makes any bytes a valid `T`.
                host_rebuild.push(quote! {
                    let #pname = unsafe { ::ferrocuda_std::__private::read_param::<#ty>(#params_arg, #i) };
                });
                infos.push(quote_spanned!(ty.span()=> ::ferrocuda_std::abi::Param::scalar::<#ty>(#pname_str, #ty_str)));
                ptx_index += 1;
            }
        }
    }
    let same_len_groups = same_len.iter().map(|group| quote!(&[#(#group),*]));
    let cpu = cpu_path(&host_block, body_inputs, cooperative, params);
    let cooperative = cooperative.then(|| quote!(.cooperative()));
    // The launch checked that each `same_len` group has equal lengths; telling the compiler lets
    // it drop the bounds checks of `b[i]` once `i < a.len()` holds (elementwise kernels then run
    // with one bounds check per element instead of one per slice).
    let same_len_facts: Vec<TokenStream2> = same_len
        .iter()
        .flat_map(|group| {
            let first = &params[group[0]].name;
            group[1..].iter().map(move |&other| {
                let other = &params[other].name;
                quote! {
                    // SAFETY: `ferrocuda-host` checks every `same_len` group before it launches.
                    unsafe { ::core::hint::assert_unchecked(#first.len() == #other.len()) };
                }
            })
        })
        .collect();
    // `len(x = a * b)`: the launch checked that `x` has a·b elements and that a·b fits in a u32
    // (so the product below, in u64, is exact).
    let (len_products, len_facts): (Vec<TokenStream2>, Vec<TokenStream2>) = rules
        .products
        .iter()
        .map(|(slice, factors)| {
            let name = &params[*slice].name;
            let factor_names = factors.iter().map(|&f| &params[f].name);
            let fact = quote! {
                // SAFETY: `ferrocuda-host` checks every `len` product before it launches.
                unsafe {
                    ::core::hint::assert_unchecked(
                        #name.len() as u64 == 1u64 #(.wrapping_mul(#factor_names as u64))*
                            && #name.len() <= u32::MAX as usize,
                    )
                };
            };
            (
                quote!(::ferrocuda_std::abi::LenProduct::new(#slice, &[#(#factors),*])),
                fact,
            )
        })
        .unzip();
    let len_products =
        (!len_products.is_empty()).then(|| quote!(.with_len_products(&[#(#len_products),*])));
    // `index32(a, out)`: the launch checked that each view's memory and extents fit in a u32.
    let index32_views: Vec<TokenStream2> = rules
        .index32
        .iter()
        .map(|&view| {
            let name = &params[view].name;
            quote! {
                // SAFETY: `ferrocuda-host` checks every `index32` view before it launches.
                let #name = unsafe { #name.assume_index32() };
            }
        })
        .collect();
    let index32 = &rules.index32;
    let index32 = (!index32.is_empty()).then(|| quote!(.with_index32(&[#(#index32),*])));
    // `transposed(out, a)`: the launch checked that `out`'s shape is `a`'s reversed, which lets
    // the compiler drop `out`'s bounds check where `a`'s already holds.
    let transposed_facts: Vec<TokenStream2> = rules
        .transposed
        .iter()
        .map(|&(out, a)| {
            let (out, a) = (&params[out].name, &params[a].name);
            quote! {
                // SAFETY: `ferrocuda-host` checks every `transposed` pair before it launches.
                unsafe {
                    ::core::hint::assert_unchecked(
                        #out.rows() == #a.cols() && #out.cols() == #a.rows(),
                    )
                };
            }
        })
        .collect();
    let transposed = rules.transposed.iter().map(|(out, a)| quote!((#out, #a)));
    let transposed =
        (!rules.transposed.is_empty()).then(|| quote!(.with_transposed(&[#(#transposed),*])));
    // `block(x, y, z)`: the launch checked the block's shape.
    let (block, block_fact) = match &rules.block {
        Some([x, y, z]) => (
            Some(
                quote!(.with_block(::ferrocuda_std::Dim3::new((#x) as u32, (#y) as u32, (#z) as u32))),
            ),
            Some(quote! {
                let __ferrocuda_block = ::ferrocuda_std::thread::block_dim();
                // SAFETY: `ferrocuda-host` checks the block shape of `block(...)` before it
                // launches.
                unsafe {
                    ::core::hint::assert_unchecked(
                        __ferrocuda_block == ::ferrocuda_std::Dim3::new((#x) as u32, (#y) as u32, (#z) as u32),
                    )
                };
            }),
        ),
        None => (None, None),
    };

    let ptx_entry = quote! {
        #[cfg(target_arch = "nvptx64")]
        #(#doc_attrs)*
        #[unsafe(no_mangle)]
        #[allow(improper_ctypes_definitions, non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn #name(#(#ptx_params),*) {
            #ptx_body_fn
            // SAFETY: this entry runs one block, and the scope lives in its frame.
            let #scope = &unsafe { ::ferrocuda_std::shared::BlockScope::new() };
            // SAFETY: the host passes, for each slice and output, a device pointer valid for
            // `len` elements (each argument checked against the PTX parameter before launch).
            #(#ptx_rebuild)*
            #(#index32_views)*
            #(#same_len_facts)*
            #(#len_facts)*
            #(#transposed_facts)*
            #block_fact
            __ferrocuda_body #turbofish (#scope, #(#arg_names),*)
        }
    };
    let CpuPathTokens {
        path,
        summary,
        split_fn,
        owned,
    } = cpu;
    // The CPU path in the PTX too, where the builder reads it (`BuiltPtx::cpu_paths`): a build
    // script warns about kernels on coroutines, and `ferrocuda kernels --ptx` lists every path.
    let path_record = format_ident!("{}{}", ferrocuda_cpu_path_prefix(), name);
    let path_bytes = syn::LitByteStr::new(summary.as_bytes(), Span::call_site());
    let path_len = summary.len();
    let path_record = quote! {
        #[cfg(target_arch = "nvptx64")]
        #[doc(hidden)]
        #[unsafe(no_mangle)]
        #[used]
        #[allow(non_upper_case_globals)]
        static #path_record: [u8; #path_len] = *#path_bytes;
    };
    let owned = owned.iter().map(ToString::to_string);
    let owned = quote!(.owned_outputs(&[#(#owned),*]));
    let regions_arg = crate::regions::regions_ident();
    let run_body = crate::cpu_features::dispatch(
        quote!(__ferrocuda_body #turbofish (#scope, #(#arg_names),*)),
        quote!(__ferrocuda_body_wide #turbofish (#scope, #(#arg_names),*)),
    );
    // Checked launches run the copy whose `shared!` arrays keep their checks; the others a copy
    // without them (and its AVX2 twin), in which LLVM sees no checked-mode call at all.
    let run_unchecked_split = crate::cpu_features::dispatch(
        quote!(__ferrocuda_split_unchecked #turbofish (#scope, #regions_arg, #(#arg_names),*)),
        quote!(__ferrocuda_split_wide #turbofish (#scope, #regions_arg, #(#arg_names),*)),
    );
    let run_split = quote! {
        if #block_arg.checked {
            return __ferrocuda_split #turbofish (#scope, #regions_arg, #(#arg_names),*);
        }
        #run_unchecked_split
    };
    let coroutine_run = quote! {
        // SAFETY: the caller is the executor, which runs one block at a time on this OS
        // thread and clears it with `take_current` when the block unwinds.
        for #block_arg in ::ferrocuda_std::cpu::each_block(#block_arg) {
            unsafe {
                ::ferrocuda_std::cpu::run_block(&#block_arg, move || { #run_body });
            }
        }
    };
    let cpu_run = match &split_fn {
        None => coroutine_run,
        Some(_) => quote! {
            if #block_arg.coroutines {
                #coroutine_run
            } else {
                // SAFETY: as for `run_block`: the executor runs one block at a time on this OS
                // thread and clears it with `take_current` when the block unwinds.
                unsafe {
                    ::ferrocuda_std::cpu::run_regions(#block_arg, move |#regions_arg: &mut ::ferrocuda_std::cpu::Regions| {
                        #run_split
                    });
                }
            }
        },
    };
    let split_fn = split_fn.map(|code| {
        let split = |name: &str, inline: TokenStream2, checks: bool| {
            let name = Ident::new(name, Span::call_site());
            quote! {
            #(#other_attrs)*
            #inline
            #[allow(clippy::too_many_arguments, unused_variables, unused_mut, unused_parens, unreachable_code, clippy::let_unit_value, clippy::needless_return)]
            fn #name #body_generics (
                #scope: &::ferrocuda_std::shared::BlockScope,
                #regions_arg: &mut ::ferrocuda_std::cpu::Regions,
                #body_inputs
            ) #where_clause {
                // The entry's facts again: the split function runs behind the executor's
                // `dyn Fn`, where the compiler no longer sees them.
                #(#same_len_facts)*
                #(#len_facts)*
                #(#transposed_facts)*
                // Whether the `shared!` arrays keep checked mode's access checks.
                #[allow(dead_code)]
                const __FERROCUDA_SHARED_CHECKS: bool = #checks;
                #code
            }
            }
        };
        let checked = split("__ferrocuda_split", always.clone(), true);
        let unchecked = split("__ferrocuda_split_unchecked", always.clone(), false);
        let wide = split("__ferrocuda_split_wide", crate::cpu_features::wide_attrs(), false);
        quote!(#checked #unchecked #wide)
    });
    let host_kernel = quote! {{
        #host_body_fn
        #wide_body_fn
        #split_fn

        /// Runs one block on the CPU from the packed PTX parameters.
        ///
        /// # Safety
        /// `params` must hold this kernel's PTX parameters, as `ferrocuda-host` packs them,
        /// with equal lengths in each `same_len` group and each `len` product, and reversed
        /// shapes in each `transposed` pair.
        unsafe fn __ferrocuda_cpu_entry(
            #params_arg: &[*const u8],
            #block_arg: &::ferrocuda_std::cpu::BlockContext,
        ) {
            // SAFETY: the scope lives in this entry's frame, which `run_block` (running the
            // block) returns or unwinds to before the block is over.
            let #scope = &unsafe { ::ferrocuda_std::shared::BlockScope::new() };
            // SAFETY: the caller packs pointers valid for `len` elements and scalar bytes.
            #(#host_rebuild)*
            #(#index32_views)*
            #(#same_len_facts)*
            #(#len_facts)*
            #(#transposed_facts)*
            #cpu_run
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
            )#cooperative #len_products #index32 #transposed #block .cpu_path(#path) #owned
        }
    }};
    Ok(Expanded {
        ptx_entry: quote!(#ptx_entry #path_record),
        host_kernel,
        kernel_type: kernel_type(params),
    })
}
