//! The options of `#[kernel(...)]`: `same_len(a, b, ...)` groups, `len(x = a * b)` products,
//! `index32(a, out)` views, `transposed(out, a)` pairs, the `block(x, y, z)` shape,
//! `instances(...)` and the PTX entry's `name = "..."`.

use crate::instance::Instance;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, Token};

/// What `#[kernel(...)]` was given.
pub(crate) struct KernelOptions {
    /// Parameter names that must have equal lengths, per group.
    pub(crate) same_len: Vec<Vec<Ident>>,
    /// `len(x = a * b)`: a slice or output and the `u32` scalars whose product is its length.
    pub(crate) len_products: Vec<(Ident, Vec<Ident>)>,
    /// `index32(a, out)`: 2D and 3D views whose offsets the kernel computes in 32 bits.
    pub(crate) index32: Vec<Ident>,
    /// `transposed(out, a)`: pairs of 2D views, the first's shape the second's reversed.
    pub(crate) transposed: Vec<(Ident, Ident)>,
    /// `block(x, y, z)`: the one block shape the kernel runs with (constant expressions).
    pub(crate) block: Option<Vec<Expr>>,
    /// The instances of a generic kernel; `None` for a kernel without `instances(...)`.
    pub(crate) instances: Option<(Ident, Vec<Instance>)>,
    /// `name = "stats_mean"`: the PTX entry's name, when the function's own is taken by another
    /// kernel of the crate (PTX entries share one namespace per crate, modules do not).
    pub(crate) name: Option<Ident>,
}

impl Parse for KernelOptions {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut same_len = Vec::new();
        let mut len_products = Vec::new();
        let mut index32 = Vec::new();
        let mut transposed = Vec::new();
        let mut block = None;
        let mut instances = None;
        let mut name = None;
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
            } else if key == "len" {
                syn::parenthesized!(content in input);
                let param: Ident = content.parse()?;
                content.parse::<Token![=]>()?;
                let factors = Punctuated::<Ident, Token![*]>::parse_separated_nonempty(&content)?;
                if !content.is_empty() {
                    return Err(content.error(
                        "expected `len(x = a * b)`: a slice or output, then `u32` parameters \
                         joined by `*`",
                    ));
                }
                len_products.push((param, factors.into_iter().collect()));
            } else if key == "index32" {
                syn::parenthesized!(content in input);
                let names = Punctuated::<Ident, Token![,]>::parse_terminated(&content)?;
                if names.is_empty() {
                    return Err(syn::Error::new(
                        key.span(),
                        "`index32` needs at least one 2D or 3D view: `index32(a, out)`",
                    ));
                }
                index32.extend(names);
            } else if key == "transposed" {
                syn::parenthesized!(content in input);
                let names = Punctuated::<Ident, Token![,]>::parse_terminated(&content)?;
                let mut names = names.into_iter();
                match (names.next(), names.next(), names.next()) {
                    (Some(out), Some(a), None) => transposed.push((out, a)),
                    _ => {
                        return Err(syn::Error::new(
                            key.span(),
                            "`transposed` takes two 2D views, the first shaped as the second \
                             reversed: `transposed(out, a)`",
                        ))
                    }
                }
            } else if key == "block" {
                syn::parenthesized!(content in input);
                let dims = Punctuated::<Expr, Token![,]>::parse_terminated(&content)?;
                if dims.is_empty() || dims.len() > 3 || block.is_some() {
                    return Err(syn::Error::new(
                        key.span(),
                        "`block` takes the block's shape once, 1 to 3 constant sizes: \
                         `block(32, 8)`",
                    ));
                }
                block = Some(dims.into_iter().collect());
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
            } else if key == "name" {
                input.parse::<Token![=]>()?;
                let literal: syn::LitStr = input.parse()?;
                let ident = syn::parse_str::<Ident>(&literal.value()).map_err(|_| {
                    syn::Error::new(
                        literal.span(),
                        "`name` is the PTX entry's name: a Rust identifier, e.g. \
                         `name = \"stats_mean\"`",
                    )
                })?;
                if name.replace(ident).is_some() {
                    return Err(syn::Error::new(key.span(), "`name` is given twice"));
                }
            } else {
                return Err(syn::Error::new(
                    key.span(),
                    "unknown #[kernel] option; expected `same_len(a, b, ...)`, \
                     `len(x = a * b)`, `index32(a, out)`, `transposed(out, a)`, \
                     `block(x, y)`, `instances(f32, f64, ...)` or `name = \"entry\"`",
                ));
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(KernelOptions {
            same_len,
            len_products,
            index32,
            transposed,
            block,
            instances,
            name,
        })
    }
}
