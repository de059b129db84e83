//! Run-time CPU feature dispatch in the CPU expansion: a crate built without AVX2 and FMA (a
//! user's kernel crate without ferrocuda's `.cargo/config.toml`) gets a wide twin of each host
//! function that runs a block, compiled with `#[target_feature(enable = "avx2,fma")]`, and the
//! entry calls it when `ferrocuda_std::cpu::has_avx2_and_fma()` says the CPU has both. Built
//! with those features already (`-C target-cpu=x86-64-v3`), the plain function is the wide one
//! and no twin is made.

use proc_macro2::TokenStream as TokenStream2;
use quote::quote;

/// Where a wide twin is compiled: x86-64 without both features.
fn wide_cfg() -> TokenStream2 {
    quote!(#[cfg(all(target_arch = "x86_64", not(all(target_feature = "avx2", target_feature = "fma"))))])
}

/// The attributes of a wide twin (in place of the plain function's `#[inline(always)]`, which
/// `#[target_feature]` does not allow).
pub(crate) fn wide_attrs() -> TokenStream2 {
    let cfg = wide_cfg();
    quote! {
        #cfg
        #[target_feature(enable = "avx2,fma")]
        #[inline]
    }
}

/// Calls `wide` (a call of a twin) where the CPU allows it, else `plain`; the value of the
/// enclosing closure either way.
pub(crate) fn dispatch(plain: TokenStream2, wide: TokenStream2) -> TokenStream2 {
    let cfg = wide_cfg();
    quote! {
        #cfg
        if ::ferrocuda_std::cpu::has_avx2_and_fma() {
            // SAFETY: `has_avx2_and_fma` detected AVX2 and FMA on this CPU, all the twin's
            // `#[target_feature]` enables.
            return unsafe { #wide };
        }
        #plain
    }
}
