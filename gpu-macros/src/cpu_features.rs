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

#[cfg(test)]
mod tests {
    use crate::kernel::expand;
    use crate::options::KernelOptions;

    /// The expansion of `body` as a kernel over `out: Out<f32>`.
    fn expanded(body: &str) -> String {
        let options: KernelOptions = syn::parse_str("").unwrap();
        let function = syn::parse_str(&format!("pub fn k(out: Out<f32>) {body}")).unwrap();
        expand(options, function).unwrap().to_string()
    }

    #[test]
    fn every_path_gets_a_wide_twin_called_only_where_the_cpu_has_avx2_and_fma() {
        let cfg = "# [cfg (all (target_arch = \"x86_64\" , not (all (target_feature = \"avx2\" , target_feature = \"fma\"))))]";
        let twin = "# [target_feature (enable = \"avx2,fma\")]";
        let elementwise = expanded("{ let i = thread::index_1d(); out.set(i, 1.0); }");
        let coroutines = expanded("{ if out.len() > 1 { thread::sync_threads(); } }");
        for (code, twins) in [
            (
                &elementwise,
                ["__ferrocuda_body_wide", "__ferrocuda_split_wide"].as_slice(),
            ),
            (&coroutines, ["__ferrocuda_body_wide"].as_slice()),
        ] {
            for name in twins {
                let definition =
                    format!("{cfg} {twin} # [inline] # [allow (clippy :: too_many_arguments");
                assert!(code.contains(&definition), "{code}");
                assert!(code.contains(&format!("fn {name}")), "{name}: {code}");
                // SAFETY: not a block here: the text of the call `dispatch` generates, whose
                // comment says what it relies on.
                let call = format!("{cfg} if :: ferrocuda_std :: cpu :: has_avx2_and_fma () {{ return unsafe {{ {name}");
                assert!(code.contains(&call), "{name}: {code}");
            }
        }
        assert!(!coroutines.contains("__ferrocuda_split_wide"));
    }
}
