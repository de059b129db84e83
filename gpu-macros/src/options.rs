//! The options of `#[kernel(...)]`: `same_len(a, b, ...)` groups and `instances(...)`.

use crate::generics::Instance;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Ident, Token};

/// What `#[kernel(...)]` was given.
pub(crate) struct KernelOptions {
    /// Parameter names that must have equal lengths, per group.
    pub(crate) same_len: Vec<Vec<Ident>>,
    /// The instances of a generic kernel; `None` for a kernel without `instances(...)`.
    pub(crate) instances: Option<(Ident, Vec<Instance>)>,
}

impl Parse for KernelOptions {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut same_len = Vec::new();
        let mut instances = None;
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            let content;
            if key == "same_len" {
                syn::parenthesized!(content in input);
                let names = Punctuated::<Ident, Token![,]>::parse_terminated(&content)?;
                if names.len() < 2 {
                    return Err(syn::Error::new(
                        key.span(),
                        "`same_len` needs at least two parameters",
                    ));
                }
                same_len.push(names.into_iter().collect());
            } else if key == "instances" {
                syn::parenthesized!(content in input);
                let list = Punctuated::<Instance, Token![,]>::parse_terminated(&content)?;
                if list.is_empty() {
                    return Err(syn::Error::new(
                        key.span(),
                        "`instances` needs at least one type, e.g. `instances(f32, f64)`",
                    ));
                }
                if instances.is_some() {
                    return Err(syn::Error::new(
                        key.span(),
                        "`instances` is given twice: list every instance in one `instances(...)`",
                    ));
                }
                instances = Some((key, list.into_iter().collect()));
            } else {
                return Err(syn::Error::new(
                    key.span(),
                    "unknown #[kernel] option; expected `same_len(a, b, ...)` or \
                     `instances(f32, f64, ...)`",
                ));
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(KernelOptions {
            same_len,
            instances,
        })
    }
}
