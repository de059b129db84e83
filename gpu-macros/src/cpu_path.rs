//! How a kernel's CPU entry runs its blocks (elementwise loop, regions or coroutines), as the
//! split-path compiler decides from the body, with the split function it generates.

use crate::signature::{Class, KernelParam};
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use syn::{Block, Ident};

/// The name prefix of the PTX variable that records a kernel's CPU path (the entry's name
/// follows); `ferrocuda_builder` reads these.
pub(crate) fn ferrocuda_cpu_path_prefix() -> &'static str {
    "__ferrocuda_cpu_path__"
}

/// How the CPU entry runs blocks: the `CpuPath` it reports, and the split function's body for
/// the elementwise and region paths (none for the coroutine path).
pub(crate) struct CpuPathTokens {
    pub(crate) path: TokenStream2,
    /// The path in words, as the PTX records it for the builder: `elementwise`, `regions`, or
    /// `coroutines: <why>`.
    pub(crate) summary: String,
    pub(crate) split_fn: Option<TokenStream2>,
    /// The outputs the elementwise loop writes with plain stores in a 1D launch.
    pub(crate) owned: Vec<Ident>,
}

pub(crate) fn cpu_path(
    host_block: &Block,
    inputs: &syn::punctuated::Punctuated<syn::FnArg, syn::Token![,]>,
    cooperative: bool,
    params: &[KernelParam],
) -> CpuPathTokens {
    use crate::regions::{self, Plan};
    match regions::plan(host_block, inputs, cooperative) {
        Plan::Elementwise(stmts) => {
            let outputs: Vec<Ident> = params
                .iter()
                .filter(|p| matches!(p.class, Class::Output) && p.dims == 1)
                .map(|p| p.name.clone())
                .collect();
            let names: Vec<Ident> = params.iter().map(|p| p.name.clone()).collect();
            let buffers: Vec<Ident> = params
                .iter()
                .filter(|p| matches!(p.class, Class::Slice | Class::Output) && p.dims == 1)
                .map(|p| p.name.clone())
                .collect();
            let owned = crate::owned_outputs::owned_outputs(&stmts, &outputs, &names, &buffers);
            let slices: Vec<Ident> = params
                .iter()
                .filter(|p| matches!(p.class, Class::Slice) && p.dims == 1)
                .map(|p| p.name.clone())
                .collect();
            CpuPathTokens {
                path: quote!(::ferrocuda_std::abi::CpuPath::Elementwise),
                summary: "elementwise".into(),
                split_fn: Some(regions::elementwise(&stmts, &owned, &slices)),
                owned,
            }
        }
        Plan::Regions(segs) => match regions::regions(&segs) {
            Ok(code) => CpuPathTokens {
                path: quote!(::ferrocuda_std::abi::CpuPath::Regions),
                summary: "regions".into(),
                split_fn: Some(code),
                owned: Vec::new(),
            },
            Err(why) => CpuPathTokens {
                summary: format!("coroutines: {why}"),
                path: quote!(::ferrocuda_std::abi::CpuPath::Coroutines(#why)),
                split_fn: None,
                owned: Vec::new(),
            },
        },
        Plan::Coroutines(why) => CpuPathTokens {
            summary: format!("coroutines: {why}"),
            path: quote!(::ferrocuda_std::abi::CpuPath::Coroutines(#why)),
            split_fn: None,
            owned: Vec::new(),
        },
    }
}
