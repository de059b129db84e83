//! `#[pod]`: plain-data structs for kernel parameters, derived through ferrocuda-std's bytemuck.

use proc_macro2::TokenStream as TokenStream2;
use quote::quote;

/// `#[derive(Clone, Copy, Pod, Zeroable)]` through `::ferrocuda_std::__private::bytemuck` on a
/// `#[repr(C)]` (or `transparent`) struct; an error with the fix otherwise.
pub(crate) fn expand(item: syn::DeriveInput) -> syn::Result<TokenStream2> {
    if !matches!(item.data, syn::Data::Struct(_)) {
        return Err(syn::Error::new(
            item.ident.span(),
            "`#[pod]` is for structs: an enum or union is not plain data for every bit pattern",
        ));
    }
    let mut repr_c = false;
    for attr in item.attrs.iter().filter(|a| a.path().is_ident("repr")) {
        attr.parse_nested_meta(|meta| {
            repr_c |= meta.path.is_ident("C") || meta.path.is_ident("transparent");
            // `align(16)`, `packed(2)`: skip the parenthesised argument.
            if meta.input.peek(syn::token::Paren) {
                let content;
                syn::parenthesized!(content in meta.input);
                content.parse::<TokenStream2>()?;
            }
            Ok(())
        })?;
    }
    if !repr_c {
        return Err(syn::Error::new(
            item.ident.span(),
            format!(
                "`#[pod]` needs `#[repr(C)]`: add `#[repr(C)]` below `#[pod]` on `{}`, so that \
                 its layout is the same on the host and the GPU",
                item.ident
            ),
        ));
    }
    Ok(quote! {
        #[derive(
            ::core::clone::Clone,
            ::core::marker::Copy,
            ::ferrocuda_std::__private::bytemuck::Pod,
            ::ferrocuda_std::__private::bytemuck::Zeroable,
        )]
        #[bytemuck(crate = "::ferrocuda_std::__private::bytemuck")]
        #item
    })
}

#[cfg(test)]
mod tests {
    use super::expand as expand_pod;

    #[test]
    fn pod_derives_through_ferrocuda_std_and_requires_repr_c() {
        let item = |source: &str| syn::parse_str::<syn::DeriveInput>(source).unwrap();
        let code = expand_pod(item("#[repr(C)] pub struct P { a: f32, b: u32 }"))
            .unwrap()
            .to_string();
        assert!(
            code.contains(":: ferrocuda_std :: __private :: bytemuck :: Pod"),
            "{code}"
        );
        assert!(
            code.contains(r#"# [bytemuck (crate = "::ferrocuda_std::__private::bytemuck")]"#),
            "{code}"
        );
        expand_pod(item("#[repr(C, align(16))] struct P { a: f32 }")).unwrap();
        assert!(expand_pod(item("#[repr(transparent)] struct P(f32);")).is_ok());
        let missing = expand_pod(item("struct P { a: f32 }"))
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains("`#[pod]` needs `#[repr(C)]`: add `#[repr(C)]` below `#[pod]` on `P`"),
            "{missing}"
        );
        let packed_only = expand_pod(item("#[repr(packed)] struct P { a: f32 }"));
        assert!(packed_only.is_err());
        let enumeration = expand_pod(item("#[repr(C)] enum E { A }")).unwrap_err();
        assert!(enumeration.to_string().contains("is for structs"));
    }
}
