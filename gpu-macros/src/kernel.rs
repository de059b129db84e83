//! `#[kernel]` as a whole: check the signature, read the parameters and the launch rules, then
//! expand one entry (`expand`) or one per instance of a generic kernel (`generics`). The top of
//! the crate's layers: everything else is below it.

use crate::expand::{doc_attrs, expand_entry, Entry, Expanded};
use crate::generics;
use crate::instance::Substitution;
use crate::options::KernelOptions;
use crate::signature::{check_signature, length_rules, parse_params};
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use syn::ItemFn;

/// `#[kernel]`'s expansion: one entry, or one per instance of a generic kernel.
pub(crate) fn expand(options: KernelOptions, function: ItemFn) -> syn::Result<TokenStream2> {
    check_signature(&function, options.instances.is_some())?;
    let params = parse_params(&function)?;
    let rules = length_rules(&options, &params)?;
    if let Some((key, instances)) = &options.instances {
        if let Some(name) = &options.name {
            return Err(syn::Error::new(
                name.span(),
                "a generic kernel's entries are named per instance (`scale_f32`, ...): rename \
                 the function instead of giving `name`",
            ));
        }
        return generics::expand_generic(&function, &params, &rules, key, instances);
    }
    let entry = Entry {
        name: options
            .name
            .clone()
            .unwrap_or_else(|| function.sig.ident.clone()),
        params,
        turbofish: TokenStream2::new(),
        substitution: Substitution::default(),
    };
    let Expanded {
        ptx_entry,
        host_kernel,
        kernel_type,
    } = expand_entry(&function, &rules, &entry)?;
    let name = &function.sig.ident;
    let vis = &function.vis;
    let doc_attrs = doc_attrs(&function);
    Ok(quote! {
        #ptx_entry

        #[cfg(not(target_arch = "nvptx64"))]
        #(#doc_attrs)*
        #[allow(non_upper_case_globals)]
        #vis const #name: #kernel_type = #host_kernel;
    })
}
