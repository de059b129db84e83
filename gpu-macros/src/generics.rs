//! Generic kernels: `#[kernel(instances(f32, f64))] fn scale<T: Number>(...)` becomes one PTX
//! entry per instance (`scale_f32`, `scale_f64`) and, on the host, a generic function
//! `scale::<T>()` whose value is the instance's `Kernel` handle. Which instances exist is a
//! trait implemented once per instance, so naming one that was not built fails to compile with a
//! message that lists those that were.

use crate::expand::{doc_attrs, expand_entry, Entry, Expanded};
use crate::instance::{Instance, Substitution};
use crate::param_tokens::kernel_type;
use crate::signature::{KernelParam, LengthRules};
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote, ToTokens};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Ident, ItemFn, Type};

/// The part of an entry name a type gives: its tokens with every run of other characters than
/// letters, digits and `_` made one `_` (`f32` → `f32`, `[u8; 4]` → `u8_4`).
fn type_suffix(ty: &Type) -> String {
    let text = ty.to_token_stream().to_string();
    let mut suffix = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            suffix.push(c);
        } else if !suffix.is_empty() && !suffix.ends_with('_') {
            suffix.push('_');
        }
    }
    suffix.trim_end_matches('_').to_string()
}

/// `matmul_tiled` → `MatmulTiled`.
fn camel_case(name: &str) -> String {
    name.split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The types of `instance`, one per type parameter of the kernel.
fn instance_types(instance: &Instance, type_params: &[Ident]) -> syn::Result<Vec<Type>> {
    if type_params.len() == 1 {
        return Ok(vec![instance.types.clone()]);
    }
    match &instance.types {
        Type::Tuple(tuple) if tuple.elems.len() == type_params.len() => {
            Ok(tuple.elems.iter().cloned().collect())
        }
        other => {
            let names: Vec<String> = type_params.iter().map(Ident::to_string).collect();
            Err(syn::Error::new(
                other.span(),
                format!(
                    "this kernel has {} type parameters ({}): write each instance as a tuple \
                     of {} types, e.g. `instances((f32, u32), (f64, u64))`",
                    type_params.len(),
                    names.join(", "),
                    type_params.len()
                ),
            ))
        }
    }
}

/// The expansion of a generic kernel: an entry per instance, the instances' trait and the host's
/// generic handle function.
pub(crate) fn expand_generic(
    function: &ItemFn,
    params: &[KernelParam],
    rules: &LengthRules,
    key: &Ident,
    instances: &[Instance],
) -> syn::Result<TokenStream2> {
    let name = &function.sig.ident;
    let vis = &function.vis;
    let type_params: Vec<Ident> = function
        .sig
        .generics
        .type_params()
        .map(|p| p.ident.clone())
        .collect();
    if type_params.is_empty() {
        return Err(syn::Error::new(
            key.span(),
            format!(
                "`instances` lists the types of a generic kernel's type parameters, but `{name}` \
                 has none: write `fn {name}<T>(...)` or leave `instances` out"
            ),
        ));
    }
    let trait_name = format_ident!("{}Instance", camel_case(&name.to_string()));
    let mut ptx_entries = Vec::new();
    let mut impls = Vec::new();
    let mut built: Vec<(String, String)> = Vec::new();
    for instance in instances {
        let types = instance_types(instance, &type_params)?;
        let types_str = types
            .iter()
            .map(|t| t.to_token_stream().to_string().replace(' ', ""))
            .collect::<Vec<_>>()
            .join(", ");
        let entry_name = instance.rename.clone().unwrap_or_else(|| {
            let suffix: Vec<String> = types.iter().map(type_suffix).collect();
            format_ident!("{}_{}", name, suffix.join("_"))
        });
        if let Some((earlier, _)) = built
            .iter()
            .find(|(t, e)| *t == types_str || entry_name == e)
        {
            return Err(syn::Error::new(
                instance.types.span(),
                format!(
                    "instance `{types_str}` (entry `{entry_name}`) repeats the instance \
                     `{earlier}` or its entry name"
                ),
            ));
        }
        built.push((types_str, entry_name.to_string()));
        let substitution = Substitution(type_params.iter().cloned().zip(types.clone()).collect());
        let entry = Entry {
            name: entry_name,
            params: params
                .iter()
                .map(|param| KernelParam {
                    ty: substitution.apply(&param.ty, Substitution::visit_type_mut),
                    ..param.clone()
                })
                .collect(),
            turbofish: quote!(::<#(#types),*>),
            substitution,
        };
        let Expanded {
            ptx_entry,
            host_kernel,
            kernel_type,
        } = expand_entry(function, rules, &entry)?;
        ptx_entries.push(ptx_entry);
        impls.push(quote! {
            #[cfg(not(target_arch = "nvptx64"))]
            impl #trait_name<#(#types),*> for () {
                const KERNEL: #kernel_type = #host_kernel;
            }
        });
    }

    let generic_type = kernel_type(params);
    let listing = built
        .iter()
        .map(|(types, entry)| format!("`{types}` (entry `{entry}`)"))
        .collect::<Vec<_>>()
        .join(", ");
    let for_types = type_params
        .iter()
        .map(|p| format!("{p} = `{{{p}}}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let message = format!("kernel `{name}` has no instance for {for_types}");
    let note = format!(
        "`#[kernel(instances(...))]` built `{name}` for: {listing}; add the type there to build it"
    );
    let instance_doc = format!(
        " Generic kernel: pick an instance with `{name}::<...>` or let the launch's argument \
         types pick it. Instances (PTX entries): {listing}."
    );
    let trait_doc = format!(
        " The instances of the generic kernel [`{name}`]: implemented for `()` once per type in \
         its `instances(...)`."
    );
    let doc_attrs = doc_attrs(function);
    Ok(quote! {
        #(#ptx_entries)*

        #[cfg(not(target_arch = "nvptx64"))]
        #[doc = #trait_doc]
        #[doc(hidden)]
        #[diagnostic::on_unimplemented(message = #message, label = "no PTX entry was built for this instance", note = #note)]
        #vis trait #trait_name<#(#type_params),*> {
            /// The instance's handle.
            const KERNEL: #generic_type;
        }

        #(#impls)*

        #[cfg(not(target_arch = "nvptx64"))]
        #(#doc_attrs)*
        #[doc = ""]
        #[doc = #instance_doc]
        #[must_use]
        #vis const fn #name<#(#type_params),*>() -> #generic_type
        where
            (): #trait_name<#(#type_params),*>,
        {
            <() as #trait_name<#(#type_params),*>>::KERNEL
        }
    })
}
